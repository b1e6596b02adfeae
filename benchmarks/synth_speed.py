"""Speed of the espeak-ng mini-corpus synthesis (local_models.common.synth).

Measures, end to end (voices, sentences, synthesis, phone tiling, wav + table writes):
  1. x real time of synthesize_corpus for one language (default hi) on --nj processes;
  2. wall time to make --minutes of Hindi + Korean + English speech with phone alignments
     (the goal is 5 minutes in under 10 s on 2 cores).

Usage: PYTHONPATH=. python benchmarks/synth_speed.py [--nj 2] [--minutes 5] [--sample-rate 16000]
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import List

from local_models.common import synth, texts
from local_models.common.datadir import read_table

_MEAN_UTT_SECONDS = 3.2  # rough espeak duration of a 3..10 word sentence; used only for sizing


def _items(lang: str, seconds: float, seed: int) -> List[synth.Item]:
    n_spk = 4
    per_spk = max(1, math.ceil(seconds / _MEAN_UTT_SECONDS / n_spk))
    voices = synth.sample_voices(lang, n_spk, seed)
    sents = texts.sentences(lang, n_spk * per_spk, seed)
    items = []
    for s, voice in enumerate(voices):
        spk = f"{lang}_spk{s:02d}"
        for k in range(per_spk):
            items.append((f"{spk}-{k:04d}", spk, sents[s * per_spk + k], voice))
    return items


def _timed_corpus(items, nj: int, sample_rate, workdir: Path):
    start = time.perf_counter()
    stats = synth.synthesize_corpus(items, workdir / "wav", workdir / "data", sample_rate=sample_rate,
                                    nj=nj, progress=False)
    elapsed = time.perf_counter() - start
    n_phones = sum(1 for _ in open(workdir / "data" / "phones.ctm", encoding="utf-8"))
    assert len(read_table(workdir / "data" / "utt2dur")) == stats.num_utts
    return stats, elapsed, n_phones


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nj", type=int, default=2, help="processes (default: %(default)s)")
    p.add_argument("--lang", default="hi", help="language of the x-real-time test (default: %(default)s)")
    p.add_argument("--seconds", type=float, default=600, help="audio for the x-real-time test (default: %(default)s)")
    p.add_argument("--minutes", type=float, default=5, help="audio for the hi+ko+en test (default: %(default)s)")
    p.add_argument("--sample-rate", type=int, default=None, help="resample to this rate (default: 22050, none)")
    args = p.parse_args(argv)

    # Warm-up outside the timings: babel CLDR loading and the parent's espeak initialisation.
    for lang in (args.lang, "hi", "ko", "en-us"):
        texts.vocabulary(lang)
    synth.synthesize("warm up", synth.Voice("en-us"), args.sample_rate)

    with tempfile.TemporaryDirectory() as tmp:
        stats, elapsed, n_phones = _timed_corpus(_items(args.lang, args.seconds, 0), args.nj,
                                                 args.sample_rate, Path(tmp) / "one")
        print(f"[{args.lang}] {stats.total_seconds:.0f} s of audio ({stats.num_utts} utts, {n_phones} phones) "
              f"in {elapsed:.2f} s with nj={args.nj}: {stats.total_seconds / elapsed:.0f}x real time")

        per_lang = args.minutes * 60 / 3
        items = [it for lang in ("hi", "ko", "en-us") for it in _items(lang, per_lang, 1)]
        stats, elapsed, n_phones = _timed_corpus(items, args.nj, args.sample_rate, Path(tmp) / "mix")
        print(f"[hi+ko+en-us] {stats.total_seconds / 60:.2f} min of audio with phone alignments "
              f"({stats.num_utts} utts, {n_phones} phones) in {elapsed:.2f} s with nj={args.nj}: "
              f"{stats.total_seconds / elapsed:.0f}x real time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
