"""KSS as distributed, for the tests (tone audio; the tree, names and transcript format are the release's).

Sources:
- Kaggle, "Korean Single Speaker Speech Dataset" (bryanpark/korean-single-speaker-speech-dataset), version 1.4: the
  archive unpacks to `transcript.v.1.4.txt` and `kss/{1,2,3,4}/<folder>_<NNNN>.wav` (44.1 kHz, 16-bit mono).
- ESPnet's egs2/kss/tts1 README: the same files laid flat, `KSS/{1,2,3,4}/` beside `KSS/transcript.v.1.4.txt`.
- The transcript (dataset card): one line per utterance, `1/1_0000.wav|original|expanded|decomposed|duration|english`,
  UTF-8; the expanded column spells numbers out in Hangul.
"""
from pathlib import Path

import numpy as np
import soundfile

NUMBERS = ("영", "일", "이", "삼", "사", "오", "육", "칠", "팔", "구", "십", "십일")
LAYOUTS = ("espnet", "kaggle")


def make_kss(root: Path, n=12, rate=44100, order=None, layout="espnet"):
    """A fake KSS under ROOT: transcript.v.1.4.txt + 1/1_NNNN.wav (0.1-0.2 s sine) at `rate`; lines in `order`.
    layout "espnet": wavs in ROOT/1/; "kaggle": in ROOT/kss/1/ (the transcript stays at ROOT).
    The expanded column (3rd: numbers in Hangul, runs of spaces) differs from the original one (digits)."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r}: one of {LAYOUTS}")
    wav_root = root / "kss" if layout == "kaggle" else root
    (wav_root / "1").mkdir(parents=True)
    lines = []
    for i in (order or range(n)):
        stem = f"1_{i:04d}"
        t = np.arange(int(rate * (0.1 + 0.01 * i))) / rate
        soundfile.write(wav_root / "1" / f"{stem}.wav", (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), rate,
                        subtype="PCM_16")
        lines.append(f"1/{stem}.wav|그는 {i}번 왔다.|그는  {NUMBERS[i]}번   왔다.|x|{0.1 + 0.01 * i:.1f}|He came.")
    (root / "transcript.v.1.4.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
