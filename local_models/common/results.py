"""exp/results.json: every system's metrics, merged across scoring stages, written atomically."""
from __future__ import annotations

import copy
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Callable, Mapping, Optional

from .datadir import atomic_open


CODE_ROOT = Path(__file__).resolve().parents[2]  # the collection whose code ran


def git_commit(path=None) -> str:
    """The commit of the code that ran (the collection's checkout; PATH's repository only as a fallback), with
    '+dirty' when tracked files differ from it: a recipe run from a copy outside the repository still names it.
    Without a checkout (a copy of the tree on a lent GPU machine) SPEECH_RECIPES_COMMIT, which the copy's sender
    recorded (local_models/sad/gpu_train.sh), else 'unknown'."""
    for where in (CODE_ROOT, path):
        if where is None:
            continue
        try:
            out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=where, capture_output=True, text=True)
            commit = out.stdout.strip()
            if commit:
                # the reports a run rewrites (and their figures, plots.write_report) do not make the code dirty (a
                # rerun must name the same commit)
                dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                        ":!*RESULTS*.md", ":!*images/RESULTS*/*", ":!benchmarks/results"], cwd=where,
                                       capture_output=True, text=True).stdout.strip()
                return commit + ("+dirty" if dirty else "")
        except OSError:
            continue
    return os.environ.get("SPEECH_RECIPES_COMMIT") or "unknown"


def gpus() -> Optional[str]:
    """E.g. '1x NVIDIA H100 80GB HBM3', or None without a visible GPU."""
    try:
        import torch

        if torch.cuda.is_available():
            return f"{torch.cuda.device_count()}x {torch.cuda.get_device_name(0)}"
    except ImportError:
        pass
    return None


def hardware(gpu: Optional[str] = None) -> str:
    """E.g. '2-core CPU (x86_64)' or '1x NVIDIA H100 + 16-core CPU' (GPU: gpus(), unless given)."""
    cpu = f"{os.cpu_count()}-core CPU ({platform.machine()})"
    gpu = gpu or gpus()
    return f"{gpu} + {cpu}" if gpu else cpu


def cpu_flags() -> list:
    """The CPU's vector / matrix / bf16 / int8 extensions (speed depends on them; bf16 is emulated without)."""
    try:
        flags = next(line for line in open("/proc/cpuinfo") if line.startswith("flags")).split()
    except (OSError, StopIteration):
        return []
    return sorted(f for f in flags if f.startswith(("amx", "avx512_bf16", "avx512f", "avx512_vnni", "avx_vnni", "avx2")))


def cpu_model() -> str:
    try:
        line = next(line for line in open("/proc/cpuinfo") if line.startswith("model name"))
        return line.split(":", 1)[1].strip()
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def cpu_load() -> dict:
    """{'cores', 'load_average_at_start'}: a speed benchmark records them before timing anything, so its report
    can say whether other work shared the CPU (load_text)."""
    return {"cores": os.cpu_count(), "load_average_at_start": round(os.getloadavg()[0], 2)}


def load_text(bench: Mapping, what: str = "times") -> str:
    """How busy the CPU was when a benchmark started (cpu_load); '' for a file from before it was recorded. Shared =
    fewer cores free (cores - 1-minute load average) than bench['threads'] (default 1). The load average lags: it
    also counts the run's own steps of the last minute."""
    load = bench.get("load_average_at_start")
    if load is None:
        return ""
    cores, threads = bench.get("cores"), bench.get("threads") or 1
    busy = cores is None or cores - load < threads
    return (f" The 1-minute load average when it started was {load:.2f} on {cores or '?'} cores: "
            + (f"other work shared the CPU, so the {what} are upper bounds." if busy else
               f"{threads} core(s) were free for its {threads} thread(s) (the average also counts the run's own "
               "work of the minute before)."))


def _version(module: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(module)
    except metadata.PackageNotFoundError:
        return "not installed"


def environment(path=".") -> dict:
    """What a reader needs to place the numbers, as ESPnet's RESULTS.md environment block gives it."""
    import datetime

    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": git_commit(path), "python": platform.python_version(),
            "torch": _version("torch"), "espnet": _version("espnet"),
            "cpu": cpu_model(), "cores": os.cpu_count(), "cpu_flags": cpu_flags(), "gpu": gpus()}


def environment_lines(env: Mapping) -> list:
    """RESULTS.md's environment block (from results.json's 'environment')."""
    if not env:
        return []
    return ["## Environment", "",
            f"- date: `{env.get('date')}`, commit `{env.get('commit')}` (the code that decoded and scored)",
            *training_lines(env.get("trained") or {}),
            f"- python `{env.get('python')}`, torch `{env.get('torch')}`, espnet `{env.get('espnet')}`",
            f"- CPU: {env.get('cpu')}, {env.get('cores')} cores, "
            f"{' '.join(env.get('cpu_flags') or []) or 'no AVX2 / AVX-512 / AMX'}",
            f"- GPU: {env.get('gpu') or 'none on the machine that decoded and scored'}", ""]


HEADLINE_TITLE = "## Headline (README's row for this recipe, generated)"


