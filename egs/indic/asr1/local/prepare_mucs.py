"""Read MUCS 2021 (Multilingual and code-switching ASR challenge, Interspeech 2021; subtask 1, the public Indic set)
as distributed into data/<lang>_{train,dev,test}.

Layout under DB (db.sh's INDIC; local/data.sh tells it from the Kaldi-dir layout by the language folders):
    DB/<Language>/{train,test}/transcription.txt   one `<utt_id> <transcript>` per line (UTF-8; space or tab
                                                   after the id), native script
    DB/<Language>/{train,test}/audio/<utt_id>.wav  one utterance per file
    <Language>: Gujarati gu, Hindi hi, Marathi mr, Odia or, Tamil ta, Telugu te (and English en, for English
    data laid out the same way; MUCS itself has none). Folders of languages not in --langs are ignored.
The corpus names no speakers: every utterance is its own speaker (as the MUCS baseline recipes prepare it).

Dev: MUCS has no dev set. <lang>_dev is carved from <lang>_train by a fixed rule: the ceil(DEV_PERCENT % of N)
train utterances (at least 1) whose SHA-1 of the utterance id (UTF-8) is smallest, hex digests compared; the
rest stay in <lang>_train, the test set is MUCS's test. The rule depends on the ids only (no seed, not on file
order) and moves an utterance only when --dev-percent changes.

Sample rate: MUCS records Hindi, Marathi and Odia at 8 kHz, Tamil, Telugu and Gujarati at 16 kHz. Upsampling all
to 16 kHz lets a model tell the 8 kHz languages by their missing upper band alone, which inflates LID and
LID-free results (the MUCS baselines downsample everything to 8 kHz for this reason). --sample-rate lowest (the
default) prepares every language at the lowest rate found in the set; a number forces that rate. The rate is
written to DATA/sample_rate (stage 2 reads every set's audio at it: dump/fbank/fbank.conf); wav.scp keeps the
files as recorded. Languages of different rates get a warning naming each language's rate and the prepared rate.

Writes DATA/<lang>_<part>/ (wav.scp, text, utt2spk, spk2utt, utt2lid; ids prefixed "<lang>-"), DATA/sample_rate
and DATA/prepared.json (layout, rates per language, prepared rate, the dev rule: RESULTS.md states them). Every
output is built aside, checked and swapped in whole: an error leaves DATA as it was. Errors name the file and line.
"""
from __future__ import annotations

import argparse
import hashlib
import math
import sys
from pathlib import Path
from typing import Dict, List, Mapping, Set, Tuple

import soundfile

sys.path.insert(0, str(Path(__file__).resolve().parent))  # prepare_indic beside this script (run as a file)
from prepare_indic import parse_langs, read_text, write_prepared  # noqa: E402

from local_models.common.datadir import DataDirError, write_data_dir  # noqa: E402
from local_models.common.dirops import build_and_swap  # noqa: E402

# the corpus's language folders (as distributed) -> the recipe's codes (local_models/multisoftmax/units.py LANGS)
FOLDERS: Dict[str, str] = {"Gujarati": "gu", "Hindi": "hi", "Marathi": "mr", "Odia": "or", "Tamil": "ta",
                           "Telugu": "te", "English": "en"}
CODES = {code: folder for folder, code in FOLDERS.items()}
MUCS_PARTS = ("train", "test")
DEV_PERCENT = 5.0  # MUCS 2021's published split of Hindi / Marathi / Odia is 95 h train + 5 h dev

Utt = Tuple[str, str, Path]  # (utterance id as distributed, transcript, wav)


def is_mucs(db: Path) -> bool:
    """DB holds at least one language folder of the MUCS layout (<Language>/train/transcription.txt)."""
    return any((db / folder / "train" / "transcription.txt").is_file() for folder in FOLDERS)


def dev_rule(percent: float) -> str:
    return (f"MUCS has no dev set: <lang>_dev is the ceil({percent:g} %) of each language's train utterances "
            "(at least 1) with the smallest SHA-1 of the utterance id; the rest is <lang>_train")


