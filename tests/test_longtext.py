"""local_models/common/longtext.py and text-to-speech's long-text path: sentences spoken one at a time, each
levelled, joined with pauses."""
import re

import numpy as np
import pytest

from local_models.common import longtext
from local_models.common.longtext import level, split_sentences


def test_a_short_text_is_one_piece_unchanged():
    text = "  Hola. ¿Qué tal? Bien, gracias.  "
    assert split_sentences(text, 300) == [text.strip()]


def test_long_text_is_cut_at_sentences_then_clauses_then_words():
    sentences = [f"Frase número {i} del texto, con una coma y algo más." for i in range(20)]
    text = " ".join(sentences)
    pieces = split_sentences(text, 60)
    assert pieces == sentences  # each sentence fits: one piece each, cut after its full stop
    assert " ".join(pieces) == text
    long_sentence = "uno dos tres cuatro, " * 10 + "fin"
    cut = split_sentences(long_sentence, 45)
    assert all(len(p) <= 45 for p in cut) and re.sub(r"\s+", " ", " ".join(cut)) == long_sentence.strip()
    assert all(p.endswith(",") for p in cut[:-1])  # clause ends where they fit: no cut inside a clause here
    words = " ".join(["palabra"] * 30)  # no punctuation at all: at the last space before the limit
    cut = split_sentences(words, 50)
    assert all(len(p) <= 50 for p in cut) and " ".join(cut) == words and len(cut) == 5
    assert split_sentences("x" * 80, 50) == ["x" * 80]  # one word longer than the limit stays whole
    with pytest.raises(ValueError, match="max_chars"):
        split_sentences("hola", 0)


def test_level_reaches_the_target_and_limits_the_peak():
    sr = 16000
    t = np.arange(sr) / sr
    quiet = (0.005 * np.sin(2 * np.pi * 200 * t)).astype(np.float32)  # -49 dBFS RMS
    out = level(quiet)
    assert out.dtype == np.float32
    voiced = out[np.abs(out) >= np.abs(out).max() / 100]  # the part within 40 dB of the peak, as level() measures
    assert 20 * np.log10(np.sqrt(np.mean(voiced ** 2))) == pytest.approx(-20.0, abs=0.01)
    gap = np.zeros(sr, dtype=np.float32)  # a pause does not lower the level of the speech around it
    assert np.allclose(level(np.concatenate([quiet, gap]))[:sr], out)
    spiky = 20 * quiet  # RMS -23 dBFS: +3 dB would take its one spike past full scale: the limiter holds it at 0.99
    spiky[100] = 0.95
    assert np.abs(level(spiky)).max() == pytest.approx(longtext.PEAK, abs=1e-6)
    whisper = (1e-6 * np.sin(2 * np.pi * 200 * t)).astype(np.float32)  # gain capped at +30 dB
    assert np.abs(level(whisper)).max() == pytest.approx(1e-6 * 10 ** 1.5, rel=1e-3)
    assert not level(np.zeros(10, dtype=np.float32)).any()


def test_speak_calls_the_model_per_piece_and_names_a_bad_one():
    said = []

    def tts(piece, speed=1.0):
        if "你" in piece:
            raise ValueError("cannot read '你'")
        said.append((piece, speed))
        return {"wav": np.full(10, 0.01, dtype=np.float32), "sample_rate": 100}

    out = longtext.speak(tts, "Uno dos. Tres cuatro.", speed=1.5, max_chars=12, level_dbfs=None)
    assert said == [("Uno dos.", 1.5), ("Tres cuatro.", 1.5)] and out["pieces"] == 2
    want = np.array([0.01] * 10 + [0.0] * 25 + [0.01] * 10, dtype=np.float32)  # the model's level, a 0.25 s pause
    assert np.array_equal(out["wav"], want)
    pieces = list(longtext.iter_speak(tts, "Uno dos. Tres cuatro.", max_chars=12, level_dbfs=None))
    assert [(len(w), sr) for w, sr in pieces] == [(10, 100), (35, 100)]  # the pause leads the second piece
    levelled = longtext.speak(tts, "Uno dos.", max_chars=10)["wav"]
    assert np.allclose(levelled, 0.1)  # -20 dBFS: +20 dB (within the +30 dB cap)
    with pytest.raises(ValueError, match=r"piece 2 of 3 \('Hola 你\.'\.\.\.\): cannot read"):
        longtext.speak(tts, "Uno dos. Hola 你. Adiós.", max_chars=12)
    with pytest.raises(ValueError, match=r"^cannot read"):  # one piece: the model's own message
        longtext.speak(tts, "Hola 你.")
