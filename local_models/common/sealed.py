"""Sealed sets: a recipe makes every choice on its dev set and only scores its test / eval sets. Each scoring of a
sealed set is a look; exp/sealed_looks.tsv keeps one line per scoring (date, set, configuration fingerprint, commit,
outputs fingerprint), and results.json / RESULTS.md say how many looks each sealed set has had under the current
configuration: 1 is a clean held-out score, more means the set has been seen while something was still being chosen.
A scoring of the very outputs scored before by the very same code (same configuration, same outputs fingerprint:
the systems' decodes of that set and its references, byte for byte; same clean commit) shows no number that was not
seen: it is counted as a rescoring, said beside the looks, not as a look. A scoring that gives no outputs
fingerprint ("-", and every line of an older 4-field log) or ran from a modified or unknown checkout is a look.

    fp = fingerprint(["conf/train.yaml", "conf/decode.yaml"], options={"threshold": 0.5})
    counts = record_look("exp", ["test"], fp)          # {"test": 1}
    looks_line(counts)                                  # "Sealed sets scored under this configuration: test 1 time."
    (a scoring under another configuration, e.g. before a system was added, is said beside it: earlier_looks)

A recipe declares its sealed sets (stages.sh `sealed_sets`); a tuning step refuses one (`check_tuning`, or from shell
`python -m local_models.common.sealed check --tuning dev --sealed "eval eval_ood"`), and the scoring stage records
its looks with `score_looks`, which results.json keeps under "sealed_looks".
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
from pathlib import Path
from typing import Dict, Iterable, Mapping, Optional, Sequence

from .results import git_commit

LOOKS = "sealed_looks.tsv"
HEADER = "date\tset\tconfig\tcommit\toutputs"
NO_OUTPUTS = "-"  # a scoring that did not fingerprint what it scored: always a look


def fingerprint(files: Iterable, options: Optional[Mapping] = None) -> str:
    """12 hex digits of sha256 over FILES' names and bytes (sorted by name) and OPTIONS (the run's choices that live
    on the command line). A missing file is an error naming it: a fingerprint must not skip what it cannot read."""
    h = hashlib.sha256()
    for path in sorted(Path(f) for f in files):
        if not path.is_file():
            raise FileNotFoundError(f"sealed.fingerprint: no such configuration file {path}")
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(json.dumps(dict(options or {}), sort_keys=True, default=str).encode())
    return h.hexdigest()[:12]


def outputs_fingerprint(files: Iterable, root=".") -> str:
    """12 hex digits of sha256 over FILES' paths (relative to ROOT, so the same tree gives the same print however its
    paths were spelt) and bytes (sorted; a missing file is left out: a system that did not decode the set has no
    output), the outputs and references a scoring reads; "-" (NO_OUTPUTS) when none exists."""
    h, seen = hashlib.sha256(), False
    root = Path(root).resolve()
    for rel, full in sorted({os.path.relpath(Path(f).resolve(), root): Path(f).resolve() for f in files}.items()):
        if full.is_file():
            h.update(rel.encode() + b"\0" + full.read_bytes() + b"\0")
            seen = True
    return h.hexdigest()[:12] if seen else NO_OUTPUTS


def clean_commit(commit: str) -> bool:
    """A commit that names the code exactly (not '+dirty', not 'unknown'): only then can a rescoring be told apart."""
    return bool(commit) and commit != "unknown" and not commit.endswith("+dirty")


def _rows(exp_dir: Path):
    path = Path(exp_dir) / LOOKS
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = []
    for n, line in enumerate(lines[1:], 2):
        fields = line.split("\t")
        if len(fields) not in (4, 5):  # 4: a log written before outputs were fingerprinted
            raise ValueError(f"{path}:{n}: expected 5 tab-separated fields ({HEADER}), got {len(fields)}")
        rows.append(dict(zip(HEADER.split("\t"), fields + [NO_OUTPUTS] * (5 - len(fields)))))
    return rows


def _split(rows, set_name: str, config: str):
    """(looks, rescorings) of SET_NAME under CONFIG: a scoring whose outputs fingerprint and clean commit an earlier
    one of the same set and configuration had shows nothing new (a rescoring); every other scoring is a look."""
    n_looks = n_re = 0
    seen = set()
    for r in rows:
        if r["set"] != set_name or r["config"] != config:
            continue
        key = (r["outputs"], r["commit"])
        if r["outputs"] != NO_OUTPUTS and clean_commit(r["commit"]) and key in seen:
            n_re += 1
        else:
            n_looks += 1
            seen.add(key)
    return n_looks, n_re


def looks(exp_dir, sets: Iterable[str], config: str, rows: Optional[list] = None) -> Dict[str, int]:
    """{set: how many times it was looked at under CONFIG} from EXP_DIR/sealed_looks.tsv (ROWS: the log as read
    already; rescorings of outputs scored before not counted: rescorings)."""
    rows = _rows(Path(exp_dir)) if rows is None else rows
    return {s: _split(rows, s, config)[0] for s in sets}


def rescorings(exp_dir, sets: Iterable[str], config: str, rows: Optional[list] = None) -> Dict[str, int]:
    """{set: how many scorings under CONFIG read outputs scored before}, the sets with any."""
    rows = _rows(Path(exp_dir)) if rows is None else rows
    counts = {s: _split(rows, s, config)[1] for s in sets}
    return {s: n for s, n in counts.items() if n}


def earlier_looks(exp_dir, sets: Iterable[str], config: str, rows: Optional[list] = None) -> Dict[str, int]:
    """{set: how many times it was scored under a configuration other than CONFIG}, the sets with any: a look under
    an earlier configuration came before a choice the current one holds (a system added, a rule changed), so the
    current configuration's count alone would read as a clean held-out score when it is not."""
    rows = _rows(Path(exp_dir)) if rows is None else rows
    others = {r["config"] for r in rows} - {config}
    counts = {s: sum(_split(rows, s, c)[0] for c in others) for s in sets}
    return {s: n for s, n in counts.items() if n}


