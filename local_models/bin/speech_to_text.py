"""speech-to-text: speech (any rate; wav/flac/ogg/mp3) -> text and its language, through a packed multilingual
RNN-T of egs/indic/asr1 (multi-softmax with LID, or its baselines). Without --language the model tells the
language (LID-free: multisoftmax_lid's LID head, vanilla's output script, a monolingual model's own language).

    speech-to-text utt.wav --model exp/multisoftmax_lid/packed/model.tar.gz
    speech-to-text a.wav b.flac -m ARCHIVE --language hi --nbest 3 --output hyps.txt

Prints `<file>\\t<language>\\t<text>` per input; with --nbest N > 1, N numbered lines per input:
`<file>\\t<rank>\\t<language>\\t<log-probability>\\t<text>`. Every input is decoded before anything is written.
"""
import argparse
import sys

from local_models.common.cli import add_model_args, check_output_file, run_main, set_threads, write_text


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="speech-to-text", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="IN", help="audio files (any sample rate; channels averaged)")
    add_model_args(p, "a multi-softmax RNN-T (egs/indic/asr1) model")
    p.add_argument("--language", help="the language's code when known (e.g. hi): its decoder only; default: "
                                      "LID-free, the model tells the language")
    p.add_argument("--nbest", type=int, default=1, help="hypotheses per input (default: %(default)s)")
    p.add_argument("--output", "-o", default="-", help="where to write the results (default: stdout)")
    return p


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    if args.nbest < 1:
        raise ValueError(f"--nbest must be >= 1, got {args.nbest}")
    check_output_file(args.output)
    from local_models.multisoftmax.inference import Speech2Text, transcribe_files  # not for --help

    set_threads(args.threads)
    s2t = Speech2Text.from_pretrained(args.model, device=args.device)
    write_text(args.output, transcribe_files(s2t, args.inputs, args.language, args.nbest))
    return 0


def cli() -> int:
    return run_main(main, prog="speech-to-text")


if __name__ == "__main__":
    sys.exit(cli())
