#!/usr/bin/env bash
# ZeroSpeech 2019 (paper 003, Tjandra et al.): Transformer VQ-VAE unit discovery + codebook inverter.
# Stages: 1 data (ZeroSpeech 2019 English via db.sh, else the espeak-ng English mini corpus)
#         2 features (librosa, 25 ms / 10 ms: MFCC 13+d+dd, 80 log-mel; linear magnitude for the inverter;
#           held-out 5 % of train / voice utterances as the trainer's validation set)
#         3 ABX item file of the test set (triphone contexts, across speaker) from its phone alignments
#         4 train the VQ-VAE of every system in ${systems}, nj at a time (ESPnet2 trainer -> exp/<system>; resumes)
#         5 encode the test sets: codes, codebook, bitrate (exp/<system>/codes_<set>)
#         6 ABX (ours + zerospeech-libriabx2) of the raw MFCC reference and every system
#         7 train a codebook inverter per target voice (speakers of data/voice) over ${inverter_system}'s codes
#         8 resynthesise the synthesis list in its target voices (inverter + Griffin-Lim); MCD and log-F0 RMSE
#           when a reference rendition exists (mini corpus), beside the unconverted source's
#           (exp/inverter_<system>/resynth_<set>/<voice>/wav)
#         9 score: exp/results.json, RESULTS.md (paper Tables 1-3 shapes), exp/images/
# Any data dir with a wav.scp (any sample rate: resampled to 16 kHz) can be encoded, its bitrate measured
# (ABX too with a phones.ctm or abx.item) and resynthesised: ./run.sh --stage 5 --test-sets "my_set" (the decode
# stages extract its features, and its ABX items from a phones.ctm, when stages 2-3 have not).
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh

stage=1
stop_stage=9
nj=2  # parallel jobs: feature extraction, encoding, VQ-VAE trainings (one thread each)
test_sets="test"
# systems: (trf|conv)_(mfcc|logmel)_k<K>[_s<lambda>][_j<p>]: encoder, input features, codebook size, temporal
# smoothing weight, jitter probability. All of paper Tables 1-3 (the default for a GPU run with paper sizes):
#   "trf_mfcc_k128 trf_logmel_k128 conv_mfcc_k256 trf_mfcc_k64 trf_mfcc_k256 trf_mfcc_k512 trf_mfcc_k128_s1e-2
#    trf_mfcc_k128_s5e-3 trf_mfcc_k128_s1e-3 trf_mfcc_k128_j0.05 trf_mfcc_k128_j0.075 trf_mfcc_k128_s5e-3_j0.05
#    trf_mfcc_k128_s1e-3_j0.05"
# A "_seed<N>" suffix trains a replicate of a system with training seed N: RESULTS.md gives the mean and sd over
# <system> (seed ${seed}) and its replicates, and compares conv and Transformer by those means. At the tiny budget
# one seed's ABX moves by several points (conv_mfcc_k256: 31.6 / 22.9 / 29.3 % for seeds 0 / 1 / 2 in one run),
# so the systems the acceptance compares get five seeds each: the conv baseline (K 256), the paper's Transformer
# (K 128, 12 % lower bitrate) and the Transformer at the conv's own codebook size (K 256, the same bitrate).
# The landed RESULTS.md adds seeds 5-14 of the K 256 pair (15 seeds each, 40 min more of stage 4 on 2 cores):
#   ./run.sh --systems "<the default list below> trf_mfcc_k256_seed5 conv_mfcc_k256_seed5 ... trf_mfcc_k256_seed14
#   conv_mfcc_k256_seed14"
# With 5 seeds a side the 95 % interval of the difference is ~7 points wide: it cannot tell the paper's gap from 0.
systems="trf_mfcc_k128 trf_logmel_k128 conv_mfcc_k256 trf_mfcc_k64 trf_mfcc_k256 trf_mfcc_k128_s5e-3 trf_mfcc_k128_j0.05 trf_mfcc_k128_s5e-3_j0.05"
systems+=" $(for n in 1 2 3 4; do echo -n "trf_mfcc_k128_seed${n} conv_mfcc_k256_seed${n} trf_mfcc_k256_seed${n} "; done)"
inverter_system=trf_mfcc_k128_s5e-3_j0.05  # the paper's submitted system (Table 3, star)
train_config_suffix=_tiny  # conf/tuning/train_{vqvae,inverter}${suffix}.yaml: "" paper size, _tiny mini corpus, _smoke tests
unit_min=12   # mini corpus size (minutes)
voice_min=5
test_min=3
seed=0
griffin_lim_iters=60
abx_reference=true  # also run zerospeech-libriabx2 on the same inputs
ngpu=$(default_ngpu)    # GPUs per training job (0: CPU; > 1: ESPnet2's DDP); default 1 when nvidia-smi lists a GPU
gpu_inference=false     # encode and resynthesise on a GPU (through cuda_cmd)
inference_nj=2          # encoding jobs at a time (systems x test sets)
inference_model=valid.loss.best.pth  # checkpoint that encodes / inverts: valid.loss.best.pth, valid.loss.ave.pth, latest.pth
train_args=""           # extra ESPnet2 training options (VQ-VAE and inverter), verbatim (they win), e.g. "--max_epoch 1"
inference_args=""       # extra vqvae_extract options, verbatim
. parse_options.sh
setup_devices

