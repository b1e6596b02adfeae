#!/usr/bin/env bash
# Write data/<lang>_{train,dev,test} for every language of --langs, each with utt2lid (`<utt> <lang>`), and
# data/sample_rate (the one rate stage 2 reads every language's audio at). db.sh's INDIC is read in its layout:
#   MUCS 2021 as distributed (<Language>/{train,test}/{audio/*.wav,transcription.txt}; local/prepare_mucs.py:
#     dev carved from train, every language at --sample-rate: the lowest rate of the set by default, with a
#     warning naming each language's rate when they differ), or
#   per-language Kaldi data dirs (<lang>_{train,dev,test}/; local/prepare_indic.py: read at 16 kHz, or
#     --sample-rate N);
# empty INDIC: the espeak-ng mini corpus at 16 kHz (audio in downloads/mini/wav; local/make_mini_corpus.py --help).
# --corpus real: recorded speech from Debian packages (cs nl: Fish Fillets NG; es ca fr: Tux Paint), every language at
#   --real-rate (local/prepare_real.py --help; INDIC is not read).
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
sample_rate=lowest  # real corpus: rate every language is prepared at (lowest: the set's lowest; or Hz)
dev_percent=5   # MUCS: share of each language's train utterances carved out as dev (prepare_mucs.py --help)
corpus=""       # real: the real-speech corpus (local/prepare_real.py); else INDIC or the mini corpus
real_dev=5%     # real: held-out dev / test clips per language (a count or a share), by a hash of the utterance id
real_test=5%
real_rate=16000 # real: the rate every language is read at (Hz)
tuxpaint_root=""        # real: unpacked package trees (default: fetch the pinned .debs; cache $SPEECH_RECIPES_DEBIAN)
fillets_root=""
fillets_voices_root=""
. parse_options.sh

rate_opt=
if [ "${corpus}" = real ]; then
    log "Real-speech corpus (Debian packages; languages: ${langs}), dev ${real_dev}, test ${real_test}, ${real_rate} Hz"
    python local/prepare_real.py --langs "${langs}" --dev "${real_dev}" --test "${real_test}" \
        --sample-rate "${real_rate}" ${tuxpaint_root:+--tuxpaint-root "${tuxpaint_root}"} \
        ${fillets_root:+--fillets-root "${fillets_root}"} \
        ${fillets_voices_root:+--fillets-voices-root "${fillets_voices_root}"} data
    # (no --sample-rate check: every wav.scp entry is a sox pipe with -r ${real_rate}; decoding ~5,000 clips twice
    # would double stage 1's time)
elif [ -n "${INDIC}" ]; then
    [ -d "${INDIC}" ] || die "db.sh: INDIC=${INDIC} is not a directory"
    layout=$(python local/prepare_mucs.py --layout "${INDIC}")
    log "Reading the corpus at ${INDIC} (${layout} layout; languages: ${langs})"
    if [ "${layout}" = mucs ]; then
        python local/prepare_mucs.py --langs "${langs}" --sample-rate "${sample_rate}" \
            --dev-percent "${dev_percent}" "${INDIC}" data
    else
        [ "${sample_rate}" != lowest ] || sample_rate=16000  # rates of wav.scp commands are not known beforehand
        python local/prepare_indic.py --langs "${langs}" "${INDIC}" data
        rm -f data/prepared.json
        echo "${sample_rate}" > data/sample_rate
    fi
else
    log "Mini corpus (espeak-ng), minutes per language: train ${train_min}, dev ${dev_min}, test ${test_min}"
    python local/make_mini_corpus.py --langs "${langs}" --train-min "${train_min}" --dev-min "${dev_min}" \
        --test-min "${test_min}" --train-spk "${train_spk}" --dev-spk "${dev_spk}" --seed "${seed}" --nj "${nj}" \
        downloads/mini data
    rate_opt="--sample-rate 16000"
    rm -f data/prepared.json
    echo 16000 > data/sample_rate
fi
for lang in ${langs}; do
    for part in train dev test; do
        validate_data_dir --no-feats ${rate_opt} "data/${lang}_${part}"
    done
done
log "Every language is prepared at $(cat data/sample_rate) Hz (data/sample_rate; stage 2 reads the audio at it)"
