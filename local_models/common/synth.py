"""Mini-corpus synthesis with espeak-ng (through ctypes), with true phone times.

espeak-ng reports a PHONEME event for every phone it renders, carrying the absolute sample
position where the phone starts; those events give exact phone alignments for free, which is
what makes a synthetic corpus useful for testing alignment and ASR recipes.

Determinism: espeak-ng 1.51 keeps function-static state across utterances (the pitch-flutter
index in wavegen.c, waveform phase) and its breathy variants draw noise from libc rand(), so
the same text rendered twice in one process differs. Every utterance therefore gets a pristine
engine: the library is dlclose()d and reloaded (statics reset; ~3-8 ms) and libc's rand() is
seeded from the text and voice. Output then depends only on (text, voice), never on what the
process synthesised before or on how jobs were split over processes.

Public API:
    Voice, SUPPORTED_LANGS, sample_voices(lang, n, seed)
    synthesize(text, voice, sample_rate=None) -> Utterance
    synthesize_corpus(items, wav_dir, data_dir, sample_rate=None, nj=1, progress=None) -> CorpusStats
    resample(utt, sample_rate) -> Utterance
"""
from __future__ import annotations

import _ctypes
import ctypes
import ctypes.util
import io
import math
import multiprocessing
import random
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from local_models.common.datadir import atomic_open, c_sort_key, write_data_dir

# Our language codes -> espeak-ng voice names. espeak 1.51 names the British voice "en"
# ("en-gb" is only a language tag and SetVoiceByName("en-gb") fails with EE_NOT_FOUND).
SUPPORTED_LANGS: Dict[str, str] = {
    "en-gb": "en",
    "en-us": "en-us",
    # other English accents: the SAD recipe's held-out evaluation voices (never in its training splits)
    "en-029": "en-029",
    "en-gb-scotland": "en-gb-scotland",
    "en-gb-x-gbcwmd": "en-gb-x-gbcwmd",
    "en-gb-x-rp": "en-gb-x-rp",
    "es": "es",
    "gu": "gu",
    "hi": "hi",
    "ko": "ko",
    "ta": "ta",
    # babble only (the SAD recipe's non-speech set, egs/fearless_steps/sad1/local/make_nonspeech_set.py)
    "cs": "cs", "de": "de", "fr": "fr", "it": "it", "nl": "nl",
    "pl": "pl", "pt": "pt", "ru": "ru", "sv": "sv", "tr": "tr",
}
VARIANTS = tuple(f"m{i}" for i in range(1, 8)) + tuple(f"f{i}" for i in range(1, 6))
SIL = "sil"

_LIB_CANDIDATES = ("libespeak-ng.so.1", "/usr/lib/x86_64-linux-gnu/libespeak-ng.so.1", "libespeak-ng.so")

# espeak_lib.h constants (1.51)
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_INIT_PHONEME_EVENTS = 0x0001
_INIT_DONT_EXIT = 0x8000
_POS_CHARACTER = 1
_CHARS_UTF8 = 1
_EVENT_LIST_TERMINATED = 0
_EVENT_PHONEME = 7
_PARAM_RATE, _PARAM_VOLUME, _PARAM_PITCH, _PARAM_RANGE = 1, 2, 3, 4
# Callback chunk length in ms: long chunks mean few Python callbacks (the main overhead).
_BUFFER_MS = 1000
# Volume 100 (the default) clips on some variants (f-voices with high pitch); 80 does not.
_VOLUME = 80


from .errors import EspeakUnavailable  # noqa: E402,F401  (defined beside cli's other error classes)


class _EventId(ctypes.Union):
    _fields_ = [("number", ctypes.c_int), ("name", ctypes.c_char_p), ("string", ctypes.c_char * 8)]


class _Event(ctypes.Structure):
    # espeak_EVENT as in 1.51 (40 bytes on x86_64). `sample` is the absolute sample index
    # from the start of the current espeak_Synth call (checked: == audio_position * 22.05).
    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),
        ("sample", ctypes.c_int),
        ("user_data", ctypes.c_void_p),
        ("id", _EventId),
    ]


_SynthCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event))


