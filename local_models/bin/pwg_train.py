"""Train a Parallel WaveGAN vocoder (the `parallel-wavegan` package's own trainer) on a recipe's data dirs.

Each data dir needs wav.scp (16-bit PCM wavs, or `cmd |` pipes) and feats.scp (the recipe's log-mel frames,
NOT normalised: the vocoder learns on what the acoustic models output after de-normalisation). The trainer cuts
random `batch_max_steps`-sample windows with their mel frames (hop_size samples per frame).

Before training this checks that the config matches the data (sampling rate of the first wav, mel dimension
of the first feature matrix) and names the file when it does not. Training resumes from the newest
OUTDIR/checkpoint-<N>steps.pkl; when that already reached train_max_steps nothing is trained. The result is
OUTDIR/checkpoint.pkl (a copy of the last checkpoint; OUTDIR/config.yml beside it, as
`parallel_wavegan.utils.load_model` expects). Seeded: the same run gives the same vocoder.
"""
import argparse
import os
import re
import shutil
import sys
from pathlib import Path

import local_models.common.compat  # noqa: F401  (scipy.signal.kaiser for parallel_wavegan)


def get_parser():
    p = argparse.ArgumentParser(prog="pwg_train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", required=True, help="parallel-wavegan yaml config")
    p.add_argument("--train-dir", required=True, help="data dir with wav.scp + feats.scp")
    p.add_argument("--valid-dir", required=True, help="data dir with wav.scp + feats.scp")
    p.add_argument("--max-steps", type=int, default=None,
                   help="override train_max_steps (save / eval / log intervals clipped to it; for smoke runs)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ngpu", type=int, default=0, choices=[0, 1],
                   help="0: train on the CPU even where a GPU is visible; 1: on the GPU (parallel-wavegan's trainer "
                        "takes the first visible one; its multi-GPU mode needs its own launcher)")
    p.add_argument("--verbose", type=int, default=1, help="the trainer's logging level")
    p.add_argument("outdir")
    return p


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
    if config["generator_params"].get("aux_channels", dim) != dim:
        raise ValueError(f"vocoder config: generator_params.aux_channels "
                         f"{config['generator_params']['aux_channels']} != num_mels {dim}")


def load_config(path, max_steps=None) -> dict:
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


def train(args) -> Path:
    import numpy as np
    import torch
    import yaml
    from parallel_wavegan.bin import train as pwg

    outdir = Path(args.outdir)
    config = load_config(args.config, args.max_steps)
    for d in (args.train_dir, args.valid_dir):
        check_data(config, Path(d))
    done = checkpoints(outdir)
    final = outdir / "checkpoint.pkl"
    if done and done[-1][0] >= config["train_max_steps"]:
        print(f"pwg_train: {done[-1][1]} already reached train_max_steps {config['train_max_steps']}")
    else:
        outdir.mkdir(parents=True, exist_ok=True)
        conf_in = outdir / "config.input.yaml"  # the config as trained (with --max-steps applied)
        with open(conf_in, "w") as f:
            yaml.safe_dump(config, f, sort_keys=False)
        argv = ["--config", str(conf_in), "--outdir", str(outdir), "--verbose", str(args.verbose),
                "--train-wav-scp", f"{args.train_dir}/wav.scp", "--train-feats-scp", f"{args.train_dir}/feats.scp",
                "--dev-wav-scp", f"{args.valid_dir}/wav.scp", "--dev-feats-scp", f"{args.valid_dir}/feats.scp"]
        if done:
            argv += ["--resume", str(done[-1][1])]
            print(f"pwg_train: resuming from {done[-1][1]}")
        np.random.seed(args.seed)  # the trainer's random windows (np.random) and batch order (torch)
        torch.manual_seed(args.seed)
        old_argv = sys.argv
        sys.argv = ["parallel-wavegan-train", *argv]
        try:
            pwg.main()
        finally:
            sys.argv = old_argv
        done = checkpoints(outdir)
        if not done:
            raise RuntimeError(f"{outdir}: the trainer wrote no checkpoint")
    tmp = final.with_suffix(".pkl.tmp")
    shutil.copyfile(done[-1][1], tmp)
    tmp.replace(final)
    return final


def main(argv=None):
    args = get_parser().parse_args(argv)
    if args.ngpu == 0:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the trainer picks cuda whenever it sees one; before torch loads it
    else:
        import torch

        if not torch.cuda.is_available():
            sys.exit("pwg_train: --ngpu 1 but torch.cuda.is_available() is False")
    try:
        final = train(args)
    except (ValueError, OSError) as e:
        sys.exit(f"pwg_train: {e}")
    print(f"pwg_train: vocoder -> {final}")


if __name__ == "__main__":
    main()
