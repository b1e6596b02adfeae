#!/usr/bin/env bash
# Fearless Steps SAD (paper 004, Heitkaemper et al.): statistical and neural speech activity detection.
# Stages: 1 data (FS02 via db.sh, else the Apollo-like espeak-ng mini corpus with music / tones / noise events; the
#           held-out eval_ood of a different make; train_aug = train + augmented copies, MUSAN / RIRS_NOISES via db.sh)
#         2 features (STFT magnitude: FFT 512, 50 ms window, 10 ms shift -> dump/, for the neural systems)
#         3 chunks (random 4 s training / validation chunks of features + frame labels -> dump/<set>/chunks)
#         4 train (the neural nets cnn1d / rnn / seg_rnn needed by ${systems}, ESPnet2 trainer -> exp/<model>,
#           config conf/tuning/train_<model>${train_config_suffix}.yaml; rerunning resumes from the checkpoint)
#         5 decode (frame scores of every system on dev + test sets, with real-time factors)
#         6 segments (threshold tuned on dev -> segments + hyp.rttm of every set; majority_vote last, or in stage 7)
#         7 segment-RNN (L, S) grid of paper Fig. 7 (${seg_grid}; one seg_rnn per point -> exp/seg_grid/, dev DCF
#           at each point's best threshold, needs a dev reference; a dev-best point not exp/seg_rnn's: seg_rnn_devbest;
#           then majority_vote, >= 2 of cnn_hmm, rnn_hmm and that seg RNN)
#         8 score (DCF / P / R / F1 with and without collar -> exp/results.json, ${results_md}, plots)
#         9 pack (stat_sad + the neural systems: net, tuned threshold, card -> exp/<system>/packed/model.tar.gz)
# Any data dir with a wav.scp can be decoded: ./run.sh --stage 5 --test-sets "my_set" (data/my_set).
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh

stage=1
stop_stage=9
nj=2
train_set=train
dev_set=dev
test_sets="dev eval eval_ood"  # eval_ood: held-out set of a different make (stage 1); sets absent from data/ skipped
systems="energy webrtcvad silero_vad stat_sad cnn_hmm cnn_median rnn_hmm rnn_median seg_rnn majority_vote"
train_config_suffix=_tiny  # conf/tuning/train_<model>${suffix}.yaml: "" = paper size, _tiny = mini corpus, _smoke = tests
chunks_per_frame_span=1.5  # training chunks per recording = frames / 400 x this
train_min=30        # mini corpus size (minutes of audio per split)
dev_min=10
eval_min=10
eval_ood_min=10     # 0: no eval_ood
aug_copies=1        # augmented copies per training recording (0: train on ${train_set} as it is)
data_args=""        # extra local/data.sh options, e.g. "--nonspeech-scale 0.2"
seed=0
# paper Fig. 7 grid, "L:S" in 10 ms frames (S <= L; paper: L 50 ms-1 s, S 10-150 ms, e.g. "5:1 10:1 50:5 100:15"); ""=skip
seg_grid="5:1 25:1 5:5 25:5"
ngpu=$(default_ngpu)    # GPUs per training job (0: CPU; > 1: ESPnet2's DDP); default 1 when nvidia-smi lists a GPU
gpu_inference=false     # decode the neural systems on a GPU (through cuda_cmd)
inference_nj=1          # decoding jobs at a time (1: the real-time factors are measured one process at a time)
inference_model=valid.loss.best.pth  # checkpoint that decodes: valid.loss.best.pth, valid.loss.ave.pth, latest.pth
train_args=""           # extra ESPnet2 training options, verbatim (they win), e.g. "--max_epoch 1"
inference_args=""       # extra sad_decode options, verbatim
results_md=RESULTS.md   # stage 8's report (the demo writes exp/demo/RESULTS.md: the committed one stays)
. parse_options.sh
setup_devices
. local/lib.sh          # uniq_words, has_ref, nets_of, stft_feats, train_model, decode, segment_system, ...

check_seg_grid
corpus=$(corpus_name FEARLESS_STEPS fs02)
models=$(nets_of "${systems}")  # the nets behind the neural systems
[[ "${aug_copies}" =~ ^[0-9]+$ ]] || die "--aug-copies '${aug_copies}' is not a number of copies (0, 1, 2, ...)"
train_data=${train_set}; [ "${aug_copies}" -gt 0 ] && train_data=${train_set}_aug  # what the nets train on
all_sets=$(present_sets "${dev_set} ${test_sets}")

if stage_enabled 1; then
    log "Stage 1: data -> data/{${train_set},${dev_set},eval} (corpus: ${corpus})"
    make_data  # local/data.sh with the corpus options; every set it wrote validated
    all_sets=$(present_sets "${dev_set} ${test_sets}")
fi

if stage_enabled 2; then
    log "Stage 2: STFT magnitude features -> dump/<set>/feats.*.{ark,scp}"
    for x in ${train_data} ${all_sets}; do stft_feats "${x}"; done
fi

