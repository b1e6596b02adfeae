"""Synthesise a data dir's text with a trained ESPnet2 TTS model (JDI-T or ESPnet's own Tacotron2 /
Transformer / FastSpeech) and a vocoder, timing the acoustic model and the vocoder separately.

`--feats FEATS.scp` instead of a model: vocode the given (reference) log-mel features: the paper's "GT mel"
row, the vocoder's upper bound.

Text: a `text_phn` file (`<utt> <token> <token> ...`, the tokens of data/token_list), fed to ESPnet2's
Text2Speech exactly as in training (token_type phn, g2p none). The model dir holds ESPnet's config.yaml and
a model file (default valid.loss.best.pth, else the newest epoch checkpoint).

Vocoder (`--vocoder`): `griffin_lim` (ESPnet2's Spectrogram2Waveform: log10-mel -> linear by the mel
filterbank's pseudo-inverse -> librosa Griffin-Lim; STFT settings from --fbank-conf, the recipe's feature
config) or the path of a trained Parallel WaveGAN checkpoint (`parallel_wavegan.utils.load_model`; its
config.yml beside it), which takes the de-normalised log10-mel exactly as extracted.

Writes OUT/wav/<utt>.wav (16-bit PCM), OUT/wav.scp, OUT/feats.{ark,scp} (de-normalised log-mel),
OUT/durations (frames per token, when the model gives them), OUT/att_ws/<utt>.npy (attention weights of AR
models, for the robustness check and plots), OUT/synth.json (per-utterance frames, stop reason, peak level;
totals and real-time factors: compute seconds / seconds of audio generated, acoustic model and vocoder apart).
Everything is written under OUT.tmp and renamed to OUT at the end: an interrupted run leaves no partial OUT.

`--ngpu 1` runs the acoustic model and a Parallel WaveGAN vocoder on the GPU (Griffin-Lim is librosa's, on the CPU);
the timings then wait for the GPU's work to finish.
"""
import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from local_models.common.device import add_ngpu_option, device_of


