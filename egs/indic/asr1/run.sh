#!/usr/bin/env bash
# Indian-language ASR (paper 001, multi-softmax RNN-T): En-IN, Hi-IN, Ta-IN, Gu-IN in native scripts.
# Stages: 1 data: data/<lang>_{train,dev,test} + utt2lid (per-language Kaldi dirs via db.sh, else the
#           espeak-ng mini corpus: en, hi large; ta, gu small, as in the paper's Table 1)
#         2 features: 80-dim log-mel, 25 ms / 10 ms, 16 kHz -> dump/fbank/<set>/feats.{scp,shape},
#           utt2num_frames (the model stacks 8 frames to 640 dims at a 30 ms rate on the fly)
#         3 units: graphemes + B_graphemes (word start) + <blank> per language (from <lang>_train only)
#           and their union -> data/lang/{<lang>,union}/units.txt; every set's transcript ->
#           data/<set>/text_norm (WER reference) and data/<set>/text_units (B_x y z B_u ...)
# Usage: ./run.sh [--stage N] [--stop-stage M] [--nj J] [--langs "en hi ta gu"]
#        mini corpus size: [--mini-train-min "en=6 hi=6 ta=2 gu=2"] [--mini-dev-min 1] [--mini-test-min 1]
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh

stage=1
stop_stage=3
nj=2
langs="en hi ta gu"                    # language codes (local_models/multisoftmax/units.py LANGS)
mini_train_min="en=6 hi=6 ta=2 gu=2"   # mini corpus: training minutes per language
mini_dev_min=1                         # mini corpus: dev minutes per language
mini_test_min=1                        # mini corpus: test minutes per language
seed=0
. parse_options.sh

sets=""
for lang in ${langs}; do sets+="${lang}_train ${lang}_dev ${lang}_test "; done
[ -n "${sets}" ] || die "--langs is empty"

# extract SET: log-mel features of data/SET -> dump/fbank/SET/feats.{scp,shape}, utt2num_frames, utt2dur
extract() {
    local x=$1 d=dump/fbank/$1 n j f
    n=$(wc -l < "data/${x}/utt2spk"); j=$(( n < nj ? n : nj ))
    rm -rf "${d}"  # no stale shards from a run with another --nj
    split_data "data/${x}" "${j}"
    ${decode_cmd} JOB=1:"${j}" "${d}/log/feats.JOB.log" \
        extract_feats $(grep -v '^#' conf/fbank.conf) "data/${x}/split${j}/JOB" "${d}/feats.JOB"
    for f in scp shape utt2num_frames utt2dur; do
        cat "${d}"/feats.*."${f}" | sort > "${d}/.${f}.tmp"
    done
    mv "${d}/.utt2num_frames.tmp" "${d}/utt2num_frames"; mv "${d}/.utt2dur.tmp" "${d}/utt2dur"
    mv "${d}/.shape.tmp" "${d}/feats.shape"; mv "${d}/.scp.tmp" "${d}/feats.scp"  # feats.scp last: "done"
    [ "$(wc -l < "${d}/feats.scp")" -eq "${n}" ] || die "${d}/feats.scp: $(wc -l < "${d}/feats.scp") of ${n} utterances"
}

if stage_enabled 1; then
    log "Stage 1: data -> data/<lang>_{train,dev,test} (+ utt2lid) for ${langs}"
    local/data.sh --langs "${langs}" --train-min "${mini_train_min}" --dev-min "${mini_dev_min}" \
        --test-min "${mini_test_min}" --seed "${seed}" --nj "${nj}"
fi

if stage_enabled 2; then
    log "Stage 2: 80-dim log-mel (25 ms / 10 ms) -> dump/fbank/<set>/feats.{scp,shape}, utt2num_frames"
    require conf/fbank.conf "a feature config"
    for x in ${sets}; do
        require "data/${x}/wav.scp" "stage 1 (data)"
        validate_data_dir --no-feats "data/${x}"
    done
    for x in ${sets}; do extract "${x}"; done
fi

if stage_enabled 3; then
    log "Stage 3: units -> data/lang/{${langs// /,},union}/units.txt, data/<set>/text_{norm,units}"
    for x in ${sets}; do
        require "data/${x}/utt2lid" "stage 1 (data)"
        validate_data_dir --no-feats --no-wav "data/${x}"
    done
    python -m local_models.bin.indic_units --langs "${langs}" --sets "${sets}" data data/lang
fi

# Stage 4 onwards (training the monolingual, vanilla, one-hot and multi-softmax RNN-Ts) comes next.
log "Done (stages ${stage}-${stop_stage})"
