#!/usr/bin/env bash
# Write data/{train,dev,test,ood}: KSS when db.sh sets KSS, else the espeak-ng Korean mini corpus (audio and
# true phone times in downloads/mini/; data/<set>/phones.ctm). data/ood: the out-of-domain sentences of
# local/ood_ko.txt (KSS: text only; mini corpus: with espeak-ng audio and phone times).
# --corpus real: one real Spanish reader instead (Tux Paint's stamp descriptions, local/prepare_real.py; no true
# phone times), data/ood the text-only sentences of local/ood_es.txt.
set -euo pipefail
. ./path.sh
. ./db.sh
kss_dev=200     # KSS: the last kss_dev + kss_test utterances of the transcript are held out (dev, then test)
kss_test=50
mini_utts=300   # mini corpus: utterances (the last 10 % held out: 5 % dev, then 5 % test)
seed=0          # mini corpus: sentences
nj=2            # mini corpus: synthesis processes
corpus=kss      # kss (KSS or the mini corpus, as above) or real
real_dev=5%     # real: held-out clips (a count or a share), by a hash of the utterance id
real_test=5%
tuxpaint_root=""  # real: an unpacked tuxpaint-stamps-default tree (default: fetch the pinned package)
. parse_options.sh

if [ "${corpus}" = real ]; then
    log "Reading Tux Paint's Spanish reader (dev ${real_dev}, test ${real_test}; 44.1 kHz Ogg -> 22.05 kHz)"
    python local/prepare_real.py --lang es --dev "${real_dev}" --test "${real_test}" \
        ${tuxpaint_root:+--root "${tuxpaint_root}"} --ood-text local/ood_es.txt data
    for x in train dev test; do validate_data_dir --no-feats --sample-rate 22050 data/${x}; done
    exit 0
fi
[ "${corpus}" = kss ] || die "--corpus ${corpus}: kss or real"

if [ -n "${KSS}" ]; then
    [ -d "${KSS}" ] || die "db.sh: KSS=${KSS} is not a directory"
    log "Reading KSS at ${KSS} (expanded text; the last ${kss_dev} + ${kss_test} utterances = dev + test)"
    python local/prepare_kss.py --dev "${kss_dev}" --test "${kss_test}" --ood-text local/ood_ko.txt "${KSS}" data
    # wav.scp resamples through sox pipes: this also checks that sox is on PATH
    for x in train dev test; do validate_data_dir --no-feats data/${x}; done
else
    log "Building the Korean mini corpus (${mini_utts} utterances, seed ${seed})"
    python local/make_mini_corpus.py --utts "${mini_utts}" --seed "${seed}" --nj "${nj}" \
        --ood-text local/ood_ko.txt downloads/mini
    python local/prepare_kss.py --dev 5% --test 5% --phones-ctm downloads/mini/phones.ctm downloads/mini data
    python local/prepare_kss.py --single-set ood --phones-ctm downloads/mini/ood/phones.ctm downloads/mini/ood data
    for x in train dev test ood; do validate_data_dir --no-feats --sample-rate 22050 data/${x}; done
fi
