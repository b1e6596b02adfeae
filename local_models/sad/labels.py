"""Speech/non-speech labels as time intervals: RTTM, Kaldi segments, FS02 reference files (the FS02 scoring
toolkit's 12 tab-separated columns, or `start end label` lines), and conversion to frame masks on a fixed time grid.

A reference lists every recording it annotates: a recording with no speech at all keeps one RTTM `NON-SPEECH`
line (a NIST RTTM type) over its duration, so "annotated, no speech" differs from "not annotated"."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Tuple

import numpy as np

from local_models.common.datadir import DataDirError, atomic_open, iter_lines

Intervals = List[Tuple[float, float]]
# FS02 / NIST OpenSAD interval types (scoreFile_SAD.pl): S and RI (unintelligible speech) are speech; NS, NT (no
# transmission), RX (button off) and RS (adjudicated non-speech) are not
SPEECH_LABELS = {"s", "sp", "speech", "1", "ri"}
NONSPEECH_LABELS = {"ns", "nonspeech", "non-speech", "non_speech", "nsp", "0", "silence", "sil", "nt", "rx", "rs"}
FS02_COLUMNS = 12  # file, channel, start, end, S/NS, annotation kind ("manual"), six "X" placeholders


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
    """SPEAKER lines: type file chan tbeg tdur ortho stype name conf slat; any name counts as speech. NON-SPEECH
    lines only list their file (with no speech, unless SPEAKER lines give some)."""
    out: Dict[str, Intervals] = {}
    for lineno, line in iter_lines(path):
        f = line.split()
        if not f or f[0].startswith(";"):
            continue
        if f[0] not in ("SPEAKER", "NON-SPEECH") or len(f) < 5:
            raise DataDirError(path, lineno, "expected 'SPEAKER <file> <chan> <tbeg> <tdur> ...' "
                                             "(or a NON-SPEECH line)")
        try:
            start, dur = float(f[3]), float(f[4])
        except ValueError:
            raise DataDirError(path, lineno, "tbeg/tdur are not numbers") from None
        if dur <= 0 or start < 0:
            raise DataDirError(path, lineno, f"bad interval start={start} duration={dur}")
        speech = out.setdefault(f[1], [])
        if f[0] == "SPEAKER":
            speech.append((start, start + dur))
    return {k: merge(v) for k, v in out.items()}


def label_fields(path, lineno: int, line: str):
    """(file or None, start, end, label) of one FS02 reference line: the toolkit's 12 tab-separated columns (file, channel,
    start, end, S/NS, ...), or `<start> <end> <label>` (spaces or commas)."""
    tabs = line.rstrip("\r\n").split("\t")
    if len(tabs) > 1:
        if len(tabs) != FS02_COLUMNS:
            raise DataDirError(path, lineno, f"{len(tabs)} tab-separated columns, expected {FS02_COLUMNS} (file, channel, "
                                             "start, end, S/NS, kind, 6 x X: the FS02 scoring toolkit's reference)")
        return tabs[0].strip(), tabs[2], tabs[3], tabs[4].strip()
    f = line.replace(",", " ").split()
    if len(f) == FS02_COLUMNS:  # the toolkit's columns with the tabs turned into spaces
        return f[0], f[2], f[3], f[4]
    if len(f) != 3:
        raise DataDirError(path, lineno, f"expected {FS02_COLUMNS} tab-separated columns (FS02 toolkit) or "
                                         "'<start> <end> <label>'")
    return None, f[0], f[1], f[2]


def read_label_list(path, rec: Optional[str] = None) -> Intervals:
    """An FS02 reference file of one recording (label_fields; labels S/NS, speech/non-speech, 1/0 and the OpenSAD
    types RI / NT / RX / RS); speech kept. With REC, a 12-column line naming another file is an error."""
    speech: Intervals = []
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        name, a, b, label = label_fields(path, lineno, line)
        if rec is not None and name is not None and name != rec:
            raise DataDirError(path, lineno, f"names file '{name}', expected '{rec}'")
        try:
            start, end = float(a), float(b)
        except ValueError:
            raise DataDirError(path, lineno, f"start/end '{a}' '{b}' are not numbers") from None
        if not end > start or start < 0:
            raise DataDirError(path, lineno, f"end {end} is not after start {start}")
        if label.lower() in SPEECH_LABELS:
            speech.append((start, end))
        elif label.lower() not in NONSPEECH_LABELS:
            raise DataDirError(path, lineno, f"unknown label '{label}' (speech: S/RI/speech/1, non-speech: "
                                             "NS/NT/RX/RS/non-speech/0)")
    return merge(speech)


def read_segments_by_rec(path) -> Dict[str, Intervals]:
    out: Dict[str, Intervals] = {}
    for lineno, line in iter_lines(path):
        f = line.split()
        if len(f) != 4:
            raise DataDirError(path, lineno, "expected '<utt> <rec> <start> <end>'")
        out.setdefault(f[1], []).append((float(f[2]), float(f[3])))
    return {k: merge(v) for k, v in out.items()}


def write_rttm(path, speech: Dict[str, Intervals], durations: Optional[Mapping[str, float]] = None) -> None:
    """SPEAKER lines of every speech interval; a recording with none gets a NON-SPEECH line over its duration
    (from DURATIONS; without one it is left out, as before)."""
    with atomic_open(path) as f:
        for rec in sorted(speech, key=str.encode):
            for s, e in speech[rec]:
                f.write(f"SPEAKER {rec} 1 {s:.3f} {e - s:.3f} <NA> <NA> speech <NA> <NA>\n")
            if not speech[rec] and durations and float(durations.get(rec, 0)) > 0:
                f.write(f"NON-SPEECH {rec} 1 0.000 {float(durations[rec]):.3f} <NA> <NA> <NA> <NA> <NA>\n")


def write_segments(path, speech: Dict[str, Intervals]) -> None:
    """Kaldi segments of detected speech; ids `<rec>-<start cs>-<end cs>` sort with their recording."""
    with atomic_open(path) as f:
        for rec in sorted(speech, key=str.encode):
            for s, e in speech[rec]:
                f.write(f"{rec}-{round(s * 100):07d}-{round(e * 100):07d} {rec} {s:.3f} {e:.3f}\n")


def write_recording(path: Path, wave: np.ndarray, sr: int) -> None:
    """WAVE as a PCM_16 wav at PATH, written whole or not at all (a corpus builder's stream)."""
    import io

    import soundfile

    buf = io.BytesIO()
    soundfile.write(buf, wave, sr, subtype="PCM_16", format="WAV")
    with atomic_open(path, "wb") as f:
        f.write(buf.getvalue())


def write_reference_dir(data_dir, wavs: Mapping[str, Path], durations: Mapping[str, float],
                        speech: Dict[str, Intervals], extra: Optional[Mapping[str, Mapping]] = None) -> None:
    """A SAD data dir of whole recordings (recording = utterance = speaker): wav.scp, utt2spk, spk2utt, reco2dur,
    the reference speech as ref_segments and ref.rttm, and EXTRA tables ({file name: {rec: value}})."""
    from local_models.common.datadir import write_data_dir

    segments = {f"{rec}-{round(s * 100):07d}-{round(e * 100):07d}": f"{rec} {s:.3f} {e:.3f}"
                for rec in speech for s, e in speech[rec]}
    write_data_dir(data_dir, {r: str(p) for r, p in wavs.items()}, {r: r for r in wavs},
                   extra={"reco2dur": {r: f"{d:.3f}" for r, d in durations.items()}, "ref_segments": segments,
                          **(extra or {})})
    write_rttm(Path(data_dir) / "ref.rttm", speech)


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


def check_covered(ref: Mapping[str, Intervals], recs: Iterable[str], data_dir, what: str) -> None:
    """Every recording of RECS must be in the reference: one missing would be taken as all non-speech."""
    missing = sorted(set(recs) - set(ref))
    if missing:
        shown = " ".join(missing[:5]) + (f" ... ({len(missing)} in all)" if len(missing) > 5 else "")
        raise DataDirError(Path(data_dir), None, f"no reference for {shown}: cannot {what} (a recording with no "
                                                 "speech needs a NON-SPEECH line in ref.rttm)")
