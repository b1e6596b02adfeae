"""The summary of egs/kss/tts1/local/demo.sh: check the wav that `text-to-speech` made of a new Korean sentence
(not silent, not clipped, the same as an in-process synthesis of the archive), time synthesis alone, and write a
markdown section (input, tokens, wav path, duration, peak, RMS, times, RTF).

    python -m local_models.bin.jdit_demo --model exp/tts_jdit/packed/model.tar.gz --text "..." \\
        --wav exp/demo/jdit.wav --cli-seconds 12.3 --out exp/demo/summary.md
"""
import argparse
import sys

from local_models.common.cli import run_main
from local_models.jdit.demo import summarise


def get_parser():
    p = argparse.ArgumentParser(prog="jdit_demo", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--recipe", default=".", help="the recipe dir (its data dirs must not hold the text)")
    p.add_argument("--model", required=True, help="the archive text-to-speech used")
    p.add_argument("--text", required=True, help="the sentence it spoke")
    p.add_argument("--speed", type=float, default=1.0)
    p.add_argument("--wav", required=True, help="the wav it wrote")
    p.add_argument("--cli-seconds", type=float, required=True, help="its wall time")
    p.add_argument("--out", required=True, help="summary markdown to write")
    return p


def main(argv=None) -> int:
    a = get_parser().parse_args(argv)
    print(summarise(a.recipe, a.model, a.text, a.wav, a.cli_seconds, a.out, a.speed))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, prog="jdit_demo"))
