"""Inference of the SALAD recipe.

    Text2Speech.from_pretrained(archive | unpacked archive | exp/<spk>/<system>, device="cpu")
    tts(text, speed=1.0) -> {"wav": float32 (n,), "sample_rate": 16000, "durations": int64 frames per phone,
                             "labels": [full-context label], "phones": [phone]}
        raw Spanish text -> front end (numbers spelt out, punctuation -> phrases) -> full-context labels -> duration
        model (frames per phone / speed, >= 1) -> linguistic frames -> acoustic model (SALAD or MUSA-RNN) -> WORLD.
    decode(model, dump, out, num_wavs)  a feature dump with forced durations (`local_models.bin.salad_decode`),
        scored against the reference WORLD frames (metrics: docs/metrics.md); writes OUT all or nothing
"""
import json
import math
import shutil
from pathlib import Path

import numpy as np

from local_models.common.datadir import DataDirError, read_table
from local_models.common.longtext import LongText

SAMPLE_RATE = 16000


def check_text(text) -> str:
    """TEXT if the front end can speak it; ValueError naming what it cannot read (empty, other scripts, symbols)."""
    from .frontend import unreadable_characters

    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    if not text.strip():
        raise ValueError("empty text: nothing to speak")
    bad = unreadable_characters(text)
    if bad:
        shown = ", ".join(repr(c) + ("" if c.isprintable() else f" (U+{ord(c):04X})") for c in bad[:10])
        raise ValueError(f"the Spanish front end cannot read {len(bad)} character(s) of {text[:60]!r}: {shown} "
                         "(write symbols and foreign words out in Spanish letters)")
    return text


class Text2Speech(LongText):
    """Spanish text -> speech through a packed SALAD / MUSA-RNN system and its duration model (two-stage MUSA)."""

    sample_rate = SAMPLE_RATE

    def __init__(self, acoustic_model, duration_model, questions, max_dur_frames: int, card: dict = None):
        self.acoustic, self.duration, self.questions = acoustic_model, duration_model, questions
        self.max_dur_frames, self.card = int(max_dur_frames), dict(card or {})

    @classmethod
    def from_pretrained(cls, model, device="cpu", precision: str = "fp32") -> "Text2Speech":
        """MODEL: a packed archive (run.sh's pack stage), its unpacked directory, or exp/<spk>/<system> of a
        trained recipe. PackError / FileNotFoundError / ValueError name what is wrong."""
        # here, not at the top: acoustic / pack (numba) and the models (torch, ESPnet) load when a model is, so
        # `import local_models.salad.inference` (check_text, listen_proxy) stays light
        from local_models.common.pack import PackError, load_model

        from . import acoustic, linguistic
        from .duration_task import load_duration_model
        from .pack import exp_files, feature_settings
        from .task import load_trained

        m = load_model(model, paper="salad", exp_resolver=exp_files)
        if "feats" in m.files:
            import yaml

            got = yaml.safe_load(m.file("feats").read_text(encoding="utf-8")) or {}
            want = feature_settings()
            diff = [k for k in ("sample_rate", "frame_shift_ms", "dim", "mcep_order") if got.get(k) != want[k]]
            if diff:
                raise PackError(f"{model}: features {', '.join(f'{k}={got.get(k)}' for k in diff)} differ from "
                                f"this code's ({', '.join(f'{k}={want[k]}' for k in diff)})")
        am = load_trained(None, m.file("model_file"), precision, device, config_file=m.file("config"))
        dm = load_duration_model(m.file("duration_config"), m.file("duration_model_file"), device)
        _, _, max_dur = acoustic.load_stats(m.file("stats_file"))
        return cls(am, dm, linguistic.load_questions(m.file("questions")), max_dur, m.card)

    def __call__(self, text: str, speed: float = 1.0) -> dict:
        from . import acoustic, frontend, linguistic

        check_text(text)
        try:
            ok = math.isfinite(float(speed)) and float(speed) > 0
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError(f"speed must be a positive number, got {speed!r}")
        labels = frontend.label_text(text).lines
        _, _, x = linguistic.phone_features(labels, self.questions)
        durations = self.duration.predict(x, float(speed))
        ling = linguistic.frames_from_durations(x, durations, max_dur_frames=self.max_dur_frames)
        wav = acoustic.synthesize(self.acoustic.synthesise_frames(ling), SAMPLE_RATE).astype(np.float32)
        return {"wav": wav, "sample_rate": SAMPLE_RATE, "durations": durations, "labels": labels,
                "phones": linguistic.phone_names(labels)}


def listen_proxy(wave: np.ndarray) -> dict:
    """Is a synthesised wave audible and unclipped? Peak, RMS (dBFS) and the share of samples at full scale."""
    peak = float(np.max(np.abs(wave))) if len(wave) else 0.0
    rms = float(np.sqrt(np.mean(wave ** 2))) if len(wave) else 0.0
    return {"peak": peak, "rms_dbfs": 20 * np.log10(max(rms, 1e-12)), "clipped": float(np.mean(np.abs(wave) >= 0.999))}


PER_UTT_SUMS = "per_utt_sums.json"  # decode dir: the per-utterance MCD sums the report's bootstrap resamples
SUM_KEYS = ("frames", "mcd_sum_db", "speech_frames", "mcd_speech_sum_db")


def write_per_utt_sums(path: Path, per_utt: dict) -> None:
    """{utt: {frames, mcd_sum_db, speech_frames, mcd_speech_sum_db}} at full precision: pooled figures and their
    bootstrap intervals are computed from these sums, so the interval's estimate is the table's number."""
    with open(path, "w") as f:
        json.dump({u: {k: r[k] for k in SUM_KEYS} for u, r in per_utt.items()}, f, indent=0)


def decode(model, dump: Path, out: Path, num_wavs: int) -> dict:
    import kaldiio
    import soundfile
    from tqdm import tqdm

    from local_models.common.features import ArkStream
    from local_models.salad import acoustic
    from local_models.salad.data import speech_masks

    ling, ref = read_table(dump / "ling.scp"), read_table(dump / "acou.scp")
    speech = speech_masks(dump)
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
            if utt not in speech:
                raise DataDirError(dump / "dur", None, f"no durations for '{utt}': rerun stage 3")
            per_utt[utt] = acoustic.scores(r, y, speech[utt])
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
            nosil = r["mcd_speech_sum_db"] / r["speech_frames"] if r["speech_frames"] else float("nan")
            f.write(f"{utt} mcd_db={r['mcd_sum_db'] / r['frames']:.3f} frames={r['frames']} "
                    f"mcd_speech_db={nosil:.3f} speech_frames={r['speech_frames']}\n")
    write_per_utt_sums(tmp / PER_UTT_SUMS, per_utt)
    from local_models.salad.model import num_params

    summary = {**acoustic.pool_scores(per_utt.values()), "num_params": num_params(model.net), "wavs": wavs,
               "precision": model.precision,
               "metric": "MCD c0..c39 frame-pooled, frames paired 1:1 (forced durations, no DTW), over all frames "
                         "(mcd_db) and over frames whose reference phone is not sil / pau (mcd_speech_db); F0 RMSE "
                         "Hz on reference-voiced frames with F0 = exp(predicted log-F0); V/UV accuracy over all "
                         "frames"}
    with open(tmp / "scores.json", "w") as f:
        json.dump(summary, f, indent=1)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)  # all or nothing: a failed decode leaves no half-written OUT
    return summary
