"""Figures of the reports: matplotlib on its file-only backend (recipes run headless), written atomically."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Optional

from .datadir import atomic_open

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



def write_report(results_md, text: str, images: Optional[Path]) -> None:
    """Write the report TEXT to RESULTS_MD with its figures beside it: each ![..](exp/images/<name>.png) of TEXT is
    copied from IMAGES (the run's exp/images: gitignored, and not under the recipe's exp/ for a run in another work
    dir) to images/<RESULTS_MD's stem>/ and linked there, so a committed report shows its figures; one the run did not
    draw (or IMAGES None) is said, not linked. The figures are staged first and put in place after the report is
    written; figures the previous report at RESULTS_MD linked there and this one does not are removed then (nothing
    else in that folder is touched)."""
    results_md = Path(results_md)
    rel = f"images/{results_md.stem}"
    dest = results_md.parent / rel
    drawn = []

    def link(m):
        alt, name = m.groups()
        if images is None or not (Path(images) / name).is_file():
            return f"(figure not drawn in this run: {alt})"
        drawn.append(name)
        return f"![{alt}]({rel}/{name})"

    text = _EMBED.sub(link, text)
    before = set(re.findall(rf"\]\({re.escape(rel)}/([^)/\s]+\.png)\)", results_md.read_text(encoding="utf-8"))
                 if results_md.is_file() else ())
    staged = []
    try:
        for name in drawn:
            dest.mkdir(parents=True, exist_ok=True)
            staged.append((dest / f".{name}.tmp", dest / name))
            shutil.copyfile(Path(images) / name, staged[-1][0])
        with atomic_open(results_md) as f:
            f.write(text)
        for tmp, final in staged:
            os.replace(tmp, final)
    finally:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
    for name in before - set(drawn):
        (dest / name).unlink(missing_ok=True)
