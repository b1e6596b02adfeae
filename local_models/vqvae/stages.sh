#!/usr/bin/env bash
# Stages of the Transformer VQ-VAE (paper 003, Tjandra et al.: Transformer VQ-VAE for unsupervised subword discovery,
# with a codebook inverter for speech synthesis; package local_models/vqvae) on any corpus:
#  1 data: the corpus's local/data.sh ${local_data_opts} -> data/{train,voice,test} (train: unit-discovery speech,
#    the target voices' too; voice: the target voices alone, one speaker (utt2spk) each; test: unseen speakers)
#  2 features (librosa, 16 kHz, 25 ms / 10 ms: MFCC 13+d+dd, 80 log-mel; linear magnitude of data/voice for the
#    inverter; 5 % of train / voice held out as the trainer's validation set) -> dump/<feat>/<set>, dump/train_utt2sid
#  3 ABX item file of the dev set and each test set (triphone contexts, across speaker) from its phone alignments
#    (phones.ctm)
#  4 train the VQ-VAE of every system in ${systems}, nj at a time (ESPnet2 trainer -> exp/<system>; resumes)
#  5 encode the test sets with every system, the dev set with the ordering check's candidates: codes, codebook,
#    bitrate (exp/<system>/codes_<set>)
#  6 ABX of the raw MFCC reference and of the encoded sets: ours on dev; ours + zerospeech-libriabx2 on the test sets
#  7 train a codebook inverter per target voice (speakers of data/voice) over ${inverter_system}'s codes
#  8 resynthesise each test set's synthesis list in its target voices (inverter + Griffin-Lim) ->
#    exp/inverter_<system>/resynth_<set>/<voice>/wav; MCD and log-F0 RMSE against a reference rendition
#    (data/<set>/voice_ref.scp, where the corpus has one) and the source's
#  9 score: exp/results.json, ${results_md} (paper Tables 1-3 shapes), exp/images/; each of ${sealed_sets} scored
#    is a look, counted in exp/sealed_looks.tsv under the configuration's fingerprint (results.json "sealed_looks")
# 10 pack every system and the inverter: exp/{<system>,inverter_<system>}/packed/model.tar.gz (the
#    `speech-to-units` / `units-to-speech` commands and local_models.vqvae.inference take them)
# 11 ZeroSpeech 2019 submission of ${inverter_system} per test set -> exp/submission_<set>/ (the ZeroSpeech 2020
#    layout of the 2019 track: metadata.yaml, 2019/{metadata.yaml,code/,english/test/}: <utt>.txt per test
#    utterance, one code embedding a frame; <voice>_<id>.wav per synthesis-list line), validated
# Any data dir with a wav.scp (any rate: resampled to 16 kHz) can be encoded, its bitrate measured (ABX too with a
# phones.ctm or abx.item) and resynthesised: ./run.sh --stage 5 --test-sets "my_set" (features and items made then).
# Optional files of a test set: phones.ctm or abx.item (ABX), bitrate_list (the utterances the bitrate is measured
# on), synthesis_list ("<utt> [<voice>]": what stage 8 resynthesises), voice_ref.scp (stage 8's MCD reference),
# abx_na (one line: why a set without phone times has no ABX; stage 9 then reports ABX n/a, the bitrate checks and
# the data used instead of the ABX tables).
# Sealed sets (${sealed_sets}, default the test set): only scored, never chosen on. The systems, the inverter system
# and the ordering check's Transformer candidates (systems.py COMPARED) are declared; the one choice made on data,
# which candidate is compared with the conv baseline, is made on ${dev_set}'s ABX (the mini corpus's data/dev:
# unseen speakers apart from the test's). ZeroSpeech 2019 has no dev ABX set: there stage 9 compares every
# candidate (Bonferroni) and picks none.
# Use: a recipe's run.sh sources this file after path.sh and cmd.sh, sets its corpus's values of these options
# (corpus, local_data_opts, ...), sources parse_options.sh, then calls run_stages. It runs in the recipe dir (data/,
# dump/, exp/, conf/tuning/train_{vqvae,inverter}${train_config_suffix}.yaml, local/data.sh).

# shellcheck disable=SC2086  # (the whole file) word lists are split on purpose: options, launchers, system names
option_files+=("${BASH_SOURCE[0]}")

