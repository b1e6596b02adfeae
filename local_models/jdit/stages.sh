#!/usr/bin/env bash
# JDI-T stages (local_models/jdit) for any corpus: JDI-T (one-stage feed-forward TTS trained jointly with an
# autoregressive aligner) vs ESPnet Tacotron2 / Transformer / FastSpeech; Griffin-Lim, Parallel WaveGAN and
# Multi-band MelGAN vocoders.
# Stages: 1 data: the corpus's local/data.sh ${local_data_opts} -> data/<set>/{wav.scp (22.05 kHz), text, ...} for
#           --train-set, --valid-set, --test-sets; a set may be text only (no wav.scp: synthesised, not scored); a set
#           with true phone times (data/<set>/phones.ctm, e.g. an espeak-ng mini corpus) gets reference durations
#         2 features: 80-dim log-mel as ESPnet2's TTS `fbank` (conf/fbank.conf: 22.05 kHz, FFT = window 1024, hop
#           256, 80-7600 Hz; utils/make_feats) -> dump/<set>/{feats.*.{ark,scp},feats.shape},
#           data/<set>/{feats.scp,utt2num_frames}, train statistics for `normalize: global_mvn` ->
#           dump/<train_set>/feats_stats.npz
#         3 text: phoneme tokens data/<set>/text_phn (--token-type: espeak-ng phonemes or jamo), ESPnet token list
#           ${token_list}, dump/<set>/text_shape.phn; sets with phones.ctm: data/<set>/durations (frames per token)
#           and data/<set>/durations_closure (the same with each stop's closure given to the stop)
#         4 training through ESPnet2's TTS task, each system into exp/tts_<system> (resumes from its last
#           checkpoint; config conf/tuning/train_<system>${train_config_suffix}.yaml): jdit = JDI-T in ONE stage
#           from scratch (no teacher, no external aligner); with --train-pwg true also the Parallel WaveGAN vocoder
#           on the train wavs + mels (parallel-wavegan's trainer, conf/tuning/train_pwg${train_config_suffix}.yaml)
#           -> exp/vocoder_pwg/checkpoint.pkl, with --train-mbmelgan true the fast Multi-band MelGAN
#           (conf/tuning/train_mbmelgan${train_config_suffix}.yaml) -> exp/vocoder_mbmelgan/checkpoint.pkl;
#           --nj trainings at a time on the CPU (one thread each; one at a time
#           on a local GPU), FastSpeech after its teacher (the Transformer's teacher-forced durations)
#         5 synthesis of every --test-sets set with text_phn: exp/tts_<system>/decode_<set>/{wav,feats,durations,
#           synth.json (RTF)}; "GT mel" = the vocoder on the reference mels (exp/gt_mel/decode_<set>), and the
#           other vocoder on them (exp/gt_mel_pwg or exp/gt_mel_griffin_lim): the two vocoders compared; JDI-T's
#           aligner (teacher forced) and predictor durations -> exp/tts_jdit/align_<set> (+ attention plots); the
#           same on --dev-set (exp/tts_jdit/align_<dev_set>), the set JDI-T's settings are chosen on: a sealed set
#           there (--sealed-sets) stops the stage before any work
#         6 scoring: MCD (DTW, and 1:1 with the length ratio: DTW cannot see a wrong length) / log-F0 RMSE against
#           the recordings (both at ${mcd_sample_rate} Hz), duration accuracy against the true durations (sets with
#           phones.ctm), attention failures of the AR models, RTF, and the speed benchmark at equal output lengths
#           (benchmarks/kss_speed.py); verdicts on 95 % intervals (a baseline that did not converge is not ranked);
#           each scoring of a sealed set is a look (exp/sealed_looks.tsv) -> exp/results.json, ${results_md}
#         7 pack: every --systems system with all synthesis needs (config, ${inference_model}, mel statistics, token
#           list, feature settings, the vocoder its decode dirs used) and a model card (metrics from results.json)
#           -> exp/tts_<system>/packed/model.tar.gz; speak with it: text-to-speech --model ARCHIVE --text ... -o x.wav
# Any data dir with text (+ wav.scp to be scored) can be synthesised: ./run.sh --stage 5 --test-sets "my_set" (stage 5
# makes its features and tokens when stages 2-3 have not; after changing its files, rerun from stage 2).
# Use: a recipe's run.sh sources this file (after path.sh and cmd.sh), sets its corpus's options (--corpus, the
# sets, local_data_opts for its local/data.sh), sources parse_options.sh and calls run_stages. The recipe dir holds
# local/data.sh, conf/fbank.conf and conf/tuning/train_{jdit,tacotron2,transformer,fastspeech,pwg}*.yaml.

