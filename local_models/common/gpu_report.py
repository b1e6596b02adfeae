"""The "Paper size on one GPU" section of every RESULTS.md, from benchmarks/gpu_check.py's results file.

gpu_check.py (run on a machine with a GPU) writes benchmarks/results/gpu_check.json; each recipe's scoring stage
puts that recipe's rows in its RESULTS.md, or says that it was not measured on a GPU yet.
"""
from __future__ import annotations

import json
from pathlib import Path

RESULTS_FILE = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "gpu_check.json"
HEADER = ("| model | params (M) | timed batch | fp32 s/step | bf16 s/step | peak GPU GiB (fp32) | frames/s (fp32) "
          "| schedule | projected h (fp32) | parity CPU vs device (max rel.) |")


def _fmt(d: dict, key: str, spec: str) -> str:
    return format(d[key], spec) if d.get(key) is not None else "-"


def environment(result: dict, recipe: str = "") -> dict:
    """Where RECIPE was measured: a merged file (gpu_check.py --merge) keeps each recipe's own machine."""
    return result.get("recipe_environment", {}).get(recipe, result["environment"])


def merge(old: dict, new: dict) -> dict:
    """NEW's recipes replace theirs in OLD (rows, errors, stage and training times, reasons); the others keep their rows and, in
    recipe_environment, the machine that measured them. Both must come from the same --steps."""
    if old.get("steps") != new["steps"]:
        raise ValueError(f"gpu_check --merge: --steps {new['steps']} differs from the merged file's {old.get('steps')}")
    ran = {r.split(":")[0] for r in new["stage_s"]} | {e["recipe"] for e in new["errors"]}

    def keep(rec: str) -> bool:
        return rec not in ran

    old_env = {rec: environment(old, rec) for rec in {r["recipe"] for r in old["rows"]} if keep(rec)}
    return {"environment": new["environment"], "steps": new["steps"],
            "recipe_environment": {**old_env, **{rec: new["environment"] for rec in ran}},
            "rows": [r for r in old["rows"] if keep(r["recipe"])] + new["rows"],
            "errors": [e for e in old.get("errors", []) if keep(e["recipe"])] + new["errors"],
            "stage_s": {**{k: v for k, v in old.get("stage_s", {}).items() if keep(k.split(":")[0])}, **new["stage_s"]},
            "not_measured": {k: v for k, v in {**old.get("not_measured", {}), **new.get("not_measured", {})}.items()
                             if keep(k)},
            "trainings": {**{k: v for k, v in old.get("trainings", {}).items() if keep(k)}, **new.get("trainings", {})},
            "runs": old.get("runs", []) + new.get("runs", [])}


def table(result: dict, recipe: str = "") -> list:
    """Markdown lines: the environment, then one row per model (of RECIPE, or all with a recipe column)."""
    env = environment(result, recipe)
    lines = [f"Measured by `benchmarks/gpu_check.py` on {env['gpu']} ({env['device']}; torch {env['torch']}, CUDA "
             f"{env['cuda']}, Python {env['python']}), {env['date']}: each paper-size config trained "
             f"{result['steps']} steps through `run.sh --ngpu {int(env['device'] == 'cuda')} --train_config_suffix "
             f"\"\"` on the smoke-size mini corpus and decoded with `--gpu_inference "
             f"{str(env['device'] == 'cuda').lower()}`; then timed outside the recipe on a real batch of its "
             "data tiled to the paper's batch (projection: the schedule's steps x the step time, scaled linearly to "
             "the paper's batch where the timed batch was capped). Parity: one eval-mode forward pass, same weights "
             "and batch, CPU vs the device, max relative difference over the loss and its statistics.", ""]
    elsewhere = {}
    for rec, e in ({} if recipe else result.get("recipe_environment", {})).items():
        if e != env:
            elsewhere.setdefault(f"{e['gpu']} (torch {e['torch']}, {e['date']})", []).append(rec)
    lines[-1:-1] = [f"Measured instead on {where}: {', '.join(sorted(recs))}." for where, recs in elsewhere.items()]
    head = HEADER if recipe else "| recipe " + HEADER
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    for r in result["rows"]:
        if recipe and r["recipe"] != recipe:
            continue
        f32, b16 = r.get("fp32", {}), r.get("bf16", {})
        row = (f"| {r['model']} | {r['params_m']:.2f} | {r['batch']} (paper {r['paper_batch']}) "
               f"| {_fmt(f32, 'step_s', '.4f')} | {_fmt(b16, 'step_s', '.4f')} | {_fmt(f32, 'peak_gib', '.2f')} "
               f"| {_fmt(f32, 'frames_per_s', '.0f')} | {r['paper_steps']:,} steps ({r['schedule']}) "
               f"| {_fmt(f32, 'projected_h', '.1f')} | {r['parity_max_rel']:.1e} |")
        lines.append(row if recipe else f"| {r['recipe']} {row}")
    for e in result.get("errors", []):
        if not recipe or e["recipe"] == recipe:
            last = (e["error"].strip().splitlines() or ["(no message)"])[-1]
            lines += ["", f"FAILED on the device: {e['recipe']}: {last}"]
    return lines


def section(recipe: str, path: Path = RESULTS_FILE) -> list:
    """RESULTS.md lines of the "Paper size on one GPU" section for RECIPE (e.g. "kss/tts1")."""
    lines = ["", "## Paper size on one GPU", ""]
    result = json.loads(path.read_text()) if path.is_file() else None
    if not result or environment(result, recipe)["device"] != "cuda":
        return lines + ["Not measured on a GPU yet: run `python benchmarks/gpu_check.py` on a machine with one "
                        "(docs/gpu.md); the paper-size configs are built and take an "
                        "optimiser step on the CPU in the test suite (tests/test_paper_configs.py)."]
    if not any(r["recipe"] == recipe for r in result["rows"]) and not any(
            e["recipe"] == recipe for e in result.get("errors", [])):
        why = result.get("not_measured", {}).get(recipe, "it did not include this recipe")
        env = environment(result, recipe)
        return lines + [f"Not measured on a GPU yet: the last GPU check ({env['gpu']}, {env['date']}): {why}."]
    return lines + table(result, recipe)
