"""Frame-level speech detectors sharing one interface: `scores(wave, sr)` -> one score per 10 ms frame
(higher = more speech-like), and a threshold that turns scores into decisions.

Reference detectors: an energy threshold (the classic baseline), `webrtcvad` (GMM VAD of WebRTC) and
`silero-vad` (a pretrained neural VAD shipped inside its PyPI package: runs offline). The systems' names are in
systems.py; their detector classes (`get_detector`, also the statistical and neural ones built on `Detector`) in
registry.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List

import numpy as np

SHIFT = 0.01  # every detector reports 10 ms frames (the paper's frame shift)


def n_frames(num_samples: int, sr: int) -> int:
    return int(np.ceil(num_samples / (SHIFT * sr)))


def hold_to_frames(values: np.ndarray, hop_s: float, total: int) -> np.ndarray:
    """Map values on a coarser hop (e.g. silero's 32 ms chunks) onto 10 ms frames by frame centre."""
    centres = (np.arange(total) + 0.5) * SHIFT
    idx = np.minimum((centres / hop_s).astype(int), len(values) - 1)
    return values[idx] if len(values) else np.zeros(total)


def num_segments(T: int, L: int, S: int) -> int:
    """Segments of length L, shift S needed to cover T frames (the last one may run past T: padded)."""
    return 1 + max(0, int(np.ceil((T - L) / S)))


def segment_frame_scores(y_seg, L: int, S: int, T: int):
    """The segment RNN's frame scores (nets.SegRNNSAD, neural.NumpyNet) from its segment scores: out[..., t] = max
    over segments i with i*S <= t < i*S+L of y[..., i].

    Works on numpy arrays and torch tensors (last axis = segments). Frames covered by no segment
    (only possible when the segments do not reach T) get -inf."""
    M = y_seg.shape[-1]
    is_torch = not isinstance(y_seg, np.ndarray)  # a torch.Tensor (or a subclass): no torch import for numpy
    if is_torch:
        import torch

        out = torch.full((*y_seg.shape[:-1], T), float("-inf"), dtype=y_seg.dtype, device=y_seg.device)
        maximum = torch.maximum
    else:
        out = np.full((*y_seg.shape[:-1], T), -np.inf, dtype=np.result_type(y_seg.dtype, np.float32))
        maximum = np.maximum
    starts = np.arange(M) * S
    for k in range(L):  # for a fixed offset k the target frames i*S + k are distinct: vectorised
        idx = starts + k
        ok = idx < T
        if not ok.any():
            continue
        sel, tgt = np.flatnonzero(ok), idx[ok]
        if is_torch:
            sel, tgt = torch.as_tensor(sel, device=y_seg.device), torch.as_tensor(tgt, device=y_seg.device)
        out[..., tgt] = maximum(out[..., tgt], y_seg[..., sel])
    return out


@dataclass
class Detector:
    """Base: subclasses set `name`, the default threshold and the thresholds swept on dev."""

    threshold: float = 0.5
    name = "base"
    sweep: List[float] = field(default_factory=list)

    def scores(self, wave: np.ndarray, sr: int) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def decide(self, scores: np.ndarray, threshold: float | None = None) -> np.ndarray:
        return scores > (self.threshold if threshold is None else threshold)


@dataclass
class EnergyDetector(Detector):
    """Frame log-energy (25 ms window) in dB above the recording's 10th-percentile floor."""

    threshold: float = 10.0
    name = "energy"
    sweep: List[float] = field(default_factory=lambda: [float(x) for x in np.arange(2, 31, 1.0)])

    def scores(self, wave, sr):
        hop, win = int(SHIFT * sr), int(0.025 * sr)
        total = n_frames(len(wave), sr)
        padded = np.pad(wave.astype(np.float64), (0, total * hop + win))
        frames = np.lib.stride_tricks.sliding_window_view(padded, win)[::hop][:total]
        db = 10 * np.log10(np.mean(frames**2, axis=1) + 1e-10)
        return (db - np.percentile(db, 10)).astype(np.float32)


@dataclass
class WebrtcDetector(Detector):
    """webrtcvad on 10 ms frames; the 'threshold' is the aggressiveness mode 0-3 (chosen on dev)."""

    threshold: float = 3
    name = "webrtcvad"
    sweep: List[float] = field(default_factory=lambda: [0, 1, 2, 3])

    def scores(self, wave, sr):
        # scores = the highest mode that still calls the frame speech (+1), so one pass gives all modes
        import webrtcvad

        if sr not in (8000, 16000, 32000, 48000):
            raise ValueError(f"webrtcvad needs 8/16/32/48 kHz audio, got {sr} Hz")
        hop = int(SHIFT * sr)
        total = n_frames(len(wave), sr)
        pcm = (np.clip(np.pad(wave, (0, total * hop - len(wave))), -1, 1) * 32767).astype("<i2").tobytes()
        out = np.zeros(total, dtype=np.float32)
        for mode in range(4):
            vad = webrtcvad.Vad(mode)
            for t in range(total):
                if vad.is_speech(pcm[2 * t * hop: 2 * (t + 1) * hop], sr):
                    out[t] = mode + 1
        return out

    def decide(self, scores, threshold=None):
        mode = self.threshold if threshold is None else threshold
        return scores >= mode + 1


@dataclass
class SileroDetector(Detector):
    """silero-vad speech probability per 32 ms chunk (256 samples at 8 kHz), held on 10 ms frames."""

    threshold: float = 0.5
    name = "silero_vad"
    sweep: List[float] = field(default_factory=lambda: [0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.04] + [round(x, 2) for x in np.arange(0.05, 0.96, 0.05)])
    _model: object = field(default=None, repr=False)

    def scores(self, wave, sr):
        import torch
        from silero_vad import load_silero_vad

        if sr not in (8000, 16000):
            raise ValueError(f"silero-vad needs 8 or 16 kHz audio, got {sr} Hz")
        if self._model is None:
            self._model = load_silero_vad()  # from the package's data dir: no download
        model = self._model
        model.reset_states()
        chunk = 256 if sr == 8000 else 512
        with torch.inference_mode():
            probs = model.audio_forward(torch.from_numpy(np.ascontiguousarray(wave, dtype=np.float32)), sr)
        return hold_to_frames(probs[0].detach().float().cpu().numpy(), chunk / sr,
                              n_frames(len(wave), sr)).astype(np.float32)
