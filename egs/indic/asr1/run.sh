#!/usr/bin/env bash
# Indian-language ASR (multi-softmax RNN-T, Joshi et al., Interspeech 2021; paper 001): En-IN, Hi-IN, Ta-IN,
# Gu-IN in native scripts, from db.sh INDIC (MUCS 2021 as distributed: --langs "gu hi mr or ta te"; or
# per-language Kaldi dirs) or the espeak-ng mini corpus (en, hi large; ta, gu small, as in the paper's Table 1). The stages are local_models/multisoftmax/stages.sh (shared by every
# corpus this model runs on); `./run.sh --help` lists them and every option.
# Usage: ./run.sh [--stage N] [--stop-stage M] [--nj J] [--langs "en hi ta gu"] [--train_config_suffix _tiny]
#        mini corpus size: [--mini-train-min "en=24 hi=24 ta=8 gu=8"] [--mini-dev-min 1] [--mini-test-min 1]
#                          [--mini-train-spk 24] [--mini-dev-spk 4]
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh
. "${MAIN_ROOT}/local_models/multisoftmax/stages.sh"   # the stages and their default options
# this corpus's settings
corpus=$(corpus_name INDIC indic)      # in the report and model cards: indic (db.sh INDIC set), else mini
train_config_suffix=_tiny              # conf/tuning/train${suffix}.yaml: "" paper size, _tiny mini corpus, _smoke tests
mini_train_min="en=24 hi=24 ta=8 gu=8"   # mini corpus: training minutes per language
mini_dev_min=1                         # mini corpus: dev minutes per language
mini_test_min=1                        # mini corpus: test minutes per language
mini_train_spk=24                      # mini corpus: training / dev voices per language
mini_dev_spk=4
sample_rate=lowest                     # INDIC: one rate for every language (lowest: the set's lowest, e.g. MUCS 8 kHz)
dev_percent=5                          # INDIC in the MUCS layout: dev carved from train (local/prepare_mucs.py)
. parse_options.sh
# stage 1: local/data.sh's options (minutes as en=24,hi=24,...: one word each)
local_data_opts="--train-min ${mini_train_min// /,} --dev-min ${mini_dev_min} --test-min ${mini_test_min}
    --train-spk ${mini_train_spk} --dev-spk ${mini_dev_spk} --seed ${seed} --nj ${nj}
    --sample-rate ${sample_rate} --dev-percent ${dev_percent} ${local_data_opts}"
run_stages
