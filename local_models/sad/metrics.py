"""SAD scoring as in the paper (eq. 2-4) and the NIST OpenSAD / FS02 scorer.

Time is scored on a 1 ms grid. With a collar c, reference NON-speech within c seconds of a
reference speech boundary is not scored (speech is always scored): the OpenSAD convention used
by the Fearless Steps scorer (c = 0.5 s). DCF = 0.75 P_miss + 0.25 P_fa.
"pooled" sums times over all files; "per_file" averages the per-file rates.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Dict, Mapping

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
