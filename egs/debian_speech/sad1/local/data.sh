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

rm -rf data/train data/dev data/eval  # no table or stream of an earlier run survives
for split in train dev eval; do
    minutes_var="${split}_min"
    log "Building ${split} (${!minutes_var} min, seed ${seed})"
    rm -rf "downloads/real/wav_${split}"
    check=()  # the sealed set, at its committed settings (10 min, seed 0), must be the fingerprinted one
    if [ "${split}" = eval ]; then check=(--expect-sha256 conf/eval.sha256); fi
    python local/make_real_corpus.py --split "${split}" --minutes "${!minutes_var}" --seed "${seed}" \
        --work-dir downloads/real "${check[@]}" "downloads/real/wav_${split}" "data/${split}"
done
