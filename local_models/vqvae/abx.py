"""ZeroSpeech 2019 ABX error: across speaker, within triphone context, DTW over the angular distance.

Definition (ZeroSpeech 2017/2019 evaluation: ABXpy task ``on=phone, by=context, across=speaker``,
then the challenge's averaging script):

- Items come from a ``.item`` file (`local_models.vqvae.items`): a file, onset, offset, the middle
  phone, its context (prev-phone, next-phone) and the speaker.
- A cell is (context c, phone A, phone B != A, speaker s, speaker s' != s). It holds every triplet
  (a, b, x) with a an item of (c, A, s), b an item of (c, B, s) and x an item of (c, A, s'):
  A and B come from one speaker, X from another, and all three share the context.
- Cell score = mean over its triplets of 1[d(a,x) < d(b,x)] + 0.5 * 1[d(a,x) = d(b,x)].
- Score = mean over contexts -> per (A, B, s, s'); then mean over the speaker pairs (s, s') -> per
  (A, B); then mean over the ordered phone pairs (A, B). Every mean is unweighted.
  ABX error = (1 - score) * 100 (%, lower is better).
- d = DTW distance: frame distance = arccos(cos(u, v)) / pi (in [0, 1]; a zero frame is at 1 from
  any non-zero frame and at 0 from another zero frame, as ABXpy has it); the accumulated cost uses
  the steps (1,0), (0,1), (1,1) with weight 1 each and is divided by the number of cells on the best
  path (found by backtracking, ties broken diagonal > left > up, as ABXpy and libri-light do;
  `local_models.common.dtw.dtw_normalised`). d(a, x) is computed with x as the first (row) sequence,
  like libri-light.
- Frames: frame t of an utterance is taken to be centred at ``frame_offset + t * frame_shift``
  (default offset ``frame_shift / 2``: frame t covers [t*shift, (t+1)*shift), which is also what
  ZeroSpeech 2019 assumed for its time-stamp-less submissions, spreading the frames evenly over each
  file). An item keeps the frames whose centre lies in [onset, offset], both ends included (ABXpy's
  rule). ``rule="libri-light"`` instead keeps frames ceil(on/shift - 0.5) <= t < floor(off/shift - 0.5)
  (libri-light / zerospeech-libriabx2; this drops the last frame the centre rule keeps). Items with
  no frame are left out (and counted).

Discrete units: give each frame its code's embedding (`codes_to_features(codes, codebook)`, what the
paper evaluates) or a one-hot vector (`codes_to_features(codes, num_codes=K)`: then frames of the
same code are at 0 and of different codes at 0.5).
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping as MappingABC
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from local_models.common.dtw import dtw_normalised, dtw_normalised_compiled, dtw_normalised_pairs

from .items import Item

FRAME_RULES = ("center", "libri-light")
# Largest frame-distance block (rows x columns) computed at once: 2^23 float64 = 64 MiB.
MAX_BLOCK = 1 << 23
# Tolerance (in frames) when testing a frame centre against an item boundary.
_EPS_FRAMES = 1e-6


# ----------------------------------------------------------------------------- frames and items
def frame_slice(n_frames: int, onset: float, offset: float, frame_shift: float,
                frame_offset: Optional[float] = None, rule: str = "center") -> slice:
    """Frames of an utterance with `n_frames` frames that belong to the item [onset, offset]."""
    if rule == "center":
        off = frame_shift / 2 if frame_offset is None else frame_offset
        start = math.ceil((onset - off) / frame_shift - _EPS_FRAMES)
        stop = math.floor((offset - off) / frame_shift + _EPS_FRAMES) + 1
    elif rule == "libri-light":
        step = 1.0 / frame_shift  # the same float operations as zrc_abx2's _start_end_indices
        start = int(math.ceil(step * onset - 0.5))
        stop = int(math.floor(step * offset - 0.5))
    else:
        raise ValueError(f"unknown frame rule {rule!r} (one of {', '.join(FRAME_RULES)})")
    start, stop = max(start, 0), min(stop, n_frames)
    return slice(start, max(start, stop))


def codes_to_features(codes, codebook: Optional[np.ndarray] = None, num_codes: Optional[int] = None) -> np.ndarray:
    """(T,) integer codes -> (T, D) frames: codebook rows (embeddings) or one-hot of size num_codes."""
    codes = np.asarray(codes)
    if codes.ndim == 2 and codes.shape[1] == 1:
        codes = codes[:, 0]
    if codes.ndim != 1:
        raise ValueError(f"codes must have shape (T,) or (T, 1), got {codes.shape}")
    if codes.size and not np.all(np.equal(np.mod(codes, 1), 0)):
        raise ValueError("codes must be integers")
    codes = codes.astype(np.int64)
    k = len(codebook) if codebook is not None else num_codes
    if k is None:
        raise ValueError("give the codebook (embeddings) or num_codes (one-hot)")
    if codes.size and (codes.min() < 0 or codes.max() >= k):
        raise ValueError(f"codes must lie in [0, {k}), got {codes.min()}..{codes.max()}")
    if codebook is not None:
        codebook = np.asarray(codebook, dtype=np.float64)
        if codebook.ndim != 2:
            raise ValueError(f"codebook must have shape (K, D), got {codebook.shape}")
        return codebook[codes]
    out = np.zeros((len(codes), k))
    out[np.arange(len(codes)), codes] = 1.0
    return out


class CodeFeatures(MappingABC):
    """{utt: (T, D) frames} over {utt: (T,) codes}: embeddings or one-hot, converted on access."""

    def __init__(self, codes, codebook=None, num_codes=None):
        self.codes, self.codebook, self.num_codes = codes, codebook, num_codes

    def __getitem__(self, utt):
        return codes_to_features(self.codes[utt], self.codebook, self.num_codes)

    def __iter__(self):
        return iter(self.codes)

    def __len__(self):
        return len(self.codes)

    def __contains__(self, utt):
        return utt in self.codes


# ----------------------------------------------------------------------------- frame distances
def _unit_rows(x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    norm = np.sqrt(np.einsum("ij,ij->i", x, x))
    zero = norm == 0
    return x / np.where(zero, 1.0, norm)[:, None], zero


# A frame's cosine with itself rounds to 1 - 2e-16 for many vectors, whose arccos (~5e-9) is rounding noise that
# the DTW sums turn into preferences: a collapsed codebook (one code everywhere) scored 48.9 % instead of the exact
# ties' 50 %. Cosines this close to 1 (an angle below ~1.4e-6 rad) are snapped to it: identical frames are at 0.
SAME_DIRECTION = 1.0 - 1e-12


def _angular(ux: np.ndarray, zx: np.ndarray, uy: np.ndarray, zy: np.ndarray) -> np.ndarray:
    c = np.clip(ux @ uy.T, -1.0, 1.0)
    c[c > SAME_DIRECTION] = 1.0
    d = np.arccos(c) / np.pi
    if zx.any() or zy.any():
        d[zx, :] = 1.0
        d[:, zy] = 1.0
        d[np.ix_(zx, zy)] = 0.0
    return d


def angular_distances(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(n, m) matrix of arccos(cosine similarity) / pi between the rows of x (n, D) and y (m, D)."""
    return _angular(*_unit_rows(x), *_unit_rows(y))


