"""The recipe's features, as one definition: what egs/zerospeech2019/unit1 (local_models/vqvae/stages.sh `extract`)
computes for its VQ-VAEs (MFCC 13 + deltas + delta-deltas, or 80 log-mel) and its codebook inverter's targets (linear
STFT magnitude, FFT 512), all at 16 kHz with 25 ms windows and a 10 ms hop. tests/test_vqvae_inference.py checks that
stages.sh still asks extract_feats for exactly these.

A packed VQ-VAE carries its settings as frontend.yaml; raw audio -> features goes through the same
`read_audio` (resampling) and `features.compute` as the recipe's extract_feats, so a packed model sees what it
was trained on. Normalisation: none to ship: the model normalises each utterance over its own frames (model.py).
"""
from __future__ import annotations

import re
from dataclasses import asdict, fields
from pathlib import Path
from typing import Mapping, Union

import yaml

from local_models.common.features import FeatConfig

# the encoder's stride: two stride-2 convolutions, one code per 4 input frames (model.py; here so that reading a
# packed model's settings does not import torch)
STRIDE = 4

SAMPLE_RATE, WIN_MS, HOP_MS = 16000, 25.0, 10.0
# stages.sh extract: feature name -> extract_feats options (--kind ...)
RECIPE_FEATURES = {
    "mfcc": dict(kind="mfcc", n_mfcc=13, deltas=2),
    "logmel": dict(kind="logmel", n_mels=80),
    "spec": dict(kind="stft", n_fft=512),
}
NORMALISATION = "per utterance: mean and variance over its own frames, inside the model (no global statistics)"


def feat_config(name: str) -> FeatConfig:
    if name not in RECIPE_FEATURES:
        raise ValueError(f"unknown recipe feature '{name}' ({', '.join(RECIPE_FEATURES)})")
    return FeatConfig(sample_rate=SAMPLE_RATE, win_ms=WIN_MS, hop_ms=HOP_MS, **RECIPE_FEATURES[name])


def feature_name_of(train_config: Mapping, where: Union[str, Path] = "config.yaml") -> str:
    """The recipe feature a VQ-VAE trained on, read from its training data path (dump/<feature>/train/...)."""
    for path, name, _ in train_config.get("train_data_path_and_name_and_type") or []:
        if name == "feats":
            m = re.search(r"(?:^|/)dump/([^/]+)/", str(path))
            if m and m.group(1) in RECIPE_FEATURES:
                return m.group(1)
            raise ValueError(f"{where}: features {path} are not the recipe's dump/<{'|'.join(RECIPE_FEATURES)}>/...")
    raise ValueError(f"{where}: no 'feats' training data: not a VQ-VAE trained by the recipe")


def frontend_dict(name: str) -> dict:
    """What frontend.yaml holds: the feature settings, the unit frame rate, the normalisation."""
    cfg = feat_config(name)
    return {"feature": name, "feat_conf": asdict(cfg), "stride": STRIDE,
            "frame_rate": frame_rate(cfg), "normalisation": NORMALISATION}


def frame_rate(cfg: FeatConfig) -> float:
    """Units per second: one per STRIDE input frames."""
    return 1000.0 / (cfg.hop_ms * STRIDE)


def read_frontend(path: Union[str, Path]) -> FeatConfig:
    d = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    conf = d.get("feat_conf")
    known = {f.name for f in fields(FeatConfig)}
    if not isinstance(conf, dict) or not set(conf) <= known:
        raise ValueError(f"{path}: not a front-end description (feat_conf with {', '.join(sorted(known))})")
    return FeatConfig(**conf)
