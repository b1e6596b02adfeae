"""Augment a SAD training data dir the Kaldi way: every recording plus copies with music in the background, noises
or tones in the foreground, babble, or a room response (local_models/sad/augment.py). Sources: a MUSAN-like dir
(music/ noise/ speech/ tones/: MUSAN itself, or the recipe's built-in set) and optionally RIRS_NOISES (else
synthetic room responses). Labels are copied (what is added is non-speech); the events table records each addition."""
import argparse
import sys

from local_models.common.cli import run_main


def get_parser():
    p = argparse.ArgumentParser(prog="sad_augment", description=__doc__)
    p.add_argument("--nonspeech", help="MUSAN-like dir (music/ noise/ speech/ tones/)")
    p.add_argument("--rirs", help="RIRS_NOISES dir (simulated_rirs/, real_rirs_isotropic_noises/); "
                                  "default: synthetic exponential-decay responses")
    p.add_argument("--types", default="music noise babble tones reverb",
                   help="augmentation types to draw from (those the sources cannot make are skipped)")
    p.add_argument("--copies", type=int, default=1, help="augmented copies per recording")
    p.add_argument("--copies-only", action="store_true", help="DST holds the copies only (an evaluation set)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("src", help="data dir with wav.scp and a reference (ref.rttm or ref_segments)")
    p.add_argument("dst", help="output data dir: SRC's recordings plus the copies")
    p.add_argument("wav_dir", help="where the augmented wavs go")
    return p


def main(argv=None):
    from tqdm import tqdm

    from local_models.sad.augment import NonSpeechSet, augment_data_dir, find_rirs

    args = get_parser().parse_args(argv)
    nset = NonSpeechSet(args.nonspeech) if args.nonspeech else None
    rirs = find_rirs(args.rirs) if args.rirs else ()
    made = augment_data_dir(args.src, args.dst, args.wav_dir, args.types.split(), args.copies, args.seed, nset, rirs,
                            progress=lambda xs: tqdm(xs, desc="sad_augment", unit="rec", file=sys.stderr),
                            keep_source=not args.copies_only)
    print(f"sad_augment: {args.dst}: " + ", ".join(f"{n} x {t}" for t, n in sorted(made.items())), file=sys.stderr)
    return 0


def cli():
    sys.exit(run_main(main, prog="sad_augment"))


if __name__ == "__main__":
    cli()
