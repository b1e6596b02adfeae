"""HTS label files (.lab): parse, read and write "start end label" or bare "label" lines; check_format refuses a
label file of another front end (e.g. the Ogmios labels of UPC's MUSA tools) before its fields are misread."""
from __future__ import annotations

import re
from typing import Iterable, List, NamedTuple, Optional, Sequence

from local_models.common.datadir import DataDirError, PathLike, atomic_open, iter_lines

from .labels import _LABEL

# this front end's full-context label (labels._LABEL) with each field any text without '/': another front end's
# labels (other separators, fields or sections) do not match
LABEL_RE = re.compile("^" + r"[^/]*?".join(re.escape(part) for part in re.split(r"\{\w+\}", _LABEL)) + "$")


class LabLine(NamedTuple):
    start: Optional[int]  # 100 ns units; None in untimed label files
    end: Optional[int]
    label: str


def parse_lab(lines: Iterable[str], source: str = "<labels>") -> List[LabLine]:
    """Parse "start end label" or bare "label" lines (all of one kind); errors name source and line."""
    out: List[LabLine] = []
    for lineno, line in enumerate(lines, 1):
        out.append(_parse_lab_line(line.rstrip("\r\n"), source, lineno, out[-1] if out else None))
    if not out:
        raise DataDirError(source, None, "no labels")
    return out


def _parse_lab_line(line: str, source: str, lineno: int, prev: Optional[LabLine]) -> LabLine:
    cols = line.split()
    if len(cols) == 1:
        entry = LabLine(None, None, cols[0])
    elif len(cols) == 3:
        try:
            entry = LabLine(int(cols[0]), int(cols[1]), cols[2])
        except ValueError:
            raise DataDirError(source, lineno, f"start and end must be integers (100 ns units): {line!r}") from None
        if not 0 <= entry.start < entry.end:
            raise DataDirError(source, lineno, f"need 0 <= start < end, got {entry.start} {entry.end}")
    else:
        raise DataDirError(source, lineno, f"expected 'start end label' or 'label', got {len(cols)} fields: {line!r}")
    if prev is not None:
        if (prev.start is None) != (entry.start is None):
            raise DataDirError(source, lineno, "mixes timed and untimed labels")
        if entry.start is not None and entry.start < prev.end:
            raise DataDirError(source, lineno, f"starts at {entry.start}, before the previous end {prev.end}")
    return entry


def read_lab(path: PathLike) -> List[LabLine]:
    """Read an HTS label file; ValueError naming file and line on malformed lines."""
    return parse_lab((line for _, line in iter_lines(path)), str(path))


def check_format(path: PathLike) -> None:
    """DataDirError naming PATH and the line unless every line is "start end label" (100 ns integers) with a
    full-context label of this front end (labels._LABEL): a label file of another format is refused, not misread."""
    for line in read_lab(path):
        if line.start is None:
            raise DataDirError(str(path), 1, "labels without times: the recipe reads 'start end label' lines")
    for lineno, line in iter_lines(path):
        label = line.split()[-1]
        if not LABEL_RE.match(label):
            raise DataDirError(str(path), lineno, f"not a full-context label of this recipe's front end "
                               f"(local_models/salad/frontend/labels.py): {label[:60]!r}; labels of another "
                               f"format cannot be read: move the file away and stage 2 makes new labels")


def write_lab(path: PathLike, lines: Sequence[str]) -> None:
    """Write label lines atomically (no half-written file survives an interruption)."""
    with atomic_open(path) as f:
        f.writelines(line + "\n" for line in lines)
