"""Inference with trained models: discrete codes of an utterance set (`local_models.bin.vqvae_extract`) and
resynthesis in the target voice through the codebook inverter + Griffin-Lim (`local_models.bin.vqvae_resynth`)."""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Mapping, Optional, Sequence, Tuple

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
    """Wave of a (T, n_fft / 2 + 1) linear magnitude spectrogram (librosa, Hann window, centred frames)."""
    import librosa

    hop, win = int(sample_rate * hop_ms / 1000), int(sample_rate * win_ms / 1000)
    return librosa.griffinlim(mag.T, n_iter=n_iter, hop_length=hop, win_length=win,
                              n_fft=n_fft, window="hann", center=True, random_state=0)


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
        peak = float(np.abs(wave).max()) if wave.size else 0.0
        if peak > 0.99:  # keep the level, avoid clipping
            wave = wave * (0.99 / peak)
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
