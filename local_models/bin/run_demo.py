"""make demo / make reproduce: run every recipe under egs/ and join what came out.

  --mode demo       (make demo) each recipe's local/demo.sh: a quick-size run, its pack stage, then the packed
                    models' commands on input no training set holds; sections joined in demo_summary.md
  --mode reproduce  (make reproduce) each recipe's full ./run.sh on its mini corpus (or the corpus db.sh names);
                    headline numbers in reproduce_summary.md (every RESULTS.md is rewritten by its recipe)
"""
import argparse
import os
import sys
from pathlib import Path

from local_models.common.demo import demo, find_recipes, reproduce

ROOT = Path(__file__).resolve().parents[2]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="run_demo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=("demo", "reproduce"), default="demo", help="default: %(default)s")
    p.add_argument("--egs", default=str(ROOT / "egs"), help="recipe root (default: egs/ of this checkout)")
    p.add_argument("--only", nargs="*", default=(), help="recipe names like fearless_steps/sad1")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                   help="demo: recipes run at a time (default: %(default)s)")
    p.add_argument("--summary", default=None, help="where to write (default: demo_summary.md / reproduce_summary.md)")
    args = p.parse_args(argv)
    egs = Path(args.egs)
    if not find_recipes(egs, args.only):
        print("run_demo: no recipes under egs/ yet (egs/TEMPLATE only documents the pattern); nothing to run")
        return 0
    summary = Path(args.summary or ROOT / f"{args.mode}_summary.md")
    failed = demo(egs, summary, args.only, args.jobs) if args.mode == "demo" else reproduce(egs, summary, args.only)
    if failed:
        print(f"run_demo: {failed} recipe(s) failed (see {summary})", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
