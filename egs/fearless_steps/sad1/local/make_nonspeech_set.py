"""Build a MUSAN-like set of real non-speech audio offline, in two disjoint "makes" (docs/data.md).

    python local/make_nonspeech_set.py --make {train,eval} [--seed 0] [--sample-rate 16000] [--scale 1] OUT_DIR

writes OUT_DIR/{music,noise,tones,speech}/<source>/<name>.wav (mono PCM_16, silence trimmed at both ends, peak 0.5,
0.5-30 s; ':' in a source becomes '-' in its directory), OUT_DIR/sources.tsv (file kind source licence seconds) and
OUT_DIR/.done last. `train` feeds the mini corpus's train / dev / eval streams and training augmentation; `eval` feeds
only the held-out evaluation set "of a different make": no source, music, tone plan, noise or babble language is shared.

Sources (the SOURCES table below is the one place they are listed; --list-sources prints it):
  train make
    music   generated:midi-fluidsynth   MIDI written with mido (random GM piano / organ / guitar / strings / brass /
                                        reed / synth lead / pad, chord progression, bass, melody, sometimes GM drums),
                                        rendered by the fluidsynth CLI with the TimGM6mb soundfont (timgm6mb-soundfont)
            mu-cade-data, pinball-data, alienblaster-data   recorded game music (produced, mixed), <= 30 s pieces:
                                        MIDI through one soundfont alone taught the nets too narrow a picture of music
    tones   generated:quindar, dtmf, ringback-us, busy-us, dialtone-us, clicks, fsk-bell103, sweep-linear
            sound-theme-freedesktop     bells, phone ring / busy / calling, message, complete, dialog, alarm, login ...
    noise   generated:pink-noise, brown-noise, mains-hum, static-crackle
            sound-theme-freedesktop     camera-shutter, trash-empty
    speech  generated:espeak-ng-{de,fr,it,nl,pl}   babble talkers: numbers and common words
  eval make
    music   frozen-bubble-data          the game's recorded music (*zik*.ogg), split into <= 30 s pieces
            sound-icons                 instrument samples (cembalo, guitar, piano, trumpet, violoncello, xylofon, ...)
    tones   generated:ringback-425, busy-425, testtone-1004, sf-2600, beep-1400, sweep-log
            sound-icons                 pisk-* whistles, prompt, pipe
    noise   frozen-bubble-data          sound effects (applause, typewriter, snore, destroy_group, ...)
            sound-icons                 percussion, glass-water, cockchafer, canary, gummy-cat
    speech  generated:espeak-ng-{sv,pt,ru,cs,tr}   babble talkers
Never used, anywhere: Debian's asterisk sound packages (asterisk-core-sounds-*, asterisk-moh-*, ...) and the recorded
noise of alsa-utils: the team keeps them for evaluation. For the same reason the freedesktop theme's
audio-test-signal.oga (ALSA's test noise) and audio-channel-*.oga (spoken words, ALSA) are left out, and frozen-bubble's
newroot.ogg (a voice-like effect a VAD calls speech); dialog-warning.oga too (no clear licence in its copyright file).

Clips shorter than 0.5 s after trimming are repeated with 0.15 s gaps; longer than 30 s are cut into equal pieces.
Deterministic: the same options give byte-identical files (each clip draws from its own seeded generator).
"""
from __future__ import annotations

import argparse
import io
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import soundfile as sf
from scipy.signal import butter, chirp, resample_poly, sosfilt

from local_models.common.datadir import atomic_open

KINDS = ("music", "noise", "tones", "speech")
PEAK = 0.5
MIN_S, MAX_S = 0.5, 30.0
TRIM_DB = -50.0  # silence = samples this far below the clip's peak
REPEAT_GAP_S = 0.15
SF2 = Path("/usr/share/sounds/sf2/TimGM6mb.sf2")
FREEDESKTOP = Path("/usr/share/sounds/freedesktop/stereo")
FROZEN_BUBBLE = Path("/usr/share/games/frozen-bubble/snd")
SOUND_ICONS = Path("/usr/share/sounds/sound-icons")
MU_CADE = Path("/usr/share/games/mu-cade/sounds/musics")
PINBALL = Path("/usr/share/games/pinball")
ALIENBLASTER = Path("/usr/share/games/alienblaster/sound")


class MissingDebianFile(RuntimeError):
    """A file or program of a Debian package the make needs is absent."""


Clip = Tuple[str, np.ndarray, int]  # (name, mono float wave, its sample rate)


@dataclass
class Ctx:
    sr: int
    seed: int
    scale: float

    def rng(self, source: str, index: int) -> np.random.Generator:
        """One generator per clip: a clip never depends on how many clips came before (or on --scale)."""
        return np.random.default_rng([self.seed, zlib.crc32(source.encode()), index])

    def count(self, n: int) -> int:
        return max(1, round(n * self.scale))


# ----------------------------------------------------------------------------- signal helpers