class _Espeak:
    """A freshly loaded and initialised espeak-ng, used for one utterance and then close()d.

    The library keeps global state, so at most one instance is alive per process (see _LOCK)."""

    def __init__(self) -> None:
        self.lib = _load_library()
        lib = self.lib
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_SetSynthCallback.argtypes = [_SynthCallback]
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_Synth.argtypes = [
            ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int, ctypes.c_uint,
            ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
        ]
        self.sample_rate = lib.espeak_Initialize(
            _AUDIO_OUTPUT_SYNCHRONOUS, _BUFFER_MS, None, _INIT_PHONEME_EVENTS | _INIT_DONT_EXIT
        )
        if self.sample_rate <= 0:
            raise EspeakUnavailable(f"espeak_Initialize failed (returned {self.sample_rate})")
        self._chunks: List[bytes] = []
        self._events: List[Tuple[str, int]] = []
        # Keep the CFUNCTYPE object alive for as long as the library may call it.
        self._callback = _SynthCallback(self._on_audio)
        lib.espeak_SetSynthCallback(self._callback)

    def _on_audio(self, wav, numsamples, events) -> int:
        if numsamples > 0:
            self._chunks.append(ctypes.string_at(wav, numsamples * 2))
        i = 0
        while events[i].type != _EVENT_LIST_TERMINATED:
            ev = events[i]
            if ev.type == _EVENT_PHONEME:
                # id.string is char[8], not necessarily NUL-terminated.
                label = bytes(ev.id.string).split(b"\0", 1)[0].decode("utf-8", "replace")
                self._events.append((label, ev.sample))
            i += 1
        return 0  # 0 = continue synthesis

    def close(self) -> None:
        """Free espeak's memory and unload the library, so the next load starts from scratch."""
        self.lib.espeak_Terminate()
        _ctypes.dlclose(self.lib._handle)
        self.lib = None

    def synth(self, text: str, voice: "Voice") -> Tuple[np.ndarray, List[Tuple[str, int]]]:
        """Render `text`; return (int16 wave, [(phone, start_sample), ...] in event order)."""
        name = voice.espeak_name
        if self.lib.espeak_SetVoiceByName(name.encode()) != 0:
            raise ValueError(f"espeak-ng has no voice {name!r}")
        for param, value in ((_PARAM_RATE, voice.rate), (_PARAM_PITCH, voice.pitch),
                             (_PARAM_RANGE, voice.pitch_range), (_PARAM_VOLUME, _VOLUME)):
            self.lib.espeak_SetParameter(param, int(value), 0)
        data = text.encode("utf-8") + b"\0"
        _LIBC.srand(zlib.crc32(f"{voice}|{text}".encode("utf-8")))  # breathy variants use rand()
        self._chunks, self._events = [], []
        err = self.lib.espeak_Synth(data, len(data), 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
        self.lib.espeak_Synchronize()
        if err != 0:
            raise RuntimeError(f"espeak_Synth failed with code {err} for text {text!r}")
        wave = np.frombuffer(b"".join(self._chunks), dtype=np.int16).copy()
        return wave, self._events


_LIBC = ctypes.CDLL(None)
_LOCK = threading.Lock()  # espeak has global state: one synthesis at a time per process
_LIB_NAME: Optional[str] = None  # resolved once: find_library runs ldconfig, which is slow


def _load_library() -> ctypes.CDLL:
    global _LIB_NAME
    if _LIB_NAME is not None:
        return ctypes.CDLL(_LIB_NAME)
    names = list(_LIB_CANDIDATES)
    found = ctypes.util.find_library("espeak-ng")
    if found:
        names.insert(0, found)
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        _LIB_NAME = name
        return lib
    raise EspeakUnavailable("libespeak-ng.so.1 not found; install the Debian packages espeak-ng libespeak-ng1")


def _fresh_engine() -> _Espeak:
    """A newly loaded and initialised espeak (see the module docstring on determinism).

    Forked workers inherit no live engine: each process loads and initialises its own."""
    return _Espeak()


def espeak_available() -> bool:
    try:
        with _LOCK:
            _fresh_engine().close()
        return True
    except EspeakUnavailable:
        return False


@dataclass(frozen=True)
class Voice:
    """One synthetic speaker: language, espeak variant (m1..m7, f1..f5 or None), rate in words
    per minute, pitch 0-100 and pitch range 0-100 (0 = monotone)."""

    lang: str
    variant: Optional[str] = None
    rate: int = 175
    pitch: int = 50
    pitch_range: int = 50

    def __post_init__(self) -> None:
        check_lang(self.lang)
        if self.variant is not None and self.variant not in VARIANTS:
            raise ValueError(f"unknown voice variant {self.variant!r}; choose from {', '.join(VARIANTS)}")
        if not 80 <= self.rate <= 450:
            raise ValueError(f"rate {self.rate} wpm outside espeak's range 80..450")
        for what, value in (("pitch", self.pitch), ("pitch_range", self.pitch_range)):
            if not 0 <= value <= 100:
                raise ValueError(f"{what} {value} outside 0..100")

    @property
    def espeak_name(self) -> str:
        base = SUPPORTED_LANGS[self.lang]
        return f"{base}+{self.variant}" if self.variant else base


def check_lang(lang: str) -> str:
    if lang not in SUPPORTED_LANGS:
        raise ValueError(f"unsupported language {lang!r}; supported: {', '.join(sorted(SUPPORTED_LANGS))}")
    return lang


def sample_voices(lang: str, n: int, seed: int = 0) -> List[Voice]:
    """n distinct voices for `lang`, deterministic in seed: variants cycle through a seeded
    shuffle of m1..m7, f1..f5, each with jittered rate, pitch and pitch range."""
    check_lang(lang)
    if n < 0:
        raise ValueError(f"number of voices must be >= 0, got {n}")
    rng = random.Random(f"voices:{lang}:{seed}")
    variants = list(VARIANTS)
    rng.shuffle(variants)
    voices: List[Voice] = []
    seen = set()
    while len(voices) < n:
        voice = Voice(
            lang=lang,
            variant=variants[len(voices) % len(variants)],
            rate=rng.randint(140, 200),
            pitch=rng.randint(30, 70),
            pitch_range=rng.randint(30, 80),
        )
        if voice not in seen:  # redraw on the (rare) exact collision
            seen.add(voice)
            voices.append(voice)
    return voices


@dataclass
class Utterance:
    """Synthesised audio with phones [(label, start_sample, end_sample)] tiling [0, len(wave))."""

    wave: np.ndarray
    sample_rate: int
    phones: List[Tuple[str, int, int]]

    @property
    def duration(self) -> float:
        return len(self.wave) / self.sample_rate


def _is_pause(label: str) -> bool:
    # espeak pause phonemes: "_" (short), "_:" (long), "_!" (glottal), "_|", "_^_" (lang switch)...
    return not label or label.startswith("_")


def _tile_phones(events: Sequence[Tuple[str, int]], num_samples: int) -> List[Tuple[str, int, int]]:
    """Turn phone start events into segments that exactly tile [0, num_samples).

    Each phone lasts until the next event; audio before the first phone and pause phones
    become "sil"; adjacent "sil" merge; zero-length phones (espeak emits some, e.g. the final
    "_" at the very end) are dropped."""
    starts: List[Tuple[str, int]] = [(SIL, 0)]
    last = 0
    for label, sample in events:
        label = SIL if _is_pause(label) else "".join(label.split())  # CTM fields have no spaces
        # Clamp into the wave and keep order: starts must never go backwards.
        sample = min(max(sample, last), num_samples)
        starts.append((label, sample))
        last = sample
    phones: List[Tuple[str, int, int]] = []
    for (label, start), (_, end) in zip(starts, starts[1:] + [("", num_samples)]):
        if end <= start:
            continue
        if phones and phones[-1][0] == label == SIL:
            phones[-1] = (SIL, phones[-1][1], end)
        else:
            phones.append((label, start, end))
    return phones


def closures_to_following(phones: Sequence[Tuple[str, int, int]], wave: np.ndarray, sample_rate: int,
                          win_ms: float = 5.0, drop_db: float = 15.0, min_ms: float = 10.0,
                          ) -> List[Tuple[str, int, int]]:
    """Phones [(label, start, end)] (samples, tiling the wave) with each stop closure given to its stop.

    espeak-ng renders a stop's closure (its "pre-pause", ~25-60 ms of near silence) before the stop's phoneme
    event (synthesize.c: DoPause(prepause) comes before DoPhonemeMarker), so its event times give the closure to
    the phone before. Phonetic segmentation (TIMIT's closure + release, forced aligners) gives it to the stop.
    Here, at every boundary after a non-pause phone, the run of win_ms windows just before the boundary whose
    level stays drop_db below that phone's typical level (90th percentile of its window levels) moves to the
    following phone, if it lasts min_ms or more; the phone before keeps at least one window."""
    w = max(1, int(round(win_ms * sample_rate / 1000)))
    min_windows = max(1, int(np.ceil(min_ms / win_ms)))
    x = np.asarray(wave, dtype=np.float64)
    out = [list(p) for p in phones]
    for k in range(1, len(out)):
        label, start, end = out[k - 1]
        b = out[k][1]
        n = (b - start) // w  # whole windows of the previous phone, aligned to the boundary
        if label == SIL or n < 2:
            continue
        frames = x[b - n * w:b].reshape(n, w)
        level = 10 * np.log10(np.mean(frames ** 2, axis=1) + 1e-12)[::-1]  # level[0]: the window before b
        quiet = level < np.percentile(level, 90) - drop_db
        run = int(np.argmin(quiet)) if not quiet.all() else n - 1
        if run >= min_windows:
            out[k - 1][2] = out[k][1] = b - run * w
    return [tuple(p) for p in out]


def resample(utt: Utterance, sample_rate: int) -> Utterance:
    """Resample with a polyphase filter; phone boundaries are scaled and re-tiled."""
    if sample_rate == utt.sample_rate:
        return utt
    from scipy.signal import resample_poly  # imported lazily: scipy import is slow

    g = math.gcd(sample_rate, utt.sample_rate)
    up, down = sample_rate // g, utt.sample_rate // g
    y = resample_poly(utt.wave.astype(np.float32), up, down)
    wave = np.clip(np.round(y), -32768, 32767).astype(np.int16)
    n = len(wave)
    events = [(label, min(n, round(start * up / down))) for label, start, _ in utt.phones]
    return Utterance(wave, sample_rate, _tile_phones(events, n))


def synthesize(text: str, voice: Voice, sample_rate: Optional[int] = None) -> Utterance:
    """Synthesise `text` with `voice`; optionally resample to `sample_rate` (Hz)."""
    if not text or not text.strip():
        raise ValueError("cannot synthesise empty text")
    with _LOCK:
        engine = _fresh_engine()
        try:
            wave, events = engine.synth(text, voice)
            rate = engine.sample_rate
        finally:
            engine.close()
    if len(wave) == 0:
        raise ValueError(f"espeak-ng produced no audio for {text!r}")
    utt = Utterance(wave, rate, _tile_phones(events, len(wave)))
    return resample(utt, sample_rate) if sample_rate else utt


# ----------------------------------------------------------------------------- corpus

Item = Tuple[str, str, str, Voice]  # (utt_id, spk_id, text, voice)


@dataclass
class CorpusStats:
    num_utts: int
    total_seconds: float


def check_items(items: Sequence[Item]) -> None:
    """Validate ids and texts before any audio is made; errors name the utterance."""
    seen = set()
    for utt, spk, text, voice in items:
        for what, key in (("utterance", utt), ("speaker", spk)):
            if not key or any(c.isspace() for c in key):
                raise ValueError(f"invalid {what} id {key!r} (empty or contains whitespace)")
        if not utt.startswith(spk + "-"):
            raise ValueError(
                f"utterance id {utt!r} must start with its speaker id followed by '-' ({spk + '-'!r}), "
                "so that sorting by utterance also groups by speaker"
            )
        if utt in seen:
            raise ValueError(f"duplicate utterance id {utt!r}")
        seen.add(utt)
        if not text or not text.strip():
            raise ValueError(f"utterance {utt!r} has empty text")
        if "\n" in text or "\r" in text:
            raise ValueError(f"utterance {utt!r}: text must be a single line")
        check_lang(voice.lang)


def _write_wav(path: Path, utt: Utterance) -> None:
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, utt.wave, utt.sample_rate, subtype="PCM_16", format="WAV")
    with atomic_open(path, "wb") as f:
        f.write(buf.getvalue())


