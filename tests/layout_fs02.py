"""Fearless Steps Phase-2 (FS02) SAD as distributed, for the tests (tone / noise audio; the tree, the names and the
reference format are the release's).

Sources:
- The FS02 challenge corpus as issue #48 quotes it: `Data/Audio/Tracks/{Train,Dev,Eval}/FS02_<split>_NNN.wav`
  (8 kHz), references `Data/Transcripts/SAD/{Train,Dev}/FS02_<split>_NNN.txt`; Eval's references were not
  distributed (the challenge scored the submissions, https://fearless-steps.github.io/ChallengePhase2/).
- The reference format: the FS02 scoring toolkit (github.com/aditya-joglekar/FS02_Scoring_Toolkit),
  egs/ref_gt/SAD/*.txt: one line per interval, 12 tab-separated columns `<file> 0 <start> <end> S|NS manual X X X X
  X X`, the intervals tiling the recording from 0 (times with up to 2 decimals); scutils/scoreFS02SAD.py hands them to
  NIST's scoreFile_SAD.pl with start / end / type in the 0-based columns 2 / 3 / 4 (`-s 2 -e 3 -g 4`).
"""
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import soundfile

RATE = 8000
SPLITS = ("Train", "Dev", "Eval")
REFERENCED = ("Train", "Dev")


def rec_name(split: str, i: int) -> str:
    return f"FS02_{split.lower()}_{i + 1:03d}"


def speech_plan(rng, seconds: float) -> List[Tuple[float, float]]:
    """Alternating non-speech / speech bursts (0.3-1.2 s of "speech"), on a 10 ms grid, inside the recording."""
    out, t = [], round(float(rng.uniform(0.3, 1.0)), 2)
    while t < seconds - 1.0:
        end = round(min(seconds - 0.5, t + float(rng.uniform(0.3, 1.2))), 2)
        out.append((t, end))
        t = round(end + float(rng.uniform(0.4, 1.5)), 2)
    return out


def audio_of(rng, seconds: float, speech) -> np.ndarray:
    """Low noise with harmonic tones (150 Hz fundamental, 300-3400 Hz band) where SPEECH says: int16 at 8 kHz."""
    t = np.arange(int(seconds * RATE)) / RATE
    x = 0.01 * rng.standard_normal(len(t))
    tone = sum(np.sin(2 * np.pi * 150 * k * t) / k for k in range(2, 12))
    for s, e in speech:
        a, b = int(s * RATE), int(e * RATE)
        x[a:b] += 0.2 * tone[a:b]
    return (np.clip(x, -1, 1) * 32767).astype(np.int16)


def reference_lines(rec: str, speech, seconds: float) -> str:
    """The toolkit's 12 tab-separated columns, S and NS intervals tiling 0 .. SECONDS."""
    rows, t = [], 0.0
    for s, e in speech:
        if s > t:
            rows.append((t, s, "NS"))
        rows.append((s, e, "S"))
        t = e
    if seconds > t:
        rows.append((t, seconds, "NS"))
    return "".join("\t".join([rec, "0", f"{round(s, 2)}", f"{round(e, 2)}", kind, "manual"] + ["X"] * 6) + "\n"
                   for s, e, kind in rows)


def make_fs02(root: Path, per_split: int = 2, seconds: float = 6.0, seed: int = 0,
              without_ref: Tuple[str, ...] = ()) -> Dict[str, Dict[str, List[Tuple[float, float]]]]:
    """A fake FS02 SAD release under ROOT (the tree of the module docstring): PER_SPLIT recordings of SECONDS per
    split, Train and Dev references in the toolkit's 12-column form, no Eval references. WITHOUT_REF: recording
    names whose reference is left out (a stray wav). Returns {split: {rec: speech intervals}}."""
    rng = np.random.default_rng(seed)
    plan: Dict[str, Dict[str, List[Tuple[float, float]]]] = {}
    for split in SPLITS:
        tracks = root / "Data" / "Audio" / "Tracks" / split
        tracks.mkdir(parents=True)
        refs = root / "Data" / "Transcripts" / "SAD" / split
        if split in REFERENCED:
            refs.mkdir(parents=True)
        plan[split] = {}
        for i in range(per_split):
            rec = rec_name(split, i)
            speech = speech_plan(rng, seconds)
            plan[split][rec] = speech
            soundfile.write(tracks / f"{rec}.wav", audio_of(rng, seconds, speech), RATE, subtype="PCM_16")
            if split in REFERENCED and rec not in without_ref:
                (refs / f"{rec}.txt").write_text(reference_lines(rec, speech, seconds), encoding="ascii")
    return plan
