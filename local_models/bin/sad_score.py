"""Score SAD systems against the reference and write exp/results.json, RESULTS.md and the plots."""
import argparse
import os
import sys
from pathlib import Path

from local_models.common.datadir import DataDirError
from local_models.common.sealed import score_looks
from local_models.sad import report


def get_parser():
    p = argparse.ArgumentParser(prog="sad_score", description=__doc__)
    p.add_argument("--systems", nargs="+", required=True)
    p.add_argument("--sets", nargs="+", required=True, help="sets to score (those with a reference)")
    p.add_argument("--dev", default="dev", help="set the tables call dev")
    p.add_argument("--eval", default="eval", help="set the tables call eval")
    p.add_argument("--corpus", default=os.environ.get("SAD_CORPUS", "mini"))
    p.add_argument("--recipe", default=report.DEFAULT_RECIPE,
                   help="the recipe's name in results.json and the report's title (default: %(default)s)")
    p.add_argument("--exp", default="exp")
    p.add_argument("--data", default="data")
    p.add_argument("--results-md", default="RESULTS.md")
    p.add_argument("--sealed", nargs="*", default=None,
                   help="the recipe's sealed sets: each of --sets among them is a look, counted in "
                   "EXP/sealed_looks.tsv (not given: no look recorded)")
    p.add_argument("--config-files", nargs="*", default=[],
                   help="the configuration files that define the systems (their looks are counted per configuration)")
    p.add_argument("--options", nargs="*", default=[], metavar="KEY=VALUE",
                   help="the stage options that define the systems, part of the configuration")
    return p


def parse_options(pairs) -> dict:
    """{key: value} of KEY=VALUE words (a value may hold '=' and spaces)."""
    out = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise ValueError(f"--options: '{pair}' is not KEY=VALUE")
        out[key] = value
    return out


def scored_files(exp: Path, systems, subset: str, data: Path) -> list:
    """What scoring SUBSET reads: every system's decode dir (hypotheses, scores, durations; not its timings) and the
    set's data dir (references, events). The same files again are a rescoring, not a new look (common/sealed.py)."""
    decodes = [p for s in systems for p in (exp / s / f"decode_{subset}").rglob("*")
               if p.is_file() and not p.name.startswith("rtf") and p.suffix != ".log"]
    return decodes + [p for p in (data / subset).rglob("*") if p.is_file()]


def main(argv=None):
    args = get_parser().parse_args(argv)
    exp = Path(args.exp)
    try:
        scored = report.score_systems(exp, args.systems, args.sets, Path(args.data))
    except (DataDirError, OSError) as e:
        print(f"sad_score: {e}", file=sys.stderr)
        return 1
    looks = None
    if args.sealed is not None:
        try:
            outputs = {x: scored_files(exp, args.systems, x, Path(args.data)) for x in args.sets}
            looks = score_looks(exp, args.sets, args.sealed, args.config_files, parse_options(args.options), outputs)
        except (ValueError, OSError) as e:  # a missing config file, a malformed option or looks log
            print(f"sad_score: {e}", file=sys.stderr)
            return 1
    report.write_reports(exp, scored, args.corpus, args.dev, args.eval, Path(args.results_md), looks, args.recipe)
    for s, m in scored.items():
        for subset in args.sets:
            if subset in m:
                r = m[subset]
                print(f"sad_score: {s:12s} {subset:6s} DCF {100 * r['dcf']:6.2f} % (per file {100 * r['dcf_per_file']:6.2f} %)"
                      f"  F1 {100 * r['f1']:6.2f} %", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
