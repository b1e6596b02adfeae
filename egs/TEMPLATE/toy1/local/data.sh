#!/usr/bin/env bash
# Write data/{train,test}: from the real corpus when db.sh sets TOY, else synthesise the mini corpus.
set -euo pipefail
. ./path.sh
. ./db.sh
num_spk=3        # mini corpus: training speakers (the test speaker is an extra, unseen one)
utts_per_spk=4
seed=0
nj=2
. parse_options.sh

if [ -n "${TOY}" ]; then
    log "Reading the real corpus at ${TOY}"
    python local/prepare_real.py "${TOY}" data
else
    log "Synthesising the mini corpus (espeak-ng, ${num_spk}+1 speakers, seed ${seed})"
    python -m local_models.bin.synth_corpus --lang en-us --num-spk $((num_spk + 1)) \
        --utts-per-spk "${utts_per_spk}" --seed "${seed}" --nj "${nj}" downloads/mini/wav data/all
    # the last speaker is held out for test: disjoint voices, as every recipe's test set should be
    spk_test=$(tail -n 1 data/all/spk2utt | cut -d' ' -f1)
    echo "${spk_test}" > data/all/test.spk
    subset_data_dir --spk-list data/all/test.spk data/all data/test
    cut -d' ' -f1 data/all/spk2utt | grep -vxF "${spk_test}" > data/all/train.spk
    subset_data_dir --spk-list data/all/train.spk data/all data/train
fi
