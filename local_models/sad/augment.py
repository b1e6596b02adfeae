"""Non-speech augmentation for SAD data, the Kaldi way (docs/data.md, "Augmentation").

One mixer, two uses:
- `augment_data_dir`: copies of every training recording with music in the background, foreground noises / tones one
  after another, babble of several talkers, or a room response, as Kaldi's steps/data/augment_data_dir.py and
  reverberate_data_dir.py make them for its SAD and x-vector recipes (same SNR menus). The speech labels are kept: what
  is added is non-speech.
- `place_events`: non-speech events (music, tones, noises, babble) at Poisson times in a synthetic stream (the mini
  corpus), each one a row of the data dir's `events` table.

Sources come in MUSAN's layout (music/ noise/ speech/ and, ours, tones/: any depth, wav/flac/ogg) and room responses
in RIRS_NOISES' (simulated_rirs/, real_rirs_isotropic_noises/), or synthetic exponential-decay responses.
SNRs are relative to the SPEECH level (RMS over the labelled speech), not the whole recording's power as in Kaldi:
a SAD stream is mostly non-speech, and the whole-file power would put every addition several dB louder than meant.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from scipy.signal import fftconvolve

from local_models.common.audio import read_audio

from .events import Event, load_events, write_events
from .labels import Intervals, load_reference, write_rttm

AUDIO_SUFFIXES = {".wav", ".flac", ".ogg", ".oga"}
SOURCE_KINDS = ("music", "noise", "tones", "speech")  # MUSAN's directories and our tones/
EVENT_OF_SOURCE = {"music": "music", "noise": "noise", "tones": "tone", "speech": "babble"}
# Kaldi's SNR menus (dB) for its SAD / x-vector augmentation; tones are ours, set like its foreground noises
AUG_TYPES = ("music", "noise", "babble", "tones", "reverb")
MUSIC_SNRS = (15, 10, 8, 5)
NOISE_SNRS = (15, 10, 5, 0)
BABBLE_SNRS = (20, 17, 15, 13)
BABBLE_TALKERS = (3, 4, 5, 6, 7)
TONE_SNRS = (10, 5, 0, -5)
FG_INTERVAL_S = 1.0  # Kaldi's --fg-interval: seconds between one foreground noise and the next


class NonSpeechSet:
    """Audio files of a MUSAN-like directory (an LRU cache keeps the files drawn last, at the rates asked for)."""

    def __init__(self, root):
        self.root = Path(root)
        if not self.root.is_dir():
            raise FileNotFoundError(f"{self.root}: no such directory (MUSAN layout: music/ noise/ speech/ tones/)")
        self.files: Dict[str, List[Path]] = {}
        for kind in SOURCE_KINDS:
            found = sorted(p for p in (self.root / kind).rglob("*") if p.suffix.lower() in AUDIO_SUFFIXES)
            if found:
                self.files[kind] = found
        if not self.files:
            raise FileNotFoundError(f"{self.root}: no audio under music/, noise/, tones/ or speech/ (MUSAN layout)")
        self.load = functools.lru_cache(maxsize=64)(self._read)  # (path, rate) -> wave at unit RMS

    def kinds(self) -> List[str]:
        return list(self.files)

    @staticmethod
    def _read(path: Path, sr: int) -> np.ndarray:
        wave, _ = read_audio(path, sr, allow_silent=True, max_clipped=1.0)
        return unit_rms(wave.astype(np.float64))

    def draw(self, kind: str, n: int, sr: int, rng: np.random.Generator) -> np.ndarray:
        """n samples at SR of a random file of KIND at unit RMS: a random stretch of it, looped when shorter."""
        wave = self.load(self.files[kind][int(rng.integers(len(self.files[kind])))], sr)
        if len(wave) < n:
            wave = np.tile(wave, n // len(wave) + 1)
        start = int(rng.integers(len(wave) - n + 1))
        return wave[start:start + n]


def unit_rms(x: np.ndarray) -> np.ndarray:
    """X scaled to RMS 1 over its non-silent part (so a short sound in a long silent file is not boosted)."""
    power = x ** 2
    loud = power > 1e-4 * (power.max() + 1e-20)
    rms = np.sqrt(power[loud].mean()) if loud.any() else 0.0
    return x / rms if rms > 0 else x


def speech_rms(wave: np.ndarray, speech: Intervals, sr: int) -> float:
    """RMS over the labelled speech (over the whole wave when there is none)."""
    parts = [wave[int(s * sr):int(e * sr)] for s, e in speech]
    parts = [p for p in parts if len(p)]
    x = np.concatenate(parts) if parts else wave
    return float(np.sqrt(np.mean(x.astype(np.float64) ** 2))) if len(x) else 0.0


def find_rirs(root) -> List[Path]:
    """Room responses of a RIRS_NOISES directory: those its `rir_list` files name (as Kaldi reads them: the last
    field, relative to the directory above RIRS_NOISES), else every simulated RIR and the real files named *rir*."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such directory (RIRS_NOISES layout: simulated_rirs/, real_rirs_isotropic_noises/)")
    rirs = []
    for lst in sorted(root.rglob("rir_list")):
        for lineno, line in enumerate(lst.read_text().splitlines(), 1):
            if line.strip():
                path = root.parent / line.split()[-1]
                if not path.is_file():
                    raise FileNotFoundError(f"{lst}:{lineno}: no such room response {path}")
                rirs.append(path)
    if not rirs:
        rirs = sorted(p for p in (root / "simulated_rirs").rglob("*.wav"))
        rirs += sorted(p for p in (root / "real_rirs_isotropic_noises").rglob("*.wav") if "rir" in p.name.lower())
    if not rirs:
        raise FileNotFoundError(f"{root}: no room response under simulated_rirs/ or real_rirs_isotropic_noises/")
    return rirs


