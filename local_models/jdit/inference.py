"""Synthesis of egs/kss/tts1 (`python -m local_models.bin.tts_synth`, whose --help describes the outputs): a data
dir's text_phn through a trained ESPnet2 TTS model (JDI-T or ESPnet's own Tacotron2 / Transformer / FastSpeech)
and a vocoder (local_models.jdit.vocoder), or reference mels through the vocoder alone (the "GT mel" row),
timing the acoustic model and the vocoder separately. Also the model loading the other KSS tools share.
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np

from local_models.common.datadir import iter_lines
from local_models.common.device import device_of

from .vocoder import build_vocoder


def read_fbank_conf(path) -> dict:
    """--key value lines of conf/fbank.conf -> {key: value}."""
    conf = {}
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[0].startswith("--"):
            raise ValueError(f"{path}:{n}: expected '--key value', got '{line}'")
        conf[parts[0][2:].replace("-", "_")] = parts[1]
    for key in ("sample_rate", "n_fft", "hop_length", "n_mels"):
        if key not in conf:
            raise ValueError(f"{path}: no --{key.replace('_', '-')}")
    return conf


def find_model_file(model_dir: Path, name=None) -> Path:
    """MODEL_DIR/name, else valid.loss.best.pth, else the newest <N>epoch.pth (numerically)."""
    if name:
        f = model_dir / name
        if not f.is_file():
            raise FileNotFoundError(f"{f}: no such model file")
        return f
    best = model_dir / "valid.loss.best.pth"
    if best.is_file():
        return best
    epochs = sorted(model_dir.glob("*epoch.pth"), key=lambda f: int(f.name.split("epoch")[0]))
    if not epochs:
        raise FileNotFoundError(f"{model_dir}: no valid.loss.best.pth and no <N>epoch.pth (train it first)")
    return epochs[-1]


def load_tts_model(model_dir: Path, model_file=None, device="cpu"):
    """(ESPnet2 TTS model in eval mode on `device`, its training args) of an exp dir; any of the recipe's systems."""
    import local_models.jdit.task  # noqa: F401  (registers tts: jdit before the model is built)
    from espnet2.tasks.tts import TTSTask

    model, train_args = TTSTask.build_model_from_file(model_dir / "config.yaml",
                                                      find_model_file(model_dir, model_file), str(device))
    model.eval()
    return model, train_args


def read_text(path) -> dict:
    """{utt: "tok tok ..."} of a text_phn file; an utterance without tokens is an error (file:line)."""
    out = {}
    for n, line in iter_lines(path):
        parts = line.split(maxsplit=1)
        if len(parts) < 2:
            raise ValueError(f"{path}:{n}: utterance '{parts[0]}' has no tokens")
        out[parts[0]] = parts[1]
    if not out:
        raise ValueError(f"{path}: empty")
    return out


def load_text2speech(model_dir: Path, model_file: Path, args, device="cpu"):
    """ESPnet2's Text2Speech with tts_synth's stop threshold and length ratios (args), seeded."""
    import local_models.jdit.task  # noqa: F401  (registers tts: jdit before the model is built)
    from espnet2.bin.tts_inference import Text2Speech

    return Text2Speech(train_config=model_dir / "config.yaml", model_file=model_file, device=str(device),
                       threshold=args.threshold, maxlenratio=args.maxlenratio, minlenratio=args.minlenratio,
                       always_fix_seed=True)


def _source(args, device):
    """(texts {utt: tokens}, model_dir, model_file, tts, autoregressive): what turns an utterance into a mel,
    from --feats (the mels themselves) or --model-dir + --text (ESPnet2's Text2Speech)."""
    import kaldiio
    import torch

    if args.feats:  # reference mels through the vocoder only
        ref = kaldiio.load_scp(args.feats)
        texts = {utt: "" for utt in ref}
        tts = lambda utt: dict(feat_gen=torch.from_numpy(np.array(ref[utt], dtype=np.float32)))  # noqa: E731
        return texts, Path(args.feats).parent, Path(args.feats), tts, False
    if not (args.model_dir and args.text):
        raise ValueError("give --model-dir and --text, or --feats")
    model_dir = Path(args.model_dir)
    model_file = find_model_file(model_dir, args.model_file)
    texts = read_text(args.text)
    tts = load_text2speech(model_dir, model_file, args, device)
    from espnet2.tts.tacotron2 import Tacotron2
    from espnet2.tts.transformer import Transformer

    # only these stop on their own and can run into maxlenratio (ESPnet's Text2Speech tests the same);
    # a feed-forward model's short utterance may simply be longer than maxlenratio x tokens
    return texts, model_dir, model_file, tts, isinstance(tts.tts, (Tacotron2, Transformer))


