"""Synthesis of egs/kss/tts1 (`python -m local_models.bin.jdit_synth`, whose --help describes the outputs): a data
dir's text_phn through a trained ESPnet2 TTS model (JDI-T or ESPnet's own Tacotron2 / Transformer / FastSpeech)
and a vocoder (local_models.jdit.vocoder), or reference mels through the vocoder alone (the "GT mel" row),
timing the acoustic model and the vocoder separately. Also the model loading the other KSS tools share, and
`Text2Speech`: typed Korean text -> wav in one call with a packed system (local_models.jdit.pack) or an exp dir.
"""
from __future__ import annotations

import dataclasses
import json
import shutil
import time
from pathlib import Path
from typing import Optional, Union

import numpy as np

from local_models.common.datadir import iter_lines
from local_models.common.device import device_of
from local_models.common.longtext import LongText

from .frontend import normalize, text_to_tokens
from .pack import DECODE_DEFAULTS, exp_files, find_model_file, read_fbank_conf, synthesis_settings
from .phonemes import token_type_of
from .vocoder import GriffinLim, PWGVocoder, build_vocoder


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


@dataclasses.dataclass(frozen=True)
class SynthOptions:
    """What jdit_synth synthesises and how (built by local_models/bin/jdit_synth.py from its command line, whose
    --help describes each): the model (model_dir, model_file: None = valid.loss.best.pth, else the newest epoch
    checkpoint) with its text_phn `text`, or reference mels `feats` instead; `vocoder` (griffin_lim or a Parallel
    WaveGAN checkpoint) with the recipe's `fbank_conf` and `griffin_lim_iters`; the AR models' `maxlenratio`,
    `minlenratio` and stop `threshold`; `ngpu`, torch threads `nthreads`; `save_att`: keep the attention weights;
    everything is written to `out_dir`."""
    out_dir: Union[str, Path]
    fbank_conf: Union[str, Path]
    model_dir: Optional[Union[str, Path]] = None
    model_file: Optional[Union[str, Path]] = None
    text: Optional[Union[str, Path]] = None
    feats: Optional[Union[str, Path]] = None
    vocoder: str = "griffin_lim"
    griffin_lim_iters: int = 32
    maxlenratio: float = 10.0
    minlenratio: float = 0.0
    threshold: float = 0.5
    nthreads: int = 1
    ngpu: int = 0
    save_att: bool = False


def load_text2speech(model_dir: Path, model_file: Path, threshold: float, maxlenratio: float, minlenratio: float,
                     device="cpu"):
    """ESPnet2's Text2Speech with jdit_synth's stop THRESHOLD and length ratios, seeded."""
    import local_models.jdit.task  # noqa: F401  (registers tts: jdit before the model is built)
    from espnet2.bin.tts_inference import Text2Speech

    return Text2Speech(train_config=model_dir / "config.yaml", model_file=model_file, device=str(device),
                       threshold=threshold, maxlenratio=maxlenratio, minlenratio=minlenratio,
                       always_fix_seed=True)


def _source(opts: SynthOptions, device):
    """(texts {utt: tokens}, model_dir, model_file, tts, autoregressive): what turns an utterance into a mel,
    from --feats (the mels themselves) or --model-dir + --text (ESPnet2's Text2Speech)."""
    import kaldiio
    import torch

    if opts.feats:  # reference mels through the vocoder only
        ref = kaldiio.load_scp(opts.feats)
        texts = {utt: "" for utt in ref}
        tts = lambda utt: dict(feat_gen=torch.from_numpy(np.array(ref[utt], dtype=np.float32)))  # noqa: E731
        return texts, Path(opts.feats).parent, Path(opts.feats), tts, False
    if not (opts.model_dir and opts.text):
        raise ValueError("give --model-dir and --text, or --feats")
    model_dir = Path(opts.model_dir)
    model_file = find_model_file(model_dir, opts.model_file)
    texts = read_text(opts.text)
    tts = load_text2speech(model_dir, model_file, opts.threshold, opts.maxlenratio, opts.minlenratio, device)
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


