#!/usr/bin/env bash
# Write data/{train,dev,eval,eval_ood} and data/train_aug: the FS02 corpus when db.sh sets FEARLESS_STEPS, else the
# mini corpus; the built-in non-speech set in two makes (downloads/nonspeech/{train,eval}: the mini corpus's events and
# the training augmentation use the train make, eval_ood only the eval make); eval_ood = held-out set of a different
# make (mini: other accents, other channel; FS02: its eval with the eval make's non-speech mixed in, when eval has a
# reference: the release's Eval has none and is decode-only, local/prepare_fs02.py); train_aug = train
# plus ${aug_copies} augmented copy per recording (MUSAN / RIRS_NOISES when db.sh sets them).
set -euo pipefail
. ./path.sh
. ./db.sh
train_min=30     # mini corpus size in minutes of audio
dev_min=10
eval_min=10
eval_ood_min=10  # mini corpus's eval_ood (0: none)
stream_min=5     # length of one mini-corpus stream (FS02 streams: 30 min)
aug_copies=1     # augmented copies of each training recording (0: no data/train_aug)
nonspeech_scale=1.0  # size of the built-in non-speech set (tests: smaller)
events=true      # mini corpus: music / tones / noises / babble events and channel effects (false: the plain corpus)
seed=0
. parse_options.sh

[[ "${aug_copies}" =~ ^[0-9]+$ ]] || die "--aug-copies '${aug_copies}' is not a number of copies (0, 1, 2, ...)"
rm -rf data/train data/dev data/eval data/eval_ood data/train_aug  # no table of an earlier corpus survives
# the built-in set (Debian's sound packages + generated audio), when anything below uses it
need_set=false
{ [ "${events}" = true ] && [ -z "${FEARLESS_STEPS}" ]; } && need_set=true
{ [ "${aug_copies}" -gt 0 ] && [ -z "${MUSAN}" ]; } && need_set=true
awk -v m="${eval_ood_min}" 'BEGIN { exit !(m > 0) }' && need_set=true
if [ "${need_set}" = true ]; then
    for make in train eval; do
        python local/make_nonspeech_set.py --make "${make}" --seed "${seed}" --scale "${nonspeech_scale}" \
            "downloads/nonspeech/${make}"
    done
fi
if [ -n "${FEARLESS_STEPS}" ]; then
    [ -d "${FEARLESS_STEPS}" ] || die "db.sh: FEARLESS_STEPS=${FEARLESS_STEPS} is not a directory"
    log "Reading FS02 at ${FEARLESS_STEPS}"
    python local/prepare_fs02.py "${FEARLESS_STEPS}" data
    if awk -v m="${eval_ood_min}" 'BEGIN { exit !(m > 0) }' && [ -f data/eval/wav.scp ] \
            && { [ -f data/eval/ref.rttm ] || [ -f data/eval/ref_segments ]; }; then
        log "eval_ood: FS02 eval, one copy with each of the eval make's music / tones / noises / babble mixed in"
        python -m local_models.bin.sad_augment --nonspeech downloads/nonspeech/eval --types "music noise babble tones" \
            --copies 4 --copies-only --seed "${seed}" data/eval data/eval_ood downloads/eval_ood
    elif [ -f data/eval/wav.scp ] && [ ! -f data/eval/ref.rttm ] && [ ! -f data/eval/ref_segments ]; then
        log "eval: decode-only (no reference; FS02 did not distribute Eval's): no eval_ood, no eval score row"
    fi
else
    log "Building the Apollo-like mini corpus (${train_min}/${dev_min}/${eval_min}/${eval_ood_min} min, seed ${seed})"
    python local/make_mini_corpus.py --train-min "${train_min}" --dev-min "${dev_min}" --eval-min "${eval_min}" \
        --eval-ood-min "${eval_ood_min}" --stream-min "${stream_min}" --seed "${seed}" \
        $([ "${events}" = true ] && echo --nonspeech downloads/nonspeech/train) \
        $([ "${need_set}" = true ] && echo --ood-nonspeech downloads/nonspeech/eval) downloads/mini/wav data
fi
if [ "${aug_copies}" -gt 0 ]; then
    log "train_aug: train + ${aug_copies} augmented copy per recording (${MUSAN:-built-in set}, ${RIRS_NOISES:-synthetic rooms})"
    python -m local_models.bin.sad_augment --nonspeech "${MUSAN:-downloads/nonspeech/train}" \
        ${RIRS_NOISES:+--rirs "${RIRS_NOISES}"} --copies "${aug_copies}" --seed "${seed}" data/train data/train_aug downloads/aug
fi