def get_parser():
    p = argparse.ArgumentParser(prog="tts_synth", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-dir", help="ESPnet2 TTS exp dir with config.yaml")
    p.add_argument("--model-file", "--model_file", dest="model_file", default=None,
                   help="checkpoint in --model-dir (default: valid.loss.best.pth, else the newest N*epoch.pth)")
    add_ngpu_option(p)
    p.add_argument("--text", help="text_phn file: <utt> <tokens ...> (with --model-dir)")
    p.add_argument("--feats", help="instead of --model-dir/--text: vocode these log-mel features (kaldiio scp)")
    p.add_argument("--vocoder", default="griffin_lim", help="griffin_lim or a Parallel WaveGAN checkpoint .pkl")
    p.add_argument("--fbank-conf", required=True, help="the recipe's feature config (conf/fbank.conf)")
    p.add_argument("--griffin-lim-iters", type=int, default=32)
    p.add_argument("--maxlenratio", type=float, default=10.0, help="AR models: max frames = ratio x tokens")
    p.add_argument("--minlenratio", type=float, default=0.0)
    p.add_argument("--threshold", type=float, default=0.5, help="AR models: stop-token threshold")
    p.add_argument("--nthreads", type=int, default=1, help="torch threads (RTF is reported for this many)")
    p.add_argument("--save-att", action="store_true", help="save the attention weights of AR models")
    p.add_argument("out_dir")
    return p


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
    from local_models.common.datadir import iter_lines

    out = {}
    for n, line in iter_lines(path):
        parts = line.split(maxsplit=1)
        if len(parts) < 2:
            raise ValueError(f"{path}:{n}: utterance '{parts[0]}' has no tokens")
        out[parts[0]] = parts[1]
    if not out:
        raise ValueError(f"{path}: empty")
    return out


class GriffinLim:
    """log10-mel (T, n_mels) -> waveform, ESPnet2's Spectrogram2Waveform with the recipe's STFT settings."""

    def __init__(self, conf: dict, iters: int):
        from espnet2.utils.griffin_lim import Spectrogram2Waveform

        self.fs = int(conf["sample_rate"])
        self.impl = Spectrogram2Waveform(
            n_fft=int(conf["n_fft"]), n_shift=int(conf["hop_length"]), fs=self.fs, n_mels=int(conf["n_mels"]),
            win_length=int(conf.get("win_length", conf["n_fft"])), window="hann",
            fmin=int(float(conf.get("fmin", 0))), fmax=int(float(conf["fmax"])) if "fmax" in conf else None,
            griffin_lim_iters=iters)

    def __call__(self, logmel: np.ndarray) -> np.ndarray:
        import torch

        np.random.seed(0)  # librosa's Griffin-Lim starts from random phases: same run, same wav
        return self.impl(torch.from_numpy(logmel)).numpy()


class PWGVocoder:
    """A trained Parallel WaveGAN generator (parallel-wavegan package) on de-normalised log10-mel."""

    def __init__(self, checkpoint: str, conf: dict, device="cpu"):
        import torch

        import local_models.common.compat  # noqa: F401  (parallel_wavegan imports scipy.signal.kaiser)
        from parallel_wavegan.utils import load_model

        self.model = load_model(checkpoint)
        self.model.remove_weight_norm()
        self.model.eval().to(device)
        self.device = torch.device(device)
        self.fs = int(self.model.config.get("sampling_rate", conf["sample_rate"])) if hasattr(self.model, "config") \
            else int(conf["sample_rate"])
        self.torch = torch

    def __call__(self, logmel: np.ndarray) -> np.ndarray:
        with self.torch.no_grad():
            c = self.torch.from_numpy(logmel).to(self.device)
            return self.model.inference(c).view(-1).detach().float().cpu().numpy()


def build_vocoder(args, conf, device="cpu"):
    if args.vocoder == "griffin_lim":
        return GriffinLim(conf, args.griffin_lim_iters)
    if not Path(args.vocoder).is_file():
        raise FileNotFoundError(f"--vocoder {args.vocoder}: neither 'griffin_lim' nor a checkpoint file")
    return PWGVocoder(args.vocoder, conf, device)


def load_text2speech(model_dir: Path, model_file: Path, args, device="cpu"):
    import local_models.jdit.task  # noqa: F401  (registers tts: jdit before the model is built)
    from espnet2.bin.tts_inference import Text2Speech

    return Text2Speech(train_config=model_dir / "config.yaml", model_file=model_file, device=str(device),
                       threshold=args.threshold, maxlenratio=args.maxlenratio, minlenratio=args.minlenratio,
                       always_fix_seed=True)


def synthesise(args) -> dict:
    import kaldiio
    import soundfile
    import torch
    from tqdm import tqdm

    device = device_of(args.ngpu)
    torch.set_num_threads(args.nthreads)
    conf = read_fbank_conf(args.fbank_conf)
    if args.feats:  # reference mels through the vocoder only
        ref = kaldiio.load_scp(args.feats)
        texts = {utt: "" for utt in ref}
        model_dir, model_file = Path(args.feats).parent, Path(args.feats)
        tts = lambda utt: dict(feat_gen=torch.from_numpy(np.array(ref[utt], dtype=np.float32)))  # noqa: E731
        autoregressive = False
    elif args.model_dir and args.text:
        model_dir = Path(args.model_dir)
        model_file = find_model_file(model_dir, args.model_file)
        texts = read_text(args.text)
        tts = load_text2speech(model_dir, model_file, args, device)
        from espnet2.tts.tacotron2 import Tacotron2
        from espnet2.tts.transformer import Transformer

        # only these stop on their own and can run into maxlenratio (ESPnet's Text2Speech tests the same);
        # a feed-forward model's short utterance may simply be longer than maxlenratio x tokens
        autoregressive = isinstance(tts.tts, (Tacotron2, Transformer))
    else:
        raise ValueError("give --model-dir and --text, or --feats")
    vocoder = build_vocoder(args, conf, device)
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
    with open(tmp / "wav.scp", "w") as f:
        for utt in sorted(per_utt):
            f.write(f"{utt} {(out / 'wav' / f'{utt}.wav').resolve()}\n")
    if durations:
        with open(tmp / "durations", "w") as f:
            for utt in sorted(durations):
                f.write(f"{utt} {' '.join(map(str, durations[utt]))}\n")
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


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        s = synthesise(args)
    except (FileNotFoundError, ValueError) as e:
        sys.exit(f"tts_synth: {e}")
    print(f"tts_synth: {s['utterances']} utterances, {s['audio_seconds']:.1f} s of audio; RTF acoustic "
          f"{s['acoustic_rtf']:.4f}, vocoder {s['vocoder_rtf']:.4f} ({s['threads']} thread(s)) -> {args.out_dir}")


if __name__ == "__main__":
    main()