def _write_tables(tmp: Path, out: Path, per_utt: dict, durations: dict) -> None:
    """TMP/wav.scp (naming the wavs at their final place OUT) and TMP/durations (when the model gave any)."""
    with open(tmp / "wav.scp", "w") as f:
        for utt in sorted(per_utt):
            f.write(f"{utt} {(out / 'wav' / f'{utt}.wav').resolve()}\n")
    if durations:
        with open(tmp / "durations", "w") as f:
            for utt in sorted(durations):
                f.write(f"{utt} {' '.join(map(str, durations[utt]))}\n")


def synthesise(args) -> dict:
    """Everything tts_synth writes, under OUT.tmp renamed to OUT at the end; `args` has tts_synth's options.
    Returns synth.json's summary."""
    import kaldiio
    import soundfile
    import torch
    from tqdm import tqdm

    device = device_of(args.ngpu)
    torch.set_num_threads(args.nthreads)
    conf = read_fbank_conf(args.fbank_conf)
    texts, model_dir, model_file, tts, autoregressive = _source(args, device)
    vocoder = build_vocoder(args.vocoder, conf, args.griffin_lim_iters, device)
    # the GPU works asynchronously: wait for it before reading the clock
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    hop, fs = int(conf["hop_length"]), int(conf["sample_rate"])
    maxlen_frames = lambda n: int(n * args.maxlenratio)  # noqa: E731

    out, tmp = Path(args.out_dir), Path(str(args.out_dir).rstrip("/") + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "wav").mkdir(parents=True)
    if args.save_att:
        (tmp / "att_ws").mkdir()
    per_utt, durations = {}, {}
    am_s = voc_s = audio_s = 0.0
    with kaldiio.WriteHelper(f"ark,scp:{tmp}/feats.ark,{tmp}/feats.scp") as feats_writer:
        for utt in tqdm(sorted(texts), desc=f"tts_synth {model_dir.name}", mininterval=5, disable=None):
            n_tokens = len(texts[utt].split())
            t0 = time.perf_counter()
            res = tts(utt) if args.feats else tts(texts[utt])
            sync()
            t1 = time.perf_counter()
            mel = res.get("feat_gen_denorm")
            mel = (res["feat_gen"] if mel is None else mel).detach().float().cpu().numpy()
            wav = vocoder(mel)
            sync()
            t2 = time.perf_counter()
            am_s, voc_s = am_s + (t1 - t0), voc_s + (t2 - t1)
            seconds = len(wav) / fs
            audio_s += seconds
            peak = float(np.abs(wav).max()) if len(wav) else 0.0
            if peak > 1.0:  # write at full scale rather than clip; the peak level is reported
                wav = wav / peak
            soundfile.write(tmp / "wav" / f"{utt}.wav", wav, fs, subtype="PCM_16")
            feats_writer(utt, mel)
            if res.get("duration") is not None:
                durations[utt] = res["duration"].long().tolist()
            if args.save_att and res.get("att_w") is not None:
                np.save(tmp / "att_ws" / f"{utt}.npy", res["att_w"].detach().float().cpu().numpy())
            per_utt[utt] = dict(tokens=n_tokens, frames=int(mel.shape[0]), seconds=round(seconds, 4),
                                peak=round(peak, 4), hit_maxlen=bool(autoregressive and n_tokens
                                                                and mel.shape[0] >= maxlen_frames(n_tokens)),
                                am_s=round(t1 - t0, 5), vocoder_s=round(t2 - t1, 5))
    _write_tables(tmp, out, per_utt, durations)
    summary = dict(model_dir=str(model_dir), model_file=model_file.name, vocoder=args.vocoder, threads=args.nthreads,
                   device=str(device),
                   utterances=len(per_utt), audio_seconds=round(audio_s, 3), acoustic_seconds=round(am_s, 4),
                   vocoder_seconds=round(voc_s, 4), acoustic_rtf=am_s / max(audio_s, 1e-9),
                   vocoder_rtf=voc_s / max(audio_s, 1e-9), hop_length=hop, sample_rate=fs, per_utt=per_utt)
    with open(tmp / "synth.json", "w") as f:
        json.dump(summary, f, indent=1)
    # feats.scp names tmp/feats.ark: point it at the final place before the rename
    scp = (tmp / "feats.scp").read_text().replace(str(tmp / "feats.ark"), str((out / "feats.ark").resolve()))
    (tmp / "feats.scp").write_text(scp)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return summary
