"""Training inputs of the multilingual RNN-T systems (egs/indic/asr1 stage 4, before training).

For every set S of --sets (default <lang>_{train,dev,test} of every --langs language), from
DATA_ROOT/S/{text_units,utt2lid} (stage 3), DUMP_ROOT/S/feats.{scp,shape} (stage 2) and
LANG_ROOT/union/units.txt:
    DUMP_ROOT/S/text_int        <utt> union-vocabulary unit ids   (every system's target)
    DUMP_ROOT/S/lid_int         <utt> language id (position in --langs)
    DUMP_ROOT/S/utt2category    <utt> <lang>  (ESPnet's folded sampler: single-language mini-batches)
and the pooled multilingual sets DUMP_ROOT/train_all and DUMP_ROOT/dev_all (every language's train / dev,
same files, plus feats.scp and feats.shape), and DUMP_ROOT/train_mixed: train_all without utt2category (ESPnet then
mixes languages within a mini-batch). DUMP_ROOT/train_all/stats.npz holds the mean and standard
deviation of the pooled training frames (global feature normalisation of every system) and the hours per
language. Errors name the file and line; files are written atomically; the same inputs give the same bytes.
"""
import argparse
import json
import sys
from pathlib import Path
from typing import Dict, List

import numpy as np

from local_models.common.datadir import DataDirError, atomic_open, c_sort_key, iter_lines, read_table
from local_models.multisoftmax import units as U


def get_parser():
    p = argparse.ArgumentParser(prog="indic_prepare", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--langs", default="en hi ta gu", help="language codes in LID-id order (default: %(default)s)")
    p.add_argument("--sets", default="", help="sets to convert (default: <lang>_{train,dev,test} of every language)")
    p.add_argument("--frame-shift-ms", type=float, default=10.0, help="feature frame shift (hours per language)")
    p.add_argument("data_root", help="data dirs with text_units and utt2lid (e.g. data)")
    p.add_argument("lang_root", help="unit lists (e.g. data/lang)")
    p.add_argument("dump_root", help="feature dirs (e.g. dump/fbank)")
    return p


def split_list(value: str) -> List[str]:
    return [x for x in value.replace(",", " ").split() if x]


def require(path: Path, made_by: str) -> Path:
    if not path.is_file():
        raise DataDirError(path, None, f"missing ({made_by} makes it)")
    return path


def convert_set(data_dir: Path, dump_dir: Path, union: Dict[str, int], langs: List[str]) -> Dict[str, int]:
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


def main(argv=None):
    args = get_parser().parse_args(argv)
    data_root, lang_root, dump_root = Path(args.data_root), Path(args.lang_root), Path(args.dump_root)
    try:
        langs = split_list(args.langs)
        if not langs:
            raise ValueError("--langs is empty")
        for lang in langs:
            U.check_lang(lang)
        union = {u: i for i, u in enumerate(U.read_units(lang_root / "union" / "units.txt"))}
        sets = split_list(args.sets) or [f"{lang}_{part}" for lang in langs for part in ("train", "dev", "test")]
        hours = {}
        for name in sets:
            shapes = convert_set(data_root / name, dump_root / name, union, langs)
            if name.endswith("_train"):
                hours[name[:-len("_train")]] = sum(shapes.values()) * args.frame_shift_ms / 3.6e6
            print(f"indic_prepare: {name}: {len(shapes)} utterances -> {dump_root / name}/text_int", file=sys.stderr)
        for name, part in (("train_all", "train"), ("dev_all", "dev")):
            parts = [f"{lang}_{part}" for lang in langs]
            if all(p in sets for p in parts):
                pool(dump_root, name, parts)
                if part == "train":
                    pool(dump_root, "train_mixed", parts, category=False)
        if all(f"{lang}_train" in sets for lang in langs):
            stats = feature_stats(dump_root / "train_all" / "feats.scp")
            with atomic_open(dump_root / "train_all" / "stats.npz", "wb", encoding=None) as f:
                np.savez(f, **stats)
            with atomic_open(dump_root / "train_all" / "hours.json") as f:
                json.dump({lang: round(hours[lang], 6) for lang in langs}, f, indent=1)
            print(f"indic_prepare: train_all: {int(stats['frames'])} frames; hours "
                  + ", ".join(f"{k} {v:.3f}" for k, v in hours.items()), file=sys.stderr)
    except (DataDirError, ValueError, OSError) as e:
        print(f"indic_prepare: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
