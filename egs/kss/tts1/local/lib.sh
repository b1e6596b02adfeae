# Shell functions of run.sh (sourced by it after option parsing: they read its options and variables).

conf_value() { awk -v k="$1" '$1 == k { print $2 }' conf/fbank.conf; }   # conf_value --hop-length -> 256

# make_feats SET: stage 2 for one data dir (log-mels -> dump/SET, data/SET/{feats.scp,utt2num_frames})
make_feats() {
    local x=$1 n jobs
    require "data/${x}/text" "stage 1 (data) or your own data dir with wav.scp + text"
    log "Stage 2: log-mel features of data/${x} -> dump/${x}"
    validate_data_dir --no-feats "data/${x}"
    rm -rf "dump/${x}/feats."* "dump/${x}/log"   # shards of an earlier run with another nj
    n=$(wc -l < "data/${x}/utt2spk"); jobs=$(( n < nj ? n : nj ))
    split_data "data/${x}" "${jobs}"
    ${decode_cmd} JOB=1:"${jobs}" "dump/${x}/log/feats.JOB.log" \
        extract_feats $(cat conf/fbank.conf) "data/${x}/split${jobs}/JOB" "dump/${x}/feats.JOB"
    for f in scp:data/${x}/feats.scp utt2num_frames:data/${x}/utt2num_frames shape:dump/${x}/feats_shape; do
        cat "dump/${x}"/feats.*."${f%%:*}" | sort > "${f#*:}.tmp"
        mv "${f#*:}.tmp" "${f#*:}"
    done
    validate_data_dir "data/${x}"
}

# g2p SET: stage 3's phoneme tokens (--token-type) of one data dir -> data/SET/text_phn
g2p() {
    require "data/$1/text" "stage 1 (data) or your own data dir with wav.scp + text"
    log "Stage 3: ${token_type} phoneme tokens data/$1/text -> data/$1/text_phn"
    python -m local_models.bin.jdit_text g2p --token-type "${token_type}" --unknown "${unknown_chars}" "data/$1"
}

# make_text SET: the rest of stage 3 for one data dir with text_phn (token shapes, true durations if the set has
# phones.ctm); the token list must exist
make_text() {
    local x=$1
    mkdir -p "dump/${x}"
    python -m local_models.bin.jdit_text shape "data/${x}/text_phn" "${token_list}" "dump/${x}/text_shape.phn"
    if [ -f "data/${x}/phones.ctm" ]; then
        require "data/${x}/utt2num_frames" "stage 2 (features)"
        log "Stage 3: reference durations from the true phone times -> data/${x}/durations"
        python -m local_models.bin.jdit_text durations --token-type "${token_type}" \
            --sample-rate "$(conf_value --sample-rate)" --hop-length "$(conf_value --hop-length)" "data/${x}"
        # espeak-ng emits a stop's phone event after its closure: a second reference gives the closure to the stop
        log "Stage 3: the same with stop closures given to the stop -> data/${x}/durations_closure"
        python -m local_models.bin.jdit_text closures "data/${x}"
        python -m local_models.bin.jdit_text durations --token-type "${token_type}" \
            --sample-rate "$(conf_value --sample-rate)" --hop-length "$(conf_value --hop-length)" \
            --ctm phones_closure.ctm --out durations_closure "data/${x}"
    fi
}

# config_of SYSTEM: its ESPnet2 training config
config_of() {
    case "$1" in
        jdit|tacotron2|transformer|fastspeech) ;;
        *) die "unknown system '$1' (jdit, tacotron2, transformer, fastspeech)" ;;
    esac
    echo "conf/tuning/train_$1${train_config_suffix}.yaml"
}