# shellcheck disable=SC2034,SC2154  # options read by utils/stage_lib.sh; launchers set by cmd.sh / setup_devices
option_files+=("${BASH_SOURCE[0]}")

# jdit_systems QUERY [ARGS]: the names of local_models/jdit/systems.py (python -m local_models.jdit.systems --help):
# the systems, their training order, the vocoders; exit 1 with a message on an unknown name
jdit_systems() {
    python -m local_models.jdit.systems "$@"
}

stage=1                 # first stage to run
stop_stage=7            # last stage to run
nj=2                    # jobs at a time: feature extraction, stage 4's trainings (CPU)
train_set=train         # training set (also the token list's and the mel statistics' source)
valid_set=dev           # validation set of the trainings
test_sets="test"        # sets to synthesise and score (stages 5-6)
sealed_sets="test"      # sets only scored, never chosen on: a tuning step handed one stops
                        # (local_models/common/sealed.py); each scoring of one is a look (exp/sealed_looks.tsv)
dev_set=dev             # where JDI-T's settings are chosen: stage 5 aligns it, stage 6 scores its durations ("" none)
jdit_chosen_on=dev      # the set JDI-T's departures from the paper (conf/tuning/train_jdit_tiny.yaml) were chosen on:
                        # dev since 2026-11-29 (local/choose_departures.sh; test before). Every verdict states it
seed=0                  # training seed (the data seed too, where local/data.sh takes one)
unknown_chars=error     # characters with no reading in --lang in the text: error (file:line) or drop
token_type=espeak       # text tokens: espeak (espeak-ng's phonemes of --lang, one per phone event of the mini corpus:
                        # true durations one to one) or jamo (the Korean jamo front end: recorded speech, e.g. real KSS)
lang=ko                 # the text's language (local_models/jdit/phonemes.py LANGS: ko, es): espeak-ng's voice and the
                        # front end's text checks; kept in each model's config.yaml (g2p_lang) for synthesis
token_list=data/token_list/phn/tokens.txt  # stage 3's ESPnet token list (from --train-set)
systems="jdit tacotron2 transformer fastspeech"  # acoustic models to train / synthesise / score (systems.py SYSTEMS)
train_config_suffix=_tiny  # conf/tuning/train_<system>${suffix}.yaml (and train_pwg${suffix}.yaml): "" paper size
ngpu=$(default_ngpu)    # GPUs per training job (0: CPU; > 1: ESPnet2's DDP); default 1 when nvidia-smi lists a GPU
dist_world_size=1       # --ngpu 0: training processes per model (> 1: CPU DDP, torchrun + gloo; utils/stage_lib.sh)
gpu_inference=false     # synthesise on a GPU (through cuda_cmd)
inference_nj=1          # synthesis jobs at a time (1: the RTFs in RESULTS.md are measured one process at a time)
inference_model=valid.loss.best.pth  # checkpoint that synthesises: valid.loss.best.pth, valid.loss.ave.pth, latest.pth
train_args=""           # extra ESPnet2 training options for every system, verbatim (they win), e.g. "--max_epoch 1"
inference_args=""       # extra jdit_synth options, verbatim
vocoder=griffin_lim     # what vocodes the systems: griffin_lim, pwg or mbmelgan (the ones stage 4 trains), or the
                        # path of a trained parallel-wavegan checkpoint (.pkl). The tiny PWG (1500 steps on 2 CPU
                        # cores) is far worse than Griffin-Lim (see RESULTS.md): use pwg with --train-config-suffix ""
