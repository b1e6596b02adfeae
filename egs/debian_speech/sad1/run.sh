#!/usr/bin/env bash
# Real-recording SAD (paper 004's systems, Heitkaemper et al., on human speech): streams of real speech from Debian
# packages (game actors, picture-book readers; 8 languages) in real music and sound effects, labels exact by
# construction; train / dev / eval are three disjoint makes, eval is sealed (local/make_real_corpus.py --help).
# The stages are local_models/sad/stages.sh (shared by every corpus this model runs on); `./run.sh --help` lists
# them and every option.
# Usage: ./run.sh [--stage N] [--stop-stage M] [options]
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh
. "${MAIN_ROOT}/local_models/sad/stages.sh"   # the stages and their default options
# this corpus's settings (override a stage default; corpus-only options: the split sizes)
test_sets="dev eval"
train_config_suffix=_tiny  # conf/tuning/train_<model>${suffix}.yaml: "" = paper size, _tiny = 2 CPU cores
seg_grid=""                # the Fig. 7 grid is the FS02 recipe's study
corpus=real
recipe_name=debian_speech/sad1  # results.json and the report
train_min=60        # minutes of streams per split (dev, eval: 10)
dev_min=10
eval_min=10
. parse_options.sh
local_data_opts="--train-min ${train_min} --dev-min ${dev_min} --eval-min ${eval_min} --seed ${seed} ${local_data_opts}"
run_stages
