"""Pack a trained system of a recipe into one archive (the recipe's last stage; `pack_system` in
utils/stage_lib.sh): config, checkpoint, statistics, token lists, front-end resources, vocoder and a model card,
in ESPnet's pack layout. Each paper's `local_models/<paper>/pack.py` says what its systems need."""
import argparse
import importlib
import sys

from local_models.common.cli import run_main
from local_models.common.pack import PAPERS


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--paper", required=True, choices=sorted(PAPERS), help="which paper's model")
    p.add_argument("--system", required=True, help="the system (exp/<system>) to pack")
    p.add_argument("--recipe_dir", default=".", help="the recipe (run.sh's directory; default: %(default)s)")
    p.add_argument("--inference_model", default="valid.loss.best.pth",
                   help="checkpoint in exp/<system> to pack (ESPnet's option; default: %(default)s)")
    p.add_argument("--out", required=True, help="archive to write (.tar.gz or .zip), e.g. exp/<system>/packed/model.tar.gz")
    return p


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    pack = importlib.import_module(f"local_models.{args.paper}.pack")
    out = pack.pack_system(args.recipe_dir, args.system, args.out, inference_model=args.inference_model)
    print(f"packed {args.paper}/{args.system}: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, prog="pack_model"))
