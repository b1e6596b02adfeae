#!/usr/bin/env bash
# Stages of the SAD model (local_models/sad: Heitkaemper et al., statistical and neural speech activity detection),
# for any corpus:
#   1 data (the corpus's local/data.sh ${local_data_opts} -> data/{<train_set>,<dev_set>,<eval_set>,...}; with
#     --aug-copies N > 0 it also writes data/<train_set>_aug = train + N augmented copies, which the nets train on)
#   2 features (STFT magnitude: FFT 512, 50 ms window, 10 ms shift at 8 kHz -> dump/, for the neural systems)
#   3 chunks (random 4 s training / validation chunks of features + frame labels -> dump/<set>/chunks)
#   4 train (the neural nets cnn1d / rnn / seg_rnn needed by ${systems}, ESPnet2 trainer -> exp/<model>,
#     config conf/tuning/train_<model>${train_config_suffix}.yaml; rerunning resumes from the checkpoint)
#   5 decode (frame scores of every system on dev + test sets, with real-time factors)
#   6 segments (threshold tuned on dev -> segments + hyp.rttm of every set; majority_vote last, or in stage 7)
#     (stages 4, 6 and 7 choose on ${dev_set} only: one of ${sealed_sets} as --dev-set stops them before any work)
#   7 segment-RNN (L, S) grid of paper Fig. 7 (${seg_grid}; one seg_rnn per point -> exp/seg_grid/, dev DCF
#     at each point's best threshold, needs a dev reference; a dev-best point not exp/seg_rnn's: seg_rnn_devbest;
#     then majority_vote, >= 2 of cnn_hmm, rnn_hmm and that seg RNN)
#   8 score (DCF / P / R / F1 with and without collar, pooled and averaged per file as the FS02 scorer does ->
#     exp/results.json, ${results_md}, plots) of the sets with a reference (each scoring of a sealed set is a look,
#     counted in exp/sealed_looks.tsv under the systems' configuration, "sealed_looks" in results.json and the
#     report); with --fs02-output true (default) first
#     the FS02 challenge's system-output files of every decoded set, with or without a reference (FS02's Eval) ->
#     exp/<system>/decode_<set>/fs02/<rec>.txt (9 tab-separated columns, speech / non-speech covering the recording:
#     python -m local_models.bin.sad_fs02_output --help)
#   9 pack (stat_sad + the neural systems: net, tuned threshold, card -> exp/<system>/packed/model.tar.gz)
# Any data dir with a wav.scp can be decoded: ./run.sh --stage 5 --test-sets "my_set" (data/my_set).
# A set without a reference (ref.rttm / ref_segments; FS02's Eval) is decode-only: stages 5-6 decode and segment it,
# stage 8 writes its system-output files but no score row. A reference must list every recording of its set (one
# with no speech: a NON-SPEECH line); stages 3, 6 and 8 stop naming a recording it lacks.
# How a corpus uses this file: its run.sh sources path.sh, cmd.sh, then this file (the stage options below and
# their defaults), sets its own values of them and its corpus-only options, parses the command line
# (. parse_options.sh), puts its corpus options into local_data_opts and calls run_stages, in its own dir. The
# corpus provides local/data.sh (stage 1; data dirs with wav.scp, utt2spk, spk2utt and, to tune / score, a reference
# ref.rttm or ref_segments) and conf/tuning/train_<net>${train_config_suffix}.yaml for the nets it trains.
option_files+=("${BASH_SOURCE[0]}")

# sad_systems QUERY [ARGS]: the system names of local_models/sad/systems.py (python -m local_models.sad.systems --help)
sad_systems() {
    python -m local_models.sad.systems "$@"
}

