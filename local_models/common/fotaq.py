"""Flight of the Amazon Queen's recorded dialogue (Debian `flight-of-the-amazon-queen`, fetched at data preparation by
common/debian.py): English speech of many characters, 11.025 kHz mono MP3, with the line each clip says.

The package ships one container, ScummVM's rebuilt data file `queen.1c` (compress_queen in scummvm-tools; read by
engines/queen/resource.cpp). All numbers are big-endian:

    "QTBL"  version string (6 bytes, "CEM10\\0": CD, English)  floppy (1)  demo (1)  compression (1: 0 none,
    1 MP3, 2 Ogg, 3 FLAC)  entry count (uint16), then per entry: name (12 bytes, NUL-padded)  bundle (1)
    offset (uint32, from the file's start)  size (uint32)

A `.SB` entry is a sound; in a compressed container it is the bare MP3 (or Ogg / FLAC) stream, no header. The engine
names the sounds it plays, and the name says who speaks (engines/queen/talk.cpp, cutaway.cpp, logic.cpp):

    KK hhhh P|J s   a conversation line: KK the talk key of a dialogue file <NAME><n>.DOG (its header's third
                    int16), hhhh the line's id in hex (SSSS: Joe's opening line, XXXX: the line when talked to
                    again), P: the person the file talks to, J: Joe; s the sentence's segment (1-based hex;
                    the engine cuts a sentence at its `*NN` commands and voices each piece as one file)
    JOE nnnn s      Joe's remarks: nnnn <= 40 a stock response, else the description of object nnnn - 40
    CCCCC nn s      a cutaway scene <CCCCC>.CUT (name padded to 5 with `_`), nn its object record; the record's
                    object number gives the speaker: 0 or -1 Joe, -2 / -3 a voiced caption (speaker `caption`: not
                    recorded), else the object's name in QUEEN.JAS / QUEEN2.JAS

Speakers are characters, not actors (the cast list is not in the data). A cutaway's person is named by its object
("Princess Azura" -> princess_azura); a dialogue file's person by the object a cutaway opens that file with
(PRIN1.DOG -> "azura obj"), else by the file's stem (ZOMBIE2.DOG -> zombie); SAME_CHARACTER joins the labels one
character gets twice (LOU*.DOG is Skip: "I'm Skip, jungle explorer"). The engine swaps objects at run time
(objectCopy), so a few cutaway labels are the name of the object a person stands in for (`note`, `path`, `smoke`,
`telephone`). Sound effects (`<n>SSSSSS`, `ROCKPAKS`) and the sounds no rule above names (BLANK000, MIK_*, TOM_*,
DEBBIE_0, GM011___, UNTITLE*: 20 entries the game never plays) are not speech clips. A clip's text is its segment
of the sentence the game shows as a subtitle (read from the same .DOG / .CUT / .JAS data).

The package (1.0.0-9): 6,588 speech clips, 272 min, 52 speakers (Joe 101 min; 15 others over 5 min), all 11,025 Hz;
every clip decodes; extracting all to wav takes about 20 s on 2 cores.

    root = debian.unpacked(FOTAQ)
    clips = fotaq_clips(root)                       # [Clip(utt, name, kind, speaker, text, offset, size)], by utt
    wave, rate = read_clip(container(root), clips[0])

python -m local_models.common.fotaq --help: list the clips, or extract them to wav files.
"""
from __future__ import annotations

import argparse
import collections
import io
import re
import struct
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import soundfile

from .audio import resample
from .datadir import atomic_open, c_sort_key
from .debian import Package, unpacked

FOTAQ = Package("flight-of-the-amazon-queen", "1.0.0-9",
                "40c08fd258d6fe95c46c1eaf5e9137f84ba330657995a281bd887c94a560a0f1")
