#!/usr/bin/env bash
# TEMPLATE recipe: the shape every egs/<corpus>/<task>/run.sh follows (no model; it shows the stages).
# Stages: 1 data (real corpus via db.sh, else espeak-ng mini corpus)  2 features (log-mel, nj jobs)
#         3 score (corpus statistics -> exp/results.json, RESULTS.md)
# Usage: ./run.sh [--stage N] [--stop-stage M] [--nj J] [--test-sets "test ..."]
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh

stage=1
stop_stage=3
nj=2
train_set=train
test_sets=test
seed=0
. parse_options.sh

if stage_enabled 1; then
    log "Stage 1: data dirs -> data/${train_set} data/{${test_sets// /,}}"
    local/data.sh --seed "${seed}" --nj "${nj}"
    for x in ${train_set} ${test_sets}; do
        validate_data_dir --no-feats "data/${x}"
    done
fi

if stage_enabled 2; then
    log "Stage 2: log-mel features -> dump/<set>/feats.*.{ark,scp}, data/<set>/feats.scp"
    for x in ${train_set} ${test_sets}; do
        require "data/${x}/wav.scp" "stage 1 (data)"
        validate_data_dir --no-feats "data/${x}"
        make_feats --nj "${nj}" "data/${x}" "dump/${x}" $(cat conf/feats.conf)
        cp "dump/${x}/feats.scp" "data/${x}/feats.scp.tmp" && mv "data/${x}/feats.scp.tmp" "data/${x}/feats.scp"
        cp "dump/${x}/utt2num_frames" "data/${x}/utt2num_frames"
        validate_data_dir "data/${x}"
    done
fi

if stage_enabled 3; then
    log "Stage 3: scoring -> exp/results.json, RESULTS.md"
    for x in ${train_set} ${test_sets}; do require "data/${x}/feats.scp" "stage 2 (features)"; done
    run_logged exp/corpus_stats python local/corpus_stats.py --sets ${train_set} ${test_sets}
fi
log "Done (stages ${stage}-${stop_stage})"
