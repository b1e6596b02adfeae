#!/usr/bin/env python3
"""Write the real-speech corpus of `run.sh --corpus real` into DATA/<lang>_{train,dev,test} (wav.scp, text, utt2spk,
spk2utt, utt2lid), DATA/sample_rate and DATA/prepared.json. Recorded human speech from Debian packages
(local_models/common/realspeech.py; fetched pinned and sha256-checked, cached in $SPEECH_RECIPES_DEBIAN):
    cs, nl   Fish Fillets NG's dialogue (fillets-ng-data + fillets-ng-data-<lang>): ~1,500-1,700 lines, ~1.5 h each,
             two main actors + extras, 22.05 kHz mono Ogg Vorbis: the LARGE languages;
    es, ca, fr  Tux Paint's stamp descriptions (tuxpaint-stamps-default), one reader per language, ~20 min or less,
             44.1 kHz stereo Ogg Vorbis: the SMALL (low-resource) languages.
Every language is Latin script, so vanilla's language-by-script LID cannot tell them apart (RESULTS marks it n/a).

Dev / test: --dev / --test of each language's clips by a hash of the utterance id (realspeech.split; stable when
clips are added). Each language has one or two voices, so dev and test speakers are training speakers: the scores
are seen-speaker scores, and a language cannot be told from its speaker (LID may learn the voice).
A clip whose text has nothing left after stage 3's normalisation (units.normalise: punctuation only) is left out, and
so is one whose text would be read faster than --max-chars-per-s letters per second (25: about twice fast read speech;
the real packages hold empty recordings (nl: 2) and clips that read a part of a long description (ca: ~140 of 1,000,
e.g. "El signe per la lletra U en el llenguatge de signes americà." in 0.23 s), whose text is not their audio).
wav.scp holds sox pipes to mono 16-bit at --sample-rate (every language at the one rate: data/sample_rate).
Errors name the file (and line); an error leaves DATA as it was.
"""
import argparse
import sys
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

import soundfile

sys.path.insert(0, str(Path(__file__).resolve().parent))  # prepare_indic beside this script (run as a file)
from prepare_indic import write_prepared  # noqa: E402

from local_models.common import realspeech  # noqa: E402
from local_models.common.datadir import write_data_dir
from local_models.common.dirops import build_and_swap
from local_models.multisoftmax.units import normalise

SOURCE = {"cs": "fillets", "nl": "fillets", "es": "tuxpaint", "ca": "tuxpaint", "fr": "tuxpaint"}
LANGS = "cs nl es ca fr"
PARTS = ("train", "dev", "test")


def language_clips(lang: str, tuxpaint_root: Optional[str], fillets_root: Optional[str],
                   fillets_voices_root: Optional[str]) -> List[realspeech.Clip]:
    """LANG's clips from its source (given unpacked trees, else the pinned packages), text usable by stage 3."""
    if lang not in SOURCE:
        raise ValueError(f"--langs: no real-speech source for '{lang}' (known: {', '.join(SOURCE)})")
    if SOURCE[lang] == "tuxpaint":
        clips = realspeech.source_clips("tuxpaint", lang, tuxpaint_root)
    else:
        clips = realspeech.source_clips("fillets", lang, fillets_root, fillets_voices_root)
    return clips


def usable(clips: Sequence[realspeech.Clip], lang: str, max_rate: float) -> List[realspeech.Clip]:
    """The clips whose text stage 3 can spell and whose audio can hold it (at most MAX_RATE letters a second)."""
    keep = []
    for c in clips:
        try:
            letters = len(normalise(c.text, lang).replace(" ", ""))
        except ValueError:  # punctuation only ("...", "?!"): stage 3 would have no word to spell
            continue
        if letters <= max_rate * soundfile.info(str(c.path)).duration:
            keep.append(c)
    return keep


def source_rates(clips: Sequence[realspeech.Clip]) -> List[int]:
    return sorted({soundfile.info(str(c.path)).samplerate for c in clips})


def minutes(clips: Sequence[realspeech.Clip]) -> float:
    return sum(soundfile.info(str(c.path)).duration for c in clips) / 60


