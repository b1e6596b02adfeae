"""The names of egs/kss/tts1 (paper 002, JDI-T) in one place: the acoustic systems the recipe trains, synthesises and
scores, their display labels and descriptions, the paper's Table 1 rows, the vocoders and the GT-mel rows.

Torch-free (standard library only): stages.sh asks it through `python -m local_models.jdit.systems QUERY`
(--help lists the queries; plain words on stdout, exit 1 with a message on an unknown name), and report.py,
pack.py, benchmarks/kss_speed.py read it. A new system: add it to SYSTEMS (in training order: a teacher before its
student), LABELS, DESCRIPTIONS (and AUTOREGRESSIVE / TEACHER where it applies; PAPER_MOS if the paper has a row),
then its training config conf/tuning/train_<system>*.yaml.
"""
from __future__ import annotations

import argparse
import sys
from typing import Iterable, Optional, Tuple

from local_models.common.names_cli import answer, words

# the acoustic models, in training order (a teacher before its student): exp/tts_<system>,
# conf/tuning/train_<system>${train_config_suffix}.yaml
SYSTEMS = ("jdit", "tacotron2", "transformer", "fastspeech")
AUTOREGRESSIVE = ("tacotron2", "transformer")  # stop on their own, attention at synthesis (robustness check)
FEED_FORWARD = tuple(s for s in SYSTEMS if s not in AUTOREGRESSIVE)
TEACHER = {"fastspeech": "transformer"}  # student: the system whose teacher-forced durations teach it
# paper 002, Table 1, in its row order (GT mel first): MOS (5-point scale) on the internal data set and on KSS
PAPER_MOS = {"gt_mel": (3.92, 3.87), "tacotron2": (3.52, 3.33), "transformer": (3.55, 3.72),
             "fastspeech": (3.48, 3.23), "jdit": (3.77, 3.52)}
PAPER_ROWS = tuple(s for s in PAPER_MOS if s != "gt_mel")  # the systems in Table 1's order
# display labels (RESULTS.md); "gt_mel" is the vocoder on the reference mels
LABELS = {"gt_mel": "GT mel", "tacotron2": "Tacotron2", "transformer": "Transformer", "fastspeech": "FastSpeech",
          "jdit": "JDI-T (ours)"}
# model cards (pack.py)
DESCRIPTIONS = {"jdit": "JDI-T (Lim et al.): feed-forward Transformer TTS jointly trained with an autoregressive "
                        "aligner",
                "tacotron2": "ESPnet2 Tacotron2 (baseline)", "transformer": "ESPnet2 Transformer-TTS (baseline)",
                "fastspeech": "ESPnet2 FastSpeech taught by the Transformer's durations (baseline)"}

# vocoders (run.sh --vocoder): Griffin-Lim, the Parallel WaveGAN (the paper's) or the Multi-band MelGAN (the fast
# one) that stage 4 trains, or the path of a parallel-wavegan checkpoint (.pkl)
VOCODERS = ("griffin_lim", "pwg", "mbmelgan")
TRAINED_VOCODERS = {"pwg": "exp/vocoder_pwg/checkpoint.pkl", "mbmelgan": "exp/vocoder_mbmelgan/checkpoint.pkl"}
PWG_MODEL = TRAINED_VOCODERS["pwg"]  # what stage 4's Parallel WaveGAN writes (--vocoder pwg)
# display names of the trained vocoders, by their exp dir (a checkpoint's parent)
VOCODER_LABELS = {"vocoder_pwg": "Parallel WaveGAN", "vocoder_mbmelgan": "Multi-band MelGAN"}
# exp/<row>: the systems' vocoder on the reference mels (gt_mel), and the other one (gt_mel_<alt_name>)
GT_MEL_ROWS = ("gt_mel", "gt_mel_pwg", "gt_mel_griffin_lim")


