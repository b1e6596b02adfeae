#!/usr/bin/env bash
# ZeroSpeech 2019 unit1 (paper 003, Tjandra et al.): Transformer VQ-VAE unit discovery + codebook inverter, on
# ZeroSpeech 2019 English (db.sh ZEROSPEECH2019), else on the espeak-ng English mini corpus (local/data.sh).
# The stages are local_models/vqvae/stages.sh (shared by every corpus this model runs on); `./run.sh --help` lists
# them and every option.
# Usage: ./run.sh [--stage N] [--stop-stage M] [options]
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh
. "${MAIN_ROOT}/local_models/vqvae/stages.sh"   # the stages and their default options
# this corpus's settings (override a stage default; corpus-only options: the mini corpus's sizes)
corpus=$(corpus_name ZEROSPEECH2019 zs2019)  # zs2019 when db.sh points at the corpus, else mini
unit_min=12   # mini corpus size (minutes)
voice_min=5
test_min=3
abx_item=""          # ZeroSpeech 2019: the evaluation package's ABXpy .item file of english/test (stage 6's ABX)
bitrate_filelist=""  # ZeroSpeech 2019: the evaluation package's bitrate_filelist.txt (default: found in the corpus)
. parse_options.sh
local_data_opts="--unit-min ${unit_min} --voice-min ${voice_min} --test-min ${test_min} --seed ${seed} --nj ${nj} \
${abx_item:+--abx-item $(realpath "${abx_item}")} ${bitrate_filelist:+--bitrate-filelist $(realpath "${bitrate_filelist}")} \
${local_data_opts}"  # local/data.sh's options
run_stages
