"""The names of the SALAD recipe (paper 000, Pascual et al.) in one place: the acoustic systems the stages train,
decode and score, their display labels, the paper's Table 2 rows and Table 3 latencies, the paper's speakers
(M1, F1) and the map from a corpus's own speaker names to them (--speaker_map "72:M1 73:F1").

Torch-free (standard library only): stages.sh asks it through `python -m local_models.salad.systems QUERY`
(--help lists the queries; plain words on stdout, exit 1 with a message on an unknown name); report.py, pack.py
and egs/tcstar/tts1/local/prepare_tcstar.py read it. A new system: add it to SYSTEMS and LABELS (and PAPER /
PAPER_LATENCY if the paper has a row), then its configs conf/tuning/train_<system>{,_tiny,_smoke}.yaml and, for a
new architecture, its class in model.py.
"""
from __future__ import annotations

import argparse
import sys
from typing import Dict, Iterable, Optional

from local_models.common.names_cli import answer, words

# the acoustic systems, in training order: exp/<spk>/<system>, conf/tuning/train_<system>${suffix}.yaml
SYSTEMS = ("small_rnn", "small_salad", "big_rnn", "big_salad", "big_salad_win")
# display labels: RESULTS.md's tables and the packed model's card ("architecture")
LABELS = {"small_rnn": "Small RNN", "small_salad": "Small SALAD", "big_rnn": "Big RNN", "big_salad": "Big SALAD",
          "big_salad_win": "Big SALAD, windowed attention (ours)"}
DURATION = "duration"  # exp/<spk>/duration: the speaker's MUSA duration model
# paper 000 Table 2: speaker -> system -> (#params M, MCD dB, F0 RMSE Hz, V/UV accuracy %)
PAPER = {
    "M1": {"small_rnn": (1.17, 5.18, 13.64, 94.9), "small_salad": (1.04, 5.92, 16.33, 93.8),
           "big_rnn": (9.85, 5.15, 13.58, 94.9), "big_salad": (9.66, 5.43, 14.56, 94.5)},
    "F1": {"small_rnn": (1.17, 4.63, 15.11, 96.8), "small_salad": (1.04, 5.25, 20.15, 96.4),
           "big_rnn": (9.85, 4.73, 15.44, 96.9), "big_salad": (9.66, 4.84, 19.36, 96.6)},
}
PAPER_SPEAKERS = tuple(PAPER)  # the paper's names of its two TC-STAR voices (male M1, female F1)
PAPER_LATENCY = {"small_rnn": 63.74, "small_salad": 4.715, "big_rnn": 64.84, "big_salad": 5.455}  # Table 3, s
RECIPE = "tcstar/tts1"  # the recipe's name in exp/results.json and the model cards (egs/<RECIPE>)
QUESTIONS = "conf/questions_es.hed"  # the HTS question file, relative to the recipe dir


def check(names: Iterable[str]) -> None:
    """ValueError naming an unknown system."""
    for s in names:
        if s not in SYSTEMS:
            raise ValueError(f"unknown system '{s}' ({', '.join(SYSTEMS)})")


def parse_speaker_map(text: str) -> Dict[str, str]:
    """'72:M1 73:F1' -> {'72': 'M1', '73': 'F1'} (corpus speaker directory -> the name the recipe uses);
    ValueError on a malformed pair, a corpus speaker given twice or two corpus speakers given one name."""
    out: Dict[str, str] = {}
    for pair in text.split():
        corpus, sep, name = pair.partition(":")
        if not sep or not corpus or not name or ":" in name or "_" in name:
            raise ValueError(f"--speaker_map: '{pair}' is not CORPUS_SPEAKER:NAME (e.g. 72:M1; no '_' in NAME)")
        if corpus in out:
            raise ValueError(f"--speaker_map: corpus speaker '{corpus}' is mapped twice")
        if name in out.values():
            raise ValueError(f"--speaker_map: two corpus speakers are mapped to '{name}'")
        out[corpus] = name
    return out


def unmapped(speakers: Iterable[str]) -> list:
    """The speakers that have no column in the paper (not M1 / F1)."""
    return [s for s in speakers if s not in PAPER]


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m local_models.salad.systems", description=__doc__ + "\nPrints its answer as words on one line.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="queries:\n"
               "  names                 every acoustic system, in training order\n"
               "  check SYSTEM...       nothing, or exit 1 naming an unknown system\n"
               "  label SYSTEM          the display label of a system\n"
               "  paper_speakers        the paper's speakers (its Table 2 columns)\n"
               "  unmapped SPEAKER...   the speakers with no column in the paper\n"
               "  speaker_map 'C:N ...' the map checked, one CORPUS=NAME word per pair\n"
               "SYSTEM / SPEAKER arguments may also be given as one space-separated word list.")
    p.add_argument("query", choices=("names", "check", "label", "paper_speakers", "unmapped", "speaker_map"))
    p.add_argument("args", nargs="*")
    return p


def _query(a) -> Iterable[str]:
    """The answer to the parsed query A (main's words)."""
    if a.query == "names":
        out = SYSTEMS
    elif a.query == "check":
        check(words(a.args))
        out = ()
    elif a.query == "label":
        if len(a.args) != 1:
            raise ValueError("label: give one system")
        check(a.args)
        out = (LABELS[a.args[0]],)
    elif a.query == "paper_speakers":
        out = PAPER_SPEAKERS
    elif a.query == "unmapped":
        out = unmapped(words(a.args))
    else:
        out = tuple(f"{c}={n}" for c, n in parse_speaker_map(" ".join(a.args)).items())
    return out


def main(argv: Optional[list] = None) -> int:
    a = get_parser().parse_args(argv)
    return answer("local_models.salad.systems", lambda: _query(a), errors=(ValueError,))


if __name__ == "__main__":
    sys.exit(main())
