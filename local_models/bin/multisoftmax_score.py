"""Score the multilingual RNN-T recipe (egs/indic/asr1 stage 7): exp/results.json and RESULTS.md in the shape of
the paper's Tables 2-7, the paper's numbers beside ours, and the switch-off trade-off plot.

Reads, for every test set S (data/S/text_norm is the reference, data/S/utt2lid the true language):
    EXP/<system>/decode_S/known/{hyp,hyp_lang}             language given (vanilla: never used)
    EXP/multisoftmax_lid/decode_S/lidfree/{hyp,hyp_lang,hyp_oracle,decode_stats.json}
    EXP/multisoftmax_lid/decode_S/switchoff/<tau>_<s_th>/{hyp,hyp_lang,decode_stats.json}
    EXP/multisoftmax_lid/decode_<lang>_dev/switchoff/...   the same on dev: the setting is chosen there
A test set that is not one of the recipe's own (<lang>_test) gets its own table (generalisation check).
Metric definitions: local_models/multisoftmax/scoring.py (written into RESULTS.md as well).
"""
import argparse
import sys
from pathlib import Path

from local_models.multisoftmax import report, systems


LANGS = "en hi ta gu"


def get_parser():
    p = argparse.ArgumentParser(prog="multisoftmax_score", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--langs", default=LANGS)
    p.add_argument("--systems", default=" ".join(systems.expand(systems.SYSTEMS, LANGS.split())),
                   help="trained systems (mono expanded)")
    p.add_argument("--finetune", default="onehot multisoftmax", help="finetuned seeds (ft_<seed>_<lang>)")
    p.add_argument("--test-sets", default="", help="default: <lang>_test of every language")
    p.add_argument("--corpus", default="mini", help="mini | indic (goes into results.json)")
    p.add_argument("--data", default="data")
    p.add_argument("--exp", default="exp")
    p.add_argument("--results", default="RESULTS.md")
    p.add_argument("--paper-config", default="conf/tuning/train.yaml",
                   help="the paper-size training config: Table 6 at the paper's size is counted from it")
    p.add_argument("--note", default="", help="a line about the run (sizes, epochs) for RESULTS.md")
    p.add_argument("--chosen-switch-off", action="store_true",
                   help="only print the tau:s_th that scoring chose on the dev sets (EXP/results.json) and exit")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    if args.chosen_switch_off:
        try:
            print(report.chosen_switch_off(args.exp))
        except ValueError as e:
            print(f"multisoftmax_score: {e}", file=sys.stderr)
            return 1
        return 0
    return report.run(options(args))


def options(args) -> report.ScoreOptions:
    """report.run's options from the parsed ones (space-separated lists split into words)."""
    return report.ScoreOptions(langs=tuple(args.langs.split()), systems=tuple(args.systems.split()),
                               finetune=tuple(args.finetune.split()), test_sets=tuple(args.test_sets.split()),
                               corpus=args.corpus, data=Path(args.data), exp=Path(args.exp),
                               results=Path(args.results), paper_config=Path(args.paper_config), note=args.note)


if __name__ == "__main__":
    sys.exit(main())
