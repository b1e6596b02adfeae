"""speech-to-units: speech (any wav/flac/ogg, any rate, mono or not) -> discrete units of a trained Transformer
VQ-VAE (egs/zerospeech2019/unit1): the recipe's features, its encoder and codebook, one unit per 40 ms. Writes
one line per file, `<file stem> <unit> <unit> ...`, and prints each file's and the whole set's ZeroSpeech 2019
bitrate (symbols / s x entropy of the symbols). On stdout each file's line comes as soon as it is encoded; an
-o file is written once, after the last file. A progress line per file goes to stderr (`[3/10] a.wav: 62.1 s in
3.05 s, RTF 0.049`). --keep_going: a file that fails is named on stderr and skipped, the others are encoded and
written (the -o file holds them alone: empty if none was; the bitrate is theirs), and the exit status is 2.

    speech-to-units hello.wav --model exp/trf_mfcc_k128/packed/model.tar.gz -o hello.units
    python -m local_models.bin.speech_to_units a.wav b.flac --model ARCHIVE          (units on stdout)

units-to-speech turns such a file back into speech with the inverter archive of the same system.
"""
import argparse
import sys

from local_models.common.cli import (InputLoop, add_keep_going_arg, add_model_args, check_output_file, positive,
                                     results, run_main, set_threads, write_text)


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="speech-to-units", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("audio", nargs="+", help="audio files (their stems name the output lines)")
    add_model_args(p, "a VQ-VAE system")
    p.add_argument("-o", "--output", default="-", help="units file to write (default: stdout)")
    p.add_argument("--max-chunk-s", type=positive(float), default=20.0,
                   help="encode longer recordings this many seconds at a time (default: %(default)s)")
    add_keep_going_arg(p)
    return p


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    check_output_file(args.output)
    from local_models.vqvae.bitrate import bitrate  # not for --help
    from local_models.vqvae.inference import Speech2Units
    from local_models.vqvae.unitsio import unique_stems, units_line

    stems = dict(zip(args.audio, unique_stems(args.audio)))  # before any work: one units line per name
    set_threads(args.threads)
    s2u = Speech2Units.from_pretrained(args.model, device=args.device, max_chunk_s=args.max_chunk_s)
    loop = InputLoop(args.audio, "speech-to-units", args.keep_going)
    lines, summaries, codes, durations = [], [], {}, {}
    for path, r in loop.run(lambda path: s2u(str(path))):
        stem = stems[path]
        codes[stem], durations[stem] = r["units"], r["duration"]
        summaries.append(f"{stem}: {len(r['units'])} units ({r['frame_rate']:g}/s) over {r['duration']:.2f} s, "
                         f"bitrate {r['bitrate']:.2f} bits/s")
        if str(args.output) == "-":
            results().write(units_line(stem, r["units"]))
            results().flush()
        else:
            lines.append(units_line(stem, r["units"]))
    if str(args.output) != "-":  # reached only with every file done, or --keep_going: then empty if none was
        write_text(args.output, "".join(lines))
    for line in summaries:
        print(line, file=sys.stderr)
    if codes:  # pooled over the files encoded, as ZeroSpeech 2019 scores a set
        print(f"bitrate {bitrate(codes, durations).bitrate:.2f} bits/s over {len(codes)} file(s) (codebook "
              f"{s2u.num_codes}, {s2u.frame_rate:g} units/s)", file=sys.stderr)
    return loop.exit_code


def cli() -> int:
    return run_main(main, prog="speech-to-units")


if __name__ == "__main__":
    sys.exit(cli())
