"""Predict the phone durations of a feature dump with a trained duration model and score them (run.sh stage 5).

Reads DUMP/lingp.scp (phone-level linguistic vectors), DUMP/dur (the labelled frames per phone) and DUMP/phones,
and writes to OUT:
  durations    predicted frames per phone (text_int: utt n1 n2 ...), the input of `salad_decode --durations`
  scores.json  duration RMSE in frames and ms, Pearson r (all phones; speech phones only), length ratio

    python -m local_models.bin.salad_duration --model-dir exp/M1/duration dump/M1/M1_test exp/M1/duration/decode_M1_test
"""
import argparse
import sys
from pathlib import Path

from local_models.common.datadir import DataDirError
from local_models.common.device import add_ngpu_option, device_of


def get_parser():
    p = argparse.ArgumentParser(prog="salad_duration", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-dir", required=True, help="exp dir of a trained duration model (config.yaml + checkpoint)")
    p.add_argument("--model-file", default="valid.loss.best.pth",
                   help="checkpoint in --model-dir (default %(default)s)")
    add_ngpu_option(p)
    p.add_argument("dump", help="feature dump of the set (salad_dump feats)")
    p.add_argument("out_dir")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    import torch

    torch.set_num_threads(1)
    try:
        device = device_of(args.ngpu)
        from local_models.salad.duration_task import load_duration_model
        from local_models.salad.predicted import decode_durations

        d = Path(args.model_dir)
        model = load_duration_model(d / "config.yaml", d / args.model_file, device)
        s = decode_durations(model, Path(args.dump), Path(args.out_dir))
    except (DataDirError, FileNotFoundError, ValueError) as e:
        sys.exit(f"salad_duration: {e}")
    print(f"salad_duration: {args.out_dir}: duration RMSE {s['dur_rmse_frames']:.2f} frames "
          f"({s['dur_rmse_ms']:.1f} ms), Pearson r {s['dur_pearson']:.3f} over {s['phones']} phones")


if __name__ == "__main__":
    main()
