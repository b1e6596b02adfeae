"""Read a Fearless Steps Phase-2 (FS02) SAD release into data/{train,dev,eval}.

The release (FS02 challenge corpus; the FS02 scoring toolkit's egs/ref_gt/SAD shows the reference format):
  Data/Audio/Tracks/{Train,Dev,Eval}/FS02_<split>_NNN.wav        8 kHz mono, about 30 min each
  Data/Transcripts/SAD/{Train,Dev}/FS02_<split>_NNN.txt          one reference per recording; none for Eval
Audio: every *.wav below a directory named train / dev / eval (any depth, any case). Reference of a recording: the
`<stem>.txt` (12 tab-separated columns `file channel start end S|NS kind X X X X X X`, or `start end label`) or
`<stem>.rttm` found under the corpus root, one under a directory named SAD first (the release also holds other
tasks' transcripts). Every train and dev recording needs one (an error names those without: they would be trained
and scored as all non-speech); a set with no reference at all (FS02's Eval: the challenge scored submissions) is
decode-only; a set with some is an error. Nothing is written before every check passed. Writes wav.scp,
utt2spk/spk2utt (recording = utterance = speaker), reco2dur and, for a referenced set, ref.rttm and ref_segments.
"""
import argparse
import sys
from pathlib import Path

import soundfile

from local_models.common.datadir import DataDirError, write_data_dir
from local_models.sad.labels import read_label_list, read_rttm, write_rttm

SPLITS = ("train", "dev", "eval")
REFERENCED = ("train", "dev")  # every recording needs a reference: the nets train and thresholds are tuned on them


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
    """{stem: reference file}: the ones under a directory named SAD win over others of the same stem."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() in (".txt", ".rttm") and path.is_file():
            found.setdefault(path.stem, []).append(path)
    labels = {}
    for stem, paths in found.items():
        sad = [p for p in paths if "sad" in (q.lower() for q in p.relative_to(root).parts[:-1])]
        paths = sad or paths
        if len(paths) > 1:
            raise DataDirError(paths[1], None, f"a second reference of '{stem}' (also {paths[0]})")
        labels[stem] = paths[0]
    return labels


def reference_of(rec: str, path: Path):
    if path.suffix.lower() == ".rttm":
        ref = read_rttm(path)
        if rec not in ref:
            raise DataDirError(path, None, f"has no line of recording '{rec}'")
        return ref[rec]
    return read_label_list(path, rec)


def read_split(split: str, recs: dict, labels: dict):
    """(reco2dur, reference or None) of one split; DataDirError when some recordings lack a reference (train and
    dev: any)."""
    reco2dur, ref = {}, {}
    for rec, wav in recs.items():
        info = soundfile.info(str(wav))
        if info.samplerate != 8000:
            print(f"prepare_fs02: {wav}: {info.samplerate} Hz (FS02 is 8 kHz); it will be resampled", file=sys.stderr)
        reco2dur[rec] = f"{info.frames / info.samplerate:.3f}"
        if rec in labels:
            ref[rec] = reference_of(rec, labels[rec])
    missing = [str(recs[r]) for r in recs if r not in ref]
    if missing and (ref or split in REFERENCED):
        shown = ", ".join(missing[:5]) + (f" ... ({len(missing)} in all)" if len(missing) > 5 else "")
        raise DataDirError(missing[0], None, f"no reference (<stem>.txt or <stem>.rttm) for {split} recording(s) "
                                             f"{shown}: they would count as all non-speech")
    return reco2dur, (ref or None)


def write_split(d: Path, recs: dict, reco2dur: dict, ref) -> None:
    extra = {"reco2dur": reco2dur}
    if ref is not None:
        extra["ref_segments"] = {f"{r}-{round(s * 100):07d}-{round(e * 100):07d}": f"{r} {s:.3f} {e:.3f}"
                                 for r, iv in ref.items() for s, e in iv}
    write_data_dir(d, {r: str(w) for r, w in recs.items()}, {r: r for r in recs}, extra=extra)
    if ref is not None:
        write_rttm(d / "ref.rttm", ref, {r: float(v) for r, v in reco2dur.items()})


def prepare(root: Path, out: Path) -> None:
    audio, labels = find_audio(root), find_labels(root)
    if not any(audio.values()):
        raise DataDirError(root, None, "no .wav files under a train/dev/eval directory")
    read = {split: read_split(split, recs, labels) for split, recs in audio.items() if recs}  # all checks first
    for split, recs in audio.items():
        if not recs:
            print(f"prepare_fs02: no {split} recordings under {root}", file=sys.stderr)
            continue
        reco2dur, ref = read[split]
        write_split(out / split, recs, reco2dur, ref)
        print(f"prepare_fs02: {split}: {len(recs)} recordings, "
              + ("decode only (no reference)" if ref is None else "all with a reference"), file=sys.stderr)


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
