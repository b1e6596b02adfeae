#!/usr/bin/env bash
# KSS Korean single-speaker TTS (paper 002, Lim et al.): JDI-T vs ESPnet Tacotron2 / Transformer / FastSpeech.
# Stages: 1 data: KSS via db.sh (expanded text, 22.05 kHz through sox pipes; the last 250 utterances held out,
#           200 dev + 50 test), else the espeak-ng Korean mini corpus with true phone times (data/<set>/phones.ctm);
#           data/ood: out-of-domain sentences for the attention-robustness test (KSS: text only)
#         2 features: 80-dim log-mel as ESPnet2's TTS `fbank` (22.05 kHz, FFT = window 1024, hop 256, 80-7600 Hz)
#           -> dump/<set>/feats.*.{ark,scp}, data/<set>/{feats.scp,utt2num_frames}, dump/<set>/feats_shape,
#           train statistics for `normalize: global_mvn` -> dump/train/feats_stats.npz
#         3 text: jamo phoneme tokens data/<set>/text_phn, ESPnet token list data/token_list/phn/tokens.txt,
#           dump/<set>/text_shape.phn; mini corpus: data/<set>/durations (frames per token, from phones.ctm)
#         Training (JDI-T and the ESPnet baselines), synthesis and scoring stages follow (not written yet).
# Any data dir with wav.scp + text can be added to --test-sets (stage 2 skips sets without wav.scp).
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh

stage=1
stop_stage=3
nj=2
train_set=train
valid_set=dev
test_sets="test ood"
kss_dev=200             # KSS: held-out utterances at the end of the transcript (paper: 200 valid + 50 test)
kss_test=50
mini_utts=300           # mini corpus size (db.sh empty); the last 10 % are held out (dev 5 %, test 5 %)
seed=0
unknown_chars=error     # characters with no Korean reading in the text: error (file:line) or drop
. parse_options.sh

sets="${train_set} ${valid_set} ${test_sets}"
token_list=data/token_list/phn/tokens.txt
conf_value() { awk -v k="$1" '$1 == k { print $2 }' conf/fbank.conf; }   # conf_value --hop-length -> 256

if stage_enabled 1; then
    log "Stage 1: data -> data/{train,dev,test,ood}"
    local/data.sh --kss-dev "${kss_dev}" --kss-test "${kss_test}" --mini-utts "${mini_utts}" --seed "${seed}" --nj "${nj}"
fi

if stage_enabled 2; then
    for x in ${sets}; do
        require "data/${x}/text" "stage 1 (data) or your own data dir with wav.scp + text"
        if [ ! -f "data/${x}/wav.scp" ]; then
            log "Stage 2: data/${x} has no wav.scp (text only): no features"
            continue
        fi
        log "Stage 2: log-mel features of data/${x} -> dump/${x}"
        validate_data_dir --no-feats "data/${x}"
        rm -rf "dump/${x}/feats."* "dump/${x}/log"   # shards of an earlier run with another nj
        n=$(wc -l < "data/${x}/utt2spk"); jobs=$(( n < nj ? n : nj ))
        split_data "data/${x}" "${jobs}"
        ${decode_cmd} JOB=1:"${jobs}" "dump/${x}/log/feats.JOB.log" \
            extract_feats $(cat conf/fbank.conf) "data/${x}/split${jobs}/JOB" "dump/${x}/feats.JOB"
        for f in scp:data/${x}/feats.scp utt2num_frames:data/${x}/utt2num_frames shape:dump/${x}/feats_shape; do
            cat "dump/${x}"/feats.*."${f%%:*}" | sort > "${f#*:}.tmp"
            mv "${f#*:}.tmp" "${f#*:}"
        done
        validate_data_dir "data/${x}"
    done
    log "Stage 2: global mean / variance of data/${train_set} -> dump/${train_set}/feats_stats.npz"
    python -m local_models.bin.feats_stats "data/${train_set}/feats.scp" "dump/${train_set}/feats_stats.npz"
fi

if stage_enabled 3; then
    for x in ${sets}; do
        require "data/${x}/text" "stage 1 (data)"
        log "Stage 3: jamo phoneme tokens data/${x}/text -> data/${x}/text_phn"
        python -m local_models.bin.jdit_text g2p --unknown "${unknown_chars}" "data/${x}"
    done
    log "Stage 3: token list of data/${train_set} -> ${token_list}"
    python -m local_models.bin.jdit_text token-list "data/${train_set}/text_phn" "${token_list}"
    for x in ${sets}; do
        mkdir -p "dump/${x}"
        python -m local_models.bin.jdit_text shape "data/${x}/text_phn" "${token_list}" "dump/${x}/text_shape.phn"
        if [ -f "data/${x}/phones.ctm" ]; then
            require "data/${x}/utt2num_frames" "stage 2 (features)"
            log "Stage 3: reference durations from the true phone times -> data/${x}/durations"
            python -m local_models.bin.jdit_text durations --sample-rate "$(conf_value --sample-rate)" \
                --hop-length "$(conf_value --hop-length)" "data/${x}"
        fi
    done
fi

# Stages 4- (training JDI-T and the ESPnet baselines Tacotron2 / Transformer / FastSpeech on
# dump/<set>/feats + data/<set>/text_phn with ${token_list}, synthesis with Parallel WaveGAN, objective
# scoring, attention failures on data/ood) come next.
log "Done (stages ${stage}-${stop_stage})"