def synthesise(opts: SynthOptions) -> dict:
    """Everything jdit_synth writes, under OUT.tmp renamed to OUT (opts.out_dir) at the end. Returns synth.json's
    summary."""
    import kaldiio
    import soundfile
    import torch
    from tqdm import tqdm

    device = device_of(opts.ngpu)
    torch.set_num_threads(opts.nthreads)
    conf = read_fbank_conf(opts.fbank_conf)
    texts, model_dir, model_file, tts, autoregressive = _source(opts, device)
    vocoder = build_vocoder(opts.vocoder, conf, opts.griffin_lim_iters, device)
    # the GPU works asynchronously: wait for it before reading the clock
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    hop, fs = int(conf["hop_length"]), int(conf["sample_rate"])
    maxlen_frames = lambda n: int(n * opts.maxlenratio)  # noqa: E731

    out, tmp = Path(opts.out_dir), Path(str(opts.out_dir).rstrip("/") + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "wav").mkdir(parents=True)
    if opts.save_att:
        (tmp / "att_ws").mkdir()
    per_utt, durations = {}, {}
    am_s = voc_s = audio_s = 0.0
    with kaldiio.WriteHelper(f"ark,scp:{tmp}/feats.ark,{tmp}/feats.scp") as feats_writer:
        for utt in tqdm(sorted(texts), desc=f"jdit_synth {model_dir.name}", mininterval=5, disable=None):
            n_tokens = len(texts[utt].split())
            t0 = time.perf_counter()
            res = tts(utt) if opts.feats else tts(texts[utt])
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
            if opts.save_att and res.get("att_w") is not None:
                np.save(tmp / "att_ws" / f"{utt}.npy", res["att_w"].detach().float().cpu().numpy())
            per_utt[utt] = dict(tokens=n_tokens, frames=int(mel.shape[0]), seconds=round(seconds, 4),
                                peak=round(peak, 4), hit_maxlen=bool(autoregressive and n_tokens
                                                                and mel.shape[0] >= maxlen_frames(n_tokens)),
                                am_s=round(t1 - t0, 5), vocoder_s=round(t2 - t1, 5))
    _write_tables(tmp, out, per_utt, durations)
    summary = dict(model_dir=str(model_dir), model_file=model_file.name, vocoder=opts.vocoder, threads=opts.nthreads,
                   griffin_lim_iters=opts.griffin_lim_iters,  # what pack.py packs with a Griffin-Lim system
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


# ---------------------------------------------------------------------------------------------------- typed text
# `Text2Speech`: one call from text as a person types it to a wav, with a packed system (local_models.jdit.pack) or
# a recipe's exp/tts_<system> dir; what the shared `text-to-speech` command runs.

def scale_durations(durations, speed: float):
    """Frames per token for speaking rate SPEED (2 = twice as fast): round(d / speed) in int64, at least 1 frame
    where the model gave > 0 (a token never vanishes), 0 stays 0."""
    import torch

    d = durations.long()
    if speed == 1.0:
        return d
    scaled = torch.round(d.double() / speed).long()
    return torch.where(d > 0, scaled.clamp(min=1), torch.zeros_like(d))


def regulate_frames(mel, old, new):
    """MEL (sum(old), D) with each token's OLD frames resampled to its NEW count (nearest frame, integer index
    arithmetic on mel's device): the speaking rate of an autoregressive model, whose durations come from its
    attention rather than a predictor."""
    import torch

    old, new = old.to(mel.device).long(), new.to(mel.device).long()
    if int(old.sum()) != mel.size(0):
        raise ValueError(f"durations sum to {int(old.sum())} frames, the mel has {mel.size(0)}")
    token = torch.repeat_interleave(torch.arange(len(new), device=mel.device), new)
    offset = torch.arange(int(new.sum()), device=mel.device) - torch.repeat_interleave(torch.cumsum(new, 0) - new, new)
    start = torch.cumsum(old, 0) - old
    src = start[token] + torch.div((2 * offset + 1) * old[token], 2 * new[token], rounding_mode="floor")
    return mel[src]


def _torch_device(device):
    import torch

    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device}: torch sees no CUDA GPU here (use --device cpu)")
    return dev