def carve_dev(utt_ids: List[str], percent: float) -> Set[str]:
    """The dev utterances of one language's train ids (dev_rule)."""
    if len(utt_ids) < 2:
        raise ValueError(f"{len(utt_ids)} train utterance(s): too few to carve a dev set from")
    n = min(len(utt_ids) - 1, max(1, math.ceil(len(utt_ids) * percent / 100)))
    return set(sorted(utt_ids, key=lambda u: hashlib.sha1(u.encode("utf-8")).hexdigest())[:n])


def read_part(db: Path, lang: str, part: str) -> List[Utt]:
    """The utterances of DB/<Language>/<part>: transcripts, each with its audio file (checked to exist)."""
    folder = db / CODES[lang] / part
    trans = folder / "transcription.txt"
    if not trans.is_file():
        present = ", ".join(f"{f} {c}" for f, c in FOLDERS.items() if (db / f / "train").is_dir()) or "none"
        raise DataDirError(trans, None, f"missing: no {CODES[lang]} ({lang}) {part} set in the MUCS layout "
                                        f"(languages here: {present}; set --langs to their codes)")
    out = []
    for utt, text in read_text(trans, lang).items():
        wav = folder / "audio" / f"{utt}.wav"
        if not wav.is_file():
            raise DataDirError(trans, _line_of(trans, utt), f"'{utt}': no audio file {wav}")
        out.append((utt, text, wav.resolve()))
    return out


def _line_of(path: Path, utt: str) -> int:
    with open(path, encoding="utf-8") as f:
        return next((n for n, line in enumerate(f, 1) if line.split(maxsplit=1)[:1] == [utt]), 0)


def rates_of(utts: List[Utt]) -> Set[int]:
    """The sample rates of the utterances' files (headers only)."""
    rates = set()
    for _, _, wav in utts:
        try:
            rates.add(soundfile.info(str(wav)).samplerate)
        except RuntimeError as e:
            raise DataDirError(wav, None, f"cannot read the audio header ({e})") from None
    return rates


def prepared_rate(lang_rates: Mapping[str, Set[int]], policy: str) -> int:
    """--sample-rate: 'lowest' (the lowest rate of any language) or a rate in Hz."""
    if policy == "lowest":
        return min(min(r) for r in lang_rates.values())
    if not policy.isdigit() or int(policy) <= 0:
        raise ValueError(f"--sample-rate {policy!r}: expected 'lowest' or a rate in Hz, e.g. 8000")
    return int(policy)


def rate_warning(lang_rates: Mapping[str, Set[int]], rate: int, policy: str) -> str:
    """A warning naming each rate's languages when the languages differ in rate (else '')."""
    by_rate: Dict[int, List[str]] = {}
    for lang, rates in sorted(lang_rates.items()):
        for r in rates:
            by_rate.setdefault(r, []).append(lang)
    if len(by_rate) < 2:
        return ""
    spread = "; ".join(f"{', '.join(langs)} at {r} Hz" for r, langs in sorted(by_rate.items()))
    up = sorted({l for r, langs in by_rate.items() if r < rate for l in langs})
    down = sorted({l for r, langs in by_rate.items() if r > rate for l in langs})
    tail = (f"; {', '.join(up)} upsampled: a model can tell them by their missing upper band" if up else
            f"; {', '.join(down)} downsampled: no language can be told by its bandwidth")
    return f"languages differ in sample rate ({spread}); prepared at {rate} Hz (--sample-rate {policy}){tail}"


