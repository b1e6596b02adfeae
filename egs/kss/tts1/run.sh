#!/usr/bin/env bash
# KSS Korean single-speaker TTS (paper 002, Lim et al.): JDI-T vs ESPnet Tacotron2 / Transformer / FastSpeech.
# The stages are local_models/jdit/stages.sh (shared by every corpus this model runs on); `./run.sh --help` lists
# them and every option. Stage 1 (local/data.sh): KSS via db.sh (expanded text, 22.05 kHz through sox pipes; the
# last 250 utterances held out, 200 dev + 50 test), else the espeak-ng Korean mini corpus with true phone times
# (data/<set>/phones.ctm); data/ood: out-of-domain sentences for the attention-robustness test (KSS: text only).
# --corpus real (or tuxpaint_es): one real Spanish reader (Tux Paint's stamp descriptions, espeak-ng Spanish phoneme
# tokens, no true phone times), in exp/real/ (its own data, dump and exp) with the report RESULTS_real.md.
# Usage: ./run.sh [--stage N] [--stop-stage M] [options]
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh
# shellcheck source=../../../local_models/jdit/stages.sh
. "${MAIN_ROOT}/local_models/jdit/stages.sh"   # the stages and their default options

# this corpus's settings (override a stage default; corpus-only options of local/data.sh)
train_set=train
valid_set=dev
test_sets="test ood"
sealed_sets="test ood"  # only scored: JDI-T's settings are chosen on --dev-set (dev)
kss_dev=200             # KSS: held-out utterances at the end of the transcript (paper: 200 valid + 50 test)
kss_test=50
mini_utts=300           # mini corpus size (db.sh empty); the last 10 % are held out (dev 5 %, test 5 %)
results_md=RESULTS.md   # stage 6's report (local/demo.sh writes exp/RESULTS.md: the committed one stays)
corpus=kss              # kss: KSS via db.sh, else the espeak-ng Korean mini corpus; real (= tuxpaint_es): the real reader
real_dev=5%             # real: held-out clips (a count or a share), chosen by a hash of the utterance id
real_test=5%
tuxpaint_root=""        # real: an unpacked tuxpaint-stamps-default tree (default: fetch the pinned .deb; cache:
                        # $SPEECH_RECIPES_DEBIAN)
# shellcheck source=../../../utils/parse_options.sh
. parse_options.sh

case "${corpus}" in
    kss)
        corpus=$(. ./db.sh; [ -n "${KSS}" ] && echo "KSS (${KSS})" || echo "espeak-ng Korean mini corpus")
        local_data_opts="--kss-dev ${kss_dev} --kss-test ${kss_test} --mini-utts ${mini_utts} --seed ${seed} --nj ${nj} ${local_data_opts}" ;;
    real|tuxpaint_es)
        lang=es
        [ "${results_md}" != RESULTS.md ] || results_md=RESULTS_real.md
        results_md=$(realpath -m "${results_md}")  # paths given here, before the work dir
        local_data_opts="--corpus real --real-dev ${real_dev} --real-test ${real_test} ${tuxpaint_root:+--tuxpaint-root $(realpath "${tuxpaint_root}")} ${local_data_opts}"
        corpus="Tux Paint's stamp descriptions read aloud in Spanish (Debian tuxpaint-stamps-default): ONE real reader, short descriptions of pictures (\"Una rana.\"), 44.1 kHz stereo Ogg Vorbis resampled to 22.05 kHz mono; espeak-ng Spanish phoneme tokens; no true phone times"
        mkdir -p exp/real   # the work dir: data/, dump/, exp/ apart from the Korean run's
        for f in conf local path.sh cmd.sh db.sh; do ln -sfn "../../${f}" "exp/real/${f}"; done
        cd exp/real ;;
    *) die "--corpus ${corpus}: kss or real (tuxpaint_es)" ;;
esac
run_stages
