#!/usr/bin/env bash
# TC-STAR Spanish (paper 000, Pascual et al.): SALAD vs MUSA-RNN acoustic models, forced and predicted durations,
# one model set per speaker: TC-STAR via db.sh, else the espeak-ng Spanish mini corpus (male M1 + female F1).
# --corpus real: one real Spanish reader (Tux Paint's stamp descriptions, a woman: the paper's F1), labels from the
# front end + an espeak-ng rendition DTW-aligned to each clip, in exp/real/ (its own data, dump and exp) with the
# report RESULTS_real.md.
# The stages are local_models/salad/stages.sh (shared by every corpus this model runs on); `./run.sh --help`
# lists them and every option.
# Usage: ./run.sh [--stage N] [--stop-stage M] [options]
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh
. "${MAIN_ROOT}/local_models/salad/stages.sh"   # the stages and their default options

# this corpus's settings (override a stage default; corpus-only options such as the mini corpus's size)
speakers="M1 F1"
train_config_suffix=_tiny  # the mini corpus's size (a real TC-STAR run: --train_config_suffix "", the paper's)
corpus=tcstar           # tcstar: TC-STAR via db.sh, else the mini corpus; real: Tux Paint's Spanish reader
mini_utts=160           # mini corpus: utterances per speaker (local/data.sh)
real_valid=11.5%        # real: held-out clips (a count or a share; TC-STAR's shares), by a hash of the utterance id
real_test=11.5%
tuxpaint_root=""        # real: an unpacked tuxpaint-stamps-default tree (default: fetch the pinned .deb; cache:
                        # $SPEECH_RECIPES_DEBIAN)
. parse_options.sh

case "${corpus}" in
    tcstar|mini)
        corpus=$(corpus_name TCSTAR tcstar)  # tcstar when db.sh points at TC-STAR, else mini
        local_data_opts="--mini-utts ${mini_utts} ${local_data_opts}" ;;
    real)
        [ "${speakers}" != "M1 F1" ] || speakers=F1  # one reader, a woman (median F0 about 250 Hz)
        [ "${f0_method}" != dio ] || f0_method=harvest  # recorded speech: WORLD's robust F0 (dio: clean synthesis)
        [ "${results_md}" != RESULTS.md ] || results_md=RESULTS_real.md
        results_md=$(realpath -m "${results_md}")  # paths given here, before the work dir
        local_data_opts="--corpus real --real-valid ${real_valid} --real-test ${real_test} ${local_data_opts}"
        [ -z "${tuxpaint_root}" ] || local_data_opts+=" --tuxpaint-root $(realpath "${tuxpaint_root}")"
        corpus="Tux Paint's stamp descriptions read aloud in Spanish (Debian tuxpaint-stamps-default) as speaker"
        corpus+=" ${speakers}: ONE real reader (a woman), short descriptions of pictures (\"Una rana.\"), 44.1 kHz"
        corpus+=" stereo Ogg Vorbis resampled to 16 kHz mono; clips whose text holds a symbol the front end cannot"
        corpus+=" read (\$ € ¥ = º) left out; phone times from a synthesis-based alignment (an espeak-ng rendition"
        corpus+=" DTW-aligned to each clip), not hand labels; train, valid and test are the same person"
        mkdir -p exp/real   # the work dir: data/, dump/, exp/ apart from the mini corpus's
        for f in conf local path.sh cmd.sh db.sh; do ln -sfn "../../${f}" "exp/real/${f}"; done
        cd exp/real ;;
    *) die "--corpus ${corpus}: tcstar or real" ;;
esac
run_stages
