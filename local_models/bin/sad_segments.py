"""Tune a SAD system's threshold on a reference set and/or write detected speech (segments, RTTM)."""
import argparse
import sys
from pathlib import Path

from local_models.common.datadir import DataDirError
from local_models.sad.decisions import (FA_BOUND, FA_BOUND_SUFFIX, PRIMARY_COLLAR, bounded_path, read_threshold_file,
                                       tune_threshold, write_detections)
from local_models.sad.registry import get_detector
from local_models.sad.systems import DETECTORS


def get_parser():
    p = argparse.ArgumentParser(
        prog="sad_segments",
        description="With --tune DATA_DIR: sweep the system's thresholds against DATA_DIR's reference (ref.rttm "
        f"or ref_segments), pick the lowest pooled DCF (collar {PRIMARY_COLLAR} s), write it to --threshold-file "
        "and the sweep to <threshold-file>.sweep.json; when DATA_DIR has an events table, also the FA-bounded "
        f"threshold (the lowest DCF among those calling at most {FA_BOUND * 100:.0f} % of the music and of the tone time "
        f"speech there) to <threshold-file>{FA_BOUND_SUFFIX}. Then, for every DECODE_DIR (made by sad_decode), write "
        "DECODE_DIR/segments and DECODE_DIR/hyp.rttm using the threshold in --threshold-file (or the system default), "
        f"and DECODE_DIR/hyp{FA_BOUND_SUFFIX}.rttm at the FA-bounded one when there is one.",
    )
    p.add_argument("--system", required=True, choices=sorted(DETECTORS))
    p.add_argument("--threshold-file", required=True, help="read (and with --tune, written)")
    p.add_argument("--tune", nargs=2, metavar=("DECODE_DIR", "DATA_DIR"), help="tune on this decoded reference set")
    p.add_argument("decode_dirs", nargs="*")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    detector = get_detector(args.system)
    th_file = Path(args.threshold_file)
    try:
        if args.tune:
            tune_threshold(detector, args.system, *args.tune, th_file)
        threshold = read_threshold_file(th_file)
        threshold = detector.threshold if threshold is None else threshold
        write_detections(detector, threshold, args.decode_dirs, read_threshold_file(bounded_path(th_file)))
    except (DataDirError, OSError, ValueError) as e:
        print(f"sad_segments: {e}", file=sys.stderr)
        return 1
    print(f"sad_segments: {args.system}: threshold {threshold} -> {len(args.decode_dirs)} decode dir(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
