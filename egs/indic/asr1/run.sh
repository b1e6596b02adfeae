#!/usr/bin/env bash
# Indian-language ASR (multi-softmax RNN-T, Joshi et al., Interspeech 2021; paper 001): En-IN, Hi-IN, Ta-IN,
# Gu-IN in native scripts, from db.sh INDIC (MUCS 2021 as distributed: --langs "gu hi mr or ta te"; or
# per-language Kaldi dirs) or the espeak-ng mini corpus (en, hi large; ta, gu small, as in the paper's Table 1). The stages are local_models/multisoftmax/stages.sh (shared by every
# corpus this model runs on); `./run.sh --help` lists them and every option.
# --corpus real: recorded human speech from Debian packages (local/prepare_real.py): Czech and Dutch (Fish Fillets NG's
# dialogue, ~1.5 h each: the large languages), Spanish, Catalan, French (Tux Paint's readers, <= 22 min: the small
# ones), all Latin script; in exp/real/ (its own data, dump and exp) with the report RESULTS_real.md.
# Usage: ./run.sh [--stage N] [--stop-stage M] [--nj J] [--langs "en hi ta gu"] [--train_config_suffix _tiny]
#        mini corpus size: [--mini-train-min "en=24 hi=24 ta=8 gu=8"] [--mini-dev-min 1] [--mini-test-min 1]
#                          [--mini-train-spk 24] [--mini-dev-spk 4]
#        real corpus: --corpus real [--real-dev 5%] [--real-test 5%] [--real-rate 16000] [--tuxpaint-root DIR]
#                     [--fillets-root DIR] [--fillets-voices-root DIR]
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh
. "${MAIN_ROOT}/local_models/multisoftmax/stages.sh"   # the stages and their default options
# this corpus's settings
corpus=$(corpus_name INDIC indic)      # indic (db.sh INDIC set), else mini; real: the real-speech corpus (Debian)
train_config_suffix=_tiny              # conf/tuning/train${suffix}.yaml: "" paper size, _tiny mini corpus, _smoke tests
mini_train_min="en=24 hi=24 ta=8 gu=8"   # mini corpus: training minutes per language
mini_dev_min=1                         # mini corpus: dev minutes per language
mini_test_min=1                        # mini corpus: test minutes per language
mini_train_spk=24                      # mini corpus: training / dev voices per language
mini_dev_spk=4
sample_rate=lowest                     # INDIC: one rate for every language (lowest: the set's lowest, e.g. MUCS 8 kHz)
dev_percent=5                          # INDIC in the MUCS layout: dev carved from train (local/prepare_mucs.py)
real_langs="cs nl es ca fr"            # real: the languages when --langs is not given (cs nl large; es ca fr small)
real_dev=5%                            # real: held-out dev / test clips per language, by a hash of the utterance id
real_test=5%
real_rate=16000                        # real: the rate every language is read at (sources: 22.05 / 44.1 kHz)
tuxpaint_root=""                       # real: unpacked package trees (default: fetch the pinned .debs, cached in
fillets_root=""                        #   $SPEECH_RECIPES_DEBIAN); --fillets-voices-root: one tree holding every
fillets_voices_root=""                 #   Fillets language's sound/<level>/<lang>/ (default: fillets-ng-data-<lang>)
default_langs=${langs}
. parse_options.sh
# stage 1: local/data.sh's options (minutes as en=24,hi=24,...: one word each)
local_data_opts="--train-min ${mini_train_min// /,} --dev-min ${mini_dev_min} --test-min ${mini_test_min}
    --train-spk ${mini_train_spk} --dev-spk ${mini_dev_spk} --seed ${seed} --nj ${nj}
    --sample-rate ${sample_rate} --dev-percent ${dev_percent} ${local_data_opts}"
case "${corpus}" in
    mini|indic) ;;
    real)
        [ "${langs}" != "${default_langs}" ] || langs=${real_langs}
        [ "${results_md}" != RESULTS.md ] || results_md=RESULTS_real.md
        results_md=$(realpath -m "${results_md}")  # paths given here, before the work dir
        local_data_opts+=" --corpus real --real-dev ${real_dev} --real-test ${real_test} --real-rate ${real_rate}"
        for opt in tuxpaint_root fillets_root fillets_voices_root; do  # trees: absolute, before the work dir
            if [ -n "${!opt}" ]; then local_data_opts+=" --${opt//_/-} $(realpath "${!opt}")"; fi
        done
        corpus="real speech from Debian packages: cs, nl Fish Fillets NG dialogue (2 actors + extras each), es, ca, fr"
        corpus+=" Tux Paint stamp descriptions (1 reader each); Latin script; dev/test speakers are training speakers"
        mkdir -p exp/real   # the work dir: data/, dump/, exp/ apart from the mini corpus run's
        for f in conf local path.sh cmd.sh db.sh; do ln -sfn "../../${f}" "exp/real/${f}"; done
        cd exp/real ;;
    *) die "--corpus ${corpus}: mini, indic (db.sh INDIC) or real" ;;
esac
run_stages