def build_model(files: dict, device):
    """The ESPnet2 TTS model of FILES (config, model_file, stats_file) in eval mode on DEVICE. The config's paths
    are replaced by the files given, so an exp dir loads from any working directory."""
    import argparse
    import contextlib
    import io

    import torch
    import yaml

    # ESPnet prints a note on stdout when flash_attn is missing: keep stdout the command's own
    with contextlib.redirect_stdout(io.StringIO()):
        import local_models.jdit.task  # noqa: F401  (registers tts: jdit before the model is built)
        from espnet2.tasks.tts import TTSTask

    conf = yaml.safe_load(Path(files["config"]).read_text(encoding="utf-8"))
    if conf.get("normalize") == "global_mvn":
        conf["normalize_conf"] = {**conf.get("normalize_conf", {}), "stats_file": str(files["stats_file"])}
    if isinstance(conf.get("token_list"), str):
        conf["token_list"] = str(files["token_list"])
    model = TTSTask.build_model(argparse.Namespace(**conf))
    state = torch.load(files["model_file"], map_location="cpu", weights_only=False)
    missing = model.load_state_dict(state, strict=False).missing_keys  # strict=False as ESPnet's own loader
    if missing:
        raise ValueError(f"{files['model_file']}: not a checkpoint of {files['config']} (missing {missing[:3]} ...)")
    return model.to(device).eval(), conf


