"""Load audio named by wav.scp entries (file path or `command |` pipe), optionally resampled."""
from __future__ import annotations

import io
import subprocess
from math import gcd
from pathlib import Path
from typing import Iterator, Optional, Tuple

import numpy as np
import soundfile

from .datadir import DataDirError, read_segments, read_table


class AudioError(RuntimeError):
    pass


def read_entry_bytes(entry: str) -> Tuple[bytes, str]:
    """Return the raw bytes of a wav.scp value and a description for error messages."""
    entry = entry.strip()
    if entry.endswith("|"):
        cmd = entry[:-1].strip()
        proc = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], capture_output=True)
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
            raise AudioError(f"command '{cmd}' failed with code {proc.returncode}: {err[0]}")
        return proc.stdout, f"pipe '{cmd}'"
    if not Path(entry).is_file():
        raise AudioError(f"audio file does not exist: {entry}")
    return Path(entry).read_bytes(), entry


def resample(wave: np.ndarray, orig_sr: int, target_sr: int) -> np.ndarray:
    """Polyphase resampling (deterministic, linear-phase); identity when rates match."""
    if orig_sr == target_sr:
        return wave
    from scipy.signal import resample_poly

    g = gcd(orig_sr, target_sr)
    return resample_poly(wave, target_sr // g, orig_sr // g, axis=0).astype(np.float32)


def load_audio(entry: str, sample_rate: Optional[int] = None, mono: bool = True) -> Tuple[np.ndarray, int]:
    """Read a wav.scp value as float32 in [-1, 1]; resample to `sample_rate` if given."""
    if ".ark:" in entry and not entry.endswith("|"):
        import kaldiio

        sr, wave = kaldiio.load_mat(entry)
        wave = np.asarray(wave, dtype=np.float32) / (32768.0 if np.issubdtype(np.asarray(wave).dtype, np.integer) else 1.0)
    else:
        data, desc = read_entry_bytes(entry)
        try:
            wave, sr = soundfile.read(io.BytesIO(data), dtype="float32", always_2d=True)
        except (RuntimeError, soundfile.LibsndfileError) as e:
            raise AudioError(f"cannot decode audio from {desc}: {e}") from None
        wave = wave.mean(axis=1) if mono else wave
    return resample(wave, sr, sample_rate) if sample_rate else wave, sample_rate or sr


def iter_utterances(data_dir, sample_rate: Optional[int] = None) -> Iterator[Tuple[str, np.ndarray, int]]:
    """Yield (utt, wave, sr) for every utterance; cuts `segments` out of their recordings."""
    data_dir = Path(data_dir)
    wav_scp = read_table(data_dir / "wav.scp")
    if (data_dir / "segments").is_file():
        segments = read_segments(data_dir / "segments")
        cache: Tuple[Optional[str], Optional[np.ndarray], int] = (None, None, 0)
        for utt, (rec, start, end) in segments.items():
            if rec not in wav_scp:
                raise DataDirError(data_dir / "segments", None, f"recording '{rec}' of '{utt}' not in wav.scp")
            if cache[0] != rec:  # segments are sorted by utt = usually grouped by recording
                cache = (rec, *load_audio(wav_scp[rec], sample_rate))
            _, wave, sr = cache
            yield utt, wave[int(round(start * sr)): int(round(end * sr))], sr
    else:
        for utt, entry in wav_scp.items():
            try:
                wave, sr = load_audio(entry, sample_rate)
            except AudioError as e:
                raise AudioError(f"{data_dir / 'wav.scp'}: '{utt}': {e}") from None
            yield utt, wave, sr
