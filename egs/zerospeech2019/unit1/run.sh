#!/usr/bin/env bash
# ZeroSpeech 2019 unit1 (paper 003, Tjandra et al.): Transformer VQ-VAE unit discovery + codebook inverter, on
# ZeroSpeech 2019 English (db.sh ZEROSPEECH2019), else on the espeak-ng English mini corpus (local/data.sh).
# --corpus real: Flight of the Amazon Queen's recorded dialogue (real English, Debian flight-of-the-amazon-queen;
# local/prepare_real.py): units discovered on its characters' speech, Joe the inverter's target voice, four
# characters held out as test; no phone times, so ABX is n/a; in exp/real/ (its own data, dump and exp) with the
# report RESULTS_real.md.
# The stages are local_models/vqvae/stages.sh (shared by every corpus this model runs on); `./run.sh --help` lists
# them and every option.
# Usage: ./run.sh [--stage N] [--stop-stage M] [--corpus real] [options]
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh
. "${MAIN_ROOT}/local_models/vqvae/stages.sh"   # the stages and their default options
# this corpus's settings (override a stage default; corpus-only options: the mini corpus's sizes)
corpus=$(corpus_name ZEROSPEECH2019 zs2019)  # zs2019 when db.sh points at the corpus, else mini; or real (FOTAQ)
unit_min=12   # mini corpus size (minutes)
voice_min=5
test_min=3
dev_min=3     # mini corpus: the dev set (4 other unseen speakers) the ordering check's candidate is picked on
abx_item=""          # ZeroSpeech 2019: the evaluation package's ABXpy .item file of english/test (stage 6's ABX)
bitrate_filelist=""  # ZeroSpeech 2019: the evaluation package's bitrate_filelist.txt (default: found in the corpus)
fotaq_root=""        # real: an unpacked flight-of-the-amazon-queen tree (default: fetch the pinned package; cache:
                     # $SPEECH_RECIPES_DEBIAN)
real_test_speakers="fotaq_death fotaq_klunk fotaq_chief fotaq_henry"  # real: characters held out as test
readonly default_systems=${systems}  # (not an option) --systems as the stages set it, to tell a given one
readonly default_dev_set=${dev_set}  # (not an option) likewise --dev_set: ZeroSpeech 2019 and real have no dev ABX set
. parse_options.sh
local_data_opts="--unit-min ${unit_min} --voice-min ${voice_min} --test-min ${test_min} --dev-min ${dev_min} \
--seed ${seed} --nj ${nj} \
${abx_item:+--abx-item $(realpath "${abx_item}")} ${bitrate_filelist:+--bitrate-filelist $(realpath "${bitrate_filelist}")} \
${local_data_opts}"  # local/data.sh's options
# ZeroSpeech 2019 and the real corpus have no dev ABX set: no candidate picked (every one compared), unless given
case "${corpus}" in mini) ;; *) [ "${dev_set}" != "${default_dev_set}" ] || dev_set="" ;; esac
case "${corpus}" in
    mini|zs2019) ;;
    real)
        # no ABX to compare seeds by: every paper row once (the bitrate checks), unless --systems says otherwise
        [ "${systems}" != "${default_systems}" ] || systems=tables
        [ "${results_md}" != RESULTS.md ] || results_md=RESULTS_real.md
        results_md=$(realpath -m "${results_md}")  # paths given here, before the work dir
        local_data_opts+=" --corpus real --test-speakers ${real_test_speakers// /,}"
        if [ -n "${fotaq_root}" ]; then local_data_opts+=" --fotaq-root $(realpath "${fotaq_root}")"; fi
        corpus="Flight of the Amazon Queen's recorded dialogue (Debian flight-of-the-amazon-queen 1.0.0-9): real"
        corpus+=" English game characters, 11.025 kHz MP3 read at 16 kHz; target voice Joe; test: characters never"
        corpus+=" trained on (${real_test_speakers})"
        mkdir -p exp/real   # the work dir: data/, dump/, exp/ apart from the mini corpus run's
        for f in conf local path.sh cmd.sh db.sh run.sh; do ln -sfn "../../${f}" "exp/real/${f}"; done
        cd exp/real ;;
    *) die "--corpus ${corpus}: mini, zs2019 (db.sh ZEROSPEECH2019) or real" ;;
esac
run_stages