if stage_enabled 3 && [ -n "${models}" ]; then
    log "Stage 3: random 4 s chunks (features + frame labels) -> dump/{${train_data},${dev_set}}/chunks"
    for x in ${train_data} ${dev_set}; do
        require "dump/${x}/feats.scp" "stage 2 (features)"
        span=${chunks_per_frame_span}
        [ "${x}" = "${dev_set}" ] && span=0.5  # validation loss only: fewer chunks
        python -m local_models.bin.sad_make_chunks --seed "${seed}" --chunks-per-frame-span "${span}" \
            "dump/${x}/feats.scp" "data/${x}" "dump/${x}/chunks"
    done
fi

if stage_enabled 4 && [ -n "${models}" ]; then
    log "Stage 4: train ${models}-> exp/<model> (conf/tuning/train_<model>${train_config_suffix}.yaml)"
    for m in ${models}; do
        conf=conf/tuning/train_${m}${train_config_suffix}.yaml
        require "${conf}" "a training config"
        for x in ${train_data} ${dev_set}; do require "dump/${x}/chunks/feats_shape" "stage 3 (chunks)"; done
        train_pool train_model "${conf}" "exp/${m}"  # --nj at a time on the CPU (one thread each), 1 on a local GPU
    done
    pool_wait
fi

if stage_enabled 5; then
    log "Stage 5: decode ${systems} on ${all_sets}-> exp/<system>/decode_<set>/scores.{ark,scp}, rtf.json"
    for x in ${all_sets}; do
        require "data/${x}/wav.scp" "stage 1 (data) or your own data dir with a wav.scp"
        validate_data_dir --no-text "data/${x}"
    done
    for s in ${systems}; do
        [ "${s}" = majority_vote ] && continue  # decoded in stage 6 or 7, once its members' thresholds exist
        # one job per system over every set: RTFs are measured on one thread, one process at a time
        # shellcheck disable=SC2086  # word list
        decode_pool decode "${s}" "" "exp/${s}" ${all_sets}
    done
    pool_wait
fi

if stage_enabled 6; then
    log "Stage 6: thresholds tuned on ${dev_set} -> exp/<system>/threshold; segments + hyp.rttm per set"
    for s in ${systems}; do [ "${s}" = majority_vote ] || segment_system "${s}"; done
    # an earlier stage 7's dev-best seg RNN, still Table 2's row: re-segmented here when stage 7 will not redo it
    if ! grid_runs && [ -f exp/seg_rnn_devbest/model_dir ] && [[ " ${systems} " == *" seg_rnn "* ]] && has_ref "${dev_set}"; then
        segment_devbest
    fi
    grid_runs || vote_system  # last (its members' thresholds); after stage 7's dev-best seg RNN when the grid runs
fi

if stage_enabled 7 && [ -n "${seg_grid}" ] && [[ " ${systems} " == *" seg_rnn "* ]]; then
    if ! has_ref "${dev_set}"; then
        log "Stage 7: skipped, no reference for ${dev_set} to score the (L, S) grid on"
    else
        log "Stage 7: segment-RNN grid (L:S frames) ${seg_grid} -> exp/seg_grid/, exp/images/seg_rnn_grid.png"
        require "exp/seg_rnn/threshold.sweep.json" "stage 6 (segments)"
        train_seg_grid  # sets grid_dirs
        ref=""
        [ -f exp/cnn_hmm/threshold.sweep.json ] && ref="--reference exp/cnn_hmm/threshold.sweep.json"
        python -m local_models.bin.sad_seg_grid ${ref} ${grid_dirs}
        devbest_system  # Table 2's seg RNN row: the dev-best (L, S), as the paper chose it (local/lib.sh)
        vote_system  # the majority vote over CNN + HMM, RNN + HMM and that seg RNN
    fi
fi

if stage_enabled 8; then
    log "Stage 8: scoring -> exp/results.json, ${results_md}, exp/images/"
    scored=""
    for x in ${all_sets}; do has_ref "${x}" && scored+=" ${x}"; done
    if [ -z "${scored}" ]; then
        log "no reference in ${all_sets}: detected speech is in exp/<system>/decode_<set>/{segments,hyp.rttm}"
    else
        score_systems=${systems}
        [ -f exp/seg_rnn_devbest/model_dir ] && score_systems+=" seg_rnn_devbest"  # stage 7's dev-best (L, S)
        for s in ${score_systems}; do for x in ${scored}; do require "exp/${s}/decode_${x}/hyp.rttm" "stage 6 (segments)"; done; done
        SAD_CORPUS=${corpus} run_logged exp/score \
            python -m local_models.bin.sad_score --systems ${score_systems} --sets ${scored} --dev "${dev_set}" --eval eval \
                --results-md "${results_md}"
    fi
fi
if stage_enabled 9; then
    log "Stage 9: pack ${systems}-> exp/<system>/packed/model.tar.gz (the ones a user can run; from ${inference_model})"
    pack_systems
fi
log "Done (stages ${stage}-${stop_stage})"