CONTAINER = "usr/share/scummvm/flight-of-the-amazon-queen/queen.1c"
SAMPLE_RATE = 11025
COMPRESSION = {0: "none", 1: "mp3", 2: "ogg", 3: "flac"}
HEADER = struct.Struct(">4s6sBBBH")
ENTRY = struct.Struct(">12sBII")
DATA_HEADER = 20          # the .DOG / .CUT / .JAS resources start with a 20-byte header the engine skips
JOE_RESPONSE_MAX = 40     # JOE<n>: n <= 40 a stock response, else object description n - 40
KINDS = ("talk", "joe", "cutaway")


class FotaqError(ValueError):
    """A container or game resource that is not what the reader expects (names the file and entry)."""


@dataclass(frozen=True)
class Entry:
    name: str
    offset: int
    size: int


@dataclass(frozen=True)
class Table:
    path: Path
    version: str
    compression: str
    entries: Dict[str, Entry]


@dataclass(frozen=True)
class Clip:
    utt: str
    name: str       # the container entry, e.g. 020006J1.SB
    kind: str       # talk, joe or cutaway
    speaker: str
    text: str
    offset: int
    size: int


def read_table(path) -> Table:
    """The resource table of a rebuilt queen.1c; a wrong magic, a cut table or an entry past the end is an error."""
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(HEADER.size)
        if len(head) < HEADER.size:
            raise FotaqError(f"{path}: {size} bytes, too short for a queen.1c header")
        magic, version, _floppy, _demo, comp, count = HEADER.unpack(head)
        if magic != b"QTBL":
            raise FotaqError(f"{path}: magic {magic!r}, expected b'QTBL' (a rebuilt FOTAQ data file, queen.1c)")
        if comp not in COMPRESSION:
            raise FotaqError(f"{path}: unknown compression byte {comp}")
        raw = f.read(count * ENTRY.size)
    if len(raw) < count * ENTRY.size:
        raise FotaqError(f"{path}: the table of {count} entries is cut off at byte {HEADER.size + len(raw)}")
    entries = {}
    for i in range(count):
        name_b, _bundle, offset, length = ENTRY.unpack_from(raw, i * ENTRY.size)
        name = name_b.split(b"\0", 1)[0].decode("ascii", "replace")
        if offset + length > size:
            raise FotaqError(f"{path}: entry {i} ({name}) ends at byte {offset + length}, past the file's {size}")
        entries[name] = Entry(name, offset, length)
    return Table(path, version.split(b"\0", 1)[0].decode("ascii", "replace"), COMPRESSION[comp], entries)


def container(root) -> Path:
    """queen.1c under an unpacked package ROOT."""
    path = Path(root) / CONTAINER
    if not path.is_file():
        raise FotaqError(f"{root}: no {CONTAINER}: not an unpacked {FOTAQ.name}")
    return path


class _Reader:
    """Big-endian fields and the engine's length-prefixed strings of one resource (offsets after its header)."""

    def __init__(self, data: bytes, where: str):
        self.data, self.where = data, where

    def i16(self, offset: int) -> int:
        if offset + 2 > len(self.data):
            raise FotaqError(f"{self.where}: read past its end at byte {offset}")
        return struct.unpack_from(">h", self.data, offset)[0]

    def string(self, offset: int, align: int = 2) -> Tuple[str, int]:
        """(text, offset after it): a length byte, the bytes, then padding to ALIGN (as Talk::getString)."""
        if offset >= len(self.data):
            raise FotaqError(f"{self.where}: string past its end at byte {offset}")
        n = self.data[offset]
        text = self.data[offset + 1: offset + 1 + n].decode("latin-1")
        return text, ((offset + 1 + n + align - 1) & ~(align - 1)) if n else offset + 1


_COMMAND = re.compile(r"\*(?:XY\d\d\(\s*\d+,\s*\d+\)|..)")


def segments(sentence: str) -> List[str]:
    """A sentence cut where the engine cuts it into separately voiced segments: at each `*` command (`*03`, `*FL`,
    `*XY00(237,112)`); segment s of the sentence is voice file ...s."""
    parts = _COMMAND.split(sentence)
    if parts and parts[-1] == "":
        parts.pop()
    return [" ".join(p.split()) for p in parts]


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "unnamed"


