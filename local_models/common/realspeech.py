"""Recorded human speech with its text, from Debian packages (fetched at data preparation by common/debian.py):
the real-speech mini corpora the recipes train and score on beside their espeak-ng ones.

Tux Paint's stamps (`tuxpaint-stamps-default`): each stamp `<stem>.png` has `<stem>.txt` (line 1: the English
description; then `<lang>.utf8=<text>` lines) and the description read aloud per language, `<stem>_desc_<lang>.ogg`
(English: `<stem>_desc.ogg`), 44.1 kHz stereo Ogg Vorbis; `<stem>.ogg` is the stamp's sound effect, not speech. The
package credits one reader per language: every clip of a language is one speaker, so a language and its speaker
cannot be told apart (say so where it matters: LID).

    root = debian.unpacked(TUXPAINT)
    clips = tuxpaint_clips(root, "es")                   # [Clip(utt, path, text, speaker)], C-sorted by utt
    sets = split(clips, dev="5%", test="5%")             # {"train": [...], "dev": [...], "test": [...]}
    write_sets(sets, "data", prefix="real_", sample_rate=22050)   # data/real_{train,dev,test}/

python -m local_models.common.realspeech --help: the same from the command line.
"""
from __future__ import annotations

import argparse
import hashlib
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

from .datadir import c_sort_key, write_data_dir
from .debian import Package, unpacked
from .dirops import check_built_dirs, held_out_count, replace_dirs

TUXPAINT = Package("tuxpaint-stamps-default", "2022.06.04-1",
                   "6db6c1bfc870a47f1499d6203b083522eacb57c5f9c87d468f2e92eb6d9d5f34")
STAMPS = "usr/share/tuxpaint/stamps"


class RealSpeechError(ValueError):
    """A package tree that is not what the reader expects (names the file)."""


@dataclass(frozen=True)
class Clip:
    utt: str
    path: Path
    text: str
    speaker: str


def _stamp_texts(txt: Path) -> Dict[str, str]:
    """{lang: text} of a stamp's .txt ('en': its first line); a line that is neither is an error naming it."""
    try:
        lines = txt.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise RealSpeechError(f"{txt}: not UTF-8 ({e.reason} at byte {e.start})") from None
    texts = {}
    for n, line in enumerate(lines, 1):
        if n == 1 and ".utf8=" not in line:
            texts["en"] = line
            continue
        lang, sep, text = line.partition(".utf8=")
        if not sep:
            if line.strip():
                raise RealSpeechError(f"{txt}:{n}: expected `<lang>.utf8=<text>`")
            continue
        texts[lang] = text
    return {k: " ".join(v.replace("|", " ").split()) for k, v in texts.items()}


def _utt_id(rel: Path, lang: str) -> str:
    """tuxpaint_<lang>_<category path>-<stem>, in the characters a Kaldi id may hold."""
    return f"tuxpaint_{lang}_" + re.sub(r"[^A-Za-z0-9_.-]", "_", "-".join(rel.parts))


def tuxpaint_clips(root, lang: str) -> List[Clip]:
    """Every stamp description of LANG read aloud, with its text, under the unpacked package ROOT. A clip whose
    text is missing or empty is left out; the same audio under two stamps is kept once (the first in C order)."""
    stamps = Path(root) / STAMPS
    if not stamps.is_dir():
        raise RealSpeechError(f"{root}: no {STAMPS}: not an unpacked {TUXPAINT.name}")
    suffix = "_desc.ogg" if lang == "en" else f"_desc_{lang}.ogg"
    clips, seen = [], set()
    for ogg in sorted(stamps.rglob(f"*{suffix}"), key=lambda p: c_sort_key(str(p))):
        stem = ogg.name[: -len(suffix)]
        txt = ogg.with_name(f"{stem}.txt")
        text = _stamp_texts(txt).get(lang, "") if txt.is_file() else ""
        digest = hashlib.sha1(ogg.read_bytes()).hexdigest()
        if not text or digest in seen:
            continue
        seen.add(digest)
        clips.append(Clip(_utt_id(ogg.relative_to(stamps).with_name(stem), lang), ogg, text, f"tuxpaint_{lang}"))
    if not clips:
        raise RealSpeechError(f"{stamps}: no '{lang}' description clips with text (*{suffix} beside <stem>.txt)")
    return sorted(clips, key=lambda c: c_sort_key(c.utt))


def split(clips: Sequence[Clip], dev="5%", test="5%") -> Dict[str, List[Clip]]:
    """Held-out sets by a hash of each utterance id (stable when clips are added or removed): the first TEST in
    hash order are test, the next DEV dev, the rest train."""
    order = sorted(clips, key=lambda c: hashlib.sha1(c.utt.encode()).hexdigest())
    n_test, n_dev = held_out_count(test, len(order)), held_out_count(dev, len(order))
    if n_test + n_dev >= len(order):
        raise ValueError(f"dev {dev} + test {test} leave no training clips out of {len(order)}")
    parts = {"test": order[:n_test], "dev": order[n_test:n_test + n_dev], "train": order[n_test + n_dev:]}
    return {k: sorted(v, key=lambda c: c_sort_key(c.utt)) for k, v in parts.items()}


def wav_command(path: Path, sample_rate: int) -> str:
    """A wav.scp pipe: mono 16-bit at SAMPLE_RATE (sox reads Ogg Vorbis)."""
    return f"sox {path} -t wav -r {sample_rate} -c 1 -b 16 - |"


def write_sets(sets: Mapping[str, Sequence[Clip]], out_root, prefix: str = "", sample_rate: int = 16000) -> List[Path]:
    """OUT_ROOT/<prefix><set>/ {wav.scp, text, utt2spk, spk2utt} for each set, swapped in whole (a rerun leaves no
    table of the last one)."""
    out_root = Path(out_root)
    out_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_root, prefix=".realspeech.") as tmp:
        built = {}
        for name, clips in sets.items():
            d = Path(tmp) / f"{prefix}{name}"
            write_data_dir(d, {c.utt: wav_command(c.path, sample_rate) for c in clips},
                           {c.utt: c.speaker for c in clips}, text={c.utt: c.text for c in clips})
            built[f"{prefix}{name}"] = d
        check_built_dirs(built)
        replace_dirs(built, out_root)
    return [out_root / name for name in built]


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m local_models.common.realspeech", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lang", required=True, help="the reader's language code in Tux Paint (es, ca, fr, ro, ...; en)")
    p.add_argument("--dev", default="5%", help="held-out dev clips: a count or a share (default: %(default)s)")
    p.add_argument("--test", default="5%", help="held-out test clips (default: %(default)s)")
    p.add_argument("--prefix", default="", help="data dir name prefix (e.g. real_: data/real_train)")
    p.add_argument("--sample-rate", type=int, default=16000, help="wav.scp rate in Hz (default: %(default)s)")
    p.add_argument("--root", help="an unpacked package tree (default: fetch and unpack the pinned package)")
    p.add_argument("out", help="parent of the data dirs (e.g. data)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    a = get_parser().parse_args(argv)
    try:
        clips = tuxpaint_clips(a.root or unpacked(TUXPAINT), a.lang)
        dirs = write_sets(split(clips, a.dev, a.test), a.out, a.prefix, a.sample_rate)
    except (ValueError, RuntimeError) as e:
        print(f"realspeech: error: {e}", file=sys.stderr)
        return 1
    for d in dirs:
        print(f"{d}\t{sum(1 for _ in open(d / 'utt2spk', encoding='utf-8'))} clips")
    return 0


if __name__ == "__main__":
    sys.exit(main())
