"""Long text for the TTS commands: cut into sentences (bounded memory and a steady rate: each piece is synthesised on
its own), each piece brought to one level, joined with short pauses. numpy only.

    out = speak(tts, text, speed=1.0)   # tts(piece, speed=...) -> {"wav", "sample_rate"}: a Text2Speech
    for wav, sr in iter_speak(tts, text): ...   # piece by piece, as each is made (Text2Speech.speak / .iter_speak)
"""
from __future__ import annotations

import re
from typing import Callable, Iterator, List, Optional, Tuple

import numpy as np

MAX_CHARS = 300  # a piece longer than this is cut again (at a clause, else at a word boundary)
TARGET_DBFS = -20.0  # RMS of the voiced part of each piece
MAX_GAIN_DB = 30.0  # a near-silent synthesis is not blown up into noise
PEAK = 0.99  # the limiter: no sample above this
PAUSE_S = 0.25  # silence between two pieces
_SENTENCE_END = re.compile(r"(?<=[.!?…。！？])\s+")
_CLAUSE_END = re.compile(r"(?<=[,;:，；：])\s+")


def _cut_long(piece: str, max_chars: int) -> List[str]:
    """PIECE in parts of at most MAX_CHARS: after clause punctuation where it can, else at the last space before the
    limit, else (one word longer than the limit) as it is."""
    out: List[str] = []
    for clause in _CLAUSE_END.split(piece):
        while len(clause) > max_chars:
            cut = clause.rfind(" ", 0, max_chars + 1)
            if cut <= 0:
                break
            out.append(clause[:cut].strip())
            clause = clause[cut:].strip()
        out.append(clause)
    # clauses are joined back while they fit: no piece of three words when its neighbour has room
    merged: List[str] = []
    for part in out:
        if merged and len(merged[-1]) + 1 + len(part) <= max_chars:
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    return merged


def split_sentences(text: str, max_chars: int = MAX_CHARS) -> List[str]:
    """TEXT as the pieces a TTS command speaks one at a time: sentences (cut after . ! ? … and their full-width forms
    when whitespace follows), each longer than MAX_CHARS cut again (_cut_long). A text of at most MAX_CHARS is one
    piece, unchanged but for its outer whitespace: short texts are spoken exactly as before. Joining the pieces with
    single spaces gives TEXT back up to whitespace."""
    if max_chars < 1:
        raise ValueError(f"max_chars must be >= 1, got {max_chars}")
    text = text.strip()
    if len(text) <= max_chars:
        return [text]
    pieces: List[str] = []
    for sentence in _SENTENCE_END.split(text):
        if sentence.strip():
            pieces += _cut_long(sentence.strip(), max_chars) if len(sentence) > max_chars else [sentence.strip()]
    return [p for p in pieces if p]


def level(wav: np.ndarray, target_dbfs: float = TARGET_DBFS, max_gain_db: float = MAX_GAIN_DB,
          peak: float = PEAK) -> np.ndarray:
    """WAV scaled so that its voiced part (samples within 40 dB of its peak) has an RMS of TARGET_DBFS, the gain at
    most MAX_GAIN_DB, then limited: scaled down so no sample passes PEAK. Silence stays silence. float32."""
    x = np.asarray(wav, dtype=np.float32)
    top = float(np.abs(x).max()) if x.size else 0.0
    if top == 0.0:
        return x
    voiced = x[np.abs(x) >= top * 10 ** (-40 / 20)]
    rms = float(np.sqrt(np.mean(np.square(voiced, dtype=np.float64))))
    gain = min(10 ** (target_dbfs / 20) / rms, 10 ** (max_gain_db / 20))
    gain = min(gain, peak / top)
    return (x * gain).astype(np.float32)


def iter_speak(tts: Callable[..., dict], text: str, speed: float = 1.0, max_chars: int = MAX_CHARS,
               level_dbfs: Optional[float] = TARGET_DBFS, pause_s: float = PAUSE_S) -> Iterator[Tuple[np.ndarray, int]]:
    """(wav, sample_rate) of each piece of TEXT (split_sentences) as soon as TTS (a Text2Speech of either TTS paper)
    has made it, levelled to LEVEL_DBFS (None: the model's own level, no limiter), every piece after the first
    preceded by PAUSE_S of silence: joined, they are speak()'s wav. Memory holds one piece. An error in one piece of
    several names the piece."""
    pieces = split_sentences(text, max_chars)
    for k, piece in enumerate(pieces, 1):
        try:
            out = tts(piece, speed=speed)
        except ValueError as e:
            if len(pieces) == 1:
                raise
            raise ValueError(f"piece {k} of {len(pieces)} ({piece[:40]!r}...): {e}") from None
        sr = out["sample_rate"]
        wav = np.asarray(out["wav"] if level_dbfs is None else level(out["wav"], level_dbfs), dtype=np.float32)
        gap = np.zeros(int(round(pause_s * sr)) if k > 1 else 0, dtype=np.float32)  # pauses between pieces only
        yield np.concatenate([gap, wav]), sr


def speak(tts: Callable[..., dict], text: str, speed: float = 1.0, max_chars: int = MAX_CHARS,
          level_dbfs: Optional[float] = TARGET_DBFS) -> dict:
    """{"wav", "sample_rate", "pieces"}: TEXT spoken piece by piece (iter_speak), joined with pauses."""
    wavs, sample_rate = [], None
    for wav, sample_rate in iter_speak(tts, text, speed, max_chars, level_dbfs):
        wavs.append(wav)
    return {"wav": np.concatenate(wavs) if wavs else np.zeros(0, dtype=np.float32), "sample_rate": sample_rate,
            "pieces": len(wavs)}


class LongText:
    """speak / iter_speak for a Text2Speech class (either TTS paper's): text of any length, as `text-to-speech`
    speaks it."""

    def speak(self, text: str, speed: float = 1.0, max_chars: int = MAX_CHARS,
              level_dbfs: Optional[float] = TARGET_DBFS) -> dict:
        """{"wav", "sample_rate", "pieces"}: TEXT sentence by sentence (pieces of at most MAX_CHARS), each levelled to
        LEVEL_DBFS (None: the model's level), joined with 0.25 s pauses; the speaking rate stays steady and the
        model's memory holds one piece (the joined wav grows with the text: iter_speak keeps none of it)."""
        return speak(self, text, speed, max_chars, level_dbfs)

    def iter_speak(self, text: str, speed: float = 1.0, max_chars: int = MAX_CHARS,
                   level_dbfs: Optional[float] = TARGET_DBFS) -> Iterator[Tuple[np.ndarray, int]]:
        """speak() piece by piece: (wav, sample_rate) of each sentence as soon as it is made, a pause in front of
        every one after the first."""
        return iter_speak(self, text, speed, max_chars, level_dbfs)
