"""Global mean / variance statistics of a feats.scp, in ESPnet2's feats_stats.npz format.

Writes OUT.npz with `count` (number of frames, scalar), `sum` and `sum_square` (per dimension, float64):
what `espnet2.layers.global_mvn.GlobalMVN` loads for `normalize: global_mvn` (`normalize_conf:
stats_file: OUT.npz`), and what ESPnet2's collect_stats writes. Streams the features (one utterance
in memory at a time). Also prints the mean and standard deviation range as a sanity check.
"""
import argparse
import io
import sys

import numpy as np

from local_models.common.datadir import atomic_open


def get_parser():
    p = argparse.ArgumentParser(prog="feats_stats", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("feats_scp", metavar="FEATS_SCP")
    p.add_argument("out", metavar="OUT_NPZ")
    return p


def compute_stats(feats_scp):
    import kaldiio

    count, total, total_sq, dim = 0, None, None, None
    for lineno, (utt, mat) in enumerate(kaldiio.load_scp_sequential(str(feats_scp)), 1):
        mat = np.asarray(mat, dtype=np.float64)
        if mat.ndim != 2 or mat.shape[0] == 0:
            raise ValueError(f"{feats_scp}:{lineno}: '{utt}' has shape {mat.shape}, expected (frames > 0, dims)")
        if dim is None:
            dim, total, total_sq = mat.shape[1], np.zeros(mat.shape[1]), np.zeros(mat.shape[1])
        elif mat.shape[1] != dim:
            raise ValueError(f"{feats_scp}:{lineno}: '{utt}' has {mat.shape[1]} dims, earlier utterances {dim}")
        count += mat.shape[0]
        total += mat.sum(axis=0)
        total_sq += (mat * mat).sum(axis=0)
    if not count:
        raise ValueError(f"{feats_scp}: no features")
    return {"count": np.array(count), "sum": total, "sum_square": total_sq}


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        stats = compute_stats(args.feats_scp)
    except (ValueError, OSError) as e:
        print(f"feats_stats: error: {e}", file=sys.stderr)
        return 1
    buf = io.BytesIO()
    np.savez(buf, **stats)
    with atomic_open(args.out, "wb", encoding=None) as f:
        f.write(buf.getvalue())
    mean = stats["sum"] / stats["count"]
    std = np.sqrt(np.maximum(stats["sum_square"] / stats["count"] - mean ** 2, 0))
    print(f"feats_stats: {int(stats['count'])} frames x {len(mean)} dims; mean {mean.min():.2f}..{mean.max():.2f}, "
          f"std {std.min():.2f}..{std.max():.2f} -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
