"""Collect the segment-RNN (L, S) grid of paper Fig. 7: dev DCF at each model's own best threshold.

Each MODEL_DIR is a trained seg_rnn exp dir (config.yaml gives seg_len L and seg_shift S, in 10 ms frames)
holding threshold.sweep.json, the dev sweep written by `sad_segments --tune`. Writes OUT_JSON
({"points": [{L, S, L_ms, S_ms, dcf, threshold, model_dir}], "best": <the lowest-DCF point>, "reference": {...}})
and a plot of DCF against
L, one line per S, with the reference system (CNN + HMM in the paper) as a red horizontal line.
"""
import argparse
import sys
from pathlib import Path

from local_models.sad import grid


def get_parser():
    p = argparse.ArgumentParser(prog="sad_seg_grid", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reference", help="threshold.sweep.json of the reference system (e.g. exp/cnn_hmm/...)")
    p.add_argument("--reference-label", default="CNN + HMM")
    p.add_argument("--out-json", default="exp/seg_grid/grid.json")
    p.add_argument("--plot", default="exp/images/seg_rnn_grid.png")
    p.add_argument("model_dirs", nargs="+")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        points, reference = grid.collect(args.model_dirs, args.reference, args.reference_label)
    except (OSError, ValueError, KeyError) as e:
        print(f"sad_seg_grid: {e}", file=sys.stderr)
        return 1
    twice = grid.duplicate(points)
    if twice:
        print(f"sad_seg_grid: {twice}", file=sys.stderr)
        return 1
    grid.write_grid(points, reference, args.out_json)
    grid.plot_grid(points, reference, Path(args.plot))
    for p in points:
        print(f"sad_seg_grid: L {p['L_ms']:4d} ms  S {p['S_ms']:4d} ms  dev DCF {100 * p['dcf']:6.2f} %", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
