"""Build the espeak-ng mini corpus of the Indic recipe: data/<lang>_{train,dev,test} for en, hi, ta, gu.

Like the paper's Table 1 (train hours En-IN 10077, Hi-IN 10591, Ta-IN 925, Gu-IN 1205) two languages are
large and two small: by default 24 min of training speech for en and hi, 8 min for ta and gu (3:1, not
the paper's ~10:1, so that the small languages can still train a tiny model; with a quarter of this every
tiny model memorised its training set and stayed above 50 % dev CER), 1 min of dev and 1 min of
test per language. English is espeak's British voice (it has no Indian English); Hindi, Tamil and
Gujarati are spoken from native-script text. Sentences are 3-8 random CLDR words of the language
(local_models.common.texts.sentences); train, dev and test sentences are all different.

Speakers per language (ids <lang>-s01.., <lang>-d01.., <lang>-t01..; utterances <spk>-0001..):
    train  --train-spk voices     dev  --dev-spk other voices of the same espeak variants (timbres)
    test   --test-spk voices whose espeak variants (m1..m7, f1..f5) no train or dev voice of ANY language
           uses (the same held-out timbres for every language, at most 11): unseen speakers and timbres,
           and timbre carries no information about the language
Every voice also has its own rate, pitch and pitch range (synth.sample_voices).
Writes, 16 kHz: audio <wav_root>/wav/<utt>.wav, and per set wav.scp, text, utt2spk, spk2utt, utt2dur,
utt2num_samples, utt2lid (`<utt> <lang>`), phones.ctm (true phone times) and spk2voice
(`<spk> <espeak voice> rate=<wpm> pitch=<0-100> range=<0-100>`).
Deterministic in --seed (byte-identical files on a rerun); the audio and every data dir are built aside
and swapped in whole.
"""
from __future__ import annotations

import argparse
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from prepare_indic import PARTS, parse_langs  # sibling script in local/

from local_models.common.cli import positive
from local_models.common.dirops import check_built_dirs, replace_dirs
from local_models.common import synth, texts
from local_models.common.datadir import atomic_open, c_sort_key, iter_lines, read_table, write_data_dir

SAMPLE_RATE = 16000
# recipe language -> espeak-ng / texts language
ESPEAK_LANG = {"en": "en-gb", "hi": "hi", "ta": "ta", "gu": "gu"}
# mean seconds of a 3-8 word sentence at 175 words/min (measured on 40 sentences; ~1/rate)
SEC_PER_UTT_175 = {"en": 2.45, "hi": 2.72, "ta": 2.66, "gu": 2.65}
MIN_WORDS, MAX_WORDS = 3, 8
DEFAULT_TRAIN_MIN = "en=24 hi=24 ta=8 gu=8"
TABLES = ("text", "utt2spk", "utt2dur", "utt2num_samples")
SPK_TAG = {"train": "s", "dev": "d", "test": "t"}


def parse_minutes(value: str, langs: Sequence[str]) -> Dict[str, float]:
    """"en=24 hi=24 ta=8 gu=8" (spaces or commas) -> {lang: minutes}; every lang of `langs` needed,
    languages not in `langs` are ignored."""
    out = {}
    for field in value.replace(",", " ").split():
        lang, sep, minutes = field.partition("=")
        try:
            out[lang] = float(minutes)
        except ValueError:
            sep = ""
        if not sep or out[lang] <= 0:
            raise ValueError(f"--train-min: '{field}' is not <lang>=<minutes > 0>")
    missing = [lang for lang in langs if lang not in out]
    if missing:
        raise ValueError(f"--train-min '{value}' gives no minutes for {', '.join(missing)}")
    return {lang: out[lang] for lang in langs}


