"""Collect the ZeroSpeech recipe's ABX, bitrate and resynthesis numbers into exp/results.json and RESULTS.md
(paper 003 Tables 1-3 shapes, the paper's numbers beside ours) and plot ABX against bitrate."""
import argparse
import os
import sys

from local_models.vqvae.report import score, summary_lines


def main(argv=None):
    p = argparse.ArgumentParser(prog="vqvae_score", description=__doc__)
    p.add_argument("--systems", nargs="+", required=True)
    p.add_argument("--sets", nargs="+", required=True)
    p.add_argument("--dev-sets", nargs="*", default=[],
                   help="the dev set the ordering check's candidate is picked on (scored, never a look; none: every "
                        "candidate is compared, none picked)")
    p.add_argument("--inverter", required=True, help="inverter exp dir (its resynth_<set>/<voice>/ results)")
    p.add_argument("--corpus", default=os.environ.get("ZS_CORPUS", "mini"))
    p.add_argument("--exp", default="exp")
    p.add_argument("--results-md", default="RESULTS.md")
    p.add_argument("--sealed-sets", nargs="*", default=[],
                   help="the recipe's sealed sets: each one scored is a look (exp/sealed_looks.tsv, results.json)")
    p.add_argument("--config-files", nargs="*", default=[],
                   help="the configuration files that define the systems (the looks' fingerprint)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="a command-line choice that defines the systems (the looks' fingerprint); repeatable")
    args = p.parse_args(argv)
    options = dict(o.split("=", 1) if "=" in o else (o, "") for o in args.option)
    try:
        scored = score(args.systems, args.sets, args.inverter, args.corpus, args.exp, args.results_md,
                       args.sealed_sets, args.config_files, options, dev_sets=args.dev_sets)
    except (OSError, ValueError, KeyError) as e:
        print(f"vqvae_score: {e}", file=sys.stderr)
        return 1
    for line in summary_lines(scored):
        print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