stage=1
stop_stage=11
nj=2  # parallel jobs: feature extraction, encoding, VQ-VAE trainings (one thread each)
test_sets="test"
dev_set=dev         # where the ordering check's candidate is picked (encoded and ABX'd by the candidates, never
                    # resynthesised; never a sealed set nor a test set); "" none: every candidate compared on test,
                    # none picked (what a corpus without a dev ABX set does: ZeroSpeech 2019, the real corpus)
sealed_sets="test"  # sets that are only scored (never chosen on): stage 9 counts each scoring as a look
# systems: names (trf|conv)_(mfcc|logmel)_k<K>[_s<lambda>][_j<p>][_seed<N>] and presets (expand_systems): "tables"
# (every row of paper Tables 1-3), "default" (tables + 5 seeds of the three systems the ordering check compares),
# "seeds15" (default + 15 seeds of the K 256 pair: the landed RESULTS.md)
systems=default
inverter_system=trf_mfcc_k128_s5e-3_j0.05  # the paper's submitted system (Table 3, star)
train_config_suffix=_tiny  # conf/tuning/train_{vqvae,inverter}${suffix}.yaml: "" paper size, _tiny mini corpus, _smoke tests
corpus=mini   # the corpus's name in exp/results.json, RESULTS.md and the packed models' cards
local_data_opts=""  # options of stage 1's local/data.sh (the corpus's own)
seed=0
griffin_lim_iters=60
mcd_f0_method=harvest   # WORLD F0 of stage 8's MCD analysis: harvest (ESPnet's evaluate_mcd), dio (~50x faster)
abx_reference=true  # also run zerospeech-libriabx2 on the same inputs
ngpu=$(default_ngpu)    # GPUs per training job (0: CPU; > 1: ESPnet2's DDP); default 1 when nvidia-smi lists a GPU
dist_world_size=1       # --ngpu 0: training processes per model (> 1: CPU DDP, torchrun + gloo; utils/stage_lib.sh)
gpu_inference=false     # encode and resynthesise on a GPU (through cuda_cmd)
inference_nj=2          # encoding jobs at a time (systems x test sets)
inference_model=valid.loss.best.pth  # checkpoint that encodes / inverts: valid.loss.best.pth, valid.loss.ave.pth, latest.pth
train_args=""           # extra ESPnet2 training options (VQ-VAE and inverter), verbatim (they win), e.g. "--max_epoch 1"
inference_args=""       # extra vqvae_extract options, verbatim
results_md=RESULTS.md   # where stage 9 writes the tables (local/demo.sh: exp/demo/, leaving the committed one alone)
submission_author="${USER:-unknown}"  # stage 11's metadata.yaml: author, affiliation, units
submission_affiliation=unknown
submission_units=embedding  # a frame's line: its code's embedding (embedding) or one-hot vector (one-hot)

# System names: (trf|conv)_(mfcc|logmel)_k<K>[_s<lambda>][_j<p>][_seed<N>]: encoder, input features, codebook
# size, temporal smoothing weight, jitter probability. A "_seed<N>" suffix trains a replicate of a system with
# training seed N: RESULTS.md gives the mean and sd over <system> (seed ${seed}) and its replicates, and compares
# conv and Transformer by those means. At the tiny budget one seed's ABX moves by several points (conv_mfcc_k256:
# 31.6 / 22.9 / 29.3 % for seeds 0 / 1 / 2 in one run), so the systems the acceptance compares get five seeds each
# in the default: the conv baseline (K 256), the paper's Transformer (K 128, a 7.5 % lower bitrate: 170.42 vs
# 184.32 bits/s) and the Transformer at the conv's own codebook size (K 256, the same bitrate). With 5 seeds a side
# the 95 % interval of the difference is ~7 points wide: it cannot tell the paper's gap from 0; "seeds15" gives the
# K 256 pair 15 seeds each (40 min more of stage 4 on 2 cores).
# Presets (words of --systems, expanded by expand_systems; names may be mixed in):
#   tables   every row of paper Tables 1-3, one seed each (a GPU run at paper size)
#   default  tables + seeds 1-4 of the three compared systems (the default of --systems)
#   seeds15  default + seeds 5-14 of trf_mfcc_k256 and conv_mfcc_k256

# The names live in local_models/vqvae/systems.py (grammar, presets, paper rows); the shell asks it.
vqvae_systems() {
    python -m local_models.vqvae.systems "$@"
}

