"""Collect the segment-RNN (L, S) grid of paper Fig. 7: dev DCF at each model's own best threshold.

Each MODEL_DIR is a trained seg_rnn exp dir (config.yaml gives seg_len L and seg_shift S, in 10 ms frames)
holding threshold.sweep.json, the dev sweep written by `sad_segments --tune`. Writes OUT_JSON
({"points": [{L, S, L_ms, S_ms, dcf, threshold, model_dir}], "best": <the lowest-DCF point>, "reference": {...}})
and a plot of DCF against
L, one line per S, with the reference system (CNN + HMM in the paper) as a red horizontal line.
"""
import argparse
import json
import sys
from pathlib import Path

import yaml

from local_models.common.datadir import atomic_open
from local_models.sad.decisions import best_row

FRAME_MS = 10


def sweep_best(sweep_file: Path) -> dict:
    """The best row of a `sad_segments --tune` sweep, by the rule sad_segments picked its threshold with."""
    if not sweep_file.is_file():
        raise FileNotFoundError(f"{sweep_file}: no dev threshold sweep (run the grid stage / sad_segments --tune)")
    rows = json.loads(sweep_file.read_text())["rows"]
    if not rows:
        raise ValueError(f"{sweep_file}: empty sweep")
    return best_row(rows)


def grid_point(model_dir: Path) -> dict:
    conf_file = model_dir / "config.yaml"
    if not conf_file.is_file():
        raise FileNotFoundError(f"{conf_file}: not a trained model dir")
    conf = yaml.safe_load(conf_file.read_text())
    if conf.get("model") != "seg_rnn":
        raise ValueError(f"{conf_file}: model is '{conf.get('model')}', not seg_rnn")
    L, S = int(conf["model_conf"]["seg_len"]), int(conf["model_conf"]["seg_shift"])
    row = sweep_best(model_dir / "threshold.sweep.json")
    return {"L": L, "S": S, "L_ms": L * FRAME_MS, "S_ms": S * FRAME_MS, "dcf": row["dcf"],
            "threshold": row["threshold"], "model_dir": str(model_dir)}


def plot_grid(points, reference, path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4))
    for S in sorted({p["S"] for p in points}):
        line = sorted((p for p in points if p["S"] == S), key=lambda p: p["L"])
        ax.plot([p["L_ms"] for p in line], [100 * p["dcf"] for p in line], marker="o", label=f"S = {S * FRAME_MS} ms")
    if reference:
        ax.axhline(100 * reference["dcf"], color="red", lw=1.2, label=reference["label"])
    ax.set_xlabel("segment length L (ms)")
    ax.set_ylabel("dev DCF (%) at the best threshold")
    ax.set_title("Segment RNN: DCF over (L, S) (paper Fig. 7 shape)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


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
        points = sorted((grid_point(Path(d)) for d in args.model_dirs), key=lambda p: (p["S"], p["L"]))
        reference = None
        if args.reference:
            row = sweep_best(Path(args.reference))
            reference = {"label": args.reference_label, "dcf": row["dcf"], "threshold": row["threshold"]}
    except (OSError, ValueError, KeyError) as e:
        print(f"sad_seg_grid: {e}", file=sys.stderr)
        return 1
    seen = {}
    for p in points:
        if (p["L"], p["S"]) in seen:
            print(f"sad_seg_grid: L={p['L']} S={p['S']} twice ({seen[p['L'], p['S']]}, {p['model_dir']})", file=sys.stderr)
            return 1
        seen[p["L"], p["S"]] = p["model_dir"]
    with atomic_open(args.out_json) as f:
        best = min(points, key=lambda p: p["dcf"])  # model selection on dev, as the paper chose its (L, S)
        json.dump({"frame_ms": FRAME_MS, "points": points, "best": best, "reference": reference}, f, indent=1)
    plot_grid(points, reference, Path(args.plot))
    for p in points:
        print(f"sad_seg_grid: L {p['L_ms']:4d} ms  S {p['S_ms']:4d} ms  dev DCF {100 * p['dcf']:6.2f} %", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
