#!/usr/bin/env bash
# Train a SAD recipe's nets on a lent GPU machine that has no espeak-ng, no Debian packages and no package index (the
# device tool's machine), then decode and score them here. Shared by every corpus of the SAD model; run it from the
# recipe's directory (egs/<corpus>/sad1). Three halves:
#   bash ../../../local_models/sad/gpu_train.sh prepare DEST
#       here, after stage 1: data/{train,dev}, their audio as 8 kHz FLAC (the nets' rate) and, when the recipe
#       augments (the FS02 mini corpus), the built-in non-speech set's train make -> DEST/sad_data.tar
#   bash ../../../local_models/sad/gpu_train.sh run SRC OUT [SECS]
#       there (tools/device_venv.sh first): data/train_aug when it augments, stages 2-3, then stage 4 with
#       --ngpu 1 for every entry of GPU_TRAIN_NETS at once, each stopped after SECS s (default 200) if not done;
#       OUT/gpu_train.tar holds exp/<net>/ per entry (config, best checkpoint, train.log, curves, train_data.txt:
#       what it trained on), gpu.txt and the logs (one file: the device tool brings back few, shallow files)
#   bash ../../../local_models/sad/gpu_train.sh install SRC [NET[:SUFFIX[:SEED]]]
#       here: SRC (the tar or its unpacked folder) exp/<net>/ -> exp/<net>/ (valid.loss.best.pth) for every
#       entry (or the one named); then ./run.sh --stage 5 with the entry's --train_config_suffix
# Environment:
#   GPU_TRAIN_NETS  entries NET, NET:SUFFIX or NET:SUFFIX:SEED (default "cnn1d rnn seg_rnn" = paper size): NET
#                   trained from conf/tuning/train_NET${SUFFIX}.yaml (with --seed SEED); entries with a suffix train side by side in sibling copies
#                   of the recipe (../<recipe>_gpu_NET${SUFFIX}, sharing data/ and dump/), and come back as
#                   exp_NET${SUFFIX}[_sSEED]/<net>/ in the tar ("install SRC NET:SUFFIX[:SEED]" puts one in exp/<net>/)
#   GPU_TRAIN_ARGS  ESPnet options (default 100 iterations an epoch, at most 40 epochs: the paper's 50,000
#                   iterations do not fit a lent machine's minutes)
#   GPU_TRAIN_AUG_COPIES  augmented copies per training recording, made there (more copies cost nothing to carry);
#                   `prepare` packs the non-speech set when it is > 0 and records it, `run` takes the record unless
#                   the variable is set there too. Default: 4 where the recipe has the built-in non-speech set (downloads/nonspeech/train: the FS02
#                   mini corpus; in one call on a lent H200, 4 copies gave a lower dev DCF and validation loss than 1
#                   for the CNN and the RNN at the same 270 s, docs/gpu.md), else 0 (the real-recording corpus: its
#                   streams already hold real music and effects). The augmentation draws from the built-in set only:
#                   MUSAN / RIRS_NOISES (db.sh) do not travel.
#   GPU_TRAIN_CHUNKS_SPAN  stage 3's --chunks-per-frame-span there (default the recipe's): more random 4 s chunks
#                   of the same audio for the many more iterations a GPU runs
#   GPU_TRAIN_NGPU  GPUs per training (default 1; 0: the same path on the CPU, a check before the GPU is lent)
set -euo pipefail
self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
nets=${GPU_TRAIN_NETS:-cnn1d rnn seg_rnn}
train_args=${GPU_TRAIN_ARGS:---max_epoch 40 --num_iters_per_epoch 100 --num_workers 2}
ngpu=${GPU_TRAIN_NGPU:-1}
sets="train dev"
nonspeech=downloads/nonspeech/train  # the built-in set's train make (FS02's local/data.sh): the augmentation's sources

die() { echo "gpu_train.sh: $*" >&2; exit 1; }

# aug_copies: GPU_TRAIN_AUG_COPIES, or its default (4 with the built-in non-speech set here, else 0)
aug_copies() {
    local n=${GPU_TRAIN_AUG_COPIES:-}
    if [ -z "${n}" ]; then if [ -f "${nonspeech}/sources.tsv" ]; then n=4; else n=0; fi; fi
    [[ "${n}" =~ ^[0-9]+$ ]] || die "GPU_TRAIN_AUG_COPIES='${n}' is not a number of copies (0, 1, 2, ...)"
    echo "${n}"
}

