"""Inference with trained models: discrete codes of an utterance set (`local_models.bin.vqvae_extract`) and
resynthesis in the target voice through the codebook inverter + Griffin-Lim (`local_models.bin.vqvae_resynth`)."""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Optional, Sequence, Tuple

import numpy as np
import torch
from tqdm import tqdm

from local_models.common.datadir import atomic_open, read_table, write_table

from .bitrate import BitrateResult, bitrate
from .featio import read_utt_list


# ----------------------------------------------------------------------------- codes
def encode_all(model, feats, device="cpu") -> dict:
    """{utt: (T',) int32 codes} of every utterance in `feats` ({utt: (T, F)}), one at a time on `device`."""
    codes = {}
    for utt in tqdm(sorted(feats), desc="vqvae_extract", mininterval=5, disable=None):
        x = torch.tensor(np.array(feats[utt], dtype=np.float32), device=device)[None]
        if x.shape[1] < 4:
            raise ValueError(f"'{utt}': {x.shape[1]} frames, fewer than the encoder's stride 4")
        _, c, clen = model.encode(x, torch.tensor([x.shape[1]], device=device))
        codes[utt] = c[0, : int(clen[0])].cpu().numpy().astype(np.int32)
    return codes


def write_codes(out: Path, codes: dict, codebook: np.ndarray) -> None:
    """OUT/codes/<utt>.npy (swapped in whole), OUT/codebook.npy and OUT/codes.txt (`<utt> c1 c2 ...`)."""
    tmp = out / "codes.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for utt, c in codes.items():
        np.save(tmp / f"{utt}.npy", c)
    shutil.rmtree(out / "codes", ignore_errors=True)
    tmp.rename(out / "codes")
    np.save(out / "codebook.npy", codebook)
    with atomic_open(out / "codes.txt") as f:
        f.writelines(f"{u} {' '.join(map(str, c.tolist()))}\n" for u, c in codes.items())


def write_bitrate(out: Path, codes: dict, num_codes: int, utt2dur: str,
                  bitrate_list: Optional[str] = None) -> Tuple[BitrateResult, int, int]:
    """OUT/bitrate.json over `bitrate_list`'s utterances (default all): (result, codes used, utterances)."""
    durs = read_table(utt2dur)
    keep = read_utt_list(bitrate_list, codes) if bitrate_list else list(codes)
    br = bitrate({u: codes[u] for u in keep}, durs)
    used = len(np.unique(np.concatenate([codes[u] for u in keep])))
    with atomic_open(out / "bitrate.json") as f:
        json.dump({**br.to_dict(), "codes_used": int(used), "num_codes": int(num_codes)}, f, indent=1)
    return br, used, len(keep)


# ----------------------------------------------------------------------------- resynthesis
def griffin_lim(mag: np.ndarray, sample_rate: int, n_fft: int, win_ms: float, hop_ms: float,
                n_iter: int) -> np.ndarray:
    """Wave of a (T, n_fft / 2 + 1) linear magnitude spectrogram (Hann window, centred frames; seeded fast
    Griffin-Lim, local_models.common.griffin_lim)."""
    from local_models.common.griffin_lim import griffin_lim as reconstruct

    hop, win = int(sample_rate * hop_ms / 1000), int(sample_rate * win_ms / 1000)
    return reconstruct(mag, n_fft, hop, win, n_iter)


def level(wave: np.ndarray) -> Tuple[np.ndarray, float]:
    """(WAVE with peaks above 0.99 scaled down, its peak before): keep the level, avoid clipping."""
    peak = float(np.abs(wave).max()) if wave.size else 0.0
    return (wave * (0.99 / peak) if peak > 0.99 else wave), peak


