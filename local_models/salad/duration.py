"""The duration stage of the MUSA two-stage pipeline (paper section 2: "unidirectional LSTMs to build the duration
model and the acoustic model"): phone-level linguistic vectors -> frames per phone.

Network (`DurationLSTM`), the MUSA pattern of the acoustic RNN: embedding h = ReLU(W x + b) of the phone's
question-file vector (real-valued dims z-normalised with train statistics), a unidirectional LSTM over the phones
of the utterance, dropout, and a linear output: the phone's normalised log-duration
z = (log(1 + frames) - mean) / std. Frames back: round(exp(z * std + mean) - 1), at least 1 (a phone the text
has must be heard; the labels' 0-frame phones are shorter than one 5 ms frame).

    save_duration_stats / load_duration_stats   dur_stats.npz (made by stage 3 with the acoustic statistics)
    frames_of(log1p_frames, speed)              predicted frames (int64, >= 1) at a speaking rate
    duration_scores(ref, hyp, phones)           per-utterance sums; pool_duration_scores -> RMSE / Pearson

The ESPnet2 task that trains it: duration_task.py.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np
import torch
from torch import nn

from .acoustic import SHIFT_MS, SILENCES


class DurationLSTM(nn.Module):
    """(B, N, idim) normalised phone vectors -> (B, N) normalised log-durations; causal over the phones."""

    def __init__(self, idim: int, emb: int = 128, hidden: int = 256, layers: int = 1, dropout: float = 0.5):
        super().__init__()
        self.emb = nn.Linear(idim, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, _ = self.lstm(torch.relu(self.emb(x)))  # unidirectional: padding at the end never reaches real phones
        return self.out(self.drop(h)).squeeze(-1)


def save_duration_stats(path, in_mean: np.ndarray, in_std: np.ndarray, dur_mean: float, dur_std: float) -> None:
    from local_models.common.datadir import atomic_open

    with atomic_open(path, "wb", encoding=None) as f:
        np.savez(f, in_mean=in_mean, in_std=in_std, dur_mean=np.float64(dur_mean), dur_std=np.float64(dur_std))


def load_duration_stats(path):
    """(in_mean (D,), in_std (D,), dur_mean, dur_std) written by `save_duration_stats`."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing duration statistics (made by stage 3, features)")
    with np.load(path) as z:
        return z["in_mean"], z["in_std"], float(z["dur_mean"]), float(z["dur_std"])


def frames_of(log1p_frames: torch.Tensor, speed: float = 1.0) -> torch.Tensor:
    """Frames per phone (int64, >= 1) from predicted log(1 + frames), durations divided by `speed`."""
    if not speed > 0:
        raise ValueError(f"speed must be positive, got {speed}")
    frames = torch.expm1(log1p_frames.float()) / speed
    return torch.clamp(torch.round(frames), min=1).long()


def duration_scores(ref: np.ndarray, hyp: np.ndarray, phones: Optional[Sequence[str]] = None) -> dict:
    """One utterance: labelled and predicted frames per phone (and the phone names, to tell silences)."""
    ref, hyp = np.asarray(ref, dtype=np.int64), np.asarray(hyp, dtype=np.int64)
    if ref.shape != hyp.shape or ref.ndim != 1:
        raise ValueError(f"labelled durations {ref.shape} and predicted {hyp.shape} differ in number of phones")
    speech = np.ones(len(ref), bool) if phones is None else ~np.isin(np.asarray(phones), SILENCES)
    if len(speech) != len(ref):
        raise ValueError(f"{len(phones)} phone names for {len(ref)} durations")
    return {"ref": ref, "hyp": hyp, "speech": speech}


def _rmse_and_r(ref: np.ndarray, hyp: np.ndarray):
    rmse = float(np.sqrt(np.mean((ref - hyp) ** 2.0))) if len(ref) else float("nan")
    ok = len(ref) > 1 and ref.std() > 0 and hyp.std() > 0
    return rmse, float(np.corrcoef(ref, hyp)[0, 1]) if ok else float("nan")


def pool_duration_scores(per_utt: Iterable[dict]) -> dict:
    """Over every phone of the set: RMSE of the durations in frames and in ms, Pearson correlation, both over all
    phones and over speech phones only (no sil / pau), and the predicted / labelled total length."""
    rs = list(per_utt)
    if not rs:
        raise ValueError("no utterances to score")
    ref = np.concatenate([r["ref"] for r in rs]).astype(np.float64)
    hyp = np.concatenate([r["hyp"] for r in rs]).astype(np.float64)
    speech = np.concatenate([r["speech"] for r in rs])
    rmse, r = _rmse_and_r(ref, hyp)
    rmse_s, r_s = _rmse_and_r(ref[speech], hyp[speech])
    return {"dur_rmse_frames": rmse, "dur_rmse_ms": rmse * SHIFT_MS, "dur_pearson": r,
            "dur_rmse_frames_speech": rmse_s, "dur_rmse_ms_speech": rmse_s * SHIFT_MS, "dur_pearson_speech": r_s,
            "length_ratio": float(hyp.sum() / max(ref.sum(), 1.0)), "phones": int(len(ref)), "utterances": len(rs)}


__all__ = ["DurationLSTM", "save_duration_stats", "load_duration_stats", "frames_of", "duration_scores",
           "pool_duration_scores", "SILENCES"]
