"""Packed SAD systems (egs/fearless_steps/sad1, the last stage): what a system needs to segment new audio and its
model card. `pack_system(recipe_dir, system, out)` writes the archive; `describe(exp_dir)` / `exp_files(exp_dir)`
say the same from a recipe's exp/<system> dir (so SpeechSegmenter.from_pretrained also takes one).

A neural system = its net (ESPnet's config.yaml + checkpoint of exp/<cnn1d|rnn|seg_rnn>, for seg_rnn_devbest the
dev-best grid point named in exp/seg_rnn_devbest/model_dir) + its dev-tuned threshold (exp/<system>/threshold) +
its decision (HMM / median filter / segment read-out); majority_vote = cnn_hmm, rnn_hmm and the seg RNN of
Table 2 (seg_rnn_devbest when stage 7 made it, else seg_rnn; systems.voters) each at its own threshold + the vote rule
(at least 2 of 3); stat_sad = its parameters (StatConfig) + threshold, no net. Everything a
decoder reads is in `decision.yaml` (written to exp/<system>/packed/ and packed).
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Dict, Optional, Tuple

import yaml

from local_models.common.datadir import atomic_open, read_table
from local_models.common.pack import pack_model

from .decisions import FA_BOUND, PRIMARY_COLLAR, bounded_path, read_threshold_file
from .detectors import SHIFT
from .neural import devbest_model_dir, model_file
from .registry import detector_class
from .statistical import StatConfig
from .systems import DEVBEST, PACKABLE, VOTE, base_system, net_of, system as system_of, voters

SAMPLE_RATE = 8000
DECISION = {"hmm": "two-class HMM Viterbi ({states} noise + {states} speech states, stay {stay}) on the posteriors",
            "median": "threshold, then a {median_s} s median filter",
            "none": "threshold on the max over the segments holding the frame (segment OR rule)"}


def net_dir(exp_root: Path, system: str) -> Path:
    """The training dir of SYSTEM's net (exp_root = the recipe's exp/)."""
    if system == DEVBEST:  # the dev-best (L, S) grid point
        return devbest_model_dir(exp_root)
    return exp_root / net_of(system)


def read_threshold(exp_root: Path, system: str) -> Tuple[float, bool]:
    """(threshold, tuned): exp/<system>/threshold (stage 6, tuned on dev) or the system's default."""
    th = read_threshold_file(exp_root / system / "threshold")
    if th is None:
        return float(detector_class(base_system(system)).threshold), False
    return th, True


def _member(exp_root: Path, system: str, prefix: str, inference_model: str, files: dict, yaml_files: dict) -> dict:
    cls = detector_class(base_system(system))
    nd = net_dir(exp_root, system)
    if not (nd / "config.yaml").is_file():
        raise FileNotFoundError(f"{nd}/config.yaml: '{system}' has no trained net (run the training stage)")
    yaml_files[f"{prefix}config"] = nd / "config.yaml"
    files[f"{prefix}model_file"] = model_file(nd, inference_model)
    threshold, tuned = read_threshold(exp_root, system)
    return {"system": system, "net_dir": nd.name, "smoothing": cls.smoothing, "median_s": cls.median_s,
            "hmm_states": cls.hmm_states, "hmm_stay": cls.hmm_stay, "threshold": threshold, "threshold_tuned": tuned,
            "config": f"{prefix}config", "model_file": f"{prefix}model_file"}


