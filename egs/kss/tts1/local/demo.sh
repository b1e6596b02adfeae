#!/usr/bin/env bash
# Demo of egs/kss/tts1 (run from the recipe dir: bash local/demo.sh): the whole recipe at its quick size (12-utterance
# espeak-ng mini corpus, one epoch of JDI-T, 2 Parallel WaveGAN steps, stages 1-7 incl. pack; the baselines are left
# out for time: add --systems "jdit tacotron2 transformer fastspeech"), then a NEW Korean sentence (a number and
# punctuation, in no training / test / out-of-domain text: jdit_demo checks) spoken by the packed JDI-T through the
# text-to-speech command -> exp/demo/{jdit.wav,input.txt,summary.md}. One epoch speaks noise-like babble; the point
# is the path from typed text to a wav. Options go to run.sh (e.g. bash local/demo.sh --train-args "--max_epoch 40").
set -euo pipefail
cd "$(dirname "$0")/.."
. ./path.sh

text="내일 오후 3시에 도서관 앞에서 만나요, 늦지 마세요!"
model=exp/tts_jdit/packed/model.tar.gz

./run.sh --mini-utts 12 --test-sets test --systems jdit --train-args "--max_epoch 1 --batch_size 4" --pwg-max-steps 2 \
    --speed-benchmark false --results-md exp/RESULTS.md "$@"

mkdir -p exp/demo
printf '%s\n' "${text}" > exp/demo/input.txt
log "demo: text-to-speech --model ${model} --text \"${text}\" -o exp/demo/jdit.wav"
start=${EPOCHREALTIME}
python -m local_models.bin.text_to_speech --model "${model}" --text "${text}" -o exp/demo/jdit.wav
end=${EPOCHREALTIME}
python -m local_models.bin.jdit_demo --model "${model}" --text "${text}" --wav exp/demo/jdit.wav \
    --cli-seconds "$(awk -v a="${start}" -v b="${end}" 'BEGIN { print b - a }')" --out exp/demo/summary.md
log "demo: exp/demo/summary.md"
