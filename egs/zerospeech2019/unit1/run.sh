#!/usr/bin/env bash
# ZeroSpeech 2019 (paper 003, Tjandra et al.): Transformer VQ-VAE unit discovery + codebook inverter.
# Stages: 1 data (ZeroSpeech 2019 English via db.sh, else the espeak-ng English mini corpus)
#         2 features (librosa, 25 ms / 10 ms: MFCC 13+d+dd, 80 log-mel; linear magnitude for the inverter;
#           5 % of train / voice held out as the trainer's validation set)
#         3 ABX item file of the test set (triphone contexts, across speaker) from its phone alignments
#         4 train the VQ-VAE of every system in ${systems}, nj at a time (ESPnet2 trainer -> exp/<system>; resumes)
#         5 encode the test sets: codes, codebook, bitrate (exp/<system>/codes_<set>)
#         6 ABX (ours + zerospeech-libriabx2) of the raw MFCC reference and every system
#         7 train a codebook inverter per target voice (speakers of data/voice) over ${inverter_system}'s codes
#         8 resynthesise the synthesis list in its target voices (inverter + Griffin-Lim) -> exp/inverter_<system>/
#           resynth_<set>/<voice>/wav; MCD and log-F0 RMSE against a reference rendition (mini corpus) and the source's
#         9 score: exp/results.json, RESULTS.md (paper Tables 1-3 shapes), exp/images/
#        10 pack every system and the inverter: exp/{<system>,inverter_<system>}/packed/model.tar.gz (the
#           `speech-to-units` / `units-to-speech` commands and local_models.vqvae.inference take them)
# Any data dir with a wav.scp (any rate: resampled to 16 kHz) can be encoded, its bitrate measured (ABX too with a
# phones.ctm or abx.item) and resynthesised: ./run.sh --stage 5 --test-sets "my_set" (features and items made then).
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh

stage=1
stop_stage=10
nj=2  # parallel jobs: feature extraction, encoding, VQ-VAE trainings (one thread each)
test_sets="test"
# systems: names (trf|conv)_(mfcc|logmel)_k<K>[_s<lambda>][_j<p>][_seed<N>] and presets (local/lib.sh): "tables"
# (every row of paper Tables 1-3), "default" (tables + 5 seeds of the three systems the ordering check compares),
# "seeds15" (default + 15 seeds of the K 256 pair: the landed RESULTS.md)
systems=default
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
results_md=RESULTS.md   # where stage 9 writes the tables (local/demo.sh: exp/demo/, leaving the committed one alone)
. parse_options.sh
setup_devices
. local/lib.sh  # check_systems, system_conf, extract, holdout, train_vqvae, encode, abx, train_inverter, resynth, ...
check_systems

corpus=$(corpus_name ZEROSPEECH2019 zs2019)
feat_sets=$(echo "train voice ${test_sets}" | tr ' ' '\n' | awk 'NF && !seen[$0]++' | tr '\n' ' ')

if stage_enabled 1; then
    log "Stage 1: data -> data/{train,voice,test} (corpus: ${corpus})"
    local/data.sh --unit-min "${unit_min}" --voice-min "${voice_min}" --test-min "${test_min}" --seed "${seed}" --nj "${nj}"
    for x in train voice test; do validate_data_dir --no-text --no-feats "data/${x}"; done
fi

if stage_enabled 2; then
    log "Stage 2: features -> dump/{mfcc,logmel}/<set>, dump/spec/voice; speaker ids -> dump/train_utt2sid"
    check_data_dirs ${feat_sets}
    for feat in mfcc logmel; do
        for x in ${feat_sets}; do extract "${feat}" "${x}"; done
        holdout "dump/${feat}/train"
    done
    extract spec voice
    for feat in mfcc logmel spec; do [ -f "dump/${feat}/voice/feats.scp" ] && holdout "dump/${feat}/voice"; done
    speaker_ids  # dump/train_{spk2sid,utt2sid}
fi

if stage_enabled 3; then
    for x in ${test_sets}; do test_items "${x}"; done
fi

