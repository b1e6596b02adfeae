"""SAD scoring as in the paper (eq. 2-4) and the NIST OpenSAD / FS02 scorer.

Time is scored on a 1 ms grid. With a collar c, reference NON-speech within c seconds of a
reference speech boundary is not scored (speech is always scored): the OpenSAD convention used
by the Fearless Steps scorer (c = 0.5 s). DCF = 0.75 P_miss + 0.25 P_fa.
"pooled" sums times over all files; "per_file" averages the per-file rates.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Dict, List, Mapping, Tuple

import numpy as np

from .labels import Intervals, to_mask

RES = 0.001  # scoring grid (s)


@dataclass
class Counts:
    tp: float = 0.0
    fp: float = 0.0
    tn: float = 0.0
    fn: float = 0.0

    def __iadd__(self, o: "Counts"):
        self.tp += o.tp
        self.fp += o.fp
        self.tn += o.tn
        self.fn += o.fn
        return self

    def rates(self) -> Dict[str, float]:
        p_miss = self.fn / (self.tp + self.fn) if self.tp + self.fn else 0.0
        p_fa = self.fp / (self.tn + self.fp) if self.tn + self.fp else 0.0
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        recall = 1.0 - p_miss if self.tp + self.fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {"dcf": 0.75 * p_miss + 0.25 * p_fa, "p_miss": p_miss, "p_fa": p_fa,
                "precision": precision, "recall": recall, "f1": f1}


def collar_mask(ref: np.ndarray, collar: float) -> np.ndarray:
    """Frames to score: all reference speech, plus non-speech farther than `collar` from speech."""
    if collar <= 0:
        return np.ones_like(ref)
    k = int(round(collar / RES))
    # distance to nearest speech frame via dilation with a (2k+1) box, computed with cumsum
    c = np.concatenate([[0], np.cumsum(ref.astype(np.int64))])
    n = len(ref)
    lo = np.clip(np.arange(n) - k, 0, n)
    hi = np.clip(np.arange(n) + k + 1, 0, n)
    near_speech = (c[hi] - c[lo]) > 0
    return ref | ~near_speech


def count_file(ref: Intervals, hyp: Intervals, duration: float, collar: float = 0.0) -> Counts:
    n = int(round(duration / RES))
    r, h = to_mask(ref, n, RES), to_mask(hyp, n, RES)
    scored = collar_mask(r, collar)
    return Counts(
        tp=float(np.sum(r & h & scored)) * RES,
        fp=float(np.sum(~r & h & scored)) * RES,
        tn=float(np.sum(~r & ~h & scored)) * RES,
        fn=float(np.sum(r & ~h & scored)) * RES,
    )


def score(ref: Mapping[str, Intervals], hyp: Mapping[str, Intervals], durations: Mapping[str, float],
          collar: float = 0.0) -> Dict[str, Dict[str, float]]:
    """{'pooled': rates, 'per_file': mean of rates, 'files': {rec: rates}} over recordings in durations."""
    total, per_file = Counts(), {}
    for rec, dur in durations.items():
        c = count_file(ref.get(rec, []), hyp.get(rec, []), dur, collar)
        total += c
        per_file[rec] = c.rates()
    mean = {k: float(np.mean([r[k] for r in per_file.values()])) for k in total.rates()} if per_file else {}
    return {"pooled": total.rates(), "per_file": mean, "files": per_file, "counts": asdict(total)}


# ---- minute-long chunks: the units a bootstrap resamples when a set has too few recordings to resample them
CHUNK_S = 60.0  # seconds


def chunk_spans(duration: float, chunk: float = CHUNK_S) -> List[Tuple[float, float]]:
    """[(start, end)] cutting DURATION seconds into CHUNK-second pieces; a tail under half a chunk joins the one
    before."""
    starts = list(np.arange(0.0, duration, chunk)) or [0.0]
    if len(starts) > 1 and duration - starts[-1] < chunk / 2:
        starts.pop()
    return [(float(a), float(b)) for a, b in zip(starts, starts[1:] + [duration])]


def count_chunks(ref: Intervals, hyp: Intervals, duration: float, collar: float = 0.0,
                 chunk: float = CHUNK_S) -> List[Counts]:
    """count_file per chunk_spans piece of one recording; the collar is laid over the whole recording first, so the
    pieces' counts sum to count_file's."""
    n = int(round(duration / RES))
    r, h = to_mask(ref, n, RES), to_mask(hyp, n, RES)
    scored = collar_mask(r, collar)
    out = []
    for a, b in chunk_spans(duration, chunk):
        sl = slice(int(round(a / RES)), int(round(b / RES)))
        rr, hh, ss = r[sl], h[sl], scored[sl]
        out.append(Counts(tp=float(np.sum(rr & hh & ss)) * RES, fp=float(np.sum(~rr & hh & ss)) * RES,
                          tn=float(np.sum(~rr & ~hh & ss)) * RES, fn=float(np.sum(rr & ~hh & ss)) * RES))
    return out


def dcf_of_counts(counts) -> float:
    """Pooled DCF of rows [tp, fp, tn, fn] (summed first: the pooled figure of whatever rows a resample drew)."""
    tp, fp, tn, fn = np.asarray(counts, dtype=float).reshape(-1, 4).sum(axis=0)
    return Counts(tp, fp, tn, fn).rates()["dcf"]
