"""The SAD systems by name, in one torch-free place (standard library only): every system the recipe knows, what
it is (a reference detector, the statistical SAD, a net + its decision, the majority vote), the net behind each
neural system, the vote's members, the paper's Table 2 / 3 rows and labels. Everything else reads the names from
here: the detector classes (registry.py, neural.py), the nets' table (nets.NETS, the ESPnet task's model choices),
the pack stage, inference, the report, the bin/ tools' `--system` choices and stages.sh, which asks through
`python -m local_models.sad.systems QUERY` (see --help).

Adding a neural system on an existing net: one entry in SYSTEMS (and its PAPER_TABLE2 row); on a new net also its
class in nets.NETS and the recipe's conf/tuning/train_<net>.yaml.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Optional, Tuple

from local_models.common.names_cli import answer, words


@dataclass(frozen=True)
class System:
    """kind: reference (a detector not in the paper), statistical (paper Sec. 2), neural (a net + its decision) or
    vote (the majority vote over VOTE_MEMBERS); net: the net a neural system decodes with (a nets.NETS key);
    smoothing: a neural system's decision (hmm | median | none, neural.NeuralDetector)."""

    kind: str
    net: str = ""
    smoothing: str = ""


# The recipe's systems, in its order (stages.sh's --systems default; stage 5 decodes them in this order).
SYSTEMS: Dict[str, System] = {
    "energy": System("reference"),
    "webrtcvad": System("reference"),
    "silero_vad": System("reference"),
    "stat_sad": System("statistical"),
    "cnn_hmm": System("neural", net="cnn1d", smoothing="hmm"),
    "cnn_median": System("neural", net="cnn1d", smoothing="median"),
    "rnn_hmm": System("neural", net="rnn", smoothing="hmm"),
    "rnn_median": System("neural", net="rnn", smoothing="median"),
    "seg_rnn": System("neural", net="seg_rnn", smoothing="none"),
    "majority_vote": System("vote"),
}
VOTE = "majority_vote"
# the vote's members: CNN + HMM, RNN + HMM and the segment RNN Table 2 reports (DEVBEST in its place when stage 7
# made it: voters)
VOTE_MEMBERS = ("cnn_hmm", "rnn_hmm", "seg_rnn")
# stage 7's dev-best (L, S) grid point: seg_rnn's decision on another training dir (exp/seg_rnn_devbest/model_dir);
# decoded, scored and packed, but not a --system of its own
DEVBEST = "seg_rnn_devbest"
DERIVED = {DEVBEST: "seg_rnn"}

DETECTORS = tuple(SYSTEMS)  # sad_decode / sad_segments --system
NEURAL_SYSTEMS = tuple(n for n, s in SYSTEMS.items() if s.kind in ("neural", "vote"))  # nets on the decode device
NETS = tuple(dict.fromkeys(s.net for s in SYSTEMS.values() if s.net))  # nets.NETS' keys, the task's --model choices
BASELINES = tuple(n for n, s in SYSTEMS.items() if s.kind == "reference")  # not the paper's systems: the robustness
# check compares against them


def _packable() -> Tuple[str, ...]:
    out = []
    for n, s in SYSTEMS.items():
        if s.kind == "reference":
            continue
        if s.kind == "vote":  # after every net (and DEVBEST)
            continue
        out.append(n)
        out += [d for d, base in DERIVED.items() if base == n]
    return tuple(out) + tuple(n for n, s in SYSTEMS.items() if s.kind == "vote")


PACKABLE = _packable()  # stage 9's archives: stat_sad and the neural systems (the reference detectors are not packed)

# Paper Table 2 (%, dev F1/P/R/DCF, eval DCF) and Table 3 (RTF), keyed by our system names; the report's row order.
PAPER_TABLE2 = {
    "stat_sad": ("Stat. SAD", 94.32, 90.94, 97.97, 2.98, 4.60),
    "cnn_hmm": ("CNN + HMM", 97.91, 96.83, 99.02, 1.42, 2.45),
    "rnn_hmm": ("RNN + HMM", 97.84, 96.85, 98.85, 1.54, 2.17),
    "seg_rnn": ("Seg. RNN", 98.62, 97.42, 99.85, 0.81, 1.19),
    # stage 7's dev-best (L, S) when it is not the training config's; the paper's row is its own dev-best (50, 10 ms)
    "seg_rnn_devbest": ("Seg. RNN, dev-best (L, S) of Fig. 7", 98.62, 97.42, 99.85, 0.81, 1.19),
    "cnn_median": ("CNN + median filter (Fig. 6 only)", None, None, None, None, None),
    "rnn_median": ("RNN + median filter (Fig. 6 only)", None, None, None, None, None),
    "majority_vote": ("Majority vote", None, None, None, None, 1.07),
    "energy": ("Baseline (challenge GMM; ours: energy threshold)", None, None, None, 12.50, 13.60),
    "webrtcvad": ("webrtcvad (not in paper)", None, None, None, None, None),
    "silero_vad": ("silero-vad (not in paper)", None, None, None, None, None),
}
PAPER_RTF = {"stat_sad": 0.00472, "cnn_hmm": 0.0119, "seg_rnn": 0.0445}
# systems whose frame score is graded (a posterior, a level, a mode), one row per score: the HMM and median systems of
# a net share its posteriors, and the statistical SAD's and the vote's scores are already decisions
SEPARABILITY_ROWS = {
    "cnn_hmm": "CNN posterior (CNN + HMM, CNN + median)",
    "rnn_hmm": "RNN posterior (RNN + HMM, RNN + median)",
    "seg_rnn": "Seg. RNN score",
    "seg_rnn_devbest": "Seg. RNN score, dev-best (L, S)",
    "energy": "energy over the floor (baseline)",
    "webrtcvad": "webrtcvad, highest mode calling speech",
    "silero_vad": "silero-vad probability",
}


