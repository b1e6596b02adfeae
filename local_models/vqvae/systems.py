"""The names of the Transformer VQ-VAE recipe (paper 003, Tjandra et al.) in one place: the system-name grammar and
what a name means, the paper's Tables 1-3 rows, the --systems presets and the inverter's default system.

Torch-free (standard library only): stages.sh asks it through `python -m local_models.vqvae.systems QUERY` (--help
lists the queries; plain words on stdout, exit 1 with a message on a malformed name), and report.py reads PAPER.

A system name is (trf|conv)_(mfcc|logmel)_k<K>[_s<lambda>][_j<p>][_seed<N>]: encoder, input features, codebook
size, temporal smoothing weight, jitter probability, and a training-seed replicate (RESULTS.md gives the mean and sd
over a system and its replicates). A new paper row: add it to PAPER and TABLE_SYSTEMS; a new kind of system: extend
SYSTEM_RE and `espnet_options`.
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from typing import Iterable, List, Optional, Tuple

from local_models.common.names_cli import answer, words

SYSTEM_RE = re.compile(r"^(trf|conv)_(mfcc|logmel)_k([0-9]+)(_s([0-9.]+(e-?[0-9]+)?))?(_j(0?\.[0-9]+))?"
                       r"(_seed([0-9]+))?$")
SYSTEM_FORM = "(trf|conv)_(mfcc|logmel)_k<K>[_s<lambda>][_j<p>][_seed<N>]"
ENCODERS = {"trf": "transformer", "conv": "conv"}

# paper 003: system -> (table, label, ABX error %, bitrate), in the tables' row order
PAPER = {
    "trf_logmel_k128": (1, "TrfVQVAE with log-Mel (K = 128)", 33.79, 171.05),
    "trf_mfcc_k128": (1, "TrfVQVAE with MFCC (K = 128)", 21.91, 170.42),
    "conv_mfcc_k256": (2, "Conv VQVAE (stride 4, K = 256) [2019]", 24.17, 184.32),
    "trf_mfcc_k64": (2, "TrfVQVAE (stride 4, K = 64)", 22.72, 141.82),
    "trf_mfcc_k256": (2, "TrfVQVAE (stride 4, K = 256)", 21.94, 194.69),
    "trf_mfcc_k512": (2, "TrfVQVAE (stride 4, K = 512)", 21.6, 217.47),
    "trf_mfcc_k128_s1e-2": (3, "+ temp smooth (lambda = 1e-2)", 21.88, 169.02),
    "trf_mfcc_k128_s5e-3": (3, "+ temp smooth (lambda = 5e-3)", 21.67, 169.2),
    "trf_mfcc_k128_s1e-3": (3, "+ temp smooth (lambda = 1e-3)", 21.75, 169.56),
    "trf_mfcc_k128_j0.05": (3, "+ temp jitter (p = 0.05)", 21.57, 166.19),
    "trf_mfcc_k128_j0.075": (3, "+ temp jitter (p = 0.075)", 21.70, 164.08),
    "trf_mfcc_k128_s5e-3_j0.05": (3, "+ smooth (5e-3) + jitter (0.05), submitted", 20.71, 171.99),
    "trf_mfcc_k128_s1e-3_j0.05": (3, "+ smooth (1e-3) + jitter (0.05)", 20.14, 167.02),
}
# the "tables" preset, in training order (the MFCC K 128 system first)
TABLE_SYSTEMS = ("trf_mfcc_k128", "trf_logmel_k128", "conv_mfcc_k256", "trf_mfcc_k64", "trf_mfcc_k256",
                 "trf_mfcc_k512", "trf_mfcc_k128_s1e-2", "trf_mfcc_k128_s5e-3", "trf_mfcc_k128_s1e-3",
                 "trf_mfcc_k128_j0.05", "trf_mfcc_k128_j0.075", "trf_mfcc_k128_s5e-3_j0.05",
                 "trf_mfcc_k128_s1e-3_j0.05")
# the systems the acceptance compares (seeds 1-4 in "default"), and the K 256 pair "seeds15" gives seeds 5-14
COMPARED = ("trf_mfcc_k128", "conv_mfcc_k256", "trf_mfcc_k256")
SEEDS15_PAIR = ("trf_mfcc_k256", "conv_mfcc_k256")
# the ordering check's Transformer candidates (compared with the conv baseline; the one with the lowest dev ABX
# is picked where the run has a dev set)
CANDIDATES = tuple(n for n in COMPARED if n.startswith("trf_"))
SEED_SUFFIX = re.compile(r"_seed[0-9]+$")
PRESETS = ("tables", "default", "seeds15")
INVERTER_SYSTEM = "trf_mfcc_k128_s5e-3_j0.05"  # the paper's submitted system (Table 3, star)


@dataclass(frozen=True)
class System:
    encoder: str  # transformer | conv
    feat: str  # mfcc | logmel
    num_codes: int
    smooth_weight: Optional[str]  # as written in the name (5e-3), or None
    jitter_p: Optional[str]
    seed: Optional[int]  # a replicate's training seed, or None


def parse(name: str) -> System:
    m = SYSTEM_RE.match(name)
    if not m:
        raise ValueError(f"system '{name}' is not {SYSTEM_FORM}")
    return System(ENCODERS[m.group(1)], m.group(2), int(m.group(3)), m.group(5), m.group(8),
                  int(m.group(10)) if m.group(10) is not None else None)


def _plain(number: str) -> str:
    """A plain decimal (YAML reads "5e-3" as a string): what awk's `x + 0` prints (%.6g)."""
    return f"{float(number):.6g}"


