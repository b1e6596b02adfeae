"""KSS (Korean Single speaker Speech) data preparation: transcript reader, held-out split, data dirs.

KSS ships `transcript.v.1.x.txt` next to the chapter directories 1/ .. 4/ (or one level up from a
`kss/` directory holding them), one line per utterance:

    1/1_0000.wav|original|expanded|decomposed|duration|english

(5 fields in transcripts without the English translation are accepted). We read the EXPANDED column
(numbers and symbols spelled out in Hangul) as the utterance text. Audio is 44.1 kHz; data dirs name it
through a `sox ... -r 22050 ... |` pipe in wav.scp (the paper trains at 22.05 kHz), or by path when a
file already has the target rate (the mini corpus). The split follows the paper: the last 250
utterances in transcript order are held out, the first 200 of them = dev (validation), the last
50 = test; everything before = train. One speaker, `kss`; utterance ids `kss-<file stem>`.
"""
from __future__ import annotations

import os
import shlex
import shutil
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from local_models.common.datadir import atomic_open, c_sort_key, write_data_dir, write_table

SPEAKER = "kss"
SAMPLE_RATE = 22050
COLUMNS = ("wav", "original", "expanded", "decomposed", "duration", "english")
TRANSCRIPT_GLOB = "transcript.v.1.*.txt"


class CorpusError(ValueError):
    """A defect of the corpus; the message starts with `file:line:`."""

    def __init__(self, path, lineno: Optional[int], message: str):
        where = f"{path}:{lineno}" if lineno is not None else str(path)
        super().__init__(f"{where}: {message}")


@dataclass
class Entry:
    lineno: int
    rel: str  # wav path as written in the transcript
    wav: Path  # resolved absolute path
    text: str  # the chosen column, NFC, whitespace squeezed
    duration: float  # seconds (the transcript's column, or the header's when check_audio)
    sample_rate: int = 0  # 0 when the audio was not inspected
    num_samples: int = 0

    @property
    def stem(self) -> str:
        return Path(self.rel).stem

    @property
    def utt(self) -> str:
        return f"{SPEAKER}-{self.stem}"


def find_transcript(corpus_dir) -> Path:
    corpus_dir = Path(corpus_dir)
    if not corpus_dir.is_dir():
        raise CorpusError(corpus_dir, None, "KSS directory does not exist")
    found = sorted(corpus_dir.glob(TRANSCRIPT_GLOB))
    if len(found) != 1:
        what = "no" if not found else f"{len(found)} ({', '.join(p.name for p in found)})"
        raise CorpusError(corpus_dir, None, f"found {what} {TRANSCRIPT_GLOB} files; pass the one to use with --transcript")
    return found[0]


def _resolve_wav(rel: str, roots: Sequence[Path]) -> Optional[Path]:
    for root in roots:
        p = root / rel
        if p.is_file():
            return p.resolve()
    return None


def read_transcript(path, corpus_dir=None, column: str = "expanded", check_audio: bool = True) -> List[Entry]:
    """Parse a KSS transcript (file order kept). Wav paths are looked up under `corpus_dir` (default:
    the transcript's directory) and its `kss/` sub-directory. check_audio reads every wav header
    (mono required; duration and rate from the header). Errors name the transcript file and line."""
    path = Path(path)
    if column not in COLUMNS[1:4]:
        raise ValueError(f"column must be one of {', '.join(COLUMNS[1:4])}, got {column!r}")
    col = COLUMNS.index(column)
    base = Path(corpus_dir) if corpus_dir is not None else path.parent
    roots = [base, base / "kss"]
    if not path.is_file():
        raise CorpusError(path, None, "transcript does not exist")
    entries: List[Entry] = []
    first_line: Dict[str, int] = {}
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8").rstrip("\r\n")
            except UnicodeDecodeError as e:
                raise CorpusError(path, lineno, f"not valid UTF-8 ({e.reason})") from None
            if not line.strip():
                continue  # blank lines (e.g. at the end) carry no utterance
            fields = line.split("|")
            if len(fields) not in (5, 6):
                raise CorpusError(path, lineno, f"expected 6 '|'-separated fields ({'|'.join(COLUMNS)}), "
                                                f"got {len(fields)}: {line[:80]!r}")
            rel = fields[0].strip()
            if not rel.lower().endswith(".wav") or any(c.isspace() for c in rel):
                raise CorpusError(path, lineno, f"first field must be a wav path without spaces, got {rel!r}")
            stem = Path(rel).stem
            if stem in first_line:
                raise CorpusError(path, lineno, f"file stem {stem!r} already used on line {first_line[stem]}")
            first_line[stem] = lineno
            text = " ".join(unicodedata.normalize("NFC", fields[col]).split())
            if not text:
                raise CorpusError(path, lineno, f"empty {column} text for {rel}")
            try:
                duration = float(fields[4])
            except ValueError:
                raise CorpusError(path, lineno, f"duration field {fields[4]!r} is not a number") from None
            wav = _resolve_wav(rel, roots)
            if wav is None:
                raise CorpusError(path, lineno, f"wav file {rel} not found under {' or '.join(map(str, roots))}")
            entry = Entry(lineno, rel, wav, text, duration)
            if check_audio:
                import soundfile

                try:
                    info = soundfile.info(str(wav))
                except RuntimeError as e:
                    raise CorpusError(path, lineno, f"cannot read {wav}: {e}") from None
                if info.channels != 1:
                    raise CorpusError(path, lineno, f"{wav} has {info.channels} channels, expected mono")
                if info.frames == 0:
                    raise CorpusError(path, lineno, f"{wav} has no samples")
                entry.sample_rate, entry.num_samples = info.samplerate, info.frames
                entry.duration = info.frames / info.samplerate
            elif not duration > 0:
                raise CorpusError(path, lineno, f"duration {duration} must be positive")
            entries.append(entry)
    if not entries:
        raise CorpusError(path, None, "transcript has no utterances")
    return entries


