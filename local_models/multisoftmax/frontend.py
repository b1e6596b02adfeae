"""The recipe's front end on a user's raw audio, exactly as stage 2 computes it: conf/fbank.conf holds the
`extract_feats` options of stage 2 (80-dim log-mel, 25 ms / 10 ms, 16 kHz); `read_feat_conf` reads them into the
same FeatConfig, and `audio_features` reads / resamples the audio the way stage 2 reads a wav.scp entry (soundfile,
channels averaged, common.audio.resample) and computes common.features.compute on it. Normalisation and the
8-frame stacking are the model's (TransducerModel.normalise, units.stack_frames)."""
from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import numpy as np

from local_models.common.audio import AudioInput, read_audio
from local_models.common.features import FeatConfig, compute


class FeatConfError(ValueError):
    """A feature config the front end cannot read (the message names the file)."""


def _parser() -> argparse.ArgumentParser:
    """extract_feats' feature options (local_models/bin/extract_feats.py; same names and defaults)."""
    p = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    p.add_argument("--kind", default="logmel", choices=["logmel", "mfcc", "stft", "fbank"])
    p.add_argument("--sample-rate", type=int, default=16000)
    p.add_argument("--win-ms", type=float, default=25.0)
    p.add_argument("--hop-ms", type=float, default=10.0)
    p.add_argument("--win-length", type=int, default=0)
    p.add_argument("--hop-length", type=int, default=0)
    p.add_argument("--n-fft", type=int, default=0)
    p.add_argument("--n-mels", type=int, default=80)
    p.add_argument("--fmin", type=float, default=0.0)
    p.add_argument("--fmax", type=float, default=0.0)
    p.add_argument("--n-mfcc", type=int, default=13)
    p.add_argument("--deltas", type=int, default=0, choices=[0, 1, 2])
    return p


def read_feat_conf(path) -> FeatConfig:
    """conf/fbank.conf (one or more `--option value` per line, `#` comments) -> the FeatConfig stage 2 used."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise FeatConfError(f"{path}: cannot read the feature config ({e.strerror or e})") from None
    tokens = []
    for line in lines:
        if not line.lstrip().startswith("#"):  # what run.sh's `grep -v '^#'` passes on
            tokens += shlex.split(line)
    try:
        args, rest = _parser().parse_known_args(tokens)
    except (argparse.ArgumentError, ValueError) as e:
        raise FeatConfError(f"{path}: {e}") from None
    if rest:
        raise FeatConfError(f"{path}: options the front end does not know: {' '.join(rest)}")
    # window / hop in samples become ms that round back to those samples (as extract_feats does)
    win_ms = args.win_length * 1000 / args.sample_rate if args.win_length else args.win_ms
    hop_ms = args.hop_length * 1000 / args.sample_rate if args.hop_length else args.hop_ms
    return FeatConfig(args.kind, args.sample_rate, win_ms, hop_ms, args.n_fft, args.n_mels, args.n_mfcc,
                      fmin=args.fmin, fmax=args.fmax, deltas=args.deltas)


def audio_features(audio: AudioInput, cfg: FeatConfig, sample_rate=None) -> np.ndarray:
    """(frames, dims) float32 features of AUDIO: a file path, or an array with SAMPLE_RATE, or an (array, rate)
    pair; any rate (resampled to the config's). AudioError names the input when it is unusable."""
    if isinstance(audio, tuple):
        if len(audio) != 2 or (sample_rate is not None and sample_rate != audio[1]):
            raise ValueError("audio as a tuple is (array, sample_rate), with no other sample_rate given")
    elif not isinstance(audio, (str, Path)):
        if sample_rate is None:
            raise ValueError("an audio array needs its sample_rate (or pass (array, rate) or a file path)")
        audio = (audio, sample_rate)
    wave, _ = read_audio(audio, cfg.sample_rate)
    return compute(wave, cfg)


def feature_dims(cfg: FeatConfig) -> int:
    """Dimensions of a frame of `compute(wave, cfg)`."""
    static = {"logmel": cfg.n_mels, "fbank": cfg.n_mels, "mfcc": cfg.n_mfcc, "stft": cfg.fft_size // 2 + 1}[cfg.kind]
    return static * (1 + cfg.deltas)


def feature_summary(cfg: FeatConfig) -> dict:
    """What a model card says about the front end."""
    return {"kind": cfg.kind, "dims": feature_dims(cfg), "sample_rate": cfg.sample_rate, "win_ms": cfg.win_ms,
            "hop_ms": cfg.hop_ms}


__all__ = ["read_feat_conf", "audio_features", "feature_dims", "feature_summary", "FeatConfError"]