def check(names: Iterable[str]) -> None:
    """ValueError naming an unknown system, or a student (FastSpeech) without its teacher."""
    names = list(names)
    for s in names:
        if s not in SYSTEMS:
            raise ValueError(f"unknown system '{s}' ({', '.join(SYSTEMS)})")
    for student, teacher in TEACHER.items():
        if student in names and teacher not in names:
            raise ValueError(f"{student} needs its teacher, {teacher}")


def ordered(names: Iterable[str]) -> Tuple[str, ...]:
    """NAMES in training order (SYSTEMS' order: a teacher before its student)."""
    names = set(names)
    return tuple(s for s in SYSTEMS if s in names)


def check_vocoder(vocoder: str) -> None:
    """ValueError unless VOCODER is one of VOCODERS or a parallel-wavegan checkpoint's path (.pkl)."""
    if vocoder not in VOCODERS and not vocoder.endswith(".pkl"):
        raise ValueError(f"--vocoder {vocoder}: {', '.join(VOCODERS)} or a parallel-wavegan checkpoint .pkl")


def vocoder_of(which: str, vocoder: str) -> str:
    """What vocodes with run.sh's --vocoder VOCODER: the systems (WHICH main) or the other vocoder, also run on the
    reference mels (WHICH alt): griffin_lim or a parallel-wavegan checkpoint's path."""
    check_vocoder(vocoder)
    if which == "main":
        return TRAINED_VOCODERS.get(vocoder, vocoder)
    if which == "alt":
        return PWG_MODEL if vocoder == "griffin_lim" else "griffin_lim"
    raise ValueError(f"vocoder_of {which}: main or alt")


def alt_name(vocoder: str) -> str:
    """The other vocoder's name (its reference-mel rows: exp/gt_mel_<name>) for --vocoder VOCODER."""
    return "pwg" if vocoder == "griffin_lim" else "griffin_lim"


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m local_models.jdit.systems", description=__doc__ + "\nPrints its answer as words on one line.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="queries:\n"
               "  names                    every system, in training order\n"
               "  check SYSTEM...          nothing, or exit 1 naming an unknown system / a student without its teacher\n"
               "  ordered SYSTEM...        the given systems in training order (checked)\n"
               "  autoregressive           the autoregressive systems\n"
               "  vocoder_of main|alt VOC  what vocodes the systems (main) / the other vocoder (alt) with --vocoder VOC\n"
               "  alt_name VOC             the other vocoder's name (exp/gt_mel_<name>) with --vocoder VOC\n"
               "  label NAME               the display label of a system (or gt_mel)\n"
               "SYSTEM arguments may also be given as one space-separated word list.")
    p.add_argument("query", choices=("names", "check", "ordered", "autoregressive", "vocoder_of", "alt_name",
                                     "label"))
    p.add_argument("args", nargs="*")
    return p


def _query(a) -> Iterable[str]:
    """The answer to the parsed query A (main's words)."""
    if a.query in ("names", "autoregressive"):
        out = SYSTEMS if a.query == "names" else AUTOREGRESSIVE
    elif a.query in ("check", "ordered"):
        names = words(a.args)
        check(names)
        out = () if a.query == "check" else ordered(names)
    elif a.query == "vocoder_of":
        if len(a.args) != 2:
            raise ValueError("vocoder_of: give main|alt and the --vocoder value")
        out = (vocoder_of(*a.args),)
    elif a.query == "alt_name":
        if len(a.args) != 1:
            raise ValueError("alt_name: give the --vocoder value")
        out = (alt_name(a.args[0]),)
    else:  # label
        if len(a.args) != 1 or a.args[0] not in LABELS:
            raise ValueError(f"label: one of {', '.join(LABELS)}")
        out = (LABELS[a.args[0]],)
    return out


def main(argv: Optional[list] = None) -> int:
    a = get_parser().parse_args(argv)
    return answer("local_models.jdit.systems", lambda: _query(a), errors=(ValueError,))


if __name__ == "__main__":
    sys.exit(main())
