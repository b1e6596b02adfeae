"""Packed SALAD / MUSA-RNN text-to-speech models (run.sh's last stage; common/pack.py): one archive per trained
acoustic system exp/<spk>/<system>, holding everything `inference.Text2Speech` needs to speak raw Spanish text:

    config, model_file                     the acoustic model (its normalisation lives in the checkpoint)
    duration_config, duration_model_file   the speaker's duration model exp/<spk>/duration (stage 1 of MUSA)
    questions                              the front end's question file (the front end itself is code:
                                           local_models.salad.frontend, rule-based, no lexicon file)
    stats_file, duration_stats             normalisation statistics (stats.npz also holds the duration
                                           normaliser of the linguistic frames, max_dur_frames)
    feats                                  WORLD / feature settings (feats.yaml, checked on loading)

    exp_files(exp_dir) -> {key: Path}      the same files of an unpacked exp/<spk>/<system> (from_pretrained)
    pack_system(recipe_dir, system, out, inference_model) -> archive
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Dict, Optional

import yaml

from . import acoustic
from .systems import DURATION as DURATION_SYSTEM
from .systems import LABELS, QUESTIONS, RECIPE

DURATION_CHECKPOINT = "valid.loss.best.pth"
SAMPLE_RATE = 16000


def feature_settings() -> dict:
    """What the acoustic frames mean: a packed model is refused when this code would read them otherwise."""
    import pysptk

    return {"sample_rate": SAMPLE_RATE, "frame_shift_ms": acoustic.SHIFT_MS, "dim": acoustic.DIM,
            "mcep_order": acoustic.ORDER, "mcep_alpha": float(pysptk.util.mcepalpha(SAMPLE_RATE)),
            "f0_floor_hz": acoustic.F0_FLOOR, "f0_ceil_hz": acoustic.F0_CEIL,
            "layout": "c0..c39 mel-cepstrum, interpolated log-F0, coded aperiodicity (1 band), U/V flag",
            "vocoder": "WORLD (pyworld.synthesize; CheapTrick envelope from pysptk.mc2sp, D4C band aperiodicity)"}


def _layout(exp_dir: Path):
    """(recipe dir, speaker, system) of exp_dir = <recipe>/exp/<spk>/<system>."""
    exp_dir = Path(exp_dir).absolute()
    if len(exp_dir.parts) < 4 or exp_dir.parents[1].name != "exp":
        raise ValueError(f"{exp_dir}: expected a recipe's exp/<speaker>/<system> directory")
    return exp_dir.parents[2], exp_dir.parent.name, exp_dir.name


def _stats_file(exp_dir: Path, recipe: Path, spk: str) -> Path:
    """The stats.npz the acoustic model was trained with (its config names it), else dump/<spk>/stats.npz."""
    conf = exp_dir / "config.yaml"
    if conf.is_file():
        named = (yaml.safe_load(conf.read_text(encoding="utf-8")) or {}).get("model_conf", {}).get("stats_file")
        if named and Path(named).is_file():
            return Path(named)
    return recipe / "dump" / spk / "stats.npz"


def exp_files(exp_dir, model_file: str = "valid.mcd.best.pth", questions: str = QUESTIONS) -> Dict[str, Path]:
    """{key: path} of what synthesis from raw text needs, for the trained acoustic system EXP_DIR."""
    exp_dir = Path(exp_dir)
    recipe, spk, system = _layout(exp_dir)
    if system == DURATION_SYSTEM:
        raise ValueError(f"{exp_dir}: the duration model alone cannot speak: give an acoustic system's exp dir "
                         f"(exp/{spk}/<system>)")
    stats = _stats_file(exp_dir, recipe, spk)
    dur = exp_dir.parent / DURATION_SYSTEM
    return {"config": exp_dir / "config.yaml", "model_file": exp_dir / model_file,
            "duration_config": dur / "config.yaml", "duration_model_file": dur / DURATION_CHECKPOINT,
            "questions": recipe / questions, "stats_file": stats, "duration_stats": stats.with_name("dur_stats.npz")}


def _best_epoch(exp_dir: Path, checkpoint: str) -> Optional[int]:
    link = exp_dir / checkpoint
    if link.is_symlink():
        name = Path(link.readlink()).name
        if name.endswith("epoch.pth") and name[:-len("epoch.pth")].isdigit():
            return int(name[:-len("epoch.pth")])
    return None


def _training(exp_dir: Path, checkpoint: str, samples: int) -> dict:
    """Epochs and optimiser steps (batches) up to the packed checkpoint; SAMPLES: training samples per epoch."""
    conf = yaml.safe_load((exp_dir / "config.yaml").read_text(encoding="utf-8")) or {}
    best = _best_epoch(exp_dir, checkpoint)
    batches = math.ceil(samples / max(int(conf.get("batch_size") or 1), 1))
    out = {"checkpoint": checkpoint, "max_epoch": conf.get("max_epoch"), "batch_size": conf.get("batch_size"),
           "batches_per_epoch": batches, "model": conf.get("model"), "model_conf": {
               k: v for k, v in (conf.get("model_conf") or {}).items() if k != "stats_file"}}
    if best is not None:
        out.update(epoch=best, steps=best * batches)
    return out


def _lines(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip()) if path.is_file() else 0


def card_of(recipe: Path, spk: str, system: str, checkpoint: str, recipe_name: str = RECIPE) -> dict:
    exp = recipe / "exp"
    train = recipe / "dump" / spk / "train"
    frames = sum(int(v.split()[1]) for v in (train / "utt2num_frames").read_text().splitlines() if v.strip()) \
        if (train / "utt2num_frames").is_file() else 0
    results = json.loads((exp / "results.json").read_text()) if (exp / "results.json").is_file() else {}
    systems = results.get("systems", {})
    ours, dur = systems.get(f"{spk}_{system}", {}), systems.get(f"{spk}_{DURATION_SYSTEM}", {})
    keys = ("mcd_speech", "mcd", "f0_rmse", "vuv_acc", "mcd_gt_dtw", "mcd_pred", "f0_rmse_pred", "vuv_acc_pred", "params_m")
    metrics = {k: ours[k] for k in keys if k in ours}
    metrics.update({k: dur[k] for k in ("dur_rmse_frames", "dur_rmse_ms", "dur_pearson") if k in dur})
    windows = _lines(recipe / "dump" / spk / "train_windows" / "pos")
    return {
        "corpus": results.get("corpus", "unknown"), "recipe": f"egs/{recipe_name}", "language": "es (Castilian)",
        "speaker": spk, "architecture": LABELS.get(system, system),
        "task": "text-to-speech: Spanish text -> front-end full-context labels -> duration model (LSTM) -> "
                "acoustic model -> WORLD vocoder",
        "sample_rate": SAMPLE_RATE, "frame_shift_ms": acoustic.SHIFT_MS,
        "training_data": {"utterances": _lines(train / "utt2num_frames"),
                          "hours": round(frames * acoustic.SHIFT_MS / 1000 / 3600, 4)},
        "training": {"acoustic": _training(exp / spk / system, checkpoint, windows),
                     "duration": _training(exp / spk / DURATION_SYSTEM, DURATION_CHECKPOINT,
                                           _lines(train / "utt2num_frames"))},
        "metrics": metrics,
        "metric_definitions": "test set <spk>_test. mcd / f0_rmse / vuv_acc: labelled durations, frames paired "
                              "1:1 (paper Table 2); mcd_speech: the same MCD without the frames the labels mark "
                              "sil / pau (the paper's evaluation), mcd: with them. mcd_gt_dtw: the same synthesis DTW-aligned. mcd_pred / "
                              "f0_rmse_pred / vuv_acc_pred: predicted durations, DTW-aligned. dur_rmse_*: duration "
                              "model against the labelled durations (frames of 5 ms, ms), dur_pearson: Pearson r.",
        "front_end": "local_models.salad.frontend (rule-based Castilian G2P, syllables, stress, coarse POS, "
                     "numbers spelt out) + questions file",
    }


def pack_system(recipe_dir, system: str, out, inference_model: str = "valid.mcd.best.pth",
                questions: str = QUESTIONS, recipe_name: str = RECIPE) -> Path:
    """Pack exp/SYSTEM (SYSTEM = <spk>/<acoustic system>) of RECIPE_DIR with its speaker's duration model and the
    question file QUESTIONS (relative to RECIPE_DIR); RECIPE_NAME (egs/<name>) goes to the card."""
    from local_models.common.pack import pack_model

    recipe = Path(recipe_dir).absolute()
    exp_dir = recipe / "exp" / system
    _, spk, name = _layout(exp_dir)
    files = exp_files(exp_dir, inference_model, questions)
    feats = exp_dir / "packed" / "feats.yaml"
    feats.parent.mkdir(parents=True, exist_ok=True)
    feats.write_text(yaml.safe_dump(feature_settings(), sort_keys=False), encoding="utf-8")
    yaml_keys = ("config", "duration_config")
    return pack_model(out, paper="salad", system=system, recipe_dir=recipe,
                      files={k: v for k, v in files.items() if k not in yaml_keys},
                      yaml_files={**{k: files[k] for k in yaml_keys}, "feats": feats},
                      card=card_of(recipe, spk, name, inference_model, recipe_name))


__all__ = ["exp_files", "pack_system", "feature_settings", "card_of"]
