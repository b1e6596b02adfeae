#!/usr/bin/env bash
# KSS Korean single-speaker TTS (paper 002, Lim et al.): JDI-T vs ESPnet Tacotron2 / Transformer / FastSpeech.
# The stages are local_models/jdit/stages.sh (shared by every corpus this model runs on); `./run.sh --help` lists
# them and every option. Stage 1 (local/data.sh): KSS via db.sh (expanded text, 22.05 kHz through sox pipes; the
# last 250 utterances held out, 200 dev + 50 test), else the espeak-ng Korean mini corpus with true phone times
# (data/<set>/phones.ctm); data/ood: out-of-domain sentences for the attention-robustness test (KSS: text only).
# Usage: ./run.sh [--stage N] [--stop-stage M] [options]
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh
# shellcheck source=../../../local_models/jdit/stages.sh
. "${MAIN_ROOT}/local_models/jdit/stages.sh"   # the stages and their default options

# this corpus's settings (override a stage default; corpus-only options of local/data.sh)
train_set=train
valid_set=dev
test_sets="test ood"
kss_dev=200             # KSS: held-out utterances at the end of the transcript (paper: 200 valid + 50 test)
kss_test=50
mini_utts=300           # mini corpus size (db.sh empty); the last 10 % are held out (dev 5 %, test 5 %)
results_md=RESULTS.md   # stage 6's report (local/demo.sh writes exp/RESULTS.md: the committed one stays)
corpus=$(. ./db.sh; [ -n "${KSS}" ] && echo "KSS (${KSS})" || echo "espeak-ng Korean mini corpus")  # report's name
# shellcheck source=../../../utils/parse_options.sh
. parse_options.sh

local_data_opts="--kss-dev ${kss_dev} --kss-test ${kss_test} --mini-utts ${mini_utts} --seed ${seed} --nj ${nj} ${local_data_opts}"
run_stages
