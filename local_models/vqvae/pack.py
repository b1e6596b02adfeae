"""Packed models of egs/zerospeech2019/unit1 (the recipe's last stage; common/pack.py does the archive):

- a VQ-VAE system exp/<system> -> speech to units: its config, checkpoint and frontend.yaml (the features it was
  trained on; normalisation is per utterance inside the model, so there are no statistics to ship);
- the codebook inverter exp/inverter_<system> -> units to speech: every target voice's inverter (config +
  checkpoint), the frozen VQ-VAE it was built on (its codebook turns units into embeddings) and resynth.yaml
  (Griffin-Lim settings of the recipe's run). It works alone: speech goes in through the VQ-VAE archive.

Both also load from the exp dir itself (`exp_files`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Mapping, Optional

import numpy as np
import yaml

from local_models.common.datadir import atomic_open, read_table
from local_models.common.features import compute
from local_models.common.pack import pack_model

from .frontend import RECIPE_FEATURES, SAMPLE_RATE, feat_config, feature_name_of, frame_rate, frontend_dict

RECIPE = "zerospeech2019/unit1"
INVERTER_PREFIX = "inverter_"
DEFAULT_CKPT = "valid.loss.best.pth"
BITRATE_DEF = "ZeroSpeech 2019: (symbols / duration) x entropy of the symbols (bits/s), repeats not collapsed"


def read_yaml(path: Path) -> dict:
    return yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}


def resynth_settings(griffin_lim_iters: int = 60) -> dict:
    """How the recipe turns the inverter's linear magnitudes into a wave (vqvae_resynth's defaults)."""
    spec = feat_config("spec")
    return {"method": "griffin-lim (torchaudio fast Griffin-Lim, seed 0)", "sample_rate": spec.sample_rate, "n_fft": spec.n_fft,
            "win_ms": spec.win_ms, "hop_ms": spec.hop_ms, "griffin_lim_iters": int(griffin_lim_iters)}


def inverter_voices(exp_dir: Path, ckpt: str = DEFAULT_CKPT) -> List[str]:
    """Target voices of an inverter exp dir: its <voice>/ dirs with a config.yaml and the checkpoint."""
    return sorted(d.name for d in Path(exp_dir).iterdir()
                  if d.is_dir() and (d / "config.yaml").is_file() and (d / ckpt).is_file())


def is_inverter_dir(exp_dir: Path) -> bool:
    return not (Path(exp_dir) / "config.yaml").is_file() and Path(exp_dir).name.startswith(INVERTER_PREFIX)


def _recipe_path(path: str, recipe_dir: Path) -> Path:
    return Path(path) if Path(path).is_absolute() else recipe_dir / path


def inverter_files(exp_dir: Path, ckpt: str = DEFAULT_CKPT) -> Dict[str, Path]:
    """{config.<voice>, model_file.<voice>, vqvae_config, vqvae_model} of exp/inverter_<system>."""
    exp_dir = Path(exp_dir)
    voices = inverter_voices(exp_dir, ckpt)
    if not voices:
        raise FileNotFoundError(f"{exp_dir}: no trained target voice (<voice>/config.yaml + {ckpt}): run stage 7")
    files, vq = {}, set()
    for v in voices:
        files[f"config.{v}"], files[f"model_file.{v}"] = exp_dir / v / "config.yaml", exp_dir / v / ckpt
        conf = read_yaml(files[f"config.{v}"]).get("model_conf") or {}
        if "vqvae_config" not in conf or "vqvae_model" not in conf:
            raise ValueError(f"{files[f'config.{v}']}: not a codebook inverter config (no vqvae_config / vqvae_model)")
        vq.add((conf["vqvae_config"], conf["vqvae_model"]))
    if len(vq) > 1:
        raise ValueError(f"{exp_dir}: the voices were built on different VQ-VAEs ({sorted(vq)})")
    conf, model = vq.pop()
    recipe_dir = exp_dir.parent.parent  # <recipe>/exp/inverter_<system>: its paths are recipe-relative
    files["vqvae_config"], files["vqvae_model"] = _recipe_path(conf, recipe_dir), _recipe_path(model, recipe_dir)
    return files


def exp_files(exp_dir, ckpt: str = DEFAULT_CKPT) -> Dict[str, Path]:
    """What inference needs from a recipe exp dir: exp/<system> (config, model_file) or exp/inverter_<system>."""
    exp_dir = Path(exp_dir)
    if is_inverter_dir(exp_dir):
        return inverter_files(exp_dir, ckpt)
    return {"config": exp_dir / "config.yaml", "model_file": exp_dir / ckpt}


# ----------------------------------------------------------------------------- model cards
def _results(recipe_dir: Path) -> dict:
    path = recipe_dir / "exp" / "results.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def training_size(config: Mapping, recipe_dir: Path, utt2dur: Path) -> dict:
    """Utterances and hours the model trained on: its train shape file, durations from UTT2DUR."""
    shapes = config.get("train_shape_file") or []
    if not shapes or not _recipe_path(shapes[0], recipe_dir).is_file():
        return {}
    utts = list(read_table(_recipe_path(shapes[0], recipe_dir)))
    out = {"utterances": len(utts)}
    durs = read_table(utt2dur) if utt2dur.is_file() else {}
    if utts and all(u in durs for u in utts):
        out["hours"] = round(sum(float(durs[u]) for u in utts) / 3600, 4)
    return out


def epochs_trained(exp_dir: Path, config: Mapping, ckpt: str) -> dict:
    """Epochs run (ESPnet's checkpoint.pth), the max_epoch asked for, and which epoch the packed checkpoint is."""
    out = {"max_epoch": config.get("max_epoch")}
    state = exp_dir / "checkpoint.pth"
    if state.is_file():
        import torch

        reporter = torch.load(state, map_location="cpu", weights_only=False).get("reporter", {})
        if "epoch" in reporter:
            out["epochs"] = int(reporter["epoch"])
    best = exp_dir / ckpt
    if best.is_symlink():  # ESPnet links valid.loss.best.pth to <N>epoch.pth
        out["checkpoint_epoch"] = Path(best.resolve()).name
    return out


def vqvae_card(recipe_dir: Path, system: str, config: Mapping, feature: str, ckpt: str) -> dict:
    results = _results(recipe_dir)
    conf = config.get("model_conf") or {}
    cfg = feat_config(feature)
    inverter = recipe_dir / "exp" / f"{INVERTER_PREFIX}{system}"
    return {
        "kind": "encoder", "task": "speech -> discrete units (speech-to-units)", "recipe": RECIPE,
        "corpus": results.get("corpus", "unknown"),
        "encoder_type": conf.get("encoder_type"), "codebook_size": conf.get("num_codes"),
        "code_dim": conf.get("code_dim"), "smooth_weight": conf.get("smooth_weight", 0.0),
        "jitter_p": conf.get("jitter_p", 0.0), "seed": config.get("seed"),
        "features": {"name": feature, **RECIPE_FEATURES[feature], "win_ms": cfg.win_ms, "hop_ms": cfg.hop_ms},
        "sample_rate": SAMPLE_RATE, "frame_rate": frame_rate(cfg),
        "normalisation": "per utterance (mean / variance over its frames, inside the model)",
        "bitrate_definition": BITRATE_DEF,
        "training": {**training_size(config, recipe_dir, recipe_dir / "dump" / feature / "train" / "utt2dur"),
                     "speakers": conf.get("num_speakers"),
                     **epochs_trained(recipe_dir / "exp" / system, config, ckpt), "checkpoint": ckpt},
        "metrics": results.get("systems", {}).get(system, {}),
        "units_to_speech": (f"exp/{inverter.name}/packed/model.tar.gz" if inverter.is_dir() else
                            "none trained over this system's units"),
    }


def pack_vqvae(recipe_dir: Path, system: str, out: Path, ckpt: str) -> Path:
    exp = recipe_dir / "exp" / system
    files = exp_files(exp, ckpt)
    for f in files.values():
        if not f.is_file():
            raise FileNotFoundError(f"{f}: missing (train {system} first: stage 4)")
    config = read_yaml(files["config"])
    feature = feature_name_of(config, files["config"])
    dim = compute(np.zeros(SAMPLE_RATE // 10, dtype=np.float32), feat_config(feature)).shape[1]
    if (config.get("model_conf") or {}).get("idim") != dim:
        raise ValueError(f"{files['config']}: idim {config['model_conf'].get('idim')} but the recipe's {feature} "
                         f"features have {dim} dimensions")
    frontend = exp / "packed" / "frontend.yaml"
    frontend.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(frontend) as f:
        yaml.safe_dump(frontend_dict(feature), f, sort_keys=False)
    return pack_model(out, paper="vqvae", system=system, recipe_dir=recipe_dir,
                      files={"model_file": files["model_file"]},
                      yaml_files={"config": files["config"], "frontend": frontend},
                      card=vqvae_card(recipe_dir, system, config, feature, ckpt))


def griffin_lim_iters_used(exp: Path, default: int = 60) -> int:
    """The recipe's --griffin-lim-iters of its last resynthesis (resynth_<set>/<voice>/resynth.json)."""
    runs = sorted(exp.glob("resynth_*/*/resynth.json"), key=lambda p: p.stat().st_mtime)
    return int(json.loads(runs[-1].read_text()).get("griffin_lim_iters", default)) if runs else default


def inverter_card(recipe_dir: Path, system: str, files: Mapping[str, Path], resynth: dict, ckpt: str) -> dict:
    results = _results(recipe_dir)
    exp = recipe_dir / "exp" / system
    vq_conf = read_yaml(files["vqvae_config"])
    feature = feature_name_of(vq_conf, files["vqvae_config"])
    voices = sorted(k.split(".", 1)[1] for k in files if k.startswith("config."))
    training = {}
    for v in voices:
        config = read_yaml(files[f"config.{v}"])
        training[v] = {**training_size(config, recipe_dir, recipe_dir / "dump" / feature / "voice" / "utt2dur"),
                       **epochs_trained(exp / v, config, ckpt)}
    source = files["vqvae_config"].parent.name
    return {
        "kind": "inverter", "task": "discrete units -> speech in a target voice (units-to-speech)", "recipe": RECIPE,
        "corpus": results.get("corpus", "unknown"), "voices": voices, "default_voice": voices[0],
        "units_from": f"{source} (its codebook: encode speech with exp/{source}/packed/model.tar.gz)",
        "codebook_size": (vq_conf.get("model_conf") or {}).get("num_codes"),
        "frame_rate": frame_rate(feat_config(feature)),
        "sample_rate": resynth["sample_rate"], "resynthesis": resynth,
        "training": {"per_voice": training, "checkpoint": ckpt},
        "metrics": results.get("systems", {}).get("inverter", {}),
    }


def pack_inverter(recipe_dir: Path, system: str, out: Path, ckpt: str) -> Path:
    exp = recipe_dir / "exp" / system
    files = inverter_files(exp, ckpt)
    for f in files.values():
        if not f.is_file():
            raise FileNotFoundError(f"{f}: missing (the inverter's VQ-VAE must stay where stage 7 found it)")
    resynth = resynth_settings(griffin_lim_iters_used(exp))
    n_bins = resynth["n_fft"] // 2 + 1
    for key in (k for k in files if k.startswith("config.")):
        got = (read_yaml(files[key]).get("model_conf") or {}).get("n_bins")
        if got != n_bins:
            raise ValueError(f"{files[key]}: n_bins {got}, but the recipe's spectra (FFT {resynth['n_fft']}) have {n_bins}")
    path = exp / "packed" / "resynth.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path) as f:
        yaml.safe_dump(resynth, f, sort_keys=False)
    yamls = {k: v for k, v in files.items() if k.startswith("config.") or k == "vqvae_config"}
    return pack_model(out, paper="vqvae", system=system, recipe_dir=recipe_dir,
                      files={k: v for k, v in files.items() if k not in yamls},
                      yaml_files={**yamls, "resynth": path}, card=inverter_card(recipe_dir, system, files, resynth, ckpt))


def pack_system(recipe_dir, system: str, out, inference_model: str = DEFAULT_CKPT) -> Path:
    """Pack exp/SYSTEM (a VQ-VAE, or inverter_<system>: the codebook inverter of all target voices) into OUT."""
    recipe_dir = Path(recipe_dir)
    exp = recipe_dir / "exp" / system
    if not exp.is_dir():
        raise FileNotFoundError(f"{exp}: no such system (train it first)")
    pack = pack_inverter if is_inverter_dir(exp) else pack_vqvae
    return pack(recipe_dir, system, Path(out), inference_model)


def resynth_of(files: Mapping[str, Path], exp_dir: Optional[Path]) -> dict:
    """The Griffin-Lim settings of a loaded inverter: its resynth.yaml, else (an exp dir) the recipe's last run."""
    if "resynth" in files:
        return read_yaml(files["resynth"])
    return resynth_settings(griffin_lim_iters_used(exp_dir) if exp_dir is not None else 60)