class Text2Speech(LongText):
    """Typed Korean text -> speech with one trained KSS system (JDI-T, or the recipe's Tacotron2 / Transformer /
    FastSpeech) and the vocoder the recipe used for it.

        tts = Text2Speech.from_pretrained("exp/tts_jdit/packed/model.tar.gz")   # or an exp/tts_<system> dir
        out = tts("안녕하세요, 3월 1일입니다.", speed=1.0)
        out["wav"] (float32), out["sample_rate"], out["durations"] (int64 frames per token), out["tokens"]

    Front end: local_models.jdit.frontend (Korean: numbers, %, Latin letters spelled; ValueError naming the
    characters it cannot read and their positions), then the tokens the model was trained on: espeak-ng phonemes
    or jamo (phonemes.token_type_of its token list), of the language in its config (`g2p_lang`, default ko). Durations: the predictor's (JDI-T, FastSpeech) or the attention's
    (Tacotron2, Transformer: ESPnet's DurationCalculator), divided by SPEED (scale_durations); the feed-forward
    models decode again with them, the autoregressive ones have their frames resampled per token."""

    def __init__(self, model, conf: dict, synthesis: dict, fbank: dict, vocoder, device, card=None):
        self.model, self.synthesis, self.fbank, self.vocoder, self.device = model, synthesis, fbank, vocoder, device
        self.token_list = list(conf["token_list"])
        self.token_id = {t: i for i, t in enumerate(self.token_list)}
        self.token_type = token_type_of(self.token_list)  # espeak-ng phonemes or jamo: what the model was trained on
        self.lang = conf.get("g2p_lang", "ko")  # the front end's language (JDITTask --g2p_lang; older configs: ko)
        self.card = card or {}
        self.sample_rate = int(fbank["sample_rate"])
        self.appends_eos = type(model.tts).__name__ != "JDIT"  # ESPnet's models append <sos/eos> to the text
        # only these stop on their own and have no duration predictor (jdit_synth tells them apart the same way)
        self.autoregressive = type(model.tts).__name__ in ("Tacotron2", "Transformer")

    @classmethod
    def from_pretrained(cls, path, device="cpu", vocoder: Optional[str] = None) -> "Text2Speech":
        """PATH: an archive of the recipe's pack stage, an unpacked one, or an exp/tts_<system> dir. VOCODER: None
        (the one the model was packed with: Griffin-Lim, or the recipe's Parallel WaveGAN / Multi-band MelGAN) or
        'griffin_lim' (its iterations as packed, else 32)."""
        if vocoder not in (None, "griffin_lim"):
            raise ValueError(f"vocoder {vocoder!r}: None (the packed one) or 'griffin_lim'")
        import yaml

        from local_models.common.pack import load_model

        dev = _torch_device(device)
        packed = load_model(path, paper="jdit", exp_resolver=exp_files)
        files = packed.files
        if "synthesis" in files:
            synthesis = yaml.safe_load(files["synthesis"].read_text(encoding="utf-8"))
        else:
            synthesis = synthesis_settings(Path(path))
        fbank = read_fbank_conf(files["fbank_conf"])
        model, conf = build_model(files, dev)
        voc = synthesis["vocoder"]
        if voc["type"] == "griffin_lim" or vocoder == "griffin_lim":
            synthesis = {**synthesis, "vocoder": {"type": "griffin_lim", "iters": int(voc.get("iters", 32))}}
            wave_maker = GriffinLim(fbank, synthesis["vocoder"]["iters"])
        else:
            wave_maker = PWGVocoder(str(packed.file("vocoder_file")), fbank, dev,
                                    config=packed.file("vocoder_config"))
        return cls(model, conf, synthesis, fbank, wave_maker, dev, packed.card)

    def tokens(self, text: str) -> list:
        """TEXT's tokens as the model reads them (front end; ValueError for what it cannot read)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        tokens = text_to_tokens(text, self.token_type, self.lang)
        unknown = sorted(set(t for t in tokens if t not in self.token_id))
        if unknown:
            raise ValueError(f"tokens {' '.join(unknown)} of {text!r} are not in the model's token list")
        return tokens

    def _mel(self, ids, speed: float):
        """(normalised mel (T, D), durations (N[+1],) int64) of token ids at SPEED."""
        tts = self.model.tts
        if self.autoregressive:
            from espnet2.tts.utils import DurationCalculator

            out = tts.inference(ids, **self.synthesis.get("decode", DECODE_DEFAULTS))
            durations, _ = DurationCalculator()(out["att_w"])
            durations = durations.long()
            if speed != 1.0:
                new = scale_durations(durations, speed)
                return regulate_frames(out["feat_gen"], durations, new), new
            return out["feat_gen"], durations
        out = tts.inference(ids)
        durations = out["duration"].long()
        if speed != 1.0:
            durations = scale_durations(durations, speed)
            out = tts.inference(ids, durations=durations, use_teacher_forcing=True)
        return out["feat_gen"], durations

    def __call__(self, text: str, speed: float = 1.0) -> dict:
        """{"wav": float32 (samples,), "sample_rate", "durations": int64 frames per token, "tokens" (with the
        <sos/eos> ESPnet's models append), "text": the normalised text, "mel": de-normalised log-mel (T, n_mels),
        "gain": < 1 where the vocoder's output passed full scale and was scaled to peak 0.99, "acoustic_seconds",
        "vocoder_seconds"}."""
        import torch

        if not (isinstance(speed, (int, float)) and np.isfinite(speed) and speed > 0):
            raise ValueError(f"speed must be a positive number, got {speed!r}")
        tokens = self.tokens(text)
        ids = torch.tensor([self.token_id[t] for t in tokens], dtype=torch.long, device=self.device)
        t0 = time.perf_counter()
        cuda = [self.device.index if self.device.index is not None else torch.cuda.current_device()] \
            if self.device.type == "cuda" else []
        with torch.no_grad(), torch.random.fork_rng(devices=cuda):
            torch.manual_seed(0)  # Tacotron2's pre-net keeps its dropout at inference (ESPnet): same text, same wav
            mel, durations = self._mel(ids, float(speed))
            if self.model.normalize is not None:
                mel = self.model.normalize.inverse(mel.clone()[None])[0][0]
        mel = mel.detach().float().cpu().numpy()
        t1 = time.perf_counter()
        wav = np.asarray(self.vocoder(mel), dtype=np.float32)
        t2 = time.perf_counter()
        peak = float(np.abs(wav).max()) if wav.size else 0.0
        gain = 0.99 / peak if peak > 1.0 else 1.0  # a wav past full scale is scaled down rather than clipped
        if gain != 1.0:
            wav = (wav * gain).astype(np.float32)
        return {"wav": wav, "sample_rate": self.sample_rate, "durations": durations.cpu().numpy().astype(np.int64),
                "tokens": tokens + (["<sos/eos>"] if self.appends_eos else []), "text": normalize(text) if self.lang == "ko" else text,
                "mel": mel, "gain": gain, "acoustic_seconds": t1 - t0, "vocoder_seconds": t2 - t1}
