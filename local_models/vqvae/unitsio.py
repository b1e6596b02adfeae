"""What the speech-to-units / units-to-speech commands do with files: one line per utterance, `<file stem> <unit>
<unit> ...` (the recipe's codes.txt format) and where wavs go. A bad input
leaves no half-written output (the commands write each file whole, through common/cli.InputLoop)."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from tqdm import tqdm


AUDIO_SUFFIXES = (".wav", ".flac", ".ogg")


def units_line(stem: str, units: np.ndarray) -> str:
    return f"{stem} {' '.join(map(str, np.asarray(units).tolist()))}\n"


def unique_stems(paths: Sequence) -> List[str]:
    """The file stems of PATHS (the utterance ids of the output); ValueError when two files share one."""
    seen: Dict[str, str] = {}
    for p in paths:
        stem = Path(p).stem
        if stem in seen:
            raise ValueError(f"{seen[stem]} and {p} have the same name '{stem}': one units line each needs its own")
        seen[stem] = str(p)
    return list(seen)


def read_units(path, bad: Optional[List[Tuple[str, str]]] = None) -> List[Tuple[str, str, np.ndarray]]:
    """[(where 'file:line', stem, units)] of a units file. A malformed line raises ValueError naming file:line, or,
    with BAD (a list: --keep_going), is appended to it as (where, message) and left out."""
    rows, seen = [], {}
    text = Path(path).read_text(encoding="utf-8")
    for n, line in enumerate(text.splitlines(), 1):
        where = f"{path}:{n}"
        try:
            row = _units_row(where, line, seen)
        except ValueError as e:
            if bad is None:
                raise
            bad.append((where, str(e)))
            continue
        if row is not None:
            seen[row[1]] = n
            rows.append(row)
    if not rows and not bad:
        raise ValueError(f"{path}: no units lines (`<name> <unit> <unit> ...`)")
    return rows


def _units_row(where: str, line: str, seen: Dict[str, int]) -> Optional[Tuple[str, str, np.ndarray]]:
    """(where, stem, units) of one line (None when blank); ValueError naming WHERE when malformed."""
    parts = line.split()
    if not parts:
        return None
    stem, tokens = parts[0], parts[1:]
    if "/" in stem or stem.startswith("."):
        raise ValueError(f"{where}: '{stem}' cannot name an output file")
    if stem in seen:
        raise ValueError(f"{where}: '{stem}' again (first at line {seen[stem]})")
    if not tokens:
        raise ValueError(f"{where}: '{stem}' has no units")
    bad = next((i for i, t in enumerate(tokens) if not t.lstrip("-").isdigit()), None)
    if bad is not None:
        raise ValueError(f"{where}: unit {bad} of '{stem}' is '{tokens[bad]}', not an integer")
    return where, stem, np.array([int(t) for t in tokens], dtype=np.int64)


def output_paths(rows, output) -> List[Path]:
    """OUTPUT itself (an audio file name: the units file must hold one line) or OUTPUT/<stem>.wav."""
    output = Path(output)
    if output.suffix.lower() in AUDIO_SUFFIXES:
        if len(rows) != 1:
            raise ValueError(f"-o {output} is one file, but the units file has {len(rows)} lines: give a directory")
        return [output]
    if output.exists() and not output.is_dir():
        raise ValueError(f"-o {output}: exists and is not a directory (or name a .wav/.flac/.ogg)")
    return [output / f"{stem}.wav" for _, stem, _ in rows]


def synthesise_rows(u2s, rows, speaker=None) -> List[dict]:
    """u2s(units) of every row; a bad unit's error names its file:line."""
    if speaker is not None and speaker not in u2s.speakers:
        raise ValueError(f"unknown speaker '{speaker}': this inverter speaks {', '.join(u2s.speakers)}")
    done = []
    # one row (or none): a call of units-to-speech's InputLoop, whose progress line is the row's: no bar beside it
    for where, stem, units in tqdm(rows, desc="units-to-speech", disable=True if len(rows) <= 1 else None,
                                   leave=False):
        try:
            done.append(u2s(units, speaker=speaker))
        except ValueError as e:
            raise ValueError(f"{where}: '{stem}': {e}") from None
    return done
