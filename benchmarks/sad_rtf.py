"""Real-time factor of every SAD system on the same Apollo-like stream, in one run (paper Table 3).

RTF = processing seconds / audio seconds, one thread, this machine's CPU. Goals (issue #3):
statistical SAD <= 0.0047, CNN+HMM <= 0.012, segment RNN <= 0.045 (the paper's Table 3).
"""
import argparse
import importlib.util
import os
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=5.0, help="length of the test stream")
    p.add_argument("--repeats", type=int, default=3, help="best of N runs per system")
    p.add_argument("--systems", nargs="+", default=["energy", "webrtcvad", "silero_vad", "stat_sad"])
    args = p.parse_args()
    import torch

    torch.set_num_threads(1)
    spec = importlib.util.spec_from_file_location("mini", ROOT / "egs/fearless_steps/sad1/local/make_mini_corpus.py")
    mini = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mini)
    from local_models.sad.detectors import get_detector

    wave, _ = mini.build_stream(np.random.default_rng(0), mini.split_voices(0)["eval"], args.minutes * 60)
    audio_s = len(wave) / 8000
    print(f"stream: {audio_s:.0f} s at 8 kHz; threads: torch {torch.get_num_threads()}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; CPU cores: {os.cpu_count()}")
    print("| system | RTF (best of %d) |" % args.repeats)
    print("|---|---|")
    for name in args.systems:
        det = get_detector(name)
        det.scores(wave[:8000], 8000)  # warm-up: model load, imports
        best = min(_timed(det, wave) for _ in range(args.repeats))
        print(f"| {name} | {best / audio_s:.5f} |")


def _timed(det, wave):
    t0 = time.perf_counter()
    det.scores(wave, 8000)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
