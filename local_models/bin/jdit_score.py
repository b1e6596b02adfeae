"""Scoring stage of egs/kss/tts1 (paper 002, JDI-T): collect what stages 5-6 measured into exp/results.json and
RESULTS.md (run from the recipe directory).

Per system (exp/tts_<system>) and the GT-mel rows (exp/gt_mel: the systems' vocoder on the reference mels;
exp/gt_mel_pwg or exp/gt_mel_griffin_lim: the other vocoder on them), per test set: MCD (DTW) and log-F0 RMSE /
V/UV error from <decode>/mcd.json (local_models/bin/mcd_score.py), real-time factors and audio checks from
<decode>/synth.json (local_models/bin/jdit_synth.py). Duration accuracy on sets with true durations
(data/<set>/durations, the mini corpus; also data/<set>/durations_closure, the same phone times with each stop's
closure given to the stop, the usual phonetic convention, where espeak-ng's events give it to the phone before):
JDI-T's aligner (teacher forced) and duration predictor
(exp/tts_jdit/align_<set>), against the "uniform" reference point (each utterance's true frame count
spread evenly over its tokens: what knowing only the length gives), and FastSpeech's durations: its teacher's,
the Transformer's teacher-forced attention (exp/tts_transformer/teacher_<set>/durations/durations, ESPnet2's
extraction; its extra last entry, the <sos/eos> token's, dropped).

Attention failures of the autoregressive models (Tacotron2, Transformer), per utterance, from the attention
saved at synthesis (<decode>/att_ws/<utt>.npy; for the Transformer the encoder-decoder head with the highest
focus rate = mean over frames of the largest weight, as ESPnet's DurationCalculator picks it), with p_t the
argmax input token of output frame t:
  skip:       p_t - p_{t-1} > SKIP_TOKENS (it jumps over more than a syllable: phoneme and jamo tokens come 2-3
              per syllable, and a silent initial or a <space> (jamo) may legitimately take no frame),
  repeat:     p_t < max_{s<t} p_s - SKIP_TOKENS (it goes back over a syllable it had passed),
  incomplete: the last frame's p_T is not among the last SKIP_TOKENS input tokens (stopped early), or the
              decoder ran to its maximum length (never stopped).
The failure rate is the share of utterances with at least one of them.

Beside the DTW MCD, the 1:1 MCD (frame t against frame t over the longer of the two, the shorter held at its last
frame) and the length ratio (synthesised / reference frames) catch a wrong length, which DTW hides. A system whose
attention (a student: its teacher's) failed on more than half the utterances, or whose length ratio lies outside
0.5-2, is reported as not converged and left out of the MCD ordering. Verdicts (local_models/common/verdict.py):
the ordering of each converged baseline against JDI-T (its frame-pooled MCD minus JDI-T's, paired bootstrap over
utterances, by speaker where a set has several) and the aligner's duration goal (MAE < 2 frames, on the upper end
of its interval), each with the set JDI-T's settings were chosen on (--chosen-on). A scoring of a --sealed-sets set
is a look (exp/sealed_looks.tsv, under the fingerprint of --config-files and --option): results.json
"sealed_looks", RESULTS.md's Verdicts section.
"""
import argparse
import sys

from local_models.jdit.report import ScoreOptions, score
from local_models.jdit.systems import GT_MEL_ROWS


def get_parser():
    p = argparse.ArgumentParser(prog="jdit_score", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--systems", nargs="+", required=True, help="trained systems (exp/tts_<system>)")
    p.add_argument("--sets", nargs="+", required=True, help="test sets (first one with audio = the main table)")
    p.add_argument("--corpus", required=True, help="corpus description for RESULTS.md / results.json")
    p.add_argument("--gt-mel-rows", nargs="+", default=list(GT_MEL_ROWS),
                   help="exp/<row>/decode_<set> dirs of vocoders on the reference mels")
    p.add_argument("--exp", default="exp")
    p.add_argument("--data", default="data")
    p.add_argument("--results-md", default="RESULTS.md")
    p.add_argument("--sealed-sets", nargs="*", default=["test"], help="sets only scored, never chosen on")
    p.add_argument("--dev-set", default=None,
                   help="where JDI-T's settings are chosen: its aligner durations are scored beside the test sets'")
    p.add_argument("--chosen-on", default="dev",
                   help="the set JDI-T's departures from the paper were chosen on (each verdict states it)")
    p.add_argument("--config-files", nargs="*", default=[], help="the configuration files that define the systems")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a run option that defines the systems (repeatable): with --config-files, the looks' "
                        "configuration fingerprint")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    bad = [o for o in args.option if "=" not in o]
    if bad:
        sys.exit(f"jdit_score: --option {bad[0]}: expected KEY=VALUE")
    try:
        score(ScoreOptions(systems=tuple(args.systems), sets=tuple(args.sets), corpus=args.corpus,
                           gt_mel_rows=tuple(args.gt_mel_rows), exp=args.exp, data=args.data,
                           results_md=args.results_md, sealed_sets=tuple(args.sealed_sets), dev_set=args.dev_set,
                           chosen_on=args.chosen_on, config_files=tuple(args.config_files),
                           options=dict(o.split("=", 1) for o in args.option)))
    except (ValueError, OSError, KeyError) as e:
        sys.exit(f"jdit_score: {e}")
    print(f"jdit_score: {args.results_md}, {args.exp}/results.json")


if __name__ == "__main__":
    main()
