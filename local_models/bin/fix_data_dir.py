"""Keep the utterances present in every table, drop malformed lines, re-sort (originals to .backup/)."""
import argparse
import sys

from local_models.common.datadir import DataDirError
from local_models.common.dirops import fix_data_dir


def get_parser():
    p = argparse.ArgumentParser(
        prog="fix_data_dir",
        description="Repair a data dir: drop malformed/duplicate lines, empty transcripts and bad segments, "
        "keep the intersection of utterance keys over all tables, restrict wav.scp to used recordings, "
        "re-sort with LC_ALL=C and regenerate spk2utt. Originals are copied to <data_dir>/.backup/.",
    )
    p.add_argument("data_dir")
    p.add_argument("--dry-run", action="store_true", help="report what would change, write nothing")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        report = fix_data_dir(args.data_dir, dry_run=args.dry_run)
    except (DataDirError, OSError) as e:
        print(f"fix_data_dir: {e}", file=sys.stderr)
        return 1
    for line in report:
        print(line, file=sys.stderr)
    print(f"fix_data_dir: {args.data_dir}: {len(report)} change(s){' (dry run)' if args.dry_run else ''}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