def synthetic_rir(rng: np.random.Generator, sr: int, rt60: Optional[float] = None) -> np.ndarray:
    """A room response by Polack's model: a direct path, then Gaussian noise decaying 60 dB in RT60 (0.2-0.8 s)."""
    rt60 = float(rng.uniform(0.2, 0.8)) if rt60 is None else rt60
    t = np.arange(int(rt60 * sr)) / sr
    h = rng.standard_normal(len(t)) * np.exp(-6.91 * t / rt60) * 0.3
    h[0] = 1.0
    return h / np.sqrt(np.sum(h ** 2))


def reverberate(wave: np.ndarray, rir: np.ndarray) -> np.ndarray:
    """WAVE through RIR, aligned on the response's strongest tap (as Kaldi does), same length and speech level."""
    peak = int(np.argmax(np.abs(rir)))
    out = fftconvolve(wave, rir)[peak:peak + len(wave)]
    return out * (np.sqrt(np.mean(wave ** 2)) / (np.sqrt(np.mean(out ** 2)) + 1e-12))


def add_at_snr(wave: np.ndarray, piece: np.ndarray, start: int, level: float, snr_db: float) -> None:
    """Add PIECE (unit RMS) into WAVE at START, scaled to `level` (the speech RMS) minus SNR_DB; in place."""
    end = min(len(wave), start + len(piece))
    wave[start:end] += piece[:end - start] * level * 10 ** (-snr_db / 20)


def add_background(wave, sr, nset: NonSpeechSet, kind: str, n_sources: int, snrs: Sequence[float], level: float,
                   rng) -> List[Event]:
    """N_SOURCES files of KIND over the whole recording, each at an SNR drawn from SNRS (Kaldi's --bg-snrs)."""
    events = []
    for _ in range(n_sources):
        snr = float(rng.choice(snrs))
        add_at_snr(wave, nset.draw(kind, len(wave), sr, rng), 0, level, snr)
        events.append(Event(0.0, len(wave) / sr, EVENT_OF_SOURCE[kind], snr))
    return events


def add_foreground(wave, sr, nset: NonSpeechSet, kind: str, snrs: Sequence[float], level: float, rng,
                   interval_s: float = FG_INTERVAL_S) -> List[Event]:
    """Whole files of KIND one after another, INTERVAL_S apart, each at an SNR from SNRS (Kaldi's --fg-snrs)."""
    events, pos = [], 0
    while pos < len(wave):
        path = nset.files[kind][int(rng.integers(len(nset.files[kind])))]
        piece = nset.load(path, sr)[: len(wave) - pos] * level * 10 ** (-float(rng.choice(snrs)) / 20)
        wave[pos:pos + len(piece)] += piece
        events += sounding(piece, pos, sr, EVENT_OF_SOURCE[kind], level)
        pos += len(piece) + int(interval_s * sr)
    return events


