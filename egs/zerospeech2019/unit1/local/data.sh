#!/usr/bin/env bash
# Write data/{train,voice,test}: ZeroSpeech 2019 English when db.sh sets ZEROSPEECH2019, else the
# espeak-ng English mini corpus (audio in downloads/mini/; also data/dev and data/test_voice_ref).
#   train: unit-discovery speakers + target voice (VQ-VAE)   voice: target voice only (inverter)
#   test:  unseen speakers, with bitrate_list and synthesis_list (mini: also phones.ctm, voice_ref.scp)
#   dev:   (mini only) other unseen speakers with phones.ctm: the ABX the recipe's choices are made on
# --corpus real: Flight of the Amazon Queen's dialogue instead (local/prepare_real.py --help: Joe the target voice,
#   four characters held out as test; voice_ref.scp where Joe says a test line too; data/test/abx_na: no phone times)
set -euo pipefail
. ./path.sh
. ./db.sh
unit_min=12     # mini corpus: minutes of unit-discovery speech (8 speakers)
voice_min=5     # mini corpus: minutes of the target voice V001
test_min=3      # mini corpus: minutes of test speech (4 unseen speakers)
dev_min=3       # mini corpus: minutes of dev speech (4 other unseen speakers)
seed=0          # mini corpus: voices and sentences
nj=2            # mini corpus: synthesis processes
bitrate_filelist=""  # ZeroSpeech 2019: the evaluation package's bitrate_filelist.txt (default: looked for in the corpus)
abx_item=""          # ZeroSpeech 2019: the evaluation package's ABXpy .item file of english/test -> data/test/abx.item
corpus=""            # real: Flight of the Amazon Queen (the pinned Debian package); else as db.sh says
fotaq_root=""        # real: an unpacked flight-of-the-amazon-queen tree (default: fetch the pinned package; cache:
                     # $SPEECH_RECIPES_DEBIAN)
test_speakers=fotaq_death,fotaq_klunk,fotaq_chief,fotaq_henry  # real: the characters held out as test (commas)
. parse_options.sh

if [ "${corpus}" = real ]; then
    [ -z "${bitrate_filelist}${abx_item}" ] || die "--bitrate-filelist / --abx-item need ZEROSPEECH2019 (db.sh)"
    log "Reading Flight of the Amazon Queen's dialogue (target voice fotaq_joe; test: ${test_speakers})"
    python local/prepare_real.py --audio-dir downloads/fotaq --test-speakers "${test_speakers}" \
        ${fotaq_root:+--root "${fotaq_root}"} data
    sets="train voice test"; text_opt=--no-text
elif [ -n "${corpus}" ]; then
    die "--corpus ${corpus}: real, or none (ZEROSPEECH2019 from db.sh, else the mini corpus)"
elif [ -n "${ZEROSPEECH2019}" ]; then
    [ -d "${ZEROSPEECH2019}" ] || die "db.sh: ZEROSPEECH2019=${ZEROSPEECH2019} is not a directory"
    log "Reading ZeroSpeech 2019 English at ${ZEROSPEECH2019}"
    opts=()
    [ -z "${bitrate_filelist}" ] || opts+=(--bitrate-filelist "${bitrate_filelist}")
    [ -z "${abx_item}" ] || opts+=(--abx-item "${abx_item}")
    python local/prepare_zs2019.py "${opts[@]}" "${ZEROSPEECH2019}" data
    sets="train voice test"; text_opt=--no-text
else
    [ -z "${bitrate_filelist}${abx_item}" ] || die "--bitrate-filelist / --abx-item need ZEROSPEECH2019 (db.sh)"
    log "Building the English mini corpus (${unit_min}/${voice_min}/${dev_min}/${test_min} min unit/voice/dev/test, seed ${seed})"
    python local/make_mini_corpus.py --unit-min "${unit_min}" --voice-min "${voice_min}" --test-min "${test_min}" \
        --dev-min "${dev_min}" --seed "${seed}" --nj "${nj}" downloads/mini data
    sets="train voice dev test test_voice_ref"; text_opt=
fi
for x in ${sets}; do
    validate_data_dir ${text_opt} --sample-rate 16000 data/${x}
done
