"""The demo of egs/zerospeech2019/unit1 (local/demo.sh): `fresh` writes an utterance no training set holds
(espeak-ng's British English voice, a sentence of its own, 22.05 kHz); `summary` writes exp/demo/summary.md from
what speech-to-units and units-to-speech made of it (units, bitrate, the wav's duration / peak / RMS, times)."""
import argparse
import sys
from pathlib import Path

from local_models.common.cli import run_main
from local_models.vqvae.demo import FRESH_TEXT, make_fresh, summary


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="vqvae_demo", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fresh", help="synthesise the fresh input")
    f.add_argument("--text", default=FRESH_TEXT)
    f.add_argument("out", help="wav to write")
    s = sub.add_parser("summary", help="write the demo's summary.md")
    s.add_argument("--input", required=True, help="the fresh input wav")
    s.add_argument("--voice", default="", help="how the input was made (fresh's output)")
    s.add_argument("--text", default=FRESH_TEXT)
    s.add_argument("--units", required=True, help="speech-to-units' output")
    s.add_argument("--wav", required=True, help="units-to-speech's output")
    s.add_argument("--speaker", help="the voice units-to-speech spoke in (default: the inverter's first)")
    s.add_argument("--vqvae-model", required=True)
    s.add_argument("--inverter-model", required=True)
    s.add_argument("--s2u-seconds", type=float, required=True)
    s.add_argument("--u2s-seconds", type=float, required=True)
    s.add_argument("--run-seconds", type=float, help="run.sh's wall time")
    s.add_argument("--out", required=True)
    return p


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    if args.cmd == "fresh":
        print(make_fresh(Path(args.out), args.text))
        return 0
    print(summary(Path(args.input), Path(args.units), Path(args.wav), args.vqvae_model, args.inverter_model,
                  args.s2u_seconds, args.u2s_seconds, args.run_seconds, Path(args.out), args.text, args.voice,
                  args.speaker))
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, prog="vqvae_demo"))
