"""The segment-RNN (L, S) grid of paper Fig. 7 (stage 7, `local_models.bin.sad_seg_grid`): dev DCF of every
trained seg_rnn at its own best threshold (its `sad_segments --tune` sweep), and the plot of DCF against L,
one line per S, with a reference system (CNN + HMM in the paper) as a red horizontal line."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from local_models.common.datadir import atomic_open
from local_models.common.plots import pyplot, save_figure

from .decisions import best_row

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
    """{L, S, L_ms, S_ms, dcf, threshold, model_dir} of a trained seg_rnn dir (config.yaml + its dev sweep)."""
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


def collect(model_dirs, reference_sweep=None, reference_label: str = "CNN + HMM"):
    """(grid points sorted by (S, L), the reference {label, dcf, threshold} or None). Raises OSError /
    ValueError / KeyError on a missing or malformed model dir or sweep."""
    points = sorted((grid_point(Path(d)) for d in model_dirs), key=lambda p: (p["S"], p["L"]))
    reference = None
    if reference_sweep:
        row = sweep_best(Path(reference_sweep))
        reference = {"label": reference_label, "dcf": row["dcf"], "threshold": row["threshold"]}
    return points, reference


def duplicate(points):
    """A message naming the first (L, S) that two model dirs share, else None."""
    seen = {}
    for p in points:
        if (p["L"], p["S"]) in seen:
            return f"L={p['L']} S={p['S']} twice ({seen[p['L'], p['S']]}, {p['model_dir']})"
        seen[p["L"], p["S"]] = p["model_dir"]
    return None


def write_grid(points, reference, out_json) -> dict:
    """OUT_JSON: {frame_ms, points, best, reference}; best = the lowest dev DCF (model selection on dev, as the
    paper chose its (L, S)). Returns the best point."""
    best = min(points, key=lambda p: p["dcf"])
    with atomic_open(out_json) as f:
        json.dump({"frame_ms": FRAME_MS, "points": points, "best": best, "reference": reference}, f, indent=1)
    return best


def plot_grid(points, reference, path: Path) -> bool:
    plt = pyplot()

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
    save_figure(fig, path, dpi=90)
    return True
