"""Collect the SALAD recipe's decode scores into exp/results.json and RESULTS.md (paper Table 2 shape, the paper's
numbers beside ours; Table 3 / Fig. 3 from benchmarks/salad_latency.py when exp/latency.json exists) and plot
the F0 histograms of ground truth, Big RNN and Big SALAD (paper Fig. 2)."""
import argparse
import sys
from pathlib import Path

from local_models.salad import report, systems as names


def main(argv=None):
    p = argparse.ArgumentParser(prog="salad_score", description=__doc__)
    p.add_argument("--speakers", required=True, help="space-separated speakers")
    p.add_argument("--systems", required=True, help="space-separated system names")
    p.add_argument("--test-sets", required=True, help="space-separated test sets")
    p.add_argument("--exp", default="exp")
    p.add_argument("--results", default="RESULTS.md")
    p.add_argument("--corpus", default="mini", help="corpus name for results.json (mini, tcstar)")
    p.add_argument("--speaker-map", default="", help='corpus speakers -> the names used, as stage 1 mapped them '
                   '(e.g. "72:M1 73:F1"): the report says which corpus speaker each column is')
    p.add_argument("--recipe", default=names.RECIPE, help="the recipe's name in results.json (egs/<recipe>)")
    p.add_argument("--sealed-sets", default=None, help="the recipe's sealed sets (space-separated): each one scored "
                   "here counts a look in exp/sealed_looks.tsv and results.json 'sealed_looks' (unset: none counted)")
    p.add_argument("--config-files", default="", help="space-separated files that define the systems (training "
                   "configs, question file): the looks' configuration fingerprint")
    p.add_argument("--option", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                   help="a command-line choice that defines the systems (repeatable), also in the fingerprint")
    args = p.parse_args(argv)
    exp = Path(args.exp)
    try:
        systems = report.score(exp, args.speakers.split(), args.systems.split(), args.test_sets.split(),
                               Path(args.results), args.corpus, names.parse_speaker_map(args.speaker_map),
                               args.recipe, None if args.sealed_sets is None else args.sealed_sets.split(),
                               args.config_files.split(), dict(args.option))
    except (report.NoScores, ValueError, FileNotFoundError) as e:
        sys.exit(f"salad_score: {e}")
    print(f"salad_score: {len(systems)} systems -> {exp}/results.json, {args.results}")


if __name__ == "__main__":
    main()
