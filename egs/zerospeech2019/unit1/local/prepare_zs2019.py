"""Read the ZeroSpeech 2019 English corpus into data/{train,voice,test}.

Layout under CORPUS_ROOT (the directory holding `english/`, as db.sh's ZEROSPEECH2019):
    english/train/unit/*.wav    unit-discovery speakers (S015_0361841101.wav: speaker S015)
    english/train/voice/*.wav   the target voice(s) (V001_..., V002_...)
    english/test/*.wav          test speakers
    english/synthesis.txt       test utterances to resynthesise, `test/S002_0379088085 V002` lines
                                (a line with only an id gets the first voice speaker)
    bitrate_filelist.txt        optional official bitrate list (`S011_4019527684.txt 4.883875` lines),
                                looked for in english/, CORPUS_ROOT and CORPUS_ROOT/info_test/english/
                                (or given with --bitrate-filelist); without it every test utterance counts
  (the ZeroSpeech 2020 release nests all of this under 2019/: point ZEROSPEECH2019 at <release>/2019)
With --abx-item, the evaluation package's ABXpy item file of english/test (header `#file onset offset #phone
prev-phone next-phone speaker`, one triphone token a row; the corpus ships no alignment) becomes data/test/abx.item,
its file column reduced to the utterance id; every file it names must be a test utterance. An ABXpy task file
(.abx, HDF5) is not read: give the .item file the task was built from.
Writes, with speaker = file-name prefix before the first '_' and every wav checked to be 16 kHz mono:
    data/train   unit + voice speakers (what the VQ-VAE trains on)
    data/voice   voice speakers only (what the inverter trains on)
    data/test    test speakers, plus bitrate_list (one utterance per line), synthesis_list (`<utt> <voice>`) and,
                 with --abx-item, abx.item
each with wav.scp, utt2spk, spk2utt and utt2dur (no text: the corpus has none). Every directory is
built aside and swapped in whole, so an interrupted run leaves the previous one intact.
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional

import soundfile

from local_models.common.datadir import DataDirError, atomic_open, c_sort_key, iter_lines, write_data_dir
from local_models.common.dirops import check_built_dirs, replace_dirs
from local_models.vqvae.items import Item, ItemFileError, read_item_file, write_item_file

SAMPLE_RATE = 16000
BITRATE_CANDIDATES = ("english/bitrate_filelist.txt", "bitrate_filelist.txt", "info_test/english/bitrate_filelist.txt")


def speaker_of(path: Path) -> str:
    spk, sep, rest = path.stem.partition("_")
    if not (spk and sep and rest):
        raise DataDirError(path, None, "file name is not <speaker>_<id>.wav (e.g. S015_0361841101.wav)")
    return spk


def scan_wavs(directory: Path) -> Dict[str, Path]:
    """{utterance id (file stem): absolute path} of the *.wav files in `directory`."""
    if not directory.is_dir():
        raise DataDirError(directory, None, "not a directory")
    wavs = {p.stem: p.resolve() for p in sorted(directory.glob("*.wav"))}
    if not wavs:
        raise DataDirError(directory, None, "no .wav files")
    return wavs


def durations(wavs: Mapping[str, Path]) -> Dict[str, str]:
    """utt2dur values; every file must be 16 kHz mono."""
    out = {}
    for utt, path in wavs.items():
        try:
            info = soundfile.info(str(path))
        except RuntimeError as e:
            raise DataDirError(path, None, f"unreadable audio ({e})") from None
        if info.samplerate != SAMPLE_RATE:
            raise DataDirError(path, None, f"sample rate {info.samplerate} Hz, expected {SAMPLE_RATE}")
        if info.channels != 1:
            raise DataDirError(path, None, f"{info.channels} channels, expected mono")
        out[utt] = f"{info.frames / info.samplerate:.3f}"
    return out


def write_wav_dir(dest: Path, wavs: Mapping[str, Path], utt2dur: Mapping[str, str]) -> None:
    utt2spk = {utt: speaker_of(path) for utt, path in wavs.items()}
    write_data_dir(dest, {u: str(p) for u, p in wavs.items()}, utt2spk, extra={"utt2dur": dict(utt2dur)})


def utt_id(field: str) -> str:
    """`test/S002_0379088085`, `S011_4019527684.txt` or `S002_0379088085.wav` -> the utterance id."""
    name = field.replace("\\", "/").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name


def read_synthesis(path: Path, test_utts: Iterable[str], voices: List[str]) -> Dict[str, str]:
    """{test utt: target voice} from synthesis.txt; ids must be test utterances, voices voice speakers."""
    test_utts, out = set(test_utts), {}
    for lineno, line in iter_lines(path):
        fields = line.split()
        if not fields:
            continue
        utt = utt_id(fields[0])
        voice = fields[1] if len(fields) > 1 else voices[0]
        if utt not in test_utts:
            raise DataDirError(path, lineno, f"'{utt}' is not a file of english/test")
        if voice not in voices:
            raise DataDirError(path, lineno, f"voice '{voice}' is not a speaker of english/train/voice "
                               f"({', '.join(voices)})")
        if utt in out:
            raise DataDirError(path, lineno, f"'{utt}' listed twice")
        out[utt] = voice
    if not out:
        raise DataDirError(path, None, "no utterances listed")
    return out


def find_bitrate_list(root: Path, explicit: Optional[str]) -> Optional[Path]:
    if explicit:
        if not Path(explicit).is_file():
            raise DataDirError(explicit, None, "--bitrate-filelist: file does not exist")
        return Path(explicit)
    return next((root / c for c in BITRATE_CANDIDATES if (root / c).is_file()), None)


def read_bitrate_list(path: Path, test_utts: Iterable[str]) -> List[str]:
    test_utts, out = set(test_utts), []
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        utt = utt_id(line.split()[0])
        if utt not in test_utts:
            raise DataDirError(path, lineno, f"'{utt}' is not a file of english/test")
        out.append(utt)
    if not out:
        raise DataDirError(path, None, "no utterances listed")
    return out


def read_abx_items(path: Path, test_utts: Iterable[str]) -> List[Item]:
    """The items of the official item file, file column reduced to the utterance id (`test/S002_x.wav` ->
    `S002_x`); an item of a file that is not a test utterance is an error naming its line."""
    if path.suffix == ".abx":
        raise DataDirError(path, None, "an ABXpy task file (HDF5) is not read: give --abx-item the .item file "
                           "the task was built from (header '#file onset offset #phone prev-phone next-phone speaker')")
    items, test_utts = read_item_file(path), set(test_utts)
    out = []
    for lineno, item in enumerate(items, 2):  # read_item_file keeps no blank line: row k is line k + 1
        utt = utt_id(item.file)
        if utt not in test_utts:
            raise ItemFileError(path, lineno, f"file '{item.file}' is not a file of english/test")
        out.append(Item(utt, item.onset, item.offset, item.phone, item.prev, item.next, item.speaker))
    return out


def write_lists(test_dir: Path, bitrate_utts: Iterable[str], synthesis: Mapping[str, str]) -> None:
    """data/test/bitrate_list (`<utt>` lines) and synthesis_list (`<utt> <voice speaker>` lines), C-sorted."""
    with atomic_open(test_dir / "bitrate_list") as f:
        f.writelines(f"{u}\n" for u in sorted(set(bitrate_utts), key=c_sort_key))
    with atomic_open(test_dir / "synthesis_list") as f:
        f.writelines(f"{u} {synthesis[u]}\n" for u in sorted(synthesis, key=c_sort_key))


def check_layout(root: Path, needed: List[Path]) -> None:
    """Name every missing piece of the layout at once, before any audio is read."""
    missing = [p for p in needed if not p.exists()]
    if not missing:
        return
    hint = ("expected english/train/unit/, english/train/voice/, english/test/ and english/synthesis.txt "
            "under the ZEROSPEECH2019 directory (the one holding english/)")
    if (root / "2019" / "english").is_dir() and not (root / "english").exists():
        hint += f"; {root} is a ZeroSpeech 2020 release: point ZEROSPEECH2019 at {root / '2019'}"
    if (root / "train").is_dir() and not (root / "english").exists():
        hint += f"; {root} looks like english/ itself: point ZEROSPEECH2019 at its parent"
    also = f" (also missing: {', '.join(map(str, missing[1:]))})" if len(missing) > 1 else ""
    raise DataDirError(missing[0], None, f"missing{also}; {hint}")


def prepare(root: Path, data_root: Path, bitrate_filelist: Optional[str] = None,
            abx_item: Optional[str] = None) -> None:
    eng = root / "english"
    sets = {"unit": eng / "train" / "unit", "voice": eng / "train" / "voice", "test": eng / "test"}
    synthesis_txt = eng / "synthesis.txt"
    check_layout(root, list(sets.values()) + [synthesis_txt])
    wavs = {name: scan_wavs(d) for name, d in sets.items()}
    dups = sorted(set(wavs["unit"]) & set(wavs["voice"]))
    if dups:
        raise DataDirError(sets["voice"], None, f"{len(dups)} file names also in {sets['unit']}, e.g. {dups[0]}.wav")
    utt2dur = {name: durations(w) for name, w in wavs.items()}
    voices = sorted({speaker_of(p) for p in wavs["voice"].values()}, key=c_sort_key)
    synthesis = read_synthesis(synthesis_txt, wavs["test"], voices)
    bitrate_path = find_bitrate_list(root, bitrate_filelist)
    bitrate = read_bitrate_list(bitrate_path, wavs["test"]) if bitrate_path else list(wavs["test"])
    items = read_abx_items(Path(abx_item), wavs["test"]) if abx_item else None
    report_speakers(wavs)

    tmp = data_root / ".zs2019.building"
    shutil.rmtree(tmp, ignore_errors=True)
    built = {"train": tmp / "train", "voice": tmp / "voice", "test": tmp / "test"}
    write_wav_dir(built["train"], {**wavs["unit"], **wavs["voice"]}, {**utt2dur["unit"], **utt2dur["voice"]})
    write_wav_dir(built["voice"], wavs["voice"], utt2dur["voice"])
    write_wav_dir(built["test"], wavs["test"], utt2dur["test"])
    write_lists(built["test"], bitrate, synthesis)
    if items:
        write_item_file(built["test"] / "abx.item", items)
    check_built_dirs(built, check_text=False)
    replace_dirs(built, data_root)
    shutil.rmtree(tmp, ignore_errors=True)
    for name in ("test_voice_ref", "dev"):  # mini-corpus only: drop them so no stage mixes corpora
        if (data_root / name).exists():
            shutil.rmtree(data_root / name)
            print(f"prepare_zs2019: removed {data_root / name} (mini corpus only)", file=sys.stderr)
    print(f"prepare_zs2019: bitrate_list: {len(set(bitrate))} utterances from "
          f"{bitrate_path or 'all of english/test (no bitrate_filelist.txt found)'}; "
          f"synthesis_list: {len(synthesis)} utterances", file=sys.stderr)
    if items:
        print(f"prepare_zs2019: abx.item: {len(items)} items of {len({i.file for i in items})} test utterances "
              f"from {abx_item}", file=sys.stderr)


def report_speakers(wavs: Mapping[str, Mapping[str, Path]]) -> None:
    spks = {name: {speaker_of(p) for p in w.values()} for name, w in wavs.items()}
    for name, w in wavs.items():
        print(f"prepare_zs2019: {name}: {len(w)} utterances, {len(spks[name])} speakers", file=sys.stderr)
    seen = sorted(spks["test"] & (spks["unit"] | spks["voice"]))
    if seen:
        print(f"prepare_zs2019: warning: test speakers also in train: {' '.join(seen)}", file=sys.stderr)


def main(argv=None):
    p = argparse.ArgumentParser(prog="prepare_zs2019", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bitrate-filelist", help="the official bitrate file list (default: looked for in the corpus)")
    p.add_argument("--abx-item", help="the evaluation package's ABXpy item file of english/test -> data/test/abx.item")
    p.add_argument("corpus_root", help="the directory holding english/ (db.sh: ZEROSPEECH2019)")
    p.add_argument("data_root", help="writes <data_root>/{train,voice,test}")
    args = p.parse_args(argv)
    try:
        prepare(Path(args.corpus_root), Path(args.data_root), args.bitrate_filelist, args.abx_item)
    except DataDirError as e:
        sys.exit(f"prepare_zs2019: error: {e}")


if __name__ == "__main__":
    main()
