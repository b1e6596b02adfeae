#!/usr/bin/env bash
# Indian-language ASR (paper 001, multi-softmax RNN-T): En-IN, Hi-IN, Ta-IN, Gu-IN in native scripts.
# Stages: 1 data: data/<lang>_{train,dev,test} + utt2lid (per-language Kaldi dirs via db.sh, else the
#           espeak-ng mini corpus: en, hi large; ta, gu small, as in the paper's Table 1)
#         2 features: 80-dim log-mel, 25 ms / 10 ms, 16 kHz -> dump/fbank/<set>/feats.{scp,shape},
#           utt2num_frames (the model stacks 8 frames to 640 dims at a 30 ms rate on the fly)
#         3 units: graphemes + B_graphemes (word start) + <blank> per language (from <lang>_train only)
#           and their union -> data/lang/{<lang>,union}/units.txt; every set's transcript ->
#           data/<set>/text_norm (WER reference) and data/<set>/text_units (B_x y z B_u ...)
#         4 train (ESPnet2 trainer, resumes) every system of ${systems} -> exp/<system>: mono_<lang> per
#           language, vanilla, onehot, multisoftmax, multisoftmax_lsp, multisoftmax_lid (same architecture
#           and training config, conf/tuning/train${suffix}.yaml; ${lang_batch_systems} on single-language
#           batches drawn in proportion to each language's data, as the paper; the others on mixed batches)
#         5 finetune each seed of ${finetune} on each language -> exp/ft_<seed>_<lang> (paper Table 3)
#         6 decode every test set, streaming beam search: known language (every system), LID-free (vanilla
#           by script, multisoftmax_lid by its LID head, + oracle, + early switch-off grid, paper Table 7)
#         7 score: WER / WERR / LID accuracy / #params -> RESULTS.md (paper Tables 2-7), exp/results.json
# Any data dir with wav.scp, text and utt2lid can be decoded and scored: ./run.sh --stage 6 --test_sets "my_set"
# (stage 6 extracts its features and units when stages 2-3 have not; after changing its files, run from stage 2;
# its languages must be among --langs).
# Usage: ./run.sh [--stage N] [--stop-stage M] [--nj J] [--langs "en hi ta gu"] [--train_config_suffix _tiny]
#        mini corpus size: [--mini-train-min "en=24 hi=24 ta=8 gu=8"] [--mini-dev-min 1] [--mini-test-min 1]
#                          [--mini-train-spk 24] [--mini-dev-spk 4]
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh

stage=1
stop_stage=7
nj=2                                   # parallel jobs: feature extraction, trainings, decodings
langs="en hi ta gu"                    # language codes (local_models/multisoftmax/units.py LANGS)
systems="mono vanilla onehot multisoftmax multisoftmax_lsp multisoftmax_lid"  # mono = mono_<lang> per language
finetune="onehot multisoftmax"         # seeds finetuned into monolingual models (paper Table 3)
train_config_suffix=_tiny              # conf/tuning/train${suffix}.yaml: "" paper size, _tiny mini corpus, _smoke tests
# systems trained on single-language mini-batches as the paper (the others mix languages in a batch): with
# single-language batches the LID head of multisoftmax_lid collapsed to the language prior on the mini corpus
lang_batch_systems="multisoftmax multisoftmax_lsp"
# weight of multisoftmax_lid's frame-level LID cross-entropy (summed over frames, like the RNN-T loss over units):
# at 1.0 it matched the RNN-T loss in size and the model learnt neither (mini corpus: WER 100 %, LID 38 %)
lid_weight=0.1
# balance multisoftmax_lid's LID loss over languages (weights from dump/fbank/train_all/hours.json, see
# local_models/multisoftmax/model.py balanced_lid_weights): unbalanced, the mini corpus' 3:1 data drove the
# LID head to the large languages (Tamil and Gujarati test utterances: 0 % right). false: the paper's loss
lid_balance=true
# LSTM layers of multisoftmax_lid's own LID branch before its softmax (0: a frame MLP on the encoder output):
# with the MLP the tiny model told English from the rest but not Hindi, Tamil and Gujarati, even on its
# training data
lid_rnn_layers=1
ft_epochs=3                           # finetuning: epochs and learning rate (on top of the training config)
ft_lr=0.0003
test_sets=""                           # default: <lang>_test of every language
beam=4                                 # streaming beam search: beam, encoder frames (30 ms) per chunk
chunk=10
# early switch-off settings tau(frames):s_th: the paper's Table 7, then ours with larger s_th (the LSTM LID
# branch's summed log-posterior gaps pass 0.5 within a few frames, so the paper's s_th cut at tau on any lean)
switch_off_grid="inf:inf 1000:0.2 100:0.2 30:0.2 30:0.5 10:0.2 30:40 30:80 10:40"
mini_train_min="en=24 hi=24 ta=8 gu=8"   # mini corpus: training minutes per language
mini_dev_min=1                         # mini corpus: dev minutes per language
mini_test_min=1                        # mini corpus: test minutes per language
mini_train_spk=24                      # mini corpus: training / dev voices per language
mini_dev_spk=4
seed=0
ngpu=$(default_ngpu)    # GPUs per training job (0: CPU; > 1: ESPnet2's DDP); default 1 when nvidia-smi lists a GPU
gpu_inference=false     # decode on a GPU (through cuda_cmd)
inference_nj=2          # decoding jobs at a time (systems x test sets x modes)
inference_model=valid.loss.best.pth  # checkpoint that decodes: valid.loss.best.pth, valid.loss.ave.pth, latest.pth
train_args=""           # extra ESPnet2 training options, verbatim (they win), e.g. "--max_epoch 1"
inference_args=""       # extra indic_decode options, verbatim, e.g. "--beam 8"
. parse_options.sh
setup_devices