def describe(exp_dir, inference_model: str = "") -> Tuple[dict, Dict[str, Path], Dict[str, Path]]:
    """(decision spec, files, yaml files) of the system trained in EXP_DIR = <recipe>/exp/<system>; INFERENCE_MODEL:
    the checkpoint name ("" = the best one there, neural.model_file)."""
    exp_dir = Path(exp_dir)
    system, exp_root = exp_dir.name, exp_dir.parent
    if system not in PACKABLE:
        raise ValueError(f"{exp_dir}: '{system}' is not a packable SAD system (one of {', '.join(PACKABLE)}; "
                         "a net's training dir such as exp/cnn1d is used through its systems, e.g. exp/cnn_hmm)")
    if not exp_dir.is_dir():
        raise FileNotFoundError(f"{exp_dir}: no such system dir (run the recipe's decoding stages first)")
    spec = {"system": system, "sample_rate": SAMPLE_RATE, "frame_shift": SHIFT}
    files: Dict[str, Path] = {}
    yaml_files: Dict[str, Path] = {}
    if system_of(system).kind == "statistical":
        threshold, tuned = read_threshold(exp_root, system)
        spec.update(kind="stat_sad", threshold=threshold, threshold_tuned=tuned, stat_config=asdict(StatConfig()))
        _add_fa_bounded(spec, exp_root)
        return spec, files, yaml_files
    if system == VOTE:
        members = [_member(exp_root, m, f"{m}_", inference_model, files, yaml_files) for m in voters(exp_root)]
        threshold, tuned = read_threshold(exp_root, system)
    else:
        members = [_member(exp_root, system, "", inference_model, files, yaml_files)]
        threshold, tuned = members[0]["threshold"], members[0]["threshold_tuned"]
    spec.update(kind="neural", threshold=threshold, threshold_tuned=tuned, members=members)
    if system != VOTE:  # the vote's members keep their DCF-tuned thresholds (docs/metrics.md)
        _add_fa_bounded(spec, exp_root)
    return spec, files, yaml_files


def _add_fa_bounded(spec: dict, exp_root: Path) -> None:
    """SPEC's second operating point, when stage 6 found one: inference's --operating_point fa_bounded (bounded on
    the kinds of non-speech the dev set has: stage 6's sweep.json says which)."""
    threshold = exp_root / spec["system"] / "threshold"
    th = read_threshold_file(bounded_path(threshold))
    if th is not None:
        sweep = Path(f"{threshold}.sweep.json")
        kinds = (json.loads(sweep.read_text()).get("fa_bound", {}).get("kinds") if sweep.is_file() else None) \
            or ["music", "tone"]  # a sweep from before the kinds were recorded bounded both
        spec["threshold_fa_bounded"] = th
        spec["fa_bound"] = (f"at most {FA_BOUND * 100:.0f} % of the "
                            + " and of the ".join(kinds) + " time called speech on dev")


def exp_files(exp_dir) -> Dict[str, Path]:
    """What inference reads from a recipe's exp/<system> dir (common.pack.load_model's exp_resolver)."""
    _, files, yaml_files = describe(exp_dir)
    return {**yaml_files, **files}


# ----------------------------------------------------------------------------- the model card
def decision_text(spec: dict) -> str:
    if spec["kind"] == "stat_sad":
        return ("statistical SAD (paper Sec. 2: Wiener filtering, LPC sub-band energies, GMMs, HMM Viterbi)"
                + fa_bounded_text(spec))
    parts = [f"{m['system']}: {DECISION[m['smoothing']].format(states=m['hmm_states'], stay=m['hmm_stay'], median_s=m['median_s'])}"
             f" at {m['threshold']:g}" for m in spec["members"]]
    vote = f"; speech where more than {spec['threshold']:g} of them say so" if spec["system"] == VOTE else ""
    return "; ".join(parts) + vote + fa_bounded_text(spec)


def fa_bounded_text(spec: dict) -> str:
    if "threshold_fa_bounded" not in spec:
        return ""
    return (f"; with --operating_point fa_bounded at {spec['threshold_fa_bounded']:g} instead ({spec['fa_bound']}: "
            "fewer false alarms on such sounds, more misses)")


