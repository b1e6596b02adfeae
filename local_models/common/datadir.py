"""Kaldi-style data directories: read and write the plain-text tables, atomically.

A table is a text file of ``<key> <value>`` lines sorted by key in C-locale (byte) order.
Every writer here writes to a temporary file in the same directory and renames it, so an
interrupted stage never leaves a half-written table behind, and re-running a stage rewrites
the same bytes.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

PathLike = Union[str, os.PathLike]

# Files keyed by utterance id (wav.scp too, unless `segments` exists: then it is keyed by recording).
UTT_TABLES = (
    "text",
    "utt2spk",
    "segments",
    "feats.scp",
    "utt2lid",
    "utt2sid",
    "utt2dur",
    "utt2num_frames",
    "utt2num_samples",
    "durations",
)


from .errors import DataDirError  # noqa: E402,F401  (defined beside cli's other error classes)


def c_sort_key(key: str) -> bytes:
    """Sort key equal to `LC_ALL=C sort`: byte order of the UTF-8 encoding."""
    return key.encode("utf-8")


def iter_lines(path: PathLike) -> Iterator[Tuple[int, str]]:
    """Yield (1-based line number, line without newline); raise DataDirError on bad UTF-8."""
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise DataDirError(path, lineno, f"not valid UTF-8 ({e.reason})") from None
            yield lineno, line.rstrip("\n").rstrip("\r")


def read_table(path: PathLike, allow_empty_value: bool = False) -> Dict[str, str]:
    """Read ``<key> <value>`` lines into an ordered dict; errors name file and line."""
    out: Dict[str, str] = {}
    if not os.path.exists(path):  # exists, not isfile: /dev/stdin and pipes are fine
        raise DataDirError(path, None, "file does not exist")
    for lineno, line in iter_lines(path):
        if not line.strip():
            raise DataDirError(path, lineno, "empty line")
        parts = line.split(maxsplit=1)
        key = parts[0]
        value = parts[1].strip() if len(parts) > 1 else ""
        if not value and not allow_empty_value:
            raise DataDirError(path, lineno, f"key '{key}' has no value")
        if key in out:
            raise DataDirError(path, lineno, f"duplicate key '{key}'")
        out[key] = value
    return out


def read_segments(path: PathLike) -> Dict[str, Tuple[str, float, float]]:
    """Read ``<utt> <rec> <start_s> <end_s>``; validates field count and end > start."""
    out: Dict[str, Tuple[str, float, float]] = {}
    for key, value in read_table(path).items():
        fields = value.split()
        if len(fields) != 3:
            raise DataDirError(path, _line_of(path, key), "segments lines need 4 fields: utt rec start end")
        try:
            start, end = float(fields[1]), float(fields[2])
        except ValueError:
            raise DataDirError(path, _line_of(path, key), "start/end are not numbers") from None
        if not end > start or start < 0:
            raise DataDirError(path, _line_of(path, key), f"segment end {end} must exceed start {start} >= 0")
        out[key] = (fields[0], start, end)
    return out


def _line_of(path: PathLike, key: str) -> Optional[int]:
    for lineno, line in iter_lines(path):
        if line.split(maxsplit=1)[:1] == [key]:
            return lineno
    return None


@contextlib.contextmanager
def atomic_open(path: PathLike, mode: str = "w", encoding: Optional[str] = "utf-8"):
    """Open a temp file beside `path`; rename it over `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        kwargs = {} if "b" in mode else {"encoding": encoding, "newline": "\n"}
        with open(tmp, mode, **kwargs) as f:
            yield f
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_table(path: PathLike, rows: Union[Mapping[str, object], Iterable[Tuple[str, object]]]) -> None:
    """Write ``<key> <value>`` lines, C-sorted, atomically. Values may be strings, numbers or lists."""
    items = rows.items() if isinstance(rows, Mapping) else rows
    lines = []
    seen = set()
    for key, value in items:
        key = str(key)
        if not key or any(c.isspace() for c in key):
            raise ValueError(f"{path}: invalid key {key!r} (empty or contains whitespace)")
        if key in seen:
            raise ValueError(f"{path}: duplicate key {key!r}")
        seen.add(key)
        if isinstance(value, (list, tuple)):
            value = " ".join(str(v) for v in value)
        lines.append((c_sort_key(key), f"{key} {value}".rstrip() + "\n"))
    lines.sort(key=lambda kv: kv[0])
    with atomic_open(path) as f:
        f.writelines(line for _, line in lines)


def utt2spk_to_spk2utt(utt2spk: Mapping[str, str]) -> Dict[str, List[str]]:
    """Invert utt2spk; utterance lists are C-sorted."""
    spk2utt: Dict[str, List[str]] = {}
    for utt, spk in utt2spk.items():
        spk2utt.setdefault(spk, []).append(utt)
    return {spk: sorted(utts, key=c_sort_key) for spk, utts in spk2utt.items()}


def spk2utt_to_utt2spk(spk2utt: Mapping[str, Iterable[str]]) -> Dict[str, str]:
    utt2spk: Dict[str, str] = {}
    for spk, utts in spk2utt.items():
        for utt in utts:
            if utt in utt2spk:
                raise ValueError(f"utterance {utt!r} listed under two speakers ({utt2spk[utt]}, {spk})")
            utt2spk[utt] = spk
    return utt2spk


@dataclass
class DataDir:
    """In-memory view of a data dir. Only the tables present on disk are loaded."""

    path: Path
    tables: Dict[str, Dict[str, str]]

    @classmethod
    def load(cls, path: PathLike) -> "DataDir":
        path = Path(path)
        if not path.is_dir():
            raise DataDirError(path, None, "data directory does not exist")
        tables = {}
        for name in ("wav.scp", "spk2utt") + UTT_TABLES:
            if (path / name).is_file():
                tables[name] = read_table(path / name)
        return cls(path, tables)

    @property
    def utt_ids(self) -> List[str]:
        for name in ("utt2spk", "segments", "text", "feats.scp", "wav.scp"):
            if name in self.tables:
                return sorted(self.tables[name], key=c_sort_key)
        return []

    def save(self, path: Optional[PathLike] = None) -> None:
        """Write every table (spk2utt regenerated from utt2spk) to `path` (default: own path)."""
        out = Path(path) if path is not None else self.path
        out.mkdir(parents=True, exist_ok=True)
        for name, table in self.tables.items():
            if name == "spk2utt":
                continue
            write_table(out / name, table)
        if "utt2spk" in self.tables:
            write_table(out / "spk2utt", utt2spk_to_spk2utt(self.tables["utt2spk"]))


def write_data_dir(
    path: PathLike,
    wav_scp: Mapping[str, str],
    utt2spk: Mapping[str, str],
    text: Optional[Mapping[str, str]] = None,
    segments: Optional[Mapping[str, Tuple[str, float, float]]] = None,
    extra: Optional[Mapping[str, Mapping[str, object]]] = None,
) -> None:
    """Write a complete data dir (spk2utt derived from utt2spk). `extra` = other tables by file name."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tables: Dict[str, Mapping[str, object]] = {"wav.scp": wav_scp, "utt2spk": utt2spk}
    if text is not None:
        tables["text"] = text
    if segments is not None:
        tables["segments"] = {u: f"{r} {s:.3f} {e:.3f}" for u, (r, s, e) in segments.items()}
    tables.update(extra or {})
    for name, table in tables.items():
        write_table(path / name, table)
    write_table(path / "spk2utt", utt2spk_to_spk2utt(utt2spk))


def backup_files(data_dir: PathLike, names: Iterable[str]) -> Path:
    """Copy the named files of a data dir into `<data_dir>/.backup/` (overwriting older copies)."""
    data_dir = Path(data_dir)
    backup = data_dir / ".backup"
    backup.mkdir(exist_ok=True)
    for name in names:
        if (data_dir / name).is_file():
            shutil.copy2(data_dir / name, backup / name)
    return backup
