"""Check a Kaldi data dir and report every defect with its file, line and reason.

Unlike `read_table` (which stops at the first problem) the validator keeps going, so a user sees
all the defects of a directory at once.
"""
from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .datadir import c_sort_key


@dataclass(frozen=True)
class Defect:
    file: str
    line: Optional[int]
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.reason}"


Entry = Tuple[int, str]  # (line number, value)


class Validator:
    def __init__(self, data_dir, check_text=True, check_feats=True, check_wav=True, sample_rate=None):
        self.dir = Path(data_dir)
        self.check_text = check_text
        self.check_feats = check_feats
        self.check_wav = check_wav
        self.sample_rate = sample_rate
        self.defects: List[Defect] = []

    def add(self, name: str, line: Optional[int], reason: str) -> None:
        self.defects.append(Defect(str(self.dir / name), line, reason))

    # -- generic table checks -------------------------------------------------------------
    def load(self, name: str, required: bool = False, allow_empty: bool = False) -> Optional[Dict[str, Entry]]:
        """Parse a table leniently: record format/sort/duplicate defects, return the good lines."""
        path = self.dir / name
        if not path.is_file():
            if required:
                self.add(name, None, "required file is missing")
            return None
        table: Dict[str, Entry] = {}
        prev: Optional[str] = None
        with open(path, "rb") as f:
            for lineno, raw in enumerate(f, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    self.add(name, lineno, "not valid UTF-8")
                    continue
                line = line.rstrip("\n")
                if line.endswith("\r"):
                    self.add(name, lineno, "Windows line ending (\\r)")
                    line = line.rstrip("\r")
                if not line.strip():
                    self.add(name, lineno, "empty line")
                    continue
                if line[0].isspace():
                    self.add(name, lineno, "line starts with whitespace (empty key)")
                    continue
                parts = line.split(maxsplit=1)
                key, value = parts[0], (parts[1].strip() if len(parts) > 1 else "")
                if not value and not allow_empty:
                    self.add(name, lineno, f"'{key}' has no value")
                if key in table:
                    self.add(name, lineno, f"duplicate key '{key}' (first on line {table[key][0]})")
                    continue
                if prev is not None and c_sort_key(key) < c_sort_key(prev):
                    self.add(name, lineno, f"not sorted (LC_ALL=C): '{key}' after '{prev}'")
                prev = key
                table[key] = (lineno, value)
        if not table and not any(d.file == str(path) for d in self.defects):
            self.add(name, None, "file is empty")
        return table

    def same_keys(self, name: str, table: Dict[str, Entry], ref_name: str, ref: Dict[str, Entry]) -> None:
        for key, (lineno, _) in table.items():
            if key not in ref:
                self.add(name, lineno, f"'{key}' is not in {ref_name}")
        missing = [k for k in ref if k not in table]
        if missing:
            more = f" (+{len(missing) - 3} more)" if len(missing) > 3 else ""
            self.add(name, None, f"{len(missing)} keys of {ref_name} are missing here, e.g. {', '.join(missing[:3])}{more}")

    # -- the checks ---------------------------------------------------------------------
    def run(self) -> List[Defect]:
        if not self.dir.is_dir():
            self.defects.append(Defect(str(self.dir), None, "data directory does not exist"))
            return self.defects
        utt2spk = self.load("utt2spk", required=True) or {}
        spk2utt = self.load("spk2utt", required=True)
        self.check_speakers(utt2spk, spk2utt)
        segments = self.load("segments")
        if segments is not None:
            self.check_segments(segments, utt2spk)
        feats = self.load("feats.scp") if self.check_feats else None
        if self.check_wav or feats is None:
            wav = self.load("wav.scp", required=True)
            if wav is not None:
                self.check_wav_scp(wav, utt2spk, segments)
        if feats is not None:
            self.same_keys("feats.scp", feats, "utt2spk", utt2spk)
            self.check_feats_scp(feats)
        if self.check_text:
            text = self.load("text", required=True, allow_empty=True)
            if text is not None:
                self.same_keys("text", text, "utt2spk", utt2spk)
                for key, (lineno, value) in text.items():
                    if not value:
                        self.add("text", lineno, f"empty transcript for '{key}'")
        self.check_numeric_tables(utt2spk)
        for name in ("utt2lid", "utt2sid"):
            table = self.load(name)
            if table is not None:
                self.same_keys(name, table, "utt2spk", utt2spk)
                for key, (lineno, value) in table.items():
                    if len(value.split()) != 1:
                        self.add(name, lineno, f"expected one label for '{key}', got '{value}'")
        return self.defects

    def check_speakers(self, utt2spk: Dict[str, Entry], spk2utt: Optional[Dict[str, Entry]]) -> None:
        for utt, (lineno, spk) in utt2spk.items():
            if len(spk.split()) != 1:
                self.add("utt2spk", lineno, f"expected one speaker for '{utt}', got '{spk}'")
            elif not utt.startswith(spk):
                self.add("utt2spk", lineno, f"utterance id '{utt}' is not prefixed by its speaker id '{spk}'")
        if spk2utt is None:
            return
        seen: Dict[str, str] = {}
        for spk, (lineno, value) in spk2utt.items():
            utts = value.split()
            if utts != sorted(utts, key=c_sort_key):
                self.add("spk2utt", lineno, f"utterances of '{spk}' are not sorted (LC_ALL=C)")
            for utt in utts:
                if utt in seen:
                    self.add("spk2utt", lineno, f"'{utt}' also listed under speaker '{seen[utt]}'")
                seen[utt] = spk
                if utt2spk.get(utt, (0, None))[1] != spk:
                    self.add("spk2utt", lineno, f"'{utt}' under '{spk}' disagrees with utt2spk")
        for utt, (lineno, spk) in utt2spk.items():
            if utt not in seen:
                self.add("utt2spk", lineno, f"'{utt}' is not listed in spk2utt (regenerate it: utt2spk_to_spk2utt)")

    def check_segments(self, segments: Dict[str, Entry], utt2spk: Dict[str, Entry]) -> None:
        self.same_keys("segments", segments, "utt2spk", utt2spk)
        for utt, (lineno, value) in segments.items():
            fields = value.split()
            if len(fields) != 3:
                self.add("segments", lineno, f"expected 4 fields (utt rec start end), got {len(fields) + 1}")
                continue
            try:
                start, end = float(fields[1]), float(fields[2])
            except ValueError:
                self.add("segments", lineno, "start/end are not numbers")
                continue
            if start < 0:
                self.add("segments", lineno, f"negative start time {start}")
            if not end > start:
                self.add("segments", lineno, f"end time {end} is not after start time {start}")

    def check_wav_scp(self, wav: Dict[str, Entry], utt2spk, segments) -> None:
        if segments is not None:
            recs = {v.split()[0] for _, v in segments.values() if v.split()}
            for rec, (lineno, _) in wav.items():
                if rec not in recs:
                    self.add("wav.scp", lineno, f"recording '{rec}' is used by no segment")
            for utt, (lineno, value) in segments.items():
                fields = value.split()
                if fields and fields[0] not in wav:
                    self.add("segments", lineno, f"recording '{fields[0]}' is not in wav.scp")
        else:
            self.same_keys("wav.scp", wav, "utt2spk", utt2spk)
        if not self.check_wav:
            return
        for key, (lineno, value) in wav.items():
            self.check_audio_entry(key, lineno, value)

    def check_audio_entry(self, key: str, lineno: int, value: str) -> None:
        if value.endswith("|"):
            try:
                prog = shlex.split(value[:-1])[0]
            except (ValueError, IndexError):
                self.add("wav.scp", lineno, f"cannot parse the command of '{key}'")
                return
            if shutil.which(prog) is None and not os.access(prog, os.X_OK):
                self.add("wav.scp", lineno, f"command '{prog}' of '{key}' is not on PATH")
            return
        path = value.split(":")[0] if ".ark:" in value else value
        if not os.path.isfile(path):
            self.add("wav.scp", lineno, f"audio file of '{key}' does not exist: {path}")
        elif not os.access(path, os.R_OK):
            self.add("wav.scp", lineno, f"audio file of '{key}' is not readable: {path}")
        elif self.sample_rate and not path.endswith(".ark"):
            import soundfile

            try:
                rate = soundfile.info(path).samplerate
            except RuntimeError as e:
                self.add("wav.scp", lineno, f"cannot read audio of '{key}': {e}")
                return
            if rate != self.sample_rate:
                self.add("wav.scp", lineno, f"sample rate of '{key}' is {rate} Hz, expected {self.sample_rate} Hz")

    def check_feats_scp(self, feats: Dict[str, Entry]) -> None:
        for key, (lineno, value) in feats.items():
            ark, sep, offset = value.rpartition(":")
            if not sep or not offset.isdigit():
                self.add("feats.scp", lineno, f"expected <ark>:<offset> for '{key}', got '{value}'")
            elif not os.path.isfile(ark):
                self.add("feats.scp", lineno, f"ark file of '{key}' does not exist: {ark}")

    def check_numeric_tables(self, utt2spk: Dict[str, Entry]) -> None:
        num_frames = {}
        for name, kind in (("utt2dur", float), ("utt2num_frames", int), ("utt2num_samples", int)):
            table = self.load(name)
            if table is None:
                continue
            self.same_keys(name, table, "utt2spk", utt2spk)
            for key, (lineno, value) in table.items():
                try:
                    number = kind(value)
                except ValueError:
                    self.add(name, lineno, f"'{value}' is not a{'n integer' if kind is int else ' number'}")
                    continue
                if number <= 0:
                    self.add(name, lineno, f"non-positive value {value} for '{key}'")
                if name == "utt2num_frames":
                    num_frames[key] = number
        durations = self.load("durations")
        if durations is None:
            return
        self.same_keys("durations", durations, "utt2spk", utt2spk)
        for key, (lineno, value) in durations.items():
            try:
                frames = [int(v) for v in value.split()]
            except ValueError:
                self.add("durations", lineno, f"durations of '{key}' must be integers (frames per token)")
                continue
            if any(d < 0 for d in frames):
                self.add("durations", lineno, f"negative duration for '{key}'")
            if key in num_frames and sum(frames) != num_frames[key]:
                self.add("durations", lineno, f"durations of '{key}' sum to {sum(frames)}, utt2num_frames says {num_frames[key]}")


def validate_data_dir(data_dir, check_text=True, check_feats=True, check_wav=True, sample_rate=None) -> List[Defect]:
    """Return every defect found (empty list = valid)."""
    return Validator(data_dir, check_text, check_feats, check_wav, sample_rate).run()
