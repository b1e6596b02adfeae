"""Synthesise a small speech corpus with espeak-ng: wavs, a Kaldi data dir and phone CTM.

Example:
    python -m local_models.bin.synth_corpus --lang hi --num-spk 4 --utts-per-spk 10 \\
        --seed 0 --nj 2 --sample-rate 16000 wav/hi data/hi

Writes OUT_WAV_DIR/<utt>.wav and OUT_DATA_DIR/{wav.scp,text,utt2spk,spk2utt,utt2dur,
utt2num_samples,phones.ctm}. Speakers are <lang>_spkNN, utterances <lang>_spkNN-NNNN.
"""
from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from local_models.common import synth, texts


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="synth_corpus",
        description=__doc__.split("\n\n")[0],
        epilog=f"Supported languages: {', '.join(sorted(synth.SUPPORTED_LANGS))}.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--lang", required=True, help="language code (see the list below)")
    p.add_argument("--num-spk", type=int, default=4, help="number of synthetic speakers (default: %(default)s)")
    p.add_argument("--utts-per-spk", type=int, default=10, help="utterances per speaker (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed for voices and sentences (default: %(default)s)")
    p.add_argument("--nj", type=int, default=1, help="parallel processes (default: %(default)s)")
    p.add_argument("--text-file", help="UTF-8 file of sentences, one per line, used in order (cycled "
                   "if too few) instead of generated sentences")
    p.add_argument("--sample-rate", type=int, help="resample to this rate in Hz (default: espeak's 22050)")
    p.add_argument("--min-words", type=int, default=3, help="min words per generated sentence (default: %(default)s)")
    p.add_argument("--max-words", type=int, default=10, help="max words per generated sentence (default: %(default)s)")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    p.add_argument("wav_dir", metavar="OUT_WAV_DIR")
    p.add_argument("data_dir", metavar="OUT_DATA_DIR")
    return p


def make_items(lang: str, num_spk: int, utts_per_spk: int, seed: int, sentences: List[str]) -> List[synth.Item]:
    """Pair speakers' voices with sentences: utterance k of speaker s gets sentence s*U + k."""
    voices = synth.sample_voices(lang, num_spk, seed)
    items = []
    for s, voice in enumerate(voices):
        spk = f"{lang}_spk{s:02d}"
        for k in range(utts_per_spk):
            text = sentences[(s * utts_per_spk + k) % len(sentences)]
            items.append((f"{spk}-{k:04d}", spk, text, voice))
    return items


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        synth.check_lang(args.lang)
        for name in ("num_spk", "utts_per_spk", "nj"):
            if getattr(args, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 1")
        if args.sample_rate is not None and args.sample_rate < 1000:
            raise ValueError(f"--sample-rate {args.sample_rate} is not a plausible rate in Hz")
        n = args.num_spk * args.utts_per_spk
        if args.text_file:
            sentences = texts.read_text_file(args.text_file)
        else:
            sentences = texts.sentences(args.lang, n, args.seed, args.min_words, args.max_words)
        items = make_items(args.lang, args.num_spk, args.utts_per_spk, args.seed, sentences)
        stats = synth.synthesize_corpus(
            items, args.wav_dir, args.data_dir, sample_rate=args.sample_rate, nj=args.nj,
            progress=False if args.no_progress else None,
        )
    except (ValueError, OSError, synth.EspeakUnavailable) as e:
        print(f"synth_corpus: error: {e}", file=sys.stderr)
        return 1
    print(f"synth_corpus: {stats.num_utts} utterances, {stats.total_seconds / 60:.1f} min of audio "
          f"-> {args.data_dir}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
