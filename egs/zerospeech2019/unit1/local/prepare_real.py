"""Flight of the Amazon Queen's dialogue (Debian flight-of-the-amazon-queen 1.0.0-9, read by
local_models/common/fotaq.py) as this recipe's real corpus: data/{train,voice,test} as prepare_zs2019.py writes them.

    voice  Joe, the player character (fotaq_joe, about 101 min): the target voice the inverter learns
    train  every character except the test ones, Joe included (what the VQ-VAE discovers units on)
    test   the TEST_SPEAKERS (never in train: unseen speakers, as ZeroSpeech's test), with bitrate_list (every
           test utterance), synthesis_list (`<utt> fotaq_joe`) and voice_ref.scp (`<utt> <Joe's wav>`) for the
           test clips whose line Joe also says (the same words, case and punctuation aside): stage 8 resynthesises
           them in Joe's voice and scores MCD against Joe's own recording of the line. Those Joe clips are the
           references only: they are left out of train and voice, so no model is trained on them.

Voiced captions (speaker `fotaq_caption`: the data does not say who reads them) are left out of every set. Each clip
is decoded from queen.1c once and written at 16 kHz to AUDIO_DIR/<utt>.wav (wav.scp points there; AUDIO_DIR/clips.tsv
holds each clip's speaker, kind and game text). Every directory gets wav.scp, utt2spk, spk2utt and utt2dur, no
text (as ZeroSpeech 2019), and is built aside and swapped in whole. No abx.item: the game gives each clip's text but
no phone times; data/test/abx_na says so (stage 9 then reports ABX as n/a, with that reason).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

from local_models.common import fotaq
from local_models.common.datadir import atomic_open, c_sort_key, write_data_dir, write_table
from local_models.common.debian import unpacked
from local_models.common.dirops import build_and_swap

SAMPLE_RATE = 16000
VOICE = "fotaq_joe"
UNKNOWN = ("fotaq_caption",)
NO_ABX = ("ABX needs phone times (the triphone items of data/test/abx.item) and this corpus has none: the game gives "
          "each clip's line of text, not where its phones lie, and the one forced aligner the registries reach "
          "(pocketsphinx) was measured too coarse to recover them (benchmarks/forced_aligner_check.py: 21 of 50 "
          "utterances unaligned, 56 % of boundaries within 20 ms); an item file made elsewhere, put at "
          "data/test/abx.item, is scored by stages 6 and 9.")
# Four mid-sized characters (23 min), held out whole: Death, Klunk, the pygmy chief, Henry.
TEST_SPEAKERS = ("fotaq_death", "fotaq_klunk", "fotaq_chief", "fotaq_henry")


def words(text: str) -> str:
    """A line's words, lower case, without punctuation: 'Oh, alright.' and 'Oh alright!' are the same line."""
    return " ".join(re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split())


def voice_refs(clips: Sequence[fotaq.Clip], test_speakers: Sequence[str]) -> Dict[str, fotaq.Clip]:
    """{test utt: the voice's clip of the same line} (the first in utt order when the voice says it more than once)."""
    said: Dict[str, fotaq.Clip] = {}
    for c in sorted((c for c in clips if c.speaker == VOICE), key=lambda c: c_sort_key(c.utt)):
        said.setdefault(words(c.text), c)
    return {c.utt: said[words(c.text)] for c in clips
            if c.speaker in test_speakers and words(c.text) and words(c.text) in said}


def split(clips: Sequence[fotaq.Clip], test_speakers: Sequence[str]) -> Dict[str, List[fotaq.Clip]]:
    """{train, voice, test, ref} clips (ref: the voice's recordings of test lines, kept out of train and voice); a
    test speaker the package lacks, or the voice among them, is an error."""
    speakers = {c.speaker for c in clips}
    missing = [s for s in test_speakers if s not in speakers]
    if missing:
        raise ValueError(f"test speaker(s) {', '.join(missing)} not in {fotaq.FOTAQ.pin} "
                         f"(speakers: {', '.join(sorted(speakers))})")
    if VOICE in test_speakers:
        raise ValueError(f"{VOICE} is the target voice: it cannot be a test speaker")
    refs = {c.utt for c in voice_refs(clips, test_speakers).values()}
    kept = [c for c in clips if c.speaker not in UNKNOWN and c.utt not in refs]
    return {"train": [c for c in kept if c.speaker not in test_speakers],
            "voice": [c for c in kept if c.speaker == VOICE],
            "test": [c for c in kept if c.speaker in test_speakers],
            "ref": [c for c in clips if c.utt in refs]}


