"""speech-to-units: speech (any wav/flac/ogg, any rate, mono or not) -> discrete units of a trained Transformer
VQ-VAE (egs/zerospeech2019/unit1): the recipe's features, its encoder and codebook, one unit per 40 ms. Writes
one line per file, `<file stem> <unit> <unit> ...`, and prints each file's and the whole set's ZeroSpeech 2019
bitrate (symbols / s x entropy of the symbols).

    speech-to-units hello.wav --model exp/trf_mfcc_k128/packed/model.tar.gz -o hello.units
    python -m local_models.bin.speech_to_units a.wav b.flac --model ARCHIVE          (units on stdout)

units-to-speech turns such a file back into speech with the inverter archive of the same system.
"""
import argparse
import sys

from local_models.common.cli import add_model_args, check_output_file, positive, run_main, set_threads, write_text


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="speech-to-units", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("audio", nargs="+", help="audio files (their stems name the output lines)")
    add_model_args(p, "a VQ-VAE system")
    p.add_argument("-o", "--output", default="-", help="units file to write (default: stdout)")
    p.add_argument("--max-chunk-s", type=positive(float), default=20.0,
                   help="encode longer recordings this many seconds at a time (default: %(default)s)")
    return p


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    check_output_file(args.output)
    from local_models.vqvae.inference import Speech2Units  # not for --help
    from local_models.vqvae.unitsio import encode_files

    set_threads(args.threads)
    s2u = Speech2Units.from_pretrained(args.model, device=args.device, max_chunk_s=args.max_chunk_s)
    text, lines, pooled = encode_files(s2u, args.audio)  # every file first: a bad one leaves no output behind
    write_text(args.output, text)
    for line in lines:
        print(line, file=sys.stderr)
    print(f"bitrate {pooled:.2f} bits/s over {len(lines)} file(s) (codebook {s2u.num_codes}, "
          f"{s2u.frame_rate:g} units/s)", file=sys.stderr)
    return 0


def cli() -> int:
    return run_main(main, prog="speech-to-units")


if __name__ == "__main__":
    sys.exit(cli())
