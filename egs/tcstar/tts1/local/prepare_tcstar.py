#!/usr/bin/env python3
"""Kaldi data dirs from a TC-STAR-style corpus: one directory per speaker (TC-STAR numbers them: 72/, 73/, ...;
the mini corpus names them M1/, F1/) holding wav files and, with the same file stem anywhere below it, a .txt
transcript (one line; UTF-8, or Latin-1 / cp1252 when it is not UTF-8 and decodes cleanly as that, logged) and
optionally a .lab label file (HTS full-context labels with start / end times in 100 ns, as this recipe's front
end writes them; a label file of another format is refused, naming it).

--speaker-map "72:M1 73:F1" names corpus speaker directories as the recipe calls them (the paper's M1 / F1):
data dirs, utterance ids and exp/ then use the name. --speakers "M1 F1" chooses speakers by that name.

Writes OUT/<spk>_{train,valid,test}/ with wav.scp, text, utt2spk, spk2utt, utt2dur and lab.scp (utterances
with a .lab). Utterance ids are <spk>_<stem> (the stem alone when it already starts with <spk>_). Splits
follow sorted ids: the last --test-share of each speaker's audio is test, the --valid-share before it valid
(the paper: about 100 / 15 / 15 minutes). Every speaker is read and checked before any data dir is written.
"""
import argparse
import re
import sys
import unicodedata
from pathlib import Path

import soundfile

from local_models.common.datadir import write_data_dir
from local_models.salad.frontend.labfile import check_format
from local_models.salad.systems import parse_speaker_map

# a whole multi-byte UTF-8 character (2 or 3 bytes); Latin-1 Spanish text almost never holds one
UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf](?![\x80-\xbf])|[\xe0-\xef][\x80-\xbf]{2}(?![\x80-\xbf])")


def get_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--speakers", default="", help='space-separated speakers to use, by the names of --speaker-map '
                   '(e.g. "M1 F1"; default: every speaker directory)')
    p.add_argument("--speaker-map", default="", help='corpus speaker directory -> name, e.g. "72:M1 73:F1" '
                   "(directories not in the map keep their own name)")
    p.add_argument("--valid-share", type=float, default=0.115)
    p.add_argument("--test-share", type=float, default=0.115)
    p.add_argument("db", help="corpus root: <db>/<speaker>/...")
    p.add_argument("out", help="where the data dirs go (data)")
    return p


def by_stem(root: Path, ext: str) -> dict:
    files = {}
    for f in sorted(root.rglob(f"*{ext}")):
        if f.stem in files:
            raise ValueError(f"{f}: a second {ext} file with stem '{f.stem}' (first: {files[f.stem]})")
        files[f.stem] = f
    return files


def line_of(raw: bytes, offset: int) -> int:
    return raw.count(b"\n", 0, offset) + 1


def decode_text(path: Path, raw: bytes):
    """(text, encoding): UTF-8, else cp1252 (a superset of Latin-1's printable characters) when the bytes hold no
    UTF-8 sequence and decode as cp1252 without control characters; ValueError naming file and line otherwise."""
    try:
        text, encoding = raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as e:
        if UTF8_SEQUENCE.search(raw):  # UTF-8 characters beside a stray byte: mixed encodings, not Latin-1
            raise ValueError(f"{path}:{line_of(raw, e.start)}: invalid UTF-8 (byte 0x{raw[e.start]:02x}) in a file "
                             f"that also holds UTF-8 characters: mixed encodings; save it as UTF-8") from None
        try:
            text, encoding = raw.decode("cp1252"), "cp1252"
        except UnicodeDecodeError as e2:
            raise ValueError(f"{path}:{line_of(raw, e2.start)}: neither UTF-8 nor Latin-1 / cp1252 text "
                             f"(byte 0x{raw[e2.start]:02x})") from None
    for lineno, line in enumerate(text.lstrip("\ufeff").splitlines(), 1):
        bad = [c for c in line if unicodedata.category(c) == "Cc" and c != "\t"]
        if bad:
            raise ValueError(f"{path}:{lineno}: control character U+{ord(bad[0]):04X} read as {encoding}: "
                             f"not a text transcript")
    return text.lstrip("\ufeff"), encoding


def read_transcript(path: Path):
    """(the one transcript line, its encoding)."""
    text, encoding = decode_text(path, path.read_bytes())
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise ValueError(f"{path}:1: empty transcript")
    if len(lines) > 1:
        raise ValueError(f"{path}:2: transcript has {len(lines)} non-empty lines; expected one")
    return lines[0], encoding