sys_re='^(trf|conv)_(mfcc|logmel)_k([0-9]+)(_s([0-9.]+(e-?[0-9]+)?))?(_j(0?\.[0-9]+))?(_seed([0-9]+))?$'
for s in ${systems} ${inverter_system}; do  # fail before any work on a malformed system name
    [[ "${s}" =~ ${sys_re} ]] || die "system '${s}' is not (trf|conv)_(mfcc|logmel)_k<K>[_s<lambda>][_j<p>][_seed<N>]"
done
[[ " ${systems} " == *" ${inverter_system} "* ]] || die "--inverter-system '${inverter_system}' is not in --systems"

corpus=mini
[ -n "$(. ./db.sh; echo "${ZEROSPEECH2019:-}")" ] && corpus=zs2019
feat_sets=$(echo "train voice ${test_sets}" | tr ' ' '\n' | awk 'NF && !seen[$0]++' | tr '\n' ' ')

# system_conf SYSTEM: "<feat> <espnet options>" of a system name
system_conf() {
    [[ "$1" =~ ${sys_re} ]]
    local enc=transformer
    [ "${BASH_REMATCH[1]}" = conv ] && enc=conv
    local opts="--model_conf encoder_type=${enc} --model_conf num_codes=${BASH_REMATCH[3]}"
    # as plain decimals: YAML would read "5e-3" as a string
    [ -n "${BASH_REMATCH[5]}" ] && opts+=" --model_conf smooth_weight=$(awk -v x="${BASH_REMATCH[5]}" 'BEGIN {print x + 0}')"
    [ -n "${BASH_REMATCH[8]}" ] && opts+=" --model_conf jitter_p=$(awk -v x="${BASH_REMATCH[8]}" 'BEGIN {print x + 0}')"
    [ -n "${BASH_REMATCH[10]}" ] && opts+=" --seed ${BASH_REMATCH[10]}"  # a replicate (after --seed ${seed}: wins)
    echo "${BASH_REMATCH[2]} ${opts}"
}

# extract FEAT SET: features of data/SET -> dump/FEAT/SET/feats.{scp,shape}
extract() {
    local feat=$1 x=$2 opts
    case ${feat} in
        mfcc) opts="--kind mfcc --n-mfcc 13 --deltas 2" ;;
        logmel) opts="--kind logmel --n-mels 80" ;;
        spec) opts="--kind stft --n-fft 512" ;;
    esac
    local d=dump/${feat}/${x} n j
    if [ -f "${d}/feats.shape" ] && [ "${d}/feats.shape" -nt "data/${x}/wav.scp" ]; then
        return 0  # up to date (a rerun for new --test-sets does not redo the training sets)
    fi
    n=$(wc -l < "data/${x}/wav.scp"); j=$(( n < nj ? n : nj ))
    split_data "data/${x}" "${j}"
    ${decode_cmd} JOB=1:"${j}" "${d}/log/feats.JOB.log" \
        extract_feats ${opts} --sample-rate 16000 --win-ms 25 --hop-ms 10 "data/${x}/split${j}/JOB" "${d}/feats.JOB"
    cat "${d}"/feats.*.scp | LC_ALL=C sort > "${d}/feats.scp.tmp" && mv "${d}/feats.scp.tmp" "${d}/feats.scp"
    cat "${d}"/feats.*.utt2dur | LC_ALL=C sort > "${d}/utt2dur"
    cat "${d}"/feats.*.shape | LC_ALL=C sort > "${d}/feats.shape.tmp" && mv "${d}/feats.shape.tmp" "${d}/feats.shape"
}