def resynthesise(model, feats: Mapping, utts: Sequence[str], out: Path, device="cpu", sample_rate: int = 16000,
                 n_fft: int = 512, win_ms: float = 25.0, hop_ms: float = 10.0,
                 griffin_lim_iters: int = 60) -> float:
    """OUT/wav/<utt>.wav (16-bit, peaks above 0.99 scaled down), OUT/wav.scp and OUT/resynth.json (counts,
    peak levels, RTF of inverter + Griffin-Lim); returns the seconds of audio written."""
    import soundfile

    (out / "wav").mkdir(parents=True, exist_ok=True)
    wav_scp, peaks, audio_s, proc_s = {}, [], 0.0, 0.0
    for utt in tqdm(utts, desc="vqvae_resynth", mininterval=5, disable=None):
        x = torch.tensor(np.array(feats[utt], dtype=np.float32), device=device)[None]
        t0 = time.perf_counter()
        with torch.no_grad():
            mag, lengths = model.predict(x, torch.tensor([x.shape[1]], device=device))
        wave = griffin_lim(mag[0, : int(lengths[0])].detach().float().cpu().numpy(), sample_rate, n_fft, win_ms,
                           hop_ms, griffin_lim_iters)
        proc_s += time.perf_counter() - t0
        wave, peak = level(wave)
        peaks.append(peak)
        path = (out / "wav" / f"{utt}.wav").absolute()
        soundfile.write(path, wave.astype(np.float32), sample_rate, subtype="PCM_16")
        wav_scp[utt] = str(path)
        audio_s += len(wave) / sample_rate
    write_table(out / "wav.scp", wav_scp)
    with atomic_open(out / "resynth.json") as f:
        json.dump({"utterances": len(utts), "audio_s": audio_s, "rtf": proc_s / max(audio_s, 1e-9),
                   "threads": torch.get_num_threads(), "peak_min": min(peaks, default=0.0),
                   "peak_max": max(peaks, default=0.0), "griffin_lim_iters": griffin_lim_iters}, f, indent=1)
    return audio_s


# ----------------------------------------------------------------------------- raw audio <-> units (packed models)
def torch_device(device) -> torch.device:
    """DEVICE ('cpu', 'cuda', 'cuda:1' or a torch.device), failing early when CUDA is asked for and absent."""
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device '{device}' asked for, but torch.cuda.is_available() is False")
    return dev


def _load_packed(path, kind: str):
    """The packed model at PATH (archive, unpacked archive, exp dir) if it is a KIND ('encoder' / 'inverter')."""
    from local_models.common.pack import PackError, load_model

    from .pack import exp_files

    model = load_model(path, paper="vqvae", exp_resolver=exp_files)
    got = "inverter" if any(k.startswith("model_file.") for k in model.files) else "encoder"
    if got != kind:
        use = {"encoder": "a VQ-VAE system's archive (exp/<system>/packed/model.tar.gz) with speech-to-units",
               "inverter": "the inverter's archive (exp/inverter_<system>/packed/model.tar.gz) with units-to-speech"}
        raise PackError(f"{path}: holds a {'codebook inverter' if got == 'inverter' else 'VQ-VAE encoder'}, not a "
                        f"{'codebook inverter' if kind == 'inverter' else 'VQ-VAE encoder'}: use {use[got]}")
    return model


def _build(config: Path, model_file: Path, device: torch.device, kind, overrides: Optional[dict] = None):
    """A trained VQ-VAE / inverter from its config (model_conf OVERRIDES applied) and checkpoint, in eval mode."""
    import argparse

    import yaml

    from local_models.common.pack import PackError

    from .task import VQVAETask

    conf = yaml.safe_load(Path(config).read_text(encoding="utf-8")) or {}
    conf["model_conf"] = {**(conf.get("model_conf") or {}), **(overrides or {})}
    model = VQVAETask.build_model(argparse.Namespace(**conf))
    if not isinstance(model, kind):
        raise PackError(f"{config}: holds a {type(model).__name__}, not a {kind.__name__}")
    try:
        model.load_state_dict(torch.load(model_file, map_location="cpu", weights_only=True))
    except (RuntimeError, EOFError, OSError) as e:  # truncated file, or weights of another architecture
        raise PackError(f"{model_file}: cannot load the checkpoint ({str(e).splitlines()[0]})") from None
    return model.to(device).eval()


