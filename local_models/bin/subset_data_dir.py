"""Write a subset of a data dir chosen by count, utterance list, speaker list or per speaker."""
import argparse
import sys

from local_models.common.datadir import DataDirError
from local_models.common.dirops import select_utts, write_subset


def _read_list(path):
    with open(path, encoding="utf-8") as f:
        return [line.split()[0] for line in f if line.strip()]


def get_parser():
    p = argparse.ArgumentParser(
        prog="subset_data_dir",
        description="Copy the chosen utterances of SRC into DST with every table restricted consistently "
        "(wav.scp to the recordings used when `segments` exists). DST is replaced.",
    )
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--first", type=int, metavar="N", help="first N utterances (sorted order)")
    g.add_argument("--last", type=int, metavar="N", help="last N utterances")
    g.add_argument("--utt-list", metavar="FILE", help="utterance ids, first field of each line")
    g.add_argument("--spk-list", metavar="FILE", help="speaker ids, first field of each line")
    g.add_argument("--per-spk", type=int, metavar="N", help="first N utterances of every speaker")
    p.add_argument("src")
    p.add_argument("dst")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        utts = select_utts(
            args.src,
            first=args.first,
            last=args.last,
            utt_list=_read_list(args.utt_list) if args.utt_list else None,
            spk_list=_read_list(args.spk_list) if args.spk_list else None,
            per_spk=args.per_spk,
        )
        if not utts:
            raise ValueError("the selection is empty")
        write_subset(args.src, args.dst, utts)
    except (DataDirError, ValueError, OSError) as e:
        print(f"subset_data_dir: {e}", file=sys.stderr)
        return 1
    print(f"subset_data_dir: {len(utts)} utterances -> {args.dst}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
