#!/usr/bin/env bash
# Demo of egs/tcstar/tts1 (`make demo` runs it; by hand: bash local/demo.sh from the recipe dir).
# 1. run.sh at a quick size in a copy of the recipe, exp/demo/recipe (a real run's exp/ and the committed
#    RESULTS.md stay untouched): the espeak-ng mini corpus (24 utterances, speaker M1), a smoke-size windowed Big
#    SALAD (the paper's model, its fastest variant) plus the duration model (10 epochs: at 2 the SALAD's c0 is
#    still far off and its wav clips), decoding, scoring and the pack stage (7). The MUSA-RNN baseline too:
#    bash local/demo.sh --systems "small_rnn big_salad_win" (about 100 s more).
# 2. A Spanish sentence no training text contains (checked below: the mini corpus draws its sentences from the
#    parliamentary / news grammar of local/sentences_es.py, which has no weather words) through each packed model
#    with the text-to-speech command, from the archive alone.
# 3. exp/demo/summary.md: the text, the wavs (duration, peak, RMS), the command's wall time and the synthesis time
#    and real-time factor on one thread. Extra options go to run.sh (e.g. --train_config_suffix _tiny).
set -euo pipefail
cd "$(dirname "$0")/.."
. ./path.sh

text="Mañana por la tarde lloverá en Valencia y la temperatura bajará hasta los 12 grados."
speaker=M1
systems=big_salad_win
work=exp/demo/recipe
rm -rf "${work}"
mkdir -p "${work}"
cp -r run.sh path.sh cmd.sh db.sh conf local "${work}/"
t0=$(date +%s)
(cd "${work}" && MAIN_ROOT=${MAIN_ROOT} TCSTAR="" ./run.sh --speakers "${speaker}" --mini_utts 24 \
    --systems "${systems}" --train_config_suffix _smoke --streams 8 --window 40 --num_wavs 2 \
    --train_args "--max_epoch 10" "$@")
for a in "$@"; do  # the systems run.sh trained, when given
    [ "${prev:-}" = --systems ] && systems=${a}
    prev=${a}
done
run_s=$(( $(date +%s) - t0 ))

for w in lloverá valencia temperatura grados; do
    if grep -qiF "${w}" "${work}"/data/*/text; then
        die "demo: '${w}' is in a training text; the demo needs fresh input"
    fi
done
echo "${text}" > exp/demo/input.txt
args=()
for s in ${systems}; do
    archive=${work}/exp/${speaker}/${s}/packed/model.tar.gz
    t1=$(date +%s%N)
    python -m local_models.bin.text_to_speech --model "${archive}" --text "${text}" -o "exp/demo/${s}.wav" --threads 1
    args+=(--system "${s}" "${archive}" "exp/demo/${s}.wav" "$(( ($(date +%s%N) - t1) / 1000000 ))")
done
python local/demo_summary.py --text "${text}" --run-seconds "${run_s}" "${args[@]}" exp/demo/summary.md
log "demo: exp/demo/summary.md"
cat exp/demo/summary.md