def split_held_out(entries: Sequence[Entry], n_dev: int, n_test: int) -> Dict[str, List[Entry]]:
    """The paper's split in file order: the last n_dev + n_test held out (dev first, then test)."""
    n = len(entries)
    held = n_dev + n_test
    if n_dev < 0 or n_test < 0 or held >= n:
        raise ValueError(f"{n} utterances cannot give {n_dev} dev + {n_test} test utterances and a training set")
    return {"train": list(entries[: n - held]), "dev": list(entries[n - held: n - n_test]),
            "test": list(entries[n - n_test:])}


def wav_entry(entry: Entry, sample_rate: int = SAMPLE_RATE) -> str:
    """wav.scp value: the path when the file has the target rate, else a sox resampling pipe
    (16-bit output, no dither, so that reruns give the same samples)."""
    if entry.sample_rate == sample_rate:
        return str(entry.wav)
    return f"sox -D {shlex.quote(str(entry.wav))} -t wav -r {sample_rate} -b 16 - |"


def read_ctm(path) -> Dict[str, List[str]]:
    """CTM lines grouped by their key (first field), in file order."""
    out: Dict[str, List[str]] = {}
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            fields = line.split()
            if len(fields) != 5:
                raise CorpusError(path, lineno, f"CTM lines need 5 fields (key chan start dur phone), got {len(fields)}")
            out.setdefault(fields[0], []).append(line.split(maxsplit=1)[1])
    return out


def _swap_in(build: Path, dst: Path) -> None:
    """Replace `dst` by the finished `build` directory (no stale files of an older run survive)."""
    if dst.exists():
        old = dst.with_name(f".{dst.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(dst, old)
        os.replace(build, dst)
        shutil.rmtree(old)
    else:
        os.replace(build, dst)


def write_set(out_dir, name: str, entries: Sequence[Entry], sample_rate: int = SAMPLE_RATE,
              ctm: Optional[Dict[str, List[str]]] = None) -> Path:
    """Write data dir out_dir/name (wav.scp, text, utt2spk, spk2utt, utt2dur [, utt2num_samples when
    the audio already has the target rate] [, phones.ctm re-keyed from file stems to utterance ids]),
    built aside and swapped in whole."""
    out_dir = Path(out_dir)
    build = out_dir / f".{name}.build"
    shutil.rmtree(build, ignore_errors=True)
    wav = {e.utt: wav_entry(e, sample_rate) for e in entries}
    extra: Dict[str, Dict[str, object]] = {"utt2dur": {e.utt: f"{e.duration:.3f}" for e in entries}}
    if entries and all(e.sample_rate == sample_rate for e in entries):
        extra["utt2num_samples"] = {e.utt: e.num_samples for e in entries}
    write_data_dir(build, wav, {e.utt: SPEAKER for e in entries}, text={e.utt: e.text for e in entries}, extra=extra)
    if ctm is not None:
        missing = [e.rel for e in entries if e.stem not in ctm]
        if missing:
            raise ValueError(f"phones.ctm has no phones for {len(missing)} utterances, e.g. {missing[0]}")
        with atomic_open(build / "phones.ctm") as f:
            for e in sorted(entries, key=lambda e: c_sort_key(e.utt)):
                f.writelines(f"{e.utt} {rest}" for rest in ctm[e.stem])
    _swap_in(build, out_dir / name)
    return out_dir / name


def read_sentences(path) -> List[str]:
    """One sentence per line of PATH (whitespace squeezed; blank lines and '#' lines skipped): a text-only set."""
    lines = [" ".join(line.split()) for line in Path(path).read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def write_text_set(out_dir, name: str, sentences: Sequence[str], prefix: str = "ood") -> Path:
    """A text-only data dir (text, utt2spk, spk2utt): sentences to synthesise, no reference audio."""
    out_dir = Path(out_dir)
    build = out_dir / f".{name}.build"
    shutil.rmtree(build, ignore_errors=True)
    build.mkdir(parents=True)
    utts = {f"{SPEAKER}-{prefix}_{i:04d}": " ".join(unicodedata.normalize("NFC", s).split())
            for i, s in enumerate(sentences)}
    if not utts or not all(utts.values()):
        raise ValueError(f"{name}: need at least one sentence and no empty ones")
    write_table(build / "text", utts)
    write_table(build / "utt2spk", {u: SPEAKER for u in utts})
    write_table(build / "spk2utt", {SPEAKER: sorted(utts, key=c_sort_key)})
    _swap_in(build, out_dir / name)
    return out_dir / name
