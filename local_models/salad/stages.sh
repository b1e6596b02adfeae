#!/usr/bin/env bash
# SALAD vs MUSA-RNN stages (paper 000, Pascual et al.): Spanish text-to-speech, one model set per speaker of a
# corpus; acoustic models on forced and predicted durations. Stages:
#   1 data: local/data.sh --nj N --seed S --speakers "..." --speaker_map "..." ${local_data_opts}
#     -> data/<spk>_{train,valid,test}
#   2 labels: full-context labels with phone times for every utterance that has none (front end + espeak-ng
#     rendition DTW-aligned to the recording) -> data/<set>/lab.scp
#   3 features: WORLD 43-dim acoustic + question-file linguistic frames, phone vectors + durations
#     (dump/<spk>/<set>), train statistics (dump/<spk>/{stats,dur_stats}.npz), stateful windows
#   4 train every system of ${systems} and the MUSA duration model (LSTM, exp/<spk>/duration) for every speaker
#     (ESPnet2 trainer -> exp/<spk>/<system>; resumes). The recipe's one choice: the checkpoint that decodes
#     (valid.mcd.best.pth), picked on <spk>_valid, which must not be a sealed set (checked before any training)
#   5 decode the test sets with forced durations (exp/<spk>/<system>/decode_<set>: MCD / F0 RMSE / V/UV, WORLD
#     wavs) and with predicted durations (exp/<spk>/duration/decode_<set>: duration RMSE / r;
#     exp/<spk>/<system>/decode_<set>_pred: DTW-aligned MCD / F0 RMSE / V/UV, wavs)
#   6 score: exp/results.json, ${results_md} (paper Table 2 shape, predicted durations), F0 histograms (Fig. 2);
#     each sealed set scored counts a look (exp/sealed_looks.tsv, results.json "sealed_looks", RESULTS.md's top)
#   7 pack every system with its speaker's duration model: exp/<spk>/<system>/packed/model.tar.gz
#     (text-to-speech --model ARCHIVE --text "Hola." -o hola.wav)
# Any data dir with wav.scp + text (lab.scp optional; any sample rate, resampled to 16 kHz) can be decoded and
# scored: ./run.sh --stage 5 --test_sets "my_set" (stage 5 makes its labels and features when stages 2-3 have
# not; after changing its files, rerun from stage 2). Set <spk>_* is decoded by speaker <spk>'s models, any other
# set by every speaker's. Speed (paper Table 3, Fig. 3) is measured by benchmarks/salad_latency.py.
# Use (a corpus's egs/<corpus>/<task>/run.sh): source this file after path.sh and cmd.sh, set the corpus's values
# of the options below (speakers, corpus, ...), source parse_options.sh, add its data options to local_data_opts,
# then call run_stages. The recipe dir holds local/data.sh (it takes --nj, --seed, --speakers, --speaker_map),
# ${questions} and conf/tuning/train_{<system>,duration}${train_config_suffix}.yaml. The paper's Table 2 columns
# are its speakers M1 and F1 (python -m local_models.salad.systems paper_speakers): a corpus whose speakers are
# numbered maps two of them onto those names in stage 1 (--speaker_map "72:M1 73:F1").
option_files+=("${BASH_SOURCE[0]}")

