"""Data files of the multilingual RNN-T recipe: stage 3's units (`local_models.bin.multisoftmax_units`) and stage 4's
training inputs (`local_models.bin.multisoftmax_prepare`); their --help says which files each writes. Errors name the
file and line (DataDirError); files are written atomically; the same inputs give the same bytes.
"""
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import numpy as np

from local_models.common.datadir import DataDirError, atomic_open, c_sort_key, iter_lines, read_table

from . import units as U


def split_list(value: str) -> List[str]:
    return [x for x in value.replace(",", " ").split() if x]


def check_langs(langs: List[str]) -> None:
    if not langs:
        raise ValueError("--langs is empty")
    for lang in langs:
        U.check_lang(lang)


def default_sets(sets: str, langs: List[str]) -> List[str]:
    """--sets, or <lang>_{train,dev,test} of every language."""
    return split_list(sets) or [f"{lang}_{part}" for lang in langs for part in ("train", "dev", "test")]


# ----------------------------------------------------------------------------- stage 3: units

def normalised_lines(path: Path, lang_of) -> Iterator[Tuple[str, str, str]]:
    """(utt, lang, normalised text) of a `text` table; errors name the file and line."""
    if not path.is_file():
        raise DataDirError(path, None, "file does not exist (stage 1 makes it)")
    for lineno, line in iter_lines(path):
        parts = line.split(maxsplit=1)
        if len(parts) < 2:
            raise DataDirError(path, lineno, "empty transcript" if parts else "empty line")
        utt, raw = parts
        lang = lang_of(utt, lineno)
        try:
            yield utt, lang, U.normalise(raw, lang)
        except ValueError as e:
            raise DataDirError(path, lineno, f"'{utt}': {e}") from None


def build_language(data_root: Path, lang_root: Path, lang: str) -> List[str]:
    text = data_root / f"{lang}_train" / "text"
    vocab = U.build_vocab(norm for _, _, norm in normalised_lines(text, lambda utt, lineno: lang))
    U.write_units(lang_root / lang / "units.txt", vocab)
    return vocab


def lang_table(data_dir: Path, langs) -> Dict[str, str]:
    path = data_dir / "utt2lid"
    if not path.is_file():
        raise DataDirError(path, None, "missing: every set needs utt2lid (<utt> <lang>; stage 1 writes it)")
    table = read_table(path)
    for lineno, (utt, lang) in enumerate(table.items(), 1):
        if lang not in langs:
            raise DataDirError(path, lineno, f"'{utt}': language '{lang}' is not one of --langs ({' '.join(langs)})")
    return table


def convert_units_set(data_dir: Path, vocabs: Dict[str, List[str]]) -> Tuple[int, Counter]:
    """Write text_norm and text_units of one set; return (number of units, Counter of unknown units)."""
    utt2lid = lang_table(data_dir, vocabs)
    known = {lang: set(v) for lang, v in vocabs.items()}

    def lang_of(utt, lineno):
        if utt not in utt2lid:
            raise DataDirError(data_dir / "text", lineno, f"'{utt}' is not in {data_dir / 'utt2lid'}")
        return utt2lid[utt]

    total, unknown = 0, Counter()
    # streamed in the order of `text` (sorted: stage 1 validated the data dir)
    with atomic_open(data_dir / "text_norm") as f_norm, atomic_open(data_dir / "text_units") as f_units:
        for utt, lang, norm in normalised_lines(data_dir / "text", lang_of):
            units, missing = U.map_unknown(U.text_to_units(norm), known[lang], U.UNK)
            total += len(units)
            unknown.update(missing)
            f_norm.write(f"{utt} {norm}\n")
            f_units.write(f"{utt} {' '.join(units)}\n")
    return total, unknown


def unknown_detail(unknown: Counter) -> str:
    """' (unit xN, ...)': the ten most frequent unknown units of a set, for the log line."""
    if not unknown:
        return ""
    top = sorted(unknown.items(), key=lambda kv: (-kv[1], kv[0]))
    return " (" + ", ".join(f"{u!r} x{c}" for u, c in top[:10]) + (", ..." if len(top) > 10 else "") + ")"


def make_units(data_root: Path, lang_root: Path, langs: List[str], sets_opt: str) -> None:
    """Stage 3: every language's units.txt and the union's, every set's text_norm / text_units, unknown_units."""
    check_langs(langs)
    sets = default_sets(sets_opt, langs)
    vocabs = {}
    for lang in langs:
        vocabs[lang] = build_language(data_root, lang_root, lang)
        n = len(U.graphemes_of(vocabs[lang]))
        print(f"multisoftmax_units: {lang}: {n} graphemes, {len(vocabs[lang])} units "
              f"-> {lang_root / lang / 'units.txt'}", file=sys.stderr)
    union = U.union_vocab(vocabs.values())
    U.write_units(lang_root / "union" / "units.txt", union)
    print(f"multisoftmax_units: union: {len(union)} units -> {lang_root / 'union' / 'units.txt'}", file=sys.stderr)
    report = []
    for name in sets:
        total, unknown = convert_units_set(data_root / name, vocabs)
        n_unk = sum(unknown.values())
        print(f"multisoftmax_units: {name}: {total} units, {n_unk} unknown -> {U.UNK}{unknown_detail(unknown)}",
              file=sys.stderr)
        report.extend(f"{name} {u} {c}\n" for u, c in sorted(unknown.items(), key=lambda kv: c_sort_key(kv[0])))
    with atomic_open(lang_root / "unknown_units") as f:
        f.writelines(report)


# ----------------------------------------------------------------------------- stage 4: training inputs

