"""The Fearless Steps Phase-2 (FS02) challenge's SAD system-output files: one text file per recording, named as the
recording (`<rec>.txt`, the scorer pairs hypothesis and reference files by name), whose lines cover the recording
from 0 to its end with alternating speech / non-speech intervals.

Format (FS02 scoring toolkit, github.com/aditya-joglekar/FS02_Scoring_Toolkit: egs/sys_results/SAD/*.txt, and
scutils/scoreFS02SAD.py, which calls NIST's scoreFile_SAD.pl with `-t 5 -f 6 -u 7`): 9 tab-separated columns,
the NIST OpenSAD system output: test definition, test set, test id (all `X`), task `SAD`, file id, interval start,
interval end (seconds), `speech` / `non-speech`, confidence. The scorer reads only the 0-based columns 5, 6, 7; the
file id column carries the recording's name and the confidence the toolkit's example value (0.5: our detectors
make hard decisions).
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Mapping, Tuple

from local_models.common.datadir import DataDirError, atomic_open, iter_lines, read_table

from .labels import Intervals, merge, read_rttm

COLUMNS = 9
SPEECH, NONSPEECH = "speech", "non-speech"
CONFIDENCE = "0.500000"
Row = Tuple[float, float, str]


def covering_rows(speech: Intervals, duration: float) -> List[Row]:
    """SPEECH clipped to [0, DURATION] with the non-speech between: intervals that tile the whole recording."""
    rows: List[Row] = []
    t = 0.0
    for s, e in merge((max(0.0, s), min(duration, e)) for s, e in speech if min(duration, e) > max(0.0, s)):
        if s > t:
            rows.append((t, s, NONSPEECH))
        rows.append((s, e, SPEECH))
        t = e
    if duration > t or not rows:
        rows.append((t, duration, NONSPEECH))
    return rows


def format_rows(rec: str, rows: List[Row]) -> str:
    return "".join(f"X\tX\tX\tSAD\t{rec}\t{s:.3f}\t{e:.3f}\t{kind}\t{CONFIDENCE}\n" for s, e, kind in rows)


def write_system_output(out_dir, speech: Mapping[str, Intervals], durations: Mapping[str, float]) -> int:
    """OUT_DIR/<rec>.txt for every recording of DURATIONS (SPEECH: its detected intervals; absent = none); files of
    recordings not in DURATIONS are removed. Each file is written atomically. Returns the number of files."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for rec, dur in durations.items():
        with atomic_open(out / f"{rec}.txt") as f:
            f.write(format_rows(rec, covering_rows(speech.get(rec, []), float(dur))))
    for old in out.glob("*.txt"):
        if old.stem not in durations:
            old.unlink()  # a recording of an earlier decode of this set
    return len(durations)


def export_decode_dir(decode_dir, out_name: str = "fs02") -> int:
    """DECODE_DIR/OUT_NAME/<rec>.txt from DECODE_DIR's hyp.rttm (stage 6) over every recording of its reco2dur."""
    d = Path(decode_dir)
    for name in ("hyp.rttm", "reco2dur"):
        if not (d / name).is_file():
            raise DataDirError(d / name, None, "missing: run the decode and segments stages first")
    durations = {rec: float(v) for rec, v in read_table(d / "reco2dur").items()}
    return write_system_output(d / out_name, read_rttm(d / "hyp.rttm"), durations)


def read_system_output(path) -> List[Row]:
    """The rows of one system-output file, checked: 9 tab-separated columns, task SAD, numeric times, speech /
    non-speech, each interval starting where the previous one ended (from 0)."""
    rows: List[Row] = []
    for lineno, line in iter_lines(path):
        f = line.split("\t")
        if len(f) != COLUMNS or f[3] != "SAD":
            raise DataDirError(path, lineno, f"expected {COLUMNS} tab-separated columns, task 'SAD' in the 4th")
        try:
            s, e = float(f[5]), float(f[6])
        except ValueError:
            raise DataDirError(path, lineno, "interval start/end are not numbers") from None
        if f[7] not in (SPEECH, NONSPEECH):
            raise DataDirError(path, lineno, f"interval type '{f[7]}' is not '{SPEECH}' or '{NONSPEECH}'")
        expected = rows[-1][1] if rows else 0.0
        if abs(s - expected) > 1e-6 or not e > s:
            raise DataDirError(path, lineno, f"interval {s}-{e} does not continue at {expected}")
        rows.append((s, e, f[7]))
    return rows