# test_feats FEAT SET: features of a test set for the decode stages; a data dir that stage 2 never saw (your
# own wav.scp) is extracted now, as stage 2 would (extract returns at once when they are up to date)
test_feats() {
    require "data/$2/wav.scp" "stage 1 (data) or your own data dir with a wav.scp"
    if [ ! -f "dump/$1/$2/feats.scp" ]; then
        log "data/$2 has no $1 features yet: extracting them (stage 2's step)"
        validate_data_dir --no-text --no-feats "data/$2"
    fi
    extract "$1" "$2"
}

# make_items SET: the ABX item file of data/SET from its phone alignments (data/SET/phones.ctm)
make_items() {
    log "Stage 3: ABX items of $1 (triphones, across speaker) -> data/$1/abx.item"
    python -m local_models.bin.vqvae_make_items --ctm "data/$1/phones.ctm" --utt2spk "data/$1/utt2spk" --out "data/$1/abx.item"
}

# holdout DIR: every k-th utterance (k = 20, smaller for tiny sets so that at least 2 are held out) of
# DIR/feats.{scp,shape} -> DIR/{tr,cv}.{scp,shape} (the trainer's train / valid sets)
holdout() {
    local d=$1 ext n k
    n=$(wc -l < "${d}/feats.scp")
    k=$(( n / 2 < 20 ? n / 2 : 20 )); [ "${k}" -ge 2 ] || die "${d}/feats.scp: ${n} utterance(s), too few to train on"
    for ext in scp shape; do
        awk -v k="${k}" 'NR % k != 0' "${d}/feats.${ext}" > "${d}/tr.${ext}"
        awk -v k="${k}" 'NR % k == 0' "${d}/feats.${ext}" > "${d}/cv.${ext}"
    done
}

if stage_enabled 1; then
    log "Stage 1: data -> data/{train,voice,test} (corpus: ${corpus})"
    local/data.sh --unit-min "${unit_min}" --voice-min "${voice_min}" --test-min "${test_min}" --seed "${seed}" --nj "${nj}"
    for x in train voice test; do validate_data_dir --no-text --no-feats "data/${x}"; done
fi

if stage_enabled 2; then
    log "Stage 2: features -> dump/{mfcc,logmel}/<set>, dump/spec/voice; speaker ids -> dump/train_utt2sid"
    for x in ${feat_sets}; do
        require "data/${x}/wav.scp" "stage 1 (data) or your own data dir with a wav.scp"
        validate_data_dir --no-text --no-feats "data/${x}"
    done
    for feat in mfcc logmel; do
        for x in ${feat_sets}; do extract "${feat}" "${x}"; done
        holdout "dump/${feat}/train"
    done
    extract spec voice
    for feat in mfcc logmel spec; do [ -f "dump/${feat}/voice/feats.scp" ] && holdout "dump/${feat}/voice"; done
    # speaker index of every training utterance (the decoder's speaker embedding)
    awk '{print $2}' data/train/utt2spk | LC_ALL=C sort -u | awk '{print $1, NR - 1}' > dump/train_spk2sid
    awk 'NR == FNR {sid[$1] = $2; next} {print $1, sid[$2]}' dump/train_spk2sid data/train/utt2spk > dump/train_utt2sid
fi

if stage_enabled 3; then
    for x in ${test_sets}; do
        if [ -f "data/${x}/phones.ctm" ]; then
            make_items "${x}"
        elif [ ! -f "data/${x}/abx.item" ]; then
            log "Stage 3: ${x} has no phones.ctm and no abx.item: its ABX will not be computed (bitrate only)"
        fi
    done
fi

# train_net CONF OUT [ESPnet options...]: a VQ-VAE or an inverter (the task picks by the config)
train_net() {
    local conf=$1 out=$2; shift 2
    espnet_train "${out}" vqvae_train --config "${conf}" "$@"
}

