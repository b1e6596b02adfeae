#!/usr/bin/env python3
"""Build the Spanish espeak-ng mini corpus in the TC-STAR layout read by local/prepare_tcstar.py.

Two speakers, like the paper's M1 / F1: a male and a female espeak-ng Spanish voice, each reading its own
sentences (local/sentences_es.py). For every utterance: OUT/<SPK>/wav/<utt>.wav (16 kHz, 16 bit),
OUT/<SPK>/txt/<utt>.txt and OUT/<SPK>/lab/<utt>.lab: the recipe's full-context labels with the true phone
times of the synthesis engine (its phone events, aligned to our front end's phones). Deterministic: the same
arguments give byte-identical files.
"""
import argparse
import multiprocessing
import sys
from pathlib import Path

import numpy as np
import soundfile

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sentences_es import sentences  # noqa: E402

from local_models.common.datadir import atomic_open  # noqa: E402
from local_models.common.synth import Voice, espeak_available, synthesize  # noqa: E402
from local_models.salad import frontend  # noqa: E402

SAMPLE_RATE = 16000
SPEAKERS = {  # TC-STAR's two voices of the paper: male M1, female F1
    "M1": Voice("es", "m3", rate=165, pitch=40, pitch_range=60),
    "F1": Voice("es", "f2", rate=165, pitch=62, pitch_range=60),
}


def get_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--utts", type=int, default=160, help="utterances per speaker")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--nj", type=int, default=2)
    p.add_argument("out", help="corpus root (e.g. downloads/mini)")
    return p


def render(job):
    """Synthesise one utterance and write its wav / txt / lab; returns (phones matched, phones)."""
    spk, utt, text, out = job
    voice = SPEAKERS[spk]
    u = synthesize(text, voice, sample_rate=SAMPLE_RATE)
    lines, matched, total = frontend.label_text(text, u.phones, SAMPLE_RATE)
    root = Path(out) / spk
    with atomic_open(root / "wav" / f"{utt}.wav", "wb", encoding=None) as f:
        soundfile.write(f, u.wave, SAMPLE_RATE, subtype="PCM_16", format="WAV")
    with atomic_open(root / "txt" / f"{utt}.txt") as f:
        f.write(text + "\n")
    frontend.write_lab(root / "lab" / f"{utt}.lab", lines)
    return matched, total, len(u.wave) / SAMPLE_RATE


def main(argv=None):
    args = get_parser().parse_args(argv)
    if args.utts < 10:
        sys.exit("make_mini_corpus: --utts must be >= 10 (train / valid / test splits)")
    if not espeak_available():
        sys.exit("make_mini_corpus: espeak-ng is not installed (Debian: espeak-ng libespeak-ng1; tools/install.sh)")
    jobs = []
    for i, spk in enumerate(SPEAKERS):
        for d in ("wav", "txt", "lab"):
            (Path(args.out) / spk / d).mkdir(parents=True, exist_ok=True)
        for j, text in enumerate(sentences(args.utts, seed=args.seed * 100 + i)):
            jobs.append((spk, f"{spk}_{j:04d}", text, args.out))
    from tqdm import tqdm

    with multiprocessing.get_context("fork").Pool(args.nj) as pool:
        res = list(tqdm(pool.imap(render, jobs, chunksize=8), total=len(jobs), desc="mini corpus", mininterval=5,
                        disable=None))
    matched, total, secs = (np.sum([r[k] for r in res]) for k in range(3))
    print(f"make_mini_corpus: {len(jobs)} utterances, {secs / 60:.1f} min, {len(SPEAKERS)} speakers -> {args.out}; "
          f"front-end phones matched to espeak's: {100 * matched / total:.1f} %")


if __name__ == "__main__":
    main()
