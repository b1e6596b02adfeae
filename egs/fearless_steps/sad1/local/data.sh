#!/usr/bin/env bash
# Write data/{train,dev,eval}: the FS02 corpus when db.sh sets FEARLESS_STEPS, else the mini corpus.
set -euo pipefail
. ./path.sh
. ./db.sh
train_min=30     # mini corpus size in minutes of audio
dev_min=10
eval_min=10
stream_min=5     # length of one mini-corpus stream (FS02 streams: 30 min)
seed=0
. parse_options.sh

if [ -n "${FEARLESS_STEPS}" ]; then
    [ -d "${FEARLESS_STEPS}" ] || die "db.sh: FEARLESS_STEPS=${FEARLESS_STEPS} is not a directory"
    log "Reading FS02 at ${FEARLESS_STEPS}"
    python local/prepare_fs02.py "${FEARLESS_STEPS}" data
else
    log "Building the Apollo-like mini corpus (${train_min}/${dev_min}/${eval_min} min, seed ${seed})"
    python local/make_mini_corpus.py --train-min "${train_min}" --dev-min "${dev_min}" --eval-min "${eval_min}" \
        --stream-min "${stream_min}" --seed "${seed}" downloads/mini/wav data
fi