class UnknownSystem(ValueError):
    pass


def base_system(name: str) -> str:
    """The system whose detector NAME decodes with (seg_rnn for DEVBEST, else NAME itself)."""
    return DERIVED.get(name, name)


def system(name: str) -> System:
    """SYSTEMS[name] (DEVBEST: seg_rnn's); UnknownSystem on an unknown name."""
    s = SYSTEMS.get(base_system(name))
    if s is None:
        raise UnknownSystem(f"unknown SAD system '{name}'; known: {', '.join(SYSTEMS)}")
    return s


def check(names: Iterable[str]) -> None:
    for n in names:
        system(n)


def net_of(name: str) -> str:
    """The net behind the neural system NAME ('' for the others, and for the vote, which has three: nets_of)."""
    return system(name).net


def nets_of(names: Iterable[str]) -> Tuple[str, ...]:
    """The nets behind NAMES, first-seen order (the vote needs its members' nets); UnknownSystem on an unknown name."""
    out = []
    for n in names:
        s = system(n)
        out += [net_of(m) for m in VOTE_MEMBERS] if s.kind == "vote" else [s.net] if s.net else []
    return tuple(dict.fromkeys(out))


def voters(exp) -> Tuple[str, ...]:
    """The majority vote's members in EXP (a recipe's exp/): VOTE_MEMBERS with the segment RNN that Table 2 reports,
    i.e. the dev-best (L, S) grid point (exp/seg_rnn_devbest, stage 7) when there is one, else exp/seg_rnn."""
    devbest = (Path(exp) / DEVBEST / "model_dir").is_file()
    return tuple(DEVBEST if devbest and DERIVED[DEVBEST] == m else m for m in VOTE_MEMBERS)


# ----------------------------------------------------------------------------- the command line (stages.sh)
def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m local_models.sad.systems",
        description="The SAD recipe's system names, for stages.sh: prints plain words on stdout (one line); exits "
                    "1 with a message on an unknown system name.")
    sub = p.add_subparsers(dest="query", required=True)
    sub.add_parser("names", help="every system (the recipe's --systems default), in the recipe's order")
    sub.add_parser("neural", help="the systems that run nets (decoded on the GPU with --gpu_inference true)")
    sub.add_parser("packable", help="the systems stage 9 packs (plus stage 7's seg_rnn_devbest)")
    sub.add_parser("nets", help="every net (nets.NETS' keys)")
    q = sub.add_parser("nets_of", help="the nets behind SYSTEMs (first-seen order; majority_vote: its members')")
    q.add_argument("systems", nargs="*")
    q = sub.add_parser("check", help="exit 1 naming the first unknown SYSTEM; prints nothing")
    q.add_argument("systems", nargs="*")
    q = sub.add_parser("vote_members", help="the majority vote's members (with EXP: seg_rnn_devbest for seg_rnn when "
                                            "EXP/seg_rnn_devbest/model_dir exists)")
    q.add_argument("--exp", help="the recipe's exp/ dir")
    return p


def _query(args) -> Iterable[str]:
    """The answer to the parsed query ARGS (main's words)."""
    names = words(getattr(args, "systems", None) or [])
    if args.query == "names":
        out = DETECTORS
    elif args.query == "neural":
        out = NEURAL_SYSTEMS
    elif args.query == "packable":
        out = PACKABLE
    elif args.query == "nets":
        out = NETS
    elif args.query == "nets_of":
        out = nets_of(names)
    elif args.query == "check":
        check(names)
        return ()
    else:  # vote_members
        out = voters(args.exp) if args.exp else VOTE_MEMBERS
    return out


def main(argv: Optional[list] = None) -> int:
    args = get_parser().parse_args(argv)
    return answer("local_models.sad.systems", lambda: _query(args), errors=(UnknownSystem,))


if __name__ == "__main__":
    sys.exit(main())
