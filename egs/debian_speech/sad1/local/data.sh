#!/usr/bin/env bash
# Write data/{train,dev,eval}: the real-recording SAD corpus, each split its own make of Debian packages (fetched
# pinned and sha256-checked into the Debian cache on first use; local/make_real_corpus.py --help).
set -euo pipefail
. ./path.sh
train_min=30
dev_min=10
eval_min=10
seed=0
. parse_options.sh

rm -rf data/train data/dev data/eval  # no table of an earlier run survives
for split in train dev eval; do
    minutes_var="${split}_min"
    log "Building ${split} (${!minutes_var} min, seed ${seed})"
    python local/make_real_corpus.py --split "${split}" --minutes "${!minutes_var}" --seed "${seed}" \
        --work-dir downloads/real "downloads/real/wav_${split}" "data/${split}"
done
