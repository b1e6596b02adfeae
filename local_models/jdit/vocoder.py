"""The vocoders of egs/kss/tts1: Griffin-Lim, and Parallel WaveGAN (the paper's) or Multi-band MelGAN (the fast
one) trained by the `parallel-wavegan` package's own trainer (`python -m local_models.bin.jdit_pwg_train`, the
architecture named by the config's generator_type) and run by the synthesis tool.

All take the de-normalised log10-mel that ESPnet2's TTS models output (the recipe's features as extracted).
Training reads data dirs with wav.scp (16-bit PCM wavs, or `cmd |` pipes) and feats.scp (NOT normalised); the
trainer cuts random `batch_max_steps`-sample windows with their mel frames (hop_size samples per frame).
"""
from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from .systems import VOCODER_LABELS


class GriffinLim:
    """log10-mel (T, n_mels) -> waveform with the recipe's STFT settings: the mel inverted as ESPnet2's
    Spectrogram2Waveform inverts it (pseudo-inverse of librosa's mel basis, floored at 1e-10; the inverse made once
    here, not per call), then the project's seeded fast Griffin-Lim (local_models.common.griffin_lim)."""

    def __init__(self, conf: dict, iters: int):
        import librosa

        self.fs = int(conf["sample_rate"])
        self.n_fft, self.hop = int(conf["n_fft"]), int(conf["hop_length"])
        self.win = int(conf.get("win_length", conf["n_fft"]))
        self.iters = int(iters)
        fmax = float(conf["fmax"]) if "fmax" in conf else self.fs / 2
        basis = librosa.filters.mel(sr=self.fs, n_fft=self.n_fft, n_mels=int(conf["n_mels"]),
                                    fmin=int(float(conf.get("fmin", 0))), fmax=int(fmax))
        self.inv_basis = np.linalg.pinv(basis).astype(np.float32)

    def __call__(self, logmel: np.ndarray) -> np.ndarray:
        from local_models.common.griffin_lim import griffin_lim

        mel = np.power(10.0, np.asarray(logmel, dtype=np.float32))
        mag = np.maximum(1e-10, mel @ self.inv_basis.T)
        return griffin_lim(mag, self.n_fft, self.hop, self.win, self.iters)


class PWGVocoder:
    """A trained parallel-wavegan generator on de-normalised log10-mel: Parallel WaveGAN, or Multi-band MelGAN
    (load_model attaches its PQMF synthesis filter, which MelGANGenerator.inference applies)."""

    def __init__(self, checkpoint: str, conf: dict, device="cpu", config=None):
        """CONFIG: the generator's config.yml (default: the one beside CHECKPOINT, as the trainer writes it)."""
        import torch
        import yaml

        from local_models.common.compat import scipy_kaiser_alias

        scipy_kaiser_alias()  # parallel_wavegan imports scipy.signal.kaiser
        from parallel_wavegan.utils import load_model

        if config is not None:
            with open(config, encoding="utf-8") as f:
                config = yaml.load(f, Loader=yaml.Loader)  # the trainer dumps with yaml.Dumper (python tags)
        self.model = load_model(checkpoint, config=config)
        self.model.remove_weight_norm()
        self.model.eval().to(device)
        self.device = torch.device(device)
        self.fs = int(self.model.config.get("sampling_rate", conf["sample_rate"])) if hasattr(self.model, "config") \
            else int(conf["sample_rate"])
        self.torch = torch

    def __call__(self, logmel: np.ndarray) -> np.ndarray:
        with self.torch.no_grad():
            self.torch.manual_seed(0)  # the generator's input is torch.randn noise: same mel, same wav
            c = self.torch.from_numpy(np.array(logmel, dtype=np.float32)).to(self.device)  # a writable copy
            return self.model.inference(c).view(-1).detach().float().cpu().numpy()


