"""Decoding of the SALAD recipe (`local_models.bin.salad_decode`): a feature dump through a trained SALAD /
MUSA-RNN model with forced durations, scored against the reference WORLD frames (metrics: docs/metrics.md).

    decode(model, dump, out, num_wavs) -> scores.json's summary; writes OUT all or nothing
"""
import json
import shutil
from pathlib import Path

import numpy as np

from local_models.common.datadir import DataDirError, read_table


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