def prepare(db: Path, data_root: Path, langs: List[str], policy: str = "lowest",
            dev_percent: float = DEV_PERCENT) -> Dict[str, object]:
    """Read DB's languages into DATA_ROOT; return DATA/prepared.json's content (+ the warning, '' if none)."""
    if not db.is_dir():
        raise DataDirError(db, None, "corpus directory (db.sh: INDIC) does not exist")
    if not 0 < dev_percent < 100:
        raise ValueError(f"--dev-percent {dev_percent}: expected a percentage between 0 and 100")
    sets: Dict[str, List[Utt]] = {}
    for lang in langs:
        if lang not in CODES:
            raise ValueError(f"language '{lang}' has no MUCS folder (known: "
                             + ", ".join(f"{f} {c}" for f, c in FOLDERS.items()) + ")")
        train = read_part(db, lang, "train")
        try:
            dev = carve_dev([u for u, _, _ in train], dev_percent)
        except ValueError as e:
            raise DataDirError(db / CODES[lang] / "train" / "transcription.txt", None, str(e)) from None
        sets[f"{lang}_train"] = [u for u in train if u[0] not in dev]
        sets[f"{lang}_dev"] = [u for u in train if u[0] in dev]
        sets[f"{lang}_test"] = read_part(db, lang, "test")
    lang_rates = {lang: rates_of(sets[f"{lang}_train"] + sets[f"{lang}_dev"] + sets[f"{lang}_test"])
                  for lang in langs}
    rate = prepared_rate(lang_rates, policy)
    info = {"layout": "mucs", "sample_rate": rate, "rate_policy": policy,
            "rates": {lang: sorted(r) for lang, r in lang_rates.items()}, "dev": dev_rule(dev_percent),
            "utterances": {name: len(utts) for name, utts in sets.items()}}
    write_all(data_root, sets, info)
    return {**info, "warning": rate_warning(lang_rates, rate, policy)}


def write_all(data_root: Path, sets: Mapping[str, List[Utt]], info: Mapping[str, object]) -> None:
    """Every data dir built aside, checked, swapped in; then sample_rate and prepared.json."""
    def writer(name: str, utts: List[Utt]):
        lang = name.rsplit("_", 1)[0]
        ids = {utt: f"{lang}-{utt}" for utt, _, _ in utts}
        return lambda path: write_data_dir(path, {ids[u]: str(wav) for u, _, wav in utts},
                                           {ids[u]: ids[u] for u, _, _ in utts}, text={ids[u]: t for u, t, _ in utts},
                                           extra={"utt2lid": {ids[u]: lang for u, _, _ in utts}})

    build_and_swap(data_root, {name: writer(name, utts) for name, utts in sets.items()}, "mucs")
    write_prepared(data_root, info, info["sample_rate"])


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="prepare_mucs", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--langs", default="gu hi mr or ta te",
                   help="language codes, space or comma separated (folders: "
                        + ", ".join(f"{f} {c}" for f, c in FOLDERS.items()) + "; default: %(default)s)")
    p.add_argument("--sample-rate", default="lowest",
                   help="rate every language is prepared at: 'lowest' (the lowest rate in the set) or Hz "
                        "(default: %(default)s)")
    p.add_argument("--dev-percent", type=float, default=DEV_PERCENT,
                   help="share of each language's train utterances carved out as dev (default: %(default)s)")
    p.add_argument("--layout", action="store_true",
                   help="only print the layout of DB: 'mucs' (a <Language>/train/transcription.txt) or 'kaldi'")
    p.add_argument("db", help="the MUCS root holding <Language>/{train,test}/")
    p.add_argument("data_root", nargs="?", help="writes <data_root>/<lang>_{train,dev,test}/")
    return p


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    if args.layout:
        print("mucs" if is_mucs(Path(args.db)) else "kaldi")
        return 0
    if args.data_root is None:
        get_parser().error("data_root is required")
    try:
        info = prepare(Path(args.db), Path(args.data_root), parse_langs(args.langs), args.sample_rate,
                       args.dev_percent)
    except (DataDirError, ValueError, OSError) as e:
        print(f"prepare_mucs: error: {e}", file=sys.stderr)
        return 1
    if info["warning"]:
        print(f"prepare_mucs: warning: {info['warning']}", file=sys.stderr)
    rates = ", ".join(f"{lang} {'/'.join(map(str, r))} Hz" for lang, r in info["rates"].items())
    print(f"prepare_mucs: recorded rates: {rates}; prepared at {info['sample_rate']} Hz ({args.data_root}/sample_rate)",
          file=sys.stderr)
    print("prepare_mucs: " + ", ".join(f"{name} {n} utts" for name, n in info["utterances"].items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
