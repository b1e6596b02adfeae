"""Real-time factor of every SAD system on the same Apollo-like stream, in one run (paper Table 3).

RTF = processing seconds / audio seconds (scores + the decision: threshold, HMM Viterbi, median filter or
segment OR), one thread, this machine's CPU. Goals (issue #3): statistical SAD <= 0.0047, CNN+HMM <= 0.012,
segment RNN <= 0.045 (the paper's Table 3).

Neural systems: with --arch paper (default) the nets are built at the paper's size from the recipe's
conf/tuning/train_<model>.yaml with random weights (speed does not depend on the weights, so no training is
needed); with --arch trained they are the recipe's trained models under --exp-dir.
"""
import argparse
import importlib.util
import os
import time
from pathlib import Path

import numpy as np

from local_models.sad.systems import DETECTORS, VOTE

ROOT = Path(__file__).resolve().parents[1]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=5.0, help="length of the test stream")
    p.add_argument("--repeats", type=int, default=3, help="best of N runs per system")
    p.add_argument("--systems", nargs="+", choices=DETECTORS, default=[n for n in DETECTORS if n != VOTE])
    p.add_argument("--arch", choices=["paper", "trained"], default="paper")
    p.add_argument("--exp-dir", default=str(ROOT / "egs/fearless_steps/sad1/exp"), help="for --arch trained")
    args = p.parse_args()
    os.environ["SAD_EXP_DIR"] = args.exp_dir
    import torch

    torch.set_num_threads(1)
    spec = importlib.util.spec_from_file_location("mini", ROOT / "egs/fearless_steps/sad1/local/make_mini_corpus.py")
    mini = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mini)
    from local_models.sad.registry import get_detector

    wave, _ = mini.build_stream(np.random.default_rng(0), mini.split_voices(0)["eval"], args.minutes * 60)
    audio_s = len(wave) / 8000
    print(f"stream: {audio_s:.0f} s at 8 kHz; threads: torch {torch.get_num_threads()}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; CPU cores: {os.cpu_count()}")
    print(f"neural nets: {args.arch}" + (f" ({args.exp_dir})" if args.arch == "trained" else " size, random weights"))
    print("| system | RTF (best of %d) |" % args.repeats)
    print("|---|---|")
    for name in args.systems:
        det = get_detector(name)
        if args.arch == "paper" and hasattr(det, "model_name"):
            det._net = paper_size_net(det.model_name)
        det.decide(det.scores(wave[:8000], 8000))  # warm-up: model load, imports
        best = min(_timed(det, wave) for _ in range(args.repeats))
        print(f"| {name} | {best / audio_s:.5f} |")


def paper_size_net(model: str):
    import yaml

    from local_models.sad.neural import build_net

    return build_net(yaml.safe_load((ROOT / f"egs/fearless_steps/sad1/conf/tuning/train_{model}.yaml").read_text())).eval()


def _timed(det, wave):
    t0 = time.perf_counter()
    det.decide(det.scores(wave, 8000))
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
