"""units-to-speech: discrete units (lines `<name> <unit> <unit> ...`, as speech-to-units writes them) -> speech
in a target voice, through the codebook inverter of egs/zerospeech2019/unit1 and Griffin-Lim (16 kHz). The units
must come from the VQ-VAE the inverter was built on (its model card says which: units_from).

    units-to-speech hello.units --model exp/inverter_trf_mfcc_k128/packed/model.tar.gz -o hello.wav
    python -m local_models.bin.units_to_speech set.units --model ARCHIVE --speaker V001 -o out_dir/

-o names one .wav/.flac/.ogg (a one-line units file) or a directory (<name>.wav per line).
"""
import argparse
import sys

from local_models.common.cli import add_model_args, run_main, set_threads, write_wav
from local_models.vqvae.inference import Units2Speech
from local_models.vqvae.unitsio import output_paths, read_units, synthesise_rows


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="units-to-speech", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("units", help="units file: one `<name> <unit> <unit> ...` line per utterance")
    add_model_args(p, "the codebook inverter (exp/inverter_<system>)")
    p.add_argument("--speaker", help="target voice (default: the inverter's first; a wrong name lists them)")
    p.add_argument("-o", "--output", required=True, help="output .wav/.flac/.ogg, or a directory")
    return p


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    set_threads(args.threads)
    rows = read_units(args.units)
    outs = output_paths(rows, args.output)
    u2s = Units2Speech.from_pretrained(args.model, device=args.device)
    done = synthesise_rows(u2s, rows, args.speaker)  # every line first: a bad one leaves no wav behind
    for out, r in zip(outs, done):
        write_wav(out, r["wav"], r["sample_rate"])
        print(f"{out}\t{len(r['wav']) / r['sample_rate']:.2f} s\tvoice {r['speaker']}")
    return 0


def cli() -> int:
    return run_main(main, prog="units-to-speech")


if __name__ == "__main__":
    sys.exit(cli())