train_pwg=true          # stage 4 trains Parallel WaveGAN -> exp/vocoder_pwg (scored on the reference mels)
train_mbmelgan=false    # stage 4 also trains Multi-band MelGAN (conf/tuning/train_mbmelgan${suffix}.yaml) ->
                        # exp/vocoder_mbmelgan: the fast neural vocoder (--vocoder mbmelgan; packed with the systems)
pwg_max_steps=""        # override the PWG / MB-MelGAN configs' train_max_steps (smoke runs)
griffin_lim_iters=32
mcd_sample_rate=16000   # MCD / F0 analysis rate (the mel stops at 7.6 kHz; see local_models/bin/mcd_score.py)
mcd_f0_method=harvest   # WORLD F0 of the MCD analysis: harvest (ESPnet's evaluate_mcd), dio (~50x faster)
att_plots=3             # attention plots per test set (JDI-T aligner)
speed_benchmark=true    # stage 6 also times the acoustic models at equal output length (benchmarks/kss_speed.py)
bench_threads=2
bench_repeats=3         # the benchmark's timed runs per sentence and model (the best counts)
results_md=RESULTS.md   # stage 6's report
corpus=""               # the corpus's name in the report (stage 6; the model cards take it from there); a recipe's
                        # run.sh may take a short key here and set the name
local_data_opts=""      # options of stage 1's local/data.sh, verbatim

# conf_value KEY: a value of conf/fbank.conf (conf_value --hop-length -> 256)
conf_value() { awk -v k="$1" '$1 == k { print $2 }' conf/fbank.conf; }

# feats_set SET...: stage 2 for data dirs (log-mels -> dump/SET, data/SET/{feats.scp,utt2num_frames}; one make_feats
# call for all of them: its jobs pay their start-up once)
feats_set() {
    local x f pairs=()
    for x in "$@"; do
        require "data/${x}/text" "stage 1 (data) or your own data dir with wav.scp + text"
        log "Stage 2: log-mel features of data/${x} -> dump/${x}"
        validate_data_dir --no-feats "data/${x}"
        rm -rf "dump/${x}/log"   # logs of an earlier run with another nj
        pairs+=("data/${x}" "dump/${x}")
    done
    # shellcheck disable=SC2046  # conf/fbank.conf: one extract_feats option (and its value) per line
    make_feats --nj "${nj}" --cmd "${decode_cmd}" "${pairs[@]}" $(cat conf/fbank.conf)
    for x in "$@"; do
        for f in utt2num_frames feats.scp; do
            cp "dump/${x}/${f}" "data/${x}/${f}.tmp"
            mv "data/${x}/${f}.tmp" "data/${x}/${f}"
        done
        validate_data_dir "data/${x}"
    done
}

# g2p SET: stage 3's phoneme tokens (--token-type) of one data dir -> data/SET/text_phn
g2p() {
    require "data/$1/text" "stage 1 (data) or your own data dir with wav.scp + text"
    log "Stage 3: ${token_type} phoneme tokens data/$1/text -> data/$1/text_phn"
    python -m local_models.bin.jdit_text g2p --token-type "${token_type}" --lang "${lang}" \
        --unknown "${unknown_chars}" "data/$1"
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
    # a known name only: `check` would also ask for a student's teacher, which is another system's business
    jdit_systems label "$1" > /dev/null || die "--systems: unknown system '$1'"
    echo "conf/tuning/train_$1${train_config_suffix}.yaml"
}

# check_systems: check --systems / --vocoder / --train-pwg / --train-mbmelgan (dies on a bad value; sets nothing)
check_systems() {
    jdit_systems check "${systems}" || die "--systems '${systems}': see local_models/jdit/systems.py"
    vocoder_of main > /dev/null   # griffin_lim, pwg, mbmelgan or a checkpoint .pkl
    case "${vocoder}" in
        *.pkl) require "${vocoder}" "a parallel-wavegan checkpoint (config.yml beside it)" ;;
    esac
    case "${train_pwg}" in true|false) ;; *) die "--train-pwg ${train_pwg}: true or false" ;; esac
    case "${train_mbmelgan}" in true|false) ;; *) die "--train-mbmelgan ${train_mbmelgan}: true or false" ;; esac
}

