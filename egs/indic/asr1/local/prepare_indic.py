"""Read a real Indian-language ASR corpus given as Kaldi data dirs into data/<lang>_{train,dev,test}.

Layout under DB (db.sh's INDIC), one Kaldi data dir per language and part, native-script transcripts:
    DB/<lang>_train/  DB/<lang>_dev/  DB/<lang>_test/      (lang: a code of --langs, e.g. hi)
        wav.scp   <utt> <path> | <utt> <command> |   (keyed by recording when `segments` exists)
        text      <utt> <transcript>
        utt2spk   <utt> <spk>       (an utterance id starts with its speaker id)
        segments  <utt> <rec> <start_s> <end_s>       optional
        utt2dur, utt2num_samples                      optional, copied
        utt2lid   <utt> <lang>                        optional; if present it must say <lang>
Writes DATA/<lang>_<part>/ with utterance, speaker and recording ids prefixed by "<lang>-" (ids are then
unique across languages and an utterance id still starts with its speaker id), spk2utt, and
utt2lid (`<utt> <lang>`). Relative audio paths are taken relative to DB and written absolute;
`command |` entries are copied as they are. Every transcript must keep some text after the recipe's
normalisation (local_models.multisoftmax.units.normalise); the `text` written is the corpus's own
(whitespace squeezed), normalisation happens in stage 3.
Every output dir is built aside, checked, and swapped in whole: an error leaves data/ as it was.
Errors name the file and line (empty transcript, missing wav.scp, unknown language code, ...).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Dict, List, Mapping, Optional

from local_models.common.datadir import (DataDirError, atomic_open, iter_lines, read_segments, read_table,
                                         write_data_dir)
from local_models.common.dirops import build_and_swap
from local_models.multisoftmax.units import LANGS, check_lang, normalise

PARTS = ("train", "dev", "test")
OPTIONAL_UTT_TABLES = ("utt2dur", "utt2num_samples")


def parse_langs(value: str) -> List[str]:
    langs = [x for x in value.replace(",", " ").split() if x]
    if not langs:
        raise ValueError("--langs is empty")
    for lang in langs:
        try:
            check_lang(lang)
        except ValueError as e:
            raise ValueError(f"--langs: {e}") from None
    if len(set(langs)) != len(langs):
        raise ValueError(f"--langs lists a language twice: {value!r}")
    return langs


def read_text(path: Path, lang: str) -> Dict[str, str]:
    """{utt: transcript (whitespace squeezed)}; an empty transcript, or one that normalises to nothing,
    is an error naming the line."""
    if not path.is_file():
        raise DataDirError(path, None, "file does not exist (every set needs a text file)")
    out: Dict[str, str] = {}
    for lineno, line in iter_lines(path):
        parts = line.split(maxsplit=1)
        if not parts:
            raise DataDirError(path, lineno, "empty line")
        utt = parts[0]
        if len(parts) < 2:
            raise DataDirError(path, lineno, f"empty transcript for '{utt}'")
        if utt in out:
            raise DataDirError(path, lineno, f"duplicate utterance '{utt}'")
        transcript = " ".join(parts[1].split())
        try:
            normalise(transcript, lang)
        except ValueError as e:
            raise DataDirError(path, lineno, f"'{utt}': {e}") from None
        out[utt] = transcript
    if not out:
        raise DataDirError(path, None, "no transcripts")
    return out


def line_of(path: Path, key: str) -> Optional[int]:
    for lineno, line in iter_lines(path):
        if line.split(maxsplit=1)[:1] == [key]:
            return lineno
    return None


def check_keys(path: Path, table: Mapping[str, object], ref_path: Path, ref: Mapping[str, object]) -> None:
    """Same key set as `ref`; the first stray or missing key is named."""
    for key in table:
        if key not in ref:
            raise DataDirError(path, line_of(path, key), f"'{key}' is not in {ref_path}")
    for key in ref:
        if key not in table:
            raise DataDirError(ref_path, line_of(ref_path, key), f"'{key}' is missing from {path}")


def absolute_audio(entry: str, db: Path) -> str:
    """A wav.scp value with a relative file (or ark) path made absolute against `db`."""
    if entry.endswith("|"):
        return entry
    path, sep, offset = entry.rpartition(":") if ".ark:" in entry else (entry, "", "")
    if not os.path.isabs(path):
        path = str((db / path).resolve())
    return f"{path}{sep}{offset}"


def read_set(src: Path, lang: str, db: Path) -> Dict[str, dict]:
    """The tables of one source data dir with ids prefixed by '<lang>-'."""
    if not src.is_dir():
        raise DataDirError(src, None, f"missing: expected the Kaldi data dir of {LANGS[lang]} "
                                      f"({src.name}: wav.scp, text, utt2spk)")
    for name in ("wav.scp", "utt2spk"):
        if not (src / name).is_file():
            raise DataDirError(src / name, None, "file does not exist (a data dir needs wav.scp, text and utt2spk)")
    utt2spk = read_table(src / "utt2spk")
    for utt, spk in utt2spk.items():
        if len(spk.split()) != 1:
            raise DataDirError(src / "utt2spk", line_of(src / "utt2spk", utt), f"expected one speaker for '{utt}'")
        if not utt.startswith(spk):
            raise DataDirError(src / "utt2spk", line_of(src / "utt2spk", utt),
                               f"utterance id '{utt}' does not start with its speaker id '{spk}'")
    text = read_text(src / "text", lang)
    check_keys(src / "text", text, src / "utt2spk", utt2spk)
    wav = read_table(src / "wav.scp")
    segments = None
    if (src / "segments").is_file():
        segments = read_segments(src / "segments")
        check_keys(src / "segments", segments, src / "utt2spk", utt2spk)
        for utt, (rec, _, _) in segments.items():
            if rec not in wav:
                raise DataDirError(src / "segments", line_of(src / "segments", utt),
                                   f"recording '{rec}' of '{utt}' is not in {src / 'wav.scp'}")
    else:
        check_keys(src / "wav.scp", wav, src / "utt2spk", utt2spk)
    if (src / "utt2lid").is_file():
        for utt, lid in read_table(src / "utt2lid").items():
            if lid != lang:
                raise DataDirError(src / "utt2lid", line_of(src / "utt2lid", utt),
                                   f"'{utt}' has language '{lid}', but {src.name} is a '{lang}' set")

    p = f"{lang}-"
    tables = {
        "wav.scp": {p + key: absolute_audio(value, db) for key, value in wav.items()},
        "utt2spk": {p + utt: p + spk for utt, spk in utt2spk.items()},
        "text": {p + utt: t for utt, t in text.items()},
        "utt2lid": {p + utt: lang for utt in utt2spk},
        "segments": None if segments is None else {p + utt: (p + rec, s, e) for utt, (rec, s, e) in segments.items()},
    }
    for name in OPTIONAL_UTT_TABLES:
        if (src / name).is_file():
            table = read_table(src / name)
            check_keys(src / name, table, src / "utt2spk", utt2spk)
            tables[name] = {p + utt: v for utt, v in table.items()}
    return tables


def write_set(dest: Path, tables: Mapping[str, Optional[dict]]) -> None:
    extra = {name: tables[name] for name in ("utt2lid", *OPTIONAL_UTT_TABLES) if tables.get(name) is not None}
    write_data_dir(dest, tables["wav.scp"], tables["utt2spk"], text=tables["text"], segments=tables["segments"],
                   extra=extra)


def prepare(db: Path, data_root: Path, langs: List[str]) -> Dict[str, int]:
    """Read every <lang>_<part> of `db` into data_root; return {set name: utterances}."""
    if not db.is_dir():
        raise DataDirError(db, None, "corpus directory (db.sh: INDIC) does not exist")
    for d in sorted(db.iterdir()):
        lang, _, part = d.name.rpartition("_")
        if d.is_dir() and part in PARTS and lang not in langs:
            print(f"prepare_indic: ignoring {d} ('{lang}' is not in --langs {' '.join(langs)})", file=sys.stderr)
    sets = {f"{lang}_{part}": (lang, part) for lang in langs for part in PARTS}
    tables = {name: read_set(db / name, lang, db) for name, (lang, _) in sets.items()}  # all checks first
    build_and_swap(data_root, {name: (lambda path, t=tables[name]: write_set(path, t)) for name in sets}, "indic")
    return {name: len(t["utt2spk"]) for name, t in tables.items()}


def write_prepared(data_root: Path, info: Mapping[str, object], rate: int) -> None:
    """data/prepared.json (how the sets were made) and data/sample_rate (stage 2's rate) of a prepared corpus."""
    with atomic_open(data_root / "prepared.json") as f:
        f.write(json.dumps(info, indent=1, ensure_ascii=False) + "\n")
    with atomic_open(data_root / "sample_rate") as f:
        f.write(f"{rate}\n")


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="prepare_indic", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--langs", default="en hi ta gu",
                   help=f"language codes, space or comma separated (known: {', '.join(LANGS)}; default: %(default)s)")
    p.add_argument("db", help="directory holding <lang>_{train,dev,test}/")
    p.add_argument("data_root", help="writes <data_root>/<lang>_{train,dev,test}/")
    return p


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    try:
        langs = parse_langs(args.langs)
        counts = prepare(Path(args.db), Path(args.data_root), langs)
    except (DataDirError, ValueError, OSError) as e:
        print(f"prepare_indic: error: {e}", file=sys.stderr)
        return 1
    print("prepare_indic: " + ", ".join(f"{name} {n} utts" for name, n in counts.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
