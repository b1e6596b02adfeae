# Shell functions of run.sh (sourced by it after option parsing: they read its options and variables).

# models_for SET: the speakers whose models decode data/SET
models_for() {
    local s
    for s in ${speakers}; do [[ "$1" == "${s}_"* ]] && { echo "${s}"; return; }; done
    echo "${speakers}"
}

# make_labels SET: stage 2 for one data dir (lab.scp; utterances without a label get the front end + alignment)
make_labels() {
    require "data/$1/wav.scp" "stage 1 (data) or your own data dir with wav.scp + text"
    validate_data_dir --no-feats "data/$1"
    log "Stage 2: labels of data/$1 (utterances without one get front end + espeak-ng alignment)"
    python -m local_models.bin.salad_label --nj "${nj}" "data/$1"
}

# test_feats SET SPK: stage 3 for one test set, on the duration scale of SPK's training data -> dump/SPK/SET
test_feats() {
    require "data/$1/lab.scp" "stage 2 (labels)"
    require "dump/$2/train/max_dur_frames" "stage 3 (features of ${2}'s training set)"
    log "Stage 3: features of $1 (duration scale of $2) -> dump/$2/$1"
    python -m local_models.bin.salad_dump feats --questions "${questions}" --f0-method "${f0_method}" \
        --nj "${nj}" --max-dur-frames "$(cat "dump/$2/train/max_dur_frames")" "data/$1" "dump/$2/$1"
}