# display names of parallel-wavegan's generators (the generator_type of a checkpoint's config.yml)
GENERATOR_LABELS = {"ParallelWaveGANGenerator": "Parallel WaveGAN", "MelGANGenerator": "MelGAN",
                    "HiFiGANGenerator": "HiFi-GAN", "StyleMelGANGenerator": "StyleMelGAN"}


def vocoder_label(vocoder: str) -> str:
    """Display name of what vocoded (a synth.json's "vocoder"): Griffin-Lim, or a checkpoint's generator as the
    config.yml beside it names it (a MelGAN that makes sub-bands is Multi-band MelGAN), whatever dir it sits in;
    without a config, stage 4's name of its exp dir, else the checkpoint's file name."""
    if vocoder == "griffin_lim":
        return "Griffin-Lim"
    if vocoder == "unknown":  # a synth.json that does not say
        return vocoder
    import yaml

    conf = Path(vocoder).parent / "config.yml"
    c = yaml.safe_load(conf.read_text(encoding="utf-8")) if conf.is_file() else None
    if isinstance(c, dict) and c.get("generator_type") in GENERATOR_LABELS:
        bands = int((c.get("generator_params") or {}).get("out_channels", 1))
        label = GENERATOR_LABELS[c["generator_type"]]
        return f"Multi-band {label}" if label == "MelGAN" and bands > 1 else label
    return VOCODER_LABELS.get(Path(vocoder).parent.name, Path(vocoder).name)


def build_vocoder(vocoder: str, conf: dict, griffin_lim_iters: int, device="cpu"):
    """`griffin_lim` or the path of a Parallel WaveGAN checkpoint (its config.yml beside it)."""
    if vocoder == "griffin_lim":
        return GriffinLim(conf, griffin_lim_iters)
    if not Path(vocoder).is_file():
        raise FileNotFoundError(f"--vocoder {vocoder}: neither 'griffin_lim' nor a checkpoint file")
    return PWGVocoder(vocoder, conf, device)


# ---------------------------------------------------------------------------------------------------- training

def checkpoints(outdir: Path) -> list:
    """(steps, path) of OUTDIR/checkpoint-<N>steps.pkl, oldest first."""
    found = []
    for f in outdir.glob("checkpoint-*steps.pkl"):
        m = re.fullmatch(r"checkpoint-(\d+)steps\.pkl", f.name)
        if m:
            found.append((int(m.group(1)), f))
    return sorted(found)


def check_data(config: dict, data_dir: Path) -> None:
    """Sampling rate and mel dimension of the first entries against the config (clear errors, file:line)."""
    import kaldiio

    for name in ("wav.scp", "feats.scp"):
        if not (data_dir / name).is_file():
            raise FileNotFoundError(f"{data_dir / name}: missing (the vocoder trains on wav.scp + feats.scp)")
    wavs = kaldiio.load_scp(str(data_dir / "wav.scp"))
    feats = kaldiio.load_scp(str(data_dir / "feats.scp"))
    utt = next(iter(feats.keys()))
    if utt not in wavs:
        raise ValueError(f"{data_dir / 'feats.scp'}:1: utterance {utt} has no entry in {data_dir / 'wav.scp'}")
    rate, _ = wavs[utt]
    if rate != config["sampling_rate"]:
        raise ValueError(f"{data_dir / 'wav.scp'}: {utt} is {rate} Hz, the vocoder config says "
                         f"sampling_rate {config['sampling_rate']}")
    dim = feats[utt].shape[1]
    if dim != config["num_mels"]:
        raise ValueError(f"{data_dir / 'feats.scp'}:1: {utt} has {dim}-dim features, the vocoder config says "
                         f"num_mels {config['num_mels']}")
    if config.get("generator_type") == "MelGANGenerator" and config["generator_params"].get("in_channels", dim) != dim:
        raise ValueError(f"vocoder config: generator_params.in_channels "
                         f"{config['generator_params']['in_channels']} != num_mels {dim}")
    if config["generator_params"].get("aux_channels", dim) != dim:
        raise ValueError(f"vocoder config: generator_params.aux_channels "
                         f"{config['generator_params']['aux_channels']} != num_mels {dim}")


