"""Two-stage synthesis of a feature dump (run.sh stage 5): the duration model's frames per phone, then an acoustic
model on linguistic frames built from them, scored against the recording (metrics: docs/metrics.md).

    decode_durations(duration_model, dump, out)          OUT/durations (text_int), OUT/scores.json: duration RMSE
                                                          (frames, ms) and Pearson r against the labelled ones
    decode_predicted(acoustic_model, dump, durations, out, num_wavs)
                                                          OUT/scores.json: MCD / F0 RMSE / V/UV with predicted
                                                          durations, and with the labelled ones, both DTW-aligned

With predicted durations the synthesis has another number of frames than the recording, so frames are paired
along a DTW path (common/mcd.py mcd_dtw over c0..c39, Euclidean, which minimises the summed MCD); the same
pairing is applied to the labelled-duration synthesis, so the two MCDs differ only by the durations. Both write
OUT all or nothing.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Optional

import numpy as np

from local_models.common.datadir import DataDirError, read_table, write_table

from . import acoustic
from .data import SAMPLE_RATE, read_durations, speech_masks
from .duration import duration_scores, pool_duration_scores
from .inference import listen_proxy
from .linguistic import frames_from_durations
from .model import num_params

DTW_METRIC = ("frames paired along the DTW path of the 40 mel-cepstra c0..c39 (Euclidean; common/mcd.py mcd_dtw, "
              "common/dtw.py), then the forced-duration formulas over the path's frame pairs: MCD pooled over path "
              "frames, F0 RMSE over pairs whose reference frame is voiced, V/UV accuracy over all pairs")


def _load(scp) -> dict:
    return read_table(scp)


def _mats(scp):
    import kaldiio

    for utt, path in _load(scp).items():
        yield utt, np.asarray(kaldiio.load_mat(path))


def _commit(tmp: Path, out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)


def _fresh(out: Path) -> Path:
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    return tmp


def decode_durations(model, dump: Path, out: Path) -> dict:
    """Predict the durations of every utterance of DUMP (lingp.scp) and score them against DUMP/dur."""
    from tqdm import tqdm

    dump, out = Path(dump), Path(out)
    for f in ("lingp.scp", "dur", "phones"):
        if not (dump / f).is_file():
            raise DataDirError(dump / f, None, "missing: dumped before the duration model? rerun stage 3")
    ref, phones = read_durations(dump / "dur"), read_table(dump / "phones")
    per_utt, hyp = [], {}
    for utt, x in tqdm(sorted(_mats(dump / "lingp.scp"), key=lambda t: t[0].encode()), desc="durations",
                       mininterval=5, disable=None):
        if utt not in ref:
            raise DataDirError(dump / "dur", None, f"no durations for '{utt}': rerun stage 3")
        hyp[utt] = model.predict(x)
        per_utt.append(duration_scores(ref[utt], hyp[utt], phones[utt].split()))
    if not per_utt:
        raise DataDirError(dump / "lingp.scp", None, "no utterances")
    summary = {**pool_duration_scores(per_utt),
               "metric": "durations in frames of 5 ms per phone: predicted (rounded, >= 1) against the labels' "
                         "(as the linguistic frames assign them); RMSE and Pearson r over all phones of the set, "
                         "and over speech phones only (no sil / pau)"}
    tmp = _fresh(out)
    write_table(tmp / "durations", {u: " ".join(map(str, d.tolist())) for u, d in hyp.items()})
    (tmp / "scores.json").write_text(json.dumps(summary, indent=1))
    _commit(tmp, out)
    return summary


def dtw_scores(ref: np.ndarray, hyp: np.ndarray, speech: Optional[np.ndarray] = None) -> dict:
    """acoustic.scores over the DTW pairing of two raw frame sequences of any lengths; SPEECH (the reference's
    speech frames) marks each pair by its reference frame."""
    from local_models.common.mcd import mcd_dtw

    path = mcd_dtw(ref[:, acoustic.MC], hyp[:, acoustic.MC], include_c0=True)["path"]
    return acoustic.scores(ref[path[:, 0]], hyp[path[:, 1]], None if speech is None else speech[path[:, 0]])


def decode_predicted(model, dump: Path, durations: Path, out: Path, num_wavs: int) -> dict:
    """Synthesise every utterance of DUMP with the frames per phone in DURATIONS (decode_durations' table) and
    score it against DUMP/acou.scp; also score the labelled-duration synthesis (DUMP/ling.scp) the same way."""
    import kaldiio
    import soundfile
    from tqdm import tqdm

    dump, out = Path(dump), Path(out)
    max_dur = int((dump / "max_dur_frames").read_text().split()[0])
    dur = read_durations(durations)
    ref, ling = _load(dump / "acou.scp"), _load(dump / "ling.scp")
    speech = speech_masks(dump)
    pred, gt, frames, wavs = [], [], [0, 0], {}
    tmp = _fresh(out)
    (tmp / "wav").mkdir()
    for i, (utt, xp) in enumerate(tqdm(sorted(_mats(dump / "lingp.scp"), key=lambda t: t[0].encode()),
                                       desc="salad_decode (predicted durations)", mininterval=5, disable=None)):
        if utt not in dur or utt not in ref or utt not in speech:
            where = durations if utt not in dur else dump / ("acou.scp" if utt not in ref else "dur")
            raise DataDirError(where, None, f"no entry for '{utt}'")
        r, sp = np.asarray(kaldiio.load_mat(ref[utt])), speech[utt]
        if len(sp) != len(r):
            raise ValueError(f"'{utt}': the labels' phones cover {len(sp)} frames, the recording {len(r)}: rerun "
                             "stage 3")
        y = model.synthesise_frames(frames_from_durations(xp, dur[utt], max_dur_frames=max_dur))
        pred.append(dtw_scores(r, y, sp))
        gt.append(dtw_scores(r, model.synthesise_frames(np.asarray(kaldiio.load_mat(ling[utt]))), sp))
        frames[0], frames[1] = frames[0] + len(y), frames[1] + len(r)
        if num_wavs < 0 or i < num_wavs:
            wave = acoustic.synthesize(y, SAMPLE_RATE)
            soundfile.write(str(tmp / "wav" / f"{utt}.wav"), np.clip(wave, -1, 1), SAMPLE_RATE, subtype="PCM_16")
            wavs[utt] = listen_proxy(wave)
    if not pred:
        shutil.rmtree(tmp)
        raise DataDirError(dump / "lingp.scp", None, "no utterances")
    p, g = acoustic.pool_scores(pred), acoustic.pool_scores(gt)
    summary = {**p, "mcd_gt_dtw_db": g["mcd_db"], "mcd_speech_gt_dtw_db": g["mcd_speech_db"],
               "f0_rmse_gt_dtw_hz": g["f0_rmse_hz"], "vuv_acc_gt_dtw": g["vuv_acc"],
               "frames_pred": frames[0], "frames_ref": frames[1], "length_ratio": frames[0] / max(frames[1], 1),
               "num_params": num_params(model.net), "precision": model.precision, "wavs": wavs,
               "metric": "predicted durations (mcd_db, f0_rmse_hz, vuv_acc) and labelled durations (*_gt_dtw): "
                         + DTW_METRIC}
    (tmp / "scores.json").write_text(json.dumps(summary, indent=1))
    _commit(tmp, out)
    return summary