stage=1                 # first stage to run
stop_stage=9            # last stage to run
nj=2                    # parallel jobs (feature extraction; trainings on the CPU)
train_set=train         # the nets train on it (on ${train_set}_aug with --aug-copies N > 0)
dev_set=dev             # thresholds are tuned and the nets validated on it
eval_set=eval           # the set the report's tables call eval
test_sets="dev eval"    # sets decoded, segmented and (with a reference) scored
sealed_sets="eval eval_ood"  # sets only scored, never chosen on (the eval sets; ${dev_set} is the tuning set)
optional_sets=""        # sets of ${test_sets} skipped when data/ lacks them (the others must be there by stage 5)
# the systems run (default: every one of local_models/sad/systems.py DETECTORS, in its order)
systems="energy webrtcvad silero_vad stat_sad cnn_hmm cnn_median rnn_hmm rnn_median seg_rnn majority_vote"
train_config_suffix=""  # conf/tuning/train_<model>${suffix}.yaml: "" = paper size, _tiny = mini corpus, _smoke = tests
chunks_per_frame_span=1.5  # training chunks per recording = frames / 400 x this
aug_copies=0            # augmented copies per training recording that local/data.sh makes (0: train on ${train_set})
corpus=mini             # the corpus's name in exp/results.json and the report
recipe_name=fearless_steps/sad1  # the recipe's name there (and the report's title): egs/<corpus>/<task>
seed=0
# paper Fig. 7 grid, "L:S" in 10 ms frames (S <= L; paper: L 50 ms-1 s, S 10-150 ms, e.g. "5:1 10:1 50:5 100:15"); ""=skip
seg_grid="5:1 25:1 5:5 25:5"
ngpu=$(default_ngpu)    # GPUs per training job (0: CPU; > 1: ESPnet2's DDP); default 1 when nvidia-smi lists a GPU
dist_world_size=1       # --ngpu 0: training processes per model (> 1: CPU DDP, torchrun + gloo; utils/stage_lib.sh)
gpu_inference=false     # decode the neural systems on a GPU (through cuda_cmd)
inference_nj=1          # decoding jobs at a time (1: the real-time factors are measured one process at a time)
inference_model=valid.loss.best.pth  # checkpoint that decodes: valid.loss.best.pth, valid.loss.ave.pth, latest.pth
train_args=""           # extra ESPnet2 training options, verbatim (they win), e.g. "--max_epoch 1"
inference_args=""       # extra sad_decode options, verbatim
results_md=RESULTS.md   # stage 8's report
fs02_output=true        # stage 8 also writes the FS02 challenge's system-output files of every decoded set
local_data_opts=""      # options of stage 1's local/data.sh

# uniq_words "WORDS": the words in first-seen order, each followed by a space
uniq_words() {
    echo "$1" | tr ' ' '\n' | awk 'NF && !seen[$0]++' | tr '\n' ' '
}

# present_sets "SETS": the sets of SETS (first-seen order) that data/ holds, or that are not ${optional_sets}; stage 1
# makes them, a user's own one must be there before stage 5 (which requires it)
present_sets() {
    local x out=""
    for x in $(uniq_words "$1"); do
        [ -d "data/${x}" ] || [[ " ${optional_sets} " != *" ${x} "* ]] && out+="${x} "
    done
    echo "${out}"
}

# decode_sets: the sets stages 5-8 work on (${dev_set} ${test_sets}, present_sets)
decode_sets() {
    present_sets "${dev_set} ${test_sets}"
}

# train_data_set: the set the nets train on (${train_set}, or ${train_set}_aug with augmented copies)
train_data_set() {
    if [ "${aug_copies}" -gt 0 ]; then echo "${train_set}_aug"; else echo "${train_set}"; fi
}

# has_ref SET: data/SET has a reference (ref.rttm or ref_segments)
has_ref() {
    [ -f "data/$1/ref.rttm" ] || [ -f "data/$1/ref_segments" ]
}

# check_options: fail before any work on a malformed --seg-grid or --aug-copies
check_options() {
    local ls
    for ls in ${seg_grid}; do
        if ! [[ "${ls}" =~ ^[0-9]+:[0-9]+$ ]] || [ "${ls##*:}" -lt 1 ] || [ "${ls##*:}" -gt "${ls%%:*}" ]; then
            die "--seg-grid: '${ls}' is not L:S with 1 <= S <= L (in 10 ms frames)"
        fi
    done
    [[ "${aug_copies}" =~ ^[0-9]+$ ]] || die "--aug-copies '${aug_copies}' is not a number of copies (0, 1, 2, ...)"
    sad_systems check "${systems}" || die "--systems '${systems}': see local_models/sad/systems.py"
}

# nets_of "SYSTEMS": the nets behind the neural systems (majority_vote needs its members'), each followed by a space
nets_of() {
    local models
    models=$(sad_systems nets_of "$1") || return 1
    uniq_words "${models}"
}