if stage_enabled 4; then
    conf=conf/tuning/train_vqvae${train_config_suffix}.yaml
    require "${conf}" "a training config"
    nspk=$(wc -l < dump/train_spk2sid)
    for s in ${systems}; do
        read -r feat opts <<< "$(system_conf "${s}")"
        log "Stage 4: train ${s} (${feat}, ${opts}) -> exp/${s} (queued, ${nj} at a time: exp/${s}/train.log)"
        d=dump/${feat}/train
        require "${d}/tr.scp" "stage 2 (features)"
        dim=$(head -1 "${d}/feats.shape" | cut -d' ' -f2 | cut -d, -f2)
        train_pool train_net "${conf}" "exp/${s}" ${opts} --model_conf "idim=${dim}" --model_conf "num_speakers=${nspk}" \
            --train_data_path_and_name_and_type "${d}/tr.scp,feats,kaldi_ark" \
            --train_data_path_and_name_and_type "dump/train_utt2sid,sids,text_int" \
            --valid_data_path_and_name_and_type "${d}/cv.scp,feats,kaldi_ark" \
            --valid_data_path_and_name_and_type "dump/train_utt2sid,sids,text_int" \
            --train_shape_file "${d}/tr.shape" --valid_shape_file "${d}/cv.shape"
    done
    pool_wait  # nj systems at a time (one thread each): same models as one by one, in about 1/nj of the time
fi

if stage_enabled 5; then
    for s in ${systems}; do
        read -r feat _ <<< "$(system_conf "${s}")"
        for x in ${test_sets}; do
            test_feats "${feat}" "${x}"
            log "Stage 5: encode ${x} with ${s} -> exp/${s}/codes_${x}"
            blist=""
            [ -f "data/${x}/bitrate_list" ] && blist="--bitrate-list data/${x}/bitrate_list"
            # durations of the audio as read (data/<set>/utt2dur need not exist for a user's set)
            decode_pool run_logged "exp/${s}/codes_${x}" ${decode_launch} "exp/${s}/log/encode_${x}.log" \
                python -m local_models.bin.vqvae_extract --model-dir "exp/${s}" --model-file "${inference_model}" \
                    --ngpu "${inference_ngpu}" --utt2dur "dump/${feat}/${x}/utt2dur" ${blist} ${inference_args} \
                    "dump/${feat}/${x}/feats.scp" "exp/${s}/codes_${x}"
        done
    done
    pool_wait
fi

if stage_enabled 6; then
    ref=""
    [ "${abx_reference}" = true ] && ref="--reference"
    for x in ${test_sets}; do
        # a set that stage 3 never saw: its items now
        [ -f "data/${x}/abx.item" ] || [ ! -f "data/${x}/phones.ctm" ] || make_items "${x}"
        [ -f "data/${x}/abx.item" ] || { log "Stage 6: no data/${x}/abx.item: no ABX for ${x}"; continue; }
        test_feats mfcc "${x}"
        log "Stage 6: ABX on ${x}: raw MFCC reference row and every system (ours${ref:+ + zerospeech-libriabx2})"
        # librosa frames are centred at t * 10 ms; codes at 40 t + 15 ms (model.py)
        python -m local_models.bin.vqvae_abx --feats "dump/mfcc/${x}/feats.scp" --items "data/${x}/abx.item" \
            --frame-shift 0.01 --frame-offset 0 ${ref} --json "exp/mfcc_baseline/abx_${x}.json"
        for s in ${systems}; do
            python -m local_models.bin.vqvae_abx --feats "exp/${s}/codes_${x}/codes" \
                --codebook "exp/${s}/codes_${x}/codebook.npy" --items "data/${x}/abx.item" \
                --frame-shift 0.04 --frame-offset 0.015 ${ref} --json "exp/${s}/abx_${x}.json"
        done
    done
fi