def _stem(dialogue_file: str) -> str:
    """The character part of a dialogue file's name: ZOMBIE1.DOG -> ZOMBIE."""
    return re.sub(r"\d+$", "", dialogue_file.upper().rsplit(".", 1)[0])


# One label per character where the data gives two: dialogue files no cutaway links to a person, named after the
# name the person gives in its own lines ("I'm Skip", "Howdy Joe, I'm Mary-Lou Cook", ...), and object aliases.
SAME_CHARACTER = {"lou": "skip", "tam": "mary_lou", "jim": "jimmy", "wedge": "wedgewood", "laris": "bellboy",
                  "showeram": "showering_amazon", "azura_obj": "princess_azura", "joe_king": "joe"}


class _Game:
    """The game data that names speakers and sentences: dialogue files, cutaways and the object tables."""

    def __init__(self, table: Table, data: bytes):
        self.table, self._data = table, data
        self.dialogues = self._dialogue_files()
        self._objects, self._strings, self._counts = self._jas()
        self._cuts: Dict[str, Dict[int, Tuple[int, str]]] = {}
        self.talks_to = self._cut_links()

    def resource(self, name: str) -> _Reader:
        e = self.table.entries.get(name)
        if e is None:
            raise FotaqError(f"{self.table.path}: no entry {name}")
        return _Reader(self._data[e.offset + DATA_HEADER: e.offset + e.size], f"{self.table.path}:{name}")

    def _dialogue_files(self) -> Dict[int, str]:
        keys = {}
        for name in sorted(n for n in self.table.entries if n.endswith(".DOG")):
            keys.setdefault(self.resource(name).i16(4), name)  # header: levels, unique key, talk key
        return keys

    def _cut_links(self) -> Dict[str, str]:
        """{dialogue file stem: the name of the person a cutaway starts it with} (a cutaway may end by opening a
        dialogue file with a person object: its bank names, then the file name and the object number)."""
        links: Dict[str, str] = {}
        for name in sorted(n for n in self.table.entries if n.endswith(".CUT")):
            r = self.resource(name)
            offset = r.i16(10) & 0xFFFF
            count, offset = r.i16(offset), offset + 2
            for _ in range(count):
                offset = r.string(offset)[1]
            talk_file, offset = r.string(offset)
            if talk_file.upper().endswith(".DOG") and r.i16(offset) > 0:
                links.setdefault(_stem(talk_file), _slug(self.object_name(r.i16(offset))))
        return links

    def _jas(self):
        jas = self.resource("QUEEN.JAS")
        n_rooms, n_names, n_objects, n_desc = (jas.i16(2 * i) for i in range(4))
        objects = [(jas.i16(8 + 16 * i), jas.i16(8 + 16 * i + 14)) for i in range(n_objects)]  # (name, image)
        e = self.table.entries.get("QUEEN2.JAS")
        if e is None:
            raise FotaqError(f"{self.table.path}: no entry QUEEN2.JAS")
        strings = [s.rstrip("\r") for s in self._data[e.offset: e.offset + e.size].decode("latin-1").split("\n")]
        return objects, strings, (n_rooms, n_names, n_desc)

    def object_name(self, number: int) -> str:
        n_rooms, n_names, n_desc = self._counts
        name = abs(self._objects[number - 1][0]) if 1 <= number <= len(self._objects) else 0
        if not 1 <= name <= n_names:
            raise FotaqError(f"{self.table.path}:QUEEN.JAS: object {number} has no name")
        return self._string(n_desc + name - 1, f"object {number}'s name")

    def joe_sentence(self, number: int) -> str:
        n_rooms, n_names, n_desc = self._counts
        if number <= JOE_RESPONSE_MAX:
            return self._string(n_desc + n_names + n_rooms + 12 + number - 1, f"Joe's response {number}")
        return self._string(number - JOE_RESPONSE_MAX - 1, f"Joe's description {number}")

    def _string(self, index: int, what: str) -> str:
        if not 0 <= index < len(self._strings):
            raise FotaqError(f"{self.table.path}:QUEEN2.JAS: no line {index + 1} for {what}")
        return self._strings[index]

    def talk_sentence(self, key: int, head: str, who: str) -> str:
        """Line HEAD ('SSSS', 'XXXX' or a hex id) of the dialogue file with talk key KEY, said by WHO (P or J)."""
        dog = self.resource(self.dialogues[key])
        levels = abs(dog.i16(0))
        j_max, p_max = dog.i16(6), dog.i16(8)
        person1, person2 = dog.i16(22) & 0xFFFF, dog.i16(26) & 0xFFFF  # after 6 game-state fields
        joe = 32 + levels * 96
        if head == "SSSS":
            return "" if dog.i16(joe + 2) else dog.string(joe + 4)[0]
        if head == "XXXX":
            text, nxt = dog.string(person2)
            return text if who == "P" else dog.string(nxt)[0]
        offset, count, want = (person1, p_max, int(head, 16)) if who == "P" else (joe, j_max, int(head, 16))
        for _ in range(count):
            line_id = dog.i16(offset + 2)
            text, offset = dog.string(offset + 4, align=4)
            if line_id == want:
                return text
        return ""

    def cut_records(self, cut: str) -> Dict[int, Tuple[int, str]]:
        """{record index (1-based): (object number, sentence)} of cutaway CUT, read as Cutaway::run reads it."""
        if cut not in self._cuts:
            self._cuts[cut] = self._read_cut(cut)
        return self._cuts[cut]

    def _is_person(self, number: int) -> bool:
        return 1 <= number <= len(self._objects) and self._objects[number - 1][1] in (-3, -4)

    def _read_cut(self, cut: str) -> Dict[int, Tuple[int, str]]:
        r = self.resource(f"{cut}.CUT")
        count, sentence_at = abs(r.i16(2)), r.i16(8) & 0xFFFF
        _, sentence_at = r.string(sentence_at)  # the entry string (Joe's facing)
        pos, records = 12, {}
        for index in range(1, count + 1):
            obj = [r.i16(pos + 2 * k) for k in range(17)]  # object, moveTo x y, bank, animList, execute, ...
            pos += 34
            pos += 2 + 2 * r.i16(pos)                    # the people turned on
            sentence, sentence_at = r.string(sentence_at)
            number = 0 if obj[0] == -1 else obj[0]     # a room fade is Joe
            records[index] = (number, sentence)
            if self._has_animation(number, obj[4], obj[5], obj[12]):
                while r.i16(pos) != -2:                 # frames: a header then 9 fields (talkie), -2 ends
                    if r.i16(pos) > 1000:
                        raise FotaqError(f"{r.where}: record {index}: animation header {r.i16(pos)} > 1000")
                    pos += 20
                pos += 2
        return records

    def _has_animation(self, number: int, anim_list: int, execute: int, from_object: int) -> bool:
        """Whether an object record is followed by animation frames (Cutaway::getObjectType)."""
        if from_object > 0 or number in (-2, -3, -4) or not execute:
            return False
        return bool(anim_list) or not (number == 0 or self._is_person(number))