# vocoder_of main|alt: the vocoder of the systems (main: --vocoder) or the other one, also run on the reference
# mels (alt): griffin_lim or a parallel-wavegan checkpoint (exp/vocoder_<pwg|mbmelgan>/checkpoint.pkl)
vocoder_of() {
    jdit_systems vocoder_of "$1" "${vocoder}" || die "vocoder_of $1: --vocoder ${vocoder}"
}

# alt_name: the other vocoder's name (its reference-mel rows: exp/gt_mel_<name>)
alt_name() { jdit_systems alt_name "${vocoder}"; }

# system_configs: the files that define the systems scored (their training configs, the trained vocoder's, the
# features'), one per line: the sealed looks' configuration fingerprint
system_configs() {
    local s
    for s in ${systems}; do config_of "${s}"; done
    if [ "${vocoder}" = pwg ] || [ "${train_pwg}" = true ]; then
        echo "conf/tuning/train_pwg${train_config_suffix}.yaml"
    fi
    if [ "${vocoder}" = mbmelgan ] || [ "${train_mbmelgan}" = true ]; then
        echo "conf/tuning/train_mbmelgan${train_config_suffix}.yaml"
    fi
    echo conf/fbank.conf
}

# ordered_systems: --systems in training order (the teacher before FastSpeech), on one line
ordered_systems() {
    jdit_systems ordered "${systems}" || die "--systems '${systems}': see local_models/jdit/systems.py"
}

# teacher_durations SET: the Transformer's teacher-forced durations on data/SET (ESPnet2's Text2Speech, without
# tts_inference's per-utterance attention figures; one per token + the final <sos/eos>, as FastSpeech reads them)
# -> exp/tts_transformer/teacher_SET/durations/durations
# shellcheck disable=SC2086  # the launcher is a word list
teacher_durations() {
    local x=$1 out=exp/tts_transformer/teacher_$1
    require "exp/tts_transformer/${inference_model}" "stage 4 (training transformer)"
    log "Stage 4: teacher-forced durations of exp/tts_transformer on data/${x} -> ${out}"
    run_logged "${out}" ${decode_launch} "${out}/inference.log" python -m local_models.bin.jdit_inference \
        --ngpu "${inference_ngpu}" --train_config exp/tts_transformer/config.yaml \
        --model_file "exp/tts_transformer/${inference_model}" \
        --data_path_and_name_and_type "data/${x}/text_phn,text,text" \
        --data_path_and_name_and_type "data/${x}/feats.scp,speech,kaldi_ark" \
        --use_teacher_forcing true --durations_only true --output_dir "${out}"
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
            --g2p_lang "${lang}" \
            --normalize_conf "stats_file=dump/${train_set}/feats_stats.npz" \
            --train_data_path_and_name_and_type "data/${train_set}/feats.scp,speech,kaldi_ark" \
            --train_data_path_and_name_and_type "data/${train_set}/text_phn,text,text" \
            --train_shape_file "dump/${train_set}/text_shape.phn" --train_shape_file "dump/${train_set}/feats.shape" \
            --valid_data_path_and_name_and_type "data/${valid_set}/feats.scp,speech,kaldi_ark" \
            --valid_data_path_and_name_and_type "data/${valid_set}/text_phn,text,text" \
            --valid_shape_file "dump/${valid_set}/text_shape.phn" --valid_shape_file "dump/${valid_set}/feats.shape" \
            "${extra[@]}"
}

# train_all: stage 4. Every system and the vocoder, ${train_nj} at a time (utils/stage_lib.sh train_pool: nj on the
# CPU, where each training uses one thread; 1 on a local GPU). FastSpeech needs its teacher's durations: it runs in
# the Transformer's job, after it, and that chain starts first as the longest.
train_all() {
    local s all
    all=" $(ordered_systems) "
    if [[ "${all}" == *" fastspeech "* ]]; then
        train_pool train_chain transformer fastspeech
    elif [[ "${all}" == *" transformer "* ]]; then
        train_pool train_system transformer
    fi
    for s in ${all}; do
        case "${s}" in transformer|fastspeech) ;; *) train_pool train_system "${s}" ;; esac
    done
    if [ "${train_pwg}" = true ]; then train_pool train_vocoder pwg; fi
    if [ "${train_mbmelgan}" = true ]; then train_pool train_vocoder mbmelgan; fi
    pool_wait
}

