"""Train a Parallel WaveGAN vocoder (the `parallel-wavegan` package's own trainer) on a recipe's data dirs.

Each data dir needs wav.scp (16-bit PCM wavs, or `cmd |` pipes) and feats.scp (the recipe's log-mel frames,
NOT normalised: the vocoder learns on what the acoustic models output after de-normalisation). The trainer cuts
random `batch_max_steps`-sample windows with their mel frames (hop_size samples per frame).

Before training this checks that the config matches the data (sampling rate of the first wav, mel dimension
of the first feature matrix) and names the file when it does not. Training resumes from the newest
OUTDIR/checkpoint-<N>steps.pkl; when that already reached train_max_steps nothing is trained. The result is
OUTDIR/checkpoint.pkl (a copy of the last checkpoint; OUTDIR/config.yml beside it, as
`parallel_wavegan.utils.load_model` expects). Seeded: the same run gives the same vocoder. Each run that trains
appends its commit and device to OUTDIR/trained_by.json (the trainer is not an ESPnet task, which records itself):
RESULTS.md's environment block names them.
"""
import argparse
import sys

from local_models.common.results import record_training
from local_models.jdit.vocoder import load_config, select_training_device, train


def get_parser():
    p = argparse.ArgumentParser(prog="jdit_pwg_train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", required=True, help="parallel-wavegan yaml config")
    p.add_argument("--train-dir", required=True, help="data dir with wav.scp + feats.scp")
    p.add_argument("--valid-dir", required=True, help="data dir with wav.scp + feats.scp")
    p.add_argument("--max-steps", type=int, default=None,
                   help="override train_max_steps (save / eval / log intervals clipped to it; for smoke runs)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ngpu", type=int, default=0, choices=[0, 1],
                   help="0: train on the CPU even where a GPU is visible; 1: on the GPU (parallel-wavegan's trainer "
                        "takes the first visible one; its multi-GPU mode needs its own launcher)")
    p.add_argument("--verbose", type=int, default=1, help="the trainer's logging level")
    p.add_argument("outdir")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        select_training_device(args.ngpu)  # before torch is loaded
        config = load_config(args.config, args.max_steps)
        final = train(args.outdir, config, args.train_dir, args.valid_dir, args.seed, args.verbose,
                      on_start=lambda: record_training(args.outdir, args.ngpu))
    except (ValueError, OSError) as e:
        sys.exit(f"jdit_pwg_train: {e}")
    print(f"jdit_pwg_train: vocoder -> {final}")


if __name__ == "__main__":
    main()