_TALK = re.compile(r"^(\d\d)([0-9A-F]{4}|SSSS|XXXX)([PJ])([0-9A-F])\.SB$")
_JOE = re.compile(r"^JOE(\d{4})([0-9A-F])\.SB$")
_CUT = re.compile(r"^([A-Z0-9_]{5})(\d\d)([0-9A-F])\.SB$")


def _clip(game: _Game, entry: Entry) -> Optional[Clip]:
    """ENTRY as a speech clip (speaker and text from the game data), or None when it is not speech."""
    name = entry.name
    m = _TALK.match(name)
    if m and int(m.group(1)) in game.dialogues:
        key, head, who, seg = int(m.group(1)), m.group(2), m.group(3), int(m.group(4), 16)
        stem = _stem(game.dialogues[key])
        speaker = "joe" if who == "J" else game.talks_to.get(stem, _slug(stem))
        kind, sentence = "talk", game.talk_sentence(key, head, who)
    elif (m := _JOE.match(name)):
        seg = int(m.group(2), 16)
        speaker, kind, sentence = "joe", "joe", game.joe_sentence(int(m.group(1)))
    elif (m := _CUT.match(name)) and f"{m.group(1).rstrip('_')}.CUT" in game.table.entries:
        cut = m.group(1).rstrip("_")
        records = game.cut_records(cut)
        index, seg = int(m.group(2)), int(m.group(3), 16)
        if index not in records:
            raise FotaqError(f"{game.table.path}:{name}: {cut}.CUT has no record {index}")
        number, sentence = records[index]
        kind = "cutaway"
        if number in (-2, -3):  # a caption voiced whole (voice file ...1); the data does not say by whom
            speaker, sentence = "caption", " ".join(segments(sentence))
        else:
            speaker = "joe" if number == 0 else _slug(game.object_name(number))
    else:
        return None
    parts = segments(sentence)
    text = parts[seg - 1] if 0 < seg <= len(parts) else ""
    speaker = f"fotaq_{SAME_CHARACTER.get(speaker, speaker)}"
    return Clip(f"{speaker}-{name[:-3]}", name, kind, speaker, text, entry.offset, entry.size)


