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
#           by script, multisoftmax_lid by its LID head, + oracle, + early switch-off grid on test and dev, Table 7)
#         7 score: WER / WERR / LID accuracy / #params -> RESULTS.md (Tables 2-7), results.json; switch-off set on dev
#         8 pack every trained system -> exp/<system>/packed/model.tar.gz (config, checkpoint, fbank.conf, stats,
#           unit lists, search + --switch_off setting, card with the scores): `speech-to-text --model` reads it
# Decode + score any data dir with wav.scp, text, utt2lid (languages in --langs): ./run.sh --stage 6 --test_sets my_set
# (stage 6 extracts its features and units when stages 2-3 have not; after changing its files, run from stage 2).
# Usage: ./run.sh [--stage N] [--stop-stage M] [--nj J] [--langs "en hi ta gu"] [--train_config_suffix _tiny]
#        mini corpus size: [--mini-train-min "en=24 hi=24 ta=8 gu=8"] [--mini-dev-min 1] [--mini-test-min 1]
#                          [--mini-train-spk 24] [--mini-dev-spk 4]
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh

stage=1
stop_stage=8
nj=2                                   # parallel jobs: feature extraction, trainings, decodings
langs="en hi ta gu"                    # language codes (local_models/multisoftmax/units.py LANGS)
systems="mono vanilla onehot multisoftmax multisoftmax_lsp multisoftmax_lid"  # mono = mono_<lang> per language
finetune="onehot multisoftmax"         # seeds finetuned into monolingual models (paper Table 3)
train_config_suffix=_tiny              # conf/tuning/train${suffix}.yaml: "" paper size, _tiny mini corpus, _smoke tests
# single-language mini-batches as the paper (others: mixed; multisoftmax_lid's LID collapsed to the prior on them)
lang_batch_systems="multisoftmax multisoftmax_lsp"
lid_weight=0.1       # multisoftmax_lid's LID cross-entropy weight (at 1.0 the mini corpus learnt neither task)
lid_balance=true     # balance the LID loss over languages' hours (unbalanced: ta, gu 0 % LID); false: the paper's
lid_rnn_layers=1     # LSTM layers in the LID branch (0: a frame MLP, which could not tell hi, ta and gu apart)
ft_epochs=3                            # finetuning: epochs and learning rate (on top of the training config)
ft_lr=0.0003
test_sets=""                           # default: <lang>_test of every language
beam=4                                 # streaming beam search: beam, encoder frames (30 ms) per chunk
chunk=10
# early switch-off tau(frames):s_th: paper Table 7, then ours with larger s_th (LSTM LID gaps pass 0.5 at once)
switch_off_grid="inf:inf 1000:0.2 100:0.2 30:0.2 30:0.5 10:0.2 30:40 30:80 10:40"
switch_off=dev         # the packed LID model's streaming (Speech2Text.stream): dev = stage 7's choice, or tau:s_th
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
results_md=RESULTS.md   # stage 7's report (local/demo.sh: exp/RESULTS.md, the committed one stays)
. parse_options.sh
setup_devices
. local/lib.sh          # expand_systems, system_conf, train, train_system, extract, prepare_test_set, decode

sets=""
for lang in ${langs}; do sets+="${lang}_train ${lang}_dev ${lang}_test "; done
[ -n "${sets}" ] || die "--langs is empty"
[ -n "${test_sets}" ] || test_sets=$(for l in ${langs}; do printf '%s_test ' "${l}"; done)
extra_sets=""   # --test_sets beyond the recipe's own sets: stages 2 and 3 process them too
for x in ${test_sets}; do [[ " ${sets} " == *" ${x} "* ]] || extra_sets+="${x} "; done
langs_yaml="[$(echo ${langs} | sed 's/ /, /g')]"
train_conf=conf/tuning/train${train_config_suffix}.yaml

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
    make_units
fi

if stage_enabled 4; then
    log "Stage 4: training inputs -> dump/fbank/<set>/{text_int,lid_int,utt2category}, dump/fbank/{train,dev}_all"
    require "${train_conf}" "a training config (--train_config_suffix)"
    for x in ${sets}; do require "data/${x}/text_units" "stage 3 (units)"; done
    python -m local_models.bin.indic_prepare --langs "${langs}" --sets "${sets}" data data/lang dump/fbank
    for s in $(expand_systems); do
        log "Stage 4: train ${s} (${train_conf}) -> exp/${s}"
        train_system "${s}"
    done
    pool_wait
fi

if stage_enabled 5; then
    for seed_sys in ${finetune}; do
        require "exp/${seed_sys}/${inference_model}" "stage 4 (training ${seed_sys})"
        for l in ${langs}; do
            log "Stage 5: finetune ${seed_sys} on ${l} (${ft_epochs} epochs, lr ${ft_lr}) -> exp/ft_${seed_sys}_${l}"
            train_pool train "ft_${seed_sys}_${l}" "${l}_train" "${l}_dev" --max_epoch "${ft_epochs}" \
                --optim_conf "lr=${ft_lr}" --init_param "$(ft_init_param "${seed_sys}" "${l}")"
        done
    done
    pool_wait
fi

if stage_enabled 6; then
    for x in ${test_sets}; do prepare_test_set "${x}"; done
    for s in $(expand_systems) $(finetuned_systems); do
        [ -e "exp/${s}/${inference_model}" ] || { log "Stage 6: skip ${s} (no exp/${s}/${inference_model}: not trained)"; continue; }
        decode_system "${s}"  # every test set (known language; multisoftmax_lid also LID-free + switch-off grid)
    done
    pool_wait
fi

if stage_enabled 7; then
    log "Stage 7: score -> exp/results.json, ${results_md}, exp/images/switchoff.png"
    corpus=$(corpus_name INDIC indic)
    python -m local_models.bin.indic_score --langs "${langs}" --systems "$(expand_systems)" --finetune "${finetune}" \
        --test-sets "${test_sets}" --corpus "${corpus}" --exp exp --results "${results_md}" \
        --note "Training config conf/tuning/train${train_config_suffix}.yaml; beam ${beam}, chunks of ${chunk} encoder frames."
fi

if stage_enabled 8; then
    for s in $(expand_systems) $(finetuned_systems); do
        [ -e "exp/${s}/${inference_model}" ] || { log "Stage 8: skip ${s} (no exp/${s}/${inference_model}: not trained)"; continue; }
        log "Stage 8: pack ${s} (${inference_model}, beam ${beam}, chunk ${chunk}) -> exp/${s}/packed/model.tar.gz"
        pack "${s}"
    done
fi

log "Done (stages ${stage}-${stop_stage})"