# check_systems: check --systems / --vocoder / --train-pwg and set the vocoder of the systems (vocoder_model), the
# other one, also scored on the reference mels (alt_name, alt_model), and the training order (ordered_systems)
check_systems() {
    local s
    for s in ${systems}; do config_of "${s}" > /dev/null; done
    pwg_model=exp/vocoder_pwg/checkpoint.pkl
    pwg_conf=conf/tuning/train_pwg${train_config_suffix}.yaml
    case "${vocoder}" in
        griffin_lim) vocoder_model=griffin_lim; alt_name=pwg; alt_model=${pwg_model} ;;
        pwg) vocoder_model=${pwg_model}; alt_name=griffin_lim; alt_model=griffin_lim ;;
        *.pkl) vocoder_model=${vocoder}; alt_name=griffin_lim; alt_model=griffin_lim
               require "${vocoder}" "a Parallel WaveGAN checkpoint (config.yml beside it)" ;;
        *) die "--vocoder ${vocoder}: pwg, griffin_lim or a Parallel WaveGAN checkpoint .pkl" ;;
    esac
    case "${train_pwg}" in true|false) ;; *) die "--train-pwg ${train_pwg}: true or false" ;; esac
    if [[ " ${systems} " == *" fastspeech "* && " ${systems} " != *" transformer "* ]]; then
        die "--systems: fastspeech needs its teacher, transformer"
    fi
    # training order: the teacher before FastSpeech
    ordered_systems=$(for s in jdit tacotron2 transformer fastspeech; do [[ " ${systems} " != *" ${s} "* ]] || echo "${s}"; done)
}

# teacher_durations SET: the Transformer's teacher-forced durations on data/SET (ESPnet2 tts_inference; one per
# token + the final <sos/eos>, as FastSpeech reads them) -> exp/tts_transformer/teacher_SET/durations/durations
teacher_durations() {
    local x=$1 out=exp/tts_transformer/teacher_$1
    require "exp/tts_transformer/${inference_model}" "stage 4 (training transformer)"
    log "Stage 4: teacher-forced durations of exp/tts_transformer on data/${x} -> ${out}"
    run_logged "${out}" ${decode_launch} "${out}/inference.log" python -m local_models.bin.jdit_inference \
        --ngpu "${inference_ngpu}" --train_config exp/tts_transformer/config.yaml \
        --model_file "exp/tts_transformer/${inference_model}" \
        --data_path_and_name_and_type "data/${x}/text_phn,text,text" \
        --data_path_and_name_and_type "data/${x}/feats.scp,speech,kaldi_ark" \
        --use_teacher_forcing true --output_dir "${out}"
    require "${out}/durations/durations" "the teacher-forced inference (see ${out}/inference.log)"
}

# train_system SYSTEM: stage 4 for one acoustic model -> exp/tts_SYSTEM (FastSpeech: from its teacher's durations)
train_system() {
    local s=$1 conf out x extra=()
    conf=$(config_of "${s}"); out=exp/tts_${s}
    require "${conf}" "a training config"
    for x in ${train_set} ${valid_set}; do
        require "dump/${x}/text_shape.phn" "stage 3 (text)"
        require "data/${x}/feats.scp" "stage 2 (features)"
    done
    if [ "${s}" = fastspeech ]; then
        for x in ${train_set} ${valid_set}; do teacher_durations "${x}"; done
        extra=(--train_data_path_and_name_and_type "exp/tts_transformer/teacher_${train_set}/durations/durations,durations,text_int"
               --valid_data_path_and_name_and_type "exp/tts_transformer/teacher_${valid_set}/durations/durations,durations,text_int")
    fi
    # text shapes first: ESPnet sorts each batch by the first shape file, and Tacotron2's encoder packs the
    # text batch (lengths must decrease)
    log "Stage 4: train ${s} (${conf}) -> ${out} (log: ${out}/train.log)"
    espnet_train "${out}" jdit_train --config "${conf}" --token_list "${token_list}" --odim "$(conf_value --n-mels)" \
            --normalize_conf "stats_file=dump/${train_set}/feats_stats.npz" \
            --train_data_path_and_name_and_type "data/${train_set}/feats.scp,speech,kaldi_ark" \
            --train_data_path_and_name_and_type "data/${train_set}/text_phn,text,text" \
            --train_shape_file "dump/${train_set}/text_shape.phn" --train_shape_file "dump/${train_set}/feats_shape" \
            --valid_data_path_and_name_and_type "data/${valid_set}/feats.scp,speech,kaldi_ark" \
            --valid_data_path_and_name_and_type "data/${valid_set}/text_phn,text,text" \
            --valid_shape_file "dump/${valid_set}/text_shape.phn" --valid_shape_file "dump/${valid_set}/feats_shape" \
            "${extra[@]}"
}

