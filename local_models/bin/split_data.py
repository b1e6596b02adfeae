"""Split a data dir into NJ parts: <data>/split<NJ>/<1..NJ>/ (Kaldi layout)."""
import argparse
import sys

from local_models.common.datadir import DataDirError
from local_models.common.dirops import split_data_dir


def get_parser():
    p = argparse.ArgumentParser(
        prog="split_data",
        description="Split DATA into NJ contiguous parts of near-equal size, written to DATA/splitNJ/1..NJ "
        "(each a complete data dir). With --per-spk every speaker stays within one part.",
    )
    p.add_argument("--per-spk", action="store_true", help="keep each speaker's utterances in one part")
    p.add_argument("data_dir")
    p.add_argument("nj", type=int)
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        parts = split_data_dir(args.data_dir, args.nj, per_spk=args.per_spk)
    except (DataDirError, ValueError, OSError) as e:
        print(f"split_data: {e}", file=sys.stderr)
        return 1
    print(f"split_data: {args.data_dir} -> {len(parts)} parts in {parts[0].parent}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
