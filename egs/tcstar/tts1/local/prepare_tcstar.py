#!/usr/bin/env python3
"""Kaldi data dirs from a TC-STAR-style corpus: one directory per speaker holding wav files and, with the same
file stem anywhere below it, a .txt transcript (one line) and optionally a .lab label file (HTS full-context
labels with start / end times in 100 ns, as written by this recipe's front end).

Writes OUT/<spk>_{train,valid,test}/ with wav.scp, text, utt2spk, spk2utt, utt2dur and lab.scp (utterances
with a .lab). Utterance ids are <spk>_<stem> (the stem alone when it already starts with <spk>_). Splits
follow sorted ids: the last --test-share of each speaker's audio is test, the --valid-share before it valid
(the paper: about 100 / 15 / 15 minutes).
"""
import argparse
import sys
from pathlib import Path

import soundfile

from local_models.common.datadir import write_data_dir


def get_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--speakers", nargs="*", help="speaker directories to use (default: every one)")
    p.add_argument("--valid-share", type=float, default=0.115)
    p.add_argument("--test-share", type=float, default=0.115)
    p.add_argument("db", help="corpus root: <db>/<speaker>/...")
    p.add_argument("out", help="where the data dirs go (data)")
    return p


def by_stem(root: Path, ext: str) -> dict:
    files = {}
    for f in sorted(root.rglob(f"*{ext}")):
        if f.stem in files:
            raise ValueError(f"{f}: a second {ext} file with stem '{f.stem}' (first: {files[f.stem]})")
        files[f.stem] = f
    return files


def read_transcript(path: Path) -> str:
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    if not lines:
        raise ValueError(f"{path}:1: empty transcript")
    if len(lines) > 1:
        raise ValueError(f"{path}:2: transcript has {len(lines)} non-empty lines; expected one")
    return lines[0]


def speaker_utts(spk_dir: Path):
    """[(utt, wav path, text, lab path or None, seconds)] of one speaker, sorted by utt id."""
    spk = spk_dir.name
    wavs, txts, labs = by_stem(spk_dir, ".wav"), by_stem(spk_dir, ".txt"), by_stem(spk_dir, ".lab")
    if not wavs:
        raise ValueError(f"{spk_dir}: no .wav files")
    rows = []
    for stem, wav in wavs.items():
        if stem not in txts:
            raise ValueError(f"{wav}: no transcript {stem}.txt under {spk_dir}")
        utt = stem if stem.startswith(spk + "_") else f"{spk}_{stem}"
        if any(c.isspace() for c in utt):
            raise ValueError(f"{wav}: file name has white space; Kaldi ids cannot")
        info = soundfile.info(str(wav))
        if info.channels != 1:
            raise ValueError(f"{wav}: {info.channels} channels; the recipe needs mono speech")
        rows.append((utt, wav.resolve(), read_transcript(txts[stem]), labs.get(stem), info.frames / info.samplerate))
    return sorted(rows, key=lambda r: r[0].encode())


def split(rows, valid_share: float, test_share: float):
    """(train, valid, test) rows: test = the last test_share of the audio, valid the valid_share before it."""
    total = sum(r[4] for r in rows)
    test, valid, acc = [], [], 0.0
    rest = list(rows)
    while rest and acc < test_share * total:
        acc += rest[-1][4]
        test.insert(0, rest.pop())
    acc = 0.0
    while rest and acc < valid_share * total:
        acc += rest[-1][4]
        valid.insert(0, rest.pop())
    if not rest or not valid or not test:
        raise ValueError(f"{len(rows)} utterances cannot be split into non-empty train / valid / test")
    return rest, valid, test


def main(argv=None):
    args = get_parser().parse_args(argv)
    db = Path(args.db)
    try:
        if not db.is_dir():
            raise ValueError(f"{db}: corpus directory does not exist (db.sh TCSTAR)")
        spk_dirs = [d for d in sorted(db.iterdir()) if d.is_dir()]
        if args.speakers:
            missing = sorted(set(args.speakers) - {d.name for d in spk_dirs})
            if missing:
                raise ValueError(f"{db}: no speaker directory {', '.join(missing)}")
            spk_dirs = [d for d in spk_dirs if d.name in args.speakers]
        for d in spk_dirs:
            rows = speaker_utts(d)
            for name, part in zip(("train", "valid", "test"), split(rows, args.valid_share, args.test_share)):
                out = Path(args.out) / f"{d.name}_{name}"
                labs = {u: str(Path(lab).resolve()) for u, _, _, lab, _ in part if lab is not None}
                extra = {"utt2dur": {u: f"{s:.4f}" for u, _, _, _, s in part}}
                if labs:
                    extra["lab.scp"] = labs
                elif (out / "lab.scp").exists():
                    (out / "lab.scp").unlink()  # a stale list from an earlier corpus
                write_data_dir(out, {u: str(w) for u, w, _, _, _ in part}, {u: d.name for u, *_ in part},
                               text={u: t for u, _, t, _, _ in part}, extra=extra)
                print(f"prepare_tcstar: {out}: {len(part)} utterances, {sum(r[4] for r in part) / 60:.1f} min, "
                      f"{len(labs)} with labels")
    except (ValueError, OSError, soundfile.LibsndfileError) as e:
        sys.exit(f"prepare_tcstar: {e}")


if __name__ == "__main__":
    main()