# train_all: stage 4. Every system and the vocoder, ${train_nj} at a time (utils/stage_lib.sh train_pool: nj on the
# CPU, where each training uses one thread; 1 on a local GPU). FastSpeech needs its teacher's durations: it runs in
# the Transformer's job, after it, and that chain starts first as the longest.
train_all() {
    local s all
    all=" $(echo ${ordered_systems}) "  # one line, space-separated
    if [[ "${all}" == *" fastspeech "* ]]; then
        train_pool train_chain transformer fastspeech
    elif [[ "${all}" == *" transformer "* ]]; then
        train_pool train_system transformer
    fi
    for s in ${ordered_systems}; do
        case "${s}" in transformer|fastspeech) ;; *) train_pool train_system "${s}" ;; esac
    done
    if [ "${train_pwg}" = true ]; then train_pool train_vocoder; fi
    pool_wait
}

# train_chain SYSTEM...: train them one after the other (a pool job)
train_chain() {
    local s
    for s in "$@"; do train_system "${s}"; done
}

# train_vocoder: stage 4's Parallel WaveGAN on the train wavs + mels -> exp/vocoder_pwg/checkpoint.pkl
train_vocoder() {
    local x pwg_launch pwg_gpu
    for x in ${train_set} ${valid_set}; do require "data/${x}/feats.scp" "stage 2 (features)"; done
    log "Stage 4: train Parallel WaveGAN (${pwg_conf}) -> exp/vocoder_pwg (log: exp/vocoder_pwg/train.log)"
    # parallel-wavegan's trainer uses one GPU (its multi-GPU mode needs its own launcher)
    pwg_launch=${train_cmd}; pwg_gpu=0
    if [ "${ngpu}" -gt 0 ]; then pwg_launch="${cuda_cmd} --gpu 1"; pwg_gpu=1; fi
    run_logged exp/vocoder_pwg ${pwg_launch} exp/vocoder_pwg/train.log \
        python -m local_models.bin.pwg_train --config "${pwg_conf}" --seed "${seed}" --ngpu "${pwg_gpu}" \
            ${pwg_max_steps:+--max-steps "${pwg_max_steps}"} \
            --train-dir "data/${train_set}" --valid-dir "data/${valid_set}" exp/vocoder_pwg
}