def test_variants(n_test: int, seed: int) -> List[str]:
    """The espeak variants (timbres) of the test voices: the SAME for every language and used by no train
    or dev voice of any language, at most 11 of the 12 so that training keeps one. Held out per language
    instead (as before 2026-11-24), a language's test timbres were in the other languages' training data
    and nowhere in its own, so timbre was a language cue that pointed away from the right language: a
    mean/std log-mel classifier scored 84 % LID on dev and 26 % on test, and the RNN-T LID head called
    every Gujarati test utterance Hindi."""
    variants = list(synth.VARIANTS)
    random.Random(f"test-variants:{seed}").shuffle(variants)
    return variants[:min(n_test, len(variants) - 1)]


def split_voices(lang: str, n_train: int, n_dev: int, n_test: int, seed: int) -> Dict[str, List[synth.Voice]]:
    """{part: voices}: all distinct; test voices use test_variants(), train and dev voices the others."""
    held = set(test_variants(n_test, seed))
    pool = synth.sample_voices(ESPEAK_LANG[lang], len(synth.VARIANTS) * (n_train + n_dev + n_test), seed)
    test = [v for v in pool if v.variant in held][:n_test]
    rest = [v for v in pool if v.variant not in held]
    return {"train": rest[:n_train], "dev": rest[n_train:n_train + n_dev], "test": test}


def utts_per_speaker(minutes: float, voices: Sequence[synth.Voice], lang: str) -> List[int]:
    """Utterances per voice for `minutes` in all, shared evenly (a fast voice says more); >= 1 each."""
    seconds = minutes * 60 / len(voices)
    return [max(1, round(seconds * v.rate / (SEC_PER_UTT_175[lang] * 175))) for v in voices]


def unique_sentences(lang: str, n: int, seed: int) -> List[str]:
    """n different sentences (texts.sentences is prefix-stable in n: draw more until n are unique)."""
    draw = n + 16
    while True:
        seen, out = set(), []
        for s in texts.sentences(ESPEAK_LANG[lang], draw, seed, MIN_WORDS, MAX_WORDS):
            if s not in seen:
                seen.add(s)
                out.append(s)
                if len(out) == n:
                    return out
        draw *= 2


def plan_language(lang: str, minutes: Dict[str, float], spk: Dict[str, int], seed: int) -> Dict[str, list]:
    """{part: [(utt, spk, text, voice), ...]} of one language; train, dev and test texts are disjoint."""
    voices = split_voices(lang, spk["train"], spk["dev"], spk["test"], seed)
    counts = {part: utts_per_speaker(minutes[part], voices[part], lang) for part in PARTS}
    sentences = iter(unique_sentences(lang, sum(sum(c) for c in counts.values()), seed))
    plan = {}
    for part in PARTS:
        items = []
        for i, (voice, n) in enumerate(zip(voices[part], counts[part]), 1):
            speaker = f"{lang}-{SPK_TAG[part]}{i:02d}"
            items.extend((f"{speaker}-{k:04d}", speaker, next(sentences), voice) for k in range(1, n + 1))
        plan[part] = items
    return plan


def voice_desc(v: synth.Voice) -> str:
    return f"{v.espeak_name} rate={v.rate} pitch={v.pitch} range={v.pitch_range}"


def write_set(dest: Path, lang: str, items: Sequence[synth.Item], tables: Dict[str, dict],
              ctm: Dict[str, List[str]], wav_dir: Path) -> float:
    """Write one data dir from the corpus-wide tables; return its minutes."""
    utts = sorted((utt for utt, _, _, _ in items), key=c_sort_key)
    sub = {name: {u: tables[name][u] for u in utts} for name in TABLES}
    write_data_dir(dest, {u: str(wav_dir / f"{u}.wav") for u in utts}, sub["utt2spk"], text=sub["text"],
                   extra={"utt2dur": sub["utt2dur"], "utt2num_samples": sub["utt2num_samples"],
                          "utt2lid": {u: lang for u in utts}})
    with atomic_open(dest / "phones.ctm") as f:
        for u in utts:
            f.writelines(ctm.get(u, []))
    voices = {spk: voice_desc(voice) for _, spk, _, voice in items}
    with atomic_open(dest / "spk2voice") as f:
        f.writelines(f"{spk} {voices[spk]}\n" for spk in sorted(voices, key=c_sort_key))
    return sum(float(d) for d in sub["utt2dur"].values()) / 60


