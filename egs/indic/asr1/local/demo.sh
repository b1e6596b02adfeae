#!/usr/bin/env bash
# Demo of egs/indic/asr1 (from the recipe dir: bash local/demo.sh): run.sh at a quick size (English and Hindi mini
# corpus, smoke-size models, the multi-softmax LID system only, trained afresh: --resume false; stages 1-8, the pack
# stage included; its report goes to exp/RESULTS.md, the committed RESULTS.md stays), then a fresh Hindi utterance
# (local/demo.py input: a sentence no data dir holds, a voice outside the corpus' voices, 22.05 kHz) through
# `python -m local_models.bin.speech_to_text` with no language given. Writes exp/demo/{input_hi.wav,input.json,
# output.txt,output_nbest.txt,summary.md}. Options go to run.sh (e.g. --train_args "--resume false --max_epoch 8").
set -euo pipefail
cd "$(dirname "$0")/.."
. ./path.sh
out=exp/demo
model=exp/multisoftmax_lid/packed/model.tar.gz
start=$(date +%s)
INDIC="" ./run.sh --langs "en hi" --mini-train-min "en=0.6 hi=0.4" --mini-dev-min 0.2 --mini-test-min 0.2 \
    --mini-train-spk 4 --mini-dev-spk 2 --systems multisoftmax_lid --finetune "" --train-config-suffix _smoke \
    --train_args "--resume false" --switch-off-grid "inf:inf 3:0.5" --switch_off 3:0.5 --results_md exp/RESULTS.md "$@"
rm -rf "${out}"
mkdir -p "${out}"
echo "$(( $(date +%s) - start ))" > "${out}/run_s"
log "demo: run.sh took $(cat "${out}/run_s") s"
python local/demo.py input "${out}"
t0=${EPOCHREALTIME}
python -m local_models.bin.speech_to_text "${out}/input_hi.wav" --model "${model}" --output "${out}/output.txt"
t1=${EPOCHREALTIME}
awk -v a="${t0}" -v b="${t1}" 'BEGIN { printf "%.2f\n", b - a }' > "${out}/time_s"
python -m local_models.bin.speech_to_text "${out}/input_hi.wav" --model "${model}" --nbest 3 \
    --output "${out}/output_nbest.txt"
python local/demo.py summary "${out}"
log "demo: done in $(( $(date +%s) - start )) s: ${out}/summary.md"
