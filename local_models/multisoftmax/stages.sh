#!/usr/bin/env bash
# Multi-softmax RNN-T stages (local_models/multisoftmax; Joshi et al., Interspeech 2021), for any corpus of
# per-language data: ${langs} (codes of local_models/multisoftmax/units.py LANGS) in native scripts.
# Stages: 1 data: local/data.sh --langs "${langs}" ${local_data_opts} -> data/<lang>_{train,dev,test} + utt2lid
#         2 features: conf/fbank.conf (80-dim log-mel, 25 ms / 10 ms) at the one rate stage 1 prepared every
#           language at (data/sample_rate; local/data.sh --sample-rate) -> dump/fbank/fbank.conf (packed in stage 8),
#           dump/fbank/<set>/feats.{scp,shape}, utt2num_frames (the model stacks 8 frames to 640 dims at 30 ms)
#         3 units: graphemes + B_graphemes (word start) + <blank> per language (from <lang>_train only)
#           and their union -> data/lang/{<lang>,union}/units.txt; every set's transcript ->
#           data/<set>/text_norm (WER reference) and data/<set>/text_units (B_x y z B_u ...)
#         4 train (ESPnet2 trainer, resumes) every system of ${systems} -> exp/<system>: mono_<lang> per
#           language, vanilla, onehot, multisoftmax, multisoftmax_lsp, multisoftmax_lid (same architecture
#           and training config, conf/tuning/train${suffix}.yaml; ${lang_batch_systems} on single-language
#           batches drawn in proportion to each language's data, as the paper; the others on mixed batches)
#         5 finetune each seed of ${finetune} on each language -> exp/ft_<seed>_<lang> (paper Table 3)
#         6 decode every test set, streaming beam search: known language (every system), LID-free (vanilla
#           by script, multisoftmax_lid by its LID head, + oracle, + early switch-off grid on test and ${dev_sets})
#         7 score: WER / WERR / LID accuracy / #params -> RESULTS.md (Tables 2-7), results.json; the switch-off
#           setting chosen on ${dev_sets} only (exp/switch_off_choice.json); each scoring of a sealed set is a look
#         8 pack every trained system -> exp/<system>/packed/model.tar.gz (config, checkpoint, fbank.conf, stats,
#           unit lists, search + --switch_off setting, card with the scores): `speech-to-text --model` reads it
# Sealed sets (${sealed_sets}, default every <lang>_test) are only ever scored: every step that chooses (stage 4-5
# checkpoints on <lang>_dev, stages 6-7 the switch-off setting on ${dev_sets}) refuses one before any work
# (local_models/common/sealed.py), and stage 7 counts each scoring of one under the configuration (results.json
# "sealed_looks", RESULTS.md). --tune_only true: stages 6-7 make the dev-set choice alone, reading no test set.
# Decode + score any data dir with wav.scp, text, utt2lid (languages in --langs): ./run.sh --stage 6 --test_sets my_set
# (stage 6 extracts its features and units when stages 2-3 have not; after changing its files, run from stage 2).
# A corpus's run.sh sources path.sh, cmd.sh and this file (its stage options below and functions), sets its own
# defaults, sources parse_options.sh and calls run_stages, in its recipe dir: local/data.sh (stage 1: --langs and
# ${local_data_opts}), conf/fbank.conf, conf/tuning/train*.yaml; outputs go to its data/, dump/fbank/ and exp/.
option_files+=("${BASH_SOURCE[0]}")

