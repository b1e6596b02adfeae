"""`make demo` and `make reproduce` (local_models.bin.run_demo): run every recipe under egs/ and join what came out.

demo:      each recipe's local/demo.sh (a quick-size run.sh, its pack stage, then the packed model's command on an
           input no training set holds), JOBS at a time; their exp/demo/summary.md sections -> demo_summary.md.
reproduce: each recipe's full ./run.sh on its mini corpus, one after another; headline numbers -> a table.
"""
from __future__ import annotations

import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import List, Sequence, Tuple

from .datadir import atomic_open

# Shown in the reproduce table: the papers' headline metrics on the held-out set (all metrics stay in results.json).
HEADLINE = ("dcf", "f1", "wer", "cer", "lid_acc", "wer_avg", "lid_acc_avg", "t_avg", "mcd", "f0_rmse", "abx",
            "bitrate", "rtf")
HELD_OUT = ("eval", "test")


def find_recipes(egs: Path, only: Sequence[str] = ()) -> List[Path]:
    """egs/<corpus>/<task>/run.sh, except the TEMPLATE that documents the pattern; ONLY filters by <corpus>/<task>."""
    recipes = sorted(p.parent for p in Path(egs).glob("*/*/run.sh") if p.parts[-3] != "TEMPLATE")
    if only:
        unknown = set(only) - {r.relative_to(egs).as_posix() for r in recipes}
        if unknown:
            raise ValueError(f"--only: no recipe {', '.join(sorted(unknown))} under {egs}")
        recipes = [r for r in recipes if r.relative_to(egs).as_posix() in only]
    return recipes


def run_logged(cmd: Sequence[str], cwd: Path, log: Path) -> Tuple[int, float]:
    """CMD in CWD, its output to LOG; (exit code, seconds)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with open(log, "w") as f:
        rc = subprocess.call(list(cmd), cwd=cwd, stdout=f, stderr=subprocess.STDOUT)
    return rc, time.time() - t0


def tail(path: Path, n: int = 15) -> str:
    lines = path.read_text(errors="replace").splitlines() if path.is_file() else []
    return "\n".join(lines[-n:])


# ----------------------------------------------------------------------------- demo
def demo_one(recipe: Path, egs: Path) -> dict:
    name = recipe.relative_to(egs).as_posix()
    script = recipe / "local" / "demo.sh"
    if not script.is_file():
        # a recipe with no quick-size run (one that needs downloads, e.g. egs/debian_speech/sad1): said, not a failure
        return {"recipe": name, "status": "no demo (no local/demo.sh)", "seconds": 0.0, "section": ""}
    summary = recipe / "exp" / "demo" / "summary.md"
    summary.unlink(missing_ok=True)  # a failed run must not show an old summary
    print(f"run_demo: start {name}", flush=True)
    rc, seconds = run_logged(["bash", "local/demo.sh"], recipe, recipe / "exp" / "demo" / "demo.log")
    ok = rc == 0 and summary.is_file()
    print(f"run_demo: {name} {'ok' if ok else 'FAILED'} in {seconds:.0f} s", flush=True)
    section = summary.read_text() if ok else (
        f"### {name}\n\nFAILED (exit {rc}); the end of exp/demo/demo.log:\n\n```\n"
        f"{tail(recipe / 'exp' / 'demo' / 'demo.log')}\n```\n")
    return {"recipe": name, "status": "ok" if ok else f"FAILED (exit {rc})", "seconds": seconds, "section": section}


def demo(egs: Path, summary: Path, only: Sequence[str] = (), jobs: int = 2) -> int:
    """Every recipe's local/demo.sh, JOBS at a time -> SUMMARY. Returns the number of failures."""
    recipes = find_recipes(egs, only)
    t0 = time.time()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        runs = list(pool.map(lambda r: demo_one(r, egs), recipes))
    wall = time.time() - t0
    lines = ["# Demo summary", "",
             "Each recipe ran at a quick size (run.sh incl. its pack stage), then its packed model ran on input "
             f"that no training set holds. {len(runs)} recipes, {jobs} at a time: {wall / 60:.1f} min wall.", "",
             "| recipe | status | seconds |", "|---|---|---|",
             *(f"| {r['recipe']} | {r['status']} | {r['seconds']:.0f} |" for r in runs), ""]
    lines += [r["section"].rstrip() + "\n" for r in runs if r["section"]]
    with atomic_open(summary) as f:
        f.write("\n".join(lines))
    print("\n".join(lines[:len(runs) + 6]))
    return sum(r["status"].startswith("FAILED") for r in runs)


# ----------------------------------------------------------------------------- reproduce
def flatten(metrics, prefix=""):
    """{'dev': {'dcf': 0.1}, 'rtf': 0.01} -> {'dev.dcf': 0.1, 'rtf': 0.01}"""
    out = {}
    for key, value in metrics.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        elif isinstance(value, (int, float)):
            out[f"{prefix}{key}"] = value
    return out


def headline(flat):
    keep = {k: v for k, v in flat.items()
            if k.split(".")[-1] in HEADLINE and (k.count(".") == 0 or k.split(".")[0] in HELD_OUT)}
    return keep or flat


def summary_rows(recipe: Path, name: str, status: str, seconds: float):
    results = recipe / "exp" / "results.json"
    if status != "ok" or not results.is_file():
        return [f"| {name} | {status} | {seconds:.0f} | - | - |"]
    systems = json.loads(results.read_text()).get("systems", {})
    rows = [f"| {name} | ok | {seconds:.0f} | {system} | "
            + ", ".join(f"{k}={v:.4g}" for k, v in headline(flatten(metrics)).items()) + " |"
            for system, metrics in systems.items()]
    return rows or [f"| {name} | ok (no systems in results.json) | {seconds:.0f} | - | - |"]


def reproduce(egs: Path, summary: Path, only: Sequence[str] = ()) -> int:
    """Every recipe's full ./run.sh (mini corpus unless db.sh says otherwise) -> SUMMARY. Returns the failures."""
    rows, failed, t0 = [], 0, time.time()
    for recipe in find_recipes(egs, only):
        name = recipe.relative_to(egs).as_posix()
        print(f"run_demo: === {name} (./run.sh, log in exp/run.log) ===", flush=True)
        rc, seconds = run_logged(["bash", "run.sh"], recipe, recipe / "exp" / "run.log")
        failed += rc != 0
        rows += summary_rows(recipe, name, "ok" if rc == 0 else f"FAILED (exit {rc})", seconds)
    table = ["# Reproduce summary (every recipe's full run.sh)", "", f"{(time.time() - t0) / 60:.1f} min in all.", "",
             "| recipe | status | seconds | system | headline metrics |", "|---|---|---|---|---|", *rows]
    with atomic_open(summary) as f:
        f.write("\n".join(table) + "\n")
    print("\n".join(table))
    return failed
