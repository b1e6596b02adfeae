"""Mel-cepstral distortion (and log-F0 RMSE, V/UV error) of hypothesis audio against reference audio.

REF and HYP are each a Kaldi wav.scp (`<utt> <path or command |>`) or a directory of <utt>.wav / .flac.
Utterances in both are scored; HYP keys missing from REF are an error, REF keys without HYP are skipped
(and counted). Definitions and analysis conventions: local_models/common/mcd.py.
  --dtw (default): DTW-aligned MCD, ESPnet evaluate_mcd style (order by rate, c1.. only).
  --no-dtw:        duration-aligned MCD, MUSA/SALAD (frames 1:1, c0..c39).
  --sample-rate HZ: resample both sides to HZ first (e.g. 16000 for TTS whose mel stops at 7.6 kHz: above
                   the model's band neither vocoder has information, and that empty band otherwise dominates).
Prints the frame-pooled and per-utterance-mean figures; --json / --per-utt write them (atomically).
"""
import argparse
import sys

from local_models.common.datadir import DataDirError
from local_models.common.mcd import add_f0_method_arg, score_sources, summary_lines, write_reports


def get_parser():
    p = argparse.ArgumentParser(prog="mcd_score", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ref", required=True, help="reference: wav.scp or directory of <utt>.wav")
    p.add_argument("--hyp", required=True, help="hypothesis: wav.scp or directory of <utt>.wav")
    p.add_argument("--dtw", action=argparse.BooleanOptionalAction, default=True,
                   help="DTW-aligned (default) or duration-aligned (--no-dtw) MCD")
    p.add_argument("--order", type=int, default=None,
                   help="mel-cepstrum order (default: by rate for --dtw, 23 at 16 kHz; 39 for --no-dtw)")
    p.add_argument("--include-c0", action=argparse.BooleanOptionalAction, default=None,
                   help="score c0 too (default: no for --dtw, yes for --no-dtw)")
    p.add_argument("--alpha", type=float, default=None, help="all-pass constant (default pysptk mcepalpha(sr))")
    p.add_argument("--shift-ms", type=float, default=5.0, help="frame shift in ms (default 5)")
    add_f0_method_arg(p)
    p.add_argument("--f0-floor", type=float, default=40.0)
    p.add_argument("--f0-ceil", type=float, default=800.0)
    p.add_argument("--sample-rate", type=int, default=None,
                   help="resample reference and hypothesis to this rate before the analysis (default: as read)")
    p.add_argument("--json", help="write corpus figures, settings and per-utterance values here")
    p.add_argument("--per-utt", help="write a per-utterance TSV here")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    analysis = {"shift_ms": args.shift_ms, "alpha": args.alpha, "f0_method": args.f0_method,
                "f0_floor": args.f0_floor, "f0_ceil": args.f0_ceil}
    try:
        out = score_sources(args.ref, args.hyp, args.dtw, args.order, args.include_c0, args.sample_rate, **analysis)
        print("\n".join(summary_lines(out)))
        write_reports(out, args.json, args.per_utt)
    except (DataDirError, ValueError, OSError) as e:
        print(f"mcd_score: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
