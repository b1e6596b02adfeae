"""Read spk2utt (file or stdin), write utt2spk to stdout."""
import argparse
import sys

from local_models.common.datadir import DataDirError, read_table, spk2utt_to_utt2spk, c_sort_key


def get_parser():
    p = argparse.ArgumentParser(prog="spk2utt_to_utt2spk", description=__doc__)
    p.add_argument("spk2utt", nargs="?", default="/dev/stdin", help="input file (default stdin)")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        table = read_table(args.spk2utt)
        utt2spk = spk2utt_to_utt2spk({s: v.split() for s, v in table.items()})
    except (DataDirError, ValueError) as e:
        print(f"spk2utt_to_utt2spk: {e}", file=sys.stderr)
        return 1
    for utt in sorted(utt2spk, key=c_sort_key):
        print(utt, utt2spk[utt])
    return 0


if __name__ == "__main__":
    sys.exit(main())
