"""Scores of the multilingual RNN-T recipe (docs/metrics.md), as the paper defines them.

WER: Levenshtein word errors (substitutions + deletions + insertions) summed over utterances, divided by
the number of reference words (word-weighted, also for the average over languages: paper Table 2 "The
average WER is obtained using word weighted WER"). Hypotheses are B_-grapheme units mapped back to words
(units.units_to_text) before scoring; references are the normalised transcripts (stage 3 text_norm).
CER: the same over characters with spaces removed (grapheme error rate; a finer view on a tiny corpus).
WERR: relative WER reduction against a baseline, 100 * (WER_base - WER) / WER_base.
LID accuracy: share of utterances whose chosen language is the true one (paper Table 5 reads the script of
the hypothesis; scripts are unique per language, so this is the same thing).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Mapping, Optional

import editdistance

from local_models.common.datadir import DataDirError, iter_lines


@dataclass
class Counts:
    """Error and reference totals of a set of utterances."""

    word_errors: int = 0
    words: int = 0
    char_errors: int = 0
    chars: int = 0
    utts: int = 0
    lid_correct: int = 0
    lid_known: int = 0   # utterances with a chosen language

    def add(self, ref: str, hyp: str, lid_ok: Optional[bool] = None) -> None:
        r, h = ref.split(), hyp.split()
        self.word_errors += editdistance.eval(r, h)
        self.words += len(r)
        rc, hc = ref.replace(" ", ""), hyp.replace(" ", "")
        self.char_errors += editdistance.eval(rc, hc)
        self.chars += len(rc)
        self.utts += 1
        if lid_ok is not None:
            self.lid_known += 1
            self.lid_correct += int(lid_ok)

    def __iadd__(self, other: "Counts") -> "Counts":
        for k in self.__dataclass_fields__:
            setattr(self, k, getattr(self, k) + getattr(other, k))
        return self

    @property
    def wer(self) -> Optional[float]:
        return 100.0 * self.word_errors / self.words if self.words else None

    @property
    def cer(self) -> Optional[float]:
        return 100.0 * self.char_errors / self.chars if self.chars else None

    @property
    def lid_acc(self) -> Optional[float]:
        return 100.0 * self.lid_correct / self.utts if self.lid_known else None


def read_text(path: Path, allow_empty: bool = False) -> Dict[str, str]:
    """`<utt> <text>` lines -> {utt: text}; a hypothesis may be empty (a deletion of every word)."""
    if not Path(path).is_file():
        raise DataDirError(path, None, "missing")
    out = {}
    for lineno, line in iter_lines(path):
        parts = line.split(maxsplit=1)
        if not parts:
            raise DataDirError(path, lineno, "empty line")
        if len(parts) == 1 and not allow_empty:
            raise DataDirError(path, lineno, f"'{parts[0]}': empty transcript")
        if parts[0] in out:
            raise DataDirError(path, lineno, f"'{parts[0]}': duplicate key")
        out[parts[0]] = parts[1] if len(parts) > 1 else ""
    return out


def score(refs: Mapping[str, str], hyps: Mapping[str, str], utt2lid: Mapping[str, str],
          hyp_lang: Optional[Mapping[str, str]] = None, hyp_path: str = "hyp") -> Dict[str, Counts]:
    """Counts per true language of every reference utterance; a missing hypothesis is an error."""
    missing = [u for u in refs if u not in hyps]
    if missing:
        raise DataDirError(hyp_path, None, f"{len(missing)} reference utterances have no hypothesis, e.g. '{missing[0]}'")
    out: Dict[str, Counts] = {}
    for utt, ref in refs.items():
        lang = utt2lid[utt]
        lid_ok = None if hyp_lang is None else hyp_lang.get(utt) == lang
        out.setdefault(lang, Counts()).add(ref, hyps[utt], lid_ok)
    return out


def pooled(per_lang: Mapping[str, Counts], langs: Optional[Iterable[str]] = None) -> Counts:
    """Word-weighted total over languages (all, or `langs`)."""
    total = Counts()
    for lang, c in per_lang.items():
        if langs is None or lang in langs:
            total += c
    return total


def werr(wer: Optional[float], base: Optional[float]) -> Optional[float]:
    if wer is None or base is None or base == 0:
        return None
    return 100.0 * (base - wer) / base


__all__ = ["Counts", "read_text", "score", "pooled", "werr"]
