"""Read a Fearless Steps FS02 SAD release into data/{train,dev,eval}.

Audio: every *.wav below a directory named train / dev / eval (case-insensitive; FS02 ships
`.../Tracks/Dev/fs02_dev_001.wav` style trees). Reference: for each recording stem, a `<stem>.txt`
with `<start> <end> <label>` lines (S/NS, speech/non-speech, 1/0) or a `<stem>.rttm`, found anywhere
under the corpus root. Writes wav.scp, utt2spk/spk2utt (recording = utterance = speaker), reco2dur,
ref.rttm and ref_segments. Recordings without a reference (eval) are kept, with no ref files.
"""
import argparse
import sys
from pathlib import Path

import soundfile

from local_models.common.datadir import DataDirError, write_data_dir
from local_models.sad.labels import read_label_list, read_rttm, write_rttm

SPLITS = ("train", "dev", "eval")


def find_audio(root: Path):
    out = {s: {} for s in SPLITS}
    for wav in sorted(root.rglob("*")):
        if wav.suffix.lower() != ".wav":
            continue
        split = next((p.lower() for p in wav.relative_to(root).parts[:-1] if p.lower() in SPLITS), None)
        if split is None:
            continue
        rec = wav.stem
        if rec in out[split]:
            raise DataDirError(wav, None, f"recording name '{rec}' appears twice (also {out[split][rec]})")
        out[split][rec] = wav.resolve()
    return out


def find_labels(root: Path):
    labels = {}
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() in (".txt", ".rttm") and path.is_file():
            labels.setdefault(path.stem, path)
    return labels


def reference_of(rec: str, path: Path):
    if path.suffix.lower() == ".rttm":
        return read_rttm(path).get(rec, [])
    return read_label_list(path)


def prepare(root: Path, out: Path) -> None:
    audio, labels = find_audio(root), find_labels(root)
    if not any(audio.values()):
        raise DataDirError(root, None, "no .wav files under a train/dev/eval directory")
    for split, recs in audio.items():
        if not recs:
            print(f"prepare_fs02: no {split} recordings under {root}", file=sys.stderr)
            continue
        reco2dur, ref = {}, {}
        for rec, wav in recs.items():
            info = soundfile.info(str(wav))
            if info.samplerate != 8000:
                print(f"prepare_fs02: {wav}: {info.samplerate} Hz (FS02 is 8 kHz); it will be resampled", file=sys.stderr)
            reco2dur[rec] = f"{info.frames / info.samplerate:.3f}"
            if rec in labels:
                ref[rec] = reference_of(rec, labels[rec])
        d = out / split
        extra = {"reco2dur": reco2dur}
        if ref:
            extra["ref_segments"] = {f"{r}-{round(s * 100):07d}-{round(e * 100):07d}": f"{r} {s:.3f} {e:.3f}"
                                     for r, iv in ref.items() for s, e in iv}
        write_data_dir(d, {r: str(w) for r, w in recs.items()}, {r: r for r in recs}, extra=extra)
        if ref:
            write_rttm(d / "ref.rttm", ref)
        print(f"prepare_fs02: {split}: {len(recs)} recordings, {len(ref)} with reference", file=sys.stderr)


def main(argv=None):
    p = argparse.ArgumentParser(prog="prepare_fs02", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("corpus_root")
    p.add_argument("data_root")
    args = p.parse_args(argv)
    try:
        prepare(Path(args.corpus_root), Path(args.data_root))
    except DataDirError as e:
        sys.exit(f"prepare_fs02: {e}")


if __name__ == "__main__":
    main()