def speaker_utts(spk_dir: Path, spk: str):
    """[(utt, wav path, text, lab path or None, seconds)] of one speaker named SPK, sorted by utt id."""
    wavs, txts, labs = by_stem(spk_dir, ".wav"), by_stem(spk_dir, ".txt"), by_stem(spk_dir, ".lab")
    if not wavs:
        raise ValueError(f"{spk_dir}: no .wav files")
    rows, latin = [], []
    for stem, wav in wavs.items():
        if stem not in txts:
            raise ValueError(f"{wav}: no transcript {stem}.txt under {spk_dir}")
        utt = stem if stem.startswith(spk + "_") else f"{spk}_{stem}"
        if any(c.isspace() for c in utt):
            raise ValueError(f"{wav}: file name has white space; Kaldi ids cannot")
        info = soundfile.info(str(wav))
        if info.channels != 1:
            raise ValueError(f"{wav}: {info.channels} channels; the recipe needs mono speech")
        text, encoding = read_transcript(txts[stem])
        if encoding != "utf-8":
            latin.append(txts[stem])
        if stem in labs:
            check_format(labs[stem])
        rows.append((utt, wav.resolve(), text, labs.get(stem), info.frames / info.samplerate))
    if latin:
        print(f"prepare_tcstar: {spk_dir}: {len(latin)} of {len(rows)} transcripts are not UTF-8 and were read as "
              f"Latin-1 / cp1252 (e.g. {latin[0]})")
    return sorted(rows, key=lambda r: r[0].encode())


def speaker_dirs(db: Path, speakers: str, speaker_map: dict):
    """[(name, directory)] of the speakers to read: every directory of DB (named through SPEAKER_MAP), or the
    names SPEAKERS chooses; ValueError naming what is missing, and how to name numbered speakers."""
    dirs = {d.name: d for d in sorted(db.iterdir()) if d.is_dir()}
    absent = [c for c in speaker_map if c not in dirs]
    if absent:
        raise ValueError(f"{db}: --speaker-map names no speaker directory {', '.join(absent)} "
                         f"(it has {', '.join(dirs) or 'none'})")
    named = {speaker_map.get(c, c): d for c, d in dirs.items()}
    if len(named) < len(dirs):
        raise ValueError(f"{db}: --speaker-map gives a name that is already another speaker directory's")
    if not speakers.split():
        return list(named.items())
    missing = [s for s in speakers.split() if s not in named]
    if missing:
        example = " ".join(f"{c}:{s}" for c, s in zip((c for c in dirs if c not in speaker_map), missing))
        raise ValueError(f"{db}: no speaker {', '.join(missing)} (its speaker directories: {', '.join(dirs)}"
                         + (f"; mapped: {' '.join(f'{c}:{n}' for c, n in speaker_map.items())}" if speaker_map else "")
                         + f"): name the corpus speakers that are the recipe's with --speaker_map \"{example}\", "
                         f"or choose corpus speakers with --speakers")
    return [(s, named[s]) for s in speakers.split()]


def split(rows, valid_share: float, test_share: float):
    """(train, valid, test) rows: test = the last test_share of the audio, valid the valid_share before it."""
    total = sum(r[4] for r in rows)
    test, valid, acc = [], [], 0.0
    rest = list(rows)
    while rest and acc < test_share * total:
        acc += rest[-1][4]
        test.insert(0, rest.pop())
    acc = 0.0
    while rest and acc < valid_share * total:
        acc += rest[-1][4]
        valid.insert(0, rest.pop())
    if not rest or not valid or not test:
        raise ValueError(f"{len(rows)} utterances cannot be split into non-empty train / valid / test")
    return rest, valid, test


def main(argv=None):
    args = get_parser().parse_args(argv)
    db = Path(args.db)
    try:
        if not db.is_dir():
            raise ValueError(f"{db}: corpus directory does not exist (db.sh TCSTAR)")
        speakers = speaker_dirs(db, args.speakers, parse_speaker_map(args.speaker_map))
        # every speaker read and checked before any data dir is written
        parts = {}
        for spk, d in speakers:
            try:
                parts[spk] = split(speaker_utts(d, spk), args.valid_share, args.test_share)
            except ValueError as e:
                raise ValueError(f"{d}: {e}") if "cannot be split" in str(e) else e
        for spk, d in speakers:
            if spk != d.name:
                print(f"prepare_tcstar: speaker {spk} = corpus speaker directory {d}")
            for name, part in zip(("train", "valid", "test"), parts[spk]):
                out = Path(args.out) / f"{spk}_{name}"
                labs = {u: str(Path(lab).resolve()) for u, _, _, lab, _ in part if lab is not None}
                extra = {"utt2dur": {u: f"{s:.4f}" for u, _, _, _, s in part}}
                if labs:
                    extra["lab.scp"] = labs
                elif (out / "lab.scp").exists():
                    (out / "lab.scp").unlink()  # a stale list from an earlier corpus
                write_data_dir(out, {u: str(w) for u, w, _, _, _ in part}, {u: spk for u, *_ in part},
                               text={u: t for u, _, t, _, _ in part}, extra=extra)
                print(f"prepare_tcstar: {out}: {len(part)} utterances, {sum(r[4] for r in part) / 60:.1f} min, "
                      f"{len(labs)} with labels")
    except (ValueError, OSError, soundfile.LibsndfileError) as e:
        sys.exit(f"prepare_tcstar: {e}")


if __name__ == "__main__":
    main()
