"""Packed multilingual RNN-T systems of egs/indic/asr1 (its last stage; `local_models.bin.pack_model --paper
multisoftmax`): one archive per trained system with everything `inference.Speech2Text` needs and nothing from the
recipe dir:

    config          exp/<system>/config.yaml (ESPnet's; the model's unit lists live in its model_conf.token_lists)
    model_file      the checkpoint (--inference_model; the feature mean / std are buffers in it)
    feats_conf      dump/fbank/fbank.conf: stage 2's front end (conf/fbank.conf's 80-dim log-mel, 25 ms / 10 ms, at
                    the rate stage 1 prepared the corpus at); conf/fbank.conf when stage 2 never wrote it
    stats_file      dump/fbank/train_all/stats.npz: the normalisation statistics (the same as the checkpoint's)
    units_<name>    data/lang/<lang>/units.txt of every language and data/lang/union/units.txt
    model_card      the card: languages, training data and epochs, the decoding setting of stage 6 and the
                    switch-off setting (tau, s_th) that streaming uses, WER / CER / LID accuracy per language

`exp_files(exp_dir)` gives the same for a recipe's exp/<system> dir (no card, no archive needed).
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Dict, List, Optional

import yaml

from local_models.common.datadir import read_table
from local_models.common.pack import pack_model
from local_models.common.training import epochs_run

from .frontend import feature_summary, read_feat_conf
from .systems import DESCRIPTIONS, base_system, system_language
from .units import LANGS, read_units

PAPER = "multisoftmax"
FEATS_CONF = Path("conf") / "fbank.conf"
STAGE2_FEATS_CONF = Path("dump") / "fbank" / "fbank.conf"  # conf/fbank.conf + the prepared rate (stages.sh)
STATS = Path("dump") / "fbank" / "train_all" / "stats.npz"
DECODE_CONF = "decode_conf.yaml"  # written by the recipe's pack stage: the search stage 6 ran + the switch-off
DEFAULT_DECODING = {"beam": 4, "chunk": 10, "max_sym_per_frame": 3, "tau": math.inf, "s_th": math.inf}

def parse_decoding(given: Optional[dict], where) -> dict:
    """{beam, chunk, max_sym_per_frame, tau, s_th} from a decode_conf.yaml or a card's 'decoding' (the recipe's
    defaults where absent; tau / s_th may be "inf"); errors name WHERE."""
    conf = dict(DEFAULT_DECODING)
    try:
        for key, value in (given or {}).items():
            if key == "note":
                continue
            if key not in conf:
                raise ValueError(f"unknown setting '{key}' ({', '.join(conf)})")
            conf[key] = float(value) if key in ("tau", "s_th") else int(value)
    except (ValueError, TypeError, AttributeError) as e:
        raise ValueError(f"{where}: {e}") from None
    if conf["beam"] < 1 or conf["chunk"] < 1 or conf["max_sym_per_frame"] < 0 or not conf["s_th"] >= 0 \
            or math.isnan(conf["tau"]):
        raise ValueError(f"{where}: need beam >= 1, chunk >= 1, max_sym_per_frame >= 0, s_th >= 0, a tau: {conf}")
    return conf


def read_decode_conf(path: Optional[Path]) -> dict:
    """The decoding setting of exp/<system>/decode_conf.yaml (the recipe's defaults without one)."""
    if path is None or not Path(path).is_file():
        return dict(DEFAULT_DECODING)
    try:
        given = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: {e}") from None
    if given is not None and not isinstance(given, dict):
        raise ValueError(f"{path}: expected 'key: value' lines")
    return parse_decoding(given, path)


def language_input(mc: dict, own: Optional[str]) -> str:
    """What a user must say about the language of the input."""
    if mc.get("lid"):
        return "not needed: LID-free by default (the LID head picks the language); language= decodes it known"
    if mc.get("system") == "vanilla":
        return "not needed: one decoder for every language, the language read from the output's script"
    if own is not None:
        return f"not needed: decodes {own} only"
    return f"needed: language= one of {', '.join(mc.get('langs', []))}"


def card_decoding(decoding: dict, lid: bool) -> dict:
    """The card's 'decoding': the search stage 6 ran, and for an LID model the switch-off setting."""
    out = {k: decoding[k] for k in ("beam", "chunk", "max_sym_per_frame")}
    if lid:
        out.update(tau=f"{decoding['tau']:g}", s_th=f"{decoding['s_th']:g}",
                   note="chunk in 30 ms encoder frames; tau (30 ms frames) and s_th: the early switch-off (paper eq. "
                        "1) that Speech2Text.stream uses; a call decodes with every decoder on (tau = s_th = inf), "
                        "as the recipe's Table 4")
    return out


def exp_files(exp_dir, inference_model: str = "valid.loss.best.pth") -> Dict[str, Path]:
    """What Speech2Text needs from a recipe's exp/<system> dir (the front end stage 2 used: dump/fbank/fbank.conf,
    else the recipe's conf/fbank.conf)."""
    exp_dir = Path(exp_dir)
    recipe = exp_dir.resolve().parent.parent
    stage2 = recipe / STAGE2_FEATS_CONF
    files = {"config": exp_dir / "config.yaml", "model_file": exp_dir / inference_model,
             "feats_conf": stage2 if stage2.is_file() else recipe / FEATS_CONF}
    if (exp_dir / DECODE_CONF).is_file():
        files["decode_conf"] = exp_dir / DECODE_CONF
    return files


# ----------------------------------------------------------------------------- the card
def _round(v):
    return round(v, 3) if isinstance(v, float) else v


def per_language(row: Optional[dict], langs: List[str], avg: bool = True) -> dict:
    """A results.json row (wer_en, cer_en, lid_acc_en, ..., wer_avg, ...) -> {lang: {wer, cer, lid_acc}, avg: {...}}
    (AVG False: no average, e.g. for one language of a row that pools every monolingual model)."""
    if not row:
        return {}
    out = {}
    for lang in langs + (["avg"] if avg else []):
        m = {k: _round(row[f"{k}_{lang}"]) for k in ("wer", "cer", "lid_acc") if row.get(f"{k}_{lang}") is not None}
        if lang == "avg":
            m.update({k: row[k] for k in ("utts", "words") if k in row})
        if m:
            out[lang] = m
    return out


def card_metrics(results: dict, system: str, langs: List[str], decoding: dict) -> dict:
    """The system's rows of exp/results.json (WER / CER / LID accuracy [%] per language), by decoding mode."""
    rows = results.get("systems", {})
    own = system_language(system, langs)
    scope = [own] if own else langs
    base = base_system(system)
    key = f"ft_{base}" if system.startswith("ft_") else base

    def modes(suffix: str) -> dict:
        out = {}
        if system == "vanilla":  # it never uses the language: its one decoding is LID-free (script LID)
            out["lidfree"] = per_language(rows.get(key + suffix), scope)
        else:  # the language given: its LID "accuracy" is the given language's, 100 % by construction
            out["known_language"] = {k: {m: v for m, v in d.items() if m != "lid_acc"}
                                     for k, d in per_language(rows.get(key + suffix), scope, avg=own is None).items()}
        if system == "multisoftmax_lid":
            out["lidfree"] = per_language(rows.get("multisoftmax_lid_lidfree" + suffix), langs)
            out["lidfree_oracle"] = per_language(rows.get("multisoftmax_lid_oracle" + suffix), langs)
        return {k: v for k, v in out.items() if v}

    metrics = modes("")
    if system == "multisoftmax_lid":
        name = f"switchoff_tau{decoding['tau']:g}_sth{decoding['s_th']:g}"
        so = {"tau": f"{decoding['tau']:g}", "s_th": f"{decoding['s_th']:g}"}
        if name in rows:
            r = rows[name]
            metrics["switch_off"] = {**so, "t_avg": r.get("t_avg"), **per_language(r, langs)}
        elif rows:
            metrics["switch_off"] = {**so, "note": "not in the run's --switch_off_grid: not scored"}
    unseen = {k.split("@", 1)[1] for k in rows if "@" in k}
    for x in sorted(unseen):
        got = modes(f"@{x}")
        if got:
            metrics.setdefault("unseen_sets", {})[x] = got
    return metrics


def training_data(recipe: Path, conf: dict, langs: List[str], hop_ms: float) -> dict:
    """Utterances and hours (per language) of the set the system trained on, from its feats.shape + lid_int."""
    entries = [x.split(",") if isinstance(x, str) else x for x in conf.get("train_data_path_and_name_and_type") or []]
    feats = next((e[0] for e in entries if len(e) == 3 and e[1] == "feats"), None)
    if feats is None:
        return {}
    d = (recipe / feats).parent if not Path(feats).is_absolute() else Path(feats).parent
    out = {"set": d.name}
    if not (d / "feats.shape").is_file():
        return out
    frames = {u: int(v.split(",")[0]) for u, v in read_table(d / "feats.shape").items()}
    lid = read_table(d / "lid_int") if (d / "lid_int").is_file() else {}
    hours: Dict[str, float] = {}
    for utt, n in frames.items():
        lang = langs[int(lid[utt])] if utt in lid else "all"
        hours[lang] = hours.get(lang, 0.0) + n * hop_ms / 3.6e6
    out.update(utterances=len(frames), hours=round(sum(hours.values()), 4),
               hours_per_language={k: round(v, 4) for k, v in hours.items()})
    return out


def epochs_trained(exp: Path, conf: dict, inference_model: str) -> dict:
    """max_epoch of the config, the epochs trained (ESPnet's <n>epoch.pth / train.log) and the packed one."""
    out = {"max_epoch": conf.get("max_epoch")}
    done = epochs_run(exp)
    if done is not None:
        out["epochs_trained"] = done
    target = (exp / inference_model).resolve().name
    m = re.fullmatch(r"(\d+)epoch\.pth", target)
    out["checkpoint"] = inference_model + (f" (epoch {m.group(1)})" if m else "")
    return out


def num_params(checkpoint: Path) -> int:
    import torch

    state = torch.load(checkpoint, map_location="cpu", weights_only=True)
    return int(sum(v.numel() for k, v in state.items() if k not in ("feat_mean", "feat_std")))


# ----------------------------------------------------------------------------- packing
def check_unit_lists(files: Dict[str, Path], token_lists: Dict[str, List[str]], config: Path) -> None:
    """data/lang's lists must be the ones the model was trained with (config.yaml keeps them)."""
    for name, tokens in token_lists.items():
        path = files.get(f"units_{name}")
        if path is not None and read_units(path) != list(tokens):
            raise ValueError(f"{path}: differs from the unit list '{name}' the model was trained with ({config}); "
                             "stage 3 was rerun after training? Retrain (stage 4) or restore data/lang")


def check_stats(stats: Path, checkpoint: Path) -> None:
    """The statistics file must hold the checkpoint's normalisation (the model reads its buffers)."""
    import numpy as np
    import torch

    state = torch.load(checkpoint, map_location="cpu", weights_only=True)
    with np.load(stats) as s:
        mean, std = s["mean"], np.maximum(s["std"], 1e-5)
    if "feat_mean" in state and not (np.allclose(state["feat_mean"].numpy(), mean, atol=1e-5)
                                     and np.allclose(state["feat_std"].numpy(), std, rtol=1e-5, atol=1e-6)):
        raise ValueError(f"{stats}: not the normalisation statistics in {checkpoint} (stage 4 rerun after training?)")


def build_card(recipe: Path, system: str, conf: dict, files: Dict[str, Path], decoding: dict,
               inference_model: str) -> dict:
    mc = conf.get("model_conf") or {}
    langs = list(mc.get("langs", []))
    feat = read_feat_conf(files["feats_conf"])
    results_path = recipe / "exp" / "results.json"
    results = json.loads(results_path.read_text(encoding="utf-8")) if results_path.is_file() else {}
    own = system_language(system, langs)
    base = base_system(system)
    kind = "multisoftmax_lid" if mc.get("lid") else "multisoftmax_lsp" if mc.get("lsp") else mc.get("system", base)
    card = {
        "recipe": "egs/indic/asr1", "corpus": results.get("corpus", "unknown (not scored yet)"),
        "description": DESCRIPTIONS.get(kind, kind) + (f"; finetuned on {own} from the {base} system (paper Table 3)"
                                                  if system.startswith("ft_") else ""),
        "languages": {lang: LANGS.get(lang, lang) for lang in langs},
        "language": own,  # mono / finetuned systems: the one language they decode
        "language_input": language_input(mc, own),
        "sample_rate": feat.sample_rate, "front_end": feature_summary(feat),
        "units": "graphemes + B_graphemes (word start) + <blank> per language (paper Section 5)",
        "params": num_params(files["model_file"]),
        "training": {"config": {k: mc.get(k) for k in ("enc_layers", "enc_units", "pred_layers", "pred_units",
                                                        "joint_dim", "lid_weight", "lid_rnn_layers") if k in mc},
                     **training_data(recipe, conf, langs, feat.hop_ms), **epochs_trained(recipe / "exp" / system,
                                                                                       conf, inference_model)},
        "decoding": card_decoding(decoding, bool(mc.get("lid"))),
        "metrics_note": "WER / CER / LID accuracy in %, on the recipe's test sets (exp/results.json)",
        "metrics": card_metrics(results, system, langs, decoding),
    }
    if conf.get("init_param"):  # a finetuned system: what it started from
        init = conf["init_param"]
        card["training"]["init_param"] = ", ".join(map(str, init)) if isinstance(init, list) else str(init)
    return {k: v for k, v in card.items() if v is not None}


def pack_system(recipe_dir, system: str, out, inference_model: str = "valid.loss.best.pth") -> Path:
    """Pack exp/SYSTEM of the recipe at RECIPE_DIR into OUT (see the module docstring)."""
    recipe = Path(recipe_dir).resolve()
    exp = recipe / "exp" / system
    files = exp_files(exp, inference_model)
    config = files.pop("config")
    decode_conf = files.pop("decode_conf", None)
    for key, path in (("config", config), ("model_file", files["model_file"])):
        if not path.is_file():
            raise FileNotFoundError(f"pack {PAPER}/{system}: {path} missing (train the system first: stage 4)")
    conf = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    token_lists = (conf.get("model_conf") or {}).get("token_lists") or {}
    if not token_lists:
        raise ValueError(f"{config}: no model_conf.token_lists (not a model of this recipe's task)")
    files["stats_file"] = recipe / STATS
    files.update({f"units_{name}": recipe / "data" / "lang" / name / "units.txt" for name in token_lists})
    check_unit_lists(files, token_lists, config)
    check_stats(files["stats_file"], files["model_file"])
    decoding = read_decode_conf(decode_conf)
    card = build_card(recipe, system, conf, {"model_file": files["model_file"], "feats_conf": files["feats_conf"]},
                      decoding, inference_model)
    return pack_model(out, paper=PAPER, system=system, recipe_dir=recipe, files=files,
                      yaml_files={"config": config}, card=card)


__all__ = ["exp_files", "pack_system", "read_decode_conf", "parse_decoding", "system_language", "card_metrics",
           "PAPER"]
