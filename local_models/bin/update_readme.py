"""Rewrite README.md's per-recipe "measured" cells from each recipe's RESULTS.md headline section (which its
scoring stage generates from exp/results.json). Usage: python -m local_models.bin.update_readme [--readme PATH]
(`make readme`). Recipes whose RESULTS.md has no headline yet keep their cell and are listed."""
import argparse
import sys
from pathlib import Path

from local_models.common.readme import update_readme


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="update_readme", description=__doc__)
    p.add_argument("--readme", type=Path, default=Path(__file__).resolve().parents[2] / "README.md")
    args = p.parse_args(argv)
    if not args.readme.is_file():
        print(f"update_readme: {args.readme}: no such file", file=sys.stderr)
        return 1
    for recipe in update_readme(args.readme):
        print(f"update_readme: {recipe}/RESULTS.md has no headline section yet (regenerate it): cell left as is",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
