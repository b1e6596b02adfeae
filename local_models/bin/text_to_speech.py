"""text-to-speech: text as a person types it -> a wav, through a packed JDI-T (Korean, egs/kss/tts1) or SALAD /
MUSA-RNN (Spanish, egs/tcstar/tts1) model: front end, acoustic model (durations predicted) and vocoder in one call.

    text-to-speech --model exp/jdit/packed/model.tar.gz --text "안녕하세요, 3월 1일입니다." -o hello.wav
    python -m local_models.bin.text_to_speech --model ARCHIVE --text_file lines.txt -o out_dir/

A text longer than --max_chars is spoken sentence by sentence (cut again at clauses or words when a sentence is
longer), so memory and speaking rate stay flat in its length; each piece is brought to --level_dbfs (RMS of its
voiced part, gain at most +30 dB) under a 0.99 peak limit and the pieces are joined with 0.25 s pauses
(local_models.common.longtext). --raw_level keeps the model's own level (as the Python API returns it).

Prints `<wav>\t<seconds> s` per wav written. A progress line per text goes to stderr (`[3/10] lines.txt:3: 4.2 s
in 0.51 s, RTF 0.121`, against the seconds of speech made). Without --keep_going every text is spoken before any
wav is written: a bad line leaves no wav behind. --keep_going: a text that fails is named on stderr and skipped,
each other one's wav is written as soon as it is spoken, and the exit status is 2.
"""
import argparse
import importlib
import sys
from pathlib import Path

from local_models.common.cli import (AUDIO_SUFFIXES, InputLoop, add_keep_going_arg, add_model_args, check_output_dir,
                                     check_output_file, positive, results, run_main, set_threads, write_wav)

PAPERS = {"jdit": "JDI-T (Korean)", "salad": "SALAD / MUSA-RNN (Spanish)"}


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="text-to-speech", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_args(p, "a JDI-T or SALAD model")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--text", help="the text to speak")
    src.add_argument("--text_file", help="one text per line (utf-8); -o is then a directory: <line number>.wav")
    p.add_argument("-o", "--output", required=True, help="output .wav/.flac/.ogg (a directory with --text_file)")
    p.add_argument("--speed", type=positive(float), default=1.0,
                   help="speaking rate: 2 = twice as fast (durations / speed)")
    p.add_argument("--max_chars", type=positive(int), default=300,
                   help="a longer text is spoken in pieces of at most this many characters: sentences, then clauses")
    p.add_argument("--level_dbfs", type=float, default=-20.0,
                   help="RMS level of each piece's voiced part (default -20 dBFS; at most +30 dB of gain, peak <= 0.99)")
    p.add_argument("--raw_level", action="store_true", help="keep the model's level: no levelling, no limiter")
    p.add_argument("--vocoder", choices=("packed", "griffin_lim"), default="packed",
                   help="JDI-T: the vocoder the model was packed with (default: the recipe's choice, e.g. its "
                        "Multi-band MelGAN) or Griffin-Lim; SALAD speaks through WORLD only")
    p.add_argument("--paper", choices=sorted(PAPERS),
                   help="which model an exp dir holds (an archive's model card says it; needed for exp dirs only)")
    add_keep_going_arg(p)
    return p


def load_synthesiser(model: str, paper, device: str, vocoder: str = "packed"):
    from local_models.common.pack import read_card  # not for --help: it loads yaml

    card = read_card(model)
    paper = (card or {}).get("paper", paper)
    if paper is None:
        raise ValueError(f"{model}: an exp dir has no model card: give --paper jdit or --paper salad")
    if paper not in PAPERS:
        raise ValueError(f"{model}: a '{paper}' model does not speak text (text-to-speech takes "
                         f"{' or '.join(PAPERS.values())} models)")
    if paper != "jdit" and vocoder != "packed":
        raise ValueError(f"{model}: --vocoder {vocoder}: a {PAPERS[paper]} model speaks through WORLD only")
    inference = importlib.import_module(f"local_models.{paper}.inference")
    if paper == "jdit":
        return inference.Text2Speech.from_pretrained(model, device=device,
                                                     vocoder=None if vocoder == "packed" else vocoder)
    return inference.Text2Speech.from_pretrained(model, device=device)


def texts_of(args):
    """[(where, text, output)]: WHERE names the input in errors; the output checked before any work."""
    if args.text is not None:
        return [("--text", args.text, check_output_file(args.output, AUDIO_SUFFIXES))]
    check_output_dir(args.output)
    lines = Path(args.text_file).read_text(encoding="utf-8").splitlines()
    if not any(line.strip() for line in lines):
        raise ValueError(f"{args.text_file}: no text in it (one text per line)")
    return [(f"{args.text_file}:{n}", line, Path(args.output) / f"{n:04d}.wav") for n, line in enumerate(lines, 1)]


def write_result(out: Path, result: dict) -> None:
    write_wav(out, result["wav"], result["sample_rate"])
    print(f"{out}\t{len(result['wav']) / result['sample_rate']:.2f} s", file=results(), flush=True)


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    texts = {where: (text, out) for where, text, out in texts_of(args)}
    set_threads(args.threads)
    tts = load_synthesiser(args.model, args.paper, args.device, args.vocoder)
    loop = InputLoop(list(texts), "text-to-speech", args.keep_going,
                     seconds=lambda _where, result: len(result["wav"]) / result["sample_rate"])
    done = []
    from local_models.common.longtext import speak

    level_dbfs = None if args.raw_level else args.level_dbfs
    for where, result in loop.run(lambda where: speak(tts, texts[where][0], args.speed, args.max_chars, level_dbfs)):
        if args.keep_going:  # each wav its own file, written whole: no need to hold the others
            write_result(texts[where][1], result)
        else:  # every text first: a bad line leaves no wav behind
            done.append((texts[where][1], result))
    for out, result in done:
        write_result(out, result)
    return loop.exit_code


def cli() -> int:
    return run_main(main, prog="text-to-speech")


if __name__ == "__main__":
    sys.exit(cli())