sets=""
for lang in ${langs}; do sets+="${lang}_train ${lang}_dev ${lang}_test "; done
[ -n "${sets}" ] || die "--langs is empty"
[ -n "${test_sets}" ] || test_sets=$(for l in ${langs}; do printf '%s_test ' "${l}"; done)
extra_sets=""   # --test_sets beyond the recipe's own sets: stages 2 and 3 process them too
for x in ${test_sets}; do [[ " ${sets} " == *" ${x} "* ]] || extra_sets+="${x} "; done
langs_yaml="[$(echo ${langs} | sed 's/ /, /g')]"
train_conf=conf/tuning/train${train_config_suffix}.yaml

# expand_systems: ${systems} with mono -> mono_<lang> for every language
expand_systems() {
    local s l
    for s in ${systems}; do
        if [ "${s}" = mono ]; then for l in ${langs}; do printf 'mono_%s ' "${l}"; done; else printf '%s ' "${s}"; fi
    done
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
        ft_*) system_conf "$(seed_of "$1")" ;;
        *) die "unknown system '$1' (mono, vanilla, onehot, multisoftmax, multisoftmax_lsp, multisoftmax_lid)" ;;
    esac
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
        --test-min "${mini_test_min}" --train-spk "${mini_train_spk}" --dev-spk "${mini_dev_spk}" --seed "${seed}" --nj "${nj}"
fi

if stage_enabled 2; then
    log "Stage 2: 80-dim log-mel (25 ms / 10 ms) -> dump/fbank/<set>/feats.{scp,shape}, utt2num_frames"
    require conf/fbank.conf "a feature config"
    for x in ${sets} ${extra_sets}; do
        require "data/${x}/wav.scp" "stage 1 (data)"
        validate_data_dir --no-feats "data/${x}"
    done
    for x in ${sets} ${extra_sets}; do extract "${x}"; done
fi

if stage_enabled 3; then
    log "Stage 3: units -> data/lang/{${langs// /,},union}/units.txt, data/<set>/text_{norm,units}"
    for x in ${sets} ${extra_sets}; do
        require "data/${x}/utt2lid" "stage 1 (data) or your --test_sets data dir"
        validate_data_dir --no-feats --no-wav "data/${x}"
    done
    python -m local_models.bin.indic_units --langs "${langs}" --sets "${sets} ${extra_sets}" data data/lang
fi

