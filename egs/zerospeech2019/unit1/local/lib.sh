# Shell functions of run.sh (sourced by it after option parsing: they read its options and variables).

# System names: (trf|conv)_(mfcc|logmel)_k<K>[_s<lambda>][_j<p>][_seed<N>]: encoder, input features, codebook
# size, temporal smoothing weight, jitter probability. A "_seed<N>" suffix trains a replicate of a system with
# training seed N: RESULTS.md gives the mean and sd over <system> (seed ${seed}) and its replicates, and compares
# conv and Transformer by those means. At the tiny budget one seed's ABX moves by several points (conv_mfcc_k256:
# 31.6 / 22.9 / 29.3 % for seeds 0 / 1 / 2 in one run), so the systems the acceptance compares get five seeds each
# in the default: the conv baseline (K 256), the paper's Transformer (K 128, 12 % lower bitrate) and the
# Transformer at the conv's own codebook size (K 256, the same bitrate). With 5 seeds a side the 95 % interval of
# the difference is ~7 points wide: it cannot tell the paper's gap from 0; "seeds15" gives the K 256 pair 15 seeds
# each (40 min more of stage 4 on 2 cores).
# Presets (words of --systems, expanded by expand_systems; names may be mixed in):
#   tables   every row of paper Tables 1-3, one seed each (a GPU run at paper size)
#   default  tables + seeds 1-4 of the three compared systems (run.sh's default)
#   seeds15  default + seeds 5-14 of trf_mfcc_k256 and conv_mfcc_k256
PRESET_TABLES="trf_mfcc_k128 trf_logmel_k128 conv_mfcc_k256 trf_mfcc_k64 trf_mfcc_k256 trf_mfcc_k512 trf_mfcc_k128_s1e-2
 trf_mfcc_k128_s5e-3 trf_mfcc_k128_s1e-3 trf_mfcc_k128_j0.05 trf_mfcc_k128_j0.075 trf_mfcc_k128_s5e-3_j0.05
 trf_mfcc_k128_s1e-3_j0.05"
sys_re='^(trf|conv)_(mfcc|logmel)_k([0-9]+)(_s([0-9.]+(e-?[0-9]+)?))?(_j(0?\.[0-9]+))?(_seed([0-9]+))?$'

# replicates FIRST LAST SYSTEM...: <system>_seed<N> for N in FIRST..LAST, seed by seed
replicates() {
    local first=$1 last=$2 n s; shift 2
    for n in $(seq "${first}" "${last}"); do for s in "$@"; do echo -n "${s}_seed${n} "; done; done
}

# expand_systems WORD...: the system names of --systems, its presets expanded (each name once, in order)
expand_systems() {
    local w
    for w in "$@"; do
        case ${w} in
            tables) echo -n "${PRESET_TABLES} " ;;
            default) echo -n "${PRESET_TABLES} $(replicates 1 4 trf_mfcc_k128 conv_mfcc_k256 trf_mfcc_k256)" ;;
            seeds15) expand_systems default; echo -n " "; replicates 5 14 trf_mfcc_k256 conv_mfcc_k256 ;;
            *) echo -n "${w} " ;;
        esac
    done | tr ' \n' '\n\n' | awk 'NF && !seen[$0]++' | tr '\n' ' ' | sed 's/ $//'
}

# check_systems: expand --systems' presets, then fail before any work on a malformed system name or an inverter
# system that is not trained
check_systems() {
    local s
    systems=$(expand_systems ${systems})
    for s in ${systems} ${inverter_system}; do
        [[ "${s}" =~ ${sys_re} ]] || die "system '${s}' is not (trf|conv)_(mfcc|logmel)_k<K>[_s<lambda>][_j<p>][_seed<N>]"
    done
    [[ " ${systems} " == *" ${inverter_system} "* ]] || die "--inverter-system '${inverter_system}' is not in --systems"
}

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

# abx SET "REF": ABX of the raw MFCC reference row and of every system's codes on SET (REF: "" or --reference)
abx() {
    local x=$1 ref=$2 s
    # librosa frames are centred at t * 10 ms; codes at 40 t + 15 ms (model.py)
    python -m local_models.bin.vqvae_abx --feats "dump/mfcc/${x}/feats.scp" --items "data/${x}/abx.item" \
        --frame-shift 0.01 --frame-offset 0 ${ref} --json "exp/mfcc_baseline/abx_${x}.json"
    for s in ${systems}; do
        python -m local_models.bin.vqvae_abx --feats "exp/${s}/codes_${x}/codes" \
            --codebook "exp/${s}/codes_${x}/codebook.npy" --items "data/${x}/abx.item" \
            --frame-shift 0.04 --frame-offset 0.015 ${ref} --json "exp/${s}/abx_${x}.json"
    done
}

# train_inverter CONF FEAT VOICE: the codebook inverter of target voice VOICE over ${inverter_system}'s codes
train_inverter() {
    local conf=$1 feat=$2 v=$3 lists=${inv}/$3/lists part f
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
}

# synthesis_list FEAT SET OUT: OUT (emptied) /synthesis_list, "<utt> <voice>": data/SET/synthesis_list, else every
# utterance of SET in the first voice
synthesis_list() {
    local feat=$1 x=$2 out=$3 first_voice=${voices%% *}
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
    local feat=$1 x=$2 out=$3 v=$4
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
        --json "${out}/mcd.json" --per-utt "${out}/mcd_per_utt.tsv"
    awk 'NR == FNR {keep[$1]; next} $1 in keep' "${out}/wav.scp" "data/${x}/wav.scp" > "${out}/source_wav.scp"
    python -m local_models.bin.mcd_score --ref "data/${x}/voice_ref.scp" --hyp "${out}/source_wav.scp" \
        --json "${out}/mcd_source.json"
}
