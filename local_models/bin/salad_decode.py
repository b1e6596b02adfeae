"""Decode a feature dump with a trained SALAD / MUSA-RNN model, forced durations, and score it.

Reads DUMP/ling.scp (raw linguistic frames) and DUMP/acou.scp (the reference WORLD frames) and writes to OUT:
  feats.{ark,scp}  predicted raw 43-dim frames          scores.json  corpus MCD / F0 RMSE / V/UV accuracy
  per_utt.txt      the same per utterance                f0.npz       reference and predicted F0 (Hz) on
  wav/<utt>.wav    WORLD synthesis of --num-wavs utts                 reference-voiced frames (Fig. 2)
Metrics (DESIGN.md section 5, MUSA): MCD over c0..c39 with frames paired 1:1 (no DTW), pooled over frames;
F0 RMSE in Hz over reference-voiced frames, F0 = exp(predicted log-F0); V/UV accuracy over all frames.
"""
import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np

from local_models.common.datadir import DataDirError, read_table
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
    p.add_argument("dump", help="feature dump of the set (salad_dump feats)")
    p.add_argument("out_dir")
    return p


def listen_proxy(wave: np.ndarray) -> dict:
    """Is a synthesised wave audible and unclipped? Peak, RMS (dBFS) and the share of samples at full scale."""
    peak = float(np.max(np.abs(wave))) if len(wave) else 0.0
    rms = float(np.sqrt(np.mean(wave ** 2))) if len(wave) else 0.0
    return {"peak": peak, "rms_dbfs": 20 * np.log10(max(rms, 1e-12)), "clipped": float(np.mean(np.abs(wave) >= 0.999))}


def decode(model, dump: Path, out: Path, num_wavs: int) -> dict:
    import kaldiio
    import soundfile
    from tqdm import tqdm

    from local_models.common.features import ArkStream
    from local_models.salad import acoustic

    ling, ref = read_table(dump / "ling.scp"), read_table(dump / "acou.scp")
    if set(ling) != set(ref):
        raise DataDirError(dump / "ling.scp", None, "utterances differ from acou.scp: rerun stage 3")
    utts = sorted(ling, key=str.encode)
    if not utts:
        raise DataDirError(dump / "ling.scp", None, "no utterances")
    per_utt, f0_ref, f0_hyp, wavs = {}, [], [], {}
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "wav").mkdir(parents=True)
    with ArkStream(tmp / "feats") as ark:
        for i, utt in enumerate(tqdm(utts, desc="salad_decode", mininterval=5, disable=None)):
            x, r = np.asarray(kaldiio.load_mat(ling[utt])), np.asarray(kaldiio.load_mat(ref[utt]))
            if len(x) != len(r):
                raise ValueError(f"'{utt}': {len(x)} linguistic frames but {len(r)} acoustic: rerun stage 3")
            y = model.synthesise_frames(x)
            ark.write(utt, y)
            per_utt[utt] = acoustic.scores(r, y)
            voiced = r[:, acoustic.UV] > 0.5
            f0_ref.append(np.exp(r[voiced, acoustic.LF0]))
            f0_hyp.append(np.exp(y[voiced, acoustic.LF0]))
            if num_wavs < 0 or i < num_wavs:
                wave = acoustic.synthesize(y, 16000)
                soundfile.write(str(tmp / "wav" / f"{utt}.wav"), np.clip(wave, -1, 1), 16000, subtype="PCM_16")
                wavs[utt] = listen_proxy(wave)
    ark_text = (tmp / "feats.scp").read_text().replace(str((tmp / "feats.ark").absolute()),
                                                      str((out / "feats.ark").absolute()))
    (tmp / "feats.scp").write_text(ark_text)
    np.savez(tmp / "f0.npz", ref=np.concatenate(f0_ref), hyp=np.concatenate(f0_hyp))
    with open(tmp / "per_utt.txt", "w") as f:
        for utt, r in per_utt.items():
            f.write(f"{utt} mcd_db={r['mcd_sum_db'] / r['frames']:.3f} frames={r['frames']}\n")
    from local_models.salad.model import num_params

    summary = {**acoustic.pool_scores(per_utt.values()), "num_params": num_params(model.net), "wavs": wavs,
               "precision": model.precision,
               "metric": "MCD c0..c39 frame-pooled, frames paired 1:1 (forced durations, no DTW); F0 RMSE Hz on "
                         "reference-voiced frames with F0 = exp(predicted log-F0); V/UV accuracy over all frames"}
    with open(tmp / "scores.json", "w") as f:
        json.dump(summary, f, indent=1)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)  # all or nothing: a failed decode leaves no half-written OUT
    return summary


def main(argv=None):
    args = get_parser().parse_args(argv)
    import torch

    torch.set_num_threads(1)
    try:
        device = device_of(args.ngpu)  # before anything loads: a missing GPU fails at once
        from local_models.salad.task import load_trained

        model = load_trained(args.model_dir, args.model_file, args.precision, device)
        s = decode(model, Path(args.dump), Path(args.out_dir), args.num_wavs)
    except (DataDirError, FileNotFoundError, ValueError) as e:
        sys.exit(f"salad_decode: {e}")
    print(f"salad_decode: {args.out_dir}: MCD {s['mcd_db']:.2f} dB, F0 RMSE {s['f0_rmse_hz']:.2f} Hz, "
          f"V/UV {s['vuv_acc']:.1f} % over {s['utterances']} utterances")


if __name__ == "__main__":
    main()
