#!/usr/bin/env bash
# Write data/<spk>_{train,valid,test}: TC-STAR when db.sh sets TCSTAR, else the espeak-ng Spanish mini corpus
# (audio, transcripts and labels with true phone times in downloads/mini/).
# --corpus real: one real Spanish reader instead, data/<spk>_{train,valid,test} for the one speaker of --speakers
# (Tux Paint's stamp descriptions, local/prepare_real.py; no phone times: stage 2 aligns them).
set -euo pipefail
. ./path.sh
. ./db.sh
mini_utts=160   # mini corpus: utterances per speaker
seed=0          # mini corpus: sentences
nj=2            # mini corpus: synthesis processes
speakers=""     # real corpus: the speakers to use, by their names after --speaker_map (default: every directory)
speaker_map=""  # real corpus: speaker directory -> name, e.g. "72:M1 73:F1" (TC-STAR's numbers -> the paper's)
corpus=tcstar   # tcstar (TC-STAR via db.sh, else the mini corpus) or real (Tux Paint's Spanish reader)
real_valid=11.5%  # real: held-out clips (a count or a share, as TC-STAR's shares), by a hash of the utterance id
real_test=11.5%
tuxpaint_root=""  # real: an unpacked tuxpaint-stamps-default tree (default: fetch the pinned package)
. parse_options.sh

if [ "${corpus}" = real ]; then
    read -r -a spk <<< "${speakers}"
    [ "${#spk[@]}" -eq 1 ] || die "--corpus real has one reader: give one speaker name (--speakers), not '${speakers}'"
    log "Reading Tux Paint's Spanish reader as ${spk[0]} (valid ${real_valid}, test ${real_test}; 44.1 kHz -> 16 kHz)"
    python local/prepare_real.py --speaker "${spk[0]}" --valid "${real_valid}" --test "${real_test}" \
        ${tuxpaint_root:+--root "${tuxpaint_root}"} data
    for x in train valid test; do validate_data_dir --no-feats "data/${spk[0]}_${x}"; done
    exit 0
fi
[ "${corpus}" = tcstar ] || die "--corpus ${corpus}: tcstar or real"

if [ -n "${TCSTAR}" ]; then
    [ -d "${TCSTAR}" ] || die "db.sh: TCSTAR=${TCSTAR} is not a directory"
    log "Reading TC-STAR at ${TCSTAR}"
    python local/prepare_tcstar.py --speakers "${speakers}" --speaker-map "${speaker_map}" "${TCSTAR}" data
else
    [ -z "${speaker_map}" ] || log "--speaker_map ${speaker_map} ignored: the mini corpus's speakers are M1 and F1"
    log "Building the Spanish mini corpus (${mini_utts} utterances per speaker, seed ${seed})"
    python local/make_mini_corpus.py --utts "${mini_utts}" --seed "${seed}" --nj "${nj}" downloads/mini
    # mini corpus: 80 / 10 / 10 % of each speaker's audio
    python local/prepare_tcstar.py --valid-share 0.1 --test-share 0.1 downloads/mini data
fi
for d in data/*_train data/*_valid data/*_test; do
    validate_data_dir --no-feats "${d}"
done