def training_of(recipe: Path, net: Path) -> dict:
    """A net's training: its data (recordings, hours of data/<train set>) and schedule (config.yaml, epochs run)."""
    conf = yaml.safe_load((net / "config.yaml").read_text()) or {}
    out = {"net": conf.get("model"), "model_conf": conf.get("model_conf"), "batch_size": conf.get("batch_size"),
           "max_epoch": conf.get("max_epoch"), "iters_per_epoch": conf.get("num_iters_per_epoch")}
    train = [e[0] for e in conf.get("train_data_path_and_name_and_type") or [] if e and e[1] == "feats"]
    if train and Path(train[0]).parts[:1] == ("dump",):  # dump/<set>/chunks/feats.scp -> data/<set>
        data = recipe / "data" / Path(train[0]).parts[1]
        out["train_set"] = data.name
        if (data / "wav.scp").is_file():
            out["train_recordings"] = len(read_table(data / "wav.scp"))
        if (data / "reco2dur").is_file():
            out["train_hours"] = round(sum(float(v) for v in read_table(data / "reco2dur").values()) / 3600, 3)
    ckpt = net / "checkpoint.pth"
    if ckpt.is_file():
        import torch

        epoch = torch.load(ckpt, map_location="cpu", weights_only=False).get("reporter", {}).get("epoch")
        if epoch is not None and out["iters_per_epoch"]:
            out.update(epochs=int(epoch), steps=int(epoch) * int(out["iters_per_epoch"]))
    return out


def metrics_of(recipe: Path, system: str) -> Tuple[Optional[str], dict]:
    """(corpus, the system's metrics from exp/results.json: per scored set DCF / F1 / P / R, and the RTF)."""
    f = recipe / "exp" / "results.json"
    if not f.is_file():
        return None, {}
    results = json.loads(f.read_text())
    m = results.get("systems", {}).get(system, {})
    keep = ("dcf", "f1", "precision", "recall", "dcf_no_collar", "f1_no_collar")
    out = {s: {k: v[k] for k in keep if k in v} for s, v in m.items() if isinstance(v, dict)}
    if "rtf" in m:
        out["rtf"] = m["rtf"]
    return results.get("corpus"), out


def recipe_of(recipe: Path) -> str:
    """The recipe's name as its scoring stage wrote it in exp/results.json (<corpus>/<task>; the FS02 recipe's when
    nothing was scored yet)."""
    f = recipe / "exp" / "results.json"
    return (json.loads(f.read_text()).get("recipe") if f.is_file() else None) or "fearless_steps/sad1"


def make_card(recipe: Path, spec: dict, inference_model: str) -> dict:
    corpus, metrics = metrics_of(recipe, spec["system"])
    card = {"corpus": corpus, "recipe": f"egs/{recipe_of(recipe)}", "decision": decision_text(spec),
            "sample_rate": SAMPLE_RATE, "frame_rate": round(1 / SHIFT), "threshold": spec["threshold"],
            "threshold_tuned_on_dev": spec["threshold_tuned"], "metrics": metrics,
            "metrics_note": f"pooled over the set's recordings, collar {PRIMARY_COLLAR} s (dcf = 0.75 P_miss + 0.25 "
                            "P_fa, the FS02 challenge's); no_collar: without",
            "usage": "speech-segments --model model.tar.gz recording.wav [--rttm out.rttm] (any sample rate; "
                     "resampled to 8 kHz)"}
    if "threshold_fa_bounded" in spec:
        card["threshold_fa_bounded"] = spec["threshold_fa_bounded"]
    if spec["kind"] == "stat_sad":
        card["training"] = "none (unsupervised); threshold chosen on dev"
        card["stat_config"] = spec["stat_config"]
    else:
        exp_root = recipe / "exp"
        card["inference_model"] = inference_model
        card["training"] = {m["system"]: training_of(recipe, net_dir(exp_root, m["system"])) for m in spec["members"]}
    return card


def pack_system(recipe_dir, system: str, out, inference_model: str = "valid.loss.best.pth") -> Path:
    """Pack <RECIPE_DIR>/exp/SYSTEM (net(s) from INFERENCE_MODEL, tuned threshold, decision, card) into OUT."""
    recipe = Path(recipe_dir)
    exp_dir = recipe / "exp" / system
    spec, files, yaml_files = describe(exp_dir, inference_model)
    decision = exp_dir / "packed" / "decision.yaml"
    decision.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(decision) as f:
        yaml.safe_dump(spec, f, sort_keys=False)
    return pack_model(out, paper="sad", system=system, recipe_dir=recipe, files=files,
                      yaml_files={**yaml_files, "decision": decision}, card=make_card(recipe, spec, inference_model))
