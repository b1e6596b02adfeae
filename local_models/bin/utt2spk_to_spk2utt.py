"""Read utt2spk (file or stdin), write spk2utt to stdout."""
import argparse
import sys

from local_models.common.datadir import DataDirError, read_table, utt2spk_to_spk2utt, c_sort_key


def get_parser():
    p = argparse.ArgumentParser(prog="utt2spk_to_spk2utt", description=__doc__)
    p.add_argument("utt2spk", nargs="?", default="/dev/stdin", help="input file (default stdin)")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        spk2utt = utt2spk_to_spk2utt(read_table(args.utt2spk))
    except DataDirError as e:
        print(f"utt2spk_to_spk2utt: {e}", file=sys.stderr)
        return 1
    for spk in sorted(spk2utt, key=c_sort_key):
        print(spk, " ".join(spk2utt[spk]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
