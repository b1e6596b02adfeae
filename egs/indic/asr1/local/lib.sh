# Shell functions of run.sh (sourced by it after option parsing: they read its options and variables).

# expand_systems: ${systems} with mono -> mono_<lang> for every language
expand_systems() {
    local s l
    for s in ${systems}; do
        if [ "${s}" = mono ]; then for l in ${langs}; do printf 'mono_%s ' "${l}"; done; else printf '%s ' "${s}"; fi
    done
}

# finetuned_systems: ft_<seed>_<lang> for every seed of ${finetune} and every language
finetuned_systems() {
    local f l
    for f in ${finetune}; do for l in ${langs}; do printf 'ft_%s_%s ' "${f}" "${l}"; done; done
}

# system_conf NAME: the --model_conf options of a system (see local_models/multisoftmax/model.py)
system_conf() {
    case "$1" in
        mono_*) echo "--model_conf system=mono --model_conf lang=${1#mono_}" ;;
        vanilla|onehot|multisoftmax) echo "--model_conf system=$1" ;;
        multisoftmax_lsp) echo "--model_conf system=multisoftmax --model_conf lsp=true" ;;
        multisoftmax_lid)
            echo "--model_conf system=multisoftmax --model_conf lid=true --model_conf lid_weight=${lid_weight}" \
                 "--model_conf lid_rnn_layers=${lid_rnn_layers}"
            if [ "${lid_balance}" = true ]; then echo "--model_conf lid_hours_file=${PWD}/dump/fbank/train_all/hours.json"; fi ;;
        ft_*)  # a multi-softmax seed keeps only its language's head, "discarding the remaining parameters" (paper
               # Section 4.1): the finetuned model is a mono model, seeded by ft_init_param
            local seed; seed=$(seed_of "$1")
            if [ "${seed}" = multisoftmax ]; then system_conf "mono_${1##*_}"; else system_conf "${seed}"; fi ;;
        *) die "unknown system '$1' (mono, vanilla, onehot, multisoftmax, multisoftmax_lsp, multisoftmax_lid)" ;;
    esac
}
# ft_init_param SEED LANG: --init_param of a finetuning: the seed's checkpoint; a multi-softmax seed's other
# languages' heads are left out (ESPnet's <file>:<src>:<dst>:<exclude prefixes> form)
ft_init_param() {
    local seed=$1 lang=$2 l ex=""
    if [ "${seed}" = multisoftmax ]; then
        for l in ${langs}; do [ "${l}" = "${lang}" ] || ex+="${ex:+,}net.heads.${l}"; done
    fi
    echo "exp/${seed}/${inference_model}${ex:+:::${ex}}"
}
seed_of() { local s=${1#ft_}; echo "${s%_*}"; }   # ft_<seed>_<lang> -> <seed>
lang_of() { case "$1" in mono_*|ft_*) echo "${1##*_}" ;; *) echo "" ;; esac; }   # "" = every language

# train NAME TRAIN_SET VALID_SET [EXTRA ESPNET OPTIONS...]: ESPnet2 training into exp/NAME (resumes)
train() {
    local name=$1 tr=dump/fbank/$2 dv=dump/fbank/$3 out=exp/$1; shift 3
    espnet_train "${out}" indic_train --config "${train_conf}" $(system_conf "${name}") --model_conf "langs=${langs_yaml}" \
            --model_conf "units_dir=${PWD}/data/lang" --model_conf "stats_file=${PWD}/dump/fbank/train_all/stats.npz" \
            --train_data_path_and_name_and_type "${tr}/feats.scp,feats,kaldi_ark" \
            --train_data_path_and_name_and_type "${tr}/text_int,text,text_int" \
            --train_data_path_and_name_and_type "${tr}/lid_int,lid,text_int" --train_shape_file "${tr}/feats.shape" \
            --valid_data_path_and_name_and_type "${dv}/feats.scp,feats,kaldi_ark" \
            --valid_data_path_and_name_and_type "${dv}/text_int,text,text_int" \
            --valid_data_path_and_name_and_type "${dv}/lid_int,lid,text_int" --valid_shape_file "${dv}/feats.shape" "$@"
}

# train_system NAME: stage 4's training of a system (background, train_pool) on its training set: its language's
# (mono), train_all (${lang_batch_systems}: utt2category gives single-language batches), else train_mixed
train_system() {
    local s=$1 l
    l=$(lang_of "${s}")
    if [ -n "${l}" ]; then
        train_pool train "${s}" "${l}_train" "${l}_dev"
    elif [[ " ${lang_batch_systems} " == *" ${s} "* ]]; then
        train_pool train "${s}" train_all dev_all
    else
        train_pool train "${s}" train_mixed dev_all
    fi
}

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

# make_units: stage 3's units of ${sets} ${extra_sets} (local_models.bin.indic_units)
make_units() {
    python -m local_models.bin.indic_units --langs "${langs}" --sets "${sets} ${extra_sets}" data data/lang
}

