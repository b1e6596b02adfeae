"""Decode a feature dump with a trained SALAD / MUSA-RNN model, forced durations, and score it.

Reads DUMP/ling.scp (raw linguistic frames) and DUMP/acou.scp (the reference WORLD frames) and writes to OUT:
  feats.{ark,scp}  predicted raw 43-dim frames          scores.json  corpus MCD / F0 RMSE / V/UV accuracy
  per_utt.txt      the same per utterance                f0.npz       reference and predicted F0 (Hz) on
  wav/<utt>.wav    WORLD synthesis of --num-wavs utts                 reference-voiced frames (Fig. 2)
  per_utt_sums.json  each utterance's MCD sums and frames (the report's bootstrap intervals)
Metrics (docs/metrics.md, MUSA): MCD over c0..c39 with frames paired 1:1 (no DTW), pooled over frames: over
every frame (mcd_db) and over the frames whose reference phone (DUMP/phones, DUMP/dur) is not sil / pau
(mcd_speech_db, the paper's evaluation); F0 RMSE in Hz over reference-voiced frames, F0 = exp(predicted
log-F0); V/UV accuracy over all frames.

With --durations (the table `salad_duration` predicts) and --pred-out, the same model then synthesises the set
again from DUMP/lingp.scp and the predicted frames per phone (two-stage synthesis) into --pred-out (scores.json,
wav/): frames paired with the reference along a DTW path, beside the labelled-duration synthesis scored through
the same DTW (*_gt_dtw).
"""
import argparse
import sys
from pathlib import Path

from local_models.common.datadir import DataDirError
from local_models.common.device import add_ngpu_option, device_of


def get_parser():
    p = argparse.ArgumentParser(prog="salad_decode", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-dir", required=True, help="exp dir of a trained model (config.yaml + checkpoint)")
    p.add_argument("--model-file", "--model_file", dest="model_file", default="valid.mcd.best.pth",
                   help="checkpoint in --model-dir (default %(default)s)")
    add_ngpu_option(p)
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "int8"],
                   help="inference precision: fp32, bf16 autocast, int8 dynamic quantisation of Linear / LSTM "
                        "(CPU only)")
    p.add_argument("--num-wavs", type=int, default=10, help="utterances to synthesise (-1: all)")
    p.add_argument("--durations", help="predicted frames per phone (salad_duration's OUT/durations): also the "
                                       "two-stage synthesis, DTW-aligned scoring, into --pred-out")
    p.add_argument("--pred-out", help="output dir of the predicted-duration decode (with --durations)")
    p.add_argument("dump", help="feature dump of the set (salad_dump feats)")
    p.add_argument("out_dir")
    return p


def main(argv=None):
    p = get_parser()
    args = p.parse_args(argv)
    if bool(args.durations) != bool(args.pred_out):
        p.error("--durations and --pred-out go together")
    import torch

    torch.set_num_threads(1)
    try:
        device = device_of(args.ngpu)  # before anything loads: a missing GPU fails at once
        from local_models.salad.inference import decode
        from local_models.salad.predicted import decode_predicted
        from local_models.salad.task import load_trained

        model = load_trained(args.model_dir, args.model_file, args.precision, device)
        s = decode(model, Path(args.dump), Path(args.out_dir), args.num_wavs)
        if args.durations:
            sp = decode_predicted(model, Path(args.dump), Path(args.durations), Path(args.pred_out), args.num_wavs)
    except (DataDirError, FileNotFoundError, ValueError) as e:
        sys.exit(f"salad_decode: {e}")
    print(f"salad_decode: {args.out_dir}: MCD {s['mcd_speech_db']:.2f} dB without silence ({s['mcd_db']:.2f} dB "
          f"with), F0 RMSE {s['f0_rmse_hz']:.2f} Hz, "
          f"V/UV {s['vuv_acc']:.1f} % over {s['utterances']} utterances")
    if args.durations:
        print(f"salad_decode: {args.pred_out}: predicted durations, DTW-aligned: MCD {sp['mcd_db']:.2f} dB "
              f"(labelled durations, DTW: {sp['mcd_gt_dtw_db']:.2f} dB), F0 RMSE {sp['f0_rmse_hz']:.2f} Hz, "
              f"V/UV {sp['vuv_acc']:.1f} %")


if __name__ == "__main__":
    main()
