"""A tiny ZeroSpeech 2019 English corpus in its published layout (a test helper, not a test module).

`make_zs2019(root, ...)` writes, under ROOT (what db.sh's ZEROSPEECH2019 points at; with style="2020" under
ROOT/2019/, as the ZeroSpeech 2020 release nests it):

    english/train/unit/S0xx_<10 digits>.wav      unit-discovery speakers
    english/train/voice/V00x_<10 digits>.wav     target voices (V001, V002)
    english/train/parallel/{source,voice}/*.wav  the optional parallel set (the recipe does not read it)
    english/test/S0xx_<10 digits>.wav            test speakers, unseen in train
    english/synthesis.txt                        `test/S002_0379088085 V002` lines: a test file, the voice to speak it
  optional, from the evaluation package (not in the corpus archive):
    bitrate_filelist.txt                         `S011_4019527684.txt 4.883875` lines: submission file, duration (s)
    by-context-across-speakers.item              ABXpy item file: header `#file onset offset #phone prev-phone
                                                 next-phone speaker`, one row per triphone token of the test files

Audio: 16 kHz mono 16-bit PCM, as the challenge distributes it ("all wavs are mono, 16 bit, 16 kHz",
https://zerospeech.com/challenge_archive/2019/instructions/); here short tones.
Sources of the names and line formats: the file lists of the ZeroSpeech 2020 software that validates the 2019 track
(github.com/zerospeech/zerospeech2020, zerospeech2020/share/2019/english/{required,bitrate}_filelist.txt: test files
S002_0006942614.txt ..., synthesised wavs named <voice>_<id>.wav, bitrate lines `<file>.txt <seconds>`); the item-file
header is ABXpy's (github.com/bootphon/ABXpy, also zerospeech-libriabx2's .item files).
"""
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
import soundfile

SAMPLE_RATE = 16000
UNIT_SPEAKERS = ("S015", "S020", "S021")
VOICES = ("V001", "V002")
TEST_SPEAKERS = ("S002", "S003")
ITEM_HEADER = "#file onset offset #phone prev-phone next-phone speaker"
ITEM_NAME = "by-context-across-speakers.item"


def tone(seconds: float, freq: float) -> np.ndarray:
    t = np.arange(int(SAMPLE_RATE * seconds)) / SAMPLE_RATE
    return (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def write_wav(path: Path, seconds: float, freq: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(str(path), tone(seconds, freq), SAMPLE_RATE, subtype="PCM_16")


def file_id(speaker: str, n: int) -> str:
    """`S002_0379088085`-style names: speaker, '_', 10 digits."""
    return f"{speaker}_{(n * 379088085 + 12345) % 10**10:010d}"


def item_rows(test_ids: List[str], seconds: float) -> List[str]:
    """Triphone items over each test file: phones of 0.1 s, alternating 'a'/'i' between 'b' contexts."""
    rows = []
    for k, utt in enumerate(test_ids):
        phones = ["b", "a" if k % 2 == 0 else "i", "b", "i" if k % 2 == 0 else "a", "b"]
        step = min(0.1, seconds / len(phones))
        for i in range(1, len(phones) - 1):
            rows.append(f"{utt} {(i - 1) * step:.4f} {(i + 2) * step:.4f} {phones[i]} {phones[i - 1]} "
                        f"{phones[i + 1]} {utt.split('_')[0]}")
    return rows


def make_zs2019(root, per_speaker: int = 2, seconds: float = 0.6, style: str = "2019",
                bitrate_filelist: bool = False, item_file: bool = False) -> Dict[str, object]:
    """Write the corpus under ROOT (style "2020": under ROOT/2019); returns what it wrote: the corpus dir (the one
    holding english/), {set: [ids]}, the synthesis lines and the optional files' paths (None when not written)."""
    if style not in ("2019", "2020"):
        raise ValueError(f"style must be '2019' or '2020', got {style!r}")
    corpus = Path(root) / "2019" if style == "2020" else Path(root)
    eng = corpus / "english"
    ids: Dict[str, List[str]] = {"unit": [], "voice": [], "test": []}
    n = 0
    for name, speakers, sub in (("unit", UNIT_SPEAKERS, "train/unit"), ("voice", VOICES, "train/voice"),
                                ("test", TEST_SPEAKERS, "test")):
        for s, spk in enumerate(speakers):
            for _ in range(per_speaker):
                n += 1
                utt = file_id(spk, n)
                write_wav(eng / sub / f"{utt}.wav", seconds, 150.0 + 40 * s + 5 * n)
                ids[name].append(utt)
    for utt in ids["unit"][:1]:  # the parallel set: a source utterance and its rendition by a target voice
        write_wav(eng / "train" / "parallel" / "source" / f"{utt}.wav", seconds, 200.0)
        write_wav(eng / "train" / "parallel" / "voice" / f"{VOICES[0]}_{utt.split('_')[1]}.wav", seconds, 210.0)
    synthesis = [f"test/{utt} {VOICES[i % len(VOICES)]}" for i, utt in enumerate(ids["test"])]
    (eng / "synthesis.txt").write_text("\n".join(synthesis) + "\n")
    bitrate: Optional[Path] = None
    if bitrate_filelist:  # the evaluation package's list: the first file of each test speaker
        bitrate = corpus / "bitrate_filelist.txt"
        chosen = ids["test"][::per_speaker]
        bitrate.write_text("".join(f"{utt}.txt {seconds:.6f}\n" for utt in chosen))
    item: Optional[Path] = None
    if item_file:
        item = corpus / ITEM_NAME
        item.write_text("\n".join([ITEM_HEADER] + item_rows(ids["test"], seconds)) + "\n")
    return {"corpus": corpus, "ids": ids, "synthesis": synthesis, "bitrate_filelist": bitrate, "item": item}