# prepare_test_set SET: a --test_sets data dir that stages 2-3 never saw (your own wav.scp + text + utt2lid):
# its features and units now, as they would make them (units from the training sets, unchanged)
prepare_test_set() {
    local x=$1
    if [ ! -f "dump/fbank/${x}/feats.scp" ]; then
        require "data/${x}/wav.scp" "stage 1 (data) or your --test_sets data dir"
        validate_data_dir --no-feats "data/${x}"
        log "Stage 6: data/${x} has no features yet: extracting them (stage 2's step)"
        extract "${x}"
    fi
    if [ ! -f "data/${x}/text_norm" ]; then
        require "data/${x}/utt2lid" "stage 1 (data) or your --test_sets data dir"
        validate_data_dir --no-feats --no-wav "data/${x}"
        log "Stage 6: data/${x} has no text_norm yet: stage 3's units for ${sets} ${extra_sets}"
        make_units
    fi
}

# decode NAME SET MODE [OPTIONS...]: streaming beam search of dump/fbank/SET with exp/NAME -> exp/NAME/decode_SET/MODE
decode() {
    local name=$1 x=$2 mode=$3 out=exp/$1/decode_$2/$3; shift 3
    run_logged "${out}" ${decode_launch} "${out}/decode.log" \
        python -m local_models.bin.indic_decode --model_dir "exp/${name}" --model_file "${inference_model}" \
            --ngpu "${inference_ngpu}" --feats "dump/fbank/${x}/feats.scp" --utt2lid "data/${x}/utt2lid" \
            --mode "${mode}" --beam "${beam}" --chunk "${chunk}" "$@" ${inference_args} "${out}"
}

# own_test_sets: whether ${test_sets} holds a <lang>_test of the recipe's own
own_test_sets() {
    local l
    for l in ${langs}; do [[ " ${test_sets} " == *" ${l}_test "* ]] && return 0; done
    return 1
}

# decode_system NAME: stage 6 for exp/NAME on every test set: language known (a monolingual or finetuned model only
# on the sets that hold its language); multisoftmax_lid also LID-free with the switch-off grid
decode_system() {
    local s=$1 l x
    l=$(lang_of "${s}")
    for x in ${test_sets}; do
        if [ -n "${l}" ] && ! cut -d' ' -f2 "data/${x}/utt2lid" | grep -qx "${l}"; then continue; fi
        log "Stage 6: decode ${x} with ${s} (language known) -> exp/${s}/decode_${x}/known"
        decode_pool decode "${s}" "${x}" known ${l:+--only_lang "${l}"}
        if [ "${s}" = multisoftmax_lid ]; then
            log "Stage 6: decode ${x} with ${s}, language not known (+ switch-off grid: ${switch_off_grid})"
            decode_pool decode "${s}" "${x}" lidfree --switch_off_grid "${switch_off_grid}" \
                --switch_off_dir "exp/${s}/decode_${x}/switchoff"
        fi
    done
    # the dev sets the switch-off setting is chosen on (stage 7), never the test sets: with the recipe's own test
    # sets only (a user's extra set keeps the choice of the main run), and only when the grid has a choice
    if [ "${s}" = multisoftmax_lid ] && [ "$(wc -w <<< "${switch_off_grid}")" -gt 1 ] && own_test_sets; then
        for l in ${langs}; do
            if [ ! -f "dump/fbank/${l}_dev/feats.scp" ]; then log "Stage 6: no dump/fbank/${l}_dev to choose on"; continue; fi
            log "Stage 6: decode ${l}_dev with ${s}, language not known, switch-off grid (to choose the setting on dev)"
            decode_pool decode "${s}" "${l}_dev" lidfree --switch_off_grid "${switch_off_grid}" \
                --switch_off_dir "exp/${s}/decode_${l}_dev/switchoff"
        done
    fi
}

# pack NAME: stage 8: exp/NAME/decode_conf.yaml (stage 6's search; the --switch_off setting the packed LID model
# streams with) and the archive exp/NAME/packed/model.tar.gz (local_models/multisoftmax/pack.py)
pack() {
    local s=$1 so=${switch_off}
    if [ "${so}" = dev ] && [ "$(wc -w <<< "${switch_off_grid}")" -eq 1 ]; then
        so=${switch_off_grid// /}  # a grid of one setting: nothing to choose
    elif [ "${so}" = dev ]; then  # the setting stage 7 chose on the dev sets
        so=$(python -m local_models.bin.indic_score --exp exp --chosen-switch-off) || die "--switch_off dev"
    fi
    [[ "${so}" =~ ^[^:]+:[^:]+$ ]] || die "--switch_off '${so}': expected dev or tau:s_th, e.g. 30:80"
    printf 'beam: %s\nchunk: %s\ntau: %s\ns_th: %s\n' "${beam}" "${chunk}" "${so%%:*}" "${so##*:}" \
        > "exp/${s}/decode_conf.yaml"
    pack_system multisoftmax "${s}"
}