if stage_enabled 4; then
    conf=conf/tuning/train_vqvae${train_config_suffix}.yaml; require "${conf}" "a training config"
    nspk=$(wc -l < dump/train_spk2sid)
    for s in ${systems}; do
        read -r feat opts <<< "$(system_conf "${s}")"
        log "Stage 4: train ${s} (${feat}, ${opts}) -> exp/${s} (queued, ${nj} at a time: exp/${s}/train.log)"
        train_vqvae "${conf}" "${s}" "${feat}" "${opts}" "${nspk}"
    done
    pool_wait  # nj systems at a time (one thread each): same models as one by one, in about 1/nj of the time
fi

if stage_enabled 5; then
    for s in ${systems}; do
        read -r feat _ <<< "$(system_conf "${s}")"
        for x in ${test_sets}; do
            test_feats "${feat}" "${x}"
            log "Stage 5: encode ${x} with ${s} -> exp/${s}/codes_${x}"
            encode "${s}" "${feat}" "${x}"
        done
    done
    pool_wait
fi

if stage_enabled 6; then
    ref=""; [ "${abx_reference}" = true ] && ref="--reference"
    for x in ${test_sets}; do
        # a set that stage 3 never saw: its items now
        [ -f "data/${x}/abx.item" ] || [ ! -f "data/${x}/phones.ctm" ] || make_items "${x}"
        [ -f "data/${x}/abx.item" ] || { log "Stage 6: no data/${x}/abx.item: no ABX for ${x}"; continue; }
        test_feats mfcc "${x}"
        log "Stage 6: ABX on ${x}: raw MFCC reference row and every system (ours${ref:+ + zerospeech-libriabx2})"
        abx "${x}" "${ref}"
    done
fi

inv=exp/inverter_${inverter_system}
# one inverter per target voice (speakers of data/voice: V001 in the mini corpus, V001 + V002 in ZeroSpeech 2019)
voices=$( [ -f data/voice/spk2utt ] && cut -d' ' -f1 data/voice/spk2utt | tr '\n' ' ' || true)
if stage_enabled 7; then
    conf=conf/tuning/train_inverter${train_config_suffix}.yaml; require "${conf}" "a training config"
    read -r feat _ <<< "$(system_conf "${inverter_system}")"
    require "exp/${inverter_system}/${inference_model}" "stage 4 (VQ-VAE training)"
    for v in ${voices}; do
        log "Stage 7: codebook inverter over ${inverter_system}'s codes, target voice ${v} -> ${inv}/${v}"
        train_inverter "${conf}" "${feat}" "${v}"
    done
fi

if stage_enabled 8; then
    read -r feat _ <<< "$(system_conf "${inverter_system}")"
    for x in ${test_sets}; do
        out=${inv}/resynth_${x}
        test_feats "${feat}" "${x}"
        synthesis_list "${feat}" "${x}" "${out}"
        for v in $(awk '{print $2}' "${out}/synthesis_list" | LC_ALL=C sort -u); do
            [ -f "${inv}/${v}/${inference_model}" ] || die "data/${x}/synthesis_list asks for voice ${v}: no inverter ${inv}/${v} (voices: ${voices})"
            log "Stage 8: resynthesise ${x} in the target voice ${v} -> ${out}/${v}/wav"
            resynth "${feat}" "${x}" "${out}" "${v}"
        done
        cat "${out}"/*/wav.scp | LC_ALL=C sort > "${out}/wav.scp"
        [ ! -f "data/${x}/voice_ref.scp" ] || resynth_mcd "${x}" "${out}"
    done
fi

if stage_enabled 9; then
    log "Stage 9: scoring -> exp/results.json, ${results_md}, exp/images/"
    run_logged exp/score python -m local_models.bin.vqvae_score --corpus "${corpus}" --systems ${systems} \
        --sets ${test_sets} --inverter "${inv}" --results-md "${results_md}"
fi

if stage_enabled 10; then
    log "Stage 10: pack ${systems} and ${inv#exp/} -> exp/<system>/packed/model.tar.gz"
    for s in ${systems} ${inv#exp/}; do pack_system vqvae "${s}"; done
fi
log "Done (stages ${stage}-${stop_stage})"