# check_tuning_set: stop (one line, before any work) when ${dev_set}, the set that stage 4 (the checkpoint of lowest
# validation loss), stage 6 (thresholds) and stage 7 (the (L, S) grid's pick) choose on, is one of ${sealed_sets}
check_tuning_set() {
    local x nums=""
    for x in 4 6 7; do stage_enabled "${x}" && nums+="${nums:+, }${x}"; done
    [ -n "${nums}" ] || return 0
    [[ "${nums}" == *,* ]] && nums="s ${nums}" || nums=" ${nums}"  # "stage 6", "stages 6, 7"
    python -m local_models.common.sealed check --tuning "${dev_set}" --sealed "${sealed_sets}" \
        --what "stage${nums} (they choose on --dev-set)" || exit 1
}

# make_data: stage 1's local/data.sh with the corpus options, then every set it wrote validated
make_data() {
    local x
    # shellcheck disable=SC2086  # word list
    local/data.sh ${local_data_opts}
    for x in $(uniq_words "$(train_data_set) ${dev_set} ${eval_set} ${test_sets} ${optional_sets}"); do
        [ ! -d "data/${x}" ] || validate_data_dir --no-text "data/${x}"
    done
}

# stft_feats SET...: STFT magnitude features of each data/SET (FFT 512, 50 ms window, 10 ms shift; at the nets'
# 8 kHz, any other rate resampled) in up to ${nj} jobs -> dump/SET/feats.scp (one make_feats call for the sets)
stft_feats() {
    local x pairs=()
    for x in "$@"; do
        require "data/${x}/wav.scp" "stage 1 (data)"
        validate_data_dir --no-text "data/${x}"
        pairs+=("data/${x}" "dump/${x}")
    done
    make_feats --nj "${nj}" --cmd "${decode_cmd}" "${pairs[@]}" \
        --kind stft --sample-rate 8000 --win-ms 50 --hop-ms 10 --n-fft 512
}

# make_chunks: stage 3, random 4 s chunks (features + frame labels) of the training set and ${dev_set}
make_chunks() {
    local x span
    for x in $(train_data_set) ${dev_set}; do
        require "dump/${x}/feats.scp" "stage 2 (features)"
        span=${chunks_per_frame_span}
        [ "${x}" = "${dev_set}" ] && span=0.5  # validation loss only: fewer chunks
        python -m local_models.bin.sad_make_chunks --seed "${seed}" --chunks-per-frame-span "${span}" \
            "dump/${x}/feats.scp" "data/${x}" "dump/${x}/chunks"
    done
}

# train_model CONF OUTDIR [ESPnet options...]: train a SAD net through ESPnet2 (resumes from OUTDIR's checkpoint)
train_model() {
    local conf=$1 out=$2 copies="no augmented copies" train_data
    shift 2
    train_data=$(train_data_set)
    # what it trains on, kept beside the net for the report (dump/ may be rebuilt later from other data); written
    # first: a training stopped at a time limit (local_models/sad/gpu_train.sh) still has it
    [ "${aug_copies}" -gt 0 ] && copies="${train_set} + ${aug_copies} augmented cop$([ "${aug_copies}" = 1 ] && echo y || echo ies) per recording"
    mkdir -p "${out}"
    echo "${train_data}: $(wc -l < "dump/${train_data}/chunks/feats_shape") chunks (${copies})" > "${out}/train_data.txt"
    espnet_train "${out}" sad_train --config "${conf}" \
            --train_data_path_and_name_and_type "dump/${train_data}/chunks/feats.scp,feats,kaldi_ark" \
            --train_data_path_and_name_and_type "dump/${train_data}/chunks/labels.scp,labels,kaldi_ark" \
            --valid_data_path_and_name_and_type "dump/${dev_set}/chunks/feats.scp,feats,kaldi_ark" \
            --valid_data_path_and_name_and_type "dump/${dev_set}/chunks/labels.scp,labels,kaldi_ark" \
            --train_shape_file "dump/${train_data}/chunks/feats_shape" \
            --valid_shape_file "dump/${dev_set}/chunks/feats_shape" "$@"
}

# train_nets "MODELS": stage 4, each net of MODELS trained on its conf/tuning config
train_nets() {
    local m conf x
    for m in $1; do
        conf=conf/tuning/train_${m}${train_config_suffix}.yaml
        require "${conf}" "a training config"
        for x in $(train_data_set) ${dev_set}; do require "dump/${x}/chunks/feats_shape" "stage 3 (chunks)"; done
        train_pool train_model "${conf}" "exp/${m}"  # --nj at a time on the CPU (one thread each), 1 on a local GPU
    done
    pool_wait
}

