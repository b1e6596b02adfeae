#!/usr/bin/env bash
# Write data/<lang>_{train,dev,test} for every language of --langs, each with utt2lid (`<utt> <lang>`):
# the real corpus when db.sh sets INDIC (per-language Kaldi data dirs, see local/prepare_indic.py), else
# the espeak-ng mini corpus (audio in downloads/mini/wav; see local/make_mini_corpus.py --help).
set -euo pipefail
. ./path.sh
. ./db.sh
langs="en hi ta gu"
train_min="en=24 hi=24 ta=8 gu=8"  # mini corpus: training minutes per language (paper Table 1: 2 large, 2 small)
dev_min=1       # mini corpus: minutes of dev speech per language
test_min=1      # mini corpus: minutes of test speech per language (unseen voices)
train_spk=24    # mini corpus: training voices per language (many: LID must not learn the voices)
dev_spk=4       # mini corpus: dev voices per language
seed=0          # mini corpus: voices and sentences
nj=2            # mini corpus: synthesis processes
. parse_options.sh

if [ -n "${INDIC}" ]; then
    [ -d "${INDIC}" ] || die "db.sh: INDIC=${INDIC} is not a directory"
    log "Reading the corpus at ${INDIC} (languages: ${langs})"
    python local/prepare_indic.py --langs "${langs}" "${INDIC}" data
    rate_opt=
else
    log "Mini corpus (espeak-ng), minutes per language: train ${train_min}, dev ${dev_min}, test ${test_min}"
    python local/make_mini_corpus.py --langs "${langs}" --train-min "${train_min}" --dev-min "${dev_min}" \
        --test-min "${test_min}" --train-spk "${train_spk}" --dev-spk "${dev_spk}" --seed "${seed}" --nj "${nj}" \
        downloads/mini data
    rate_opt="--sample-rate 16000"
fi
for lang in ${langs}; do
    for part in train dev test; do
        validate_data_dir --no-feats ${rate_opt} "data/${lang}_${part}"
    done
done
