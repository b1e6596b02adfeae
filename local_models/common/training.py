"""What an ESPnet2 training run did, read back from its exp dir (train.log, config.yaml): epochs, the checkpoint
that ESPnet's best-model criterion picked, iterations, device. For reports, which must say how a model was trained."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Optional

# "[host] 2026-11-27 06:22:40,186 (trainer:394) INFO: 3epoch results: [train] ..., [valid] loss=0.212, acc=0.93, ..."
_EPOCH = re.compile(r"^\S+ (\S+ \S+) \(trainer:\d+\) INFO: (\d+)epoch results: (.*)$")
_VALUE = re.compile(r"([A-Za-z_0-9]+)=([-+0-9.e]+)(?=,|$)")


def epoch_results(log: Path) -> List[dict]:
    """[{epoch, time, train: {name: value}, valid: {name: value}}] of every 'Nepoch results' line of LOG, in order."""
    out = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        m = _EPOCH.match(line)
        if not m:
            continue
        parts = {"train": {}, "valid": {}}
        for section in re.split(r", (?=\[)", m.group(3)):
            head = re.match(r"\[(\w+)\] (.*)", section)
            if head and head.group(1) in parts:
                parts[head.group(1)] = {k: float(v) for k, v in _VALUE.findall(head.group(2).replace(" ", ""))}
        out.append({"epoch": int(m.group(2)), "time": m.group(1), **parts})
    return out


def epochs_run(exp_dir: Path) -> Optional[int]:
    """Epochs an ESPnet2 training in EXP_DIR ran: its latest.pth link's <N>epoch.pth (kept across resumes), else the
    last 'Nepoch results' line of train.prev.log / train.log (utils/stage_lib.sh espnet_train keeps the earlier
    invocations' log there); None when neither tells."""
    latest = exp_dir / "latest.pth"
    m = re.fullmatch(r"(\d+)epoch\.pth", latest.resolve().name) if latest.is_symlink() else None
    if m:
        return int(m.group(1))
    epochs = [e["epoch"] for f in (exp_dir / "train.prev.log", exp_dir / "train.log") if f.is_file()
              for e in epoch_results(f)]
    return max(epochs) if epochs else None


def saved_best_epoch(exp_dir: Path, criterion: str = "loss") -> Optional[int]:
    """The epoch ESPnet saved as valid.<criterion>.best.pth (its link's target, or the name a copy of it recorded
    in best_epoch, as local_models/sad/gpu_train.sh writes), or None."""
    link = exp_dir / f"valid.{criterion}.best.pth"
    names = [link.resolve().name] if link.is_symlink() else []
    if (exp_dir / "best_epoch").is_file():
        names.append((exp_dir / "best_epoch").read_text(encoding="utf-8").strip())
    for name in names:
        m = re.fullmatch(r"(\d+)epoch\.pth", name)
        if m:
            return int(m.group(1))
    return None


def training_record(exp_dir: Path, criterion: str = "loss", mode: str = "min") -> Optional[Dict]:
    """How EXP_DIR's model was trained: config, size of an epoch, epochs run, the epoch of the best validation
    CRITERION (the checkpoint valid.<criterion>.best.pth holds with keep_nbest_models 1) and its iterations,
    --ngpu, and the GPU when EXP_DIR/device.txt names it. None when EXP_DIR has no train.log or config.yaml."""
    import yaml

    log, conf_file = exp_dir / "train.log", exp_dir / "config.yaml"
    if not log.is_file() or not conf_file.is_file():
        return None
    conf = yaml.safe_load(conf_file.read_text(encoding="utf-8"))
    prev = exp_dir / "train.prev.log"  # earlier invocations (utils/stage_lib.sh espnet_train); later epochs win
    by_epoch = {e["epoch"]: e for f in (prev, log) if f.is_file() for e in epoch_results(f)}
    epochs = [by_epoch[k] for k in sorted(by_epoch)]
    used = re.search(r"--config (\S+)", log.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0])
    per_epoch = conf.get("num_iters_per_epoch")
    rec = {"config": used.group(1) if used else None, "max_epoch": conf.get("max_epoch"),
           "iters_per_epoch": per_epoch, "batch_size": conf.get("batch_size"), "ngpu": conf.get("ngpu", 0),
           "epochs_run": max((e["epoch"] for e in epochs), default=0)}
    scored = [e for e in epochs if criterion in e["valid"]]
    if scored:
        pick = (min if mode == "min" else max)(scored, key=lambda e: e["valid"][criterion])
        # train.log rounds the losses (3 decimals): where ESPnet's own choice is on disk, it wins a tie
        chosen = saved_best_epoch(exp_dir, criterion)
        pick = next((e for e in scored if e["epoch"] == chosen), pick)
        rec.update(best_epoch=pick["epoch"], best_valid=pick["valid"][criterion])
        if per_epoch:
            rec["best_iters"] = pick["epoch"] * per_epoch
    if per_epoch:
        rec["iters_run"] = rec["epochs_run"] * per_epoch
    device = exp_dir / "device.txt"
    if device.is_file():
        rec["device"] = device.read_text(encoding="utf-8").strip()
    return rec
