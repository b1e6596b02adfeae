"""Speed of the project's DTW (local_models.common.dtw): librosa.sequence.dtw against the compiled kernel.

Why the ABX keeps a compiled batched kernel and the MCD does not:
  1. ABX (ZeroSpeech 2019): many small path-length-normalised DTWs, one per (X item, A/B item) pair of a
     context; items are triphones of ~250 ms = ~25 frames of 10 ms MFCC 39 (or ~6 codes of 40 ms).
     Compares a per-pair `dtw_normalised` (librosa) loop with one `dtw_normalised_pairs` call.
  2. MCD: one DTW path per utterance over 5 ms mel-cepstrum frames (2-6 s = 400-1200 frames). Compares
     `dtw_path` (librosa) with the compiled kernel's forward pass + backtrack (`dtw_normalised_compiled`,
     the same recurrence, a lower bound for a compiled path kernel), next to the WORLD analysis of one
     utterance (`mcd.mel_cepstrum`), which the MCD pays anyway.

Usage: PYTHONPATH=. python benchmarks/dtw_speed.py [--items 60] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.spatial.distance import cdist

from local_models.common import dtw


def _best(fn, repeat: int) -> float:
    fn()  # compile / warm up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def abx_block(rng, items: int, mean_frames: int, dims: int):
    """Angular-distance block of one ABX context: every item against every item (as abx._context_distances)."""
    lens = np.maximum(1, rng.poisson(mean_frames, items)).astype(np.int64)
    offs = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    x = rng.standard_normal((int(lens.sum()), dims))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    block = np.arccos(np.clip(x @ x.T, -1.0, 1.0)) / np.pi
    spk = rng.integers(0, 4, items)
    pi, pj = np.nonzero(spk[:, None] != spk[None, :])
    return block, offs, lens, pi, pj


def bench_abx(rng, items: int, repeat: int) -> None:
    print("ABX: path-length-normalised DTW of every cross-speaker item pair of one context")
    print(f"{'frames/item':>12} {'pairs':>7} {'librosa per pair':>17} {'compiled batch':>15} {'speed-up':>9}")
    for frames, dims, label in ((25, 39, "MFCC 10 ms"), (6, 64, "codes 40 ms")):
        block, offs, lens, pi, pj = abx_block(rng, items, frames, dims)

        def librosa_loop():
            return [dtw.dtw_normalised(block[offs[i]:offs[i] + lens[i], offs[j]:offs[j] + lens[j]])
                    for i, j in zip(pi, pj)]

        def compiled():
            return dtw.dtw_normalised_pairs(block, offs, lens, offs, lens, pi, pj)

        assert np.array_equal(np.array(librosa_loop()), compiled())
        t_lib, t_jit = _best(librosa_loop, repeat), _best(compiled, repeat)
        print(f"{frames:>5} ({label:>11}) {len(pi):>6} {t_lib * 1e3:>14.1f} ms {t_jit * 1e3:>12.2f} ms "
              f"{t_lib / t_jit:>8.0f}x")


def bench_mcd(rng, repeat: int) -> None:
    print("MCD: one DTW path per utterance (5 ms frames, order 23)")
    print(f"{'frames':>11} {'librosa path':>13} {'compiled (no path)':>19}")
    for n in (400, 800, 1200):
        m = int(n * 1.1)
        walk = lambda t: np.cumsum(rng.standard_normal((t, 23)) * 0.3, axis=0)  # noqa: E731
        cost = cdist(walk(n), walk(m))
        t_lib = _best(lambda: dtw.dtw_path(cost), repeat)
        t_jit = _best(lambda: dtw.dtw_normalised_compiled(cost), repeat)
        print(f"{n:>5}x{m:<5} {t_lib * 1e3:>10.1f} ms {t_jit * 1e3:>16.1f} ms")
    from local_models.common import mcd

    sr, seconds = 16000, 4.0
    t = np.arange(int(sr * seconds)) / sr
    wave = 0.3 * np.sin(2 * np.pi * 140 * t) * (1 + 0.3 * np.sin(2 * np.pi * 3 * t))
    wave += 0.01 * rng.standard_normal(len(t))
    for method in ("dio", "harvest"):
        t_w = _best(lambda: mcd.mel_cepstrum(wave, sr, f0_method=method), 1)
        print(f"WORLD analysis of one {seconds:.0f} s utterance ({method}): {t_w * 1e3:.0f} ms "
              "(twice per utterance: reference and hypothesis)")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--items", type=int, default=60, help="items in the ABX context block")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    bench_abx(rng, args.items, args.repeat)
    print()
    bench_mcd(rng, args.repeat)


if __name__ == "__main__":
    main()