# ----------------------------------------------------------------------------- DTW
BACKENDS = ("auto", "numba", "librosa")


def _backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"unknown DTW backend {backend!r} ({', '.join(BACKENDS)})")
    return "numba" if backend == "auto" else backend


def dtw_distance(d: np.ndarray, backend: str = "auto") -> float:
    """Path-length-normalised DTW distance of a frame-distance matrix d (n, m), n, m >= 1 (common.dtw):
    the compiled kernel ("numba", default) or librosa.sequence.dtw ("librosa")."""
    if _backend(backend) == "numba":
        return dtw_normalised_compiled(d)
    return dtw_normalised(d)


def dtw_angular(x: np.ndarray, y: np.ndarray, backend: str = "auto") -> float:
    """DTW distance between two frame sequences (n, D), (m, D) under the angular frame distance."""
    return dtw_distance(angular_distances(x, y), backend)


# ----------------------------------------------------------------------------- ABX
@dataclass
class ABXResult:
    error: float  # (1 - score) * 100, %
    score: float  # averaged P(d(a,x) < d(b,x)), ties 1/2
    n_items: int  # items in the item file
    n_items_used: int  # items that are in at least one cell
    n_items_empty: int  # items left out: no frame inside [onset, offset]
    n_cells: int
    n_triplets: int
    n_contexts: int  # contexts with at least one cell
    n_phone_pairs: int
    n_speakers: int
    pair_errors: Dict[str, float] = field(default_factory=dict)  # "A B" -> error % of that ordered pair

    def to_dict(self) -> dict:
        return asdict(self)