inv=exp/inverter_${inverter_system}
# one inverter per target voice (speakers of data/voice: V001 in the mini corpus, V001 + V002 in ZeroSpeech 2019)
voices=$( [ -f data/voice/spk2utt ] && cut -d' ' -f1 data/voice/spk2utt | tr '\n' ' ' || true)
if stage_enabled 7; then
    conf=conf/tuning/train_inverter${train_config_suffix}.yaml
    require "${conf}" "a training config"
    read -r feat _ <<< "$(system_conf "${inverter_system}")"
    require "exp/${inverter_system}/${inference_model}" "stage 4 (VQ-VAE training)"
    for v in ${voices}; do
        log "Stage 7: codebook inverter over ${inverter_system}'s codes, target voice ${v} -> ${inv}/${v}"
        lists=${inv}/${v}/lists
        mkdir -p "${lists}"
        for part in tr cv; do  # this voice's utterances (speaker = id prefix) -> ${lists}/{<feat>,spec}_<part>.*
            for f in ${feat}/voice/${part}.scp ${feat}/voice/${part}.shape spec/voice/${part}.scp; do
                awk -v v="${v}" 'index($1, v "_") == 1' "dump/${f}" > "${lists}/${f%%/*}_${f##*/}"
            done
        done
        train_net "${conf}" "${inv}/${v}" --model_conf "vqvae_config=exp/${inverter_system}/config.yaml" \
            --model_conf "vqvae_model=exp/${inverter_system}/${inference_model}" \
            --model_conf "n_bins=$(head -1 dump/spec/voice/feats.shape | cut -d' ' -f2 | cut -d, -f2)" \
            --train_data_path_and_name_and_type "${lists}/${feat}_tr.scp,feats,kaldi_ark" \
            --train_data_path_and_name_and_type "${lists}/spec_tr.scp,spec,kaldi_ark" \
            --valid_data_path_and_name_and_type "${lists}/${feat}_cv.scp,feats,kaldi_ark" \
            --valid_data_path_and_name_and_type "${lists}/spec_cv.scp,spec,kaldi_ark" \
            --train_shape_file "${lists}/${feat}_tr.shape" --valid_shape_file "${lists}/${feat}_cv.shape"
    done
fi

if stage_enabled 8; then
    read -r feat _ <<< "$(system_conf "${inverter_system}")"
    first_voice=${voices%% *}
    for x in ${test_sets}; do
        out=${inv}/resynth_${x}
        test_feats "${feat}" "${x}"
        # <utt> <voice>: the synthesis list, else every utterance in the first voice
        mkdir -p "${inv}"
        if [ -f "data/${x}/synthesis_list" ]; then
            awk -v d="${first_voice}" '{print $1, (NF > 1 ? $2 : d)}' "data/${x}/synthesis_list"
        else
            awk -v d="${first_voice}" '{print $1, d}' "dump/${feat}/${x}/feats.scp"
        fi > "${inv}/synthesis_list_${x}.tmp"
        rm -rf "${out}"; mkdir -p "${out}"; mv "${inv}/synthesis_list_${x}.tmp" "${out}/synthesis_list"
        for v in $(awk '{print $2}' "${out}/synthesis_list" | LC_ALL=C sort -u); do
            [ -f "${inv}/${v}/${inference_model}" ] || die "data/${x}/synthesis_list asks for voice ${v}: no inverter ${inv}/${v} (voices: ${voices})"
            log "Stage 8: resynthesise ${x} in the target voice ${v} -> ${out}/${v}/wav"
            awk -v v="${v}" '$2 == v' "${out}/synthesis_list" > "${out}/list_${v}"
            run_logged "${out}/${v}" ${decode_launch} "${out}/${v}/resynth.log" \
                python -m local_models.bin.vqvae_resynth --model-dir "${inv}/${v}" --model-file "${inference_model}" \
                --ngpu "${inference_ngpu}" --utt-list "${out}/list_${v}" --griffin-lim-iters "${griffin_lim_iters}" \
                "dump/${feat}/${x}/feats.scp" "${out}/${v}"
        done
        cat "${out}"/*/wav.scp | LC_ALL=C sort > "${out}/wav.scp"
        if [ -f "data/${x}/voice_ref.scp" ]; then
            python -m local_models.bin.mcd_score --ref "data/${x}/voice_ref.scp" --hyp "${out}/wav.scp" \
                --json "${out}/mcd.json" --per-utt "${out}/mcd_per_utt.tsv"
            # reference point: the test speaker's own recording against the target voice (no conversion at all)
            awk 'NR == FNR {keep[$1]; next} $1 in keep' "${out}/wav.scp" "data/${x}/wav.scp" > "${out}/source_wav.scp"
            python -m local_models.bin.mcd_score --ref "data/${x}/voice_ref.scp" --hyp "${out}/source_wav.scp" \
                --json "${out}/mcd_source.json"
        fi
    done
fi

if stage_enabled 9; then
    log "Stage 9: scoring -> exp/results.json, RESULTS.md, exp/images/"
    run_logged exp/score python -m local_models.bin.vqvae_score --corpus "${corpus}" --systems ${systems} \
        --sets ${test_sets} --inverter "${inv}"
fi
log "Done (stages ${stage}-${stop_stage})"
