#!/usr/bin/env bash
# Train this recipe's nets at paper size on a lent GPU machine that has no espeak-ng and no package index (the
# device tool's machine), then decode and score them here. Three halves:
#   bash local/gpu_train.sh prepare DEST        # here, after stage 1: data/{train,dev}, their audio and the
#                                               #   built-in non-speech set's train make as FLAC -> DEST/sad_data.tar
#                                               #   (~40 MB for the 30-min mini corpus, whatever the copies)
#   bash local/gpu_train.sh run SRC OUT [SECS]  # there (tools/device_venv.sh first): data/train_aug (the
#                                               #   augmentation, on the CPUs), stages 2-3, then stage 4 with
#                                               #   --ngpu 1 --train_config_suffix "", the nets in parallel, each
#                                               #   stopped after SECS s (default 200) if not done;
#                                               #   OUT/exp/<net>/ = config, best checkpoint, train.log, curves,
#                                               #   train_data.txt (what it trained on)
#   bash local/gpu_train.sh install SRC         # here: SRC/exp/<net>/ -> exp/<net>/ (valid.loss.best.pth);
#                                               #   then ./run.sh --stage 5 --train_config_suffix "" --seg-grid ""
# Environment: GPU_TRAIN_NETS (default "cnn1d rnn seg_rnn"), GPU_TRAIN_NGPU (default 1), GPU_TRAIN_ARGS (ESPnet options; default 100 iterations
# an epoch, at most 40 epochs: the paper's 50,000 iterations do not fit a lent machine's minutes), GPU_TRAIN_AUG_COPIES
# (augmented copies per training recording, made there; more copies cost nothing to carry. Default 4, not run.sh's 1:
# in one call on a lent H200, 4 copies gave a lower dev DCF and validation loss than 1 for the CNN and the RNN at the
# same 270 s, docs/gpu.md). The augmentation there draws from the built-in set only: MUSAN / RIRS_NOISES (db.sh) do
# not travel.
set -euo pipefail
cd "$(dirname "$0")/.."
nets=${GPU_TRAIN_NETS:-cnn1d rnn seg_rnn}
train_args=${GPU_TRAIN_ARGS:---max_epoch 40 --num_iters_per_epoch 100 --num_workers 2}
ngpu=${GPU_TRAIN_NGPU:-1}  # 0: the same path on the CPU (a check before the GPU is lent)
aug_copies=${GPU_TRAIN_AUG_COPIES:-4}
[[ "${aug_copies}" =~ ^[1-9][0-9]*$ ]] || { echo "gpu_train.sh: GPU_TRAIN_AUG_COPIES='${aug_copies}' is not a number of copies (1, 2, ...)" >&2; exit 1; }
sets="train dev"
nonspeech=downloads/nonspeech/train  # the built-in set's train make (local/data.sh): the augmentation's sources

die() { echo "gpu_train.sh: $*" >&2; exit 1; }
# system_of NET: the first neural system (local_models/sad/systems.py's order) whose only net is NET: stage 4 then
# trains NET alone (cnn1d: cnn_hmm, rnn: rnn_hmm, seg_rnn: seg_rnn)
system_of() {
    local s
    for s in $(python -m local_models.sad.systems neural); do
        if [ "$(python -m local_models.sad.systems nets_of "${s}")" = "$1" ]; then echo "${s}"; return 0; fi
    done
    die "no SAD system trains net '$1' alone (python -m local_models.sad.systems --help)"
}

# prepare DEST: the training sets' data dirs with wav.scp pointing at downloads/flac/<utt>.flac (relative), and
# the non-speech set (same layout, FLAC) that the augmentation draws from there
prepare() {
    local dest=$1 tmp x id path f rate
    for x in ${sets}; do [ -f "data/${x}/wav.scp" ] || die "data/${x}/wav.scp missing: run stage 1 first"; done
    [ -f "${nonspeech}/sources.tsv" ] || die "${nonspeech}/sources.tsv missing: run stage 1 first (it builds the set)"
    mkdir -p "${dest}"
    tmp=$(mktemp -d)
    mkdir -p "${tmp}/downloads/flac"
    for x in ${sets}; do
        mkdir -p "${tmp}/data/${x}"
        cp "data/${x}"/{utt2spk,spk2utt,reco2dur} "${tmp}/data/${x}/"
        for f in ref.rttm ref_segments events segments; do [ -f "data/${x}/${f}" ] && cp "data/${x}/${f}" "${tmp}/data/${x}/"; done
        while read -r id path; do
            [ -f "${path}" ] || die "data/${x}/wav.scp: ${id}: ${path} is not a file (a piped entry cannot travel)"
            sox "${path}" -C 8 "${tmp}/downloads/flac/${id}.flac"
            echo "${id} downloads/flac/${id}.flac"
        done < "data/${x}/wav.scp" > "${tmp}/data/${x}/wav.scp"
    done
    # at the corpus's rate, which the augmentation resamples every source to anyway: half the bytes of the set's 16 kHz
    rate=$(soxi -r "$(awk 'NR == 1 { print $2 }' data/train/wav.scp)")
    (cd "${nonspeech}" && find . -name '*.wav' | sort) | while read -r f; do
        mkdir -p "$(dirname "${tmp}/${nonspeech}/${f}")"
        sox -D "${nonspeech}/${f}" -C 8 "${tmp}/${nonspeech}/${f%.wav}.flac" rate -v "${rate}"
    done
    cp "${nonspeech}/sources.tsv" "${tmp}/${nonspeech}/"  # what each file is (its .wav name) and its licence
    tar -C "${tmp}" -cf "${dest}/sad_data.tar" data downloads
    rm -rf "${tmp}"
    du -sh "${dest}/sad_data.tar"
}