def load_config(path, max_steps=None) -> dict:
    """A parallel-wavegan yaml config; max_steps overrides train_max_steps and clips the intervals to it."""
    import yaml

    with open(path) as f:
        config = yaml.safe_load(f)
    if max_steps is not None:
        if max_steps < 1:
            raise ValueError(f"--max-steps {max_steps}: must be >= 1")
        config["train_max_steps"] = max_steps
        for k in ("save_interval_steps", "eval_interval_steps", "log_interval_steps"):
            config[k] = min(config[k], max_steps)
    return config


def select_training_device(ngpu: int) -> None:
    """ngpu 0: hide the GPUs (the trainer picks cuda whenever it sees one; call before torch is loaded);
    1: ValueError unless torch sees one."""
    if ngpu == 0:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        return
    import torch

    if not torch.cuda.is_available():
        raise ValueError("--ngpu 1 but torch.cuda.is_available() is False")


def _run_trainer(argv: list, seed: int) -> None:
    """parallel-wavegan-train's main with argv, seeded."""
    import torch

    from local_models.common.compat import scipy_kaiser_alias

    scipy_kaiser_alias()  # parallel_wavegan imports scipy.signal.kaiser
    from parallel_wavegan.bin import train as pwg

    np.random.seed(seed)  # the trainer's random windows (np.random) and batch order (torch)
    torch.manual_seed(seed)
    old_argv = sys.argv
    sys.argv = ["parallel-wavegan-train", *argv]
    try:
        pwg.main()
    finally:
        sys.argv = old_argv


def train(outdir, config: dict, train_dir, valid_dir, seed: int = 0, verbose: int = 1,
          on_start: Optional[Callable[[], object]] = None) -> Path:
    """Train (or resume from the newest OUTDIR/checkpoint-<N>steps.pkl) up to config's train_max_steps, after
    checking both data dirs; nothing is trained when that checkpoint already reached it. ON_START is called once
    the checks passed, right before the trainer runs (jdit_pwg_train: record_training). Returns
    OUTDIR/checkpoint.pkl, a copy of the last checkpoint (OUTDIR/config.yml beside it, as
    `parallel_wavegan.utils.load_model` expects)."""
    import yaml

    outdir = Path(outdir)
    for d in (train_dir, valid_dir):
        check_data(config, Path(d))
    done = checkpoints(outdir)
    final = outdir / "checkpoint.pkl"
    if done and done[-1][0] >= config["train_max_steps"]:
        print(f"jdit_pwg_train: {done[-1][1]} already reached train_max_steps {config['train_max_steps']}")
    else:
        outdir.mkdir(parents=True, exist_ok=True)
        conf_in = outdir / "config.input.yaml"  # the config as trained (with --max-steps applied)
        with open(conf_in, "w") as f:
            yaml.safe_dump(config, f, sort_keys=False)
        argv = ["--config", str(conf_in), "--outdir", str(outdir), "--verbose", str(verbose),
                "--train-wav-scp", f"{train_dir}/wav.scp", "--train-feats-scp", f"{train_dir}/feats.scp",
                "--dev-wav-scp", f"{valid_dir}/wav.scp", "--dev-feats-scp", f"{valid_dir}/feats.scp"]
        if done:
            argv += ["--resume", str(done[-1][1])]
            print(f"jdit_pwg_train: resuming from {done[-1][1]}")
        if on_start is not None:
            on_start()
        _run_trainer(argv, seed)
        done = checkpoints(outdir)
        if not done:
            raise RuntimeError(f"{outdir}: the trainer wrote no checkpoint")
    tmp = final.with_suffix(".pkl.tmp")
    shutil.copyfile(done[-1][1], tmp)
    tmp.replace(final)
    return final
