#!/usr/bin/env bash
# Fearless Steps SAD (paper 004, Heitkaemper et al.): statistical and neural speech activity detection on FS02 (via
# db.sh), else the Apollo-like espeak-ng mini corpus with music / tones / noise events; eval_ood = held-out set of a
# different make, train_aug = train + augmented copies (MUSAN / RIRS_NOISES via db.sh). The stages are
# local_models/sad/stages.sh (shared by every corpus this model runs on); `./run.sh --help` lists them and every option.
# Usage: ./run.sh [--stage N] [--stop-stage M] [options]
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh
. "${MAIN_ROOT}/local_models/sad/stages.sh"   # the stages and their default options
# this corpus's settings (override a stage default; corpus-only options: the mini corpus's sizes)
test_sets="dev eval eval_ood"  # eval_ood: held-out set of a different make (stage 1); sets absent from data/ skipped
optional_sets=eval_ood  # skipped when data/ lacks it (--eval-ood-min 0)
train_config_suffix=_tiny  # conf/tuning/train_<model>${suffix}.yaml: "" = paper size, _tiny = mini corpus, _smoke = tests
aug_copies=1        # augmented copies per training recording (0: train on ${train_set} as it is)
corpus=$(corpus_name FEARLESS_STEPS fs02)  # the report's corpus: fs02 when db.sh sets FEARLESS_STEPS, else mini
results_md=RESULTS.md  # stage 8's report (the demo writes exp/demo/RESULTS.md: the committed one stays)
train_min=30        # mini corpus size (minutes of audio per split)
dev_min=10
eval_min=10
eval_ood_min=10     # 0: no eval_ood
data_args=""        # extra local/data.sh options, e.g. "--nonspeech-scale 0.2"
. parse_options.sh
local_data_opts="--train-min ${train_min} --dev-min ${dev_min} --eval-min ${eval_min} --seed ${seed} \
    --eval-ood-min ${eval_ood_min} --aug-copies ${aug_copies} ${data_args} ${local_data_opts}"
run_stages