# run SRC OUT [SECS]: features, chunks and the nets' training on this machine's GPU
run() {
    local src=$1 out=$2 secs=${3:-200} m t0 best
    tar -xf "${src}/sad_data.tar"
    t0=$(date +%s)
    python -m local_models.bin.sad_augment --nonspeech "${nonspeech}" --copies "${aug_copies}" --seed 0 \
        data/train data/train_aug downloads/aug > "${out}/prep.log" 2>&1 || { tail -30 "${out}/prep.log"; die "augmentation failed"; }
    ./run.sh --stage 2 --stop-stage 3 --nj 16 --aug-copies "${aug_copies}" --test-sets "" \
        --systems "cnn_hmm rnn_hmm seg_rnn" >> "${out}/prep.log" 2>&1 || { tail -30 "${out}/prep.log"; die "stages 2-3 failed"; }
    echo "gpu_train.sh: stages 2-3 took $(( $(date +%s) - t0 )) s"
    nvidia-smi -L > "${out}/gpu.txt" 2>/dev/null || true
    for m in ${nets}; do
        # timeout signals its own process group: run.sh, the trainer and its data loaders
        timeout -s TERM "${secs}" ./run.sh --stage 4 --stop-stage 4 --systems "$(system_of "${m}")" --ngpu "${ngpu}" \
            --aug-copies "${aug_copies}" \
            --train_config_suffix "" --train_args "${train_args}" > "${out}/train_${m}.log" 2>&1 &
    done
    wait || true
    echo "gpu_train.sh: training stopped after $(( $(date +%s) - t0 )) s in all"
    for m in ${nets}; do
        mkdir -p "${out}/exp/${m}"
        best=$(best_checkpoint "exp/${m}") || { echo "gpu_train.sh: ${m}: no epoch finished" >&2; continue; }
        cp -L "${best}" "${out}/exp/${m}/valid.loss.best.pth"
        basename "$(readlink -f "${best}")" > "${out}/exp/${m}/best_epoch"  # <N>epoch.pth: which epoch it is
        cp "exp/${m}/config.yaml" "exp/${m}/train.log" "${out}/exp/${m}/"
        cp "exp/${m}/train_data.txt" "${out}/exp/${m}/"  # stage 4's record of its training data
        if [ -d "exp/${m}/images" ]; then cp -r "exp/${m}/images" "${out}/exp/${m}/"; fi
    done
}

# best_checkpoint DIR: ESPnet's valid.loss.best.pth when training ended, else the one epoch file that
# keep_nbest_models 1 leaves (the best by validation loss so far)
best_checkpoint() {
    local d=$1 f
    [ -e "${d}/valid.loss.best.pth" ] && { echo "${d}/valid.loss.best.pth"; return 0; }
    f=$(ls "${d}"/*epoch.pth 2>/dev/null | head -1)
    [ -n "${f}" ] && echo "${f}"
}

# install SRC: the trained nets into exp/ for stages 5-8 here
install() {
    local src=$1 m
    for m in ${nets}; do  # all there before any exp dir is replaced
        [ -f "${src}/exp/${m}/valid.loss.best.pth" ] || die "${src}/exp/${m}/valid.loss.best.pth missing"
    done
    # stage 7's grid and its dev-best seg RNN belong to the nets being replaced: the vote would use a stale one
    rm -rf exp/seg_grid exp/seg_rnn_devbest
    for m in ${nets}; do
        rm -rf "exp/${m}"; mkdir -p "exp/${m}"
        cp -r "${src}/exp/${m}"/. "exp/${m}/"
        chmod -R u+w "exp/${m}"
        # the GPU that trained it, for the report (local_models/common/training.py)
        if [ -f "${src}/gpu.txt" ]; then sed -n '1{s/^GPU 0: //;s/ (UUID.*//;p}' "${src}/gpu.txt" > "exp/${m}/device.txt"; fi
    done
    echo "gpu_train.sh: installed ${nets}; now ./run.sh --stage 5 --train_config_suffix \"\" --seg-grid \"\""
}

cmd=${1:-}; shift || true
case "${cmd}" in
    prepare) [ $# -eq 1 ] || die "prepare DEST"; prepare "$1" ;;
    run) [ $# -ge 2 ] || die "run SRC OUT [SECS]"; . ./path.sh; run "$@" ;;
    install) [ $# -eq 1 ] || die "install SRC"; install "$1" ;;
    -h|--help) sed -n '2,/^set -euo/p' local/gpu_train.sh | sed '$d' | sed 's/^# \{0,1\}//' ;;
    *) die "prepare, run or install (see --help)" ;;
esac
