"""Choose JDI-T's aligner settings on dev from variants trained apart (egs/kss/tts1/local/choose_departures.sh):
each NAME=WORKDIR is a recipe work dir (exp/, data/) whose stage 5 aligned --dev-set. Writes the comparison and the
kept variant (--out, markdown) and prints the kept variant's name. The rule (local_models.jdit.report.choose): the
variant with the lower aligner duration MAE on dev is kept only when the 95 % interval of its difference from
--default's lies below zero; otherwise --default (the paper's settings)."""
import argparse
import sys
from pathlib import Path

from local_models.common.datadir import atomic_open
from local_models.common.cli import results, run_main


def get_parser():
    p = argparse.ArgumentParser(prog="jdit_choose", description=__doc__)
    p.add_argument("variants", nargs="+", metavar="NAME=WORKDIR")
    p.add_argument("--dev-set", default="dev")
    p.add_argument("--default", default="paper", help="the variant kept unless another is better on dev")
    p.add_argument("--out", required=True, help="markdown report")
    return p


def parse_variants(items) -> dict:
    out = {}
    for item in items:
        name, sep, work = item.partition("=")
        if not sep or not name or not work:
            raise ValueError(f"{item!r}: give NAME=WORKDIR")
        if name in out:
            raise ValueError(f"variant {name!r} given twice")
        out[name] = work
    return out


def main(argv=None) -> int:
    from local_models.jdit.report import choose

    args = get_parser().parse_args(argv)
    kept, lines = choose(parse_variants(args.variants), args.dev_set, args.default)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(args.out) as f:
        f.write("\n".join(lines) + "\n")
    print(kept, file=results())
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, prog="jdit_choose"))