stage=1
stop_stage=7
nj=2                    # parallel jobs: data, labels, features; trainings at a time on the CPU
speakers=""             # the corpus's speakers (run.sh sets them): one model set each, data/<spk>_{train,valid,test}
speaker_map=""          # corpus speaker directory -> name used here, e.g. "72:M1 73:F1" (the paper's M1 / F1)
# the paper's four models (Table 1) + the windowed-attention Big SALAD (local_models/salad/systems.py SYSTEMS)
systems="small_rnn small_salad big_rnn big_salad big_salad_win"
test_sets=""            # default: <spk>_test of every speaker
sealed_sets=""          # sets only ever scored, never chosen on (default: <spk>_test of every speaker)
train_config_suffix=""  # conf/tuning/train_<system>${suffix}.yaml: "" paper size, _tiny mini corpus, _smoke tests
seed=0                  # training seed (and local/data.sh's)
corpus=mini             # the corpus's name in exp/results.json and the model cards (run.sh sets it)
questions=conf/questions_es.hed  # HTS question file of the linguistic features (stage 7 packs conf/questions_es.hed)
results_md=RESULTS.md   # stage 6's report
f0_method=dio           # WORLD F0 for the features: dio (fast, clean speech), harvest (robust; real recordings)
streams=32              # stateful training: parallel streams (= batch size) and window length (paper: 32, 120)
window=120
num_wavs=10             # synthesised wavs kept per test set and system (all: -1)
precision=fp32          # decode precision: fp32, bf16 (autocast), int8 (dynamic quantisation)
ngpu=$(default_ngpu)    # GPUs per training job (0: CPU; > 1: ESPnet2's DDP); default 1 when nvidia-smi lists a GPU
dist_world_size=1       # --ngpu 0: training processes per model (> 1: CPU DDP, torchrun + gloo; utils/stage_lib.sh)
gpu_inference=false     # decode on a GPU (through cuda_cmd)
inference_nj=1          # decoding jobs at a time (systems x speakers)
inference_model=valid.mcd.best.pth  # checkpoint that decodes: valid.mcd.best.pth, valid.mcd.ave.pth, latest.pth
train_args=""           # extra ESPnet2 training options, verbatim (they win), e.g. "--max_epoch 1"
inference_args=""       # extra salad_decode options, verbatim
local_data_opts=""      # extra options of stage 1's local/data.sh, verbatim

# all_test_sets: the sets stages 2, 3, 5 and 6 test on: ${test_sets}, else <spk>_test of every speaker
all_test_sets() {
    # shellcheck disable=SC2086  # speakers: a word list
    if [ -n "${test_sets}" ]; then echo "${test_sets}"; else printf '%s_test ' ${speakers}; fi
}

# all_sealed_sets: ${sealed_sets}, else <spk>_test of every speaker
all_sealed_sets() {
    # shellcheck disable=SC2086  # speakers: a word list
    if [ -n "${sealed_sets}" ]; then echo "${sealed_sets}"; else printf '%s_test ' ${speakers}; fi
}

# check_tuning_sets: stop (one line, before any work) when stage 4 will run and a set it chooses on (<spk>_valid:
# the checkpoint of lowest validation MCD) is sealed
check_tuning_sets() {
    stage_enabled 4 || return 0
    # shellcheck disable=SC2086  # speakers: a word list
    python -m local_models.common.sealed check --tuning "$(printf '%s_valid ' ${speakers})" \
        --sealed "$(all_sealed_sets)" --what "stage 4 (the checkpoint is picked on <spk>_valid)" || exit 1
}

# models_for SET: the speakers whose models decode data/SET
models_for() {
    local s
    for s in ${speakers}; do [[ "$1" == "${s}_"* ]] && { echo "${s}"; return; }; done
    echo "${speakers}"
}

# make_labels SET...: stage 2 for data dirs (lab.scp; utterances without a label get the front end + alignment),
# all in one salad_label process
make_labels() {
    local x
    for x in "$@"; do
        require "data/${x}/wav.scp" "stage 1 (data) or your own data dir with wav.scp + text"
        validate_data_dir --no-feats "data/${x}"
    done
    log "Stage 2: labels of data/{$(echo "$@" | tr ' ' ',')} (utterances without one get front end + espeak-ng" \
        "alignment)"
    python -m local_models.bin.salad_label --nj "${nj}" "${@/#/data/}"
}