def require(path: Path, made_by: str) -> Path:
    if not path.is_file():
        raise DataDirError(path, None, f"missing ({made_by} makes it)")
    return path


def convert_dump_set(data_dir: Path, dump_dir: Path, union: Dict[str, int], langs: List[str]) -> Dict[str, int]:
    """Write text_int, lid_int and utt2category of one set; return {utt: num_frames} from feats.shape."""
    utt2lid = read_table(require(data_dir / "utt2lid", "stage 1"))
    shapes = {}
    for lineno, line in iter_lines(require(dump_dir / "feats.shape", "stage 2")):
        utt, shape = line.split(maxsplit=1)
        shapes[utt] = int(shape.split(",")[0])
    units_path = require(data_dir / "text_units", "stage 3")
    with atomic_open(dump_dir / "text_int") as f_text, atomic_open(dump_dir / "lid_int") as f_lid, \
            atomic_open(dump_dir / "utt2category") as f_cat:
        seen = set()
        for lineno, line in iter_lines(units_path):
            parts = line.split(maxsplit=1)
            if len(parts) < 2:
                raise DataDirError(units_path, lineno, "no units (empty transcript)")
            utt, text = parts
            if utt not in shapes:
                raise DataDirError(units_path, lineno, f"'{utt}' has no features in {dump_dir / 'feats.shape'}")
            lang = utt2lid.get(utt)
            if lang not in langs:
                raise DataDirError(units_path, lineno, f"'{utt}': language {lang!r} (utt2lid) is not one of {langs}")
            try:
                ids = U.encode(text.split(), union)
            except U.UnknownUnitError as e:
                raise DataDirError(units_path, lineno, f"'{utt}': {e}") from None
            seen.add(utt)
            f_text.write(f"{utt} {' '.join(map(str, ids))}\n")
            f_lid.write(f"{utt} {langs.index(lang)}\n")
            f_cat.write(f"{utt} {lang}\n")
    missing = sorted(set(shapes) - seen)
    if missing:
        raise DataDirError(units_path, None, f"{len(missing)} utterances with features have no units, e.g. '{missing[0]}'")
    return shapes


def pool(dump_root: Path, name: str, parts: List[str], category: bool = True) -> None:
    """DUMP_ROOT/name: the union of parts' feats.scp, feats.shape, text_int, lid_int (and utt2category), sorted."""
    stale = dump_root / name / "utt2category"
    if not category and stale.exists():
        stale.unlink()
    for fname in ("feats.scp", "feats.shape", "text_int", "lid_int") + (("utt2category",) if category else ()):
        lines = []
        for part in parts:
            lines.extend(line for _, line in iter_lines(dump_root / part / fname))
        lines.sort(key=lambda l: c_sort_key(l.split(maxsplit=1)[0]))
        with atomic_open(dump_root / name / fname) as f:
            f.writelines(f"{line}\n" for line in lines)


def feature_stats(scp: Path) -> Dict[str, np.ndarray]:
    """Mean and standard deviation over every frame of a feats.scp (float64 sums)."""
    import kaldiio

    n, s, ss = 0, None, None
    for _, mat in kaldiio.load_scp_sequential(str(scp)):
        mat = np.asarray(mat, dtype=np.float64)
        s = mat.sum(0) if s is None else s + mat.sum(0)
        ss = (mat ** 2).sum(0) if ss is None else ss + (mat ** 2).sum(0)
        n += len(mat)
    if not n:
        raise DataDirError(scp, None, "no frames")
    mean = s / n
    return dict(mean=mean.astype(np.float32), std=np.sqrt(np.maximum(ss / n - mean ** 2, 0.0)).astype(np.float32),
                frames=np.array(n))


def prepare(data_root: Path, lang_root: Path, dump_root: Path, langs: List[str], sets_opt: str,
            frame_shift_ms: float) -> None:
    """Stage 4: every set's text_int / lid_int / utt2category, the pooled sets, train_all's stats and hours."""
    check_langs(langs)
    union = {u: i for i, u in enumerate(U.read_units(lang_root / "union" / "units.txt"))}
    sets = default_sets(sets_opt, langs)
    hours = {}
    for name in sets:
        shapes = convert_dump_set(data_root / name, dump_root / name, union, langs)
        if name.endswith("_train"):
            hours[name[:-len("_train")]] = sum(shapes.values()) * frame_shift_ms / 3.6e6
        print(f"multisoftmax_prepare: {name}: {len(shapes)} utterances -> {dump_root / name}/text_int", file=sys.stderr)
    for name, part in (("train_all", "train"), ("dev_all", "dev")):
        parts = [f"{lang}_{part}" for lang in langs]
        if all(p in sets for p in parts):
            pool(dump_root, name, parts)
            if part == "train":
                pool(dump_root, "train_mixed", parts, category=False)
    if all(f"{lang}_train" in sets for lang in langs):
        write_train_stats(dump_root / "train_all", hours, langs)


def write_train_stats(train_all: Path, hours: Dict[str, float], langs: List[str]) -> None:
    """train_all/stats.npz (feature mean and std) and hours.json (training hours per language)."""
    stats = feature_stats(train_all / "feats.scp")
    with atomic_open(train_all / "stats.npz", "wb", encoding=None) as f:
        np.savez(f, **stats)
    with atomic_open(train_all / "hours.json") as f:
        json.dump({lang: round(hours[lang], 6) for lang in langs}, f, indent=1)
    print(f"multisoftmax_prepare: train_all: {int(stats['frames'])} frames; hours "
          + ", ".join(f"{k} {v:.3f}" for k, v in hours.items()), file=sys.stderr)
