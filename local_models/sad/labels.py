"""Speech/non-speech labels as time intervals: RTTM, Kaldi segments, FS02 `start end label` lists,
and conversion to frame masks on a fixed time grid."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Iterable, List, Tuple

import numpy as np

from local_models.common.datadir import DataDirError, atomic_open, iter_lines

Intervals = List[Tuple[float, float]]
SPEECH_LABELS = {"s", "sp", "speech", "1"}
NONSPEECH_LABELS = {"ns", "nonspeech", "non-speech", "non_speech", "nsp", "0", "silence", "sil"}


def merge(intervals: Iterable[Tuple[float, float]], gap: float = 0.0) -> Intervals:
    """Sort and merge overlapping intervals (and those closer than `gap` seconds)."""
    out: Intervals = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1] + gap:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def read_rttm(path) -> Dict[str, Intervals]:
    """SPEAKER lines: type file chan tbeg tdur ortho stype name conf slat; any name counts as speech."""
    out: Dict[str, Intervals] = {}
    for lineno, line in iter_lines(path):
        f = line.split()
        if not f or f[0].startswith(";"):
            continue
        if f[0] != "SPEAKER" or len(f) < 5:
            raise DataDirError(path, lineno, "expected 'SPEAKER <file> <chan> <tbeg> <tdur> ...'")
        try:
            start, dur = float(f[3]), float(f[4])
        except ValueError:
            raise DataDirError(path, lineno, "tbeg/tdur are not numbers") from None
        if dur <= 0 or start < 0:
            raise DataDirError(path, lineno, f"bad interval start={start} duration={dur}")
        out.setdefault(f[1], []).append((start, start + dur))
    return {k: merge(v) for k, v in out.items()}


def read_label_list(path) -> Intervals:
    """FS02-style `<start> <end> <label>` lines (label S/NS, speech/non-speech, 1/0); speech kept."""
    speech: Intervals = []
    for lineno, line in iter_lines(path):
        f = line.replace(",", " ").split()
        if not f:
            continue
        if len(f) < 3:
            raise DataDirError(path, lineno, "expected '<start> <end> <label>'")
        try:
            start, end = float(f[0]), float(f[1])
        except ValueError:
            raise DataDirError(path, lineno, "start/end are not numbers") from None
        label = f[2].lower()
        if not end > start:
            raise DataDirError(path, lineno, f"end {end} is not after start {start}")
        if label in SPEECH_LABELS:
            speech.append((start, end))
        elif label not in NONSPEECH_LABELS:
            raise DataDirError(path, lineno, f"unknown label '{f[2]}' (speech: S/speech/1, non-speech: NS/non-speech/0)")
    return merge(speech)


def read_segments_by_rec(path) -> Dict[str, Intervals]:
    out: Dict[str, Intervals] = {}
    for lineno, line in iter_lines(path):
        f = line.split()
        if len(f) != 4:
            raise DataDirError(path, lineno, "expected '<utt> <rec> <start> <end>'")
        out.setdefault(f[1], []).append((float(f[2]), float(f[3])))
    return {k: merge(v) for k, v in out.items()}


def write_rttm(path, speech: Dict[str, Intervals]) -> None:
    with atomic_open(path) as f:
        for rec in sorted(speech, key=str.encode):
            for s, e in speech[rec]:
                f.write(f"SPEAKER {rec} 1 {s:.3f} {e - s:.3f} <NA> <NA> speech <NA> <NA>\n")


def write_segments(path, speech: Dict[str, Intervals]) -> None:
    """Kaldi segments of detected speech; ids `<rec>-<start cs>-<end cs>` sort with their recording."""
    with atomic_open(path) as f:
        for rec in sorted(speech, key=str.encode):
            for s, e in speech[rec]:
                f.write(f"{rec}-{round(s * 100):07d}-{round(e * 100):07d} {rec} {s:.3f} {e:.3f}\n")


def to_mask(intervals: Intervals, n_frames: int, shift: float) -> np.ndarray:
    """Frame t (covering [t*shift, (t+1)*shift)) is speech if its centre lies in an interval."""
    mask = np.zeros(n_frames, dtype=bool)
    for s, e in intervals:
        a = max(0, int(np.ceil(s / shift - 0.5)))
        b = min(n_frames, int(np.ceil(e / shift - 0.5)))
        mask[a:b] = True
    return mask


def to_intervals(mask: np.ndarray, shift: float) -> Intervals:
    """Runs of True frames as (start_s, end_s)."""
    padded = np.concatenate([[False], np.asarray(mask, bool), [False]])
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    return [(a * shift, b * shift) for a, b in zip(edges[::2], edges[1::2])]


def load_reference(data_dir) -> Dict[str, Intervals]:
    """Reference speech of a SAD data dir: ref.rttm, else ref_segments; {} when there is none."""
    data_dir = Path(data_dir)
    if (data_dir / "ref.rttm").is_file():
        return read_rttm(data_dir / "ref.rttm")
    if (data_dir / "ref_segments").is_file():
        return read_segments_by_rec(data_dir / "ref_segments")
    return {}
