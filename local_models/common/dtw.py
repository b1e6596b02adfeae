"""Dynamic time warping, once for the project: librosa.sequence.dtw, plus one compiled kernel for ABX.

All variants use the classic recurrence D[i, j] = C[i, j] + min(D[i-1, j-1], D[i, j-1], D[i-1, j]) (steps
(1,1), (0,1), (1,0), weight 1, librosa's defaults) from D[0, 0] = C[0, 0] to D[n-1, m-1]; they differ in the
tie rule when two predecessors are equal and in what they return:

- `dtw_path` (MCD, SALAD's alignment warp): the (L, 2) path; ties diagonal > (i-1, j) > (i, j-1).
- `dtw_normalised` (ZeroSpeech / ABXpy / libri-light ABX distance): D[n-1, m-1] / L, L the number of cells on
  the backtracked path; ties diagonal > (i, j-1) > (i-1, j) (ABXpy's and libri-light's order).
- `dtw_normalised_pairs`: `dtw_normalised` of many small sub-matrices of one cost block, in one compiled loop.
  An ABX evaluation needs millions of ~6-25-frame DTWs, where a per-pair librosa call costs ~50x (25 frames)
  to ~1000x (6 frames) more (benchmarks/dtw_speed.py); tests/test_vqvae_metrics.py checks it against
  `dtw_normalised`. One MCD path per utterance takes librosa 3-70 ms, a few % of its WORLD analysis at most.

librosa picks the first step, in its step order, whose sum D[prev] + C[i, j] is smallest; the compiled kernel
compares the predecessors D[prev] themselves (as ABXpy / libri-light do). D is bit-identical either way; only
when two predecessors differ by less than the rounding of the sum can the path (and so L) differ.
"""
from __future__ import annotations

import numba
import numpy as np


def _check_cost(cost) -> np.ndarray:
    c = np.ascontiguousarray(cost, dtype=np.float64)
    if c.ndim != 2 or 0 in c.shape:
        raise ValueError(f"DTW needs a non-empty 2-D cost matrix, got shape {c.shape}")
    return c


def _librosa_dtw(cost: np.ndarray):
    """(accumulated cost D, path (L, 2) from (0, 0) to the end) of librosa's default DTW on `cost`."""
    import librosa

    acc, wp = librosa.sequence.dtw(C=cost)
    return acc, np.ascontiguousarray(wp[::-1], dtype=np.int64)


def dtw_path(cost) -> np.ndarray:
    """Minimum-cost monotone path through an (n, m) cost matrix: (L, 2) int64 (row index, column index) rows.
    Ties: diagonal, then (i-1, j), then (i, j-1): librosa's order (diagonal, (i, j-1), (i-1, j)) on the
    transposed matrix, whose path is then transposed back."""
    _, wp = _librosa_dtw(_check_cost(cost).T)
    return np.ascontiguousarray(wp[:, ::-1])


def dtw_normalised(cost) -> float:
    """Path-length-normalised DTW distance (ABX): accumulated cost / number of cells on the best path."""
    acc, wp = _librosa_dtw(_check_cost(cost))
    return float(acc[-1, -1] / len(wp))


@numba.njit(cache=True, nogil=True)
def _normalised_core(d):
    """`dtw_normalised` of one matrix in compiled loops (predecessors compared directly, see module doc)."""
    n, m = d.shape
    cost = np.empty((n, m))
    cost[0, 0] = d[0, 0]
    for i in range(1, n):
        cost[i, 0] = cost[i - 1, 0] + d[i, 0]
    for j in range(1, m):
        cost[0, j] = cost[0, j - 1] + d[0, j]
    for i in range(1, n):
        for j in range(1, m):
            best = cost[i - 1, j - 1]
            if cost[i - 1, j] < best:
                best = cost[i - 1, j]
            if cost[i, j - 1] < best:
                best = cost[i, j - 1]
            cost[i, j] = d[i, j] + best
    i, j, length = n - 1, m - 1, 1
    while i > 0 and j > 0:
        diag, left, up = cost[i - 1, j - 1], cost[i, j - 1], cost[i - 1, j]
        if diag <= left and diag <= up:
            i -= 1
            j -= 1
        elif left <= up:
            j -= 1
        else:
            i -= 1
        length += 1
    return cost[n - 1, m - 1] / (length + i + j)  # + i + j: the straight run along the first row / column


@numba.njit(cache=True, nogil=True)
def _normalised_pairs(block, roff, rlen, coff, clen, pi, pj, out):
    for k in range(len(pi)):
        i, j = pi[k], pj[k]
        out[k] = _normalised_core(block[roff[i]:roff[i] + rlen[i], coff[j]:coff[j] + clen[j]])


def dtw_normalised_pairs(block, row_offsets, row_lengths, col_offsets, col_lengths, pi, pj) -> np.ndarray:
    """`dtw_normalised` of block[rows of sequence pi[k], columns of sequence pj[k]] for every k, compiled.

    Sequence i owns rows row_offsets[i] : row_offsets[i] + row_lengths[i] of `block` (columns likewise); every
    length must be >= 1."""
    block = np.ascontiguousarray(block, dtype=np.float64)
    roff, rlen, coff, clen, pi, pj = (np.asarray(a, dtype=np.int64) for a in
                                      (row_offsets, row_lengths, col_offsets, col_lengths, pi, pj))
    # the compiled loops do not check bounds: an empty or out-of-range sequence would read outside `block`
    for off, n, size, name in ((roff, rlen, block.shape[0], "row"), (coff, clen, block.shape[1], "column")):
        if len(n) and (n.min() < 1 or off.min() < 0 or (off + n).max() > size):
            raise ValueError(f"{name} sequences must be non-empty and inside the {block.shape} block")
    if len(pi) and (min(pi.min(), pj.min()) < 0 or pi.max() >= len(rlen) or pj.max() >= len(clen)):
        raise ValueError("pair indices out of range")
    out = np.empty(len(pi))
    _normalised_pairs(block, roff, rlen, coff, clen, pi, pj, out)
    return out


def dtw_normalised_compiled(cost) -> float:
    """`dtw_normalised` through the compiled kernel (one matrix)."""
    return float(_normalised_core(_check_cost(cost)))