# expand_systems WORD...: the system names of --systems, its presets expanded (each name once, in order)
expand_systems() {
    vqvae_systems expand "$@"
}

# check_systems SYSTEM...: fail before any work on a malformed system name (or --inverter-system) or an inverter
# system that is not among SYSTEM... (the expanded --systems)
check_systems() {
    vqvae_systems check "${inverter_system}" "$@" || die "bad --systems / --inverter-system (above)"
}

# system_conf SYSTEM: "<feat> <espnet options>" of a system name
system_conf() {
    vqvae_systems conf "$1"
}

# dev_sets: ${dev_set} (nothing when it is ""); its data dir must exist (stage 1 of the mini corpus makes it)
dev_sets() {
    [ -n "${dev_set}" ] || return 0
    require "data/${dev_set}/wav.scp" "stage 1 (it makes the mini corpus's dev set; or --dev_set \"\": no pick)"
    echo "${dev_set}"
}

# check_dev_set: stop before any work when the set the candidate is picked on is sealed or a test set
check_dev_set() {
    [ -n "${dev_set}" ] || return 0
    python -m local_models.common.sealed check --tuning "${dev_set}" --sealed "${sealed_sets} ${test_sets}" \
        --what "--dev_set (the ordering check's candidate is picked on it)" || exit 1
}

# systems_of SET SYSTEM...: the SYSTEMs that encode SET: every one for a test set; for the dev set the ordering
# check's candidates and their replicates (the pick needs no other)
systems_of() {
    local x=$1; shift
    if [ -n "${x}" ] && [ "${x}" = "$(dev_sets)" ]; then vqvae_systems dev "$@"; else echo "$@"; fi
}

# scored_sets: the sets encoded and ABX'd: the dev set, then the test sets (each once)
scored_sets() {
    echo "$(dev_sets) ${test_sets}" | tr ' ' '\n' | awk 'NF && !seen[$0]++' | tr '\n' ' '
}

# feature_sets: the data sets stage 2 extracts: train, voice, the dev set and the test sets (each once)
feature_sets() {
    echo "train voice $(scored_sets)" | tr ' ' '\n' | awk 'NF && !seen[$0]++' | tr '\n' ' '
}

# inverter_dir: exp dir of the codebook inverters (one sub-dir per target voice)
inverter_dir() {
    echo "exp/inverter_${inverter_system}"
}

# target_voices: the target voices, speakers of data/voice (V001 in the mini corpus, V001 + V002 in ZeroSpeech 2019)
target_voices() {
    if [ -f data/voice/spk2utt ]; then cut -d' ' -f1 data/voice/spk2utt | tr '\n' ' '; fi
}

# extract FEAT SET...: features of each data/SET -> dump/FEAT/SET/{feats.scp,feats.shape,utt2dur,utt2num_frames}
# (one make_feats call for the sets not up to date: its jobs pay their start-up once for all of them;
# local_models/vqvae/frontend.py RECIPE_FEATURES holds the same settings for packed models)
extract() {
    local feat=$1 x opts pairs=(); shift
    case ${feat} in
        mfcc) opts="--kind mfcc --n-mfcc 13 --deltas 2" ;;
        logmel) opts="--kind logmel --n-mels 80" ;;
        spec) opts="--kind stft --n-fft 512" ;;
        *) die "extract: unknown feature '${feat}' (mfcc, logmel, spec)" ;;
    esac
    for x in "$@"; do
        # up to date: a rerun for new --test-sets does not redo the training sets
        if up_to_date "dump/${feat}/${x}/feats.scp" "data/${x}/wav.scp" \
                && up_to_date "dump/${feat}/${x}/feats.shape" "data/${x}/wav.scp"; then
            continue
        fi
        pairs+=("data/${x}" "dump/${feat}/${x}")
    done
    [ "${#pairs[@]}" -eq 0 ] || make_feats --nj "${nj}" --cmd "${decode_cmd}" "${pairs[@]}" ${opts} \
        --sample-rate 16000 --win-ms 25 --hop-ms 10
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

# test_items SET: stage 3 for one test set: its ABX items from phones.ctm, else a note when it has no abx.item
test_items() {
    if [ -f "data/$1/phones.ctm" ]; then
        make_items "$1"
    elif [ ! -f "data/$1/abx.item" ]; then
        log "Stage 3: $1 has no phones.ctm and no abx.item: its ABX will not be computed (bitrate only)"
    fi
}

