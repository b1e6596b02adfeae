"""Build a ZeroSpeech-2019-like English mini corpus with espeak-ng: data/{train,voice,dev,test,test_voice_ref}.

Speakers (espeak-ng en-us voices from synth.sample_voices, all distinct; the dev and test voices use
espeak variants no training voice uses, as long as there are variants to spare):
    S01..Snn  unit-discovery speakers      V001  the target voice
    D01..Dnn  unseen dev speakers          T01..Tnn  unseen test speakers
Sentences: 3-8 CLDR words (texts.sentences), different ones for unit, voice, dev and test speech.
Writes, all 16 kHz, with text, utt2dur, utt2num_samples and phones.ctm (true phone times):
    data/train           S* + V001 (what the VQ-VAE trains on)
    data/voice           V001 only (what the inverter trains on)
    data/dev             D* (ABX on it makes the recipe's choices; ZeroSpeech 2019 itself has no dev set)
    data/test            T*, plus bitrate_list (all test utterances), synthesis_list (`<utt> V001`) and
                         voice_ref.scp (`<utt> <wav>`: the same sentence spoken by V001, for MCD)
    data/test_voice_ref  those V001 references as a data dir (utterance ids V001_<test utt>)
Audio: <wav_root>/{train,dev,test,test_voice_ref}/<utt>.wav. Deterministic in --seed (byte-identical
files on a rerun); every output directory is built aside and swapped in whole.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from prepare_zs2019 import SAMPLE_RATE, write_lists  # sibling script in local/

from local_models.common.cli import positive
from local_models.common.dirops import check_built_dirs, replace_dirs
from local_models.common import synth, texts
from local_models.common.datadir import atomic_open, c_sort_key, iter_lines, read_table, write_data_dir

LANG = "en-us"
VOICE_SPK = "V001"
SEC_PER_UTT_175 = 2.45  # mean seconds of a 3-8 word sentence at 175 words/min (measured; ~1/rate)
MIN_WORDS, MAX_WORDS = 3, 8
TABLES = ("text", "utt2spk", "utt2dur", "utt2num_samples")
Voices = Tuple[List[synth.Voice], synth.Voice, List[synth.Voice], List[synth.Voice]]


def split_voices(n_unit: int, n_test: int, seed: int, n_dev: int = 0) -> Voices:
    """(unit voices, target voice, test voices, dev voices). sample_voices cycles through the 12 espeak
    variants; training voices skip the test voices' variants while any are left, so test speakers differ
    from every training speaker in timbre, not only in rate and pitch. Dev voices are other draws of those
    held variants (unseen timbres, as the test's). The pool's prefix does not depend on n_dev, so adding a
    dev set changes no training or test voice."""
    pool = synth.sample_voices(LANG, n_test + len(synth.VARIANTS) * (n_unit + 1 + n_dev), seed)
    test = pool[:n_test]
    held = {v.variant for v in test}
    rest = pool[n_test:]
    if len(held) < len(synth.VARIANTS):
        dev = [v for v in rest if v.variant in held][:n_dev]
        rest = [v for v in rest if v.variant not in held]
    else:  # every variant is a test variant: dev voices follow the training ones
        dev = rest[n_unit + 1:n_unit + 1 + n_dev]
    return rest[1:n_unit + 1], rest[0], test, dev


def utts_per_speaker(minutes: float, voices: Sequence[synth.Voice]) -> List[int]:
    """Utterances per voice for `minutes` in all, shared evenly; at least one each."""
    seconds = minutes * 60 / len(voices)
    return [max(1, round(seconds * v.rate / (SEC_PER_UTT_175 * 175))) for v in voices]


def speaker_ids(prefix: str, n: int) -> List[str]:
    width = max(2, len(str(n)))
    return [f"{prefix}{i:0{width}d}" for i in range(1, n + 1)]


def make_items(speakers: Sequence[str], voices: Sequence[synth.Voice], minutes: float, seed: int) -> List[synth.Item]:
    """Items (utt, spk, text, voice) with utterance ids <spk>_0001, <spk>_0002, ..."""
    counts = utts_per_speaker(minutes, voices)
    sentences = iter(texts.sentences(LANG, sum(counts), seed, MIN_WORDS, MAX_WORDS))
    return [(f"{spk}_{k:04d}", spk, next(sentences), voice)
            for spk, voice, n in zip(speakers, voices, counts) for k in range(1, n + 1)]


def synth_set(items: Sequence[synth.Item], build: Path, name: str, wav_root: Path, nj: int) -> Dict[str, dict]:
    """Synthesise `items`; return their tables (wav.scp pointing at <wav_root>/<name>/) and CTM lines.

    synthesize_corpus insists on `<spk>-<n>` ids; ZeroSpeech ids are `<spk>_<n>`. So it runs on the
    dashed ids in a scratch dir, then the wavs are renamed into <build>/<name>/ and the tables re-keyed."""
    real = {utt.replace("_", "-", 1): utt for utt, _, _, _ in items}
    dashed = [(utt.replace("_", "-", 1), spk, text, voice) for utt, spk, text, voice in items]
    scratch = build / "scratch" / name
    synth.synthesize_corpus(dashed, scratch / "wav", scratch / "data", sample_rate=SAMPLE_RATE, nj=nj, progress=False)
    wav_dir = build / name
    wav_dir.mkdir(parents=True)
    for d, utt in real.items():
        os.replace(scratch / "wav" / f"{d}.wav", wav_dir / f"{utt}.wav")
    tables = {t: {real[k]: v for k, v in read_table(scratch / "data" / t).items()} for t in TABLES}
    tables["wav.scp"] = {utt: str(wav_root.resolve() / name / f"{utt}.wav") for utt in real.values()}
    tables["ctm"] = {utt: [] for utt in real.values()}
    for _, line in iter_lines(scratch / "data" / "phones.ctm"):
        d, rest = line.split(maxsplit=1)
        tables["ctm"][real[d]].append(f"{real[d]} {rest}\n")
    shutil.rmtree(scratch)
    return tables


def write_set(dest: Path, tables: Dict[str, dict], keep: Optional[set] = None) -> None:
    """Write the data dir of `tables` (restricted to the utterances in `keep`), with phones.ctm."""
    utts = sorted(keep if keep is not None else tables["utt2spk"], key=c_sort_key)
    sub = {name: {u: table[u] for u in utts} for name, table in tables.items()}
    write_data_dir(dest, sub["wav.scp"], sub["utt2spk"], text=sub["text"],
                   extra={"utt2dur": sub["utt2dur"], "utt2num_samples": sub["utt2num_samples"]})
    with atomic_open(dest / "phones.ctm") as f:
        for utt in utts:
            f.writelines(sub["ctm"][utt])


def minutes(tables: Dict[str, dict], keep=None) -> float:
    return sum(float(d) for u, d in tables["utt2dur"].items() if keep is None or u in keep) / 60


def build_corpus(args, wav_root: Path, data_root: Path) -> None:
    unit_voices, target, test_voices, dev_voices = split_voices(args.unit_spk, args.test_spk, args.seed, args.dev_spk)
    # One sentence stream per part (seeds 3s, 3s+1, 3s+2 and dev's -(s+1) never collide across --seed values).
    train_items = make_items(speaker_ids("S", len(unit_voices)), unit_voices, args.unit_min, 3 * args.seed) + \
        make_items([VOICE_SPK], [target], args.voice_min, 3 * args.seed + 1)
    test_items = make_items(speaker_ids("T", len(test_voices)), test_voices, args.test_min, 3 * args.seed + 2)
    dev_items = make_items(speaker_ids("D", len(dev_voices)), dev_voices, args.dev_min, -(args.seed + 1))
    ref_items = [(f"{VOICE_SPK}_{utt}", VOICE_SPK, text, target) for utt, _, text, _ in test_items]

    wav_build, data_build = wav_root / ".building", data_root / ".mini.building"
    for d in (wav_build, data_build):
        shutil.rmtree(d, ignore_errors=True)
    sets = {name: synth_set(items, wav_build, name, wav_root, args.nj)
            for name, items in (("train", train_items), ("dev", dev_items), ("test", test_items),
                                ("test_voice_ref", ref_items))}
    voice_utts = {u for u, s in sets["train"]["utt2spk"].items() if s == VOICE_SPK}
    built = {name: data_build / name for name in ("train", "voice", "dev", "test", "test_voice_ref")}
    write_set(built["train"], sets["train"])
    write_set(built["voice"], sets["train"], voice_utts)
    write_set(built["dev"], sets["dev"])
    write_set(built["test"], sets["test"])
    write_set(built["test_voice_ref"], sets["test_voice_ref"])
    test_utts = list(sets["test"]["utt2spk"])
    write_lists(built["test"], test_utts, {u: VOICE_SPK for u in test_utts})
    write_voice_ref(built["test"], sets["test_voice_ref"]["wav.scp"])
    check_built_dirs(built, check_text=True)
    replace_dirs({name: wav_build / name for name in sets}, wav_root)
    replace_dirs(built, data_root)
    for d in (wav_build, data_build):
        shutil.rmtree(d, ignore_errors=True)
    print(f"make_mini_corpus: unit {minutes(sets['train']) - minutes(sets['train'], voice_utts):.1f} min "
          f"({len(unit_voices)} speakers), voice {minutes(sets['train'], voice_utts):.1f} min, "
          f"dev {minutes(sets['dev']):.1f} min ({len(dev_voices)} speakers), "
          f"test {minutes(sets['test']):.1f} min ({len(test_voices)} speakers), "
          f"test_voice_ref {minutes(sets['test_voice_ref']):.1f} min", file=sys.stderr)


def write_voice_ref(test_dir: Path, ref_wav_scp: Dict[str, str]) -> None:
    """voice_ref.scp: `<test utt> <wav of the same sentence spoken by the target voice>`."""
    prefix = f"{VOICE_SPK}_"
    rows = sorted(((ref[len(prefix):], path) for ref, path in ref_wav_scp.items()), key=lambda r: c_sort_key(r[0]))
    with atomic_open(test_dir / "voice_ref.scp") as f:
        f.writelines(f"{utt} {path}\n" for utt, path in rows)


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="make_mini_corpus", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--unit-min", type=positive(float), default=12.0,
                   help="minutes of unit-discovery speech (default: %(default)s)")
    p.add_argument("--voice-min", type=positive(float), default=5.0, help="minutes of target-voice speech (default: %(default)s)")
    p.add_argument("--test-min", type=positive(float), default=3.0, help="minutes of test speech (default: %(default)s)")
    p.add_argument("--dev-min", type=positive(float), default=3.0,
                   help="minutes of dev speech: the set the recipe's choices are made on (default: %(default)s)")
    p.add_argument("--unit-spk", type=positive(int), default=8, help="unit-discovery speakers (default: %(default)s)")
    p.add_argument("--test-spk", type=positive(int), default=4, help="test speakers (default: %(default)s)")
    p.add_argument("--dev-spk", type=positive(int), default=4, help="dev speakers (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed for voices and sentences (default: %(default)s)")
    p.add_argument("--nj", type=positive(int), default=2, help="synthesis processes (default: %(default)s)")
    p.add_argument("wav_root", help="audio goes to <wav_root>/{train,dev,test,test_voice_ref}/")
    p.add_argument("data_root", help="writes <data_root>/{train,voice,dev,test,test_voice_ref}")
    return p


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    start = time.time()
    try:
        build_corpus(args, Path(args.wav_root), Path(args.data_root))
    except (ValueError, OSError, synth.EspeakUnavailable) as e:
        print(f"make_mini_corpus: error: {e}", file=sys.stderr)
        return 1
    print(f"make_mini_corpus: done in {time.time() - start:.0f} s -> {args.data_root}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
