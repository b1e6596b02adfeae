"""Figures of the reports: matplotlib on its file-only backend (recipes run headless), written atomically."""
from __future__ import annotations

import os
from pathlib import Path


def pyplot():
    """matplotlib.pyplot with the Agg backend; imported on first use (matplotlib is slow to import)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path, dpi: int = 100) -> Path:
    """Lay FIG out, write it to PATH (its dir made; a temporary name until complete) and free it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp{path.suffix}")
    try:
        fig.tight_layout()
        fig.savefig(tmp, dpi=dpi)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        pyplot().close(fig)
    return path
