"""exp/results.json: every system's metrics, merged across scoring stages, written atomically."""
from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Mapping

from .datadir import atomic_open


def git_commit(path=".") -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=path, capture_output=True, text=True)
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def hardware() -> str:
    """E.g. '2-core CPU (x86_64)' or '1x NVIDIA H100 + 16-core CPU'."""
    cpu = f"{os.cpu_count()}-core CPU ({platform.machine()})"
    try:
        import torch

        if torch.cuda.is_available():
            return f"{torch.cuda.device_count()}x {torch.cuda.get_device_name(0)} + {cpu}"
    except ImportError:
        pass
    return cpu


def _merge(old: dict, new: Mapping) -> dict:
    for key, value in new.items():
        if isinstance(value, Mapping) and isinstance(old.get(key), dict):
            _merge(old[key], value)
        else:
            old[key] = value
    return old


def update_results(path, recipe: str, corpus: str, systems: Mapping[str, Mapping], drop=()) -> dict:
    """Merge `systems` ({name: {metric: value | {subset: {metric: value}}}}) into results.json.

    `drop`: system names to remove first (e.g. ones a rerun no longer produces), so no stale row survives.
    """
    path = Path(path)
    data = json.loads(path.read_text()) if path.is_file() else {}
    if data.get("corpus") not in (None, corpus):
        data = {}  # results of another corpus are not comparable: start over
    data.update(recipe=recipe, corpus=corpus, commit=git_commit(path.parent), hardware=hardware())
    for name in drop:
        data.setdefault("systems", {}).pop(name, None)
    _merge(data.setdefault("systems", {}), systems)
    with atomic_open(path) as f:
        json.dump(data, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    return data
