#!/usr/bin/env bash
# KSS Korean single-speaker TTS (paper 002, Lim et al.): JDI-T vs ESPnet Tacotron2 / Transformer / FastSpeech.
# Stages: 1 data: KSS via db.sh (expanded text, 22.05 kHz through sox pipes; the last 250 utterances held out,
#           200 dev + 50 test), else the espeak-ng Korean mini corpus with true phone times (data/<set>/phones.ctm);
#           data/ood: out-of-domain sentences for the attention-robustness test (KSS: text only)
#         2 features: 80-dim log-mel as ESPnet2's TTS `fbank` (22.05 kHz, FFT = window 1024, hop 256, 80-7600 Hz)
#           -> dump/<set>/feats.*.{ark,scp}, data/<set>/{feats.scp,utt2num_frames}, dump/<set>/feats_shape,
#           train statistics for `normalize: global_mvn` -> dump/train/feats_stats.npz
#         3 text: phoneme tokens data/<set>/text_phn (--token-type: espeak-ng phonemes or jamo), ESPnet token list
#           data/token_list/phn/tokens.txt,
#           dump/<set>/text_shape.phn; mini corpus: data/<set>/durations (frames per token, from phones.ctm) and
#           data/<set>/durations_closure (the same with each stop's closure given to the stop)
#         4 training through ESPnet2's TTS task, each system into exp/tts_<system> (resumes from its last
#           checkpoint): jdit = JDI-T in ONE stage from scratch (no teacher, no external aligner); with
#           --train-pwg true also the Parallel WaveGAN vocoder on the train wavs + mels (parallel-wavegan's
#           trainer, conf/tuning/train_pwg[_tiny].yaml) -> exp/vocoder_pwg/checkpoint.pkl; --nj trainings at a
#           time on the CPU (one thread each; one at a time on a local GPU), FastSpeech after its teacher
#         5 synthesis of every --test-sets set with text_phn: exp/tts_<system>/decode_<set>/{wav,feats,durations,
#           synth.json (RTF)}; "GT mel" = the vocoder on the reference mels (exp/gt_mel/decode_<set>), and the
#           other vocoder on them (exp/gt_mel_pwg or exp/gt_mel_griffin_lim): the two vocoders compared; JDI-T's
#           aligner (teacher forced) and predictor durations -> exp/tts_jdit/align_<set> (+ attention plots)
#         6 scoring: MCD (DTW) / log-F0 RMSE against the recordings (both at ${mcd_sample_rate} Hz), duration
#           accuracy against the true durations (mini corpus), attention failures of the AR models, RTF, and the
#           speed benchmark at equal output lengths (benchmarks/kss_speed.py) -> exp/results.json, RESULTS.md
#         7 pack: every --systems system with all synthesis needs (config, ${inference_model}, mel statistics, token
#           list, feature settings, the vocoder its decode dirs used) and a model card (metrics from results.json)
#           -> exp/tts_<system>/packed/model.tar.gz; speak with it: text-to-speech --model ARCHIVE --text ... -o x.wav
# Any data dir with text (+ wav.scp to be scored) can be synthesised: ./run.sh --stage 5 --test-sets "my_set" (stage 5
# makes its features and tokens when stages 2-3 have not; after changing its files, rerun from stage 2).
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh

stage=1
stop_stage=7
nj=2                    # jobs at a time: feature extraction, stage 4's trainings (CPU)
train_set=train
valid_set=dev
test_sets="test ood"
kss_dev=200             # KSS: held-out utterances at the end of the transcript (paper: 200 valid + 50 test)
kss_test=50
mini_utts=300           # mini corpus size (db.sh empty); the last 10 % are held out (dev 5 %, test 5 %)
seed=0
unknown_chars=error     # characters with no Korean reading in the text: error (file:line) or drop
token_type=espeak       # text tokens: espeak (espeak-ng's Korean phonemes, one per phone event of the mini corpus:
                        # true durations one to one) or jamo (the jamo front end: recorded speech, e.g. real KSS)