def fotaq_clips(root=None, path=None) -> List[Clip]:
    """Every speech clip in queen.1c (PATH, or under the unpacked package ROOT, or the pinned package fetched),
    C-sorted by utterance id. Sound effects and sounds the game never plays are left out."""
    path = Path(path) if path else container(root or unpacked(FOTAQ))
    table = read_table(path)
    if table.compression == "none":
        raise FotaqError(f"{path}: uncompressed (.SB with headers); this reader takes the MP3 container of {FOTAQ.pin}")
    game = _Game(table, path.read_bytes())
    clips = [c for c in (_clip(game, e) for e in table.entries.values() if e.name.endswith(".SB")) if c]
    if not clips:
        raise FotaqError(f"{path}: no speech entries (.SB named as the engine names speech)")
    return sorted(clips, key=lambda c: c_sort_key(c.utt))


def read_clip(path, clip: Clip) -> Tuple[np.ndarray, int]:
    """CLIP's audio from the container PATH, decoded (libsndfile reads MP3): (mono float32, rate)."""
    with open(path, "rb") as f:
        f.seek(clip.offset)
        data = f.read(clip.size)
    if len(data) != clip.size:
        raise FotaqError(f"{path}:{clip.name}: {len(data)} of {clip.size} bytes (a cut container)")
    try:
        wave, rate = soundfile.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except (RuntimeError, soundfile.LibsndfileError) as e:
        raise FotaqError(f"{path}:{clip.name}: cannot decode ({e})") from None
    if len(wave) == 0:
        raise FotaqError(f"{path}:{clip.name}: decodes to no samples")
    return wave.mean(axis=1), int(rate)


