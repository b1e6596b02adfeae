"""Rewrite the last column of README.md's recipe table (one line per recipe: ours vs the paper, holds or not) from
each recipe's RESULTS.md headline section (which its scoring stage generates from exp/results.json).
Usage: python -m local_models.bin.update_readme [--readme PATH] (`make readme`). Recipes whose RESULTS.md has no
headline yet keep their cell; recipes whose headline local_models/common/readme.py cannot summarise get a count of
the checks that hold; both are listed. Exit 1 when README breaks its size limits (lines, line length)."""
import argparse
import sys
from pathlib import Path

from local_models.common.readme import check_shape, update_readme


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="update_readme", description=__doc__)
    p.add_argument("--readme", type=Path, default=Path(__file__).resolve().parents[2] / "README.md")
    args = p.parse_args(argv)
    if not args.readme.is_file():
        print(f"update_readme: {args.readme}: no such file", file=sys.stderr)
        return 1
    try:
        stale, unsummarised = update_readme(args.readme)
    except ValueError as e:
        print(f"update_readme: {args.readme}: {e}", file=sys.stderr)
        return 1
    for recipe in stale:
        print(f"update_readme: {recipe}/RESULTS.md has no headline section yet (regenerate it): cell left as is",
              file=sys.stderr)
    for recipe in unsummarised:
        print(f"update_readme: {recipe}/RESULTS.md: headline not summarised by local_models/common/readme.py "
              "SUMMARIES (worded otherwise?): the cell counts the checks that hold", file=sys.stderr)
    problems = check_shape(args.readme.read_text())
    for problem in problems:
        print(f"update_readme: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