def espnet_options(name: str) -> Tuple[str, List[str]]:
    """(input features, ESPnet training options) of a system name; a replicate's --seed comes last (it wins over
    the recipe's --seed)."""
    s = parse(name)
    opts = ["--model_conf", f"encoder_type={s.encoder}", "--model_conf", f"num_codes={s.num_codes}"]
    if s.smooth_weight is not None:
        opts += ["--model_conf", f"smooth_weight={_plain(s.smooth_weight)}"]
    if s.jitter_p is not None:
        opts += ["--model_conf", f"jitter_p={_plain(s.jitter_p)}"]
    if s.seed is not None:
        opts += ["--seed", str(s.seed)]
    return s.feat, opts


def replicates(first: int, last: int, systems: Iterable[str]) -> List[str]:
    """<system>_seed<N> for N in FIRST..LAST, seed by seed."""
    systems = list(systems)
    return [f"{s}_seed{n}" for n in range(first, last + 1) for s in systems]


def _preset(word: str) -> List[str]:
    if word == "tables":
        return list(TABLE_SYSTEMS)
    if word == "default":
        return list(TABLE_SYSTEMS) + replicates(1, 4, COMPARED)
    if word == "seeds15":
        return _preset("default") + replicates(5, 14, SEEDS15_PAIR)
    return [word]


def expand(words: Iterable[str]) -> List[str]:
    """The system names of --systems, its presets expanded (each name once, in order)."""
    out: List[str] = []
    for w in words:
        for name in _preset(w):
            if name not in out:
                out.append(name)
    return out


def on_dev(names: Iterable[str]) -> List[str]:
    """The systems among NAMES that the dev set is encoded and ABX'd with: the candidates and their replicates
    (the pick needs no other; every other system is scored on the test sets only)."""
    return [n for n in names if SEED_SUFFIX.sub("", n) in CANDIDATES]


def check(names: Iterable[str], inverter: str) -> None:
    """ValueError on a malformed system name (or inverter system), or an inverter system not among NAMES."""
    names = list(names)
    for s in names + [inverter]:
        parse(s)
    if inverter not in names:
        raise ValueError(f"--inverter-system '{inverter}' is not in --systems")


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m local_models.vqvae.systems", description=__doc__ + "\nPrints its answer as words on one line.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="queries:\n"
               "  expand WORD...              the system names of --systems (presets: tables, default, seeds15)\n"
               "  check INVERTER SYSTEM...    nothing, or exit 1 naming a malformed name / an inverter not in SYSTEM\n"
               "  conf SYSTEM                 its input features, then its ESPnet training options\n"
               "  feat SYSTEM                 its input features (mfcc or logmel)\n"
               "  tables                      the systems of every row of paper Tables 1-3\n"
               "  dev SYSTEM...               those the dev set is encoded with (the ordering check's candidates)\n"
               "SYSTEM / WORD arguments may also be given as one space-separated word list.")
    p.add_argument("query", choices=("expand", "check", "conf", "feat", "tables", "dev"))
    p.add_argument("args", nargs="*")
    return p


def _query(a) -> Iterable[str]:
    """The answer to the parsed query A (main's names)."""
    names = words(a.args)
    if a.query == "expand":
        out = expand(names)
    elif a.query == "check":
        if not names:
            raise ValueError("check: give the inverter system, then the systems")
        check(names[1:], names[0])
        out = []
    elif a.query in ("conf", "feat"):
        if len(names) != 1:
            raise ValueError(f"{a.query}: give one system name")
        feat, opts = espnet_options(names[0])
        out = [feat] + (opts if a.query == "conf" else [])
    elif a.query == "dev":
        out = on_dev(names)
    else:
        out = list(TABLE_SYSTEMS)
    return out


def main(argv: Optional[list] = None) -> int:
    a = get_parser().parse_args(argv)
    return answer("local_models.vqvae.systems", lambda: _query(a), errors=(ValueError,))


if __name__ == "__main__":
    sys.exit(main())