# an entry is NET[:SUFFIX[:SEED]]: net_of / suffix_of / seed_of / tag_of: "rnn:_h64:2" -> rnn / _h64 / 2 /
# rnn_h64_s2; "rnn:_h64" -> rnn / _h64 / (the recipe's --seed) / rnn_h64; "rnn" -> rnn / "" / - / ""
net_of() { echo "${1%%:*}"; }
suffix_of() { local f; IFS=: read -r _ f _ <<< "$1"; echo "${f}"; }
seed_of() { local f; IFS=: read -r _ _ f <<< "$1"; echo "${f}"; }
tag_of() { [[ "$1" == *:* ]] && echo "$(net_of "$1")$(suffix_of "$1")$(seed_of "$1" | sed 's/^./_s&/')" || true; }
# exp_of ENTRY: where ENTRY's net travels in the tar: exp/<net>, or exp_<tag>/<net> for an entry with a suffix
exp_of() { if [ -n "$(tag_of "$1")" ]; then echo "exp_$(tag_of "$1")/$(net_of "$1")"; else echo "exp/$(net_of "$1")"; fi; }

# system_of NET: the first neural system (local_models/sad/systems.py's order) whose only net is NET: stage 4 then
# trains NET alone (cnn1d: cnn_hmm, rnn: rnn_hmm, seg_rnn: seg_rnn)
system_of() {
    local s
    for s in $(python -m local_models.sad.systems neural); do
        if [ "$(python -m local_models.sad.systems nets_of "${s}")" = "$1" ]; then echo "${s}"; return 0; fi
    done
    die "no SAD system trains net '$1' alone (python -m local_models.sad.systems --help)"
}

# prepare DEST: the training sets' data dirs with wav.scp pointing at downloads/flac/<utt>.flac (relative, 8 kHz),
# and, when the recipe augments, the non-speech set (same layout, FLAC) that the augmentation draws from there
prepare() {
    local dest=$1 tmp x id path f copies
    copies=$(aug_copies)
    for x in ${sets}; do [ -f "data/${x}/wav.scp" ] || die "data/${x}/wav.scp missing: run stage 1 first"; done
    if [ "${copies}" -gt 0 ] && [ ! -f "${nonspeech}/sources.tsv" ]; then
        die "${nonspeech}/sources.tsv missing: run stage 1 first (it builds the set), or GPU_TRAIN_AUG_COPIES=0"
    fi
    mkdir -p "${dest}"
    tmp=$(mktemp -d)
    mkdir -p "${tmp}/downloads/flac"
    for x in ${sets}; do
        mkdir -p "${tmp}/data/${x}"
        cp "data/${x}"/{utt2spk,spk2utt,reco2dur} "${tmp}/data/${x}/"
        for f in ref.rttm ref_segments events segments; do [ -f "data/${x}/${f}" ] && cp "data/${x}/${f}" "${tmp}/data/${x}/"; done
        while read -r id path; do
            [ -f "${path}" ] || die "data/${x}/wav.scp: ${id}: ${path} is not a file (a piped entry cannot travel)"
            # the nets' 8 kHz (stage 2 resamples any rate to it): the real corpus's 16 kHz streams at half the bytes
            sox -D "${path}" -C 8 "${tmp}/downloads/flac/${id}.flac" rate -v 8000
            echo "${id} downloads/flac/${id}.flac"
        done < "data/${x}/wav.scp" > "${tmp}/data/${x}/wav.scp"
    done
    if [ "${copies}" -gt 0 ]; then
        (cd "${nonspeech}" && find . -name '*.wav' | sort) | while read -r f; do
            mkdir -p "$(dirname "${tmp}/${nonspeech}/${f}")"
            sox -D "${nonspeech}/${f}" -C 8 "${tmp}/${nonspeech}/${f%.wav}.flac" rate -v 8000
        done
        cp "${nonspeech}/sources.tsv" "${tmp}/${nonspeech}/"  # what each file is (its .wav name) and its licence
    fi
    echo "${copies}" > "${tmp}/downloads/aug_copies"
    # the commit of the code that will train there (the copy that travels has no .git): trained_by.json names it
    (cd "$(dirname "${self}")/../.." && python -c 'from local_models.common.results import git_commit; print(git_commit())' \
        2>/dev/null || echo unknown) > "${tmp}/downloads/code_commit"
    tar -C "${tmp}" -cf "${dest}/sad_data.tar" data downloads
    rm -rf "${tmp}"
    du -sh "${dest}/sad_data.tar"
}