stage=1
stop_stage=8
nj=2                                   # parallel jobs: feature extraction, trainings, decodings
langs="en hi ta gu"                    # language codes (local_models/multisoftmax/units.py LANGS)
local_data_opts=""                     # stage 1: options of the corpus's local/data.sh (besides --langs)
corpus=mini                            # the corpus's name in results.json and the model cards (run.sh sets it)
# mono = mono_<lang> per language; the names: local_models/multisoftmax/systems.py (python -m ... systems names)
systems="mono vanilla onehot multisoftmax multisoftmax_lsp multisoftmax_lid"
finetune="onehot multisoftmax"         # seeds finetuned into monolingual models (paper Table 3)
train_config_suffix=""                 # conf/tuning/train${suffix}.yaml: "" paper size, _tiny mini corpus, _smoke tests
# single-language mini-batches as the paper (others: mixed; multisoftmax_lid's LID collapsed to the prior on them)
lang_batch_systems="multisoftmax multisoftmax_lsp"
lid_weight=0.1       # multisoftmax_lid's LID cross-entropy weight (at 1.0 the mini corpus learnt neither task)
lid_balance=true     # balance the LID loss over languages' hours (unbalanced: ta, gu 0 % LID); false: the paper's
lid_rnn_layers=1     # LSTM layers in the LID branch (0: a frame MLP, which could not tell hi, ta and gu apart)
ft_epochs=3                            # finetuning: epochs and learning rate (on top of the training config)
ft_lr=0.0003
test_sets=""                           # default: <lang>_test of every language
dev_sets=""            # the sets the switch-off setting is chosen on (default: <lang>_dev of every language)
sealed_sets=""         # only scored, never chosen on (default: <lang>_test of every language)
tune_only=false        # stages 6-7: only the dev-set choice (grid decoded on ${dev_sets}, chosen); no test set read
beam=4                                 # streaming beam search: beam, encoder frames (30 ms) per chunk
chunk=10
# early switch-off tau(frames):s_th: paper Table 7, then ours with larger s_th (LSTM LID gaps pass 0.5 at once)
switch_off_grid="inf:inf 1000:0.2 100:0.2 30:0.2 30:0.5 10:0.2 30:40 30:80 10:40"
switch_off=dev         # the packed LID model's streaming (Speech2Text.stream): dev = stage 7's choice, or tau:s_th
seed=0
ngpu=$(default_ngpu)    # GPUs per training job (0: CPU; > 1: ESPnet2's DDP); default 1 when nvidia-smi lists a GPU
dist_world_size=1       # --ngpu 0: training processes per model (> 1: CPU DDP, torchrun + gloo; utils/stage_lib.sh)
gpu_inference=false     # decode on a GPU (through cuda_cmd)
inference_nj=2          # decoding jobs at a time (systems x test sets x modes)
inference_model=valid.loss.best.pth  # checkpoint that decodes: valid.loss.best.pth, valid.loss.ave.pth, latest.pth
train_args=""           # extra ESPnet2 training options, verbatim (they win), e.g. "--max_epoch 1"
inference_args=""       # extra multisoftmax_decode options, verbatim, e.g. "--beam 8"
results_md=RESULTS.md   # stage 7's report (local/demo.sh: exp/RESULTS.md, the committed one stays)

# The functions below read the options above and run_stages' locals (sets, extra_sets, test_sets, langs_yaml,
# train_conf); they set no global variable (results on stdout).

# systems_query QUERY [ARGS...]: local_models/multisoftmax/systems.py, the recipe's names (torch-free, ~0.1 s)
systems_query() { python -m local_models.multisoftmax.systems "$@"; }

# expand_systems: ${systems} with mono -> mono_<lang> for every language
expand_systems() {
    # shellcheck disable=SC2086  # --systems is a word list
    systems_query expand --langs "${langs}" ${systems}
}

# finetuned_systems: ft_<seed>_<lang> for every seed of ${finetune} and every language
finetuned_systems() {
    # shellcheck disable=SC2086  # --finetune is a word list
    systems_query finetuned --langs "${langs}" ${finetune}
}

# system_conf NAME: the --model_conf options of a system (systems.py system_conf; model: local_models/multisoftmax/
# model.py). A multi-softmax seed keeps only its language's head, "discarding the remaining parameters" (paper
# Section 4.1): its finetuned model is a mono model, seeded by ft_init_param
system_conf() {
    local hours=""
    if [ "${lid_balance}" = true ]; then hours=${PWD}/dump/fbank/train_all/hours.json; fi
    systems_query system_conf "$1" --lid_weight "${lid_weight}" --lid_rnn_layers "${lid_rnn_layers}" \
        --lid_hours_file "${hours}" || die "system_conf $1"
}
# ft_init_param SEED LANG: --init_param of a finetuning: the seed's checkpoint; a multi-softmax seed's other
# languages' heads are left out (ESPnet's <file>:<src>:<dst>:<exclude prefixes> form)
ft_init_param() {
    local seed=$1 lang=$2 ex
    ex=$(systems_query init_exclude --langs "${langs}" "${seed}" "${lang}") || die "ft_init_param ${seed} ${lang}"
    echo "exp/${seed}/${inference_model}${ex:+:::${ex}}"
}
lang_of() { systems_query lang_of "$1"; }   # mono_<lang>, ft_<seed>_<lang> -> <lang>; "" = every language

