"""Frame-level features (librosa) and kaldiio ark/scp shards to store them."""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator

import numpy as np

from .datadir import atomic_open


@dataclass
class FeatConfig:
    kind: str = "logmel"  # logmel | mfcc | stft | fbank (ESPnet2 TTS fbank, see _fbank)
    sample_rate: int = 16000
    win_ms: float = 25.0
    hop_ms: float = 10.0
    n_fft: int = 0  # 0: next power of two >= window
    n_mels: int = 80
    n_mfcc: int = 13
    fmin: float = 0.0
    fmax: float = 0.0  # 0: Nyquist
    deltas: int = 0  # append this many orders of delta features (2: + delta + delta-delta, e.g. MFCC 39)

    @property
    def win_length(self) -> int:
        return int(round(self.win_ms * self.sample_rate / 1000))

    @property
    def hop_length(self) -> int:
        return int(round(self.hop_ms * self.sample_rate / 1000))

    @property
    def fft_size(self) -> int:
        return self.n_fft or 1 << (self.win_length - 1).bit_length()


def compute(wave: np.ndarray, cfg: FeatConfig) -> np.ndarray:
    """(frames, dims) float32 features; frames = 1 + len(wave) // hop (centred frames)."""
    feats = _static(wave, cfg)
    if cfg.deltas:
        import librosa

        # 'nearest' edges: defined for utterances shorter than the 9-frame delta window too
        orders = [librosa.feature.delta(feats, order=k, axis=0, mode="nearest") for k in range(1, cfg.deltas + 1)]
        feats = np.concatenate([feats, *orders], axis=1).astype(np.float32)
    return feats


def _fbank(wave: np.ndarray, cfg: FeatConfig) -> np.ndarray:
    """ESPnet2's TTS feature (espnet2/tts/feats_extract/log_mel_fbank.py, what `feats_extract: fbank`
    computes and Parallel WaveGAN recipes use): log10 of the mel filterbank applied to the STFT
    *magnitude* (amplitude and mel clamped at 1e-10), centred frames with reflect padding, fmin/fmax
    as configured (ESPnet's TTS defaults: 80 / 7600 Hz). Frames = 1 + len(wave) // hop."""
    import librosa

    stft = librosa.stft(wave, n_fft=cfg.fft_size, hop_length=cfg.hop_length, win_length=cfg.win_length,
                        window="hann", center=True, pad_mode="reflect")
    amp = np.sqrt(np.maximum(stft.real ** 2 + stft.imag ** 2, 1e-10))
    melmat = librosa.filters.mel(sr=cfg.sample_rate, n_fft=cfg.fft_size, n_mels=cfg.n_mels, fmin=cfg.fmin,
                                 fmax=cfg.fmax or cfg.sample_rate / 2)
    return np.log10(np.maximum(melmat @ amp, 1e-10)).T.astype(np.float32)


def _static(wave: np.ndarray, cfg: FeatConfig) -> np.ndarray:
    import librosa

    if cfg.kind == "fbank":
        return _fbank(wave, cfg)
    spec = np.abs(
        librosa.stft(wave, n_fft=cfg.fft_size, hop_length=cfg.hop_length, win_length=cfg.win_length, window="hann")
    )
    if cfg.kind == "stft":
        return spec.T.astype(np.float32)
    mel = librosa.feature.melspectrogram(
        S=spec**2, sr=cfg.sample_rate, n_mels=cfg.n_mels, fmin=cfg.fmin, fmax=cfg.fmax or None
    )
    logmel = np.log(np.maximum(mel, 1e-10))
    if cfg.kind == "logmel":
        return logmel.T.astype(np.float32)
    if cfg.kind == "mfcc":
        return librosa.feature.mfcc(S=logmel, n_mfcc=cfg.n_mfcc).T.astype(np.float32)
    raise ValueError(f"unknown feature kind '{cfg.kind}' (logmel, mfcc, stft, fbank)")


@contextlib.contextmanager
def shard_writer(prefix) -> Iterator[Dict[str, np.ndarray]]:
    """Collect {utt: matrix}; on success write `<prefix>.ark` + `<prefix>.scp` atomically.

    The ark is written under a temp name and renamed, and the scp (which names the final ark path)
    is written last, so a crash never leaves an scp pointing into a partial ark.
    """
    import kaldiio

    prefix = Path(prefix).absolute()
    prefix.parent.mkdir(parents=True, exist_ok=True)
    items: Dict[str, np.ndarray] = {}
    yield items
    ark, tmp_ark = f"{prefix}.ark", f"{prefix}.ark.tmp"
    with open(tmp_ark, "wb") as f:
        offsets = {}
        for utt in sorted(items, key=lambda u: u.encode()):
            f.write((utt + " ").encode())
            offsets[utt] = f.tell()
            kaldiio.save_mat(f, items[utt])
    os.replace(tmp_ark, ark)
    with atomic_open(f"{prefix}.scp") as f:
        f.writelines(f"{utt} {ark}:{off}\n" for utt, off in offsets.items())


class ArkStream:
    """Write matrices one at a time to `<prefix>.ark` + `<prefix>.scp` without holding a corpus in memory.

    Same atomicity as `shard_writer`: the ark grows under a temp name and is renamed on `close()`, and the scp
    is written last; an exception inside `with ArkStream(...)` leaves neither file behind."""

    def __init__(self, prefix):
        self.prefix = Path(prefix).absolute()
        self.prefix.parent.mkdir(parents=True, exist_ok=True)
        self.ark, self.tmp = f"{self.prefix}.ark", f"{self.prefix}.ark.tmp"
        self.offsets: Dict[str, int] = {}
        self.f = open(self.tmp, "wb")

    def write(self, utt: str, mat: np.ndarray) -> None:
        import kaldiio

        if utt in self.offsets:
            raise ValueError(f"{self.ark}: key '{utt}' written twice")
        self.f.write((utt + " ").encode())
        self.offsets[utt] = self.f.tell()
        kaldiio.save_mat(self.f, np.asarray(mat))

    def close(self) -> None:
        self.f.close()
        os.replace(self.tmp, self.ark)
        with atomic_open(f"{self.prefix}.scp") as f:
            f.writelines(f"{utt} {self.ark}:{off}\n" for utt, off in sorted(self.offsets.items(),
                                                                           key=lambda kv: kv[0].encode()))

    def abort(self) -> None:
        self.f.close()
        if os.path.exists(self.tmp):
            os.remove(self.tmp)

    def __enter__(self) -> "ArkStream":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.abort() if exc_type is not None else self.close()