def record_look(exp_dir, sets: Iterable[str], config: str, commit: Optional[str] = None,
                outputs: Optional[Mapping[str, str]] = None) -> Dict[str, int]:
    """One scoring of each of SETS under CONFIG (OUTPUTS: {set: outputs_fingerprint of what was scored}), appended to
    EXP_DIR/sealed_looks.tsv; returns the looks after it."""
    sets = list(sets)
    return looks(exp_dir, sets, config, _append(Path(exp_dir), sets, config, commit, outputs))


def _append(exp_dir: Path, sets: list, config: str, commit: Optional[str], outputs: Optional[Mapping[str, str]]):
    """Appends one row per set to the log and returns the log's rows after it (read once: a damaged log is an
    error before it grows)."""
    exp_dir.mkdir(parents=True, exist_ok=True)
    rows = _rows(exp_dir)
    commit = commit if commit is not None else git_commit(exp_dir)
    now = datetime.datetime.now().isoformat(timespec="seconds")
    new = [dict(zip(HEADER.split("\t"), (now, s, config, commit, (outputs or {}).get(s, NO_OUTPUTS)))) for s in sets]
    with open(exp_dir / LOOKS, "a", encoding="utf-8") as f:
        if f.tell() == 0:
            f.write(HEADER + "\n")
        f.write("".join("\t".join(r.values()) + "\n" for r in new))
    return rows + new