def sounding(piece: np.ndarray, start: int, sr: int, kind: str, level: float, frame_s: float = 0.01,
             floor_db: float = -30.0, bridge_s: float = 0.2) -> List[Event]:
    """The events of an added PIECE (as mixed, at START): its sounding stretches (10 ms frames within 30 dB of its
    loudest, gaps under 0.2 s bridged), each with its own SNR against LEVEL. A ring-back tone is mostly silence:
    only the ringing is tone time."""
    hop = max(1, int(frame_s * sr))
    n = len(piece) // hop
    if n == 0:
        return []
    power = np.mean(piece[:n * hop].reshape(n, hop) ** 2, axis=1)
    on = power > power.max() * 10 ** (floor_db / 10) if power.max() > 0 else np.zeros(n, bool)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], on.astype(np.int8), [0]])))
    runs = [[a, b] for a, b in zip(edges[::2], edges[1::2])]
    merged: List[List[int]] = []
    for a, b in runs:
        if merged and (a - merged[-1][1]) * frame_s < bridge_s:
            merged[-1][1] = b
        else:
            merged.append([a, b])
    events = []
    for a, b in merged:
        rms = np.sqrt(np.mean(power[a:b]))
        events.append(Event((start + a * hop) / sr, (start + b * hop) / sr, kind,
                            float(20 * np.log10(level / rms)) if rms > 0 and level > 0 else 0.0))
    return events


def augment_recording(wave: np.ndarray, sr: int, speech: Intervals, aug_type: str, rng,
                      nset: Optional[NonSpeechSet] = None, rirs: Sequence[Path] = ()) -> Tuple[np.ndarray, List[Event]]:
    """One augmented copy of WAVE (float) of AUG_TYPE; returns it (peak-limited to 0.99) and the events added."""
    out = wave.astype(np.float64).copy()
    level = speech_rms(out, speech, sr)
    if aug_type == "reverb":
        rir = read_audio(rirs[int(rng.integers(len(rirs)))], sr)[0] if rirs else synthetic_rir(rng, sr)
        out, events = reverberate(out, np.asarray(rir, np.float64)), []
    elif aug_type == "music":
        events = add_background(out, sr, nset, "music", 1, MUSIC_SNRS, level, rng)
    elif aug_type == "babble":
        events = add_background(out, sr, nset, "speech", int(rng.choice(BABBLE_TALKERS)), BABBLE_SNRS, level, rng)
    elif aug_type == "noise":
        events = add_foreground(out, sr, nset, "noise", NOISE_SNRS, level, rng)
    elif aug_type == "tones":
        events = add_foreground(out, sr, nset, "tones", TONE_SNRS, level, rng, interval_s=3.0)
    else:
        raise ValueError(f"unknown augmentation type {aug_type!r}; choose from {', '.join(AUG_TYPES)}")
    peak = np.max(np.abs(out)) if len(out) else 0.0
    if peak > 0.99:  # keep the mix inside 16-bit range without clipping; SNRs are unchanged
        out *= 0.99 / peak
    return out.astype(np.float32), events


def usable_types(requested: Sequence[str], nset: Optional[NonSpeechSet]) -> List[str]:
    """The requested augmentation types the sources can make (babble needs speech/, reverb needs nothing)."""
    have = set(nset.kinds()) if nset else set()
    need = {"music": "music", "babble": "speech", "noise": "noise", "tones": "tones"}
    return [t for t in requested if t == "reverb" or need[t] in have]


def place_events(n: int, sr: int, nset: NonSpeechSet, rates: Dict[str, Tuple[float, float, float, Sequence[float]]],
                 level: float, rng) -> Tuple[np.ndarray, List[Event]]:
    """Non-speech events at Poisson times over N samples: for each source kind, (events per minute, min s, max s,
    SNRs dB relative to LEVEL). Returns the summed events signal and the events."""
    x, events = np.zeros(n), []
    for kind, (per_min, lo, hi, snrs) in rates.items():
        if kind not in nset.files:
            continue
        for start in np.sort(rng.integers(0, n, size=rng.poisson(per_min * n / sr / 60))):
            start, length = int(start), min(int(rng.uniform(lo, hi) * sr), n - int(start))
            if length <= 0:
                continue
            snr = float(rng.uniform(min(snrs), max(snrs)))
            if kind == "speech":  # babble: several talkers at once, as Kaldi's
                piece = unit_rms(sum(nset.draw(kind, length, sr, rng) for _ in range(int(rng.choice(BABBLE_TALKERS)))))
            else:
                piece = nset.draw(kind, length, sr, rng)
            piece = piece * fade(length, sr) * level * 10 ** (-snr / 20)
            x[start:start + length] += piece
            events += sounding(piece, start, sr, EVENT_OF_SOURCE[kind], level)
    return x, sorted(events, key=lambda e: e.start)