# decode SYSTEM MODEL_DIR ROOT SET...: frame scores of data/SET by SYSTEM -> ROOT/decode_SET for every SET, in one
# process (the model loads once; a process start costs seconds) on one thread (RTFs); a neural system's net:
# MODEL_DIR, or "" for its default exp/<net>; the nets on a GPU with --gpu_inference true, the other detectors
# (energy, webrtcvad, silero_vad, stat_sad) always on the CPU. Log: ROOT/log/decode.log; each ROOT/decode_SET/run.sh
# holds the command.
decode() {
    local system=$1 model_dir=$2 root=$3 launch=${decode_cmd} gpu=0 x pairs=() first
    shift 3
    [ $# -gt 0 ] || return 0
    if [[ " $(sad_systems neural) " == *" ${system} "* ]]; then launch=${decode_launch} gpu=${inference_ngpu}; fi  # nets
    for x in "$@"; do pairs+=("data/${x}" "${root}/decode_${x}"); done
    first=${root}/decode_$1
    # shellcheck disable=SC2086  # launcher and inference_args are word lists
    run_logged "${first}" ${launch} --max-jobs-run 1 "${root}/log/decode.log" \
        python -m local_models.bin.sad_decode --system "${system}" ${model_dir:+--model-dir "${model_dir}"} \
            --ngpu "${gpu}" --model-file "${inference_model}" ${inference_args} "${pairs[@]}"
    for x in "${@:2}"; do mkdir -p "${root}/decode_${x}" && cp "${first}/run.sh" "${root}/decode_${x}/run.sh"; done
}

# decode_systems: stage 5, every system but majority_vote on every set (one job per system over all sets)
decode_systems() {
    local x s
    for x in $(decode_sets); do
        require "data/${x}/wav.scp" "stage 1 (data) or your own data dir with a wav.scp"
        validate_data_dir --no-text "data/${x}"
    done
    for s in ${systems}; do
        [ "${s}" = majority_vote ] && continue  # decoded in stage 6 or 7, once its members' thresholds exist
        # one job per system over every set: RTFs are measured on one thread, one process at a time
        # shellcheck disable=SC2046  # word list
        decode_pool decode "${s}" "" "exp/${s}" $(decode_sets)
    done
    pool_wait
}

# grid_runs: stage 7 will run the segment-RNN (L, S) grid (it needs a dev reference)
grid_runs() {
    stage_enabled 7 && [ -n "${seg_grid}" ] && [[ " ${systems} " == *" seg_rnn "* ]] && has_ref "${dev_set}"
}

# vote_system: majority_vote, when ${systems} has it, decoded over its members (at least 2 of 3 speech: CNN + HMM,
# RNN + HMM and the seg RNN that Table 2 reports, the dev-best grid point when stage 7 made one), then segmented
vote_system() {
    [[ " ${systems} " == *" majority_vote "* ]] || return 0
    decode_majority_vote
    segment_system majority_vote
}

# decode_majority_vote: (re)decode majority_vote on the sets where it is missing or its members changed (a member's
# threshold, or the seg RNN: exp/seg_rnn or stage 7's dev-best); rescoring stays idempotent
decode_majority_vote() {
    local x d m used="" todo=() seg=seg_rnn members
    [ -f exp/seg_rnn_devbest/model_dir ] && seg=seg_rnn_devbest
    members=$(sad_systems vote_members --exp exp)  # cnn_hmm rnn_hmm ${seg}
    for m in ${members}; do used+="$(cat "exp/${m}/threshold" 2>/dev/null | tr '\n' ' ')"; done
    used+="${seg} $(cat "exp/${seg}/model_dir" 2>/dev/null || true)"  # seg_rnn has none
    for x in $(decode_sets); do
        d=exp/majority_vote/decode_${x}
        if [ ! -f "${d}/scores.scp" ] || [ "$(cat "${d}/member_thresholds" 2>/dev/null)" != "${used}" ]; then
            todo+=("${x}")
        fi
    done
    decode majority_vote "" exp/majority_vote "${todo[@]}"
    for x in "${todo[@]}"; do echo "${used}" > "exp/majority_vote/decode_${x}/member_thresholds"; done
}

# segment_system SYSTEM: tune SYSTEM's threshold on ${dev_set} (when it has a reference), then write segments +
# hyp.rttm of every set
segment_system() {
    local s=$1 x dirs="" tune=""
    for x in $(decode_sets); do
        require "exp/${s}/decode_${x}/scores.scp" "stage 5 (decode)"
        dirs+=" exp/${s}/decode_${x}"
    done
    if has_ref "${dev_set}"; then
        tune="--tune exp/${s}/decode_${dev_set} data/${dev_set}"
    elif [ ! -f "exp/${s}/threshold" ]; then
        log "no reference for ${dev_set}: ${s} uses its default threshold"
    fi
    # shellcheck disable=SC2086  # word lists
    python -m local_models.bin.sad_segments --system "${s}" --threshold-file "exp/${s}/threshold" ${tune} ${dirs}
}

# segment_systems: stage 6, every system's threshold tuned on ${dev_set}, segments + hyp.rttm of every set
segment_systems() {
    local s
    for s in ${systems}; do [ "${s}" = majority_vote ] || segment_system "${s}"; done
    # an earlier stage 7's dev-best seg RNN, still Table 2's row: re-segmented here when stage 7 will not redo it
    if ! grid_runs && [ -f exp/seg_rnn_devbest/model_dir ] && [[ " ${systems} " == *" seg_rnn "* ]] && has_ref "${dev_set}"; then
        segment_devbest
    fi
    if ! grid_runs; then vote_system; fi  # last (its members' thresholds); after stage 7's dev-best seg RNN when the grid runs
}

# stale SCORES MODEL_FILE: SCORES is missing or older than the checkpoint that made it
stale() {
    [ ! -f "$1" ] || [ "$2" -nt "$1" ]
}

# seg_rnn_point: "L:S" of exp/seg_rnn (the Table 2 seg RNN's own grid point, from its config)
seg_rnn_point() {
    python -c "import yaml, sys; c = yaml.safe_load(open(sys.argv[1]))['model_conf']; print(f\"{c['seg_len']}:{c['seg_shift']}\")" exp/seg_rnn/config.yaml
}

# seg_grid_dirs: the exp dir of every (L, S) point of ${seg_grid}, in its order (exp/seg_rnn for its own point)
seg_grid_dirs() {
    local main_ls ls dirs=""
    main_ls=$(seg_rnn_point) || return 1
    for ls in ${seg_grid}; do
        if [ "${ls}" = "${main_ls}" ]; then dirs+=" exp/seg_rnn"; else dirs+=" exp/seg_grid/L${ls%%:*}_S${ls##*:}"; fi
    done
    echo "${dirs}"
}

# train_seg_grid: every (L, S) point of ${seg_grid} but exp/seg_rnn's own trained (--nj at a time, as stage 4),
# then decoded on ${dev_set} and tuned there (the Table 2 exp/seg_rnn stands for its own point; seg_grid_dirs lists
# them all)
train_seg_grid() {
    local conf=conf/tuning/train_seg_rnn${train_config_suffix}.yaml main_ls ls L S d points=()
    main_ls=$(seg_rnn_point)
    for ls in ${seg_grid}; do
        # the Table 2 seg_rnn is trained already; a point given twice trains once (not twice at once into one dir)
        [ "${ls}" = "${main_ls}" ] || [[ " ${points[*]-} " == *" ${ls} "* ]] || points+=("${ls}")
    done
    for ls in ${points[@]+"${points[@]}"}; do
        L=${ls%%:*}; S=${ls##*:}
        train_pool train_model "${conf}" "exp/seg_grid/L${L}_S${S}" --model_conf "seg_len=${L}" \
            --model_conf "seg_shift=${S}"
    done
    pool_wait
    for ls in ${points[@]+"${points[@]}"}; do
        L=${ls%%:*}; S=${ls##*:}
        d=exp/seg_grid/L${L}_S${S}
        if stale "${d}/decode_${dev_set}/scores.scp" "${d}/${inference_model}"; then
            decode seg_rnn "${d}" "${d}" "${dev_set}"
        fi
        python -m local_models.bin.sad_segments --system seg_rnn --threshold-file "${d}/threshold" \
            --tune "${d}/decode_${dev_set}" "data/${dev_set}"
    done
}

# decode_devbest BEST D: decode every set with the grid point BEST as system seg_rnn_devbest into D (threshold
# tuned on ${dev_set} like every other system's)
decode_devbest() {
    local best=$1 d=$2 x todo=()
    [ "$(cat "${d}/model_dir" 2>/dev/null)" = "${best}" ] || rm -rf "${d}"
    for x in $(decode_sets); do
        stale "${d}/decode_${x}/scores.scp" "${best}/${inference_model}" && todo+=("${x}")
    done
    decode seg_rnn "${best}" "${d}" "${todo[@]}"
    segment_devbest "${d}"
    echo "${best}" > "${d}/model_dir"
}

# segment_devbest [D]: tune D's (default exp/seg_rnn_devbest) thresholds on ${dev_set} with the seg RNN's decision,
# then write segments + hyp.rttm (+ hyp_fa10.rttm) of every set. Stage 6 calls it too when the grid does not run,
# so a rerun of stages 6-8 leaves no decision of an earlier stage 6 behind.
segment_devbest() {
    local d=${1:-exp/seg_rnn_devbest} x dirs=""
    for x in $(decode_sets); do dirs+=" ${d}/decode_${x}"; done
    # shellcheck disable=SC2086  # word list
    python -m local_models.bin.sad_segments --system seg_rnn --threshold-file "${d}/threshold" \
        --tune "${d}/decode_${dev_set}" "data/${dev_set}" ${dirs}
}

# devbest_system: Table 2 uses the dev-best (L, S) of stage 7's grid, as the paper did: when that is not exp/seg_rnn's
# own point, decode every set with it as system seg_rnn_devbest (threshold tuned on dev like every other system)
devbest_system() {
    local best
    best=$(python -c "import json; print(json.load(open('exp/seg_grid/grid.json'))['best']['model_dir'])")
    if [ "${best}" = exp/seg_rnn ]; then
        rm -rf exp/seg_rnn_devbest  # from an earlier grid whose best point was elsewhere
    else
        log "Stage 7: dev-best grid point ${best} -> exp/seg_rnn_devbest (Table 2 'Seg. RNN, dev-best')"
        decode_devbest "${best}" exp/seg_rnn_devbest
    fi
}

# seg_grid_stage: stage 7, the (L, S) grid trained and tabulated (exp/seg_grid/grid.json, the figure), the dev-best point
# as Table 2's seg RNN, then the majority vote over CNN + HMM, RNN + HMM and that seg RNN
seg_grid_stage() {
    local ref=() dirs
    require "exp/seg_rnn/threshold.sweep.json" "stage 6 (segments)"
    train_seg_grid
    dirs=$(seg_grid_dirs)
    [ -f exp/cnn_hmm/threshold.sweep.json ] && ref=(--reference exp/cnn_hmm/threshold.sweep.json)
    # shellcheck disable=SC2086  # word list
    python -m local_models.bin.sad_seg_grid ${ref[@]+"${ref[@]}"} ${dirs}
    devbest_system
    vote_system
}

# fs02_outputs "SYSTEMS": the FS02 challenge's system-output files of every decoded set of every system of SYSTEMS
# (with or without a reference) -> exp/<system>/decode_<set>/fs02/<rec>.txt
fs02_outputs() {
    local s x dirs=()
    for s in $1; do
        for x in $(decode_sets); do
            require "exp/${s}/decode_${x}/hyp.rttm" "stage 6 (segments)"
            dirs+=("exp/${s}/decode_${x}")
        done
    done
    python -m local_models.bin.sad_fs02_output "${dirs[@]}"
}

# system_configs: the training configs of the nets behind ${systems} (with the options stage 8 passes, they are the
# configuration whose looks at the sealed sets exp/sealed_looks.tsv counts)
system_configs() {
    local m
    for m in $(nets_of "${systems}"); do echo "conf/tuning/train_${m}${train_config_suffix}.yaml"; done
}

# score_sets: stage 8, DCF / P / R / F1 of every system on the sets with a reference -> exp/results.json, the report
# (first, with --fs02-output true, every decoded set's system-output files)
score_sets() {
    local x s scored="" score_systems=${systems}
    [ -f exp/seg_rnn_devbest/model_dir ] && score_systems+=" seg_rnn_devbest"  # stage 7's dev-best (L, S)
    if [ "${fs02_output}" = true ]; then fs02_outputs "${score_systems}"; fi
    for x in $(decode_sets); do has_ref "${x}" && scored+=" ${x}"; done
    if [ -z "${scored}" ]; then
        log "no reference in $(decode_sets): detected speech is in exp/<system>/decode_<set>/{segments,hyp.rttm,fs02/}"
        return 0
    fi
    for s in ${score_systems}; do
        for x in ${scored}; do require "exp/${s}/decode_${x}/hyp.rttm" "stage 6 (segments)"; done
    done
    # shellcheck disable=SC2086  # word lists
    SAD_CORPUS=${corpus} run_logged exp/score \
        python -m local_models.bin.sad_score --recipe "${recipe_name}" --systems ${score_systems} --sets ${scored} \
            --dev "${dev_set}" --eval "${eval_set}" --results-md "${results_md}" --sealed ${sealed_sets} --config-files $(system_configs) \
            --options "systems=${systems}" "seg_grid=${seg_grid}" "aug_copies=${aug_copies}" "dev_set=${dev_set}" \
            "inference_model=${inference_model}" "seed=${seed}" "chunks_per_frame_span=${chunks_per_frame_span}"
}

# pack_systems: stage 9, one archive per system of ${systems} a user can run (stat_sad and the neural ones; the
# reference detectors energy / webrtcvad / silero_vad are not packed), plus stage 7's seg_rnn_devbest when present
pack_systems() {
    local s packable todo=()
    packable=" $(sad_systems packable) "  # stat_sad and the neural systems
    for s in ${systems}; do
        [[ "${packable}" == *" ${s} "* ]] || continue
        has_ref "${dev_set}" && require "exp/${s}/threshold" "stage 6 (the threshold tuned on ${dev_set})"
        todo+=("${s}")
    done
    if [[ " ${systems} " == *" seg_rnn "* ]] && [ -f exp/seg_rnn_devbest/model_dir ]; then
        todo+=(seg_rnn_devbest)
    fi
    [ "${#todo[@]}" -eq 0 ] || pack_system sad "${todo[@]}"
}

# run_stages: the enabled stages ${stage}..${stop_stage}, in the recipe's dir after option parsing
run_stages() {
    local models x
    setup_devices
    check_options
    check_tuning_set
    models=$(nets_of "${systems}") || die "--systems '${systems}'"  # the nets behind the neural systems
    if stage_enabled 1; then
        log "Stage 1: data -> data/{${train_set},${dev_set},${eval_set}} (corpus: ${corpus})"
        make_data  # local/data.sh with the corpus options; every set it wrote validated
    fi
    if stage_enabled 2; then
        log "Stage 2: STFT magnitude features -> dump/<set>/feats.*.{ark,scp}"
        # shellcheck disable=SC2046  # word lists
        stft_feats $(train_data_set) $(decode_sets)
    fi
    if stage_enabled 3 && [ -n "${models}" ]; then
        log "Stage 3: random 4 s chunks (features + frame labels) -> dump/{$(train_data_set),${dev_set}}/chunks"
        make_chunks
    fi
    if stage_enabled 4 && [ -n "${models}" ]; then
        log "Stage 4: train ${models}-> exp/<model> (conf/tuning/train_<model>${train_config_suffix}.yaml)"
        train_nets "${models}"
    fi
    if stage_enabled 5; then
        log "Stage 5: decode ${systems} on $(decode_sets)-> exp/<system>/decode_<set>/scores.{ark,scp}, rtf.json"
        decode_systems
    fi
    if stage_enabled 6; then
        log "Stage 6: thresholds tuned on ${dev_set} -> exp/<system>/threshold; segments + hyp.rttm per set"
        segment_systems
    fi
    if stage_enabled 7 && [ -n "${seg_grid}" ] && [[ " ${systems} " == *" seg_rnn "* ]]; then
        if ! has_ref "${dev_set}"; then
            log "Stage 7: skipped, no reference for ${dev_set} to score the (L, S) grid on"
        else
            log "Stage 7: segment-RNN grid (L:S frames) ${seg_grid} -> exp/seg_grid/, exp/images/seg_rnn_grid.png"
            seg_grid_stage
        fi
    fi
    if stage_enabled 8; then
        log "Stage 8: scoring -> exp/results.json, ${results_md}, exp/images/ (FS02 system outputs: ${fs02_output})"
        score_sets
    fi
    if stage_enabled 9; then
        log "Stage 9: pack ${systems}-> exp/<system>/packed/model.tar.gz (the ones a user can run; from ${inference_model})"
        pack_systems
    fi
    log "Done (stages ${stage}-${stop_stage})"
}