# train NAME TRAIN_SET VALID_SET [EXTRA ESPNET OPTIONS...]: ESPnet2 training into exp/NAME (resumes)
train() {
    local name=$1 tr=dump/fbank/$2 dv=dump/fbank/$3 out=exp/$1; shift 3
    # shellcheck disable=SC2046  # system_conf's options are words
    espnet_train "${out}" multisoftmax_train --config "${train_conf}" $(system_conf "${name}") --model_conf "langs=${langs_yaml}" \
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

# write_feats_conf: stage 2's front end -> dump/fbank/fbank.conf (what every set is extracted with and stage 8
# packs): conf/fbank.conf, then the rate stage 1 prepared the corpus at (data/sample_rate; the later option wins),
# so every language's audio is read at that one rate (local/data.sh: by default the lowest rate of the languages)
write_feats_conf() {
    local rate=""
    require conf/fbank.conf "a feature config"
    if [ -f data/sample_rate ]; then
        rate=$(cat data/sample_rate)
        [[ "${rate}" =~ ^[1-9][0-9]*$ ]] || die "data/sample_rate: '${rate}' is not a sample rate in Hz (stage 1 writes it)"
    fi
    mkdir -p dump/fbank
    { echo "# stage 2's front end: conf/fbank.conf${rate:+, read at ${rate} Hz (data/sample_rate, stage 1)}"
      cat conf/fbank.conf
      if [ -n "${rate}" ]; then echo "--sample-rate ${rate}"; fi
    } > dump/fbank/fbank.conf.tmp
    mv dump/fbank/fbank.conf.tmp dump/fbank/fbank.conf
    if [ -n "${rate}" ]; then log "Stage 2: every set read at ${rate} Hz (data/sample_rate) -> dump/fbank/fbank.conf"
    else log "Stage 2: no data/sample_rate: conf/fbank.conf's rate -> dump/fbank/fbank.conf"; fi
}

# extract SET...: log-mel features of each data/SET -> dump/fbank/SET/feats.{scp,shape}, utt2num_frames, utt2dur
# (one make_feats call: its jobs pay their start-up once for all the sets)
extract() {
    local x pairs=()
    for x in "$@"; do
        # make_feats replaces only the feature tables: older logs, stage 4's text_int / lid_int / utt2category go too
        rm -rf "dump/fbank/${x}"
        pairs+=("data/${x}" "dump/fbank/${x}")
    done
    # shellcheck disable=SC2046,SC2154  # the config's lines are extract_feats options; cmd.sh sets decode_cmd
    make_feats --nj "${nj}" --cmd "${decode_cmd}" "${pairs[@]}" $(grep -v '^#' dump/fbank/fbank.conf)
}

# make_units: stage 3's units of ${sets} ${extra_sets} (local_models.bin.multisoftmax_units)
make_units() {
    python -m local_models.bin.multisoftmax_units --langs "${langs}" --sets "${sets} ${extra_sets}" data data/lang
}

# prepare_test_set SET: a --test_sets data dir that stages 2-3 never saw (your own wav.scp + text + utt2lid):
# its features and units now, as they would make them (units from the training sets, unchanged)
prepare_test_set() {
    local x=$1
    if [ ! -f "dump/fbank/${x}/feats.scp" ]; then
        require "data/${x}/wav.scp" "stage 1 (data) or your --test_sets data dir"
        validate_data_dir --no-feats "data/${x}"
        log "Stage 6: data/${x} has no features yet: extracting them (stage 2's step)"
        [ -f dump/fbank/fbank.conf ] || write_feats_conf
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
    # shellcheck disable=SC2086,SC2154  # word lists: the launcher, --inference_args (setup_devices sets both)
    run_logged "${out}" ${decode_launch} "${out}/decode.log" \
        python -m local_models.bin.multisoftmax_decode --model_dir "exp/${name}" --model_file "${inference_model}" \
            --ngpu "${inference_ngpu}" --feats "dump/fbank/${x}/feats.scp" --utt2lid "data/${x}/utt2lid" \
            --mode "${mode}" --beam "${beam}" --chunk "${chunk}" "$@" ${inference_args} "${out}"
}

# check_tuning WHAT SETS: refuse a step that chooses on SETS when one of them is sealed (one line, exit 1)
check_tuning() {
    python -m local_models.common.sealed check --tuning "$2" --sealed "${sealed_sets}" --what "$1" || exit 1
}

# valid_sets: the sets stages 4-5 choose checkpoints on (their valid loss; run.sh --inference_model valid.*)
valid_sets() {
    local l
    for l in ${langs}; do printf '%s_dev ' "${l}"; done
}

# own_test_sets: whether ${test_sets} holds a <lang>_test of the recipe's own
own_test_sets() {
    local l
    for l in ${langs}; do [[ " ${test_sets} " == *" ${l}_test "* ]] && return 0; done
    return 1
}

# decode_system NAME: stage 6 for exp/NAME on every test set: language known (a monolingual or finetuned model only
# on the sets that hold its language); multisoftmax_lid also LID-free with the switch-off grid (--tune_only true:
# only the grid on ${dev_sets})
decode_system() {
    local s=$1 l x lid
    l=$(lang_of "${s}")
    lid=$(systems_query lid_head "${s}") || die "decode_system ${s}"   # non-empty: LID-free by its LID head
    if [ "${tune_only}" = true ]; then
        if [ -n "${lid}" ]; then decode_dev_grid "${s}"; fi
        return 0
    fi
    for x in ${test_sets}; do
        if [ -n "${l}" ] && ! cut -d' ' -f2 "data/${x}/utt2lid" | grep -qx "${l}"; then continue; fi
        log "Stage 6: decode ${x} with ${s} (language known) -> exp/${s}/decode_${x}/known"
        decode_pool decode "${s}" "${x}" known ${l:+--only_lang "${l}"}
        if [ -n "${lid}" ]; then
            log "Stage 6: decode ${x} with ${s}, language not known (+ switch-off grid: ${switch_off_grid})"
            decode_pool decode "${s}" "${x}" lidfree --switch_off_grid "${switch_off_grid}" \
                --switch_off_dir "exp/${s}/decode_${x}/switchoff"
        fi
    done
    # the dev sets the switch-off setting is chosen on (stage 7), never the test sets: with the recipe's own test
    # sets only (a user's extra set keeps the choice of the main run)
    if [ -n "${lid}" ] && own_test_sets; then decode_dev_grid "${s}"; fi
}

# decode_dev_grid NAME: the switch-off grid on every set of ${dev_sets} (stage 7 chooses the setting there), when
# the grid has a choice
decode_dev_grid() {
    local s=$1 x
    [ "$(wc -w <<< "${switch_off_grid}")" -gt 1 ] || return 0
    for x in ${dev_sets}; do
        if [ ! -f "dump/fbank/${x}/feats.scp" ]; then log "Stage 6: no dump/fbank/${x} to choose on"; continue; fi
        log "Stage 6: decode ${x} with ${s}, language not known, switch-off grid (to choose the setting on dev)"
        decode_pool decode "${s}" "${x}" lidfree --switch_off_grid "${switch_off_grid}" \
            --switch_off_dir "exp/${s}/decode_${x}/switchoff"
    done
}

# switch_off_setting: the tau:s_th the packed LID models stream with: --switch_off, or with `dev` the setting stage 7
# chose on the dev sets (a grid of one setting: that one)
switch_off_setting() {
    local so=${switch_off}
    if [ "${so}" = dev ] && [ "$(wc -w <<< "${switch_off_grid}")" -eq 1 ]; then
        so=${switch_off_grid// /}  # a grid of one setting: nothing to choose
    elif [ "${so}" = dev ]; then
        so=$(python -m local_models.bin.multisoftmax_score --exp exp --chosen-switch-off) || die "--switch_off dev"
    fi
    [[ "${so}" =~ ^[^:]+:[^:]+$ ]] || die "--switch_off '${so}': expected dev or tau:s_th, e.g. 30:80"
    echo "${so}"
}

# write_decode_conf NAME TAU:S_TH: stage 8's exp/NAME/decode_conf.yaml (stage 6's search and the switch-off setting
# the packed LID model streams with), which the archive holds (local_models/multisoftmax/pack.py)
write_decode_conf() {
    local s=$1 so=$2
    printf 'beam: %s\nchunk: %s\ntau: %s\ns_th: %s\n' "${beam}" "${chunk}" "${so%%:*}" "${so##*:}" \
        > "exp/${s}/decode_conf.yaml"
}

# stage_data: stage 1 (the corpus's local/data.sh)
stage_data() {
    log "Stage 1: data -> data/<lang>_{train,dev,test} (+ utt2lid) for ${langs}"
    # shellcheck disable=SC2086  # --local_data_opts is a word list
    local/data.sh --langs "${langs}" ${local_data_opts}
}

# stage_features: stage 2 on ${sets} ${extra_sets}
stage_features() {
    local x
    log "Stage 2: 80-dim log-mel (25 ms / 10 ms) -> dump/fbank/<set>/feats.{scp,shape}, utt2num_frames"
    for x in ${sets} ${extra_sets}; do
        require "data/${x}/wav.scp" "stage 1 (data)"
        validate_data_dir --no-feats "data/${x}"
    done
    write_feats_conf
    # shellcheck disable=SC2086  # word lists
    extract ${sets} ${extra_sets}
}

# stage_units: stage 3 on ${sets} ${extra_sets}
stage_units() {
    local x
    log "Stage 3: units -> data/lang/{${langs// /,},union}/units.txt, data/<set>/text_{norm,units}"
    for x in ${sets} ${extra_sets}; do
        require "data/${x}/utt2lid" "stage 1 (data) or your --test_sets data dir"
        validate_data_dir --no-feats --no-wav "data/${x}"
    done
    make_units
}

# stage_train: stage 4 (training inputs, then every system of ${systems}, ${nj} / train_nj at a time)
stage_train() {
    local x s
    check_tuning "stage 4 (checkpoints chosen on the dev loss)" "$(valid_sets)"
    log "Stage 4: training inputs -> dump/fbank/<set>/{text_int,lid_int,utt2category}, dump/fbank/{train,dev}_all"
    require "${train_conf}" "a training config (--train_config_suffix)"
    for x in ${sets}; do require "data/${x}/text_units" "stage 3 (units)"; done
    python -m local_models.bin.multisoftmax_prepare --langs "${langs}" --sets "${sets}" data data/lang dump/fbank
    for s in $(expand_systems); do
        log "Stage 4: train ${s} (${train_conf}) -> exp/${s}"
        train_system "${s}"
    done
    pool_wait
}

# stage_finetune: stage 5 (every seed of ${finetune} on every language)
stage_finetune() {
    local seed_sys l
    check_tuning "stage 5 (checkpoints chosen on the dev loss)" "$(valid_sets)"
    for seed_sys in ${finetune}; do
        require "exp/${seed_sys}/${inference_model}" "stage 4 (training ${seed_sys})"
        for l in ${langs}; do
            log "Stage 5: finetune ${seed_sys} on ${l} (${ft_epochs} epochs, lr ${ft_lr}) -> exp/ft_${seed_sys}_${l}"
            train_pool train "ft_${seed_sys}_${l}" "${l}_train" "${l}_dev" --max_epoch "${ft_epochs}" \
                --optim_conf "lr=${ft_lr}" --init_param "$(ft_init_param "${seed_sys}" "${l}")"
        done
    done
    pool_wait
}

# stage_decode: stage 6 (every trained system on every test set; --tune_only true: the dev grid alone)
stage_decode() {
    local x s
    check_tuning "stage 6 (the switch-off grid decoded to choose on)" "${dev_sets}"
    if [ "${tune_only}" != true ]; then
        for x in ${test_sets}; do prepare_test_set "${x}"; done
    fi
    for s in $(expand_systems) $(finetuned_systems); do
        [ -e "exp/${s}/${inference_model}" ] || { log "Stage 6: skip ${s} (no exp/${s}/${inference_model}: not trained)"; continue; }
        decode_system "${s}"  # every test set (known language; multisoftmax_lid also LID-free + switch-off grid)
    done
    pool_wait
}

# stage_score: stage 7 (local_models.bin.multisoftmax_score; --tune_only true: the dev-set choice alone)
stage_score() {
    check_tuning "stage 7 (the switch-off setting's choice)" "${dev_sets}"
    if [ "${tune_only}" = true ]; then
        log "Stage 7: the switch-off setting chosen on ${dev_sets} -> exp/switch_off_choice.json (no test set read)"
        python -m local_models.bin.multisoftmax_score --langs "${langs}" --dev-sets "${dev_sets}" \
            --sealed-sets "${sealed_sets}" --exp exp --choose-only || die "stage 7: the switch-off choice"
        return 0
    fi
    log "Stage 7: score -> exp/results.json, ${results_md}, exp/images/switchoff.png"
    # the looks' configuration: the files and options that define the systems and their decoding
    local opts=(--option "beam=${beam}" --option "chunk=${chunk}" --option "switch_off_grid=${switch_off_grid}"
        --option "inference_model=${inference_model}" --option "lang_batch_systems=${lang_batch_systems}"
        --option "lid_weight=${lid_weight}" --option "lid_balance=${lid_balance}"
        --option "lid_rnn_layers=${lid_rnn_layers}" --option "ft_epochs=${ft_epochs}" --option "ft_lr=${ft_lr}"
        --option "seed=${seed}" --option "train_args=${train_args}" --option "inference_args=${inference_args}")
    python -m local_models.bin.multisoftmax_score --langs "${langs}" --systems "$(expand_systems)" \
        --finetune "${finetune}" --test-sets "${test_sets}" --corpus "${corpus}" --exp exp --results "${results_md}" \
        --dev-sets "${dev_sets}" --sealed-sets "${sealed_sets}" --inference-model "${inference_model}" \
        --seed "${seed}" --config-files "${train_conf} conf/fbank.conf" "${opts[@]}" \
        --note "Training config conf/tuning/train${train_config_suffix}.yaml; beam ${beam}, chunks of ${chunk} encoder frames."
}

# stage_pack: stage 8 (every trained system)
stage_pack() {
    local s so todo=()
    so=$(switch_off_setting) || exit 1
    for s in $(expand_systems) $(finetuned_systems); do
        [ -e "exp/${s}/${inference_model}" ] || { log "Stage 8: skip ${s} (no exp/${s}/${inference_model}: not trained)"; continue; }
        log "Stage 8: pack ${s} (${inference_model}, beam ${beam}, chunk ${chunk}) -> exp/${s}/packed/model.tar.gz"
        write_decode_conf "${s}" "${so}"
        todo+=("${s}")
    done
    [ "${#todo[@]}" -eq 0 ] || pack_system multisoftmax "${todo[@]}"
}

# run_stages: the devices (setup_devices), then stages ${stage}..${stop_stage}, in the recipe dir (after parse_options)
run_stages() {
    local sets="" extra_sets="" test_sets=${test_sets} dev_sets=${dev_sets} sealed_sets=${sealed_sets} langs_yaml
    local train_conf lang x
    setup_devices
    # an unknown name of --systems / --finetune fails now, with the names there are (systems.py)
    # shellcheck disable=SC2086  # word lists
    systems_query check --seeds "${finetune}" ${systems} || die "--systems / --finetune"
    for lang in ${langs}; do sets+="${lang}_train ${lang}_dev ${lang}_test "; done
    [ -n "${sets}" ] || die "--langs is empty"
    [ -n "${test_sets}" ] || test_sets=$(for l in ${langs}; do printf '%s_test ' "${l}"; done)
    [ -n "${dev_sets}" ] || dev_sets=$(for l in ${langs}; do printf '%s_dev ' "${l}"; done)
    [ -n "${sealed_sets}" ] || sealed_sets=$(for l in ${langs}; do printf '%s_test ' "${l}"; done)
    [[ "${tune_only}" =~ ^(true|false)$ ]] || die "--tune_only '${tune_only}': expected true or false"
    # --test_sets beyond the recipe's own sets: stages 2 and 3 process them too
    for x in ${test_sets}; do [[ " ${sets} " == *" ${x} "* ]] || extra_sets+="${x} "; done
    # shellcheck disable=SC2001,SC2086  # echo joins the words of --langs
    langs_yaml="[$(echo ${langs} | sed 's/ /, /g')]"
    train_conf=conf/tuning/train${train_config_suffix}.yaml

    if stage_enabled 1; then stage_data; fi
    if stage_enabled 2; then stage_features; fi
    if stage_enabled 3; then stage_units; fi
    if stage_enabled 4; then stage_train; fi
    if stage_enabled 5; then stage_finetune; fi
    if stage_enabled 6; then stage_decode; fi
    if stage_enabled 7; then stage_score; fi
    if stage_enabled 8; then stage_pack; fi
    log "Done (stages ${stage}-${stop_stage})"
}
