"""Detectors of the trained neural SAD systems (paper Sec. 3 / Table 2).

`scores(wave, sr)` = the net's speech posterior per 10 ms frame (computed on the same STFT magnitude as
stage 2). Smoothing happens in `decide(scores, threshold)`, so the recipe's dev threshold sweep still works:
* "hmm": two-class HMM (5 noise + 5 speech states, stay 0.9; statistical.two_class_hmm / viterbi_ring)
  with emissions log p / log(1-p) and a bias logit(threshold) subtracted from the speech class (so the
  threshold plays the role of alpha: bias 0 at 0.5);
* "median": threshold, then a median filter over `median_s` seconds (default 0.5 s);
* "none": plain threshold (segment RNN: its segment OR rule already smooths).

Model directories: exp/<cnn1d|rnn|seg_rnn> under $SAD_EXP_DIR (default: ./exp), holding ESPnet's
config.yaml and valid.loss.best.pth (else latest.pth / the newest <N>epoch.pth), or `model_file` when given.
The net runs on `device` (cpu, or cuda for sad_decode --ngpu 1); the features go there, the posteriors come
back as float32 numpy.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import List

import numpy as np

from local_models.common.viterbi import warm_up

from .detectors import SHIFT, Detector, n_frames
from .statistical import two_class_hmm, viterbi_ring
from .systems import DEVBEST, SYSTEMS, VOTE, base_system, voters

STATES, STAY = 5, 0.9
POSTERIOR_SWEEP = [0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8,
                   0.85, 0.9, 0.95, 0.98]


def model_file(model_dir: Path, name: str = "") -> Path:
    """model_dir/name when given, else the best checkpoint there."""
    if name:
        if not (model_dir / name).is_file():
            raise FileNotFoundError(f"{model_dir / name}: no such model file")
        return model_dir / name
    for name in ("valid.loss.best.pth", "valid.loss.ave.pth", "latest.pth"):
        if (model_dir / name).exists():
            return model_dir / name
    epochs = sorted(model_dir.glob("*epoch.pth"), key=lambda p: int(p.name.split("epoch")[0]))
    if epochs:
        return epochs[-1]
    raise FileNotFoundError(f"{model_dir}: no trained model (valid.loss.best.pth, latest.pth or <N>epoch.pth); "
                            "run the training stage first")


def build_net(conf: dict):
    """An untrained net from an ESPnet SAD config (its `model` and `model_conf`)."""
    from .nets import NETS  # nets imports torch: loaded with the first net, not by `import neural`

    return NETS[conf["model"]](**(conf.get("model_conf") or {}))


def load_net(model_dir: Path, device="cpu", model_file_name: str = ""):
    """The net of an ESPnet SAD training dir on `device`, in eval mode, without importing espnet (same as
    SADTask.build_model_from_file(...).net: config.yaml's `model` / `model_conf`, the `net.` weights of
    `model_file_name`, default the best checkpoint: see model_file)."""
    if not (model_dir / "config.yaml").is_file():
        raise FileNotFoundError(f"{model_dir}/config.yaml: no trained model; run the training stage first")
    return load_net_files(model_dir / "config.yaml", model_file(model_dir, model_file_name), device)


def load_net_files(config: Path, checkpoint: Path, device="cpu"):
    """The net of an ESPnet SAD config.yaml + checkpoint (its `net.` weights) on `device`, in eval mode (what
    load_net reads from a training dir, and a packed model's files)."""
    import torch
    import yaml

    conf = yaml.safe_load(Path(config).read_text())
    net = build_net(conf)
    state = torch.load(checkpoint, map_location=device)
    net.load_state_dict({k[len("net."):]: v for k, v in state.items() if k.startswith("net.")})
    return net.to(device).eval()


def hmm_smooth(post: np.ndarray, threshold: float = 0.5, states: int = STATES, stay: float = STAY) -> np.ndarray:
    """Viterbi decisions over the paper's 2 x 5-state HMM with emissions from frame posteriors."""
    _, log_init = two_class_hmm(states, stay)
    return viterbi_ring(hmm_emissions(post, threshold, states), stay, log_init) >= states


def hmm_emissions(post: np.ndarray, threshold: float = 0.5, states: int = STATES) -> np.ndarray:
    """(T, 2 x states) log emissions of hmm_smooth: log(1-p) for the noise states, log p - logit(threshold) for
    the speech states (frame by frame: the chunked decoder of streaming.py computes them chunk by chunk)."""
    p = np.clip(post.astype(np.float64), 1e-6, 1 - 1e-6)
    th = float(np.clip(threshold, 1e-6, 1 - 1e-6))
    bias = np.log(th) - np.log1p(-th)
    emis = np.empty((len(p), 2 * states))
    emis[:, :states] = np.log1p(-p)[:, None]
    emis[:, states:] = (np.log(p) - bias)[:, None]
    return emis


def median_smooth(decisions: np.ndarray, window_s: float = 0.5) -> np.ndarray:
    from scipy.ndimage import median_filter

    size = max(1, int(round(window_s / SHIFT)) | 1)  # odd window
    return median_filter(decisions.astype(np.uint8), size=size, mode="nearest").astype(bool)


@dataclass
class NeuralDetector(Detector):
    threshold: float = 0.5
    name = "neural"
    sweep: List[float] = field(default_factory=lambda: list(POSTERIOR_SWEEP))
    model_dir: str = ""
    smoothing: str = "hmm"  # hmm | median | none
    median_s: float = 0.5
    device: str = "cpu"
    model_file: str = ""  # checkpoint in model_dir; "": the best one (neural.model_file)
    hmm_states: int = STATES  # per class (the paper's 5)
    hmm_stay: float = STAY
    _net: object = field(default=None, repr=False)  # a loaded net (a packed model's) instead of model_dir's

    model_name = ""  # exp/<model_name> when model_dir is not given

    def __post_init__(self):
        if not self.model_dir:
            self.model_dir = str(Path(os.environ.get("SAD_EXP_DIR", "exp")) / self.model_name)
        if self.smoothing not in ("hmm", "median", "none"):
            raise ValueError(f"unknown smoothing '{self.smoothing}' (hmm, median, none)")
        if self.smoothing == "hmm":
            warm_up()  # the Viterbi kernel, outside the timed decoding

    @property
    def net(self):
        if self._net is None:
            self._net = load_net(Path(self.model_dir), self.device, self.model_file)
        return self._net

    def posteriors_from_feats(self, feats: np.ndarray, total: int) -> np.ndarray:
        import torch

        net = self.net
        x = torch.as_tensor(np.ascontiguousarray(feats, dtype=np.float32), device=next(net.parameters()).device)
        with torch.inference_mode():
            post = net.frame_probs(x[None])
        post = np.asarray(post, dtype=np.float32)[:total]
        if len(post) < total:
            post = np.pad(post, (0, total - len(post)), mode="edge")
        return post

    def scores(self, wave, sr):
        from local_models.common.features import FeatConfig, compute

        if sr != 8000:
            raise ValueError(f"the neural SAD systems are 8 kHz systems, got {sr} Hz")
        cfg = FeatConfig(kind="stft", sample_rate=8000, win_ms=50, hop_ms=10, n_fft=512)
        return self.posteriors_from_feats(compute(np.asarray(wave, dtype=np.float32), cfg), n_frames(len(wave), sr))

    def decide(self, scores, threshold=None):
        th = self.threshold if threshold is None else threshold
        if self.smoothing == "hmm":
            return hmm_smooth(scores, th, self.hmm_states, self.hmm_stay)
        d = scores > th
        return median_smooth(d, self.median_s) if self.smoothing == "median" else d


def system_class(name: str) -> type:
    """The detector class of the neural system NAME, from its entry in systems.SYSTEMS (net, decision)."""
    spec = SYSTEMS[name]
    cls = type("".join(w.upper() if w in ("cnn", "rnn", "hmm") else w.capitalize() for w in name.split("_")),
               (NeuralDetector,), {"__annotations__": {"smoothing": str}, "smoothing": spec.smoothing, "name": name,
                                   "model_name": spec.net, "__module__": __name__})
    return dataclass(cls)


# one class per neural system of systems.SYSTEMS (CNNHMM, CNNMedian, RNNHMM, RNNMedian, SegRNN, ...)
SYSTEM_CLASSES = {n: system_class(n) for n, s in SYSTEMS.items() if s.kind == "neural"}
CNNHMM, CNNMedian = SYSTEM_CLASSES["cnn_hmm"], SYSTEM_CLASSES["cnn_median"]
RNNHMM, RNNMedian = SYSTEM_CLASSES["rnn_hmm"], SYSTEM_CLASSES["rnn_median"]
SegRNN = SYSTEM_CLASSES["seg_rnn"]


def devbest_model_dir(exp: Path) -> Path:
    """The training dir of the dev-best (L, S) grid point that exp/seg_rnn_devbest/model_dir names (stage 7 writes
    it, recipe-relative)."""
    where = Path(exp) / DEVBEST / "model_dir"
    if not where.is_file():
        raise FileNotFoundError(f"{where}: missing (stage 7 of the recipe writes it)")
    return Path(exp).parent / where.read_text().strip()


@dataclass
class MajorityVote(Detector):
    """Frame = speech if at least 2 of its 3 members say so (the paper's majority vote), each member at its own
    dev-tuned threshold (exp/<member>/threshold); members: `voters`. Scores = the number of votes; the threshold
    1.5 is the rule itself, not a tuned value (the threshold sweep holds only it). Decodes the members in turn."""

    threshold: float = 1.5
    name = VOTE
    sweep: List[float] = field(default_factory=lambda: [1.5])
    device: str = "cpu"    # the members' nets run there
    model_file: str = ""   # checkpoint in each member's exp dir; "": each one's best
    _dets: object = field(default=None, repr=False)

    def __post_init__(self):
        warm_up()  # its members' HMM Viterbi kernel, outside the timed decoding

    def members(self) -> list:
        """[(detector, threshold)] of the voters in $SAD_EXP_DIR (default exp/)."""
        exp = Path(os.environ.get("SAD_EXP_DIR", "exp"))
        out = []
        for name in voters(exp):
            cls = SYSTEM_CLASSES[base_system(name)]
            model_dir = str(devbest_model_dir(exp)) if name == DEVBEST else ""
            det = cls(device=self.device, model_file=self.model_file, model_dir=model_dir)
            th_file = exp / name / "threshold"
            out.append((det, float(th_file.read_text()) if th_file.is_file() else det.threshold))
        return out

    def scores(self, wave, sr):
        if self._dets is None:
            self._dets = self.members()
        votes = None
        for det, th in self._dets:
            d = det.decide(det.scores(wave, sr), th).astype(np.float32)
            votes = d if votes is None else votes + d
        return votes


NEURAL = (*SYSTEM_CLASSES.values(), MajorityVote)
