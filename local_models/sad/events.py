"""The `events` table of a SAD data dir and the robustness metrics it allows (docs/metrics.md).

`data/<set>/events`: one line per event, `<rec> <start> <end> <kind> <snr_db>`, times in seconds. Kinds: the non-speech
that was mixed in (music, tone, noise, babble) at its SNR against the speech level, and every reference speech
segment (speech) at its local SNR against the background noise. Written by the mini-corpus builder and by the
augmentation; a corpus without one is scored without the robustness table.

Metrics, on a 10 ms grid, pooled over the set's recordings:
- false-alarm share of a kind: of the time a KIND event sounds and the reference is non-speech, the share the
  system calls speech (music under speech is not counted: it is speech time);
- background-only false alarms: the same over non-speech time with no event at all (the stationary noise);
- miss rate by SNR band: of the reference speech inside speech rows of that band, the share the system misses;
- separability of a kind (threshold-free): the ROC AUC of the system's frame scores, reference speech frames against
  that kind's non-speech frames. It tells a false alarm the operating point makes (AUC near 1, threshold low) from one
  the model makes (AUC near 0.5: the scores do not tell the kind from speech at any threshold).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Tuple

import numpy as np

from local_models.common.datadir import DataDirError, atomic_open, iter_lines

from .detectors import SHIFT
from .labels import Intervals, to_mask

GRID = SHIFT  # the detectors' 10 ms frames: frame scores and event masks share one grid
NONSPEECH_KINDS = ("music", "tone", "noise", "babble")
SNR_BANDS = ((-np.inf, 5.0), (5.0, 10.0), (10.0, 15.0), (15.0, np.inf))


@dataclass(frozen=True)
class Event:
    """A non-speech event added to a recording: seconds, kind (music / tone / noise / babble / speech), SNR in dB."""
    start: float
    end: float
    kind: str
    snr_db: float


def band_name(lo: float, hi: float) -> str:
    if lo == -np.inf:
        return f"< {hi:g} dB"
    return f">= {lo:g} dB" if hi == np.inf else f"{lo:g}-{hi:g} dB"


def write_events(path, events: Mapping[str, Iterable[Event]]) -> None:
    """EVENTS {rec: [Event]} as the `events` table, recordings in byte order, events by start time."""
    with atomic_open(path) as f:
        for rec in sorted(events, key=str.encode):
            for e in sorted(events[rec], key=lambda e: (e.start, e.end, e.kind)):
                if round(e.end, 3) <= round(e.start, 3):
                    continue  # under a millisecond (an event cut by the end of the recording): not a row
                f.write(f"{rec} {e.start:.3f} {e.end:.3f} {e.kind} {e.snr_db:.1f}\n")


def read_events(path) -> Dict[str, List[Event]]:
    """The `events` table; a malformed line raises DataDirError naming the file and line."""
    out: Dict[str, List[Event]] = {}
    for lineno, line in iter_lines(path):
        f = line.split()
        if not f:
            continue
        if len(f) != 5:
            raise DataDirError(path, lineno, "expected '<rec> <start> <end> <kind> <snr_db>'")
        try:
            start, end, snr = float(f[1]), float(f[2]), float(f[4])
        except ValueError:
            raise DataDirError(path, lineno, "start / end / snr_db are not numbers") from None
        if not 0 <= start < end:
            raise DataDirError(path, lineno, f"bad interval start={start} end={end}")
        if f[3] not in NONSPEECH_KINDS + ("speech",):
            raise DataDirError(path, lineno, f"unknown kind '{f[3]}' (one of {', '.join(NONSPEECH_KINDS)}, speech)")
        out.setdefault(f[0], []).append(Event(start, end, f[3], snr))
    return out


def load_events(data_dir) -> Dict[str, List[Event]]:
    """data_dir/events, or {} when the set has none."""
    f = Path(data_dir) / "events"
    return read_events(f) if f.is_file() else {}


def _mask(events: Iterable[Event], n: int, keep) -> np.ndarray:
    return to_mask([(e.start, e.end) for e in events if keep(e)], n, GRID)


def nonspeech_masks(rec_events: Iterable[Event], n: int, ref: np.ndarray) -> Dict[str, np.ndarray]:
    """{kind: frames where KIND sounds over reference non-speech, 'background': non-speech frames with no event} of
    one recording on the GRID (REF: its reference speech mask, n frames). Music under speech is speech time."""
    rec_events = list(rec_events)
    out = {k: _mask(rec_events, n, lambda e, k=k: e.kind == k) & ~ref for k in NONSPEECH_KINDS}
    out["background"] = ~ref & ~_mask(rec_events, n, lambda e: e.kind != "speech")
    return out


def robustness(ref: Mapping[str, Intervals], hyp: Mapping[str, Intervals], durations: Mapping[str, float],
               events: Mapping[str, List[Event]]) -> Dict[str, Dict[str, float]]:
    """{'fa': {kind: share, 'background': share}, 'miss_by_snr': {band: rate}, 'seconds': {...}} over the
    recordings that have events; a kind or band with no time is left out."""
    fa_num: Dict[str, float] = {}
    fa_den: Dict[str, float] = {}
    miss_num: Dict[str, float] = {}
    miss_den: Dict[str, float] = {}
    for rec, dur in durations.items():
        if rec not in events:
            continue
        n = int(round(dur / GRID))
        r, h = to_mask(ref.get(rec, []), n, GRID), to_mask(hyp.get(rec, []), n, GRID)
        for kind, m in nonspeech_masks(events[rec], n, r).items():
            fa_num[kind] = fa_num.get(kind, 0.0) + float(np.sum(m & h))
            fa_den[kind] = fa_den.get(kind, 0.0) + float(np.sum(m))
        for lo, hi in SNR_BANDS:
            m = _mask(events[rec], n, lambda e: e.kind == "speech" and lo <= e.snr_db < hi) & r
            b = band_name(lo, hi)
            miss_num[b] = miss_num.get(b, 0.0) + float(np.sum(m & ~h))
            miss_den[b] = miss_den.get(b, 0.0) + float(np.sum(m))
    return {"fa": {k: fa_num[k] / fa_den[k] for k in fa_den if fa_den[k]},
            "miss_by_snr": {b: miss_num[b] / miss_den[b] for b in miss_den if miss_den[b]},
            "seconds": {**{k: fa_den[k] * GRID for k in fa_den}, **{b: miss_den[b] * GRID for b in miss_den}}}


def separability(ref: Mapping[str, Intervals], scores: Mapping[str, np.ndarray],
                 events: Mapping[str, List[Event]]) -> Dict[str, float]:
    """{kind: ROC AUC} of the frame SCORES (GRID frames, higher = speech) of the recordings that have events:
    reference speech frames (positives) against reference non-speech frames where KIND sounds, and against the
    background (non-speech with no event); a kind with no frames, or a set without speech, is left out."""
    from sklearn.metrics import roc_auc_score  # only the scoring stage needs it

    pos: List[np.ndarray] = []
    neg: Dict[str, List[np.ndarray]] = {}
    for rec, s in scores.items():
        if rec not in events:
            continue
        r = to_mask(ref.get(rec, []), len(s), GRID)
        pos.append(s[r])
        for kind, m in nonspeech_masks(events[rec], len(s), r).items():
            neg.setdefault(kind, []).append(s[m])
    speech = np.concatenate(pos) if pos else np.zeros(0)
    out = {}
    for kind, parts in neg.items():
        other = np.concatenate(parts)
        if len(speech) and len(other):
            y = np.r_[np.ones(len(speech)), np.zeros(len(other))]
            out[kind] = float(roc_auc_score(y, np.r_[speech, other]))
    return out


def event_seconds(events: Mapping[str, List[Event]]) -> Dict[str, Tuple[int, float]]:
    """{kind: (count, seconds)} of an events table (for the data summary)."""
    out: Dict[str, Tuple[int, float]] = {}
    for evs in events.values():
        for e in evs:
            c, s = out.get(e.kind, (0, 0.0))
            out[e.kind] = (c + 1, s + e.end - e.start)
    return out


def fa_by_chunk(ref: Intervals, hyp: Intervals, duration: float, rec_events: Iterable[Event],
                chunk: float) -> List[Dict[str, List[float]]]:
    """One recording's false-alarm seconds per metrics.chunk_spans piece: [{kind: [seconds the kind sounds over
    non-speech, of them called speech]}], kinds as `robustness` counts them (a kind absent from a piece: no key)."""
    from .metrics import chunk_spans

    n = int(round(duration / GRID))
    r, h = to_mask(ref, n, GRID), to_mask(hyp, n, GRID)
    masks = nonspeech_masks(rec_events, n, r)
    out = []
    for a, b in chunk_spans(duration, chunk):
        sl = slice(int(round(a / GRID)), int(round(b / GRID)))
        out.append({k: [float(np.sum(m[sl])) * GRID, float(np.sum(m[sl] & h[sl])) * GRID]
                    for k, m in masks.items() if np.any(m[sl])})
    return out
