"""Operations on whole data dirs: fix (intersect + sort), subset, split, validate-and-replace a built set."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set

from .datadir import (
    UTT_TABLES,
    DataDirError,
    atomic_open,
    backup_files,
    c_sort_key,
    iter_lines,
    utt2spk_to_spk2utt,
    write_table,
)
from .validate import validate_data_dir

# Tables copied verbatim by subset/split when present (keyed by recording, not utterance).
REC_TABLES = ("wav.scp", "reco2dur", "reco2file_and_channel")
# Files with several lines per utterance (first field = utterance id), e.g. phone alignments.
MULTI_LINE_TABLES = ("phones.ctm",)


def read_lenient(path: Path, report: List[str]) -> Dict[str, str]:
    """Read a table keeping the first good line per key; describe dropped lines in `report`."""
    table: Dict[str, str] = {}
    for lineno, line in iter_lines(path):
        parts = line.strip().split(maxsplit=1)
        if len(parts) < 2 and path.name not in ("text",):
            report.append(f"{path}:{lineno}: dropped malformed line")
            continue
        key = parts[0] if parts else ""
        if not key:
            report.append(f"{path}:{lineno}: dropped empty line")
            continue
        if key in table:
            report.append(f"{path}:{lineno}: dropped duplicate key '{key}'")
            continue
        table[key] = parts[1].strip() if len(parts) > 1 else ""
    return table


def _present(data_dir: Path, names: Iterable[str]) -> List[str]:
    return [n for n in names if (data_dir / n).is_file()]


def fix_data_dir(data_dir, dry_run: bool = False) -> List[str]:
    """Keep only utterances present in every utterance table, drop bad lines, re-sort.

    Originals are copied to `<data_dir>/.backup/` first. Returns a report of what changed.
    """
    data_dir = Path(data_dir)
    report: List[str] = []
    utt_names = _present(data_dir, UTT_TABLES)
    if "utt2spk" not in utt_names and (data_dir / "spk2utt").is_file():
        report.append("utt2spk regenerated from spk2utt")
        spk2utt = read_lenient(data_dir / "spk2utt", report)
        tables = {"utt2spk": {u: s for s, us in spk2utt.items() for u in us.split()}}
    else:
        tables = {}
    for name in utt_names:
        tables[name] = read_lenient(data_dir / name, report)
    if "text" in tables:
        for utt in [u for u, t in tables["text"].items() if not t]:
            report.append(f"{data_dir / 'text'}: dropped '{utt}' (empty transcript)")
            del tables["text"][utt]
    if "segments" in tables:
        for utt, value in list(tables["segments"].items()):
            if not _good_segment(value):
                report.append(f"{data_dir / 'segments'}: dropped '{utt}' (bad segment '{value}')")
                del tables["segments"][utt]
    wav = read_lenient(data_dir / "wav.scp", report) if (data_dir / "wav.scp").is_file() else None
    if wav is not None and "segments" in tables:
        tables["segments"] = {u: v for u, v in tables["segments"].items() if v.split()[0] in wav}
    elif wav is not None:
        tables["wav.scp"] = wav
    if not tables:
        raise DataDirError(data_dir, None, "no utterance tables (utt2spk, text, wav.scp, ...) to fix")
    keep: Set[str] = set.intersection(*(set(t) for t in tables.values()))
    for name, table in tables.items():
        dropped = len(table) - len(keep)
        if dropped:
            report.append(f"{data_dir / name}: dropped {dropped} utterances missing from other tables")
    if dry_run:
        return report
    backup_files(data_dir, _present(data_dir, list(UTT_TABLES) + ["wav.scp", "spk2utt"]))
    for name, table in tables.items():
        write_table(data_dir / name, {k: v for k, v in table.items() if k in keep})
    if wav is not None and "segments" in tables:
        recs = {tables["segments"][u].split()[0] for u in keep}
        write_table(data_dir / "wav.scp", {r: p for r, p in wav.items() if r in recs})
    if "utt2spk" in tables:
        write_table(data_dir / "spk2utt", utt2spk_to_spk2utt({u: tables["utt2spk"][u] for u in keep}))
    return report


def _good_segment(value: str) -> bool:
    fields = value.split()
    if len(fields) != 3:
        return False
    try:
        return 0 <= float(fields[1]) < float(fields[2])
    except ValueError:
        return False


def load_utt2spk(data_dir: Path) -> Dict[str, str]:
    report: List[str] = []
    table = read_lenient(data_dir / "utt2spk", report)
    if report:
        raise DataDirError(data_dir / "utt2spk", None, "; ".join(report) + " (run fix_data_dir first)")
    return table


def write_subset(src, dst, utts: Sequence[str]) -> None:
    """Write a data dir holding exactly `utts` of `src` (all tables restricted consistently)."""
    src, dst = Path(src), Path(dst)
    if src.resolve() == dst.resolve():
        raise ValueError(f"destination {dst} is the source directory")
    keep = set(utts)
    if dst.exists():
        shutil.rmtree(dst)  # no stale tables from an earlier, different subset
    dst.mkdir(parents=True)
    report: List[str] = []
    segments = None
    for name in _present(src, UTT_TABLES + ("wav.scp",)):
        if name == "wav.scp" and (src / "segments").is_file():
            continue
        table = read_lenient(src / name, report)
        subset = {k: v for k, v in table.items() if k in keep}
        write_table(dst / name, subset)
        if name == "segments":
            segments = subset
    for name in _present(src, MULTI_LINE_TABLES):
        with open(src / name, encoding="utf-8") as fin, atomic_open(dst / name) as fout:
            fout.writelines(line for line in fin if line.split(maxsplit=1)[:1] and line.split(maxsplit=1)[0] in keep)
    if segments is not None:
        recs = {v.split()[0] for v in segments.values()}
        for name in _present(src, REC_TABLES):
            table = read_lenient(src / name, report)
            write_table(dst / name, {k: v for k, v in table.items() if k in recs})
    utt2spk = read_lenient(dst / "utt2spk", report)
    write_table(dst / "spk2utt", utt2spk_to_spk2utt(utt2spk))


def select_utts(
    src,
    first: Optional[int] = None,
    last: Optional[int] = None,
    utt_list: Optional[Iterable[str]] = None,
    spk_list: Optional[Iterable[str]] = None,
    per_spk: Optional[int] = None,
) -> List[str]:
    """Choose utterances of `src` by exactly one criterion; result in sorted order."""
    chosen = [x is not None for x in (first, last, utt_list, spk_list, per_spk)]
    if sum(chosen) != 1:
        raise ValueError("give exactly one of --first, --last, --utt-list, --spk-list, --per-spk")
    utt2spk = load_utt2spk(Path(src))
    utts = sorted(utt2spk, key=c_sort_key)
    if first is not None:
        return utts[:first]
    if last is not None:
        return utts[len(utts) - last:] if last > 0 else []
    if utt_list is not None:
        wanted = set(utt_list)
        unknown = sorted(wanted - set(utts))
        if unknown:
            raise ValueError(f"{len(unknown)} utterances of the list are not in {src}, e.g. {unknown[0]}")
        return [u for u in utts if u in wanted]
    if spk_list is not None:
        wanted = set(spk_list)
        unknown = sorted(wanted - set(utt2spk.values()))
        if unknown:
            raise ValueError(f"{len(unknown)} speakers of the list are not in {src}, e.g. {unknown[0]}")
        return [u for u in utts if utt2spk[u] in wanted]
    spk2utt = utt2spk_to_spk2utt(utt2spk)
    picked = {u for us in spk2utt.values() for u in us[:per_spk]}
    return [u for u in utts if u in picked]


def split_utts(utt2spk: Dict[str, str], nj: int, per_spk: bool = False) -> List[List[str]]:
    """Split sorted utterances into `nj` contiguous, near-equal parts (whole speakers if per_spk)."""
    if nj < 1:
        raise ValueError("nj must be >= 1")
    utts = sorted(utt2spk, key=c_sort_key)
    if not per_spk:
        if nj > len(utts):
            raise ValueError(f"cannot split {len(utts)} utterances into {nj} parts")
        bounds = [round(i * len(utts) / nj) for i in range(nj + 1)]
        return [utts[bounds[i]:bounds[i + 1]] for i in range(nj)]
    spk2utt = utt2spk_to_spk2utt(utt2spk)
    speakers = sorted(spk2utt, key=c_sort_key)
    if nj > len(speakers):
        raise ValueError(f"cannot split {len(speakers)} speakers into {nj} parts (--per-spk)")
    # Contiguous partition: each speaker goes to the part its utterance midpoint falls in, clamped
    # so that parts advance one at a time and no part is left empty.
    parts: List[List[str]] = [[] for _ in range(nj)]
    total, done, prev = len(utts), 0, 0
    for i, spk in enumerate(speakers):
        n = len(spk2utt[spk])
        want = min(int((done + n / 2) / total * nj), nj - 1)
        lo, hi = max(prev, nj - len(speakers) + i), min(prev + 1, i)
        prev = min(max(want, lo), hi) if i else 0
        parts[prev].extend(spk2utt[spk])
        done += n
    return [sorted(p, key=c_sort_key) for p in parts]


def split_data_dir(data_dir, nj: int, per_spk: bool = False) -> List[Path]:
    """Write `<data_dir>/split<nj>[utt]/<1..nj>/` (Kaldi layout); returns the part dirs."""
    data_dir = Path(data_dir)
    utt2spk = load_utt2spk(data_dir)
    parts = split_utts(utt2spk, nj, per_spk)
    root = data_dir / f"split{nj}"
    if root.exists():
        shutil.rmtree(root)
    out = []
    for i, utts in enumerate(parts, 1):
        write_subset(data_dir, root / str(i), utts)
        out.append(root / str(i))
    return out


def check_built_dirs(built: Mapping[str, Path], check_text: bool = True) -> None:
    """Validate freshly built data dirs, tables only (their wav paths may not exist yet: data.sh checks audio)."""
    for path in built.values():
        defects = validate_data_dir(path, check_text=check_text, check_wav=False)
        if defects:
            raise DataDirError(path, None, "built an invalid data dir: " + "; ".join(map(str, defects[:5])))


def replace_dirs(built: Mapping[str, Path], dest_root: Path) -> None:
    """Move each built dir to dest_root/<name>, replacing what was there (one rename per dir, so an
    interrupted run leaves either the old or the new set, never half of each)."""
    dest_root.mkdir(parents=True, exist_ok=True)
    for name, path in built.items():
        dest, old = dest_root / name, dest_root / f".{name}.old"
        shutil.rmtree(old, ignore_errors=True)
        if dest.exists():
            os.replace(dest, old)
        os.replace(path, dest)
        shutil.rmtree(old, ignore_errors=True)


def build_and_swap(dest_root, writers: Mapping[str, Callable[[Path], None]], tag: str = "building",
                   check_text: bool = True) -> None:
    """Each data dir of WRITERS ({name: write(path)}) built aside in DEST_ROOT/.<tag>.building/, all checked, then
    swapped into DEST_ROOT together (replace_dirs): a failure anywhere leaves the old sets as they were."""
    dest_root = Path(dest_root)
    build = dest_root / f".{tag}.building"
    shutil.rmtree(build, ignore_errors=True)
    built = {name: build / name for name in writers}
    try:
        for name, write in writers.items():
            write(built[name])
        check_built_dirs(built, check_text=check_text)
        replace_dirs(built, dest_root)
    finally:
        shutil.rmtree(build, ignore_errors=True)


def held_out_count(spec: str, total: int) -> int:
    """'200' -> 200; '5%' -> 5 % of total, rounded, at least 1."""
    spec = str(spec).strip()
    try:
        if spec.endswith("%"):
            share = float(spec[:-1])
            if not 0 <= share < 100:
                raise ValueError
            return max(1, round(total * share / 100)) if share > 0 else 0
        n = int(spec)
        if n < 0:
            raise ValueError
        return n
    except ValueError:
        raise ValueError(f"held-out size must be a count >= 0 or a percentage like '5%', got {spec!r}") from None
