"""Viterbi decoding of an HMM in the log domain, once for the project: librosa's compiled core.

`librosa.sequence.viterbi` itself takes probabilities in [0, 1] and adds a tiny epsilon before its log, so it
cannot take HMM emission log-likelihoods as they are: densities can exceed 1 (a ParameterError), a forbidden
transition becomes log(tiny) ~ -708 instead of -inf (a path may then jump where the topology forbids it, once
one state's score leads by more than 708 nats, as with GMM log-likelihoods of long streams), and the exp / log
round trip moves scores by rounding, which can flip near-ties. Its core `librosa.sequence._viterbi(log_prob
(T, S), log_trans (S, S), log_p_init (S,))` is the textbook recursion on log values: delta_t[j] = log_prob[t, j]
+ max_i (delta_{t-1}[i] + log_trans[i, j]), ties to the lowest i (numpy's argmax), the last state by argmax
likewise. That is what this module calls (librosa is pinned in tools/constraints.txt).
"""
from __future__ import annotations

import numpy as np


def _f64(a) -> np.ndarray:
    """One dtype and layout for every call: numba compiles (and caches) a single specialisation."""
    return np.ascontiguousarray(a, dtype=np.float64)


def viterbi(log_emis: np.ndarray, log_trans: np.ndarray, log_init: np.ndarray) -> np.ndarray:
    """Most likely state sequence (T,) int32; log_emis (T, S), log_trans (S, S) from -> to (-inf: forbidden),
    log_init (S,), S < 65536 (the core keeps states as uint16). Ties go to the lower state index."""
    if len(log_emis) == 0:  # the compiled core would write out of bounds
        raise ValueError("viterbi: no frames")
    # imported here: librosa.sequence loads numba and scipy (4-7 s), which a tool that never decodes (packing,
    # scoring) should not pay at start-up
    from librosa.sequence import _viterbi

    states, _ = _viterbi(_f64(log_emis), _f64(log_trans), _f64(log_init))
    return states.astype(np.int32)


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernel now, so that the first real call is not slowed by it
    (decoders time their calls for real-time factors)."""
    viterbi(np.zeros((2, 2)), np.zeros((2, 2)), np.zeros(2))