def _load_item_frames(features: Mapping[str, np.ndarray], items: Sequence[Item], frame_shift: float,
                      frame_offset: Optional[float], rule: str, missing: str):
    """Normalised frames of every item (None where the item has no frame or its file is missing)."""
    by_file: Dict[str, List[int]] = defaultdict(list)
    for k, item in enumerate(items):
        by_file[item.file].append(k)
    frames: List[Optional[Tuple[np.ndarray, np.ndarray]]] = [None] * len(items)
    absent = [f for f in by_file if f not in features]
    if absent and missing == "error":
        raise KeyError(f"{len(absent)} file(s) of the item file have no features, e.g. "
                       f"{', '.join(sorted(absent)[:5])} (missing='skip' leaves their items out)")
    dim = None
    for f, ks in by_file.items():
        if f in absent:
            continue
        feat = np.asarray(features[f])
        if feat.ndim != 2:
            raise ValueError(f"features of '{f}' must be 2-D (frames, dims), got shape {feat.shape}; "
                             "integer codes go through codes_to_features first")
        if dim is None:
            dim = feat.shape[1]
        elif feat.shape[1] != dim:
            raise ValueError(f"features of '{f}' have {feat.shape[1]} dims, others {dim}")
        if not np.isfinite(feat).all():
            raise ValueError(f"features of '{f}' contain NaN or infinite values")
        unit, zero = _unit_rows(feat)
        for k in ks:
            sl = frame_slice(len(feat), items[k].onset, items[k].offset, frame_shift, frame_offset, rule)
            if sl.stop > sl.start:
                frames[k] = (unit[sl], zero[sl])
    return frames


def _context_cells(ids: Sequence[int], items: Sequence[Item]):
    """Groups {(phone, speaker): item ids} of one context and its cells [(A, B, s, s')]."""
    groups: Dict[Tuple[str, str], List[int]] = defaultdict(list)
    for k in ids:
        groups[(items[k].phone, items[k].speaker)].append(k)
    phones_of: Dict[str, List[str]] = defaultdict(list)
    speakers_of: Dict[str, List[str]] = defaultdict(list)
    for phone, spk in sorted(groups):
        phones_of[spk].append(phone)
        speakers_of[phone].append(spk)
    cells = []
    for s, phones in phones_of.items():
        for a in phones:
            for b in phones:
                if a != b:
                    cells.extend((a, b, s, s2) for s2 in speakers_of[a] if s2 != s)
    return groups, cells


def _context_distances(used: List[int], items: Sequence[Item], frames, backend: str) -> np.ndarray:
    """DTW distance matrix D[i, j] = d(item used[i] as X, item used[j]) for items of different
    speakers (NaN for same-speaker pairs, which no triplet needs)."""
    n = len(used)
    spk = np.array([items[k].speaker for k in used])
    lens = np.array([len(frames[k][0]) for k in used], dtype=np.int64)
    offs = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    unit = np.concatenate([frames[k][0] for k in used])
    zero = np.concatenate([frames[k][1] for k in used])
    total = int(lens.sum())
    out = np.full((n, n), np.nan)
    # rows (X items) in blocks so that a block of frame distances stays under MAX_BLOCK entries
    start = 0
    while start < n:
        stop, rows = start, 0
        while stop < n and (stop == start or (rows + lens[stop]) * total <= MAX_BLOCK):
            rows += lens[stop]
            stop += 1
        r0 = offs[start]
        block = _angular(unit[r0:r0 + rows], zero[r0:r0 + rows], unit, zero)
        pi, pj = np.nonzero(spk[start:stop, None] != spk[None, :])
        if len(pi):
            if backend == "numba":
                vals = dtw_normalised_pairs(block, offs[start:stop] - r0, lens[start:stop], offs, lens, pi, pj)
            else:
                vals = np.array([dtw_normalised(block[offs[start + i] - r0:offs[start + i] - r0 + lens[start + i],
                                                      offs[j]:offs[j] + lens[j]]) for i, j in zip(pi, pj)])
            out[start + pi, pj] = vals
        start = stop
    return out