def writer(clips: Sequence[fotaq.Clip], audio_dir: Path, seconds: Mapping[str, float],
           refs: Optional[Mapping[str, fotaq.Clip]] = None):
    """write(path) of one data dir; REFS ({utt: the voice's clip of its line}) makes it the test set."""
    def write(path: Path) -> None:
        write_data_dir(path, {c.utt: str(audio_dir / f"{c.utt}.wav") for c in clips},
                       {c.utt: c.speaker for c in clips}, extra={"utt2dur": {c.utt: f"{seconds[c.utt]:.3f}"
                                                                               for c in clips}})
        if refs is not None:
            utts = sorted((c.utt for c in clips), key=c_sort_key)
            with atomic_open(path / "bitrate_list") as f:
                f.writelines(f"{u}\n" for u in utts)
            with atomic_open(path / "synthesis_list") as f:
                f.writelines(f"{u} {VOICE}\n" for u in utts if u in refs)
            write_table(path / "voice_ref.scp", {u: str(audio_dir / f"{refs[u].utt}.wav") for u in utts if u in refs})
            with atomic_open(path / "abx_na") as f:
                f.write(NO_ABX + "\n")
    return write


def prepare(container: Path, data_root: Path, audio_dir: Path, test_speakers: Sequence[str]) -> Dict[str, int]:
    clips = fotaq.fotaq_clips(path=container)
    sets = split(clips, test_speakers)
    refs = voice_refs(clips, test_speakers)
    if not refs:
        raise ValueError(f"{container}: {VOICE} says none of the test speakers' lines: no reference for the MCD")
    used = sorted({c.utt: c for part in sets.values() for c in part}.values(), key=lambda c: c_sort_key(c.utt))
    seconds = fotaq.extract(container, used, audio_dir, SAMPLE_RATE)
    build_and_swap(data_root, {"train": writer(sets["train"], audio_dir.resolve(), seconds),
                               "voice": writer(sets["voice"], audio_dir.resolve(), seconds),
                               "test": writer(sets["test"], audio_dir.resolve(), seconds, refs)},
                   "fotaq", check_text=False)
    for name, part in sets.items():
        minutes = sum(seconds[c.utt] for c in part) / 60
        print(f"prepare_real: {name}: {len(part)} utterances, {len({c.speaker for c in part})} speakers, "
              f"{minutes:.1f} min", file=sys.stderr)
    return {name: len(part) for name, part in sets.items()}


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="prepare_real", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", help="an unpacked flight-of-the-amazon-queen tree (default: fetch and unpack the "
                                  "pinned package into SPEECH_RECIPES_DEBIAN)")
    p.add_argument("--container", help="a queen.1c file (instead of --root)")
    p.add_argument("--audio-dir", default="downloads/fotaq", help="where the 16 kHz wavs go (default: %(default)s)")
    p.add_argument("--test-speakers", default=" ".join(TEST_SPEAKERS),
                   help="characters held out as test, separated by spaces or commas (default: %(default)s)")
    p.add_argument("data_root", help="writes <data_root>/{train,voice,test}")
    return p


def main(argv=None) -> int:
    a = get_parser().parse_args(argv)
    try:
        container = Path(a.container) if a.container else fotaq.container(a.root or unpacked(fotaq.FOTAQ))
        prepare(container, Path(a.data_root), Path(a.audio_dir), a.test_speakers.replace(",", " ").split())
    except (ValueError, RuntimeError, OSError) as e:
        print(f"prepare_real: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
