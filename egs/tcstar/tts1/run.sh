#!/usr/bin/env bash
# TC-STAR Spanish (paper 000, Pascual et al.): SALAD vs MUSA-RNN acoustic models, forced and predicted durations.
# Stages: 1 data (TC-STAR via db.sh, else the espeak-ng Spanish mini corpus: male M1 + female F1)
#         2 labels: full-context labels with phone times for every utterance that has none (front end +
#           espeak-ng rendition DTW-aligned to the recording) -> data/<set>/lab.scp
#         3 features: WORLD 43-dim acoustic + question-file linguistic frames, phone vectors + durations
#           (dump/<spk>/<set>), train statistics (dump/<spk>/{stats,dur_stats}.npz), stateful windows
#         4 train every system of ${systems} and the MUSA duration model (LSTM, exp/<spk>/duration) for every
#           speaker (ESPnet2 trainer -> exp/<spk>/<system>; resumes)
#         5 decode the test sets with forced durations (exp/<spk>/<system>/decode_<set>: MCD / F0 RMSE / V/UV,
#           WORLD wavs) and with predicted durations (exp/<spk>/duration/decode_<set>: duration RMSE / r;
#           exp/<spk>/<system>/decode_<set>_pred: DTW-aligned MCD / F0 RMSE / V/UV, wavs)
#         6 score: exp/results.json, RESULTS.md (paper Table 2 shape, predicted durations), F0 histograms (Fig. 2)
#         7 pack every system with its speaker's duration model: exp/<spk>/<system>/packed/model.tar.gz
#           (text-to-speech --model ARCHIVE --text "Hola." -o hola.wav)
# Any data dir with wav.scp + text (lab.scp optional; any sample rate, resampled to 16 kHz) can be decoded and
# scored: ./run.sh --stage 5 --test_sets "my_set" (stage 5 makes its labels and features when stages 2-3 have
# not; after changing its files, rerun from stage 2). Set <spk>_* is decoded by speaker <spk>'s models, any other
# set by every speaker's. Speed (paper Table 3, Fig. 3) is measured by benchmarks/salad_latency.py.
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh

stage=1
stop_stage=7
nj=2
speakers="M1 F1"
# the paper's four models (Table 1) + the windowed-attention Big SALAD
systems="small_rnn small_salad big_rnn big_salad big_salad_win"
test_sets=""            # default: <spk>_test of every speaker
train_config_suffix=_tiny  # conf/tuning/train_<system>${suffix}.yaml: "" paper size, _tiny mini corpus, _smoke tests
mini_utts=160
seed=0
f0_method=dio           # WORLD F0 for the features: dio (fast, clean speech), harvest (robust; real recordings)
streams=32              # stateful training: parallel streams (= batch size) and window length (paper: 32, 120)
window=120
num_wavs=10             # synthesised wavs kept per test set and system (all: -1)
precision=fp32          # decode precision: fp32, bf16 (autocast), int8 (dynamic quantisation)
ngpu=$(default_ngpu)    # GPUs per training job (0: CPU; > 1: ESPnet2's DDP); default 1 when nvidia-smi lists a GPU
gpu_inference=false     # decode on a GPU (through cuda_cmd)
inference_nj=1          # decoding jobs at a time (systems x speakers)
inference_model=valid.mcd.best.pth  # checkpoint that decodes: valid.mcd.best.pth, valid.mcd.ave.pth, latest.pth
train_args=""           # extra ESPnet2 training options, verbatim (they win), e.g. "--max_epoch 1"
inference_args=""       # extra salad_decode options, verbatim
. parse_options.sh
setup_devices

[ -n "${test_sets}" ] || test_sets=$(for s in ${speakers}; do printf '%s_test ' "${s}"; done)
questions=conf/questions_es.hed
corpus=$(corpus_name TCSTAR tcstar)

. local/lib.sh          # models_for, make_labels, test_feats, train_acoustic, train_duration, decode_*

