"""Score the multilingual RNN-T recipe (egs/indic/asr1 stage 7): exp/results.json and RESULTS.md in the shape of
the paper's Tables 2-7, the paper's numbers beside ours, and the switch-off trade-off plot.

Reads, for every test set S (data/S/text_norm is the reference, data/S/utt2lid the true language):
    EXP/<system>/decode_S/known/{hyp,hyp_lang}             language given (vanilla: never used)
    EXP/multisoftmax_lid/decode_S/lidfree/{hyp,hyp_lang,hyp_oracle,decode_stats.json}
    EXP/multisoftmax_lid/decode_S/switchoff/<tau>_<s_th>/{hyp,hyp_lang,decode_stats.json}
    EXP/multisoftmax_lid/decode_D/switchoff/...   the same on every --dev-sets D: the setting is chosen there
                                                    (EXP/switch_off_choice.json)
A --dev-sets set that is one of --sealed-sets is refused (choices are made on dev); each scoring of a sealed set
is a look, counted in results.json "sealed_looks" under the fingerprint of --config-files and --option (a rescoring
of unchanged hypotheses and references by the same clean commit is counted apart, as "rescored").
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
    p.add_argument("--dev-sets", default="", help="the sets the switch-off setting is chosen on (default: <lang>_dev)")
    p.add_argument("--sealed-sets", default="", help="sets only ever scored, never chosen on (default: <lang>_test)")
    p.add_argument("--config-files", default="", help="the files that define the systems (the looks' fingerprint)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="a run option that defines the systems, for the looks' fingerprint (repeatable)")
    p.add_argument("--inference-model", default="valid.loss.best.pth", help="the checkpoint that decoded")
    p.add_argument("--seed", type=int, default=0, help="the training seed (stated in RESULTS.md)")
    p.add_argument("--choose-only", action="store_true",
                   help="only choose the switch-off setting on --dev-sets (EXP/switch_off_choice.json, printed as "
                        "tau:s_th); no test set is read")
    p.add_argument("--chosen-switch-off", action="store_true",
                   help="only print the tau:s_th chosen on the dev sets (EXP/switch_off_choice.json) and exit")
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
    try:
        opts = options(args)
    except ValueError as e:
        print(f"multisoftmax_score: {e}", file=sys.stderr)
        return 2
    return report.choose(opts) if args.choose_only else report.run(opts)


def options(args) -> report.ScoreOptions:
    """report.run's options from the parsed ones (space-separated lists split into words)."""
    langs = tuple(args.langs.split())
    return report.ScoreOptions(langs=langs, systems=tuple(args.systems.split()),
                               finetune=tuple(args.finetune.split()), test_sets=tuple(args.test_sets.split()),
                               corpus=args.corpus, data=Path(args.data), exp=Path(args.exp),
                               results=Path(args.results), paper_config=Path(args.paper_config), note=args.note,
                               dev_sets=tuple(args.dev_sets.split()),
                               sealed_sets=tuple(args.sealed_sets.split()) or tuple(f"{l}_test" for l in langs),
                               config_files=tuple(map(Path, args.config_files.split())),
                               look_options=tuple(named(o) for o in args.option),
                               inference_model=args.inference_model, seed=args.seed)


def named(option: str):
    """'NAME=VALUE' -> (NAME, VALUE)."""
    name, eq, value = option.partition("=")
    if not eq or not name:
        raise ValueError(f"--option {option!r}: expected NAME=VALUE")
    return name, value


if __name__ == "__main__":
    sys.exit(main())