def extract(path, clips: Sequence[Clip], out_dir, sample_rate: Optional[int] = None) -> Dict[str, float]:
    """Each clip as OUT_DIR/<utt>.wav (16-bit PCM at SAMPLE_RATE, default the recorded rate; written beside, then
    renamed), and OUT_DIR/clips.tsv (utt, speaker, kind, entry, seconds, text). Returns {utt: seconds}."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    seconds = {}
    for clip in clips:
        wave, rate = read_clip(path, clip)
        if sample_rate and sample_rate != rate:
            wave, rate = resample(wave, rate, sample_rate), sample_rate
        with atomic_open(out / f"{clip.utt}.wav", "wb") as f:
            soundfile.write(f, wave, rate, subtype="PCM_16", format="WAV")
        seconds[clip.utt] = len(wave) / rate
    rows = [f"{c.utt}\t{c.speaker}\t{c.kind}\t{c.name}\t{seconds[c.utt]:.3f}\t{c.text}\n" for c in clips]
    with atomic_open(out / "clips.tsv") as f:
        f.write("utt\tspeaker\tkind\tentry\tseconds\ttext\n" + "".join(rows))
    return seconds


def durations(path, clips: Sequence[Clip]) -> Dict[str, float]:
    """{utt: seconds}, each clip decoded."""
    seconds = {}
    for c in clips:
        wave, rate = read_clip(path, c)
        seconds[c.utt] = len(wave) / rate
    return seconds


def summary(clips: Sequence[Clip], seconds: Optional[Dict[str, float]] = None, top: int = 10) -> str:
    """Clips, speakers, kinds (and minutes when SECONDS is given): the lines `list` prints."""
    by_spk = collections.Counter(c.speaker for c in clips)
    kinds = collections.Counter(c.kind for c in clips)
    lines = [f"clips {len(clips)}  speakers {len(by_spk)}  "
             + "  ".join(f"{k} {kinds[k]}" for k in KINDS if kinds[k])]
    if seconds is None:
        lines += [f"{spk}\t{n} clips" for spk, n in by_spk.most_common(top)]
        return "\n".join(lines)
    minutes = collections.Counter()
    for c in clips:
        minutes[c.speaker] += seconds[c.utt] / 60
    lines[0] += f"  minutes {sum(minutes.values()):.1f}"
    lines += [f"{spk}\t{by_spk[spk]} clips\t{m:.1f} min" for spk, m in minutes.most_common(top)]
    return "\n".join(lines)


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m local_models.common.fotaq", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", help="an unpacked package tree (default: fetch and unpack the pinned package)")
    p.add_argument("--container", help="a queen.1c file (instead of --root)")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="print clip, speaker and kind counts (minutes with --durations)")
    ls.add_argument("--durations", action="store_true", help="decode every clip to measure minutes per speaker")
    ls.add_argument("--top", type=int, default=10, help="speakers to print (default: %(default)s)")
    ls.add_argument("--clips", action="store_true", help="also print each clip: utt, speaker, kind, text")
    ex = sub.add_parser("extract", help="write the clips as wav files and clips.tsv")
    ex.add_argument("--out", required=True, help="output directory")
    ex.add_argument("--max-clips", type=int, default=0, help="the first N clips in utt order (default: all)")
    ex.add_argument("--sample-rate", type=int, help="resample to this rate in Hz (default: as recorded, 11025)")
    ex.add_argument("--speaker", action="append", default=[],
                    help="only this speaker (repeatable; e.g. fotaq_joe)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    a = get_parser().parse_args(argv)
    try:
        path = Path(a.container) if a.container else container(a.root or unpacked(FOTAQ))
        clips = fotaq_clips(path=path)
        start = time.time()
        if a.command == "list":
            if a.clips:
                for c in clips:
                    print(f"{c.utt}\t{c.speaker}\t{c.kind}\t{c.text}")
            print(summary(clips, durations(path, clips) if a.durations else None, a.top))
        else:
            chosen = [c for c in clips if not a.speaker or c.speaker in a.speaker]
            chosen = chosen[: a.max_clips] if a.max_clips > 0 else chosen
            if not chosen:
                raise FotaqError(f"no clips of speaker(s) {', '.join(a.speaker)}")
            seconds = extract(path, chosen, a.out, a.sample_rate)
            print(summary(chosen, seconds, top=10))
            print(f"wrote {len(chosen)} wav files to {a.out} in {time.time() - start:.1f} s")
    except (ValueError, RuntimeError, OSError) as e:
        print(f"fotaq: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