def build_corpus(args, wav_root: Path, data_root: Path) -> List[Tuple[str, str, int, int, float]]:
    langs = parse_langs(args.langs)
    train_min = parse_minutes(args.train_min, langs)
    spk = {"train": args.train_spk, "dev": args.dev_spk, "test": args.test_spk}
    plans = {lang: plan_language(lang, {"train": train_min[lang], "dev": args.dev_min, "test": args.test_min},
                                 spk, args.seed) for lang in langs}
    items = [item for plan in plans.values() for part in PARTS for item in plan[part]]

    wav_build, data_build = wav_root / ".building", data_root / ".mini.building"
    for d in (wav_build, data_build):
        shutil.rmtree(d, ignore_errors=True)
    try:
        # one synthesis run over the whole corpus (one process pool); output depends only on (text, voice)
        synth.synthesize_corpus(items, wav_build / "wav", wav_build / "data", sample_rate=SAMPLE_RATE,
                                nj=args.nj, progress=None)  # a bar from 200 utterances on
        tables = {name: read_table(wav_build / "data" / name) for name in TABLES}
        ctm: Dict[str, List[str]] = {}
        for _, line in iter_lines(wav_build / "data" / "phones.ctm"):
            ctm.setdefault(line.split(maxsplit=1)[0], []).append(line + "\n")
        wav_dir = (wav_root / "wav").resolve()
        summary, built = [], {}
        for lang in langs:
            for part in PARTS:
                name = f"{lang}_{part}"
                built[name] = data_build / name
                minutes = write_set(built[name], lang, plans[lang][part], tables, ctm, wav_dir)
                n_spk = len({s for _, s, _, _ in plans[lang][part]})
                summary.append((name, part, n_spk, len(plans[lang][part]), minutes))
        check_built_dirs(built)
        wav_root.mkdir(parents=True, exist_ok=True)
        replace_dirs({"wav": wav_build / "wav"}, wav_root)
        replace_dirs(built, data_root)
    finally:
        for d in (wav_build, data_build):
            shutil.rmtree(d, ignore_errors=True)
    return summary


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="make_mini_corpus", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--langs", default="en hi ta gu", help="language codes (default: %(default)s)")
    p.add_argument("--train-min", default=DEFAULT_TRAIN_MIN,
                   help="minutes of training speech per language, '<lang>=<min> ...' (default: %(default)s)")
    p.add_argument("--dev-min", type=positive(float), default=1.0,
                   help="minutes of dev speech per language (default: %(default)s)")
    p.add_argument("--test-min", type=positive(float), default=1.0,
                   help="minutes of test speech per language (default: %(default)s)")
    p.add_argument("--train-spk", type=positive(int), default=8, help="training speakers per language (default: %(default)s)")
    p.add_argument("--dev-spk", type=positive(int), default=2, help="dev speakers per language (default: %(default)s)")
    p.add_argument("--test-spk", type=positive(int), default=3, help="test speakers per language (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed for voices and sentences (default: %(default)s)")
    p.add_argument("--nj", type=positive(int), default=2, help="synthesis processes (default: %(default)s)")
    p.add_argument("wav_root", help="audio goes to <wav_root>/wav/")
    p.add_argument("data_root", help="writes <data_root>/<lang>_{train,dev,test}")
    return p


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    start = time.time()
    try:
        summary = build_corpus(args, Path(args.wav_root), Path(args.data_root))
    except (ValueError, OSError, synth.EspeakUnavailable) as e:
        print(f"make_mini_corpus: error: {e}", file=sys.stderr)
        return 1
    for name, _, n_spk, n_utt, minutes in summary:
        print(f"make_mini_corpus: {name:9s} {n_spk:2d} speakers {n_utt:4d} utts {minutes:5.2f} min", file=sys.stderr)
    print(f"make_mini_corpus: done in {time.time() - start:.0f} s -> {args.data_root}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