# speaker_feats SPK: stage 3 for one speaker's training data -> dump/SPK/{train,valid}, statistics, windows
speaker_feats() {
    local d=dump/$1 maxdur
    log "Stage 3: features of $1 -> ${d}/{train,valid}, statistics, stateful windows"
    require "data/$1_train/lab.scp" "stage 2 (labels)"
    if up_to_date "${d}/train_windows/pos" "data/$1_train/lab.scp" "data/$1_valid/lab.scp" \
            "${questions}" && [ -f "${d}/dur_stats.npz" ] \
            && [ "$(cat "${d}/train_windows/layout" 2>/dev/null)" = "${streams} ${window} ${f0_method}" ]; then
        log "Stage 3: ${d} is up to date"
        return 0
    fi
    python -m local_models.bin.salad_dump feats --questions "${questions}" --f0-method "${f0_method}" \
        --nj "${nj}" "data/$1_train" "${d}/train"
    maxdur=$(cat "${d}/train/max_dur_frames")
    python -m local_models.bin.salad_dump feats --questions "${questions}" --f0-method "${f0_method}" \
        --nj "${nj}" --max-dur-frames "${maxdur}" "data/$1_valid" "${d}/valid"
    python -m local_models.bin.salad_dump stats --questions "${questions}" --dur-stats "${d}/dur_stats.npz" \
        "${d}/train" "${d}/stats.npz"
    python -m local_models.bin.salad_dump windows --streams "${streams}" --window "${window}" \
        "${d}/train" "${d}/train_windows"
    echo "${streams} ${window} ${f0_method}" > "${d}/train_windows/layout"
}

# test_feats SET SPK: stage 3 for one test set, on the duration scale of SPK's training data -> dump/SPK/SET
test_feats() {
    require "data/$1/lab.scp" "stage 2 (labels)"
    require "dump/$2/train/max_dur_frames" "stage 3 (features of ${2}'s training set)"
    log "Stage 3: features of $1 (duration scale of $2) -> dump/$2/$1"
    python -m local_models.bin.salad_dump feats --questions "${questions}" --f0-method "${f0_method}" \
        --nj "${nj}" --max-dur-frames "$(cat "dump/$2/train/max_dur_frames")" "data/$1" "dump/$2/$1"
}

# train_acoustic SPK SYSTEM: stage 4 for one acoustic model (stateful windows) -> exp/SPK/SYSTEM
train_acoustic() {
    local d=dump/$1 conf=conf/tuning/train_$2${train_config_suffix}.yaml idim
    require "${conf}" "a training config for system $2"
    idim=$(head -1 "${d}/train/ling_shape" | cut -d' ' -f2 | cut -d, -f2)
    log "Stage 4: train $2 for $1 (${conf}) -> exp/$1/$2"
    espnet_train "exp/$1/$2" salad_train --config "${conf}" --stateful true --batch_type unsorted --batch_size "${streams}" \
            --model_conf "idim=${idim}" --model_conf "stats_file=${PWD}/${d}/stats.npz" \
            --train_data_path_and_name_and_type "${d}/train_windows/ling.scp,ling,kaldi_ark" \
            --train_data_path_and_name_and_type "${d}/train_windows/acou.scp,acou,kaldi_ark" \
            --train_data_path_and_name_and_type "${d}/train_windows/pos,pos,text_int" \
            --train_shape_file "${d}/train_windows/ling_shape" \
            --valid_data_path_and_name_and_type "${d}/valid/ling.scp,ling,kaldi_ark" \
            --valid_data_path_and_name_and_type "${d}/valid/acou.scp,acou,kaldi_ark" \
            --valid_shape_file "${d}/valid/ling_shape"
}

