"""Packed KSS / JDI-T systems (egs/kss/tts1's last stage; `python -m local_models.bin.pack_model --paper jdit`).

An archive of one acoustic system (exp/tts_<system>: JDI-T, or ESPnet's Tacotron2 / Transformer / FastSpeech)
holds everything `inference.Text2Speech` needs, so an unpacked archive speaks with nothing else:

    config        ESPnet2's config.yaml (its token list inline; normalize_conf.stats_file rewritten on unpacking)
    model_file    the checkpoint (--inference_model, default valid.loss.best.pth)
    stats_file    the global mean / variance of the training mels (normalize: global_mvn)
    token_list    the model's tokens, one a line (the text front end's output vocabulary)
    fbank_conf    the recipe's feature settings (sample rate, FFT, hop, mel range: what Griffin-Lim inverts)
    synthesis     synthesis.yaml: front end, vocoder (Griffin-Lim and its iterations, or Parallel WaveGAN), the
                  autoregressive models' stop threshold and length ratios
    vocoder_file, vocoder_config   the Parallel WaveGAN checkpoint and its config.yml, when the run vocoded with it

The vocoder is the one this run synthesised (and scored) the system with: the "vocoder" of its decode dirs'
synth.json (run.sh --vocoder). The card: corpus, training size and length, the system's metrics from
exp/results.json, sample rate, vocoder.

Also what packing and synthesis (inference.py, which imports this module) both read: `read_fbank_conf`
(conf/fbank.conf), `find_model_file` (an exp dir's checkpoint) and `DECODE_DEFAULTS` (jdit_synth's stop threshold
and length ratios).
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Dict

import yaml

from local_models.common.datadir import atomic_open, read_table
from local_models.common.pack import pack_model

from .phonemes import LANGUAGE_NAMES, token_type_of
from .systems import AUTOREGRESSIVE, DESCRIPTIONS
from .vocoder import vocoder_label

RECIPE = "egs/kss/tts1"
USAGE_TEXT = {"ko": "안녕하세요, 3월 1일입니다.", "es": "Un pato y una rana."}  # the model card's example
DEFAULT_GL_ITERS = 32  # run.sh's --griffin-lim-iters
DECODE_DEFAULTS = dict(threshold=0.5, maxlenratio=10.0, minlenratio=0.0)  # jdit_synth's defaults


def read_fbank_conf(path) -> dict:
    """--key value lines of conf/fbank.conf -> {key: value}."""
    conf = {}
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[0].startswith("--"):
            raise ValueError(f"{path}:{n}: expected '--key value', got '{line}'")
        conf[parts[0][2:].replace("-", "_")] = parts[1]
    for key in ("sample_rate", "n_fft", "hop_length", "n_mels"):
        if key not in conf:
            raise ValueError(f"{path}: no --{key.replace('_', '-')}")
    return conf


def find_model_file(model_dir: Path, name=None) -> Path:
    """MODEL_DIR/name, else valid.loss.best.pth, else the newest <N>epoch.pth (numerically)."""
    if name:
        f = model_dir / name
        if not f.is_file():
            raise FileNotFoundError(f"{f}: no such model file")
        return f
    best = model_dir / "valid.loss.best.pth"
    if best.is_file():
        return best
    epochs = sorted(model_dir.glob("*epoch.pth"), key=lambda f: int(f.name.split("epoch")[0]))
    if not epochs:
        raise FileNotFoundError(f"{model_dir}: no valid.loss.best.pth and no <N>epoch.pth (train it first)")
    return epochs[-1]


def recipe_of(exp_dir: Path) -> Path:
    """The recipe dir of exp/<system> (the config's paths are relative to it)."""
    return Path(exp_dir).resolve().parent.parent


def system_key(exp_dir: Path) -> str:
    """exp/tts_jdit -> 'jdit' (the name in exp/results.json and the synthesis code)."""
    name = Path(exp_dir).name
    return name[4:] if name.startswith("tts_") else name


def used_vocoder(exp_dir: Path) -> dict:
    """{'vocoder': 'griffin_lim' | path of a PWG checkpoint, 'griffin_lim_iters': N} of the newest decode dir's
    synth.json (what the run synthesised and scored this system with); Griffin-Lim, recipe default, if none."""
    exp_dir = Path(exp_dir).resolve()
    found = sorted(exp_dir.glob("decode_*/synth.json"), key=lambda p: p.stat().st_mtime)
    if not found:
        return {"vocoder": "griffin_lim", "griffin_lim_iters": DEFAULT_GL_ITERS, "from": "default (no decode dir)"}
    s = json.loads(found[-1].read_text())
    return {"vocoder": s["vocoder"], "griffin_lim_iters": int(s.get("griffin_lim_iters", DEFAULT_GL_ITERS)),
            "from": str(found[-1].relative_to(recipe_of(exp_dir)))}


def pwg_files(exp_dir: Path, vocoder: str) -> Dict[str, Path]:
    """The PWG checkpoint and its config.yml (beside it, as parallel_wavegan.utils.load_model reads it)."""
    ckpt = Path(vocoder)
    if not ckpt.is_absolute():
        ckpt = recipe_of(exp_dir) / ckpt
    return {"vocoder_file": ckpt, "vocoder_config": ckpt.parent / "config.yml"}


def exp_files(exp_dir, inference_model=None) -> Dict[str, Path]:
    """What synthesis needs from a trained exp/tts_<system> dir (common.pack.load_model's exp_resolver); the
    checkpoint INFERENCE_MODEL, by default valid.loss.best.pth, else the newest <N>epoch.pth."""
    exp_dir = Path(exp_dir)
    recipe = recipe_of(exp_dir)
    files = {"config": exp_dir / "config.yaml", "fbank_conf": recipe / "conf" / "fbank.conf"}
    if not files["config"].is_file():
        return files  # load_model names what is missing
    files["model_file"] = find_model_file(exp_dir, inference_model)
    conf = yaml.safe_load(files["config"].read_text(encoding="utf-8"))
    if conf.get("normalize") == "global_mvn":
        files["stats_file"] = recipe / conf["normalize_conf"]["stats_file"]
    voc = used_vocoder(exp_dir)["vocoder"]
    if voc != "griffin_lim":
        files.update(pwg_files(exp_dir, voc))
    return files


def synthesis_settings(exp_dir: Path) -> dict:
    """synthesis.yaml: how the recipe turned this system's text into a wav (front end, decoding, vocoder)."""
    voc = used_vocoder(exp_dir)
    fbank = read_fbank_conf(recipe_of(exp_dir) / "conf" / "fbank.conf")
    conf = yaml.safe_load((Path(exp_dir) / "config.yaml").read_text(encoding="utf-8"))
    token_list = conf["token_list"]
    if isinstance(token_list, str):  # a path, relative to the recipe
        token_list = (recipe_of(exp_dir) / token_list).read_text(encoding="utf-8").split()
    tokens = token_type_of(token_list)
    lang = conf.get("g2p_lang", "ko")
    spelled = "numbers, %, Latin letters spelled in Hangul" if lang == "ko" else "espeak-ng reads numbers and signs"
    out = {"system": system_key(exp_dir),
           "frontend": f"local_models.jdit.frontend ({spelled}), then {tokens} tokens of lang {lang} "
                       "(local_models.jdit.phonemes)",
           "token_type": tokens, "lang": lang,
           "sample_rate": int(fbank["sample_rate"]), "hop_length": int(fbank["hop_length"]),
           "autoregressive": system_key(exp_dir) in AUTOREGRESSIVE, "decode": dict(DECODE_DEFAULTS),
           "vocoder": {"type": "griffin_lim", "iters": voc["griffin_lim_iters"]} if voc["vocoder"] == "griffin_lim"
           else {"type": "parallel_wavegan", "name": vocoder_label(str(recipe_of(exp_dir) / voc["vocoder"]))}}
    out["vocoder"]["chosen_from"] = voc["from"]
    return out


def training_size(recipe: Path, conf: dict) -> dict:
    """Utterances, hours, epochs and steps of the training run behind config.yaml CONF."""
    train_dir = recipe / Path(conf["train_data_path_and_name_and_type"][0][0]).parent
    frames = read_table(train_dir / "utt2num_frames") if (train_dir / "utt2num_frames").is_file() else {}
    fbank_hop_s = 256 / 22050
    fb = recipe / "conf" / "fbank.conf"
    if fb.is_file():
        c = read_fbank_conf(fb)
        fbank_hop_s = int(c["hop_length"]) / int(c["sample_rate"])
    out = {"data": str(train_dir.relative_to(recipe)), "utterances": len(frames),
           "hours": round(sum(int(v) for v in frames.values()) * fbank_hop_s / 3600, 4)}
    return out


def training_length(exp_dir: Path, conf: dict, utterances: int, model_file: Path) -> dict:
    """Epochs trained, steps (sorted batches: ceil(utterances / batch_size) per epoch), the packed epoch."""
    latest = exp_dir / "latest.pth"
    m = re.fullmatch(r"(\d+)epoch\.pth", latest.resolve().name) if latest.exists() else None
    epochs = int(m.group(1)) if m else None
    out = {"epochs": epochs, "config_max_epoch": conf.get("max_epoch")}
    if epochs and utterances and conf.get("batch_type") == "sorted" and conf.get("batch_size"):
        per_epoch = math.ceil(utterances / conf["batch_size"])
        out.update(steps=epochs * per_epoch, steps_per_epoch=per_epoch, batch_size=conf["batch_size"])
    m = re.fullmatch(r"(\d+)epoch\.pth", model_file.resolve().name)
    out["checkpoint"] = f"{model_file.name} (epoch {m.group(1)})" if m else model_file.name
    return out


def card_of(exp_dir: Path, files: Dict[str, Path], synthesis: dict) -> dict:
    recipe, key = recipe_of(exp_dir), system_key(exp_dir)
    conf = yaml.safe_load(files["config"].read_text(encoding="utf-8"))
    results = recipe / "exp" / "results.json"
    res = json.loads(results.read_text()) if results.is_file() else {}
    size = training_size(recipe, conf)
    voc = synthesis["vocoder"]
    lang = synthesis.get("lang", "ko")
    return {"model": DESCRIPTIONS.get(key, key), "language": f"{LANGUAGE_NAMES[lang]} ({lang})", "recipe": RECIPE,
            "corpus": res.get("corpus", "unknown (no exp/results.json)"),
            "sample_rate": synthesis["sample_rate"],
            "training": {**size, **training_length(exp_dir, conf, size["utterances"], files["model_file"])},
            "vocoder": (f"Griffin-Lim, {voc['iters']} iterations" if voc["type"] == "griffin_lim"
                        else f"{voc.get('name', 'Parallel WaveGAN')} trained by the recipe (stage 4)"),
            "metrics": res.get("systems", {}).get(key, {}),
            "metrics_note": "per test set: mcd (dB, DTW), lf0_rmse, vuv_error, rtf ...: exp/results.json; "
                            "docs/metrics.md defines them",
            "usage": f"text-to-speech --model model.tar.gz --text '{USAGE_TEXT[lang]}' -o hello.wav"}


def pack_system(recipe_dir, system: str, out, inference_model: str = "valid.loss.best.pth") -> Path:
    """Pack RECIPE_DIR/exp/SYSTEM (e.g. tts_jdit) into OUT (.tar.gz / .zip)."""
    recipe = Path(recipe_dir).resolve()
    exp_dir = recipe / "exp" / system
    if not (exp_dir / "config.yaml").is_file():
        raise FileNotFoundError(f"{exp_dir}: no config.yaml (train {system} first)")
    files = exp_files(exp_dir, inference_model)
    conf = yaml.safe_load(files["config"].read_text(encoding="utf-8"))
    staged = Path(out).resolve().parent  # the generated files live beside the archive, inside the recipe
    staged.mkdir(parents=True, exist_ok=True)
    synthesis = synthesis_settings(exp_dir)
    with atomic_open(staged / "synthesis.yaml") as f:
        yaml.safe_dump(synthesis, f, allow_unicode=True, sort_keys=False)
    with atomic_open(staged / "tokens.txt") as f:
        f.writelines(t + "\n" for t in conf["token_list"])
    files.update(synthesis=staged / "synthesis.yaml", token_list=staged / "tokens.txt")
    card = card_of(exp_dir, files, synthesis)
    config = files.pop("config")
    return pack_model(out, paper="jdit", system=system, recipe_dir=recipe, files=files,
                      yaml_files={"config": config}, card=card)
