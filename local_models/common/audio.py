"""Load audio named by wav.scp entries (file path or `command |` pipe), optionally resampled."""
from __future__ import annotations

import io
import logging
import subprocess
from math import gcd
from pathlib import Path
from typing import Iterable, Iterator, Optional, Tuple, Union

import numpy as np
import soundfile

from .datadir import DataDirError, read_segments, read_table


from .errors import AudioError  # noqa: E402,F401  (defined beside cli's other error classes)


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


# ----------------------------------------------------------------------------- a user's audio (inference tools)
AudioInput = Union[str, Path, Tuple[np.ndarray, int]]
CLIP_LEVEL = 0.999  # |x| at or above this is taken as full scale (int16's 32767 reads 0.99997)


SILENT_PEAK = 1e-5  # -100 dBFS


def check_audio(wave: np.ndarray, name: str, allow_silent: bool = False, max_clipped: float = 0.5,
                warn_clipped: float = 0.01) -> np.ndarray:
    """WAVE if a model can use it; else AudioError naming NAME: empty, NaN/inf, all silent (unless ALLOW_SILENT),
    or more than MAX_CLIPPED of its samples at full scale (a square wave, not a recording). A recording with more
    than WARN_CLIPPED of its samples at full scale is used, with a warning: real recordings clip now and then, and
    a model hears them still (the level is the user's to fix, not a reason to refuse)."""
    if wave.size == 0:
        raise AudioError(f"{name}: no samples (zero-length audio)")
    if not np.all(np.isfinite(wave)):
        raise AudioError(f"{name}: holds NaN or infinite samples")
    magnitude = np.abs(wave)
    check_levels(name, float(magnitude.max()), int(np.count_nonzero(magnitude >= CLIP_LEVEL)), wave.size,
                 allow_silent, max_clipped, warn_clipped)
    return wave


def check_levels(name: str, peak: float, clipped: int, n: int, allow_silent: bool = False, max_clipped: float = 0.5,
                 warn_clipped: float = 0.01) -> None:
    """check_audio's silence and clipping rules for N samples whose largest |sample| is PEAK and of which CLIPPED are
    at full scale (a long input read block by block is judged as a whole, as a short one is)."""
    if not allow_silent and n and peak < SILENT_PEAK:
        raise AudioError(f"{name}: silent (every sample below -100 dBFS)")
    share = clipped / n if n else 0.0
    if share > max_clipped:
        raise AudioError(f"{name}: clipped ({100 * share:.1f} % of samples at full scale; at most "
                         f"{100 * max_clipped:g} % accepted): lower the recording level")
    if share > warn_clipped:
        logging.getLogger(__name__).warning(
            f"warning: {name}: clipped ({100 * share:.1f} % of samples at full scale): results may suffer; "
            "lower the recording level")


def audio_name(src: AudioInput) -> str:
    return str(src) if isinstance(src, (str, Path)) else "<array>"


def read_audio(src: AudioInput, sample_rate: Optional[int] = None, **checks) -> Tuple[np.ndarray, int]:
    """A wav/flac/ogg/mp3 file (anything libsndfile reads) or an (array, rate) pair -> mono float32 at SAMPLE_RATE
    (resampled when given), checked by `check_audio(**checks)`. Channels are averaged."""
    name = audio_name(src)
    if isinstance(src, (str, Path)):
        if not Path(src).is_file():
            raise AudioError(f"{name}: no such audio file")
        try:
            wave, sr = soundfile.read(str(src), dtype="float32", always_2d=True)
        except (RuntimeError, soundfile.LibsndfileError) as e:
            raise AudioError(f"{name}: cannot read audio ({e})") from None
    else:
        wave, sr = src
        wave = np.asarray(wave, dtype=np.float32)
        if wave.ndim not in (1, 2):
            raise AudioError(f"{name}: expected (samples,) or (samples, channels), got shape {wave.shape}")
        wave = wave[:, None] if wave.ndim == 1 else wave
        if not isinstance(sr, (int, np.integer)) or sr <= 0:
            raise AudioError(f"{name}: sample rate must be a positive integer, got {sr!r}")
    wave = wave.mean(axis=1) if wave.shape[1] > 1 else wave[:, 0]
    check_audio(wave, name, **checks)
    return (resample(wave, int(sr), sample_rate), sample_rate) if sample_rate else (wave, int(sr))


def iter_audio_blocks(path: Union[str, Path], sample_rate: int, block_s: float = 60.0) -> Iterator[np.ndarray]:
    """A long file as consecutive mono float32 blocks at SAMPLE_RATE, read and resampled block by block (bounded
    memory: one block at a time; soxr's streaming resampler keeps the filter state across blocks, so the joined
    blocks equal a one-shot resampling up to its filter edges). Raises AudioError naming the file."""
    import soxr

    if not Path(path).is_file():
        raise AudioError(f"{path}: no such audio file")
    try:
        info = soundfile.info(str(path))
    except (RuntimeError, soundfile.LibsndfileError) as e:
        raise AudioError(f"{path}: cannot read audio ({e})") from None
    stream = soxr.ResampleStream(info.samplerate, sample_rate, 1, dtype="float32") \
        if info.samplerate != sample_rate else None
    frames = max(1, int(block_s * info.samplerate))
    blocks = soundfile.blocks(str(path), blocksize=frames, dtype="float32", always_2d=True)
    n = 0
    try:
        for i, block in enumerate(blocks):
            mono = block.mean(axis=1)
            n += len(mono)
            if not np.all(np.isfinite(mono)):
                raise AudioError(f"{path}: NaN or infinite samples in block {i} (from {i * block_s:.0f} s)")
            last = n >= info.frames
            out = stream.resample_chunk(mono, last=last) if stream is not None else mono
            if len(out):
                yield out.astype(np.float32, copy=False)
    except (RuntimeError, soundfile.LibsndfileError) as e:
        raise AudioError(f"{path}: cannot read audio ({e})") from None
    if n == 0:
        raise AudioError(f"{path}: no samples (zero-length audio)")


def with_last(items: Iterable) -> Iterator[Tuple[object, bool]]:
    """(item, is_last) pairs of ITEMS (a one-item look-ahead: a streaming decoder flushes on the last block)."""
    it = iter(items)
    try:
        prev = next(it)
    except StopIteration:
        return
    for item in it:
        yield prev, False
        prev = item
    yield prev, True