# sibling_dir TAG: where the copy of this recipe for one entry lives (../<recipe>_gpu_TAG)
sibling_dir() { echo "../$(basename "${PWD}")_gpu_$1"; }

# sibling TAG: that copy made afresh: this recipe's files linked, data/ and dump/ shared, exp/ its own
sibling() {
    local d f
    d=$(sibling_dir "$1")
    rm -rf "${d}"; mkdir -p "${d}"
    for f in * .[!.]*; do
        [ -e "${f}" ] || continue
        [ "${f}" = exp ] || ln -s "${PWD}/${f}" "${d}/${f}"
    done
    echo "${d}"
}

# train_entry ENTRY SECS LOG: stage 4 for ENTRY's net at ENTRY's config (in its sibling when it has a suffix)
train_entry() {
    local e=$1 secs=$2 log=$3 net dir=. copies=$4
    net=$(net_of "${e}")
    [ -n "$(tag_of "${e}")" ] && dir=$(sibling "$(tag_of "${e}")")
    # timeout signals its own process group: run.sh, the trainer and its data loaders
    (cd "${dir}" && timeout -s TERM "${secs}" ./run.sh --stage 4 --stop-stage 4 --systems "$(system_of "${net}")" \
        --ngpu "${ngpu}" --aug-copies "${copies}" --train_config_suffix "$(suffix_of "${e}")" \
        $([ -z "$(seed_of "${e}")" ] || echo "--seed $(seed_of "${e}")") \
        --train_args "${train_args}") > "${log}" 2>&1
}

# run SRC OUT [SECS]: features, chunks and the nets' training on this machine's GPU
run() {
    local src=$1 out=$2 secs=${3:-200} e net dir best t0 copies stage_opts=()
    tar -xf "${src}/sad_data.tar"
    copies=$(cat downloads/aug_copies 2>/dev/null || echo 4)  # a tar from before the file existed: the FS02 default
    copies=${GPU_TRAIN_AUG_COPIES:-${copies}}
    [[ "${copies}" =~ ^[0-9]+$ ]] || die "GPU_TRAIN_AUG_COPIES='${copies}' is not a number of copies (0, 1, 2, ...)"
    if [ -f downloads/code_commit ]; then export SPEECH_RECIPES_COMMIT; SPEECH_RECIPES_COMMIT=$(cat downloads/code_commit); fi
    [ -z "${GPU_TRAIN_CHUNKS_SPAN:-}" ] || stage_opts+=(--chunks-per-frame-span "${GPU_TRAIN_CHUNKS_SPAN}")
    pack=$(mktemp -d)
    mkdir -p "${out}"
    # the logs come back also when a step fails or the call is cut at its limit (TERM): whatever is there is packed
    trap "pack_out '${out}'" EXIT  # expanded now: OUT is this function's
    trap 'exit 143' TERM
    t0=$(date +%s)
    if [ "${copies}" -gt 0 ]; then
        python -m local_models.bin.sad_augment --nonspeech "${nonspeech}" --copies "${copies}" --seed 0 \
            data/train data/train_aug downloads/aug > "${pack}/prep.log" 2>&1 || { tail -30 "${pack}/prep.log"; die "augmentation failed"; }
    fi
    ./run.sh --stage 2 --stop-stage 3 --nj 16 --aug-copies "${copies}" --test-sets "" "${stage_opts[@]}" \
        --systems "cnn_hmm rnn_hmm seg_rnn" >> "${pack}/prep.log" 2>&1 || { tail -30 "${pack}/prep.log"; die "stages 2-3 failed"; }
    echo "gpu_train.sh: stages 2-3 took $(( $(date +%s) - t0 )) s"
    nvidia-smi -L > "${pack}/gpu.txt" 2>/dev/null || true
    for e in ${nets}; do
        train_entry "${e}" "${secs}" "${pack}/train_$(net_of "${e}")$(suffix_of "${e}")$(seed_of "${e}" | sed 's/^./_s&/').log" "${copies}" &
    done
    wait || true
    echo "gpu_train.sh: training stopped after $(( $(date +%s) - t0 )) s in all"
    for e in ${nets}; do
        net=$(net_of "${e}") dir=.
        [ -n "$(tag_of "${e}")" ] && dir=$(sibling_dir "$(tag_of "${e}")")
        collect "${dir}/exp/${net}" "${pack}/$(exp_of "${e}")" || \
            echo "gpu_train.sh: ${e}: no epoch finished" >&2
    done
}

