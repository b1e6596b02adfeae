"""The 43-dim acoustic frame of the SALAD recipe and its way back to a waveform (WORLD in place of Ahocoder).

The paper codes speech with Ahocoder (40 MFCCs, log-F0, voicing frequency) plus a U/V flag, every 80 samples
at 16 kHz. Ahocoder is licensed and unavailable, so the same 43 slots hold WORLD (pyworld) + pysptk parameters:

    [0:40]  mel-cepstrum c0..c39 of WORLD's CheapTrick envelope (pysptk.sp2mc, alpha = mcepalpha(sr))
    [40]    log-F0, linearly interpolated through unvoiced frames (the paper's smoothing of Ahocoder's -1e9)
    [41]    WORLD's coded band aperiodicity (pyworld.code_aperiodicity; 1 band at 16 kHz), the voicing-strength
            value that plays the role of Ahocoder's voicing frequency
    [42]    U/V flag (1 = voiced)

All dims are min-max normalised to [0, 1] with train statistics (`MinMax`). `synthesize` inverts a frame
sequence with WORLD: F0 = exp(log-F0) where U/V > 0.5, else 0.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from local_models.common.mcd import world_f0

ORDER = 39  # mel-cepstrum c0..c39
MC = slice(0, ORDER + 1)
LF0, BAP, UV = ORDER + 1, ORDER + 2, ORDER + 3
DIM = ORDER + 4  # 43
SHIFT_MS = 5.0  # 80 samples at 16 kHz
F0_FLOOR, F0_CEIL = 50.0, 600.0
SILENCES = ("sil", "pau")  # the front end's silence phones (frontend/phones.py PHONE_CLASSES["silence"])


@functools.lru_cache(maxsize=8)
def mcep_alpha(sr: int) -> float:
    """pysptk's all-pass constant for SR (0.41 at 16 kHz), once per rate: pysptk searches a grid on every call
    (about 0.3 s, more than the rest of a sentence's synthesis)."""
    import pysptk

    return float(pysptk.util.mcepalpha(sr))


@functools.lru_cache(maxsize=8)
def _warped_cosines(order: int, alpha: float, fft_size: int) -> np.ndarray:
    """(order + 1, fft_size // 2 + 1) cos(m * beta(w_k)): beta is the all-pass warped frequency of bin k."""
    w = np.linspace(0.0, np.pi, fft_size // 2 + 1)
    beta = w + 2.0 * np.arctan2(alpha * np.sin(w), 1.0 - alpha * np.cos(w))
    return np.cos(np.outer(np.arange(order + 1), beta))


def mc2sp(mc: np.ndarray, alpha: float, fft_size: int) -> np.ndarray:
    """(T, fft_size // 2 + 1) power spectrum of (T, order + 1) mel-cepstra: |H(w)|^2 = exp(2 sum_m c_m
    cos(m beta(w))), one matrix product for all frames. pysptk.mc2sp computes the same through freqt and an FFT,
    frame by frame in Python (half a second per sentence); they agree to ~1e-9 relative (tests)."""
    mc = np.asarray(mc, dtype=np.float64)
    return np.exp(2.0 * mc @ _warped_cosines(mc.shape[1] - 1, float(alpha), int(fft_size)))


def interpolate_lf0(f0: np.ndarray) -> np.ndarray:
    """log-F0 with unvoiced frames (f0 <= 0) filled by linear interpolation, ends held flat.

    An utterance without a voiced frame gets log(F0_FLOOR) everywhere (there is nothing to interpolate)."""
    f0 = np.asarray(f0, dtype=np.float64)
    voiced = f0 > 0
    if not voiced.any():
        return np.full(len(f0), np.log(F0_FLOOR))
    idx = np.arange(len(f0))
    return np.interp(idx, idx[voiced], np.log(f0[voiced]))


def analyse(wave: np.ndarray, sr: int, shift_ms: float = SHIFT_MS, f0_method: str = "harvest") -> np.ndarray:
    """(T, 43) float32 raw (unnormalised) acoustic frames of a mono float wave in [-1, 1]."""
    import pysptk
    import pyworld

    x = np.ascontiguousarray(np.asarray(wave, dtype=np.float64))
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"need a non-empty mono wave, got shape {x.shape}")
    if np.max(np.abs(x)) < 1e-4:
        raise ValueError("wave is silent (peak below -80 dBFS)")
    f0, t = world_f0(x, sr, shift_ms, f0_method, F0_FLOOR, F0_CEIL)
    fft_size = pyworld.get_cheaptrick_fft_size(sr)
    sp = pyworld.cheaptrick(x, f0, t, sr, fft_size=fft_size)
    ap = pyworld.d4c(x, f0, t, sr, fft_size=fft_size)
    mc = pysptk.sp2mc(sp, ORDER, mcep_alpha(sr))
    bap = pyworld.code_aperiodicity(ap, sr)[:, :1]  # one band below 16 kHz rates; keep the lowest elsewhere
    feats = np.concatenate([mc, interpolate_lf0(f0)[:, None], bap, (f0 > 0).astype(np.float64)[:, None]], axis=1)
    return feats.astype(np.float32)


def f0_hz(feats: np.ndarray) -> np.ndarray:
    """F0 in Hz of raw frames: exp(log-F0) where the U/V flag says voiced, else 0."""
    return np.where(feats[:, UV] > 0.5, np.exp(feats[:, LF0]), 0.0)


def synthesize(feats: np.ndarray, sr: int, shift_ms: float = SHIFT_MS) -> np.ndarray:
    """float64 wave from (T, 43) raw frames (WORLD synthesis)."""
    import pyworld

    feats = np.asarray(feats, dtype=np.float64)
    if feats.ndim != 2 or feats.shape[1] != DIM:
        raise ValueError(f"need (T, {DIM}) acoustic frames, got {feats.shape}")
    fft_size = pyworld.get_cheaptrick_fft_size(sr)
    sp = mc2sp(feats[:, MC], mcep_alpha(sr), fft_size)
    bap = np.ascontiguousarray(np.minimum(feats[:, BAP:BAP + 1], 0.0))  # aperiodicity is <= 0 dB
    n_bands = pyworld.get_num_aperiodicities(sr)
    ap = pyworld.decode_aperiodicity(np.ascontiguousarray(np.repeat(bap, n_bands, axis=1)), sr, fft_size)
    return pyworld.synthesize(np.ascontiguousarray(f0_hz(feats)), sp, ap, sr, shift_ms)


@dataclass
class MinMax:
    """Per-dim min-max scaling to [0, 1] (the paper's acoustic normalisation); constant dims map to 0."""

    lo: np.ndarray
    hi: np.ndarray

    @classmethod
    def fit(cls, frames: np.ndarray) -> "MinMax":
        return cls(frames.min(axis=0).astype(np.float64), frames.max(axis=0).astype(np.float64))

    @property
    def scale(self) -> np.ndarray:
        span = self.hi - self.lo
        return np.where(span > 0, span, 1.0)

    def normalise(self, x: np.ndarray) -> np.ndarray:
        return ((x - self.lo) / self.scale).astype(np.float32)

    def denormalise(self, y: np.ndarray) -> np.ndarray:
        return (np.asarray(y, dtype=np.float64) * self.scale + self.lo).astype(np.float32)


@dataclass
class ZNorm:
    """z-normalisation of the real-valued dims (`mask`) of linguistic frames; binary dims pass through."""

    mean: np.ndarray
    std: np.ndarray
    mask: np.ndarray

    def normalise(self, x: np.ndarray) -> np.ndarray:
        y = np.array(x, dtype=np.float32, copy=True)
        y[:, self.mask] = (y[:, self.mask] - self.mean[self.mask]) / self.std[self.mask]
        return y


class RunningStats:
    """Streaming min / max / mean / std over frames (one pass over the train set, any size)."""

    def __init__(self, dim: int):
        self.n = 0
        self.sum = np.zeros(dim)
        self.sq = np.zeros(dim)
        self.lo = np.full(dim, np.inf)
        self.hi = np.full(dim, -np.inf)

    def add(self, x: np.ndarray) -> None:
        x = np.asarray(x, dtype=np.float64)
        self.n += len(x)
        self.sum += x.sum(0)
        self.sq += (x * x).sum(0)
        self.lo = np.minimum(self.lo, x.min(0))
        self.hi = np.maximum(self.hi, x.max(0))

    def mean_std(self):
        if self.n == 0:
            raise ValueError("no frames seen")
        mean = self.sum / self.n
        std = np.sqrt(np.maximum(self.sq / self.n - mean * mean, 0.0))
        return mean, np.where(std > 1e-8, std, 1.0)


def save_stats(path, acoustic: MinMax, linguistic: ZNorm, max_dur_frames: int) -> None:
    from local_models.common.datadir import atomic_open

    with atomic_open(path, "wb", encoding=None) as f:
        np.savez(f, out_lo=acoustic.lo, out_hi=acoustic.hi, in_mean=linguistic.mean, in_std=linguistic.std,
                 in_mask=linguistic.mask, max_dur_frames=np.int64(max_dur_frames))


def load_stats(path):
    """(MinMax, ZNorm, max_dur_frames) written by `save_stats`."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing normalisation statistics (made by stage 3, features)")
    with np.load(path) as z:
        return (MinMax(z["out_lo"], z["out_hi"]), ZNorm(z["in_mean"], z["in_std"], z["in_mask"].astype(bool)),
                int(z["max_dur_frames"]))


def speech_frames(durations, phones) -> np.ndarray:
    """(T,) bool, True where the reference label's phone is speech: every phone's frames (DURATIONS, frames per phone
    as the linguistic frames assign them) marked by its name, False for the front end's silences (sil, pau). The
    paper's evaluation leaves those frames out of the MCD: a silent reference frame has no spectrum worth scoring."""
    durations = np.asarray(durations, dtype=np.int64)
    if len(durations) != len(phones):
        raise ValueError(f"{len(phones)} phone names for {len(durations)} durations")
    return np.repeat(~np.isin(np.asarray(phones, dtype=str), SILENCES), durations)


def _mcd_sum(ref_mc: np.ndarray, hyp_mc: np.ndarray) -> float:
    """Summed frame MCD (dB) of c0..c39 frames paired 1:1 (common/mcd.py mcd_aligned; 0 for no frames)."""
    from local_models.common.mcd import mcd_aligned

    return mcd_aligned(ref_mc, hyp_mc, include_c0=True)["mcd_sum_db"] if len(ref_mc) else 0.0


def scores(ref: np.ndarray, hyp: np.ndarray, speech: Optional[np.ndarray] = None) -> dict:
    """Sums for the paper's metrics over one utterance of raw frames (same length): MCD (c0..c39, no DTW) over
    all frames and, given SPEECH (`speech_frames`), over speech frames only (mcd_speech_sum_db, speech_frames);
    F0 squared error in Hz over reference-voiced frames (hyp F0 = exp(predicted log-F0), whatever its U/V), V/UV
    hits over all frames."""
    if ref.shape != hyp.shape:
        raise ValueError(f"reference {ref.shape} and prediction {hyp.shape} differ: durations are forced")
    r, h = ref[:, MC].astype(np.float64), hyp[:, MC].astype(np.float64)
    voiced = ref[:, UV] > 0.5
    f0_err = np.exp(ref[voiced, LF0].astype(np.float64)) - np.exp(hyp[voiced, LF0].astype(np.float64))
    hits = int(np.sum(voiced == (hyp[:, UV] > 0.5)))
    out = {"frames": len(ref), "mcd_sum_db": _mcd_sum(r, h), "voiced_frames": int(voiced.sum()),
           "f0_sq_sum_hz": float(np.sum(f0_err ** 2)), "vuv_hits": hits}
    if speech is not None:
        speech = np.asarray(speech, dtype=bool)
        if speech.shape != (len(ref),):
            raise ValueError(f"the labels' phones cover {speech.size} frames, the utterance has {len(ref)}: "
                             "rerun stage 3")
        out.update(speech_frames=int(speech.sum()), mcd_speech_sum_db=_mcd_sum(r[speech], h[speech]))
    return out


def pool_scores(per_utt) -> dict:
    """Corpus MCD (dB, frame-pooled; mcd_speech_db over speech frames when every utterance has them), F0 RMSE (Hz,
    pooled over reference-voiced frames), V/UV accuracy (%)."""
    rs = list(per_utt)
    if not rs:
        raise ValueError("no utterances to score")
    frames = sum(r["frames"] for r in rs)
    voiced = sum(r["voiced_frames"] for r in rs)
    out = {"mcd_db": sum(r["mcd_sum_db"] for r in rs) / frames,
           "f0_rmse_hz": float(np.sqrt(sum(r["f0_sq_sum_hz"] for r in rs) / voiced)) if voiced else float("nan"),
           "vuv_acc": 100.0 * sum(r["vuv_hits"] for r in rs) / frames,
           "utterances": len(rs), "frames": frames}
    if all("speech_frames" in r for r in rs):
        speech = sum(r["speech_frames"] for r in rs)
        out.update(mcd_speech_db=sum(r["mcd_speech_sum_db"] for r in rs) / speech if speech else float("nan"),
                   speech_frames=speech)
    return out
