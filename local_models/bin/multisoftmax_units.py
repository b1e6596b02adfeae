"""Output units of the multi-softmax RNN-T recipe (egs/indic/asr1 stage 3).

For every language L of --langs, from DATA_ROOT/L_train/text only (dev and test never shape a vocabulary):
    LANG_ROOT/L/units.txt       <blank>, L's graphemes, the same with B_ (word start), <unk>: one per line
and LANG_ROOT/union/units.txt (every language's graphemes: the vanilla / one-hot baselines' softmax).
For every set S (default: L_train, L_dev, L_test of every language), with the language of each
utterance taken from DATA_ROOT/S/utt2lid:
    DATA_ROOT/S/text_norm       <utt> <normalised transcript>   (the WER reference)
    DATA_ROOT/S/text_units      <utt> B_x y z B_u ...           (the training target)
A dev/test unit missing from its language's units.txt (a grapheme never seen in L_train) is written as
<unk>, counted, reported on stderr and listed in LANG_ROOT/unknown_units (`<set> <unit> <count>`).
All files are written atomically; the same inputs give the same bytes.
"""
import argparse
import sys
from pathlib import Path

from local_models.common.datadir import DataDirError
from local_models.multisoftmax import data
from local_models.multisoftmax import units as U


def get_parser():
    p = argparse.ArgumentParser(prog="multisoftmax_units", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--langs", default="en hi ta gu",
                   help=f"language codes, space or comma separated (known: {', '.join(U.LANGS)}; default: %(default)s)")
    p.add_argument("--sets", default="",
                   help="data sets to turn into units (default: <lang>_train <lang>_dev <lang>_test of every language)")
    p.add_argument("data_root", help="holds <lang>_train/text and every set's data dir (e.g. data)")
    p.add_argument("lang_root", help="where the unit lists go (e.g. data/lang)")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        data.make_units(Path(args.data_root), Path(args.lang_root), data.split_list(args.langs), args.sets)
    except (DataDirError, ValueError, OSError) as e:
        print(f"multisoftmax_units: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
