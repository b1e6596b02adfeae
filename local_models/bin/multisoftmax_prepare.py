"""Training inputs of the multilingual RNN-T systems (egs/indic/asr1 stage 4, before training).

For every set S of --sets (default <lang>_{train,dev,test} of every --langs language), from
DATA_ROOT/S/{text_units,utt2lid} (stage 3), DUMP_ROOT/S/feats.{scp,shape} (stage 2) and
LANG_ROOT/union/units.txt:
    DUMP_ROOT/S/text_int        <utt> union-vocabulary unit ids   (every system's target)
    DUMP_ROOT/S/lid_int         <utt> language id (position in --langs)
    DUMP_ROOT/S/utt2category    <utt> <lang>  (ESPnet's folded sampler: single-language mini-batches)
and the pooled multilingual sets DUMP_ROOT/train_all and DUMP_ROOT/dev_all (every language's train / dev,
same files, plus feats.scp and feats.shape), and DUMP_ROOT/train_mixed: train_all without utt2category (ESPnet then
mixes languages within a mini-batch). DUMP_ROOT/train_all/stats.npz holds the mean and standard
deviation of the pooled training frames (global feature normalisation of every system) and the hours per
language. Errors name the file and line; files are written atomically; the same inputs give the same bytes.
"""
import argparse
import sys
from pathlib import Path

from local_models.common.datadir import DataDirError
from local_models.multisoftmax import data


def get_parser():
    p = argparse.ArgumentParser(prog="multisoftmax_prepare", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--langs", default="en hi ta gu", help="language codes in LID-id order (default: %(default)s)")
    p.add_argument("--sets", default="", help="sets to convert (default: <lang>_{train,dev,test} of every language)")
    p.add_argument("--frame-shift-ms", type=float, default=10.0, help="feature frame shift (hours per language)")
    p.add_argument("data_root", help="data dirs with text_units and utt2lid (e.g. data)")
    p.add_argument("lang_root", help="unit lists (e.g. data/lang)")
    p.add_argument("dump_root", help="feature dirs (e.g. dump/fbank)")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        data.prepare(Path(args.data_root), Path(args.lang_root), Path(args.dump_root), data.split_list(args.langs),
                     args.sets, args.frame_shift_ms)
    except (DataDirError, ValueError, OSError) as e:
        print(f"multisoftmax_prepare: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