# train_chain SYSTEM...: train them one after the other (a pool job)
train_chain() {
    local s
    for s in "$@"; do train_system "${s}"; done
}

# train_vocoder pwg|mbmelgan: stage 4's Parallel WaveGAN or Multi-band MelGAN (parallel-wavegan's trainer) on the
# train wavs + mels -> exp/vocoder_<name>/checkpoint.pkl
# shellcheck disable=SC2086  # the launcher is a word list
train_vocoder() {
    local x name=$1 out=exp/vocoder_$1 pwg_launch pwg_gpu pwg_conf=conf/tuning/train_$1${train_config_suffix}.yaml
    for x in ${train_set} ${valid_set}; do require "data/${x}/feats.scp" "stage 2 (features)"; done
    require "${pwg_conf}" "a parallel-wavegan config"
    log "Stage 4: train vocoder ${name} (${pwg_conf}) -> ${out} (log: ${out}/train.log)"
    # parallel-wavegan's trainer uses one GPU (its multi-GPU mode needs its own launcher)
    pwg_launch=${train_cmd}; pwg_gpu=0
    if [ "${ngpu}" -gt 0 ]; then pwg_launch="${cuda_cmd} --gpu 1"; pwg_gpu=1; fi
    run_logged "${out}" ${pwg_launch} "${out}/train.log" \
        python -m local_models.bin.jdit_pwg_train --config "${pwg_conf}" --seed "${seed}" --ngpu "${pwg_gpu}" \
            ${pwg_max_steps:+--max-steps "${pwg_max_steps}"} \
            --train-dir "data/${train_set}" --valid-dir "data/${valid_set}" "${out}"
}

