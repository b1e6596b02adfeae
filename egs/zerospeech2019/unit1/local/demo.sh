#!/usr/bin/env bash
# Demo of egs/zerospeech2019/unit1 (run from the recipe dir: bash local/demo.sh): the whole recipe at a quick size
# (a 1.4-minute espeak-ng mini corpus, one smoke-size Transformer VQ-VAE and its codebook inverter, stages 1-10 incl.
# pack), then a FRESH utterance no training set holds (espeak-ng's British English voice en-gb+m3 and a sentence of
# its own, at 22.05 kHz; the corpus is American English voices speaking generated word strings) through the packed
# models alone: speech-to-units (units + bitrate), then units-to-speech in the target voice V001
# -> exp/demo/{fresh.wav,fresh.units,fresh_V001.wav,summary.md}. Options go to run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. ./path.sh

system=trf_mfcc_k128
vqvae=exp/${system}/packed/model.tar.gz
inverter=exp/inverter_${system}/packed/model.tar.gz
seconds() { awk -v a="$1" -v b="${EPOCHREALTIME}" 'BEGIN { printf "%.2f", b - a }'; }

start=${EPOCHREALTIME}
./run.sh --unit-min 0.6 --voice-min 0.4 --test-min 0.4 --dev-min 0.2 --dev-set "" --train-config-suffix _smoke --systems "${system}" \
    --inverter-system "${system}" --griffin-lim-iters 32 --abx-reference false \
    --results-md exp/demo/RESULTS.md "$@"
run_s=$(seconds "${start}")

mkdir -p exp/demo
voice=$(python -m local_models.bin.vqvae_demo fresh exp/demo/fresh.wav)
log "demo: speech-to-units exp/demo/fresh.wav --model ${vqvae} -o exp/demo/fresh.units"
t0=${EPOCHREALTIME}
python -m local_models.bin.speech_to_units exp/demo/fresh.wav --model "${vqvae}" -o exp/demo/fresh.units
s2u_s=$(seconds "${t0}")
log "demo: units-to-speech exp/demo/fresh.units --model ${inverter} --speaker V001 -o exp/demo/fresh_V001.wav"
t0=${EPOCHREALTIME}
python -m local_models.bin.units_to_speech exp/demo/fresh.units --model "${inverter}" --speaker V001 \
    -o exp/demo/fresh_V001.wav
u2s_s=$(seconds "${t0}")
python -m local_models.bin.vqvae_demo summary --input exp/demo/fresh.wav --voice "${voice}" \
    --units exp/demo/fresh.units --wav exp/demo/fresh_V001.wav --speaker V001 --vqvae-model "${vqvae}" --inverter-model "${inverter}" \
    --s2u-seconds "${s2u_s}" --u2s-seconds "${u2s_s}" --run-seconds "${run_s}" --out exp/demo/summary.md
log "demo: exp/demo/summary.md"