def _synth_one(job: Tuple[str, str, Voice, str, Optional[int]]) -> Tuple[str, int, int, List[Tuple[str, int, int]]]:
    utt_id, text, voice, wav_path, sample_rate = job
    utt = synthesize(text, voice, sample_rate)
    _write_wav(Path(wav_path), utt)
    return utt_id, len(utt.wave), utt.sample_rate, utt.phones


def _pool_context():
    # fork: workers start instantly and inherit imported modules (engines are per utterance).
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _run_jobs(jobs: List[tuple], nj: int, progress: bool):
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(jobs), unit="utt", desc="synth", mininterval=1.0)
    try:
        if nj <= 1 or len(jobs) <= 1:
            for job in jobs:
                yield _synth_one(job)
                bar and bar.update(1)
            return
        chunksize = max(1, min(16, len(jobs) // (nj * 8)))
        with _pool_context().Pool(min(nj, len(jobs))) as pool:
            for result in pool.imap(_synth_one, jobs, chunksize=chunksize):
                yield result
                bar and bar.update(1)
    finally:
        if bar is not None:
            bar.close()


def ms_phones(phones: Sequence[Tuple[str, int, int]], rate: int) -> List[Tuple[str, int, int]]:
    """PHONES (label, start, end samples at RATE) as phones.ctm holds them: boundaries rounded to milliseconds
    (start = round(b_i), end = round(b_{i+1}), so an utterance's durations sum exactly to its rounded length), a
    phone shorter than that rounding left out."""
    out = []
    for label, start, end in phones:
        s_ms, e_ms = round(start * 1000 / rate), round(end * 1000 / rate)
        if e_ms > s_ms:
            out.append((label, s_ms, e_ms))
    return out


def format_ctm(results: Iterable[Tuple[str, int, int, List[Tuple[str, int, int]]]]) -> List[str]:
    """CTM lines ``<utt> 1 <start_s> <dur_s> <phone>``, sorted by utterance (C order) then time (ms_phones)."""
    return [f"{utt_id} 1 {s / 1000:.3f} {(e - s) / 1000:.3f} {label}\n"
            for utt_id, _, rate, phones in sorted(results, key=lambda r: c_sort_key(r[0]))
            for label, s, e in ms_phones(phones, rate)]


def synthesize_corpus(
    items: Sequence[Item],
    wav_dir,
    data_dir,
    sample_rate: Optional[int] = None,
    nj: int = 1,
    progress: Optional[bool] = None,
) -> CorpusStats:
    """Synthesise items (utt_id, spk_id, text, voice) to `<wav_dir>/<utt_id>.wav` (PCM16) and
    write a Kaldi data dir: wav.scp (absolute paths), text, utt2spk, spk2utt, utt2dur,
    utt2num_samples and phones.ctm. Deterministic: same items give byte-identical files."""
    items = list(items)
    check_items(items)
    if nj < 1:
        raise ValueError(f"nj must be >= 1, got {nj}")
    wav_dir = Path(wav_dir).resolve()
    data_dir = Path(data_dir)
    wav_dir.mkdir(parents=True, exist_ok=True)
    jobs = [(utt, text, voice, str(wav_dir / f"{utt}.wav"), sample_rate) for utt, _, text, voice in items]
    if progress is None:
        progress = len(jobs) >= 200
    results = list(_run_jobs(jobs, nj, progress))

    utt2spk = {utt: spk for utt, spk, _, _ in items}
    text = {utt: " ".join(t.split()) for utt, _, t, _ in items}
    wav_scp = {utt: str(wav_dir / f"{utt}.wav") for utt, _, _, _ in items}
    utt2num_samples = {utt: n for utt, n, _, _ in results}
    utt2dur = {utt: f"{round(n * 1000 / rate) / 1000:.3f}" for utt, n, rate, _ in results}
    write_data_dir(data_dir, wav_scp, utt2spk, text=text,
                   extra={"utt2dur": utt2dur, "utt2num_samples": utt2num_samples})
    with atomic_open(data_dir / "phones.ctm") as f:
        f.writelines(format_ctm(results))
    total = sum(n / rate for _, n, rate, _ in results)
    return CorpusStats(len(results), total)