def _ramp(x: np.ndarray, sr: int, ms: float = 5.0) -> np.ndarray:
    """Raised-cosine fade in / out, so tone edges do not click."""
    n = min(len(x) // 2, int(sr * ms / 1000))
    if n > 0:
        w = 0.5 - 0.5 * np.cos(np.pi * np.arange(n) / n)
        x = x.copy()
        x[:n] *= w
        x[-n:] *= w[::-1]
    return x


def _tone(freqs: Sequence[float], dur: float, sr: int, ramp_ms: float = 5.0) -> np.ndarray:
    for f in freqs:
        if f >= 0.45 * sr:
            raise ValueError(f"{f} Hz tone needs a sample rate above {f / 0.45:.0f} Hz (got {sr})")
    t = np.arange(int(round(dur * sr))) / sr
    x = sum(np.sin(2 * np.pi * f * t) for f in freqs) / max(1, len(freqs))
    return _ramp(np.asarray(x, dtype=np.float64), sr, ramp_ms)


def _sil(dur: float, sr: int) -> np.ndarray:
    return np.zeros(int(round(dur * sr)))


def _cadence(freqs: Sequence[float], on: float, off: float, cycles: int, sr: int) -> np.ndarray:
    return np.concatenate([np.concatenate([_tone(freqs, on, sr), _sil(off, sr)]) for _ in range(cycles)])


def _bursts(make: Callable[[int], np.ndarray], rng, sr: int, n_bursts, burst_s, gap_s) -> np.ndarray:
    """Noise bursts (make(n) -> n samples) with 50 ms fades, separated by silent gaps."""
    parts = []
    for _ in range(int(rng.integers(*n_bursts))):
        parts += [_ramp(make(int(rng.uniform(*burst_s) * sr)), sr, 50.0), _sil(rng.uniform(*gap_s), sr)]
    return np.concatenate(parts)


def _coloured(n: int, rng, exponent: float) -> np.ndarray:
    """Noise with power ~ 1/f**exponent (1: pink, 2: brown), shaped in the frequency domain."""
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.arange(len(spec), dtype=np.float64)
    f[0] = 1.0
    x = np.fft.irfft(spec / f ** (exponent / 2), n)
    return x / (np.abs(x).max() + 1e-12)


# ----------------------------------------------------------------------------- generated tones

DTMF = {d: (lo, hi) for row, lo in zip(("123A", "456B", "789C", "*0#D"), (697, 770, 852, 941))
        for d, hi in zip(row, (1209, 1336, 1477, 1633))}


def gen_quindar(rng, sr):
    """Apollo's Quindar tones: 2525 Hz (key on) ... 2475 Hz (key off), 250 ms each."""
    parts = []
    for _ in range(int(rng.integers(2, 4))):
        parts += [_tone([2525], 0.25, sr), _sil(rng.uniform(0.8, 3.0), sr), _tone([2475], 0.25, sr),
                  _sil(rng.uniform(0.5, 1.5), sr)]
    return np.concatenate(parts)


def gen_dtmf(rng, sr):
    parts = []
    for _ in range(int(rng.integers(5, 13))):
        digit = "0123456789*#ABCD"[int(rng.integers(16 if rng.random() < 0.2 else 12))]
        parts += [_tone(DTMF[digit], rng.uniform(0.06, 0.12), sr), _sil(rng.uniform(0.05, 0.1), sr)]
        if rng.random() < 0.15:
            parts.append(_sil(rng.uniform(0.3, 0.8), sr))
    return np.concatenate(parts)


def gen_ringback_us(rng, sr):
    return _cadence([440, 480], 2.0, 4.0, int(rng.integers(2, 4)), sr)


def gen_busy_us(rng, sr):
    return _cadence([480, 620], 0.5, 0.5, int(rng.integers(4, 11)), sr)


def gen_dialtone_us(rng, sr):
    return _tone([350, 440], rng.uniform(1.5, 6.0), sr)


def gen_clicks(rng, sr):
    """A click train: 1-3 ms decaying impulses of alternating sign at 2-40 per second, slightly jittered."""
    rate, dur = rng.uniform(2, 40), rng.uniform(1.0, 4.0)
    x = _sil(dur + 0.01, sr)
    click_n = int(rng.uniform(0.001, 0.003) * sr) + 1
    click = np.exp(-np.arange(click_n) / (click_n / 4))
    for k, t in enumerate(np.arange(0, dur, 1 / rate)):
        i = int((t + rng.uniform(-0.1, 0.1) / rate) * sr)
        i = min(max(i, 0), len(x) - click_n)
        x[i:i + click_n] += (-1) ** k * rng.uniform(0.6, 1.0) * click
    return x


def _fsk(bits: Sequence[int], f0: float, f1: float, baud: float, sr: int) -> np.ndarray:
    """Continuous-phase FSK: bit 1 at f1 (mark), 0 at f0 (space)."""
    per = sr / baud
    n = int(len(bits) * per)
    freq = np.where(np.asarray(bits)[(np.arange(n) / per).astype(int)] == 1, f1, f0)
    return _ramp(np.sin(2 * np.pi * np.cumsum(freq) / sr), sr)


def gen_fsk_bell103(rng, sr):
    """Bell 103 modem warble: 1070 Hz space / 1270 Hz mark at 300 baud, after a mark-only carrier."""
    lead = [1] * int(rng.uniform(0.3, 1.0) * 300)
    return _fsk(lead + list(rng.integers(0, 2, int(rng.uniform(1.0, 4.0) * 300))), 1070, 1270, 300, sr)


def gen_sweep_linear(rng, sr):
    f0, f1 = rng.uniform(300, 800), rng.uniform(1500, min(2900, 0.45 * sr))
    if rng.random() < 0.5:
        f0, f1 = f1, f0
    dur = rng.uniform(1.0, 5.0)
    return _ramp(chirp(np.arange(int(dur * sr)) / sr, f0, dur, f1, method="linear"), sr)


def gen_ringback_425(rng, sr):
    return _cadence([425], 1.0, 4.0, int(rng.integers(2, 4)), sr)


def gen_busy_425(rng, sr):
    return _cadence([425], 0.5, 0.5, int(rng.integers(4, 11)), sr)


def gen_testtone_1004(rng, sr):
    return _tone([1004], rng.uniform(1.0, 6.0), sr)


def gen_sf_2600(rng, sr):
    """In-band single-frequency (SF) signalling: 2600 Hz bursts (seizure, winks, pulses)."""
    parts = []
    for _ in range(int(rng.integers(2, 9))):
        parts += [_tone([2600], rng.uniform(0.06, 1.2), sr), _sil(rng.uniform(0.05, 0.6), sr)]
    return np.concatenate(parts)


def gen_beep_1400(rng, sr):
    """1400 Hz beeps (recording-warning style): 0.1-0.25 s every 0.5-2 s."""
    parts = []
    for _ in range(int(rng.integers(3, 9))):
        parts += [_tone([1400], rng.uniform(0.1, 0.25), sr), _sil(rng.uniform(0.5, 2.0), sr)]
    return np.concatenate(parts)


def gen_sweep_log(rng, sr):
    """Exponential sweeps outside the train make's 300-2900 Hz: 100-280 Hz or 3000-3800 Hz (capped at 0.45 sr)."""
    lo, hi = (100, 280) if rng.random() < 0.5 else (3000, min(3800, 0.45 * sr))
    f0, f1 = lo * rng.uniform(1.0, 1.1), hi * rng.uniform(0.9, 1.0)
    if rng.random() < 0.5:
        f0, f1 = f1, f0
    dur = rng.uniform(1.0, 5.0)
    return _ramp(chirp(np.arange(int(dur * sr)) / sr, f0, dur, f1, method="logarithmic"), sr)


# ----------------------------------------------------------------------------- generated noises

def gen_pink(rng, sr):
    return _bursts(lambda n: _coloured(n, rng, 1.0), rng, sr, (1, 5), (0.5, 3.0), (0.2, 1.0))


def gen_brown(rng, sr):
    hp = butter(2, 20, btype="highpass", fs=sr, output="sos")  # no DC drift
    return _bursts(lambda n: sosfilt(hp, _coloured(n, rng, 2.0)), rng, sr, (1, 5), (0.5, 3.0), (0.2, 1.0))


def gen_hum(rng, sr):
    """Mains hum / buzz: 50 or 60 Hz with up to 12 harmonics of random, decaying strength, plus a little hiss."""
    base, dur = (50, 60)[int(rng.integers(2))], rng.uniform(2.0, 8.0)
    t = np.arange(int(dur * sr)) / sr
    x = np.zeros(len(t))
    for h in range(1, 13):
        if h * base < 0.45 * sr:
            level = rng.uniform(0.2, 1.0) / h ** rng.uniform(0.3, 1.2)
            x += level * np.sin(2 * np.pi * h * base * t + rng.uniform(0, 6.3))
    return _ramp(x + 0.02 * np.abs(x).max() * rng.standard_normal(len(t)), sr, 50.0)


def gen_crackle(rng, sr):
    """Radio static: Poisson pops of heavy-tailed size (capped), each a short decaying noise burst, on a hiss bed."""
    dur = rng.uniform(2.0, 6.0)
    n = int(dur * sr)
    x = 0.1 * rng.standard_normal(n)
    for i in rng.integers(0, n, rng.poisson(rng.uniform(40, 250) * dur)):
        m = int(rng.uniform(0.0005, 0.004) * sr) + 1
        burst = rng.uniform(-1, 1, m) * np.exp(-np.arange(m) / (m / 3)) * min(1.0, 0.2 + 0.2 * rng.pareto(3.0))
        x[i:i + m] += burst[:n - i]
    return _ramp(x, sr, 20.0)


# ----------------------------------------------------------------------------- generated music (mido + fluidsynth)

GM_FAMILIES = {"piano": (0, 8), "organ": (16, 24), "guitar": (24, 32), "strings": (40, 52), "brass": (56, 64),
               "reed": (64, 72), "synth-lead": (80, 88), "synth-pad": (88, 96)}
SCALES = {"major": (0, 2, 4, 5, 7, 9, 11), "minor": (0, 2, 3, 5, 7, 8, 10)}
PROGRESSIONS = {"major": ((0, 4, 5, 3), (0, 5, 3, 4), (1, 4, 0, 0), (0, 3, 4, 3), (0, 3, 0, 4)),
                "minor": ((0, 5, 2, 6), (0, 3, 4, 0), (0, 6, 5, 4), (0, 5, 3, 4))}
TPB = 480  # MIDI ticks per beat


def _program(rng, family: Optional[str] = None) -> int:
    family = family or list(GM_FAMILIES)[int(rng.integers(len(GM_FAMILIES)))]
    return int(rng.integers(*GM_FAMILIES[family]))


def _chord(scale, root: int, degree: int, octave: int) -> List[int]:
    return [12 * octave + root + scale[(degree + k) % 7] + 12 * ((degree + k) // 7) for k in (0, 2, 4)]


def _note(events, ch, note, start, dur, vel):
    events.append((int(start), 1, ("note_on", ch, int(note), int(vel))))
    events.append((int(start + dur), 0, ("note_off", ch, int(note), 0)))


def compose_midi(rng, target_s: float):
    """A random type-0 MIDI piece of about target_s seconds: chords (block or arpeggio), bass, melody, maybe drums."""
    import mido

    bpm = int(rng.integers(70, 151))
    mode = ("major", "minor")[int(rng.integers(2))]
    scale, root = SCALES[mode], int(rng.integers(12))
    prog = PROGRESSIONS[mode][int(rng.integers(len(PROGRESSIONS[mode])))]
    bars = max(2, math.ceil(target_s / (4 * 60 / bpm)))
    programs = {0: _program(rng), 1: int(rng.integers(32, 40)), 2: _program(rng)}
    arpeggio, drums = rng.random() < 0.5, rng.random() < 0.6
    ev: List[tuple] = []
    for bar in range(bars):
        t0 = bar * 4 * TPB
        chord = _chord(scale, root, prog[bar % len(prog)], 4)
        if arpeggio:
            for k in range(8):
                _note(ev, 0, chord[k % 3] + 12 * (k // 6), t0 + k * TPB // 2, TPB // 2, rng.integers(55, 85))
        else:
            for n in chord:
                _note(ev, 0, n, t0, 4 * TPB - 10, rng.integers(50, 80))
        for beat in range(0, 4, 2):
            _note(ev, 1, chord[0] - 24, t0 + beat * TPB, 2 * TPB - 10, rng.integers(70, 100))
        if drums:
            for k in range(8):
                t = t0 + k * TPB // 2
                _note(ev, 9, 42, t, TPB // 4, rng.integers(50, 80))  # closed hi-hat
                if k in (0, 4):
                    _note(ev, 9, 36, t, TPB // 4, rng.integers(90, 120))  # kick
                if k in (2, 6):
                    _note(ev, 9, 38, t, TPB // 4, rng.integers(80, 110))  # snare
            if bar % 4 == 0:
                _note(ev, 9, 49, t0, TPB, 100)  # crash
    pos, degree = 0, int(rng.integers(7))
    while pos < bars * 4 * TPB:  # melody: a random walk on the scale, with rests
        dur = int(TPB * (0.5, 1, 1, 2)[int(rng.integers(4))])
        degree = int(np.clip(degree + rng.integers(-2, 3), 0, 13))
        if rng.random() > 0.15:
            _note(ev, 2, 12 * 5 + root + scale[degree % 7] + 12 * (degree // 7), pos, dur - 10, rng.integers(70, 110))
        pos += dur
    track = mido.MidiTrack()
    track.append(mido.MetaMessage("set_tempo", tempo=mido.bpm2tempo(bpm), time=0))
    for ch, program in programs.items():
        track.append(mido.Message("program_change", channel=ch, program=program, time=0))
    now = 0
    for tick, _, (kind, ch, note, vel) in sorted(ev):
        track.append(mido.Message(kind, channel=ch, note=note, velocity=vel, time=tick - now))
        now = tick
    track.append(mido.MetaMessage("end_of_track", time=2 * TPB))  # room for the release / reverb tail
    midi = mido.MidiFile(type=0, ticks_per_beat=TPB)
    midi.tracks.append(track)
    return midi


def render_midi(midi, sr: int) -> np.ndarray:
    """Render with the fluidsynth CLI (fast render to 32-bit float, so no dither noise: deterministic)."""
    with tempfile.TemporaryDirectory(prefix="nonspeech_midi_") as tmp:
        mid, out = Path(tmp) / "piece.mid", Path(tmp) / "piece.wav"
        midi.save(str(mid))
        cmd = ["fluidsynth", "-q", "-n", "-i", "-g", "0.5", "-r", str(sr), "-O", "float", "-T", "wav",
               "-o", "synth.cpu-cores=1", "-F", str(out), str(SF2), str(mid)]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"fluidsynth failed ({proc.returncode}): {proc.stdout.strip()[-500:]}")
        wave, rate = sf.read(str(out), dtype="float64", always_2d=True)
    assert rate == sr, (rate, sr)
    return wave.mean(axis=1)


def build_midi_music(ctx: Ctx, src: dict) -> Iterator[Clip]:
    for i in range(ctx.count(src["count"])):
        rng = ctx.rng(src["source"], i)
        yield f"piece{i:02d}", render_midi(compose_midi(rng, rng.uniform(15.0, 25.0)), ctx.sr), ctx.sr


# ----------------------------------------------------------------------------- babble (espeak-ng)

# Words and numbers for babble talkers (espeak reads the digits in the voice's language).
BABBLE_WORDS = {
    "de": "Montag Dienstag Mittwoch Wasser Haus Straße Wetter heute morgen Zeit Bahnhof Stadt Fenster Tisch gut "
          "schnell danke",
    "fr": "lundi mardi mercredi eau maison rue temps aujourd'hui demain gare ville fenêtre table bien vite bonjour "
          "merci",
    "it": "lunedì martedì mercoledì acqua casa strada tempo oggi domani stazione città finestra tavolo bene presto "
          "buongiorno grazie",
    "nl": "maandag dinsdag woensdag water huis straat weer vandaag morgen station stad raam tafel goed snel dank",
    "pl": "poniedziałek wtorek środa woda dom ulica pogoda dzisiaj jutro dworzec miasto okno stół dobrze szybko "
          "dziękuję",
    "sv": "måndag tisdag onsdag vatten hus gata väder idag imorgon station stad fönster bord bra snabbt tack",
    "pt": "segunda terça quarta água casa rua tempo hoje amanhã estação cidade janela mesa bem depressa obrigado",
    "ru": "понедельник вторник среда вода дом улица погода сегодня завтра вокзал город окно стол хорошо быстро "
          "спасибо",
    "cs": "pondělí úterý středa voda dům ulice počasí dnes zítra nádraží město okno stůl dobře rychle děkuji",
    "tr": "pazartesi salı çarşamba su ev sokak hava bugün yarın istasyon şehir pencere masa iyi hızlı teşekkürler",
}


def babble_text(lang: str, rng, n_words: int) -> str:
    words = BABBLE_WORDS[lang].split()
    out = []
    for k in range(n_words):
        w = str(int(rng.integers(1, 10000))) if rng.random() < 0.3 else words[int(rng.integers(len(words)))]
        out.append(w + ("." if k % 5 == 4 else "," if rng.random() < 0.15 else ""))
    return " ".join(out).rstrip(",.") + "."


def build_babble(ctx: Ctx, src: dict) -> Iterator[Clip]:
    from local_models.common.synth import sample_voices, synthesize

    lang = src["lang"]
    n = ctx.count(src["count"])
    for i, voice in enumerate(sample_voices(lang, n, seed=ctx.seed)):
        rng = ctx.rng(src["source"], i)
        target = rng.uniform(5.0, 10.0)
        n_words = int(target * 2.2)
        while True:  # a few more words until the talker speaks 5 s or more
            text = babble_text(lang, ctx.rng(src["source"] + ":text", i), n_words)  # same words, more of them
            utt = synthesize(text, voice, sample_rate=ctx.sr)
            if utt.duration >= 5.2 or n_words > 80:
                break
            n_words += 4
        wave = utt.wave.astype(np.float64) / 32768
        yield f"{lang}{i:02d}", _ramp(wave[:int(min(len(wave), max(target, 5.2) * ctx.sr))], ctx.sr, 20.0), ctx.sr


# ----------------------------------------------------------------------------- Debian sound files

def read_mono(path: Path) -> Tuple[np.ndarray, int]:
    wave, sr = sf.read(str(path), dtype="float64", always_2d=True)
    return wave.mean(axis=1), sr


def source_path(src: dict, name: str) -> Path:
    """A Debian source's file, through the module's path constant (SOUND_ICONS, ...) so a test can move it."""
    return Path(globals()[src["dir_name"]]) / name


def build_files(ctx: Ctx, src: dict) -> Iterator[Clip]:
    """Each listed file is one clip (a long one becomes pieces later); --scale keeps the first files."""
    files = src["files"]
    for name in files[:ctx.count(len(files))]:
        wave, sr = read_mono(source_path(src, name))
        yield Path(name).stem, wave, sr


def build_long_music(ctx: Ctx, src: dict) -> Iterator[Clip]:
    """Long recorded music cut into equal pieces of <= 30 s; --scale keeps the first pieces of each file."""
    for name in src["files"]:
        wave, sr = read_mono(source_path(src, name))
        wave = trim(wave)
        n = math.ceil(len(wave) / (MAX_S * sr))
        edges = np.linspace(0, len(wave), n + 1).astype(int)
        for k in range(ctx.count(n)):
            yield f"{Path(name).stem}-{k:02d}", wave[edges[k]:edges[k + 1]], sr


def build_generated(ctx: Ctx, src: dict) -> Iterator[Clip]:
    for i in range(ctx.count(src["count"])):
        yield f"{src['source'].split(':', 1)[1]}{i:02d}", src["gen"](ctx.rng(src["source"], i), ctx.sr), ctx.sr


# ----------------------------------------------------------------------------- the table of sources

FD_CC_BY_SA = ["alarm-clock-elapsed.oga", "audio-volume-change.oga", "device-added.oga", "device-removed.oga",
               "dialog-information.oga", "message.oga", "suspend-error.oga"]


def _gen(make, kind, name, fn, count, how):
    return dict(make=make, kind=kind, source=f"generated:{name}", licence="generated (this script)", how=how,
                build=build_generated, gen=fn, count=count)


def _deb(make, kind, package, dir_name, licence, files, how, build=build_files):
    return dict(make=make, kind=kind, source=package, licence=licence, how=how, build=build, dir_name=dir_name,
                files=files)


def _babble(make, lang):
    return dict(make=make, kind="speech", source=f"generated:espeak-ng-{lang}", lang=lang, build=build_babble,
                licence="generated (espeak-ng, GPL-3+)", how=f"espeak-ng {lang} talkers, numbers and common words",
                count=3 if lang in ("de", "fr", "sv", "pt") else 2)


SOURCES: List[dict] = [
    dict(make="train", kind="music", source="generated:midi-fluidsynth", build=build_midi_music, count=25,
         licence="generated; TimGM6mb samples GPL-2",
         how="mido MIDI (random GM instruments, chords, bass, melody, drums) rendered by fluidsynth + TimGM6mb.sf2"),
    _deb("train", "music", "mu-cade-data", "MU_CADE", "BSD-2-Clause", ["mcd1.ogg", "mcd2.ogg", "mcd3.ogg", "mcd4.ogg"],
         "the game's recorded music (Kenta Cho), in <= 30 s pieces", build=build_long_music),
    _deb("train", "music", "pinball-data", "PINBALL", "GPL-2",
         ["tux/game.ogg", "tux/intro.ogg", "tux/multiball.ogg", "professor/professor.ogg"],
         "the game's recorded music, in <= 30 s pieces", build=build_long_music),
    _deb("train", "music", "alienblaster-data", "ALIENBLASTER", "GPL-2+", ["intro.wav", "playon.wav"],
         "the game's recorded music, in <= 30 s pieces", build=build_long_music),
    _gen("train", "tones", "quindar", gen_quindar, 4, "Quindar tones 2525 / 2475 Hz, 250 ms"),
    _gen("train", "tones", "dtmf", gen_dtmf, 4, "DTMF digit strings"),
    _gen("train", "tones", "ringback-us", gen_ringback_us, 2, "440+480 Hz, 2 s on / 4 s off"),
    _gen("train", "tones", "busy-us", gen_busy_us, 2, "480+620 Hz, 0.5 s on / 0.5 s off"),
    _gen("train", "tones", "dialtone-us", gen_dialtone_us, 2, "350+440 Hz continuous"),
    _gen("train", "tones", "clicks", gen_clicks, 4, "click trains, 2-40 clicks/s"),
    _gen("train", "tones", "fsk-bell103", gen_fsk_bell103, 3, "modem warble, 1070 / 1270 Hz FSK at 300 baud"),
    _gen("train", "tones", "sweep-linear", gen_sweep_linear, 3, "linear sine sweeps within 300-2900 Hz"),
    _deb("train", "tones", "sound-theme-freedesktop", "FREEDESKTOP", "CC-BY-SA-3.0", FD_CC_BY_SA,
         "desktop alert sounds (Bukvic, McCallister, corsica_s, Red Hat)"),
    _deb("train", "tones", "sound-theme-freedesktop", "FREEDESKTOP", "CC-BY-3.0", ["bell.oga", "complete.oga"],
         "bell, complete (Boulanger)"),
    _deb("train", "tones", "sound-theme-freedesktop", "FREEDESKTOP", "GPL-2+",
         ["message-new-instant.oga", "phone-incoming-call.oga", "phone-outgoing-busy.oga",
          "phone-outgoing-calling.oga"], "message and phone ring / busy / calling sounds (Sandras)"),
    _deb("train", "tones", "sound-theme-freedesktop", "FREEDESKTOP", "GPL-2",
         ["service-login.oga", "service-logout.oga"], "login / logout chimes (Pidgin)"),
    _gen("train", "noise", "pink-noise", gen_pink, 4, "pink noise bursts"),
    _gen("train", "noise", "brown-noise", gen_brown, 4, "brown noise bursts"),
    _gen("train", "noise", "mains-hum", gen_hum, 4, "50 / 60 Hz hum with harmonics"),
    _gen("train", "noise", "static-crackle", gen_crackle, 4, "radio static: random crackle on hiss"),
    _deb("train", "noise", "sound-theme-freedesktop", "FREEDESKTOP", "CC-BY-SA-3.0", ["camera-shutter.oga"],
         "camera shutter (horsthorstensen)"),
    _deb("train", "noise", "sound-theme-freedesktop", "FREEDESKTOP", "CC-BY-3.0", ["trash-empty.oga"],
         "trash-empty rustle (Boulanger)"),
    *[_babble("train", lang) for lang in ("de", "fr", "it", "nl", "pl")],
    _deb("eval", "music", "frozen-bubble-data", "FROZEN_BUBBLE", "GPL-2",
         ["introzik.ogg", "frozen-mainzik-1p.ogg", "frozen-mainzik-2p.ogg"],
         "the game's recorded music, in <= 30 s pieces", build=build_long_music),
    _deb("eval", "music", "sound-icons", "SOUND_ICONS", "GPL-2+",
         ["cembalo-1.wav", "cembalo-2.wav", "cembalo-3.wav", "cembalo-6.wav", "cembalo-10.wav", "cembalo-11.wav",
          "cembalo-12.wav", "chord-7.wav", "cymbaly-1.wav", "electric-piano-3.wav", "guitar-12.wav", "guitar-13.wav",
          "klavichord-4.wav", "piano-3.wav", "trumpet-1.wav", "trumpet-12.wav", "violoncello-7.wav", "xylofon.wav"],
         "instrument samples"),
    _gen("eval", "tones", "ringback-425", gen_ringback_425, 3, "425 Hz, 1 s on / 4 s off"),
    _gen("eval", "tones", "busy-425", gen_busy_425, 3, "425 Hz, 0.5 s on / 0.5 s off"),
    _gen("eval", "tones", "testtone-1004", gen_testtone_1004, 3, "1004 Hz test tone"),
    _gen("eval", "tones", "sf-2600", gen_sf_2600, 4, "2600 Hz SF signalling bursts"),
    _gen("eval", "tones", "beep-1400", gen_beep_1400, 4, "1400 Hz beeps every 0.5-2 s"),
    _gen("eval", "tones", "sweep-log", gen_sweep_log, 3, "exponential sweeps, 100-280 Hz or 3000-3800 Hz"),
    _deb("eval", "tones", "sound-icons", "SOUND_ICONS", "GPL-2+",
         ["pisk-down.wav", "pisk-down-cink.wav", "pisk-up.wav", "pisk-up-cink.wav", "prompt.wav", "pipe.wav"],
         "whistles and prompt beeps"),
    _deb("eval", "noise", "frozen-bubble-data", "FROZEN_BUBBLE", "GPL-2",
         ["applause.ogg", "typewriter.ogg", "snore.ogg", "destroy_group.ogg", "cancel.ogg", "chatted.ogg",
          "hurry.ogg", "launch.ogg", "lose.ogg", "malus.ogg", "menu_change.ogg", "menu_selected.ogg",
          "newroot_solo.ogg", "noh.ogg", "pause.ogg", "rebound.ogg", "stick.ogg"], "game sound effects"),
    _deb("eval", "noise", "sound-icons", "SOUND_ICONS", "GPL-2+",
         ["percussion-10.wav", "percussion-12.wav", "percussion-28.wav", "percussion-50.wav", "glass-water-1.wav",
          "cockchafer-gentleman-1.wav", "canary-long.wav", "gummy-cat-2.wav"],
         "percussion, glass of water, cockchafer, canary, squeak"),
    *[_babble("eval", lang) for lang in ("sv", "pt", "ru", "cs", "tr")],
]


def sources_of(make: str) -> List[dict]:
    return [s for s in SOURCES if s["make"] == make]


def source_table_markdown() -> str:
    """The SOURCES table as Markdown (docs/data.md's table is this one plus the sizes of a --scale 1 build)."""
    lines = ["| make | kind | source | licence | what | clips |", "|---|---|---|---|---|---:|"]
    for s in SOURCES:
        what, n = s["how"], s.get("count", "")
        if "files" in s:  # stems of short sounds; whole names of the long pieces of music
            what += ": " + ", ".join(f if s["build"] is build_long_music else Path(f).stem for f in s["files"])
            n = len(s["files"]) if s["build"] is not build_long_music else "pieces"
        lines.append(f"| {s['make']} | {s['kind']} | `{s['source']}` | {s['licence']} | {what} | {n} |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- checks, finishing, writing

def check_requirements(make: str) -> None:
    """Every program and Debian file the make reads exists, or one MissingDebianFile naming it and apt-get."""
    needs_fluidsynth = any(s["build"] is build_midi_music for s in sources_of(make))
    if needs_fluidsynth and shutil.which("fluidsynth") is None:
        raise MissingDebianFile("fluidsynth not found on PATH (Debian package fluidsynth): apt-get install fluidsynth")
    paths = [(SF2, "timgm6mb-soundfont")] if needs_fluidsynth else []
    for s in sources_of(make):
        paths += [(source_path(s, f), s["source"]) for f in s.get("files", ())]
    for path, package in paths:
        if not Path(path).is_file():
            raise MissingDebianFile(f"missing {path} (Debian package {package}): apt-get install {package}")
    if any(s["build"] is build_babble for s in sources_of(make)):
        from local_models.common.synth import espeak_available
        if not espeak_available():
            raise MissingDebianFile("libespeak-ng.so.1 not found (Debian packages espeak-ng libespeak-ng1): "
                                    "apt-get install espeak-ng libespeak-ng1")


def trim(wave: np.ndarray) -> np.ndarray:
    """Drop leading / trailing samples more than TRIM_DB below the peak."""
    peak = np.abs(wave).max() if len(wave) else 0.0
    if peak == 0:
        return wave[:0]
    loud = np.flatnonzero(np.abs(wave) > peak * 10 ** (TRIM_DB / 20))
    return wave[loud[0]:loud[-1] + 1]


def finish(wave: np.ndarray, sr_in: int, sr: int) -> List[np.ndarray]:
    """Resample, trim, repeat a short clip / cut a long one into equal pieces, peak-normalise: 0.5-30 s pieces."""
    if sr_in != sr:
        g = math.gcd(sr, sr_in)
        wave = resample_poly(wave, sr // g, sr_in // g)
    wave = trim(wave)
    if len(wave) == 0:
        raise ValueError("clip is silent")
    if len(wave) < MIN_S * sr:  # a short alert: ring it again until it lasts MIN_S
        reps = math.ceil((MIN_S * sr + REPEAT_GAP_S * sr) / (len(wave) + REPEAT_GAP_S * sr))
        gap = _sil(REPEAT_GAP_S, sr)
        wave = np.concatenate([np.concatenate([wave, gap]) for _ in range(reps)])[:-len(gap)]
    n = math.ceil(len(wave) / (MAX_S * sr))
    edges = np.linspace(0, len(wave), n + 1).astype(int)
    return [w * (PEAK / np.abs(w).max()) for w in (wave[a:b] for a, b in zip(edges, edges[1:]))]


def to_pcm16(wave: np.ndarray) -> np.ndarray:
    return np.clip(np.round(wave * 32767), -32768, 32767).astype(np.int16)


def write_wav(path: Path, pcm: np.ndarray, sr: int) -> None:
    buf = io.BytesIO()
    sf.write(buf, pcm, sr, subtype="PCM_16", format="WAV")
    with atomic_open(path, "wb") as f:
        f.write(buf.getvalue())


def source_dir(source: str) -> str:
    return source.replace(":", "-")


def build(make: str, out_dir: Path, seed: int = 0, sample_rate: int = 16000, scale: float = 1.0) -> List[dict]:
    """Write every clip of MAKE under out_dir, then sources.tsv, then .done; returns the tsv rows."""
    check_requirements(make)
    ctx = Ctx(sample_rate, seed, scale)
    rows: List[dict] = []
    for src in sources_of(make):
        for name, wave, sr_in in src["build"](ctx, src):
            try:
                pieces = finish(wave, sr_in, sample_rate)
            except ValueError as e:
                raise ValueError(f"{src['source']} / {name}: {e}") from None
            for k, piece in enumerate(pieces):
                rel = f"{src['kind']}/{source_dir(src['source'])}/{name}{f'-{k:02d}' if len(pieces) > 1 else ''}.wav"
                pcm = to_pcm16(piece)
                write_wav(out_dir / rel, pcm, sample_rate)
                rows.append(dict(file=rel, kind=src["kind"], source=src["source"], licence=src["licence"],
                                 seconds=len(pcm) / sample_rate, pcm=pcm))
    rows.sort(key=lambda r: r["file"])
    written = {r["file"] for r in rows}
    for kind in KINDS:  # leftovers of an interrupted build with other options
        for p in sorted((out_dir / kind).rglob("*.wav")) if (out_dir / kind).is_dir() else []:
            if p.relative_to(out_dir).as_posix() not in written:
                p.unlink()
    with atomic_open(out_dir / "sources.tsv") as f:
        f.write("file\tkind\tsource\tlicence\tseconds\n")
        f.writelines(f"{r['file']}\t{r['kind']}\t{r['source']}\t{r['licence']}\t{r['seconds']:.3f}\n" for r in rows)
    return rows


def summary(rows: Sequence[dict]) -> str:
    """Per kind: files, seconds, mean RMS (dBFS) and peak: a listen-check by numbers."""
    lines = [f"{'kind':8s} {'files':>5s} {'seconds':>8s} {'rms_dBFS':>8s} {'peak':>6s}"]
    for kind in KINDS:
        sel = [r for r in rows if r["kind"] == kind]
        if sel:
            rms = [np.sqrt(np.mean((r["pcm"] / 32768.0) ** 2)) for r in sel]
            peak = max(np.abs(r["pcm"].astype(np.int32)).max() for r in sel) / 32768
            lines.append(f"{kind:8s} {len(sel):5d} {sum(r['seconds'] for r in sel):8.1f} "
                         f"{20 * np.log10(np.mean(rms)):8.1f} {peak:6.3f}")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, epilog="The table of sources: --list-sources.",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--make", choices=("train", "eval"), help="which of the two disjoint sets to build")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sample-rate", type=int, default=16000, help="Hz, at least 8000")
    p.add_argument("--scale", type=float, default=1.0, help="shrink (or grow) the number of clips, e.g. 0.2 for tests")
    p.add_argument("--list-sources", action="store_true", help="print the table of sources (Markdown) and exit")
    p.add_argument("out_dir", nargs="?", metavar="OUT_DIR")
    args = p.parse_args(argv)
    if args.list_sources:
        print(source_table_markdown())
        return 0
    if not args.make or not args.out_dir:
        p.error("--make and OUT_DIR are required")
    if args.sample_rate < 8000 or args.scale <= 0:
        p.error("--sample-rate must be >= 8000 and --scale > 0")
    out = Path(args.out_dir)
    # the sources too: a set built before a source was added or changed is rebuilt, not reused
    table = "\n".join(line for line in source_table_markdown().splitlines() if line.startswith(f"| {args.make} |"))
    options = dict(make=args.make, seed=args.seed, sample_rate=args.sample_rate, scale=args.scale,
                   sources=f"{zlib.crc32(table.encode()):08x}")
    stamp = out / ".done"
    if stamp.is_file():
        if json.loads(stamp.read_text()) == options:
            print(f"make_nonspeech_set: {out} already built ({stamp}); nothing to do")
            return 0
        print(f"make_nonspeech_set: {out} was built with other options ({stamp.read_text().strip()}); rebuilding")
        stamp.unlink()  # build() replaces every file and removes the ones the new options do not make
    start = time.time()
    try:
        rows = build(args.make, out, args.seed, args.sample_rate, args.scale)
    except (MissingDebianFile, RuntimeError, ValueError, OSError) as e:  # a missing package, a failed render
        print(f"make_nonspeech_set: {e}", file=sys.stderr)
        return 1
    with atomic_open(stamp) as f:
        f.write(json.dumps(options, sort_keys=True) + "\n")
    print(f"make_nonspeech_set: {args.make} make: {len(rows)} files, {sum(r['seconds'] for r in rows):.0f} s "
          f"in {time.time() - start:.1f} s -> {out}\n{summary(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