def _times(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{s} {n} time{'s' if n != 1 else ''}" for s, n in counts.items())


def looks_line(counts: Mapping[str, int], earlier: Optional[Mapping[str, int]] = None,
               rescored: Optional[Mapping[str, int]] = None) -> str:
    """The RESULTS.md sentence for COUNTS ({set: looks under this configuration}), EARLIER ({set: looks under
    other configurations}, earlier_looks) and RESCORED ({set: scorings of outputs scored before}, rescorings)."""
    if not counts:
        line = "No sealed set was scored."
    else:
        seen = [s for s, n in counts.items() if n > 1]
        tail = (f" ({', '.join(seen)} scored more than once under this configuration: not a clean held-out score)"
                if seen else "")
        line = f"Sealed sets scored under this configuration: {_times(counts)}{tail}."
    if rescored:
        line += (f" Rescored from the same outputs and references by the same code (byte for byte: no number not "
                 f"seen before): {_times(rescored)}, not counted as looks.")
    if earlier:
        line += (f" Scored before under other configurations: {_times(earlier)}: a choice made since (a system "
                 "added, a rule changed) may have followed those scores, so they are not fully held out.")
    return line


def record_line(record: Optional[Mapping]) -> str:
    """looks_line of results.json's "sealed_looks" record (score_looks)."""
    record = record or {}
    return looks_line(record.get("looks") or {}, record.get("earlier"), record.get("rescored"))


class SealedSetError(ValueError):
    """A tuning step was handed a sealed set."""


def check_tuning(sets: Iterable[str], sealed: Iterable[str], what: str = "tuning") -> None:
    """Refuse SETS (the data a tuning step chooses on) when one is SEALED: choices are made on dev only."""
    sealed = set(sealed)
    bad = [s for s in sets if s in sealed]
    if bad:
        raise SealedSetError(f"{what}: {', '.join(bad)} {'is a sealed set' if len(bad) == 1 else 'are sealed sets'} "
                             f"(sealed: {' '.join(sorted(sealed))}): choices are made on dev, sealed sets are only "
                             "scored")


def score_looks(exp_dir, scored: Iterable[str], sealed: Iterable[str], config_files: Iterable,
                options: Optional[Mapping] = None, outputs: Optional[Mapping[str, Iterable]] = None,
                commit: Optional[str] = None) -> dict:
    """The scoring stage's record: one scoring of each set of SCORED that is SEALED, under the configuration
    fingerprint of CONFIG_FILES + OPTIONS; OUTPUTS ({set: the files scored, e.g. every system's hypotheses}) tell a
    rescoring of unchanged outputs from a look (COMMIT: the scoring code's, default results.git_commit). Returns
    results.json's "sealed_looks": {"config": fp, "looks": {set: n}} ({} looks when no sealed set was scored), with
    "rescored": {set: rescorings} and "earlier": {set: looks under other configurations} for each sealed set that
    has any."""
    sealed = list(dict.fromkeys(sealed))
    scored_sealed = [s for s in dict.fromkeys(scored) if s in sealed]
    config = fingerprint(config_files, options)
    prints = {s: outputs_fingerprint(outputs[s], exp_dir) for s in scored_sealed if s in (outputs or {})}
    rows = _append(Path(exp_dir), scored_sealed, config, commit, prints) if scored_sealed else _rows(Path(exp_dir))
    counts = looks(exp_dir, scored_sealed, config, rows)
    earlier = earlier_looks(exp_dir, sealed, config, rows)
    rescored = rescorings(exp_dir, scored_sealed, config, rows)
    return {"config": config, "looks": counts, **({"rescored": rescored} if rescored else {}),
            **({"earlier": earlier} if earlier else {})}


def main(argv: Optional[Sequence[str]] = None) -> int:
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m local_models.common.sealed", description=(
        "Sealed sets: `check` refuses a tuning step handed a sealed set (exit 1, one line naming it); `looks` prints "
        "how many times each set was scored under a configuration (exp/sealed_looks.tsv)."))
    sub = parser.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="exit 1 when a --tuning set is --sealed")
    c.add_argument("--tuning", required=True, help="the sets the step chooses on (space-separated)")
    c.add_argument("--sealed", default="", help="the recipe's sealed sets (space-separated)")
    c.add_argument("--what", default="tuning", help="the step's name, for the message")
    lk = sub.add_parser("looks", help="print the looks of each set under a configuration")
    lk.add_argument("exp_dir")
    lk.add_argument("--sets", required=True, help="space-separated")
    lk.add_argument("--config", required=True, help="the configuration fingerprint")
    args = parser.parse_args(argv)
    if args.cmd == "check":
        try:
            check_tuning(args.tuning.split(), args.sealed.split(), args.what)
        except SealedSetError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        return 0
    sets = args.sets.split()
    print(looks_line(looks(args.exp_dir, sets, args.config), earlier_looks(args.exp_dir, sets, args.config),
                     rescorings(args.exp_dir, sets, args.config)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
