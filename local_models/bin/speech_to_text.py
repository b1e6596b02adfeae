"""speech-to-text: speech (any rate; wav/flac/ogg/mp3) -> text and its language, through a packed multilingual
RNN-T of egs/indic/asr1 (multi-softmax with LID, or its baselines). Without --language the model tells the
language (LID-free: multisoftmax_lid's LID head, vanilla's output script, a monolingual model's own language).

    speech-to-text utt.wav --model exp/multisoftmax_lid/packed/model.tar.gz
    speech-to-text a.wav b.flac -m ARCHIVE --language hi --nbest 3 --output hyps.txt

Prints `<file>\\t<language>\\t<text>` per input; with --nbest N > 1, N numbered lines per input:
`<file>\\t<rank>\\t<language>\\t<log-probability>\\t<text>`. On stdout each input's lines come as soon as it is
decoded; an --output file is written once every input is decoded. Any length: a long recording is read, encoded
and searched 10 s at a time (memory flat in its length). A progress line per input goes to stderr
(`[3/10] a.wav: 62.1 s in 3.05 s, RTF 0.049`). --keep_going: an input that fails is named on stderr and skipped,
the others are decoded and written (an --output file holds them alone: empty if none was), and the exit status is 2.
"""
import argparse
import sys

from local_models.common.cli import (InputLoop, add_keep_going_arg, add_model_args, check_output_file, results,
                                     run_main, set_threads, write_text)


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="speech-to-text", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="IN", help="audio files (any sample rate; channels averaged)")
    add_model_args(p, "a multi-softmax RNN-T (egs/indic/asr1) model")
    p.add_argument("--language", help="the language's code when known (e.g. hi): its decoder only; default: "
                                      "LID-free, the model tells the language")
    p.add_argument("--nbest", type=int, default=1, help="hypotheses per input (default: %(default)s)")
    p.add_argument("--output", "-o", default="-", help="where to write the results (default: stdout)")
    add_keep_going_arg(p)
    return p


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    if args.nbest < 1:
        raise ValueError(f"--nbest must be >= 1, got {args.nbest}")
    check_output_file(args.output)
    from local_models.multisoftmax.inference import Speech2Text, result_lines  # not for --help

    set_threads(args.threads)
    s2t = Speech2Text.from_pretrained(args.model, device=args.device)
    s2t.check_language(args.language)  # an unknown code fails before the first input is decoded
    loop = InputLoop(args.inputs, "speech-to-text", args.keep_going)
    done = []
    for path, hyps in loop.run(lambda path: s2t(path, language=args.language, nbest=args.nbest)):
        lines = "".join(result_lines(path, hyps, numbered=args.nbest > 1))
        if str(args.output) == "-":
            results().write(lines)
            results().flush()
        else:
            done.append(lines)
    if str(args.output) != "-":  # reached only with every input done, or --keep_going: then empty if none was
        write_text(args.output, "".join(done))
    return loop.exit_code


def cli() -> int:
    return run_main(main, prog="speech-to-text")


if __name__ == "__main__":
    sys.exit(cli())