# train_duration SPK: stage 4's MUSA duration model (phone vectors -> frames per phone, utterances batched by
# length) -> exp/SPK/duration
train_duration() {
    local d=dump/$1 conf=conf/tuning/train_duration${train_config_suffix}.yaml idim
    require "${conf}" "a training config for the duration model"
    require "${d}/dur_stats.npz" "stage 3 (features)"
    idim=$(head -1 "${d}/train/lingp_shape" | cut -d' ' -f2 | cut -d, -f2)
    log "Stage 4: train the duration model for $1 (${conf}) -> exp/$1/duration"
    espnet_train "exp/$1/duration" salad_duration_train --config "${conf}" \
            --model_conf "idim=${idim}" --model_conf "stats_file=${PWD}/${d}/dur_stats.npz" \
            --train_data_path_and_name_and_type "${d}/train/lingp.scp,lingp,kaldi_ark" \
            --train_data_path_and_name_and_type "${d}/train/dur,dur,text_int" \
            --train_shape_file "${d}/train/lingp_shape" \
            --valid_data_path_and_name_and_type "${d}/valid/lingp.scp,lingp,kaldi_ark" \
            --valid_data_path_and_name_and_type "${d}/valid/dur,dur,text_int" \
            --valid_shape_file "${d}/valid/lingp_shape"
}

# decode_durations SET SPK: stage 5's first stage of synthesis: SPK's duration model predicts the durations of
# SET and scores them against the labels -> exp/SPK/duration/decode_SET/{durations,scores.json}
decode_durations() {
    local out=exp/$2/duration/decode_$1 lg=exp/$2/duration/log/decode_$1
    require "exp/$2/duration/valid.loss.best.pth" "stage 4 (the duration model of $2)"
    log "Stage 5: durations of $1 by $2's duration model -> ${out} (log: ${lg}/decode.log)"
    # shellcheck disable=SC2086  # decode_launch: a word list
    run_logged "${lg}" ${decode_launch} "${lg}/decode.log" python -m local_models.bin.salad_duration \
        --model-dir "exp/$2/duration" --ngpu "${inference_ngpu}" "dump/$2/$1" "${out}"
}

# decode_system SET SPK SYSTEM: stage 5 for one acoustic model, in the background (decode_pool): forced durations
# -> exp/SPK/SYSTEM/decode_SET, then (the same process) the durations decode_durations predicted ->
# exp/SPK/SYSTEM/decode_SET_pred. The command and log beside the output (salad_decode replaces the outputs whole).
decode_system() {
    local out=exp/$2/$3/decode_$1 lg=exp/$2/$3/log/decode_$1 dur=exp/$2/duration/decode_$1/durations
    log "Stage 5: decode $1 with $2/$3, forced and predicted durations -> ${out}{,_pred} (log: ${lg}/decode.log)"
    # shellcheck disable=SC2086  # decode_launch, inference_args: word lists
    decode_pool run_logged "${lg}" ${decode_launch} "${lg}/decode.log" \
        python -m local_models.bin.salad_decode --model-dir "exp/$2/$3" \
        --model-file "${inference_model}" --ngpu "${inference_ngpu}" --precision "${precision}" \
        --num-wavs "${num_wavs}" --durations "${dur}" --pred-out "${out}_pred" ${inference_args} "dump/$2/$1" "${out}"
}

# stage_labels TESTS: stage 2 for every speaker's train/valid/test sets and the test sets TESTS, each set once
stage_labels() {
    local spk x sets=""
    for spk in ${speakers}; do for x in train valid test; do sets+=" ${spk}_${x}"; done; done
    # shellcheck disable=SC2046  # set names: words
    make_labels $(echo "${sets} $1" | tr ' ' '\n' | awk 'NF && !seen[$0]++')
}

# stage_feats TESTS: stage 3: every speaker's training data, then the test sets TESTS for the speakers decoding them
stage_feats() {
    local spk x
    for spk in ${speakers}; do speaker_feats "${spk}"; done
    for x in $1; do
        for spk in $(models_for "${x}"); do test_feats "${x}" "${spk}"; done
    done
}

# stage_train: stage 4: every system and the duration model of every speaker (--nj trainings at a time on the CPU,
# one thread each; one at a time on a local GPU)
stage_train() {
    local spk s
    for spk in ${speakers}; do
        require "dump/${spk}/train_windows/pos" "stage 3 (features)"
        for s in ${systems}; do train_pool train_acoustic "${spk}" "${s}"; done
        train_pool train_duration "${spk}"
    done
    pool_wait
}

