#!/usr/bin/env bash
# TC-STAR Spanish (paper 000, Pascual et al.): SALAD vs MUSA-RNN acoustic models, forced and predicted durations,
# one model set per speaker: TC-STAR via db.sh, else the espeak-ng Spanish mini corpus (male M1 + female F1).
# The stages are local_models/salad/stages.sh (shared by every corpus this model runs on); `./run.sh --help`
# lists them and every option.
# Usage: ./run.sh [--stage N] [--stop-stage M] [options]
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh
. "${MAIN_ROOT}/local_models/salad/stages.sh"   # the stages and their default options

# this corpus's settings (override a stage default; corpus-only options such as the mini corpus's size)
speakers="M1 F1"
train_config_suffix=_tiny  # the mini corpus's size (a real TC-STAR run: --train_config_suffix "", the paper's)
corpus=$(corpus_name TCSTAR tcstar)  # tcstar when db.sh points at TC-STAR, else mini
mini_utts=160           # mini corpus: utterances per speaker (local/data.sh)
. parse_options.sh

local_data_opts="--mini-utts ${mini_utts} ${local_data_opts}"
run_stages