def encode_frames(vqvae, feats: np.ndarray, device, chunk_frames: int) -> np.ndarray:
    """(T // STRIDE,) int64 codes of one utterance's (T, F) features, as `encode_all`: normalised over the whole
    utterance, encoded CHUNK_FRAMES (a multiple of STRIDE) at a time, so that a long recording costs linear time
    and memory (self-attention is quadratic); an utterance up to CHUNK_FRAMES is encoded whole, as the recipe does."""
    from .model import STRIDE, utterance_mvn

    x = torch.as_tensor(feats, dtype=torch.float32, device=device)[None]
    x = utterance_mvn(x, torch.ones(x.shape[:2], dtype=torch.bool, device=device))
    chunk = max(STRIDE, chunk_frames // STRIDE * STRIDE)
    codes = []
    with torch.no_grad():
        for start in range(0, x.shape[1] - STRIDE + 1, chunk):
            piece = x[:, start:start + chunk]
            z, zlen = vqvae.encoder(piece, torch.tensor([piece.shape[1]], device=device))
            codes.append(vqvae.codebook.nearest(z)[0, : int(zlen[0])])
    return torch.cat(codes).cpu().numpy().astype(np.int64)


TAIL_S = 2.0  # a long input's last piece shorter than this (at most half a piece) joins the one before


def cut_pieces(blocks: Iterable[np.ndarray], piece: int, tail: int) -> Iterator[np.ndarray]:
    """The joined BLOCKS cut into PIECE samples each, the last one up to PIECE + TAIL (a remainder under TAIL joins
    it); a piece leaves as soon as PIECE + TAIL samples have come, so memory holds one piece and a block."""
    buf: list = []
    n = 0
    for block in blocks:
        buf.append(block)
        n += len(block)
        if n >= piece + tail:
            x = np.concatenate(buf)
            while len(x) >= piece + tail:
                yield x[:piece]
                x = x[piece:]
            buf, n = [x], len(x)
    if n:
        yield np.concatenate(buf)


class Speech2Units:
    """Raw speech -> discrete units of a trained VQ-VAE (what egs/zerospeech2019/unit1 stage 5 computes).

        s2u = Speech2Units.from_pretrained("exp/trf_mfcc_k128/packed/model.tar.gz")
        out = s2u("hello.wav")   # or s2u((wave, rate)); {"units", "frame_rate", "bitrate", "duration"}
        for units in s2u.stream("meeting.wav"): ...   # piece by piece, the first within ~0.1 s

    An input shorter than MAX_CHUNK_S + TAIL_S (22 s) is one utterance, encoded exactly as the recipe encodes one. A longer
    one is cut into MAX_CHUNK_S pieces (a shorter remainder joins the last), each featurised, normalised and
    encoded as an utterance of its own (the model was trained on utterances of a few seconds; self-attention is
    quadratic in the length): a file is read block by block, so memory stays flat in its length, and `__call__`
    joins what `stream` yields.
    """

    def __init__(self, model, feat_conf, device="cpu", card: Optional[dict] = None, max_chunk_s: float = 20.0):
        from .frontend import frame_rate

        self.model, self.feat_conf, self.device, self.card = model, feat_conf, torch_device(device), card or {}
        self.num_codes = int(model.vqvae.codebook.num_codes)
        self.frame_rate = frame_rate(feat_conf)
        if not max_chunk_s >= 1.0:  # a piece must hold units; pieces under a second are not utterances
            raise ValueError(f"max_chunk_s must be at least 1 s, got {max_chunk_s}")
        self.chunk_s = float(max_chunk_s)
        self.tail_s = min(TAIL_S, self.chunk_s / 2)

    @classmethod
    def from_pretrained(cls, path, device="cpu", **kwargs) -> "Speech2Units":
        """PATH: a VQ-VAE system's archive (exp/<system>/packed/model.tar.gz), an unpacked one, or exp/<system>."""
        from .frontend import feat_config, feature_name_of, read_frontend
        from .task import VQVAEModel

        packed = _load_packed(path, "encoder")
        config = packed.file("config")
        if "frontend" in packed.files:
            feat_conf = read_frontend(packed.files["frontend"])
        else:  # an exp dir: the features its training data were
            import yaml

            feat_conf = feat_config(feature_name_of(yaml.safe_load(config.read_text(encoding="utf-8")), config))
        dev = torch_device(device)
        model = _build(config, packed.file("model_file"), dev, VQVAEModel)
        return cls(model, feat_conf, dev, packed.card, **kwargs)

    def features(self, audio, sample_rate: Optional[int] = None) -> Tuple[np.ndarray, float]:
        """((T, F) features, duration in s) of AUDIO (a path, (array, rate), or an array with SAMPLE_RATE) read
        whole, as the recipe computes an utterance's."""
        from local_models.common.features import compute

        wave, name = self._read(audio, sample_rate)
        self._check_length(wave, name)
        return compute(wave, self.feat_conf), len(wave) / self.feat_conf.sample_rate

    def _read(self, audio, sample_rate) -> Tuple[np.ndarray, str]:
        from local_models.common.audio import read_audio

        if isinstance(audio, np.ndarray):
            if sample_rate is None:
                raise ValueError("an audio array needs its sample_rate (or pass (array, rate))")
            audio = (audio, sample_rate)
        elif sample_rate is not None and not (isinstance(audio, tuple) and audio[1] == sample_rate):
            raise ValueError("sample_rate is for a bare array; a file or an (array, rate) pair carries its own")
        wave, _ = read_audio(audio, sample_rate=self.feat_conf.sample_rate)
        return wave, str(audio) if isinstance(audio, (str, Path)) else "<array>"

    def _check_length(self, wave: np.ndarray, name: str) -> None:
        from local_models.common.audio import AudioError

        from .model import STRIDE

        hop, sr = self.feat_conf.hop_length, self.feat_conf.sample_rate
        if 1 + len(wave) // hop < STRIDE:  # centred frames: 1 + samples // hop
            raise AudioError(f"{name}: {len(wave) / sr:.3f} s of audio, too short for one unit (at least "
                             f"{(STRIDE - 1) * hop / sr:.2f} s)")

    def _pieces(self, audio, sample_rate) -> Iterator[np.ndarray]:
        """The wave at the model's rate of every piece of AUDIO."""
        import soundfile

        from local_models.common.audio import checked_blocks, iter_audio_blocks

        sr = self.feat_conf.sample_rate
        piece, tail = int(self.chunk_s * sr), int(self.tail_s * sr)
        try:
            long_file = isinstance(audio, (str, Path)) and sample_rate is None and \
                soundfile.info(str(audio)).duration > self.chunk_s + self.tail_s
        except (RuntimeError, soundfile.LibsndfileError):
            long_file = False  # read_audio names the problem
        if not long_file:  # one read, every check of the whole input (silent, clipped, ...)
            wave, name = self._read(audio, sample_rate)
            self._check_length(wave, name)
            yield from cut_pieces([wave], piece, tail)
            return
        # silence and clipping judged on the whole input after its last block, as a short input's (an all-silent
        # long file is refused too, once read); each block for NaN / inf as it comes
        blocks = checked_blocks(iter_audio_blocks(audio, sr, self.chunk_s, first_s=1.0), str(audio), sr)
        yield from cut_pieces(blocks, piece, tail)

    def _encoded(self, audio, sample_rate) -> Iterator[Tuple[np.ndarray, float]]:
        from local_models.common.features import compute

        from .model import STRIDE

        for wave in self._pieces(audio, sample_rate):
            feats = compute(wave, self.feat_conf)
            # the piece as one utterance: every frame in one encoder pass (a chunk of floor(T / STRIDE) STRIDE frames
            # would leave the last T mod STRIDE out of the encoder's view, and change its codes)
            units = encode_frames(self.model.vqvae, feats, self.device, -(-len(feats) // STRIDE) * STRIDE)
            yield units, len(wave) / self.feat_conf.sample_rate

    def stream(self, audio, sample_rate: Optional[int] = None) -> Iterator[np.ndarray]:
        """(N_k,) int64 units of each piece of AUDIO as soon as it is encoded (see the class: one piece up to 22 s,
        MAX_CHUNK_S pieces beyond); joined, they are __call__'s "units"."""
        for units, _ in self._encoded(audio, sample_rate):
            yield units

    def __call__(self, audio, sample_rate: Optional[int] = None) -> dict:
        """{"units": (N,) int64, "frame_rate": units/s, "bitrate": ZeroSpeech 2019 bitrate of this utterance,
        "duration": s}."""
        parts = list(self._encoded(audio, sample_rate))
        units = np.concatenate([u for u, _ in parts])
        duration = sum(d for _, d in parts)
        br = bitrate({"utt": units}, duration)
        return {"units": units, "frame_rate": self.frame_rate, "bitrate": br.bitrate, "duration": duration}


def check_units(units, num_codes: int) -> np.ndarray:
    """UNITS as a (N,) int64 array; ValueError naming the first position that is not a code of the codebook."""
    a = np.asarray(units)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"units must be a non-empty 1-D sequence, got shape {a.shape}")
    if not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise ValueError(f"units must be integers, got {a.dtype}")
    bad = ~np.isfinite(a.astype(np.float64)) | (a != np.round(a)) | (a < 0) | (a >= num_codes)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"unit {a[i].item()} at position {i} is not a code of this codebook (0..{num_codes - 1})")
    return a.astype(np.int64)


class Units2Speech:
    """Discrete units (of the VQ-VAE the inverter was built on) -> speech in a target voice: codebook inverter +
    Griffin-Lim (egs/zerospeech2019/unit1 stage 8).

        u2s = Units2Speech.from_pretrained("exp/inverter_trf_mfcc_k128/packed/model.tar.gz")
        out = u2s(units, speaker="V001")   # {"wav": float32, "sample_rate": 16000, "speaker": "V001"}
    """

    def __init__(self, files: Mapping[str, Path], resynth: dict, device="cpu", card: Optional[dict] = None,
                 max_chunk_units: int = 500):
        self.files, self.resynth, self.device, self.card = dict(files), dict(resynth), torch_device(device), card or {}
        self.speakers = sorted(k.split(".", 1)[1] for k in self.files if k.startswith("config."))
        self.max_chunk_units, self._models = max_chunk_units, {}
        self.num_codes = int(self._model(self.speakers[0]).vqvae.vqvae.codebook.num_codes)

    @classmethod
    def from_pretrained(cls, path, device="cpu", **kwargs) -> "Units2Speech":
        """PATH: the inverter's archive (exp/inverter_<system>/packed/model.tar.gz), an unpacked one, or the exp dir."""
        from .pack import resynth_of

        packed = _load_packed(path, "inverter")
        exp_dir = Path(path) if packed.card.get("exp_dir") else None
        return cls(packed.files, resynth_of(packed.files, exp_dir), device, packed.card, **kwargs)

    def _model(self, speaker: str):
        """The inverter of SPEAKER, loaded on first use."""
        from .task import InverterModel

        if speaker not in self._models:
            self._models[speaker] = _build(
                self.files[f"config.{speaker}"], self.files[f"model_file.{speaker}"], self.device, InverterModel,
                {"vqvae_config": str(self.files["vqvae_config"]), "vqvae_model": str(self.files["vqvae_model"])})
        return self._models[speaker]

    def magnitude(self, units: np.ndarray, speaker: str) -> np.ndarray:
        """(4 N, n_bins) linear magnitudes, max_chunk_units at a time (attention is quadratic in the length)."""
        model = self._model(speaker)
        codes = torch.as_tensor(units, dtype=torch.long, device=self.device)
        parts = []
        with torch.no_grad():
            for start in range(0, len(codes), self.max_chunk_units):
                c = codes[start:start + self.max_chunk_units]
                e = model.vqvae.vqvae.codebook.embed[c][None]
                mag, lengths = model.inverter(e, torch.tensor([len(c)], device=self.device))
                parts.append(mag[0, : int(lengths[0])].float().cpu().numpy())
        return np.concatenate(parts)

    def __call__(self, units, speaker: Optional[str] = None) -> dict:
        speaker = self.speakers[0] if speaker is None else speaker
        if speaker not in self.speakers:
            raise ValueError(f"unknown speaker '{speaker}': this inverter speaks {', '.join(self.speakers)}")
        units = check_units(units, self.num_codes)
        r = self.resynth
        wave = griffin_lim(self.magnitude(units, speaker), r["sample_rate"], r["n_fft"], r["win_ms"], r["hop_ms"],
                           r["griffin_lim_iters"])
        wave, _ = level(wave)
        return {"wav": wave.astype(np.float32), "sample_rate": int(r["sample_rate"]), "speaker": speaker}