# synthesise_set SET: stage 5 for one data dir: every system, the vocoders on the reference mels, the teacher's
# and JDI-T's aligner / predictor durations
# shellcheck disable=SC2086  # the launcher and --inference-args are word lists
synthesise_set() {
    local x=$1 s out lg vocoder_model alt alt_model
    vocoder_model=$(vocoder_of main); alt=$(alt_name); alt_model=$(vocoder_of alt)
    # a data dir that stages 2-3 never saw (your own wav.scp + text): prepare it now, as they would
    if [ -f "data/${x}/wav.scp" ] && [ ! -f "data/${x}/feats.scp" ]; then feats_set "${x}"; fi
    if [ ! -f "data/${x}/text_phn" ]; then require "${token_list}" "stage 3 (text)"; g2p "${x}"; make_text "${x}"; fi
    for s in ${systems}; do
        require "exp/tts_${s}/config.yaml" "stage 4 (training ${s})"
        # the command and log beside the output (jdit_synth replaces ${out} as a whole)
        out=exp/tts_${s}/decode_${x} lg=exp/tts_${s}/log/synth_${x}
        log "Stage 5: synthesise data/${x} with ${s} + ${vocoder} -> ${out} (log: ${lg}/synth.log)"
        decode_pool run_logged "${lg}" ${decode_launch} "${lg}/synth.log" python -m local_models.bin.jdit_synth \
            --model-dir "exp/tts_${s}" --model-file "${inference_model}" --ngpu "${inference_ngpu}" \
            --text "data/${x}/text_phn" --vocoder "${vocoder_model}" --fbank-conf conf/fbank.conf \
            --griffin-lim-iters "${griffin_lim_iters}" --save-att ${inference_args} "${out}"
    done
    pool_wait
    [ -f "data/${x}/feats.scp" ] || return 0
    log "Stage 5: GT mel: ${vocoder} on the reference mels of data/${x} -> exp/gt_mel/decode_${x}"
    ${decode_launch} "exp/gt_mel/log/synth_${x}.log" \
        python -m local_models.bin.jdit_synth --feats "data/${x}/feats.scp" --ngpu "${inference_ngpu}" \
        --vocoder "${vocoder_model}" --fbank-conf conf/fbank.conf --griffin-lim-iters "${griffin_lim_iters}" \
        "exp/gt_mel/decode_${x}"
    if [ "${alt_model}" = griffin_lim ] || [ -f "${alt_model}" ]; then
        log "Stage 5: GT mel: ${alt} on the reference mels of data/${x} -> exp/gt_mel_${alt}/decode_${x}"
        ${decode_launch} "exp/gt_mel_${alt}/log/synth_${x}.log" \
            python -m local_models.bin.jdit_synth --feats "data/${x}/feats.scp" --ngpu "${inference_ngpu}" \
            --vocoder "${alt_model}" --fbank-conf conf/fbank.conf --griffin-lim-iters "${griffin_lim_iters}" \
            "exp/gt_mel_${alt}/decode_${x}"
    else
        rm -rf "exp/gt_mel_${alt}/decode_${x}"  # no stale row
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

# align_dev: stage 5's measurement on --dev-set, the set JDI-T's settings are chosen on: the aligner's (teacher
# forced) and predictor durations -> exp/tts_jdit/align_${dev_set} (stage 6 scores them against the true durations)
# shellcheck disable=SC2086  # the launcher is a word list
align_dev() {
    local out=exp/tts_jdit/align_${dev_set}
    require "data/${dev_set}/text_phn" "stage 3 (text)"
    require "data/${dev_set}/feats.scp" "stage 2 (features)"
    log "Stage 5: JDI-T aligner and predictor durations on the dev set data/${dev_set} -> ${out}"
    run_logged "${out}" ${decode_launch} "${out}/align.log" python -m local_models.bin.jdit_align \
        --model-dir exp/tts_jdit --model-file "${inference_model}" --ngpu "${inference_ngpu}" "data/${dev_set}" "${out}"
}

# check_dev: refuse a sealed --dev-set (one line, exit 1) before a stage that chooses on it does any work
check_dev() {
    [ -n "${dev_set}" ] || return 0
    python -m local_models.common.sealed check --tuning "${dev_set}" --sealed "${sealed_sets}" \
        --what "$1 (--dev-set, where JDI-T's settings are chosen)" || exit 1
}

# check_valid: refuse a sealed --valid-set (one line, exit 1) before stage 4 does any work: every training keeps the
# checkpoint of lowest loss on it (valid.loss.best.pth), a choice
check_valid() {
    stage_enabled 4 || return 0
    python -m local_models.common.sealed check --tuning "${valid_set}" --sealed "${sealed_sets}" \
        --what "stage 4 (--valid-set, where each training's checkpoint is picked)" || exit 1
}

# score_set SET: stage 6's MCD / log-F0 RMSE of every decode dir of one data dir with audio, in one process
# (mcd_score's analysis and outputs, its imports paid once; a dir whose mcd.json has this analysis and is newer
# than its wav.scp is left as it is)
score_set() {
    local x=$1 d s alt todo=()
    [ -f "data/${x}/wav.scp" ] || return 0
    alt=$(alt_name)
    for d in "exp/gt_mel/decode_${x}" "exp/gt_mel_${alt}/decode_${x}" \
            $(for s in ${systems}; do echo "exp/tts_${s}/decode_${x}"; done); do
        [ "${d}" != "exp/gt_mel_${alt}/decode_${x}" ] || [ -d "${d}" ] || continue
        require "${d}/wav.scp" "stage 5 (synthesis)"
        todo+=("${d}")
    done
    log "Stage 6: MCD / log-F0 RMSE (${mcd_f0_method} F0) of ${todo[*]} against data/${x} at ${mcd_sample_rate} Hz"
    python -m local_models.bin.jdit_mcd --ref "data/${x}/wav.scp" --sample-rate "${mcd_sample_rate}" \
        --f0-method "${mcd_f0_method}" --skip-up-to-date "${todo[@]}"
}

# run_stages: run the enabled stages (after the recipe's parse_options.sh)
run_stages() {
    local x s sets="${train_set} ${valid_set} ${test_sets}" with_wav
    setup_devices
    check_valid
    if stage_enabled 1; then
        log "Stage 1: data -> data/{${sets// /,}}"
        # shellcheck disable=SC2086  # the corpus's options are a word list
        local/data.sh ${local_data_opts}
    fi
    if stage_enabled 2; then
        with_wav=()
        for x in ${sets}; do
            require "data/${x}/text" "stage 1 (data) or your own data dir with wav.scp + text"
            if [ ! -f "data/${x}/wav.scp" ]; then
                log "Stage 2: data/${x} has no wav.scp (text only): no features"
                continue
            fi
            with_wav+=("${x}")
        done
        [ "${#with_wav[@]}" -eq 0 ] || feats_set "${with_wav[@]}"
        log "Stage 2: global mean / variance of data/${train_set} -> dump/${train_set}/feats_stats.npz"
        python -m local_models.bin.feats_stats "data/${train_set}/feats.scp" "dump/${train_set}/feats_stats.npz"
    fi
    if stage_enabled 3; then
        for x in ${sets}; do g2p "${x}"; done
        # the token list (from train) before the shapes: every set's tokens are checked against it
        log "Stage 3: token list of data/${train_set} -> ${token_list}"
        python -m local_models.bin.jdit_text token-list --token-type "${token_type}" --lang "${lang}" \
            "data/${train_set}/text_phn" "${token_list}"
        for x in ${sets}; do make_text "${x}"; done
    fi
    check_systems   # --systems, --vocoder, --train-pwg
    if stage_enabled 4; then
        train_all   # nj trainings at a time on the CPU (one thread each), one at a time on a local GPU
    fi
    if stage_enabled 5; then
        check_dev "stage 5"
        [ "$(vocoder_of main)" = griffin_lim ] || require "$(vocoder_of main)" "stage 4 (vocoder training)"
        for x in ${test_sets}; do synthesise_set "${x}"; done
        if [ -n "${dev_set}" ] && [[ " ${systems} " == *" jdit "* ]]; then align_dev; fi
    fi
    if stage_enabled 6; then
        for x in ${test_sets}; do score_set "${x}"; done
        if [ "${speed_benchmark}" = true ]; then
            log "Stage 6: synthesis speed of ${systems} on ${test_sets}, equal output lengths, ${bench_threads} threads"
            python "${MAIN_ROOT}/benchmarks/kss_speed.py" --recipe . --systems "${systems}" --sets "${test_sets}" \
                --threads "${bench_threads}" --repeats "${bench_repeats}"
        else
            rm -f exp/benchmarks/kss_speed.json  # no stale timings in RESULTS.md
        fi
        log "Stage 6: scoring -> exp/results.json, ${results_md}"
        check_dev "stage 6"
        # shellcheck disable=SC2086,SC2046  # --systems / --test-sets / --sealed-sets / the configs are word lists
        run_logged exp/score python -m local_models.bin.jdit_score --systems ${systems} --sets ${test_sets} \
            --gt-mel-rows gt_mel "gt_mel_$(alt_name)" --results-md "${results_md}" --corpus "${corpus}" \
            --sealed-sets ${sealed_sets} ${dev_set:+--dev-set "${dev_set}"} --chosen-on "${jdit_chosen_on}" \
            --config-files $(system_configs) --option "vocoder=${vocoder}" --option "seed=${seed}" \
            --option "inference_model=${inference_model}" --option "griffin_lim_iters=${griffin_lim_iters}" \
            --option "mcd_sample_rate=${mcd_sample_rate}" --option "mcd_f0_method=${mcd_f0_method}" \
            --option "train_args=${train_args}" \
            --option "inference_args=${inference_args}" --option "token_type=${token_type}"
    fi
    if stage_enabled 7; then
        log "Stage 7: pack exp/tts_{${systems// /,}} -> exp/tts_<system>/packed/model.tar.gz (the command:" \
            "exp/tts_<system>/packed/run.sh)"
        # shellcheck disable=SC2046  # a word list
        pack_system jdit $(for s in ${systems}; do echo "tts_${s}"; done)
    fi
    log "Done (stages ${stage}-${stop_stage})"
}