# check_data_dirs SET...: every data/SET exists (a wav.scp) and is a valid data dir
check_data_dirs() {
    local x
    for x in "$@"; do
        require "data/${x}/wav.scp" "stage 1 (data) or your own data dir with a wav.scp"
        validate_data_dir --no-text --no-feats "data/${x}"
    done
}

# speaker_ids: speaker index of every training utterance (the decoder's speaker embedding) -> dump/train_utt2sid
speaker_ids() {
    awk '{print $2}' data/train/utt2spk | LC_ALL=C sort -u | awk '{print $1, NR - 1}' > dump/train_spk2sid
    awk 'NR == FNR {sid[$1] = $2; next} {print $1, sid[$2]}' dump/train_spk2sid data/train/utt2spk > dump/train_utt2sid
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

# train_net CONF OUT [ESPnet options...]: a VQ-VAE or an inverter (the task picks by the config)
train_net() {
    local conf=$1 out=$2; shift 2
    espnet_train "${out}" vqvae_train --config "${conf}" "$@"
}

# train_vqvae CONF SYSTEM FEAT "OPTS" NSPK: queue the VQ-VAE training of SYSTEM on dump/FEAT/train (train_pool)
train_vqvae() {
    local conf=$1 s=$2 feat=$3 opts=$4 nspk=$5 d dim
    d=dump/${feat}/train
    require "${d}/tr.scp" "stage 2 (features)"
    dim=$(head -1 "${d}/feats.shape" | cut -d' ' -f2 | cut -d, -f2)
    train_pool train_net "${conf}" "exp/${s}" ${opts} --model_conf "idim=${dim}" --model_conf "num_speakers=${nspk}" \
        --train_data_path_and_name_and_type "${d}/tr.scp,feats,kaldi_ark" \
        --train_data_path_and_name_and_type "dump/train_utt2sid,sids,text_int" \
        --valid_data_path_and_name_and_type "${d}/cv.scp,feats,kaldi_ark" \
        --valid_data_path_and_name_and_type "dump/train_utt2sid,sids,text_int" \
        --train_shape_file "${d}/tr.shape" --valid_shape_file "${d}/cv.shape"
}

# encode SYSTEM FEAT SET: queue the encoding of SET with SYSTEM (decode_pool) -> exp/SYSTEM/codes_SET
encode() {
    local s=$1 feat=$2 x=$3 blist=""
    [ -f "data/${x}/bitrate_list" ] && blist="--bitrate-list data/${x}/bitrate_list"
    # durations of the audio as read (data/<set>/utt2dur need not exist for a user's set)
    decode_pool run_logged "exp/${s}/codes_${x}" ${decode_launch} "exp/${s}/log/encode_${x}.log" \
        python -m local_models.bin.vqvae_extract --model-dir "exp/${s}" --model-file "${inference_model}" \
            --ngpu "${inference_ngpu}" --utt2dur "dump/${feat}/${x}/utt2dur" ${blist} ${inference_args} \
            "dump/${feat}/${x}/feats.scp" "exp/${s}/codes_${x}"
}

# abx SET "REF" SYSTEM...: ABX of the raw MFCC reference row and of every system's codes on SET (REF: "" or
# --reference)
abx() {
    local x=$1 ref=$2 s; shift 2
    # librosa frames are centred at t * 10 ms; codes at 40 t + 15 ms (model.py)
    python -m local_models.bin.vqvae_abx --feats "dump/mfcc/${x}/feats.scp" --items "data/${x}/abx.item" \
        --frame-shift 0.01 --frame-offset 0 ${ref} --json "exp/mfcc_baseline/abx_${x}.json"
    for s in "$@"; do
        python -m local_models.bin.vqvae_abx --feats "exp/${s}/codes_${x}/codes" \
            --codebook "exp/${s}/codes_${x}/codebook.npy" --items "data/${x}/abx.item" \
            --frame-shift 0.04 --frame-offset 0.015 ${ref} --json "exp/${s}/abx_${x}.json"
    done
}

# train_inverter CONF FEAT VOICE: the codebook inverter of target voice VOICE over ${inverter_system}'s codes
train_inverter() {
    local conf=$1 feat=$2 v=$3 inv lists part f
    inv=$(inverter_dir); lists=${inv}/${v}/lists
    mkdir -p "${lists}"
    for part in tr cv; do  # this voice's utterances (data/voice/utt2spk) -> ${lists}/{<feat>,spec}_<part>.*
        for f in ${feat}/voice/${part}.scp ${feat}/voice/${part}.shape spec/voice/${part}.scp; do
            awk -v v="${v}" 'NR == FNR {if ($2 == v) keep[$1]; next} $1 in keep' data/voice/utt2spk "dump/${f}" \
                > "${lists}/${f%%/*}_${f##*/}"
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
}

# synthesis_list FEAT SET OUT FIRST_VOICE: OUT (emptied) /synthesis_list, "<utt> <voice>": data/SET/synthesis_list,
# else every utterance of SET in FIRST_VOICE (also the voice of a list line that names none)
synthesis_list() {
    local feat=$1 x=$2 out=$3 first_voice=${4:-} inv
    inv=$(inverter_dir)
    mkdir -p "${inv}"
    if [ -f "data/${x}/synthesis_list" ]; then
        awk -v d="${first_voice}" '{print $1, (NF > 1 ? $2 : d)}' "data/${x}/synthesis_list"
    else
        awk -v d="${first_voice}" '{print $1, d}' "dump/${feat}/${x}/feats.scp"
    fi > "${inv}/synthesis_list_${x}.tmp"
    rm -rf "${out}"; mkdir -p "${out}"; mv "${inv}/synthesis_list_${x}.tmp" "${out}/synthesis_list"
}

# resynth FEAT SET OUT VOICE: OUT/VOICE/wav from VOICE's inverter, for the utterances the list gives VOICE
resynth() {
    local feat=$1 x=$2 out=$3 v=$4 inv
    inv=$(inverter_dir)
    awk -v v="${v}" '$2 == v' "${out}/synthesis_list" > "${out}/list_${v}"
    run_logged "${out}/${v}" ${decode_launch} "${out}/${v}/resynth.log" \
        python -m local_models.bin.vqvae_resynth --model-dir "${inv}/${v}" --model-file "${inference_model}" \
        --ngpu "${inference_ngpu}" --utt-list "${out}/list_${v}" --griffin-lim-iters "${griffin_lim_iters}" \
        "dump/${feat}/${x}/feats.scp" "${out}/${v}"
}

# resynth_mcd SET OUT: MCD / log-F0 RMSE of OUT/wav.scp against the reference rendition data/SET/voice_ref.scp, and
# the reference point: the test speaker's own recording against the target voice (no conversion at all)
resynth_mcd() {
    local x=$1 out=$2
    python -m local_models.bin.mcd_score --ref "data/${x}/voice_ref.scp" --hyp "${out}/wav.scp" \
        --f0-method "${mcd_f0_method}" --json "${out}/mcd.json" --per-utt "${out}/mcd_per_utt.tsv"
    awk 'NR == FNR {keep[$1]; next} $1 in keep' "${out}/wav.scp" "data/${x}/wav.scp" > "${out}/source_wav.scp"
    python -m local_models.bin.mcd_score --ref "data/${x}/voice_ref.scp" --hyp "${out}/source_wav.scp" \
        --f0-method "${mcd_f0_method}" --json "${out}/mcd_source.json"
}

# stage_data: stage 1, the corpus's local/data.sh -> data/{train,voice,test}
stage_data() {
    local x
    log "Stage 1: data -> data/{train,voice,test}${dev_set:+ and data/${dev_set}} (corpus: ${corpus})"
    local/data.sh ${local_data_opts}
    for x in train voice test $(dev_sets); do validate_data_dir --no-text --no-feats "data/${x}"; done
}

# stage_features SET...: stage 2, features of SET... (train, voice and the test sets) and the speaker ids
stage_features() {
    local feat x
    log "Stage 2: features -> dump/{mfcc,logmel}/<set>, dump/spec/voice; speaker ids -> dump/train_utt2sid"
    check_data_dirs "$@"
    for feat in mfcc logmel; do
        extract "${feat}" "$@"
        holdout "dump/${feat}/train"
    done
    extract spec voice
    for feat in mfcc logmel spec; do
        if [ -f "dump/${feat}/voice/feats.scp" ]; then holdout "dump/${feat}/voice"; fi
    done
    speaker_ids  # dump/train_{spk2sid,utt2sid}
}

# stage_train SYSTEM...: stage 4, the VQ-VAE of every SYSTEM, nj at a time
stage_train() {
    local conf=conf/tuning/train_vqvae${train_config_suffix}.yaml nspk s feat opts
    require "${conf}" "a training config"
    nspk=$(wc -l < dump/train_spk2sid)
    for s in "$@"; do
        read -r feat opts <<< "$(system_conf "${s}")"
        log "Stage 4: train ${s} (${feat}, ${opts}) -> exp/${s} (queued, ${nj} at a time: exp/${s}/train.log)"
        train_vqvae "${conf}" "${s}" "${feat}" "${opts}" "${nspk}"
    done
    pool_wait  # nj systems at a time (one thread each): same models as one by one, in about 1/nj of the time
}

# stage_encode SYSTEM...: stage 5, every test set encoded by every SYSTEM, the dev set by the candidates among them
stage_encode() {
    local s x feat dev on_dev
    dev=$(dev_sets); on_dev=" $(systems_of "${dev}" "$@") "
    for s in "$@"; do
        read -r feat _ <<< "$(system_conf "${s}")"
        for x in $(scored_sets); do
            [ "${x}" != "${dev}" ] || [[ "${on_dev}" == *" ${s} "* ]] || continue
            test_feats "${feat}" "${x}"
            log "Stage 5: encode ${x} with ${s} -> exp/${s}/codes_${x}"
            encode "${s}" "${feat}" "${x}"
        done
    done
    pool_wait
}

# stage_abx SYSTEM...: stage 6, ABX of the raw MFCC reference and every SYSTEM on the dev set and every test set
# with items (zerospeech-libriabx2, a check of our ABX, on the test sets only: dev needs our number for the pick)
stage_abx() {
    local ref x dev names
    dev=$(dev_sets)
    for x in $(scored_sets); do
        ref=""
        [ "${abx_reference}" = true ] && [ "${x}" != "${dev}" ] && ref="--reference"
        # a set that stage 3 never saw: its items now
        [ -f "data/${x}/abx.item" ] || [ ! -f "data/${x}/phones.ctm" ] || make_items "${x}"
        [ -f "data/${x}/abx.item" ] || { log "Stage 6: no data/${x}/abx.item: no ABX for ${x}"; continue; }
        test_feats mfcc "${x}"
        log "Stage 6: ABX on ${x}: raw MFCC reference row and its systems (ours${ref:+ + zerospeech-libriabx2})"
        names=$(systems_of "${x}" "$@")  # its own line: set -e stops on a failed query
        abx "${x}" "${ref}" ${names}
    done
}

# stage_inverter: stage 7, a codebook inverter per target voice over ${inverter_system}'s codes
stage_inverter() {
    local conf=conf/tuning/train_inverter${train_config_suffix}.yaml feat v inv
    inv=$(inverter_dir)
    require "${conf}" "a training config"
    read -r feat _ <<< "$(system_conf "${inverter_system}")"
    require "exp/${inverter_system}/${inference_model}" "stage 4 (VQ-VAE training)"
    for v in $(target_voices); do
        log "Stage 7: codebook inverter over ${inverter_system}'s codes, target voice ${v} -> ${inv}/${v}"
        train_inverter "${conf}" "${feat}" "${v}"
    done
}

# stage_resynth: stage 8, every test set's synthesis list in its target voices, and its MCD where it has a reference
stage_resynth() {
    local feat x v out inv voices
    inv=$(inverter_dir); voices=$(target_voices)
    read -r feat _ <<< "$(system_conf "${inverter_system}")"
    for x in ${test_sets}; do
        out=${inv}/resynth_${x}
        test_feats "${feat}" "${x}"
        synthesis_list "${feat}" "${x}" "${out}" "${voices%% *}"
        for v in $(awk '{print $2}' "${out}/synthesis_list" | LC_ALL=C sort -u); do
            [ -f "${inv}/${v}/${inference_model}" ] \
                || die "data/${x}/synthesis_list asks for voice ${v}: no inverter ${inv}/${v} (voices: ${voices})"
            log "Stage 8: resynthesise ${x} in the target voice ${v} -> ${out}/${v}/wav"
            resynth "${feat}" "${x}" "${out}" "${v}"
        done
        cat "${out}"/*/wav.scp | LC_ALL=C sort > "${out}/wav.scp"
        [ ! -f "data/${x}/voice_ref.scp" ] || resynth_mcd "${x}" "${out}"
    done
}

# stage_score SYSTEM...: stage 9, exp/results.json, ${results_md}, exp/images/
stage_score() {
    log "Stage 9: scoring -> exp/results.json, ${results_md}, exp/images/"
    # the looks' fingerprint: the training configs and every option that changes a scored number
    run_logged exp/score python -m local_models.bin.vqvae_score --corpus "${corpus}" --systems "$@" \
        --sets ${test_sets} --dev-sets $(dev_sets) --inverter "$(inverter_dir)" --results-md "${results_md}" \
        --sealed-sets ${sealed_sets} \
        --config-files conf/tuning/train_{vqvae,inverter}${train_config_suffix}.yaml \
        --option "systems=$*" --option "inverter_system=${inverter_system}" --option "seed=${seed}" \
        --option "inference_model=${inference_model}" --option "train_args=${train_args}" \
        --option "inference_args=${inference_args}" --option "griffin_lim_iters=${griffin_lim_iters}" \
        --option "dev_set=$(dev_sets)"
}

# stage_pack SYSTEM...: stage 10, every SYSTEM and the inverter -> exp/<system>/packed/model.tar.gz
stage_pack() {
    local inv s
    inv=$(inverter_dir)
    log "Stage 10: pack $* and ${inv#exp/} -> exp/<system>/packed/model.tar.gz"
    pack_system vqvae "$@" "${inv#exp/}"
}

# stage_submission: stage 11, the ZeroSpeech 2019 submission of ${inverter_system} for every test set
stage_submission() {
    local x out inv codes f code=()
    inv=$(inverter_dir)
    for f in "${MAIN_ROOT}"/local_models/vqvae/*.py "${BASH_SOURCE[0]}" run.sh \
            conf/tuning/train_{vqvae,inverter}${train_config_suffix}.yaml; do
        code+=(--code "${f}")  # the code that made the units: 2019/code/
    done
    for x in ${test_sets}; do
        out=exp/submission_${x}; codes=exp/${inverter_system}/codes_${x}
        require "${codes}/codebook.npy" "stage 5 (encoding)"
        require "${inv}/resynth_${x}/wav.scp" "stage 8 (resynthesis)"
        log "Stage 11: ZeroSpeech 2019 submission of ${inverter_system} on ${x} -> ${out}"
        python -m local_models.bin.vqvae_submission write --test-scp "data/${x}/wav.scp" \
            --synthesis-list "${inv}/resynth_${x}/synthesis_list" --codes-dir "${codes}" \
            --wav-scp "${inv}/resynth_${x}/wav.scp" --units "${submission_units}" --author "${submission_author}" \
            --affiliation "${submission_affiliation}" --system-description "Transformer VQ-VAE units and codebook \
inverter (Tjandra et al., ZeroSpeech 2020 track 2019), system ${inverter_system}, corpus ${corpus}" \
            "${code[@]}" "${out}"
    done
}

# run_stages: stages ${stage}..${stop_stage} (the recipe's run.sh calls it after parse_options.sh)
run_stages() {
    local names x
    setup_devices
    names=$(expand_systems ${systems})
    check_systems ${names}
    check_dev_set
    if stage_enabled 1; then stage_data; fi
    # the stages that read the dev set: it must be there (a substitution below would not stop on its absence)
    if stage_enabled 2 || stage_enabled 3 || stage_enabled 5 || stage_enabled 6 || stage_enabled 9; then
        dev_sets > /dev/null
    fi
    # shellcheck disable=SC2046
    if stage_enabled 2; then stage_features $(feature_sets); fi
    if stage_enabled 3; then for x in $(scored_sets); do test_items "${x}"; done; fi
    if stage_enabled 4; then stage_train ${names}; fi
    if stage_enabled 5; then stage_encode ${names}; fi
    if stage_enabled 6; then stage_abx ${names}; fi
    if stage_enabled 7; then stage_inverter; fi
    if stage_enabled 8; then stage_resynth; fi
    if stage_enabled 9; then stage_score ${names}; fi
    if stage_enabled 10; then stage_pack ${names}; fi
    if stage_enabled 11; then stage_submission; fi
    log "Done (stages ${stage}-${stop_stage})"
}