# stage_decode TESTS: stage 5: the test sets TESTS with every system of the speakers decoding them
stage_decode() {
    local x spk s
    for x in $1; do
        # a data dir that stages 2-3 never saw (your own wav.scp + text): its labels and features now, as they would
        [ -f "data/${x}/lab.scp" ] || make_labels "${x}"
        for spk in $(models_for "${x}"); do
            [ -f "dump/${spk}/${x}/ling.scp" ] || test_feats "${x}" "${spk}"
            decode_durations "${x}" "${spk}"
            for s in ${systems}; do decode_system "${x}" "${spk}" "${s}"; done
        done
    done
    pool_wait
}

# stage_pack: stage 7: every system of every speaker, packed with its speaker's duration model
stage_pack() {
    local spk s todo=()
    for spk in ${speakers}; do
        for s in ${systems}; do
            log "Stage 7: pack ${spk}/${s} with ${spk}'s duration model -> exp/${spk}/${s}/packed/model.tar.gz"
            todo+=("${spk}/${s}")
        done
    done
    pack_system salad "${todo[@]}"
}

# check_names: stop on an unknown system or a malformed --speaker_map; say which speakers the paper has no column for
check_names() {
    local off
    # shellcheck disable=SC2086  # systems: a word list
    python -m local_models.salad.systems check ${systems} || die "--systems: see above"
    python -m local_models.salad.systems speaker_map "${speaker_map}" > /dev/null || die "--speaker_map: see above"
    off=$(python -m local_models.salad.systems unmapped "${speakers}")
    [ -z "${off}" ] || log "Speakers with no column in the paper (its M1, F1): ${off}; their tables show ours only" \
        "(TC-STAR: map two corpus speakers onto the paper's with --speaker_map \"72:M1 73:F1\")"
}

# stage_score TESTS: stage 6 (the configuration files and options that define the systems fingerprint the looks)
stage_score() {
    local s confs="${questions} conf/tuning/train_duration${train_config_suffix}.yaml"
    for s in ${systems}; do confs+=" conf/tuning/train_${s}${train_config_suffix}.yaml"; done
    log "Stage 6: score -> exp/results.json, ${results_md}, exp/images/"
    python -m local_models.bin.salad_score --speakers "${speakers}" --systems "${systems}" \
        --test-sets "$1" --corpus "${corpus}" --speaker-map "${speaker_map}" --exp exp \
        --results "${results_md}" --sealed-sets "$(all_sealed_sets)" --config-files "${confs}" \
        --option seed "${seed}" --option f0_method "${f0_method}" --option streams "${streams}" \
        --option window "${window}" --option inference_model "${inference_model}" \
        --option precision "${precision}" --option train_args "${train_args}" \
        --option inference_args "${inference_args}"
}

# run_stages: the stages in [stage, stop_stage], after checking the device options (setup_devices)
run_stages() {
    local tests
    setup_devices
    [ -n "${speakers}" ] || die "--speakers is empty: give the corpus's speakers (data/<spk>_{train,valid,test})"
    check_names
    check_tuning_sets
    tests=$(all_test_sets)
    if stage_enabled 1; then
        log "Stage 1: data -> data/<spk>_{train,valid,test}"
        # shellcheck disable=SC2086  # local_data_opts: a word list
        local/data.sh --seed "${seed}" --nj "${nj}" --speakers "${speakers}" --speaker_map "${speaker_map}" \
            ${local_data_opts}
    fi
    if stage_enabled 2; then stage_labels "${tests}"; fi
    if stage_enabled 3; then stage_feats "${tests}"; fi
    if stage_enabled 4; then stage_train; fi
    if stage_enabled 5; then stage_decode "${tests}"; fi
    if stage_enabled 6; then stage_score "${tests}"; fi
    if stage_enabled 7; then stage_pack; fi
}