def smooth_walk(rng, n: int, sr: int, step_s: float, lo: float, hi: float, sigma: float) -> np.ndarray:
    """A bounded random walk sampled every STEP_S, linearly interpolated to N samples at SR (gain or SNR drift)."""
    steps = int(n / (step_s * sr)) + 2
    x = np.empty(steps)
    x[0] = rng.uniform(lo, hi)
    for i in range(1, steps):
        x[i] = np.clip(x[i - 1] + rng.normal(0, sigma), lo, hi)
    return np.interp(np.arange(n), np.arange(steps) * step_s * sr, x)


def coloured_noise(rng, n: int, sr: int) -> np.ndarray:
    """Unit-RMS white noise through a first-order filter whose pole drifts: the colour changes every second."""
    from scipy.signal import lfilter

    white, out, state = rng.standard_normal(n), np.empty(n), np.zeros(1)
    for start in range(0, n, sr):
        pole = rng.uniform(-0.3, 0.95)
        out[start:start + sr], state = lfilter([1 - abs(pole)], [1, -pole], white[start:start + sr], zi=state)
    return out / (np.std(out) + 1e-9)


def fade(n: int, sr: int, fade_s: float = 0.02) -> np.ndarray:
    """A window rising and falling over FADE_S at each end (no click where an event starts or stops)."""
    k = max(1, min(int(fade_s * sr), n // 2))
    w = np.ones(n)
    w[:k] = np.linspace(0, 1, k)
    w[n - k:] = np.linspace(1, 0, k)
    return w


def augment_data_dir(src, dst, wav_dir, types: Sequence[str], copies: int = 1, seed: int = 0,
                     nset: Optional[NonSpeechSet] = None, rirs: Sequence[Path] = (), progress=None,
                     keep_source: bool = True) -> Dict[str, int]:
    """DST = SRC's recordings (unless not KEEP_SOURCE) plus COPIES augmented copies of each (`<rec>-<type>`, types
    drawn from TYPES, each copy its own), written as 16-bit wavs under WAV_DIR at the recording's rate; labels copied,
    events added.

    Kaldi's augment_data_dir.py + combine_data.sh in one step. Deterministic in SEED and the recording id, so a rerun
    or another split of the work gives the same files. Returns {type: copies made}.
    """
    import zlib

    from local_models.common.audio import load_audio
    from local_models.common.cli import write_wav
    from local_models.common.datadir import DataDirError, read_table, write_data_dir

    src, dst, wav_dir = Path(src), Path(dst), Path(wav_dir)
    if copies < 0:
        raise ValueError(f"copies must be >= 0, got {copies}")
    types = usable_types(types, nset)
    if not types:
        raise ValueError("no augmentation type can be made from the sources given (music/ noise/ speech/ tones/)")
    wav_scp, ref, events = read_table(src / "wav.scp"), load_reference(src), load_events(src)
    if not ref:
        raise DataDirError(src, None, "no reference (ref.rttm or ref_segments): the copies would have no labels")
    out_scp, out_ref, out_events = (dict(wav_scp), dict(ref), dict(events)) if keep_source else ({}, {}, {})
    dur, made = {}, {}
    wav_dir.mkdir(parents=True, exist_ok=True)
    for rec in progress(sorted(wav_scp)) if progress else sorted(wav_scp):
        wave, sr = load_audio(wav_scp[rec])
        dur[rec] = f"{len(wave) / sr:.3f}"
        rng = np.random.default_rng([seed, zlib.crc32(rec.encode())])
        for k, aug_type in enumerate(rng.permutation(types)[:copies] if copies <= len(types)
                                     else rng.choice(types, size=copies)):
            new = f"{rec}-{aug_type}" if copies <= len(types) else f"{rec}-{aug_type}{k}"
            out, added = augment_recording(wave, sr, ref.get(rec, []), str(aug_type), rng, nset, rirs)
            path = write_wav((wav_dir / f"{new}.wav").resolve(), out, sr)
            out_scp[new], dur[new] = str(path), dur[rec]
            out_ref[new] = ref.get(rec, [])
            out_events[new] = list(events.get(rec, [])) + added  # the source's events sound in the copy too
            made[str(aug_type)] = made.get(str(aug_type), 0) + 1
    write_data_dir(dst, out_scp, {r: r for r in out_scp}, extra={"reco2dur": {r: dur[r] for r in out_scp}})
    write_rttm(dst / "ref.rttm", {r: out_ref.get(r, []) for r in out_scp}, {r: float(dur[r]) for r in out_scp})
    write_events(dst / "events", out_events)
    return made
