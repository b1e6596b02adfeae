"""Figures of the reports: matplotlib on its file-only backend (recipes run headless), written atomically."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Optional

_EMBED = re.compile(r"!\[([^\]]*)\]\(exp/images/([^)/\s]+\.png)\)")  # a report's figure: ![alt](exp/images/x.png)


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


def publish_figures(text: str, images: Optional[Path], results_md) -> str:
    """TEXT (a report) with each figure embedded as ![..](exp/images/<name>.png) copied from IMAGES (the run's
    exp/images: gitignored, and not under the recipe's exp/ for a run in another work dir) to
    images/<RESULTS_MD's stem>/ beside RESULTS_MD and linked there, so a committed report shows its figures; a figure
    the run did not draw is said, not linked. Call it before writing RESULTS_MD (the figures are in place first);
    figures of an earlier run that this one did not draw are removed."""
    results_md = Path(results_md)
    dest = results_md.parent / "images" / results_md.stem
    drawn = []

    def link(m):
        alt, name = m.groups()
        if images is None or not (Path(images) / name).is_file():
            return f"(figure not drawn in this run: {alt})"
        drawn.append(name)
        return f"![{alt}](images/{results_md.stem}/{name})"

    text = _EMBED.sub(link, text)
    if drawn:
        dest.mkdir(parents=True, exist_ok=True)
    for name in drawn:
        tmp = dest / f".{name}.tmp"
        shutil.copyfile(Path(images) / name, tmp)
        os.replace(tmp, dest / name)
    for old in dest.glob("*.png") if dest.is_dir() else ():
        if old.name not in drawn:
            old.unlink()
    return text
