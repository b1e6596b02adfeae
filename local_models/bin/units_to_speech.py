"""units-to-speech: discrete units (lines `<name> <unit> <unit> ...`, as speech-to-units writes them) -> speech
in a target voice, through the codebook inverter of egs/zerospeech2019/unit1 and Griffin-Lim (16 kHz). The units
must come from the VQ-VAE the inverter was built on (its model card says which: units_from).

    units-to-speech hello.units --model exp/inverter_trf_mfcc_k128/packed/model.tar.gz -o hello.wav
    python -m local_models.bin.units_to_speech set.units --model ARCHIVE --speaker V001 -o out_dir/

-o names one .wav/.flac/.ogg (a one-line units file) or a directory (<name>.wav per line). Prints
`<wav>\t<seconds> s\tvoice <speaker>` per wav written. A progress line per units line goes to stderr (`[3/10]
set.units:3: 2.1 s in 0.40 s, RTF 0.190`, against the seconds of speech made). Without --keep_going every line is
inverted before any wav is written: a bad line leaves no wav behind. --keep_going: a line whose units fail is named
on stderr and skipped (a malformed line too: named by file:line), each other one's wav is written as soon as it is
made, and the exit status is 2.
"""
import argparse
import sys

from pathlib import Path

from local_models.common.cli import (AUDIO_SUFFIXES, InputLoop, add_keep_going_arg, add_model_args, check_output_dir,
                                     check_output_file, error_line, results, run_main, set_threads, write_wav)


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="units-to-speech", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("units", help="units file: one `<name> <unit> <unit> ...` line per utterance")
    add_model_args(p, "the codebook inverter (exp/inverter_<system>)")
    p.add_argument("--speaker", help="target voice (default: the inverter's first; a wrong name lists them)")
    p.add_argument("-o", "--output", required=True, help="output .wav/.flac/.ogg, or a directory")
    add_keep_going_arg(p)
    return p


def check_output(output: str) -> None:
    """-o before any work: an audio file name, or a directory (a name with another suffix, e.g. x.mp3, is a
    mistake, not a directory to make)."""
    out = Path(output)
    if out.suffix.lower() in AUDIO_SUFFIXES:
        check_output_file(out, AUDIO_SUFFIXES)
    elif out.suffix and not out.is_dir():
        raise ValueError(f"{out}: output must end in {', '.join(AUDIO_SUFFIXES)}, or name a directory")
    else:
        check_output_dir(out)


def write_result(out: Path, r: dict) -> None:
    write_wav(out, r["wav"], r["sample_rate"])
    print(f"{out}\t{len(r['wav']) / r['sample_rate']:.2f} s\tvoice {r['speaker']}", file=results(), flush=True)


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    check_output(args.output)
    from local_models.vqvae.inference import Units2Speech  # not for --help
    from local_models.vqvae.unitsio import output_paths, read_units, synthesise_rows

    set_threads(args.threads)
    bad = [] if args.keep_going else None  # without --keep_going a malformed line refuses the file, before any work
    lines = read_units(args.units, bad)
    rows = {row[0]: row for row in lines}  # (where 'file:line', name, units) by where
    outs = dict(zip(rows, output_paths(lines, args.output)))
    u2s = Units2Speech.from_pretrained(args.model, device=args.device)
    synthesise_rows(u2s, [], args.speaker)  # no rows: the voice alone checked, before any work
    loop = InputLoop(list(rows), "units-to-speech", args.keep_going,
                     seconds=lambda _where, r: len(r["wav"]) / r["sample_rate"])
    for where, message in bad or ():  # --keep_going: a malformed line is one skipped input
        print(error_line("units-to-speech", ValueError(message), where), file=sys.stderr, flush=True)
        loop.failed.append(where)
    done = []
    for where, r in loop.run(lambda where: synthesise_rows(u2s, [rows[where]], args.speaker)[0]):
        if args.keep_going:  # each wav its own file, written whole: no need to hold the others
            write_result(outs[where], r)
        else:  # every line first: a bad one leaves no wav behind
            done.append((outs[where], r))
    for out, r in done:
        write_result(out, r)
    return loop.exit_code


def cli() -> int:
    return run_main(main, prog="units-to-speech")


if __name__ == "__main__":
    sys.exit(cli())
