# Shell functions of run.sh (sourced by it after option parsing: they read its options and variables).

# uniq_words "WORDS": the words in first-seen order, each followed by a space
uniq_words() {
    echo "$1" | tr ' ' '\n' | awk 'NF && !seen[$0]++' | tr '\n' ' '
}

# present_sets "SETS": the sets of SETS (first-seen order) that data/ holds; stage 1 makes them, a user's own one
# must be there before stage 5 (which requires it)
present_sets() {
    local x out=""
    for x in $(uniq_words "$1"); do
        [ -d "data/${x}" ] || [ "${x}" != eval_ood ] && out+="${x} "
    done
    echo "${out}"
}

# has_ref SET: data/SET has a reference (ref.rttm or ref_segments)
has_ref() {
    [ -f "data/$1/ref.rttm" ] || [ -f "data/$1/ref_segments" ]
}

# check_seg_grid: fail before any work on a malformed --seg-grid
check_seg_grid() {
    local ls
    for ls in ${seg_grid}; do
        if ! [[ "${ls}" =~ ^[0-9]+:[0-9]+$ ]] || [ "${ls##*:}" -lt 1 ] || [ "${ls##*:}" -gt "${ls%%:*}" ]; then
            die "--seg-grid: '${ls}' is not L:S with 1 <= S <= L (in 10 ms frames)"
        fi
    done
}

# nets_of "SYSTEMS": the nets behind the neural systems (majority_vote needs all three)
nets_of() {
    local s models=""
    for s in $1; do
        case ${s} in
            cnn_*) models+=" cnn1d" ;;
            rnn_*) models+=" rnn" ;;
            seg_rnn) models+=" seg_rnn" ;;
            majority_vote) models+=" cnn1d rnn seg_rnn" ;;
        esac
    done
    uniq_words "${models}"
}

# stft_feats SET: STFT magnitude features of data/SET (FFT 512, 50 ms window, 10 ms shift) in up to ${nj} jobs
stft_feats() {
    local x=$1 n j
    require "data/${x}/wav.scp" "stage 1 (data)"
    validate_data_dir --no-text "data/${x}"
    n=$(wc -l < "data/${x}/wav.scp"); j=$(( n < nj ? n : nj ))
    split_data "data/${x}" "${j}"
    ${decode_cmd} JOB=1:"${j}" "dump/${x}/log/feats.JOB.log" \
        extract_feats --kind stft --sample-rate 8000 --win-ms 50 --hop-ms 10 --n-fft 512 \
            "data/${x}/split${j}/JOB" "dump/${x}/feats.JOB"
    cat "dump/${x}"/feats.*.scp | sort > "dump/${x}/feats.scp.tmp" && mv "dump/${x}/feats.scp.tmp" "dump/${x}/feats.scp"
}

