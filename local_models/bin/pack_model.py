"""Pack a trained system of a recipe into one archive (the recipe's last stage; `pack_system` in
utils/stage_lib.sh): config, checkpoint, statistics, token lists, front-end resources, vocoder and a model card,
in ESPnet's pack layout. Each paper's `local_models/<paper>/pack.py` says what its systems need."""
import argparse
import importlib
import sys
from pathlib import Path

from local_models.common.cli import run_main
from local_models.common.pack import PAPERS


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--paper", required=True, choices=sorted(PAPERS), help="which paper's model")
    p.add_argument("--system", required=True, action="append",
                   help="the system (exp/<system>) to pack; repeat it to pack several in one process")
    p.add_argument("--recipe_dir", default=".", help="the recipe (run.sh's directory; default: %(default)s)")
    p.add_argument("--inference_model", default="valid.loss.best.pth",
                   help="checkpoint in exp/<system> to pack (ESPnet's option; default: %(default)s)")
    p.add_argument("--out", help="archive to write (.tar.gz or .zip); one --system only (default: "
                                 "RECIPE_DIR/exp/<system>/packed/model.tar.gz)")
    return p


def main(argv=None) -> int:
    parser = get_parser()
    args = parser.parse_args(argv)
    if args.out and len(args.system) > 1:
        parser.error(f"--out names one archive, but {len(args.system)} systems were given: leave --out out")
    pack = importlib.import_module(f"local_models.{args.paper}.pack")
    for system in args.system:
        where = args.out or Path(args.recipe_dir) / "exp" / system / "packed" / "model.tar.gz"
        out = pack.pack_system(args.recipe_dir, system, where, inference_model=args.inference_model)
        print(f"packed {args.paper}/{system}: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, prog="pack_model"))
