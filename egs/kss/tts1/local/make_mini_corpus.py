#!/usr/bin/env python3
"""Build the Korean espeak-ng mini corpus in the KSS layout read by local/prepare_kss.py.

One speaker, like KSS: espeak-ng's Korean voice with a female variant. Sentences: 2-10 words of CLDR
Korean vocabulary (local_models.common.texts), with commas inside and a final . ? or ! (espeak pauses and
changes its contour there, so the <pau> / . / ? / ! tokens have something to learn). Writes, at espeak's
native 22.05 kHz (16-bit), deterministic in --seed (byte-identical on a rerun):

    OUT/transcript.v.1.4.txt   1/1_0000.wav|text|text|jamo|duration|   (original = expanded = text)
    OUT/1/1_0000.wav ...
    OUT/phones.ctm             true phone times of every utterance (`<stem> 1 <start> <dur> <phone>`)
    OUT/ood/...                the same for the out-of-domain sentences of --ood-text (stems ood_0000 ...)

OUT is built aside and swapped in whole.
"""
import argparse
import multiprocessing
import random
import shutil
import sys
from pathlib import Path

import soundfile

from local_models.common import synth, texts
from local_models.common.datadir import atomic_open
from local_models.jdit.phonemes import ESPEAK_VOICE

SAMPLE_RATE = 22050  # espeak-ng's native rate = the paper's rate: no resampling
VOICE = ESPEAK_VOICE  # the espeak phoneme front end speaks with it too: its tokens are this corpus' phone events
TRANSCRIPT = "transcript.v.1.4.txt"


def get_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--utts", type=int, default=300, help="utterances (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="sentences (default: %(default)s)")
    p.add_argument("--min-words", type=int, default=2)
    p.add_argument("--max-words", type=int, default=10)
    p.add_argument("--nj", type=int, default=2, help="synthesis processes (default: %(default)s)")
    p.add_argument("--ood-text", help="out-of-domain sentences, one per line ('#' lines skipped) -> OUT/ood")
    p.add_argument("out", metavar="OUT", help="corpus root (e.g. downloads/mini)")
    return p


def make_sentences(n, seed, min_words, max_words):
    """CLDR word sequences with punctuation: a comma after a word with p = 0.12, then . (75 %), ? or !"""
    rng = random.Random(f"kss-punct:{seed}")
    out = []
    for s in texts.sentences("ko", n, seed, min_words, max_words):
        words = s.split()
        words = [w + "," if i < len(words) - 1 and rng.random() < 0.12 else w for i, w in enumerate(words)]
        out.append(" ".join(words) + rng.choices([".", "?", "!"], weights=[75, 15, 10])[0])
    return out


def render(job):
    stem, text, wav_path = job
    u = synth.synthesize(text, VOICE)
    if u.sample_rate != SAMPLE_RATE:
        u = synth.resample(u, SAMPLE_RATE)
    with atomic_open(wav_path, "wb", encoding=None) as f:
        soundfile.write(f, u.wave, SAMPLE_RATE, subtype="PCM_16", format="WAV")
    return stem, len(u.wave), SAMPLE_RATE, u.phones


def build(root: Path, prefix: str, sentences, nj):
    """Synthesise sentences into root/1/<prefix>_NNNN.wav; write the transcript and phones.ctm."""
    import jamo

    (root / "1").mkdir(parents=True, exist_ok=True)
    jobs = [(f"{prefix}_{i:04d}", text, str(root / "1" / f"{prefix}_{i:04d}.wav")) for i, text in enumerate(sentences)]
    from tqdm import tqdm

    with multiprocessing.get_context("fork").Pool(max(1, nj)) as pool:
        results = list(tqdm(pool.imap(render, jobs, chunksize=8), total=len(jobs), desc=f"mini corpus {root.name}",
                            mininterval=5, disable=None))
    with atomic_open(root / TRANSCRIPT) as f:
        for (stem, text, _), (_, n, rate, _) in zip(jobs, results):
            f.write(f"1/{stem}.wav|{text}|{text}|{jamo.h2j(text)}|{n / rate:.1f}|\n")
    with atomic_open(root / "phones.ctm") as f:
        f.writelines(synth.format_ctm(results))
    return sum(n / rate for _, n, rate, _ in results)


def main(argv=None):
    args = get_parser().parse_args(argv)
    if args.utts < 10:
        sys.exit("make_mini_corpus: --utts must be >= 10 (train / dev / test splits)")
    if not synth.espeak_available():
        sys.exit("make_mini_corpus: espeak-ng is not installed (Debian: espeak-ng libespeak-ng1; tools/install.sh)")
    out = Path(args.out)
    tmp = out.with_name(f".{out.name}.build")
    shutil.rmtree(tmp, ignore_errors=True)
    secs = build(tmp, "1", make_sentences(args.utts, args.seed, args.min_words, args.max_words), args.nj)
    n_ood = 0
    if args.ood_text:
        ood = [line.strip() for line in Path(args.ood_text).read_text(encoding="utf-8").splitlines()]
        ood = [line for line in ood if line and not line.startswith("#")]
        build(tmp / "ood", "ood", ood, args.nj)
        n_ood = len(ood)
    old = out.with_name(f".{out.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    tmp.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    print(f"make_mini_corpus: {args.utts} utterances ({secs / 60:.1f} min) + {n_ood} out-of-domain, "
          f"voice {VOICE.espeak_name} -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
