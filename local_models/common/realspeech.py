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

Fish Fillets NG's dialogue (`fillets-ng-data` holds `script/<level>/dialogs_<lang>.lua`, `fillets-ng-data-<lang>`
the recordings `sound/<level>/<lang>/<id>.ogg`, both under usr/share/games/fillets-ng): each line of a dialogs file
pair is `dialogId("<id>", "<font>", "<English>")` then `dialogStr("<the line in lang>")`; the font is the character
who speaks (font_small / font_big: the two fish, each one actor per language; the others extras), so the speaker is
`fillets_<lang>_<font>`. Czech and Dutch are recorded (cs 1,782 clips / 101 min, nl 1,529 / 91 min).

    clips = fillets_clips(debian.unpacked(FILLETS_DATA), debian.unpacked(FILLETS_VOICES["cs"]), "cs")

python -m local_models.common.realspeech --help: the same from the command line.
"""
from __future__ import annotations

import argparse
import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

from .datadir import c_sort_key, write_data_dir
from .debian import Package, unpacked
from .dirops import build_and_swap, held_out_count

TUXPAINT = Package("tuxpaint-stamps-default", "2022.06.04-1",
                   "6db6c1bfc870a47f1499d6203b083522eacb57c5f9c87d468f2e92eb6d9d5f34")
STAMPS = "usr/share/tuxpaint/stamps"
FILLETS_DATA = Package("fillets-ng-data", "1.0.1-1.1",
                       "25de89afd8b1adf7bcace8290248a6a22c89cd42300317e69000e162c032cf84")
FILLETS_VOICES = {
    "cs": Package("fillets-ng-data-cs", "1.0.1-1.1", "3ecef99b9456f1c80c9625c6f2418642b52d58e7167a46bad7a412db17991b14"),
    "nl": Package("fillets-ng-data-nl", "1.0.1-1.1", "afb4443fda9ab507dee578b75be857d121718a1cd6017a474f30e0eb13dc9d10"),
}
FILLETS = "usr/share/games/fillets-ng"
SOURCES = ("tuxpaint", "fillets")


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


_LUA_STRING = r'"((?:[^"\\\n]|\\.)*)"'
_DIALOG = re.compile(r'dialogId\(\s*' + _LUA_STRING + r'\s*,\s*' + _LUA_STRING + r'\s*,\s*' + _LUA_STRING
                     + r'\s*\)\s*dialogStr\(\s*' + _LUA_STRING + r'\s*\)')


def _lua_unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": " ", "t": " "}.get(m.group(1), m.group(1)), text)


def fillets_dialogs(lua: Path) -> Dict[str, tuple]:
    """{dialog id: (font, text)} of a dialogs_<lang>.lua (text unescaped, whitespace squeezed). A dialogId with no
    dialogStr after it (the package has sound-effect ids such as `dialogId("laser", "", "")`) has no text."""
    try:
        src = lua.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise RealSpeechError(f"{lua}: not UTF-8 ({e.reason} at byte {e.start})") from None
    return {m.group(1): (m.group(2), " ".join(_lua_unescape(m.group(4)).split())) for m in _DIALOG.finditer(src)}


def fillets_clips(data_root, voices_root, lang: str) -> List[Clip]:
    """Every recorded line of LANG with its text: the scripts under the unpacked fillets-ng-data DATA_ROOT, the
    recordings under the unpacked fillets-ng-data-<lang> VOICES_ROOT. A recording without a line in its level's
    dialogs_<lang>.lua, or with an empty one, is left out; the same audio twice is kept once."""
    scripts, sounds = Path(data_root) / FILLETS / "script", Path(voices_root) / FILLETS / "sound"
    for d, pkg in ((scripts, FILLETS_DATA.name), (sounds, f"fillets-ng-data-{lang}")):
        if not d.is_dir():
            raise RealSpeechError(f"{d.parent.parent.parent.parent}: no {FILLETS}/{d.name}: not an unpacked {pkg}")
    clips, seen = [], set()
    for ogg in sorted(sounds.glob(f"*/{lang}/*.ogg"), key=lambda p: c_sort_key(str(p))):
        level = ogg.parent.parent.name
        lua = scripts / level / f"dialogs_{lang}.lua"
        font, text = fillets_dialogs(lua).get(ogg.stem, ("", "")) if lua.is_file() else ("", "")
        digest = hashlib.sha1(ogg.read_bytes()).hexdigest()
        if not text or digest in seen:
            continue
        seen.add(digest)
        who = font[len("font_"):] if font.startswith("font_") else font
        speaker = f"fillets_{lang}_{re.sub(r'[^A-Za-z0-9_]', '_', who)}"
        # Kaldi's rule: an utterance id starts with its speaker's (sorting keeps a speaker's utterances together)
        clips.append(Clip(f"{speaker}-" + re.sub(r"[^A-Za-z0-9_.-]", "_", f"{level}-{ogg.stem}"), ogg, text, speaker))
    if not clips:
        raise RealSpeechError(f"{sounds}: no '{lang}' recordings with a line in script/<level>/dialogs_{lang}.lua")
    return sorted(clips, key=lambda c: c_sort_key(c.utt))


def source_clips(source: str, lang: str, root: Optional[str] = None, voices_root: Optional[str] = None) -> List[Clip]:
    """The clips of SOURCE ('tuxpaint' or 'fillets') in LANG, from the given unpacked trees or the pinned packages."""
    if source == "tuxpaint":
        return tuxpaint_clips(root or unpacked(TUXPAINT), lang)
    if source == "fillets":
        if lang not in FILLETS_VOICES:
            raise RealSpeechError(f"fillets: no recordings in '{lang}' (recorded: {', '.join(FILLETS_VOICES)})")
        return fillets_clips(root or unpacked(FILLETS_DATA), voices_root or unpacked(FILLETS_VOICES[lang]), lang)
    raise RealSpeechError(f"unknown source '{source}' (one of {', '.join(SOURCES)})")


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


def describe(clips: Sequence[Clip]) -> str:
    """'N clips, M min (source R Hz, C channel(s)), S speaker(s)' from the source files' headers (a log line)."""
    import soundfile

    infos = [soundfile.info(str(c.path)) for c in clips]
    rates = "/".join(str(r) for r in sorted({i.samplerate for i in infos}))
    channels = "/".join(str(n) for n in sorted({i.channels for i in infos}))
    return (f"{len(clips)} clips, {sum(i.duration for i in infos) / 60:.1f} min (source {rates} Hz, {channels} "
            f"channel(s)), {len({c.speaker for c in clips})} speaker(s)")


