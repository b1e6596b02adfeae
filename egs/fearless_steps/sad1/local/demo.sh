#!/usr/bin/env bash
# Demo of egs/fearless_steps/sad1 (run from the recipe dir: bash local/demo.sh): the whole recipe at a quick size
# (a 1/1/1-minute mini corpus, the smoke-size 1-D CNN trained 80 steps of batch 8, no Fig. 7 grid; stages 1-9 incl.
# pack; its report goes to exp/demo/RESULTS.md, the committed RESULTS.md stays) for stat_sad and cnn_hmm, then a
# FRESH 45 s recording no stage saw (the mini-corpus synthesiser with another seed: new words, noise and SNR drift;
# eval_ood's accents and the held-out make's music / tones / noises, which no training stream has; 16 kHz) through
# each packed system alone (and at its FA-bounded operating point when it has one): speech-segments --rttm ->
# exp/demo/{fresh.wav,fresh_ref.rttm,<system>[@fa_bounded].rttm,summary.md}. Options go to run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. ./path.sh

systems="stat_sad cnn_hmm"
training="--num_iters_per_epoch 40 --max_epoch 2 --batch_size 8"  # 3 steps (smoke) find no speech
seconds() { awk -v a="$1" -v b="${EPOCHREALTIME}" 'BEGIN { printf "%.2f", b - a }'; }

start=${EPOCHREALTIME}
./run.sh --train-min 1 --dev-min 1 --eval-min 1 --eval-ood-min 1 --train-config-suffix _smoke --seg-grid "" \
    --systems "${systems}" --train-args "${training}" --results-md exp/demo/RESULTS.md "$@"
run_s=$(seconds "${start}")

mkdir -p exp/demo
python local/demo.py fresh --nonspeech downloads/nonspeech/eval exp/demo/fresh.wav exp/demo/fresh_ref.rttm
hyps=()
for s in ${systems}; do
    log "demo: speech-segments --model exp/${s}/packed/model.tar.gz --rttm exp/demo/${s}.rttm exp/demo/fresh.wav"
    t0=${EPOCHREALTIME}
    python -m local_models.bin.speech_segments --model "exp/${s}/packed/model.tar.gz" --rttm "exp/demo/${s}.rttm" \
        exp/demo/fresh.wav
    hyps+=("${s}=exp/demo/${s}.rttm:$(seconds "${t0}")")
    if [ -f "exp/${s}/threshold_fa10" ]; then  # its second operating point (stage 6 found one on the demo's dev)
        log "demo: speech-segments --model exp/${s}/packed/model.tar.gz --operating_point fa_bounded --rttm exp/demo/${s}@fa_bounded.rttm exp/demo/fresh.wav"
        t0=${EPOCHREALTIME}
        python -m local_models.bin.speech_segments --model "exp/${s}/packed/model.tar.gz" --operating_point fa_bounded \
            --rttm "exp/demo/${s}@fa_bounded.rttm" exp/demo/fresh.wav
        hyps+=("${s}@fa_bounded=exp/demo/${s}@fa_bounded.rttm:$(seconds "${t0}")")
    fi
done
python local/demo.py summary --input exp/demo/fresh.wav --ref exp/demo/fresh_ref.rttm --hyp "${hyps[@]}" \
    --nonspeech-note "; music, tones and noises of the held-out make (downloads/nonspeech/eval)" \
    --sizes "1/1/1 min train/dev/eval; the smoke-size 1-D CNN, 80 steps of batch 8" --run-seconds "${run_s}" --out exp/demo/summary.md
log "demo: exp/demo/summary.md"
