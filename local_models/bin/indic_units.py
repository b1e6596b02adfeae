"""Output units of the multi-softmax RNN-T recipe (egs/indic/asr1 stage 3).

For every language L of --langs, from DATA_ROOT/L_train/text only (dev and test never shape a vocabulary):
    LANG_ROOT/L/units.txt       <blank>, L's graphemes, the same with B_ (word start), <unk>: one per line
and LANG_ROOT/union/units.txt (every language's graphemes: the vanilla / one-hot baselines' softmax).
For every set S (default: L_train, L_dev, L_test of every language), with the language of each
utterance taken from DATA_ROOT/S/utt2lid:
    DATA_ROOT/S/text_norm       <utt> <normalised transcript>   (the WER reference)
    DATA_ROOT/S/text_units      <utt> B_x y z B_u ...           (the training target)
A dev/test unit missing from its language's units.txt (a grapheme never seen in L_train) is written as
<unk>, counted, reported on stderr and listed in LANG_ROOT/unknown_units (`<set> <unit> <count>`).
All files are written atomically; the same inputs give the same bytes.
"""
import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

from local_models.common.datadir import DataDirError, atomic_open, c_sort_key, iter_lines, read_table
from local_models.multisoftmax import units as U


def get_parser():
    p = argparse.ArgumentParser(prog="indic_units", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--langs", default="en hi ta gu",
                   help=f"language codes, space or comma separated (known: {', '.join(U.LANGS)}; default: %(default)s)")
    p.add_argument("--sets", default="",
                   help="data sets to turn into units (default: <lang>_train <lang>_dev <lang>_test of every language)")
    p.add_argument("data_root", help="holds <lang>_train/text and every set's data dir (e.g. data)")
    p.add_argument("lang_root", help="where the unit lists go (e.g. data/lang)")
    return p


def split_list(value: str) -> List[str]:
    return [x for x in value.replace(",", " ").split() if x]


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


def convert_set(data_dir: Path, vocabs: Dict[str, List[str]]) -> Tuple[int, Counter]:
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


def main(argv=None):
    args = get_parser().parse_args(argv)
    data_root, lang_root = Path(args.data_root), Path(args.lang_root)
    langs = split_list(args.langs)
    try:
        if not langs:
            raise ValueError("--langs is empty")
        for lang in langs:
            U.check_lang(lang)
        sets = split_list(args.sets) or [f"{lang}_{part}" for lang in langs for part in ("train", "dev", "test")]
        vocabs = {}
        for lang in langs:
            vocabs[lang] = build_language(data_root, lang_root, lang)
            n = len(U.graphemes_of(vocabs[lang]))
            print(f"indic_units: {lang}: {n} graphemes, {len(vocabs[lang])} units "
                  f"-> {lang_root / lang / 'units.txt'}", file=sys.stderr)
        union = U.union_vocab(vocabs.values())
        U.write_units(lang_root / "union" / "units.txt", union)
        print(f"indic_units: union: {len(union)} units -> {lang_root / 'union' / 'units.txt'}", file=sys.stderr)
        report = []
        for name in sets:
            total, unknown = convert_set(data_root / name, vocabs)
            n_unk = sum(unknown.values())
            detail = ""
            if unknown:
                top = sorted(unknown.items(), key=lambda kv: (-kv[1], kv[0]))
                detail = " (" + ", ".join(f"{u!r} x{c}" for u, c in top[:10]) + (", ..." if len(top) > 10 else "") + ")"
            print(f"indic_units: {name}: {total} units, {n_unk} unknown -> {U.UNK}{detail}", file=sys.stderr)
            report.extend(f"{name} {u} {c}\n" for u, c in sorted(unknown.items(), key=lambda kv: c_sort_key(kv[0])))
        with atomic_open(lang_root / "unknown_units") as f:
            f.writelines(report)
    except (DataDirError, ValueError, OSError) as e:
        print(f"indic_units: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