if stage_enabled 1; then
    log "Stage 1: data -> data/<spk>_{train,valid,test}"
    local/data.sh --mini-utts "${mini_utts}" --seed "${seed}" --nj "${nj}" --speakers "${speakers}"
fi

if stage_enabled 2; then
    for spk in ${speakers}; do for x in train valid test; do sets+=" ${spk}_${x}"; done; done
    for x in $(echo "${sets:-} ${test_sets}" | tr ' ' '\n' | awk 'NF && !seen[$0]++'); do
        make_labels "${x}"
    done
fi

if stage_enabled 3; then
    for spk in ${speakers}; do
        d=dump/${spk}
        log "Stage 3: features of ${spk} -> ${d}/{train,valid}, statistics, stateful windows"
        require "data/${spk}_train/lab.scp" "stage 2 (labels)"
        if up_to_date "${d}/train_windows/pos" "data/${spk}_train/lab.scp" "data/${spk}_valid/lab.scp" \
                "${questions}" && [ -f "${d}/dur_stats.npz" ] \
                && [ "$(cat "${d}/train_windows/layout" 2>/dev/null)" = "${streams} ${window} ${f0_method}" ]; then
            log "Stage 3: ${d} is up to date"
            continue
        fi
        python -m local_models.bin.salad_dump feats --questions "${questions}" --f0-method "${f0_method}" \
            --nj "${nj}" "data/${spk}_train" "${d}/train"
        maxdur=$(cat "${d}/train/max_dur_frames")
        python -m local_models.bin.salad_dump feats --questions "${questions}" --f0-method "${f0_method}" \
            --nj "${nj}" --max-dur-frames "${maxdur}" "data/${spk}_valid" "${d}/valid"
        python -m local_models.bin.salad_dump stats --questions "${questions}" --dur-stats "${d}/dur_stats.npz" \
            "${d}/train" "${d}/stats.npz"
        python -m local_models.bin.salad_dump windows --streams "${streams}" --window "${window}" \
            "${d}/train" "${d}/train_windows"
        echo "${streams} ${window} ${f0_method}" > "${d}/train_windows/layout"
    done
    for x in ${test_sets}; do
        for spk in $(models_for "${x}"); do test_feats "${x}" "${spk}"; done
    done
fi

if stage_enabled 4; then
    for spk in ${speakers}; do
        require "dump/${spk}/train_windows/pos" "stage 3 (features)"
        # --nj trainings at a time on the CPU (one thread each), one at a time on a local GPU
        for s in ${systems}; do train_pool train_acoustic "${spk}" "${s}"; done
        train_pool train_duration "${spk}"
    done
    pool_wait
fi

if stage_enabled 5; then
    for x in ${test_sets}; do
        # a data dir that stages 2-3 never saw (your own wav.scp + text): its labels and features now, as they would
        [ -f "data/${x}/lab.scp" ] || make_labels "${x}"
        for spk in $(models_for "${x}"); do
            [ -f "dump/${spk}/${x}/ling.scp" ] || test_feats "${x}" "${spk}"
            decode_durations "${x}" "${spk}"
            for s in ${systems}; do decode_system "${x}" "${spk}" "${s}"; done
        done
    done
    pool_wait
fi

if stage_enabled 6; then
    log "Stage 6: score -> exp/results.json, RESULTS.md, exp/images/"
    python -m local_models.bin.salad_score --speakers "${speakers}" --systems "${systems}" \
        --test-sets "${test_sets}" --corpus "${corpus}" --exp exp --results RESULTS.md
fi

if stage_enabled 7; then
    for spk in ${speakers}; do
        for s in ${systems}; do
            log "Stage 7: pack ${spk}/${s} with ${spk}'s duration model -> exp/${spk}/${s}/packed/model.tar.gz"
            pack_system salad "${spk}/${s}"
        done
    done
fi