# train_model CONF OUTDIR [ESPnet options...]: train a SAD net through ESPnet2 (resumes from OUTDIR's checkpoint)
train_model() {
    local conf=$1 out=$2 copies="no augmented copies"; shift 2
    # what it trains on, kept beside the net for the report (dump/ may be rebuilt later from other data); written
    # first: a training stopped at a time limit (local/gpu_train.sh) still has it
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

# decode SYSTEM MODEL_DIR ROOT SET...: frame scores of data/SET by SYSTEM -> ROOT/decode_SET for every SET, in one
# process (the model loads once; a process start costs seconds) on one thread (RTFs); a neural system's net:
# MODEL_DIR, or "" for its default exp/<net>; the nets on a GPU with --gpu_inference true, the other detectors
# (energy, webrtcvad, silero_vad, stat_sad) always on the CPU. Log: ROOT/log/decode.log; each ROOT/decode_SET/run.sh
# holds the command.
decode() {
    local system=$1 model_dir=$2 root=$3 launch=${decode_cmd} gpu=0 x pairs=() first
    shift 3
    [ $# -gt 0 ] || return 0
    case ${system} in cnn_*|rnn_*|seg_rnn|majority_vote) launch=${decode_launch} gpu=${inference_ngpu} ;; esac  # nets
    for x in "$@"; do pairs+=("data/${x}" "${root}/decode_${x}"); done
    first=${root}/decode_$1
    run_logged "${first}" ${launch} --max-jobs-run 1 "${root}/log/decode.log" \
        python -m local_models.bin.sad_decode --system "${system}" ${model_dir:+--model-dir "${model_dir}"} \
            --ngpu "${gpu}" --model-file "${inference_model}" ${inference_args} "${pairs[@]}"
    for x in "${@:2}"; do mkdir -p "${root}/decode_${x}" && cp "${first}/run.sh" "${root}/decode_${x}/run.sh"; done
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
    local x d used todo=() seg=seg_rnn
    [ -f exp/seg_rnn_devbest/model_dir ] && seg=seg_rnn_devbest
    used="$(cat exp/cnn_hmm/threshold exp/rnn_hmm/threshold "exp/${seg}/threshold" 2>/dev/null | tr '\n' ' ')${seg}"
    used+=" $(cat "exp/${seg}/model_dir" 2>/dev/null || true)"  # seg_rnn has none
    for x in ${all_sets}; do
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
    for x in ${all_sets}; do
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

# stale SCORES MODEL_FILE: SCORES is missing or older than the checkpoint that made it
stale() {
    [ ! -f "$1" ] || [ "$2" -nt "$1" ]
}

# train_seg_grid: every (L, S) point of ${seg_grid} trained, decoded on ${dev_set} and tuned there (the Table 2
# exp/seg_rnn stands for its own point); sets grid_dirs
train_seg_grid() {
    local conf=conf/tuning/train_seg_rnn${train_config_suffix}.yaml main_ls ls L S d
    main_ls=$(python -c "import yaml, sys; c = yaml.safe_load(open(sys.argv[1]))['model_conf']; print(f\"{c['seg_len']}:{c['seg_shift']}\")" exp/seg_rnn/config.yaml)
    grid_dirs=""
    for ls in ${seg_grid}; do
        L=${ls%%:*}; S=${ls##*:}
        if [ "${ls}" = "${main_ls}" ]; then grid_dirs+=" exp/seg_rnn"; continue; fi  # the Table 2 seg_rnn
        d=exp/seg_grid/L${L}_S${S}
        train_model "${conf}" "${d}" --model_conf "seg_len=${L}" --model_conf "seg_shift=${S}"
        if stale "${d}/decode_${dev_set}/scores.scp" "${d}/${inference_model}"; then
            decode seg_rnn "${d}" "${d}" "${dev_set}"
        fi
        python -m local_models.bin.sad_segments --system seg_rnn --threshold-file "${d}/threshold" \
            --tune "${d}/decode_${dev_set}" "data/${dev_set}"
        grid_dirs+=" ${d}"
    done
}

# decode_devbest BEST D: decode every set with the grid point BEST as system seg_rnn_devbest into D (threshold
# tuned on ${dev_set} like every other system's)
decode_devbest() {
    local best=$1 d=$2 x todo=()
    [ "$(cat "${d}/model_dir" 2>/dev/null)" = "${best}" ] || rm -rf "${d}"
    for x in ${all_sets}; do
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
    for x in ${all_sets}; do dirs+=" ${d}/decode_${x}"; done
    # shellcheck disable=SC2086  # word list
    python -m local_models.bin.sad_segments --system seg_rnn --threshold-file "${d}/threshold" \
        --tune "${d}/decode_${dev_set}" "data/${dev_set}" ${dirs}
}

# pack_systems: stage 9, one archive per system of ${systems} a user can run (stat_sad and the neural ones; the
# reference detectors energy / webrtcvad / silero_vad are not packed), plus stage 7's seg_rnn_devbest when present
pack_systems() {
    local s packable=" stat_sad cnn_hmm cnn_median rnn_hmm rnn_median seg_rnn majority_vote "
    for s in ${systems}; do
        [[ "${packable}" == *" ${s} "* ]] || continue
        has_ref "${dev_set}" && require "exp/${s}/threshold" "stage 6 (the threshold tuned on ${dev_set})"
        pack_system sad "${s}"
    done
    if [[ " ${systems} " == *" seg_rnn "* ]] && [ -f exp/seg_rnn_devbest/model_dir ]; then
        pack_system sad seg_rnn_devbest
    fi
}

# make_data: stage 1's local/data.sh with the corpus options, then every set it wrote validated
make_data() {
    local x
    local/data.sh --train-min "${train_min}" --dev-min "${dev_min}" --eval-min "${eval_min}" --seed "${seed}" \
        --eval-ood-min "${eval_ood_min}" --aug-copies "${aug_copies}" ${data_args}
    for x in ${train_data} ${dev_set} eval eval_ood; do
        [ ! -d "data/${x}" ] || validate_data_dir --no-text "data/${x}"
    done
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
