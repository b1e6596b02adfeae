"""Griffin-Lim phase reconstruction for the vocoders that have no trained network (JDI-T's default, the VQ-VAE
codebook inverter): torchaudio's fast Griffin-Lim (momentum 0.99, Perraudin et al. 2013; librosa's default too),
seeded, so the same spectrogram always gives the same wave.

torchaudio rather than librosa: the same algorithm, but librosa rebuilds the window and re-checks its arguments at
each of the 2 x n_iter transforms, which made Griffin-Lim most of the text-to-speech time on short sentences
(benchmarks/inference_speed.py).
"""
from __future__ import annotations

import numpy as np

MOMENTUM = 0.99


def griffin_lim(mag: np.ndarray, n_fft: int, hop_length: int, win_length: int, n_iter: int,
                seed: int = 0) -> np.ndarray:
    """float32 wave of MAG, a (frames, n_fft // 2 + 1) linear magnitude spectrogram of centred Hann-window frames:
    (frames - 1) * hop_length samples (one frame: n_fft). The initial phases are drawn from SEED (torch's global generator is left as
    it was)."""
    import torch
    import torchaudio.functional as F

    mag = np.asarray(mag, dtype=np.float32)
    if mag.ndim != 2 or mag.shape[1] != n_fft // 2 + 1:
        raise ValueError(f"griffin_lim: magnitude of shape {mag.shape}, expected (frames, {n_fft // 2 + 1})")
    if len(mag) < 1:
        raise ValueError("griffin_lim: no frames")
    if n_iter < 1:
        raise ValueError(f"griffin_lim: n_iter {n_iter}, must be >= 1")
    frames = len(mag)
    # torch.stft's reflect padding needs more than n_fft / 2 samples: a mel of a few frames gets silent frames after
    # it, cut off again below (librosa padded with zeros the same way)
    short = max(0, -(-n_fft // hop_length) + 2 - frames)
    if short:
        mag = np.concatenate([mag, np.zeros((short, mag.shape[1]), dtype=np.float32)])
    window = torch.hann_window(win_length)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        wave = F.griffinlim(torch.from_numpy(mag.T.copy()), window, n_fft, hop_length, win_length, 1.0, n_iter,
                            MOMENTUM, None, True)
    # one frame: one window of samples (as ESPnet's uncentred single frame), not (1 - 1) * hop = none
    return wave.numpy()[: (frames - 1) * hop_length if frames > 1 else n_fft].astype(np.float32, copy=False)
