"""A small queen.1c (Flight of the Amazon Queen's data file) built as compress_queen lays it out (QTBL table, bare MP3
speech entries) with dialogue, cutaway and object data laid out as the engine reads them (local_models/common/fotaq.py's
docstring); tones for speech. Shared by the tests of the reader and of the recipes that read it (not a test module)."""
import functools
import io
import struct

import numpy as np
import soundfile

from local_models.common import fotaq as fq


@functools.lru_cache(maxsize=None)  # lame is slow: encode each tone once
def mp3(seconds, freq=440.0, rate=11025):
    t = np.arange(int(rate * seconds)) / rate
    buf = io.BytesIO()
    soundfile.write(buf, 0.3 * np.sin(2 * np.pi * freq * t), rate, format="MP3")
    return buf.getvalue()


class Data:
    """A resource body (after its 20-byte header) with the engine's aligned length-prefixed strings."""

    def __init__(self):
        self.b = bytearray()

    def i16(self, *values):
        for v in values:
            self.b += struct.pack(">h", v)
        return self

    def string(self, text, align=2):
        self.b += bytes([len(text)]) + text.encode("latin-1")
        while len(text) and len(self.b) % align:
            self.b += b"\0"
        return self

    def at(self, offset):
        self.b += b"\0" * (offset - len(self.b))
        return self

    def resource(self):
        return b"AmBk" + b"\0" * 16 + bytes(self.b)


def dialogue():
    """AND1.DOG, talk key 2: Joe's lines from byte 128 (one dialogue level), the person's from 200."""
    d = Data().i16(1, 2, 2, 2, 2).i16(0, 0, 0, 0, 0, 0).i16(200, 0, 240).at(128)
    d.i16(0, 0).string("Hi*01Bye", 4).i16(0, 6).string("I want a boat.", 4).at(200)
    d.i16(0, 1).string("Go away*03Now!", 4).i16(0, 6).string("No boats.", 4).at(240)
    return d.string("Back again?").string("Yes, me.").resource()


CUT_SENTENCES = ("Look!", "Welcome*02to my palace", "*", "Goodbye")


def cutaway(talk_file="", talk_to=0, sentences=CUT_SENTENCES):
    """C1A.CUT: Joe, the princess (object 3), an animated crate (object 5: frames to skip), the princess again, each
    saying its one of SENTENCES; at its end it may open TALK_FILE with object TALK_TO."""
    d = Data().i16(0, 4, 0, 0, 0, 0)                       # sentence and bank offsets patched below
    d.i16(0, *[0] * 16).i16(0)                             # 1: Joe, nobody turned on
    d.i16(3, *[0] * 16).i16(1, 3)                          # 2: object 3, a person, turns on one person
    d.i16(5, 0, 0, 0, 1, 1, *[0] * 11).i16(0)              # 3: object 5, anim list and execute: frames follow
    d.i16(0, *[0] * 9).i16(-2)                             # one frame (a header, 9 fields), then the end
    d.i16(3, *[0] * 16).i16(0)                             # 4: object 3 again
    sentence_at = len(d.b)
    d.string("*FL")                                        # the entry string (Joe's facing)
    for sentence in sentences:
        d.string(sentence)
    banks = len(d.b)
    d.i16(0).string(talk_file).i16(talk_to)
    struct.pack_into(">hh", d.b, 8, sentence_at, banks)
    return d.resource()


def objects():
    """QUEEN.JAS (rooms, names, objects, descriptions; 16-byte objects: name first, image last) and QUEEN2.JAS."""
    jas = Data().i16(1, 2, 5, 1)
    for name, image in ((1, 0), (1, 0), (2, -3), (1, 0), (1, -1)):
        jas.i16(name, 0, 0, 0, 0, 1, 0, image)
    text = ["A fine crate*03"] + ["crate", "Princess Azura"] + ["Hotel"] + ["verb"] * 12 + ["Nope"] * 40
    return jas.resource(), ("\r\n".join(text) + "\r\n").encode("latin-1")


def build(path, speech=None, compression=1, cut=None, replace=None):
    """REPLACE: {entry name: its bytes, or None to leave it out} over the data entries."""
    jas, jas2 = objects()
    entries = {"AND1.DOG": dialogue(), "C1A.CUT": cut or cutaway(), "QUEEN.JAS": jas, "QUEEN2.JAS": jas2}
    for name, data in (replace or {}).items():
        entries.pop(name) if data is None else entries.__setitem__(name, data)
    entries.update(speech if speech is not None else {
        "020001P1.SB": mp3(0.5), "020001P2.SB": mp3(0.3, 330), "020006J1.SB": mp3(0.4, 550),
        "02SSSSJ2.SB": mp3(0.2), "02XXXXJ1.SB": mp3(0.2), "JOE00011.SB": mp3(0.3), "JOE00411.SB": mp3(0.3),
        "C1A__011.SB": mp3(0.3), "C1A__022.SB": mp3(0.3), "C1A__041.SB": mp3(0.3),
        "10SSSSSS.SB": mp3(0.2, 880), "MIK_0019.SB": mp3(0.2)})     # a sound effect; a sound never played
    names = sorted(entries)
    table_end = fq.HEADER.size + fq.ENTRY.size * len(names)
    head = fq.HEADER.pack(b"QTBL", b"CEM10\0", 0, 0, compression, len(names))
    table, body = b"", b""
    for name in names:
        table += fq.ENTRY.pack(name.encode(), 1, table_end + len(body), len(entries[name]))
        body += entries[name]
    path.write_bytes(head + table + body)
    return path
