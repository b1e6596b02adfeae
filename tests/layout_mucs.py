"""A tiny MUCS 2021 tree (subtask 1, the public Indic set) in the layout as distributed, for the indic recipe's
tests: tones and noise instead of speech, a few utterances per language and part.

    ROOT/<Language>/{train,test}/transcription.txt    `<utt_id> <transcript>` per line, UTF-8, native script
    ROOT/<Language>/{train,test}/audio/<utt_id>.wav   mono PCM 16-bit, one utterance per file

Sources of the layout and formats:
- folder tree, names and case (Gujarati Hindi Marathi Odia Tamil Telugu, train / test, audio/, transcription.txt):
  github.com/navana-tech/baseline_recipe_is21s_indic_asr_challenge, is21-subtask1-kaldi/README.md ("Audio data
  directory organization") and its local/check_audio_data_folder.sh;
- transcription.txt: the first whitespace-separated field is the utterance id, the rest the transcript, and the
  audio is audio/<utt_id>.wav; the baseline's local/test_data_prep.sh builds wav.scp from exactly that and turns
  any whitespace into a space (so a tab after the id occurs: some languages here use one), with utt2spk = utt utt
  (the corpus names no speakers);
- rates: navana-tech/MUCS2021 docs/data.md (Hindi, Marathi, Odia 8 kHz; Tamil, Telugu, Gujarati 16 kHz) and the
  baseline README ("Tamil, Telugu and Gujarati data were downsampled to 8kHz").
The utterance ids here are made up (the recipe treats an id as opaque); the transcripts are short native-script
words of each language.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional, Sequence

import numpy as np
import soundfile

# folder as distributed -> (code, recorded rate, separator after the id, words in its script)
LANGUAGES = {
    "Hindi": ("hi", 8000, " ", ["नमस्ते", "भारत", "पानी", "किताब", "घर"]),
    "Marathi": ("mr", 8000, " ", ["नमस्कार", "पाणी", "शाळा", "घर", "मराठी"]),
    "Odia": ("or", 8000, " ", ["ନମସ୍କାର", "ପାଣି", "ଘର", "ବହି", "ଓଡ଼ିଆ"]),
    "Tamil": ("ta", 16000, "\t", ["வணக்கம்", "தண்ணீர்", "வீடு", "புத்தகம்", "தமிழ்"]),
    "Telugu": ("te", 16000, "\t", ["నమస్కారం", "నీళ్ళు", "ఇల్లు", "పుస్తకం", "తెలుగు"]),
    "Gujarati": ("gu", 16000, "\t", ["નમસ્તે", "પાણી", "ઘર", "પુસ્તક", "ગુજરાતી"]),
}
CODES = {code: folder for folder, (code, *_rest) in LANGUAGES.items()}


def utt_ids(code: str, part: str, n: int) -> list:
    """Made-up ids, unique per language and part (digits, as opaque as the corpus's)."""
    base = {"train": 1000, "test": 9000}[part] + 100 * sorted(CODES).index(code)
    return [f"{base + i:06d}" for i in range(n)]


def wave(rate: int, seconds: float, seed: int) -> np.ndarray:
    """A tone with harmonics over noise, full band at RATE (a 16 kHz file has energy above 4 kHz)."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(rate * seconds)) / rate
    f0 = 150 + 20 * (seed % 7)
    x = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 30) if f0 * k < rate / 2)
    x = 0.3 * x / np.abs(x).max() + 0.05 * rng.standard_normal(len(t))
    return x.astype(np.float32)


def make_mucs(root, languages: Optional[Sequence[str]] = None, n_train: int = 4, n_test: int = 2,
              seconds: float = 0.4) -> Dict[str, Dict[str, list]]:
    """Write the tree under ROOT for LANGUAGES (codes; default all six); return {code: {part: [utt ids]}}."""
    root = Path(root)
    out: Dict[str, Dict[str, list]] = {}
    for folder, (code, rate, sep, words) in LANGUAGES.items():
        if languages is not None and code not in languages:
            continue
        out[code] = {}
        for part, n in (("train", n_train), ("test", n_test)):
            d = root / folder / part
            (d / "audio").mkdir(parents=True, exist_ok=True)
            ids = utt_ids(code, part, n)
            lines = []
            for i, utt in enumerate(ids):
                soundfile.write(d / "audio" / f"{utt}.wav", wave(rate, seconds + 0.05 * i, int(utt)), rate,
                                subtype="PCM_16")
                lines.append(f"{utt}{sep}{words[i % len(words)]} {words[(i + 1) % len(words)]}")
            (d / "transcription.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
            out[code][part] = ids
    return out