if stage_enabled 4; then
    log "Stage 4: training inputs -> dump/fbank/<set>/{text_int,lid_int,utt2category}, dump/fbank/{train,dev}_all"
    require "${train_conf}" "a training config (--train_config_suffix)"
    for x in ${sets}; do require "data/${x}/text_units" "stage 3 (units)"; done
    python -m local_models.bin.indic_prepare --langs "${langs}" --sets "${sets}" data data/lang dump/fbank
    for s in $(expand_systems); do
        l=$(lang_of "${s}")
        log "Stage 4: train ${s} (${train_conf}) -> exp/${s}"
        if [ -n "${l}" ]; then
            train_pool train "${s}" "${l}_train" "${l}_dev"
        elif [[ " ${lang_batch_systems} " == *" ${s} "* ]]; then
            train_pool train "${s}" train_all dev_all      # train_all/utt2category: single-language batches
        else
            train_pool train "${s}" train_mixed dev_all
        fi
    done
    pool_wait
fi

if stage_enabled 5; then
    for seed_sys in ${finetune}; do
        require "exp/${seed_sys}/${inference_model}" "stage 4 (training ${seed_sys})"
        for l in ${langs}; do
            log "Stage 5: finetune ${seed_sys} on ${l} (${ft_epochs} epochs, lr ${ft_lr}) -> exp/ft_${seed_sys}_${l}"
            train_pool train "ft_${seed_sys}_${l}" "${l}_train" "${l}_dev" --max_epoch "${ft_epochs}" \
                --optim_conf "lr=${ft_lr}" --init_param "exp/${seed_sys}/${inference_model}"
        done
    done
    pool_wait
fi
# decode NAME SET MODE [OPTIONS...]: streaming beam search of dump/fbank/SET with exp/NAME -> exp/NAME/decode_SET/MODE
decode() {
    local name=$1 x=$2 mode=$3 out=exp/$1/decode_$2/$3; shift 3
    run_logged "${out}" ${decode_launch} "${out}/decode.log" \
        python -m local_models.bin.indic_decode --model_dir "exp/${name}" --model_file "${inference_model}" \
            --ngpu "${inference_ngpu}" --feats "dump/fbank/${x}/feats.scp" --utt2lid "data/${x}/utt2lid" \
            --mode "${mode}" --beam "${beam}" --chunk "${chunk}" "$@" ${inference_args} "${out}"
}

if stage_enabled 6; then
    # a --test_sets data dir that stages 2-3 never saw (your own wav.scp + text + utt2lid): prepare it now, as
    # they would (units from the training sets, unchanged)
    for x in ${test_sets}; do
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
            python -m local_models.bin.indic_units --langs "${langs}" --sets "${sets} ${extra_sets}" data data/lang
        fi
    done
    for s in $(expand_systems) $(for f in ${finetune}; do for l in ${langs}; do printf 'ft_%s_%s ' "${f}" "${l}"; done; done); do
        [ -e "exp/${s}/${inference_model}" ] || { log "Stage 6: skip ${s} (no exp/${s}/${inference_model}: not trained)"; continue; }
        l=$(lang_of "${s}")
        for x in ${test_sets}; do
            # a monolingual (or finetuned) model decodes only the sets that hold its language
            if [ -n "${l}" ] && ! cut -d' ' -f2 "data/${x}/utt2lid" | grep -qx "${l}"; then continue; fi
            log "Stage 6: decode ${x} with ${s} (language known) -> exp/${s}/decode_${x}/known"
            decode_pool decode "${s}" "${x}" known ${l:+--only_lang "${l}"}
            if [ "${s}" = multisoftmax_lid ]; then
                log "Stage 6: decode ${x} with ${s}, language not known (+ switch-off grid: ${switch_off_grid})"
                decode_pool decode "${s}" "${x}" lidfree --switch_off_grid "${switch_off_grid}" \
                    --switch_off_dir "exp/${s}/decode_${x}/switchoff"
            fi
        done
    done
    pool_wait
fi

if stage_enabled 7; then
    log "Stage 7: score -> exp/results.json, RESULTS.md, exp/images/switchoff.png"
    corpus=mini
    [ -n "$(. ./db.sh; echo "${INDIC:-}")" ] && corpus=indic
    python -m local_models.bin.indic_score --langs "${langs}" --systems "$(expand_systems)" --finetune "${finetune}" \
        --test-sets "${test_sets}" --corpus "${corpus}" --exp exp --results RESULTS.md \
        --note "Training config conf/tuning/train${train_config_suffix}.yaml; beam ${beam}, chunks of ${chunk} encoder frames."
fi

log "Done (stages ${stage}-${stop_stage})"