# synthesise_set SET: stage 5 for one data dir: every system, the vocoders on the reference mels, the teacher's
# and JDI-T's aligner / predictor durations
synthesise_set() {
    local x=$1 s out lg
    # a data dir that stages 2-3 never saw (your own wav.scp + text): prepare it now, as they would
    if [ -f "data/${x}/wav.scp" ] && [ ! -f "data/${x}/feats.scp" ]; then make_feats "${x}"; fi
    if [ ! -f "data/${x}/text_phn" ]; then require "${token_list}" "stage 3 (text)"; g2p "${x}"; make_text "${x}"; fi
    for s in ${systems}; do
        require "exp/tts_${s}/config.yaml" "stage 4 (training ${s})"
        # the command and log beside the output (tts_synth replaces ${out} as a whole)
        out=exp/tts_${s}/decode_${x} lg=exp/tts_${s}/log/synth_${x}
        log "Stage 5: synthesise data/${x} with ${s} + ${vocoder} -> ${out} (log: ${lg}/synth.log)"
        decode_pool run_logged "${lg}" ${decode_launch} "${lg}/synth.log" python -m local_models.bin.tts_synth \
            --model-dir "exp/tts_${s}" --model-file "${inference_model}" --ngpu "${inference_ngpu}" \
            --text "data/${x}/text_phn" --vocoder "${vocoder_model}" --fbank-conf conf/fbank.conf \
            --griffin-lim-iters "${griffin_lim_iters}" --save-att ${inference_args} "${out}"
    done
    pool_wait
    [ -f "data/${x}/feats.scp" ] || return 0
    log "Stage 5: GT mel: ${vocoder} on the reference mels of data/${x} -> exp/gt_mel/decode_${x}"
    ${decode_launch} "exp/gt_mel/log/synth_${x}.log" \
        python -m local_models.bin.tts_synth --feats "data/${x}/feats.scp" --ngpu "${inference_ngpu}" \
        --vocoder "${vocoder_model}" --fbank-conf conf/fbank.conf --griffin-lim-iters "${griffin_lim_iters}" \
        "exp/gt_mel/decode_${x}"
    if [ "${alt_model}" = griffin_lim ] || [ -f "${alt_model}" ]; then
        log "Stage 5: GT mel: ${alt_name} on the reference mels of data/${x} -> exp/gt_mel_${alt_name}/decode_${x}"
        ${decode_launch} "exp/gt_mel_${alt_name}/log/synth_${x}.log" \
            python -m local_models.bin.tts_synth --feats "data/${x}/feats.scp" --ngpu "${inference_ngpu}" \
            --vocoder "${alt_model}" --fbank-conf conf/fbank.conf --griffin-lim-iters "${griffin_lim_iters}" \
            "exp/gt_mel_${alt_name}/decode_${x}"
    else
        rm -rf "exp/gt_mel_${alt_name}/decode_${x}"  # no stale row
    fi
    if [[ " ${systems} " == *" transformer "* ]]; then
        teacher_durations "${x}"   # what FastSpeech would have been taught on this set (duration accuracy)
    fi
    if [[ " ${systems} " == *" jdit "* ]]; then
        log "Stage 5: JDI-T aligner (teacher forced) and predictor durations on data/${x} -> exp/tts_jdit/align_${x}"
        run_logged "exp/tts_jdit/align_${x}" ${decode_launch} "exp/tts_jdit/align_${x}/align.log" \
            python -m local_models.bin.jdit_align --model-dir exp/tts_jdit --model-file "${inference_model}" \
            --ngpu "${inference_ngpu}" --plot "${att_plots}" "data/${x}" "exp/tts_jdit/align_${x}"
    fi
}

# score_set SET: stage 6's MCD / log-F0 RMSE of every decode dir of one data dir with audio (skips up-to-date ones;
# the others in one process: mcd_score's analysis and outputs, its imports paid once)
score_set() {
    local x=$1 d todo=()
    [ -f "data/${x}/wav.scp" ] || return 0
    for d in exp/gt_mel/decode_${x} exp/gt_mel_${alt_name}/decode_${x} \
            $(for s in ${systems}; do echo "exp/tts_${s}/decode_${x}"; done); do
        [ "${d}" != "exp/gt_mel_${alt_name}/decode_${x}" ] || [ -d "${d}" ] || continue
        require "${d}/wav.scp" "stage 5 (synthesis)"
        if [ "${d}/mcd.json" -nt "${d}/wav.scp" ]; then
            log "Stage 6: ${d}/mcd.json is up to date"
            continue
        fi
        log "Stage 6: MCD / log-F0 RMSE of ${d} against data/${x} at ${mcd_sample_rate} Hz"
        todo+=("${d}")
    done
    [ "${#todo[@]}" -eq 0 ] || python -m local_models.bin.jdit_mcd --ref "data/${x}/wav.scp" \
        --sample-rate "${mcd_sample_rate}" "${todo[@]}"
}