def abx_error(features: Mapping[str, np.ndarray], items: Sequence[Item], frame_shift: float,
              frame_offset: Optional[float] = None, rule: str = "center", missing: str = "error",
              backend: str = "auto") -> ABXResult:
    """ZeroSpeech 2019 ABX error (across speaker, within context) of `features` ({file: (T, D)}).

    frame_shift: seconds between frames; frame_offset: time of frame 0's centre (default
    frame_shift / 2); rule: "center" (ABXpy, default) or "libri-light" frame selection;
    missing: "error" or "skip" for item files without features; backend: DTW kernel (see `dtw_distance`).
    """
    if not frame_shift > 0:
        raise ValueError(f"frame_shift must be > 0, got {frame_shift}")
    if rule not in FRAME_RULES:
        raise ValueError(f"unknown frame rule {rule!r} (one of {', '.join(FRAME_RULES)})")
    if missing not in ("error", "skip"):
        raise ValueError(f"missing must be 'error' or 'skip', got {missing!r}")
    backend = _backend(backend)
    items = list(items)
    frames = _load_item_frames(features, items, frame_shift, frame_offset, rule, missing)
    n_empty = sum(1 for k, fr in enumerate(frames) if fr is None and items[k].file in features)

    by_context: Dict[Tuple[str, str], List[int]] = defaultdict(list)
    for k, item in enumerate(items):
        if frames[k] is not None:
            by_context[item.context].append(k)

    # level 1: (A, B, s, s') -> cell scores over contexts
    per_speakers: Dict[Tuple[str, str, str, str], List[float]] = defaultdict(list)
    n_cells = n_triplets = n_contexts = 0
    used_all = set()
    for ctx in sorted(by_context):
        groups, cells = _context_cells(by_context[ctx], items)
        if not cells:
            continue
        n_contexts += 1
        keys = {(a, s) for a, _, s, _ in cells} | {(b, s) for _, b, s, _ in cells} | {(a, s2) for a, _, _, s2 in cells}
        used = sorted(k for key in keys for k in groups[key])
        used_all.update(used)
        pos = {k: i for i, k in enumerate(used)}
        rows = {key: np.array([pos[k] for k in groups[key]]) for key in keys}  # group -> rows of `dist`
        dist = _context_distances(used, items, frames, backend)
        for a, b, s, s2 in cells:
            xi = rows[(a, s2)][:, None]
            dax = dist[xi, rows[(a, s)]][:, :, None]  # (nx, na, 1)
            dbx = dist[xi, rows[(b, s)]][:, None, :]  # (nx, 1, nb)
            n = dax.size * dbx.shape[2]
            score = (np.count_nonzero(dax < dbx) + 0.5 * np.count_nonzero(dax == dbx)) / n
            per_speakers[(a, b, s, s2)].append(float(score))
            n_cells += 1
            n_triplets += n
    if not per_speakers:
        raise ValueError("no ABX triplet: need a context in which one speaker has two different phones "
                         "and another speaker has one of them (check the item file and the frame shift)")
    # level 2: (A, B) -> mean over speaker pairs of the context means; level 3: mean over (A, B)
    per_pair: Dict[Tuple[str, str], List[float]] = defaultdict(list)
    for (a, b, s, s2), scores in per_speakers.items():
        per_pair[(a, b)].append(float(np.mean(scores)))
    pair_scores = {pair: float(np.mean(v)) for pair, v in per_pair.items()}
    score = float(np.mean(list(pair_scores.values())))
    return ABXResult(
        error=(1.0 - score) * 100.0,
        score=score,
        n_items=len(items),
        n_items_used=len(used_all),
        n_items_empty=n_empty,
        n_cells=n_cells,
        n_triplets=int(n_triplets),
        n_contexts=n_contexts,
        n_phone_pairs=len(pair_scores),
        n_speakers=len({spk for key in per_speakers for spk in key[2:]}),
        pair_errors={f"{a} {b}": (1.0 - v) * 100.0 for (a, b), v in sorted(pair_scores.items())},
    )