systems="jdit tacotron2 transformer fastspeech"   # acoustic models to train / synthesise / score
train_config_suffix=_tiny  # conf/tuning/train_<system>${suffix}.yaml (and train_pwg${suffix}.yaml): "" paper size
ngpu=$(default_ngpu)    # GPUs per training job (0: CPU; > 1: ESPnet2's DDP); default 1 when nvidia-smi lists a GPU
gpu_inference=false     # synthesise on a GPU (through cuda_cmd)
inference_nj=1          # synthesis jobs at a time (1: the RTFs in RESULTS.md are measured one process at a time)
inference_model=valid.loss.best.pth  # checkpoint that synthesises: valid.loss.best.pth, valid.loss.ave.pth, latest.pth
train_args=""           # extra ESPnet2 training options for every system, verbatim (they win), e.g. "--max_epoch 1"
inference_args=""       # extra tts_synth options, verbatim
vocoder=griffin_lim     # what vocodes the systems: griffin_lim, pwg (the one stage 4 trains), or the path of a
                        # trained Parallel WaveGAN checkpoint (.pkl). The demo's tiny PWG (1500 steps on 2 CPU
                        # cores) is far worse than Griffin-Lim (see RESULTS.md): use pwg with --train-config-suffix ""
train_pwg=true          # stage 4 trains Parallel WaveGAN -> exp/vocoder_pwg (scored on the reference mels)
pwg_max_steps=""        # override the PWG config's train_max_steps (smoke runs)
griffin_lim_iters=32
mcd_sample_rate=16000   # MCD / F0 analysis rate (the mel stops at 7.6 kHz; see local_models/bin/mcd_score.py)
att_plots=3             # attention plots per test set (JDI-T aligner)
speed_benchmark=true    # stage 6 also times the acoustic models at equal output length (benchmarks/kss_speed.py)
bench_threads=2
bench_repeats=3         # the benchmark's timed runs per sentence and model (the best counts)
results_md=RESULTS.md   # stage 6's report (local/demo.sh writes exp/RESULTS.md: the committed one stays)
. parse_options.sh
setup_devices


sets="${train_set} ${valid_set} ${test_sets}"
token_list=data/token_list/phn/tokens.txt
. local/lib.sh   # the stages' shell functions (make_feats, g2p, train_system, synthesise_set, ...)

if stage_enabled 1; then
    log "Stage 1: data -> data/{train,dev,test,ood}"
    local/data.sh --kss-dev "${kss_dev}" --kss-test "${kss_test}" --mini-utts "${mini_utts}" --seed "${seed}" --nj "${nj}"
fi

if stage_enabled 2; then
    for x in ${sets}; do
        require "data/${x}/text" "stage 1 (data) or your own data dir with wav.scp + text"
        if [ ! -f "data/${x}/wav.scp" ]; then
            log "Stage 2: data/${x} has no wav.scp (text only): no features"
            continue
        fi
        make_feats "${x}"
    done
    log "Stage 2: global mean / variance of data/${train_set} -> dump/${train_set}/feats_stats.npz"
    python -m local_models.bin.feats_stats "data/${train_set}/feats.scp" "dump/${train_set}/feats_stats.npz"
fi

if stage_enabled 3; then
    for x in ${sets}; do g2p "${x}"; done
    # the token list (from train) before the shapes: every set's tokens are checked against it
    log "Stage 3: token list of data/${train_set} -> ${token_list}"
    python -m local_models.bin.jdit_text token-list --token-type "${token_type}" "data/${train_set}/text_phn" \
        "${token_list}"
    for x in ${sets}; do make_text "${x}"; done
fi

check_systems   # --systems, --vocoder, --train-pwg -> vocoder_model, alt_name, alt_model, ordered_systems

if stage_enabled 4; then
    train_all   # nj trainings at a time on the CPU (one thread each), one at a time on a local GPU
fi

if stage_enabled 5; then
    [ "${vocoder_model}" = griffin_lim ] || require "${vocoder_model}" "stage 4 (vocoder training)"
    for x in ${test_sets}; do synthesise_set "${x}"; done
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
    run_logged exp/score python -m local_models.bin.jdit_score --systems ${systems} --sets ${test_sets} \
        --gt-mel-rows gt_mel "gt_mel_${alt_name}" --results-md "${results_md}" \
        --corpus "$(. ./db.sh; [ -n "${KSS}" ] && echo "KSS (${KSS})" || echo "espeak-ng Korean mini corpus")"
fi

if stage_enabled 7; then
    for s in ${systems}; do
        log "Stage 7: pack exp/tts_${s} -> exp/tts_${s}/packed/model.tar.gz (log: exp/tts_${s}/packed/run.sh)"
        pack_system jdit "tts_${s}"
    done
fi
log "Done (stages ${stage}-${stop_stage})"