def headline_lines(headline) -> list:
    """RESULTS.md's headline section (from results.json's 'headline': the measured claims, one per line), which
    `make readme` copies into README's table (local_models/common/readme.py)."""
    if not headline:
        return []
    return [HEADLINE_TITLE, "", *[f"- {h}" for h in headline], ""]


def _merge(old: dict, new: Mapping) -> dict:
    for key, value in new.items():
        if isinstance(value, Mapping) and isinstance(old.get(key), dict):
            _merge(old[key], value)
        else:
            old[key] = value
    return old


def update_results(path, recipe: str, corpus: str, systems: Mapping[str, Mapping], drop=(), extra=None,
                   headline: Optional[Callable[[dict], list]] = None, trained: Optional[Mapping] = None) -> dict:
    """Merge `systems` ({name: {metric: value | {subset: {metric: value}}}}) into results.json.

    `drop`: system names to remove first (e.g. ones a rerun no longer produces), so no stale row survives.
    `extra`: top-level keys set as given (replacing theirs), e.g. how the models were trained; or a callable that
    computes them from the merged systems (as `headline`), when they must describe the same numbers.
    `headline`: computes results.json's 'headline' from the merged systems (earlier runs' included), in the
    same write, so the claims never describe other numbers than the file's.
    `trained`: {model name: exp dir} of the models scored: environment['trained'] names the commit(s) and device
    that trained each (their trained_by.json, `record_training`), beside the commit that scored.
    """
    path = Path(path)
    data = json.loads(path.read_text()) if path.is_file() else {}
    if data.get("corpus") not in (None, corpus):
        data = {}  # results of another corpus are not comparable: start over
    before = copy.deepcopy(data)
    env = environment(path.parent)
    if trained:
        env["trained"] = training_summary(trained)
    data.update(recipe=recipe, corpus=corpus, commit=env["commit"], hardware=hardware(env["gpu"]), environment=env)
    for name in drop:
        data.setdefault("systems", {}).pop(name, None)
    _merge(data.setdefault("systems", {}), systems)
    data.update((extra(data["systems"]) if callable(extra) else extra) or {})
    if headline is not None:
        data["headline"] = headline(data["systems"])
    old_date = before.get("environment", {}).get("date")
    if old_date and before == {**data, "environment": {**data["environment"], "date": old_date}}:
        data["environment"]["date"] = old_date  # nothing but the clock changed: a rescoring leaves the file as it was
    with atomic_open(path) as f:
        json.dump(data, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    return data


# ---- provenance of trained models: which commit trained each exp dir, on what (RESULTS.md's environment block)
TRAINED_BY = "trained_by.json"


def record_training(output_dir, ngpu: int = 0, dist_rank: Optional[int] = None) -> Optional[dict]:
    """Append this training run (date, commit, hardware, GPUs) to OUTPUT_DIR/trained_by.json: a resumed training
    adds a line, so a model trained across commits says so. Rank > 0 of a DDP job writes nothing."""
    import datetime

    if dist_rank not in (None, 0):
        return None
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    gpu = gpus() if ngpu else None
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)  # torchrun's processes (CPU DDP: --dist_world_size)
    entry = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
             "commit": git_commit(output_dir), "hardware": hardware(gpu), "ngpu": int(ngpu), "processes": world}
    runs = trained_by(output_dir)
    with atomic_open(output_dir / TRAINED_BY) as f:
        json.dump(runs + [entry], f, indent=1)
        f.write("\n")
    return entry


def trained_by(model_dir) -> list:
    """The training runs recorded in MODEL_DIR/trained_by.json ([] when none: trained before it was recorded)."""
    path = Path(model_dir) / TRAINED_BY
    if not path.is_file():
        return []
    try:
        runs = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: not JSON ({e.msg})") from None
    if not isinstance(runs, list):
        raise ValueError(f"{path}: expected a list of training runs")
    return runs


def training_summary(model_dirs: Mapping[str, object]) -> dict:
    """{name: "commit(s) on hardware"} for results.json's environment['trained'] from {name: exp dir}: the commits
    (in order, without repeats) and devices of each model's training runs; "not recorded" where none is."""
    out = {}
    for name, d in model_dirs.items():
        runs = trained_by(d)
        if not runs:
            out[name] = "not recorded"
            continue
        commits = list(dict.fromkeys(r.get("commit", "unknown") for r in runs))
        devices = list(dict.fromkeys(r.get("hardware", "unknown")
                                     + (f", {r['processes']} processes (DDP)" if r.get("processes", 1) > 1 else "")
                                     for r in runs))
        out[name] = f"commit {', '.join(commits)} on {'; '.join(devices)}"
    return out


def training_lines(trained: Mapping[str, str]) -> list:
    """The environment block's lines for results.json's environment['trained'] ({model: summary}): models that share
    a summary share a line."""
    groups: dict = {}
    for name, summary in trained.items():
        groups.setdefault(summary, []).append(name)
    return [f"- trained: {', '.join(f'`{n}`' for n in names)}: {summary}" for summary, names in groups.items()]
