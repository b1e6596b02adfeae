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
    run_logged "${lg}" ${decode_launch} "${lg}/decode.log" python -m local_models.bin.salad_duration \
        --model-dir "exp/$2/duration" --ngpu "${inference_ngpu}" "dump/$2/$1" "${out}"
}

# decode_system SET SPK SYSTEM: stage 5 for one acoustic model, in the background (decode_pool): forced durations
# -> exp/SPK/SYSTEM/decode_SET, then (the same process) the durations decode_durations predicted ->
# exp/SPK/SYSTEM/decode_SET_pred. The command and log beside the output (salad_decode replaces the outputs whole).
decode_system() {
    local out=exp/$2/$3/decode_$1 lg=exp/$2/$3/log/decode_$1 dur=exp/$2/duration/decode_$1/durations
    log "Stage 5: decode $1 with $2/$3, forced and predicted durations -> ${out}{,_pred} (log: ${lg}/decode.log)"
    # shellcheck disable=SC2086  # inference_args: a word list
    decode_pool run_logged "${lg}" ${decode_launch} "${lg}/decode.log" \
        python -m local_models.bin.salad_decode --model-dir "exp/$2/$3" \
        --model-file "${inference_model}" --ngpu "${inference_ngpu}" --precision "${precision}" \
        --num-wavs "${num_wavs}" --durations "${dur}" --pred-out "${out}_pred" ${inference_args} "dump/$2/$1" "${out}"
}
