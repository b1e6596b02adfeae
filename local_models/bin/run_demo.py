"""Run every recipe under egs/ on its built-in mini corpus, then write a summary of headline results."""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def find_recipes(egs: Path):
    """egs/<corpus>/<task>/run.sh, except the TEMPLATE that documents the pattern."""
    return sorted(p.parent for p in egs.glob("*/*/run.sh") if p.parts[-3] != "TEMPLATE")


def flatten(metrics, prefix=""):
    """{'dev': {'dcf': 0.1}, 'rtf': 0.01} -> {'dev.dcf': 0.1, 'rtf': 0.01}"""
    out = {}
    for key, value in metrics.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        elif isinstance(value, (int, float)):
            out[f"{prefix}{key}"] = value
    return out


# Shown in the summary: the papers' headline metrics on the held-out set (all metrics stay in results.json).
HEADLINE = ("dcf", "f1", "wer", "cer", "lid_acc", "wer_avg", "lid_acc_avg", "t_avg", "mcd", "f0_rmse", "abx",
            "bitrate", "rtf")
HELD_OUT = ("eval", "test")


def headline(flat):
    keep = {}
    for key, value in flat.items():
        parts = key.split(".")
        if parts[-1] in HEADLINE and (len(parts) == 1 or parts[0] in HELD_OUT):
            keep[key] = value
    return keep or flat


def summary_rows(recipe: Path, status: str, seconds: float):
    name = recipe.relative_to(ROOT / "egs").as_posix()
    results = recipe / "exp" / "results.json"
    if status != "ok" or not results.is_file():
        return [f"| {name} | {status} | {seconds:.0f} | - | - |"]
    systems = json.loads(results.read_text()).get("systems", {})
    rows = []
    for system, metrics in systems.items():
        flat = ", ".join(f"{k}={v:.4g}" for k, v in headline(flatten(metrics)).items())
        rows.append(f"| {name} | ok | {seconds:.0f} | {system} | {flat} |")
    return rows or [f"| {name} | ok (no systems in results.json) | {seconds:.0f} | - | - |"]


def main(argv=None):
    p = argparse.ArgumentParser(prog="run_demo", description=__doc__)
    p.add_argument("--egs", default=str(ROOT / "egs"), help="recipe root (default: egs/ of this checkout)")
    p.add_argument("--only", nargs="*", default=None, help="recipe names like fearless_steps/sad1")
    p.add_argument("--summary", default=str(ROOT / "demo_summary.md"), help="where to write the table")
    args = p.parse_args(argv)
    recipes = find_recipes(Path(args.egs))
    if args.only:
        recipes = [r for r in recipes if r.relative_to(Path(args.egs)).as_posix() in args.only]
    if not recipes:
        print("run_demo: no recipes under egs/ yet (egs/TEMPLATE only documents the pattern); nothing to run")
        return 0
    rows, failed = [], []
    for recipe in recipes:
        print(f"run_demo: === {recipe.relative_to(ROOT)} ===", flush=True)
        t0 = time.time()
        rc = subprocess.call(["bash", "run.sh"], cwd=recipe)
        status = "ok" if rc == 0 else f"FAILED (exit {rc})"
        if rc:
            failed.append(recipe)
        rows += summary_rows(recipe, status, time.time() - t0)
    table = ["# Demo summary (mini corpora, this machine)", "",
             "| recipe | status | seconds | system | headline metrics |", "|---|---|---|---|---|", *rows]
    Path(args.summary).write_text("\n".join(table) + "\n")
    print("\n".join(table))
    if failed:
        print(f"run_demo: {len(failed)} recipe(s) failed: " + ", ".join(str(r) for r in failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
