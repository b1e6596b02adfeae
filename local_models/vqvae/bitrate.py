"""ZeroSpeech 2019 bitrate: B = (N / D) * H.

N = number of symbols emitted over the test set, D = total duration of the test files in seconds,
H = entropy in bits of the empirical distribution of the symbols (each symbol's count / N), pooled
over the whole set. A symbol is one emitted frame: an integer code, or a whole feature row (each
distinct row is one symbol type), exactly as the challenge's scorer reads one symbol per line of a
submission file.

Consecutive repeats are NOT collapsed (``collapse_repeats=False``, the default): the ZeroSpeech 2019
scorer counts every line, so a fixed-rate code of rate R and entropy H scores R * H. The paper's
numbers agree with that: with a 4x stride over 10 ms frames (25 codes/s) its bitrates stay below
25 * log2(K) for every K (141.82 < 150 for K=64, 170.42 < 175 for K=128, 194.69 < 200 for K=256,
217.47 < 225 for K=512) and close to it, which collapsed runs would not give. ``collapse_repeats=True``
(run-length style, each run of one symbol counts once) is offered for comparison only.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Iterable, Mapping, Union

import numpy as np


@dataclass
class BitrateResult:
    bitrate: float  # bits / s
    n_symbols: int  # N
    duration: float  # D, s
    entropy: float  # H, bits per symbol
    n_types: int  # distinct symbols
    collapse_repeats: bool

    def to_dict(self) -> dict:
        return asdict(self)


def entropy_bits(counts: Iterable[int]) -> float:
    """Entropy (bits) of the distribution given by non-negative counts."""
    c = np.array([x for x in counts if x > 0], dtype=np.float64)
    if c.size == 0:
        return 0.0
    p = c / c.sum()
    return float(max(0.0, -(p * np.log2(p)).sum()))


def _symbol_keys(seq) -> list:
    """One hashable key per emitted symbol of an utterance: the code, or the row's bytes."""
    a = np.asarray(seq)
    if a.ndim == 1:
        return a.tolist()
    if a.ndim == 2:
        a = np.ascontiguousarray(a, dtype=np.float64) + 0.0  # -0.0 and 0.0 are one symbol
        return [row.tobytes() for row in a]
    raise ValueError(f"symbol sequences must be (T,) codes or (T, D) rows, got shape {a.shape}")


def bitrate(symbols: Mapping[str, Union[np.ndarray, list]], durations: Union[Mapping[str, float], float],
            collapse_repeats: bool = False) -> BitrateResult:
    """Bitrate of {utt: symbol sequence} over the whole set.

    durations: {utt: seconds} (utt2dur: D sums the durations of the utterances in `symbols`; every
    one needs a duration) or the total duration D in seconds.
    """
    counts: Counter = Counter()
    n = 0
    for utt, seq in symbols.items():
        keys = _symbol_keys(seq)
        if collapse_repeats:
            keys = [k for i, k in enumerate(keys) if i == 0 or k != keys[i - 1]]
        counts.update(keys)
        n += len(keys)
    if isinstance(durations, Mapping):
        missing = [u for u in symbols if u not in durations]
        if missing:
            raise KeyError(f"{len(missing)} utterance(s) have no duration, e.g. {', '.join(sorted(missing)[:5])}")
        total = float(sum(float(durations[u]) for u in symbols))
    else:
        total = float(durations)
    if not total > 0 or not math.isfinite(total):
        raise ValueError(f"total duration must be > 0 s, got {total}")
    h = entropy_bits(counts.values())
    return BitrateResult(bitrate=n / total * h, n_symbols=n, duration=total, entropy=h,
                         n_types=len(counts), collapse_repeats=collapse_repeats)
