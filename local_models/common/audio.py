"""Load audio named by wav.scp entries (file path or `command |` pipe), optionally resampled."""
from __future__ import annotations

import io
import logging
import subprocess
from math import gcd
from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, Tuple, Union

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


class PolyphaseResampler:
    """scipy.signal.resample_poly(x, up, down) of a signal fed block by block, in numpy (no scipy.signal to load:
    1 s): the same Kaiser-windowed (beta 5) FIR of 20 max(up, down) + 1 taps, centred on each output, zeros beyond
    the ends. `push(block, last)` returns the output samples whose inputs have all come (the rest at LAST); the
    joined outputs equal resample_poly of the joined input to float32 rounding (tests/test_pack.py), so a file
    resampled in blocks gives what the recipes' data preparation (common.audio.resample) gives it whole. Output m
    is the dot product of the taps of its phase (m mod up) with a strided window of the input: one einsum per phase
    and block, as fast as resample_poly."""

    def __init__(self, orig_sr: int, target_sr: int):
        g = gcd(int(orig_sr), int(target_sr))
        up, down = int(target_sr) // g, int(orig_sr) // g
        rate = max(up, down)
        half = 10 * rate
        n = 2 * half + 1
        h = np.sinc((np.arange(n) - half) / rate) / rate * np.kaiser(n, 5.0)  # firwin(n, 1 / rate, kaiser 5)
        h *= up / h.sum()
        width = -(-n // up)  # taps of one phase
        taps = np.zeros((up, width))
        for m0 in range(up):
            t = h[(m0 * down + half) % up:: up]
            taps[m0, : len(t)] = t
        self.up, self.down, self.half, self.width = up, down, half, width
        self.taps = np.ascontiguousarray(taps[:, ::-1], dtype=np.float32)  # reversed: a window dot the taps
        self.buf = np.zeros(width - 1, dtype=np.float32)  # the input, zero-padded in front, from window self.base
        self.base = self.n_in = self.m = 0

    def _window(self, m: int) -> int:
        """Where output M's window starts in the front-padded input: input sample floor((m down + half) / up) is
        the window's last."""
        return (m * self.down + self.half) // self.up

    def push(self, block: np.ndarray, last: bool = False) -> np.ndarray:
        up, down = self.up, self.down
        self.n_in += len(block)
        tail = [np.zeros(self.half // up + 2, dtype=np.float32)] if last else []
        self.buf = np.concatenate([self.buf, np.asarray(block, dtype=np.float32)] + tail)
        if last:
            end = -(-self.n_in * up // down)  # resample_poly's output length
        else:  # outputs whose window's last input sample has come
            end = max(self.m, -(-(self.n_in * up - self.half) // down))
        out = np.empty(end - self.m, dtype=np.float32)
        if not len(out):  # not one window complete yet
            return out
        windows = np.lib.stride_tricks.sliding_window_view(self.buf, self.width)
        for k in range(min(up, end - self.m)):
            m = self.m + k  # outputs m, m + up, ...: one phase, windows down samples apart
            a = self._window(m) - self.base
            out[k::up] = np.einsum("ij,j->i", windows[a: a + (end - 1 - m) // up * down + 1: down], self.taps[m % up])
        nxt = self._window(end)
        self.buf, self.base, self.m = self.buf[nxt - self.base:], nxt, end
        return out


def polyphase(wave: np.ndarray, orig_sr: int, target_sr: int) -> np.ndarray:
    """resample(WAVE (samples,), ...) without scipy.signal (inference: a model loads in well under a second)."""
    if orig_sr == target_sr:
        return np.asarray(wave, dtype=np.float32)
    return PolyphaseResampler(orig_sr, target_sr).push(wave, last=True)


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


def iter_audio_blocks(path: Union[str, Path], sample_rate: int, block_s: float = 60.0,
                      first_s: Optional[float] = None, growth: float = 1.5,
                      full_now: Optional[Callable[[], bool]] = None) -> Iterator[np.ndarray]:
    """A long file as consecutive mono float32 blocks at SAMPLE_RATE, read and resampled block by block (bounded
    memory: one block at a time; PolyphaseResampler keeps its filter's input across blocks, so the joined blocks
    equal `resample` of the whole file, as the recipes prepare their data). FIRST_S: the first block's length, each
    next one GROWTH times the last, up to BLOCK_S; once FULL_NOW() is true (a streaming decoder has given its first
    output), BLOCK_S at once. Small blocks make the first output early; big ones keep the cost of the context each
    block is decoded with small. Raises AudioError naming the file."""
    if not Path(path).is_file():
        raise AudioError(f"{path}: no such audio file")
    try:
        f = soundfile.SoundFile(str(path))
    except (RuntimeError, soundfile.LibsndfileError) as e:
        raise AudioError(f"{path}: cannot read audio ({e})") from None
    with f:
        stream = PolyphaseResampler(f.samplerate, sample_rate) if f.samplerate != sample_rate else None
        full = max(1, int(block_s * f.samplerate))
        size = min(full, max(1, int(first_s * f.samplerate))) if first_s else full
        n = 0
        try:
            while n < f.frames:
                block = f.read(min(size, f.frames - n), dtype="float32", always_2d=True)
                if len(block) == 0:
                    break
                mono = block.mean(axis=1)
                if not np.all(np.isfinite(mono)):
                    raise AudioError(f"{path}: NaN or infinite samples from {n / f.samplerate:.0f} s")
                n += len(mono)
                out = stream.push(mono, last=n >= f.frames) if stream is not None else mono
                if len(out):
                    yield out.astype(np.float32, copy=False)
                size = full if full_now is not None and full_now() else min(full, max(size + 1, int(growth * size)))
            if stream is not None and 0 < n < f.frames:  # fewer samples than the header said: the filter's tail
                tail = stream.push(np.zeros(0, dtype=np.float32), last=True)
                if len(tail):
                    yield tail
        except AudioError:
            raise
        except (RuntimeError, soundfile.LibsndfileError) as e:
            raise AudioError(f"{path}: cannot read audio ({e})") from None
    if n == 0:
        raise AudioError(f"{path}: no samples (zero-length audio)")


def checked_blocks(blocks: Iterable[np.ndarray], name: str, rate: int,
                   allow_silent: bool = False) -> Iterator[np.ndarray]:
    """BLOCKS of the input NAME, checked as read_audio checks a whole input: each block for what it tells alone
    (no samples, NaN / inf), and after the last block the input as a whole for silence (unless ALLOW_SILENT) and
    clipping (check_levels): a long input is refused or warned about by the rules a short one meets, not block by
    block (a silent block is a pause; one clipped block is not most of the input)."""
    n, peak, clipped = 0, 0.0, 0
    for block in blocks:
        check_audio(block, f"{name} (at {n / rate:.0f} s)", allow_silent=True, max_clipped=1.0, warn_clipped=1.0)
        magnitude = np.abs(block)
        peak = max(peak, float(magnitude.max()))
        clipped += int(np.count_nonzero(magnitude >= CLIP_LEVEL))
        n += len(block)
        yield block
    check_levels(name, peak, clipped, n, allow_silent=allow_silent)


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
