#!/usr/bin/env python3
"""Kaldi data dirs of one real Spanish speaker for the SALAD recipe: Tux Paint's stamp descriptions read aloud by
its Spanish reader (Debian package tuxpaint-stamps-default, local_models/common/realspeech.py: `<stem>_desc_es.ogg`,
44.1 kHz stereo Ogg Vorbis, the text from `<stem>.txt`'s `es.utf8=` line).

The reader is named --speaker (the paper's systems are per speaker; the recipe maps the reader onto F1): utterance
ids <speaker>_tuxpaint_es_<stamp>, OUT/<speaker>_{train,valid,test} (wav.scp: sox pipes to 16 kHz mono 16-bit,
the rate the front end's aligner and the WORLD features use; held-out sets by a hash of the utterance id).

Every description goes through the Spanish front end (normalisation: numbers spelt out, punctuation kept or read as
a pause, accents kept) before anything is written; a description holding a character the front end has no
reading for (currency signs, '=', 'º', ...) is left out, each named as <stem>.txt:<line> with its characters, and
one the front end fails on is an error naming the file and line. Prints what was written per set.
"""
import argparse
import sys
from pathlib import Path

from local_models.common import realspeech
from local_models.common.debian import unpacked
from local_models.salad.frontend import label_text
from local_models.salad.frontend.normalisation import unreadable_characters

LANG = "es"
SAMPLE_RATE = 16000  # local_models/salad/labelling.py and acoustic.py work at 16 kHz


def get_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--speaker", default="F1", help="the reader's name in data/ and exp/ (default: %(default)s)")
    p.add_argument("--valid", default="11.5%", help="held-out valid clips: a count or a share (default: %(default)s)")
    p.add_argument("--test", default="11.5%", help="held-out test clips: a count or a share (default: %(default)s)")
    p.add_argument("--root", help="an unpacked package tree (default: fetch and unpack the pinned package, "
                                  "cached in $SPEECH_RECIPES_DEBIAN)")
    p.add_argument("out", metavar="OUT", help="parent of the data dirs (e.g. data)")
    return p


def text_line(clip: realspeech.Clip) -> str:
    """'<dir>/<stem>.txt:<n>': where the clip's description is (the `es.utf8=` line of the stamp's .txt)."""
    stem = clip.path.name[: -len(f"_desc_{LANG}.ogg")]
    txt = clip.path.with_name(f"{stem}.txt")
    lines = txt.read_text(encoding="utf-8").splitlines()
    n = next((i for i, line in enumerate(lines, 1) if line.startswith(f"{LANG}.utf8=")), 1)
    return f"{txt}:{n}"


def readable(clips):
    """(clips the front end reads, ['file:line: characters' of the others]); ValueError naming file and line when
    the front end fails on a text it should read."""
    kept, left_out = [], []
    for c in clips:
        bad = unreadable_characters(c.text)
        if bad:
            left_out.append(f"{text_line(c)}: {' '.join(bad)} in {c.text!r}")
            continue
        try:
            label_text(c.text)
        except Exception as e:  # any front-end failure: the text is what to show
            raise ValueError(f"{text_line(c)}: the Spanish front end cannot read {c.text!r}: {e}") from None
        kept.append(c)
    return kept, left_out


def named(clips, speaker: str):
    """The clips as the speaker SPEAKER's (Kaldi: an utterance id starts with its speaker's)."""
    return [realspeech.Clip(f"{speaker}_{c.utt}", c.path, c.text, speaker) for c in clips]


def main(argv=None):
    a = get_parser().parse_args(argv)
    try:
        root = a.root or unpacked(realspeech.TUXPAINT)
        clips, left_out = readable(realspeech.tuxpaint_clips(root, LANG))
        for line in left_out:
            print(f"prepare_real: left out (no front-end reading for): {line}", file=sys.stderr)
        parts = realspeech.split(named(clips, a.speaker), dev=a.valid, test=a.test)
        sets = {"train": parts["train"], "valid": parts["dev"], "test": parts["test"]}
        realspeech.write_sets(sets, a.out, prefix=f"{a.speaker}_", sample_rate=SAMPLE_RATE)
    except (ValueError, RuntimeError, OSError) as e:
        print(f"prepare_real: error: {e}", file=sys.stderr)
        return 1
    print(f"prepare_real: {root}: {len(clips)} clips of one reader ({len(left_out)} left out)", file=sys.stderr)
    for name, part in sets.items():
        print(f"prepare_real: {Path(a.out) / f'{a.speaker}_{name}'}: {realspeech.describe(part)} -> {SAMPLE_RATE} Hz mono", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