def write_sets(sets: Mapping[str, Sequence[Clip]], out_root, prefix: str = "", sample_rate: int = 16000) -> List[Path]:
    """OUT_ROOT/<prefix><set>/ {wav.scp, text, utt2spk, spk2utt} for each set, swapped in whole (a rerun leaves no
    table of the last one)."""
    out_root = Path(out_root)

    def writer(clips: Sequence[Clip]):
        return lambda path: write_data_dir(path, {c.utt: wav_command(c.path, sample_rate) for c in clips},
                                           {c.utt: c.speaker for c in clips}, text={c.utt: c.text for c in clips})

    build_and_swap(out_root, {f"{prefix}{name}": writer(clips) for name, clips in sets.items()}, "realspeech")
    return [out_root / f"{prefix}{name}" for name in sets]


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m local_models.common.realspeech", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", choices=SOURCES, default="tuxpaint",
                   help="tuxpaint (stamp descriptions) or fillets (Fish Fillets NG's dialogue) (default: %(default)s)")
    p.add_argument("--lang", required=True,
                   help="the language code: tuxpaint es, ca, fr, ro, ru, bg, be, el, en; fillets cs, nl")
    p.add_argument("--dev", default="5%", help="held-out dev clips: a count or a share (default: %(default)s)")
    p.add_argument("--test", default="5%", help="held-out test clips (default: %(default)s)")
    p.add_argument("--prefix", default="", help="data dir name prefix (e.g. real_: data/real_train)")
    p.add_argument("--sample-rate", type=int, default=16000, help="wav.scp rate in Hz (default: %(default)s)")
    p.add_argument("--root", help="an unpacked package tree (default: fetch and unpack the pinned package; "
                                  "fillets: the fillets-ng-data tree)")
    p.add_argument("--voices-root", help="fillets: the unpacked fillets-ng-data-<lang> tree (default: fetch it)")
    p.add_argument("out", help="parent of the data dirs (e.g. data)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    a = get_parser().parse_args(argv)
    try:
        clips = source_clips(a.source, a.lang, a.root, a.voices_root)
        sets = {name: part for name, part in split(clips, a.dev, a.test).items() if part}  # --dev 0: no dev dir
        dirs = write_sets(sets, a.out, a.prefix, a.sample_rate)
    except (ValueError, RuntimeError) as e:
        print(f"realspeech: error: {e}", file=sys.stderr)
        return 1
    for d in dirs:
        print(f"{d}\t{sum(1 for _ in open(d / 'utt2spk', encoding='utf-8'))} clips")
    return 0


if __name__ == "__main__":
    sys.exit(main())