def write_all(data_root: Path, sets: Mapping[str, Sequence[realspeech.Clip]], info: Mapping[str, object],
              rate: int) -> None:
    """Every data dir built aside, checked, swapped in; then sample_rate and prepared.json."""
    def writer(name: str, clips: Sequence[realspeech.Clip]):
        lang = name.rsplit("_", 1)[0]
        return lambda path: write_data_dir(path, {c.utt: realspeech.wav_command(c.path, rate) for c in clips},
                                           {c.utt: c.speaker for c in clips}, text={c.utt: c.text for c in clips},
                                           extra={"utt2lid": {c.utt: lang for c in clips}})

    build_and_swap(data_root, {name: writer(name, clips) for name, clips in sets.items()}, "real")
    write_prepared(data_root, info, rate)


def prepare(a) -> Dict[str, str]:
    """Read every language of --langs, split, write; return {set name: summary line}."""
    sets, rates, summary, dropped = {}, {}, {}, {}
    for lang in a.langs.split():
        found = language_clips(lang, a.tuxpaint_root, a.fillets_root, a.fillets_voices_root)
        clips = usable(found, lang, a.max_chars_per_s)
        if not clips:
            raise ValueError(f"{lang}: none of {len(found)} clips has a text that fits its audio (--max-chars-per-s)")
        dropped[lang] = len(found) - len(clips)
        rates[lang] = source_rates(clips)
        for part, cs in realspeech.split(clips, a.dev, a.test).items():
            sets[f"{lang}_{part}"] = cs
            summary[f"{lang}_{part}"] = (f"{len(cs)} clips, {minutes(cs):.1f} min, "
                                         f"{len({c.speaker for c in cs})} speaker(s) ({SOURCE[lang]})")
    info = {"layout": "real", "rates": rates, "rate_policy": str(a.sample_rate), "sample_rate": a.sample_rate,
            "sources": {lang: SOURCE[lang] for lang in a.langs.split()},
            "left_out": {lang: f"{n} clip(s): punctuation only, or more than {a.max_chars_per_s:g} letters a second"
                         for lang, n in dropped.items()},
            "dev": (f"dev {a.dev} and test {a.test} of each language's clips by a hash of the utterance id; each "
                    "language has 1-2 voices, so dev/test speakers are training speakers")}
    write_all(Path(a.out), {k: sets[k] for k in sorted(sets)}, info, a.sample_rate)
    return {"left_out": dropped, **summary}


def get_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--langs", default=LANGS, help="languages, from: cs nl (Fish Fillets NG) es ca fr (Tux Paint) "
                                                  "(default: %(default)s)")
    p.add_argument("--dev", default="5%",
                   help="held-out dev clips per language: a count or a share (default: %(default)s)")
    p.add_argument("--test", default="5%", help="held-out test clips per language (default: %(default)s)")
    p.add_argument("--sample-rate", type=int, default=16000, help="wav.scp rate in Hz (default: %(default)s)")
    p.add_argument("--max-chars-per-s", type=float, default=25.0,
                   help="leave out clips whose text has more letters per second of audio (default: %(default)s)")
    p.add_argument("--tuxpaint-root", help="an unpacked tuxpaint-stamps-default tree (default: fetch the pinned .deb)")
    p.add_argument("--fillets-root", help="an unpacked fillets-ng-data tree (default: fetch the pinned .deb)")
    p.add_argument("--fillets-voices-root", help="one unpacked tree holding the recordings of every Fillets language "
                                                 "(default: fetch fillets-ng-data-<lang> per language)")
    p.add_argument("out", metavar="DATA", help="parent of the data dirs (e.g. data)")
    return p


def main(argv=None):
    a = get_parser().parse_args(argv)
    try:
        summary = prepare(a)
    except (ValueError, RuntimeError, OSError) as e:
        print(f"prepare_real: error: {e}", file=sys.stderr)
        return 1
    for lang, n in summary.pop("left_out").items():
        print(f"prepare_real: {lang}: {n} clip(s) left out: punctuation only, or text too long for the audio",
              file=sys.stderr)
    for name, line in summary.items():
        print(f"prepare_real: {name}: {line} -> {Path(a.out) / name} (wav.scp at {a.sample_rate} Hz)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