# pack_out OUT: the run's logs and collected nets (${pack}) -> OUT/gpu_train.tar, once
pack=""
pack_out() {
    [ -n "${pack}" ] && [ -d "${pack}" ] || return 0
    tar -C "${pack}" -cf "$1/gpu_train.tar" . && rm -rf "${pack}"
    tar -tvf "$1/gpu_train.tar" | awk '{ s += $3 } END { printf "gpu_train.sh: %s: %.1f MB\n", "'"$1/gpu_train.tar"'", s / 1e6 }'
}

# collect EXP DEST: EXP's best checkpoint (as valid.loss.best.pth), which epoch it is, config, log, curves and
# training record -> DEST
collect() {
    local exp=$1 dest=$2 best
    best=$(best_checkpoint "${exp}") || return 1
    mkdir -p "${dest}"
    cp -L "${best}" "${dest}/valid.loss.best.pth"
    basename "$(readlink -f "${best}")" > "${dest}/best_epoch"  # <N>epoch.pth: which epoch it is
    cp "${exp}/config.yaml" "${exp}/train.log" "${exp}/train_data.txt" "${dest}/"
    if [ -f "${exp}/trained_by.json" ]; then cp "${exp}/trained_by.json" "${dest}/"; fi  # date, commit, GPU
    if [ -d "${exp}/images" ]; then cp -r "${exp}/images" "${dest}/"; fi
}

# best_checkpoint DIR: ESPnet's valid.loss.best.pth when training ended, else the one epoch file that
# keep_nbest_models 1 leaves (the best by validation loss so far)
best_checkpoint() {
    local d=$1 f
    [ -e "${d}/valid.loss.best.pth" ] && { echo "${d}/valid.loss.best.pth"; return 0; }
    f=$(ls "${d}"/*epoch.pth 2>/dev/null | head -1)
    [ -n "${f}" ] && echo "${f}"
}

# install SRC [ENTRY]: the trained nets (of every GPU_TRAIN_NETS entry, or ENTRY) into exp/ for stages 5-8 here
install() {
    local src=$1 entries=${2:-${nets}} e from m unpacked="" seen=" "
    if [ -f "${src}" ]; then  # the tar that run wrote
        unpacked=$(mktemp -d); trap "rm -rf '${unpacked}'" EXIT
        tar -C "${unpacked}" -xf "${src}"; src=${unpacked}
    fi
    for e in ${entries}; do  # all there before any exp dir is replaced
        from=${src}/$(exp_of "${e}")
        [ -f "${from}/valid.loss.best.pth" ] || die "${from}/valid.loss.best.pth missing"
        m=$(net_of "${e}")
        [[ "${seen}" != *" ${m} "* ]] || die "two entries train '${m}' (${entries}): exp/${m} holds one; name the entry to install"
        seen+="${m} "
    done
    # stage 7's grid and its dev-best seg RNN belong to the nets being replaced: the vote would use a stale one
    rm -rf exp/seg_grid exp/seg_rnn_devbest
    for e in ${entries}; do
        m=$(net_of "${e}")
        from=${src}/$(exp_of "${e}")
        rm -rf "exp/${m}"; mkdir -p "exp/${m}"
        cp -r "${from}"/. "exp/${m}/"
        chmod -R u+w "exp/${m}"
        # the GPU that trained it, for the report (local_models/common/training.py)
        if [ -f "${src}/gpu.txt" ]; then sed -n '1{s/^GPU 0: //;s/ (UUID.*//;p}' "${src}/gpu.txt" > "exp/${m}/device.txt"; fi
    done
    echo "gpu_train.sh: installed ${entries}; now ./run.sh --stage 5 with the entries' --train_config_suffix (and" \
        "--seg-grid \"\" where the recipe has a grid: stage 7 would train its points here)"
}

cmd=${1:-}; shift || true
case "${cmd}" in -h|--help) ;; *)
    [ -f run.sh ] && [ -f path.sh ] || die "run it from a SAD recipe's directory (egs/<corpus>/sad1)" ;;
esac
case "${cmd}" in
    prepare) [ $# -eq 1 ] || die "prepare DEST"; . ./path.sh; prepare "$1" ;;
    run) [ $# -ge 2 ] || die "run SRC OUT [SECS]"; . ./path.sh; run "$@" ;;
    install) [ $# -ge 1 ] && [ $# -le 2 ] || die "install SRC [NET[:SUFFIX[:SEED]]]"; install "$@" ;;
    -h|--help) sed -n '2,/^set -euo/p' "${self}" | sed '$d' | sed 's/^# \{0,1\}//' ;;
    *) die "prepare, run or install (see --help)" ;;
esac
