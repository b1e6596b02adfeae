#!/usr/bin/env python3
"""Write Kaldi data dirs of a real single speaker: Tux Paint's stamp descriptions read aloud in one language by one
reader (Debian package tuxpaint-stamps-default, local_models/common/realspeech.py: `<stem>_desc_<lang>.ogg`, 44.1
kHz stereo Ogg Vorbis, with the text from `<stem>.txt`'s `<lang>.utf8=` line) -> OUT/{train,dev,test} (wav.scp:
sox pipes to mono 16-bit at --sample-rate; held-out sets by a hash of the utterance id) and, with --ood-text, the
text-only set OUT/ood. Prints what was written: clips, minutes and speakers per set.
Errors name the file (and line).
"""
import argparse
import sys
from pathlib import Path

from local_models.common import realspeech
from local_models.common.debian import unpacked
from local_models.jdit import data


def get_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lang", default="es", help="the reader's language in Tux Paint (default: %(default)s)")
    p.add_argument("--dev", default="5%", help="held-out dev clips: a count or a share (default: %(default)s)")
    p.add_argument("--test", default="5%", help="held-out test clips (default: %(default)s)")
    p.add_argument("--sample-rate", type=int, default=data.SAMPLE_RATE, help="wav.scp rate in Hz (default: %(default)s)")
    p.add_argument("--root", help="an unpacked package tree (default: fetch and unpack the pinned package, "
                                  "cached in $SPEECH_RECIPES_DEBIAN)")
    p.add_argument("--ood-text", help="also write OUT/ood: text only, one sentence per line ('#' lines skipped)")
    p.add_argument("out", metavar="OUT", help="parent of the data dirs (e.g. data)")
    return p


def main(argv=None):
    a = get_parser().parse_args(argv)
    try:
        root = a.root or unpacked(realspeech.TUXPAINT)
        sets = realspeech.split(realspeech.tuxpaint_clips(root, a.lang), a.dev, a.test)
        realspeech.write_sets(sets, a.out, sample_rate=a.sample_rate)
        if a.ood_text:
            data.write_text_set(a.out, "ood", data.read_sentences(a.ood_text))
    except (ValueError, RuntimeError, OSError) as e:
        print(f"prepare_real: error: {e}", file=sys.stderr)
        return 1
    for name, clips in sets.items():
        print(f"prepare_real: {root}: {name}: {realspeech.describe(clips)} -> {Path(a.out) / name} (wav.scp at {a.sample_rate} Hz)",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
