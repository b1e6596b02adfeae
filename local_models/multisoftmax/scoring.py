"""Scores of the multilingual RNN-T recipe (docs/metrics.md), as the paper defines them.

WER: Levenshtein word errors (substitutions + deletions + insertions) summed over utterances, divided by
the number of reference words (word-weighted, also for the average over languages: paper Table 2 "The
average WER is obtained using word weighted WER"). Hypotheses are B_-grapheme units mapped back to words
(units.units_to_text) before scoring; references are the normalised transcripts (stage 3 text_norm).
Corr / Sub / Del / Ins / S.Err (ESPnet's WER table, score_wer/result.txt): from jiwer's minimal word alignment, whose
Sub + Del + Ins is the word edit distance above.
CER: the same over characters with spaces removed (grapheme error rate; a finer view on a tiny corpus).
WERR: relative WER reduction against a baseline, 100 * (WER_base - WER) / WER_base; none against a baseline that
outputs nothing (an empty hypothesis for nearly every utterance of a language: its 100 % WER is no baseline).
LID accuracy: share of utterances whose chosen language is the true one (paper Table 5 reads the script of
the hypothesis; scripts are unique per language, so this is the same thing; where two languages of a run share
a script, report.py gives vanilla's LID as n/a).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Mapping, Optional

import editdistance

from local_models.common.datadir import DataDirError, iter_lines


@dataclass
class Alignment:
    """One utterance's word alignment, as sclite prints it: REF / HYP rows with *** for a gap, and an Eval row
    marking S(ubstitution), D(eletion), I(nsertion) (upper-casing errors, sclite's other mark, means nothing in
    Devanagari or Tamil script)."""
    corr: int
    sub: int
    dels: int
    ins: int
    ref: str
    hyp: str
    eval: str


def align_words(ref: str, hyp: str) -> Alignment:
    """Minimal word alignment of REF and HYP (jiwer, rapidfuzz's Levenshtein opcodes)."""
    import jiwer

    r, h = ref.split(), hyp.split()
    if not r and not h:
        return Alignment(0, 0, 0, 0, "", "", "")
    if not r or not h:  # jiwer wants a non-empty side to align
        return Alignment(0, 0, len(r), len(h), " ".join(r + ["***"] * len(h)),
                         " ".join(["***"] * len(r) + h), " ".join(["D"] * len(r) + ["I"] * len(h)))
    out = jiwer.process_words(" ".join(r), " ".join(h))  # jiwer splits on single spaces only
    cols = []  # (ref word, hyp word, mark)
    for c in out.alignments[0]:
        rw, hw = r[c.ref_start_idx:c.ref_end_idx], h[c.hyp_start_idx:c.hyp_end_idx]
        if c.type == "equal":
            cols += [(x, y, "") for x, y in zip(rw, hw)]
        elif c.type == "substitute":
            cols += [(x, y, "S") for x, y in zip(rw, hw)]
        elif c.type == "delete":
            cols += [(x, "***", "D") for x in rw]
        else:
            cols += [("***", y, "I") for y in hw]
    widths = [max(len(a), len(b), len(m)) for a, b, m in cols]
    row = lambda k: " ".join(col[k].ljust(w) for col, w in zip(cols, widths)).rstrip()  # noqa: E731
    return Alignment(out.hits, out.substitutions, out.deletions, out.insertions, row(0), row(1), row(2))


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
    corr: int = 0        # word alignment (ESPnet's / sclite's Corr, Sub, Del, Ins; S.Err = utterances with an error)
    sub: int = 0
    dels: int = 0
    ins: int = 0
    sent_err: int = 0
    empty_hyps: int = 0  # utterances whose hypothesis has no word (a system that outputs nothing has them all)

    def add(self, ref: str, hyp: str, lid_ok: Optional[bool] = None) -> "Alignment":
        """Count one utterance; returns its word alignment (for score_wer/result.txt)."""
        a = align_words(ref, hyp)
        self.corr, self.sub, self.dels, self.ins = (self.corr + a.corr, self.sub + a.sub, self.dels + a.dels,
                                                    self.ins + a.ins)
        self.word_errors += a.sub + a.dels + a.ins  # = the word edit distance (a minimal alignment)
        self.sent_err += int(a.sub + a.dels + a.ins > 0)
        self.words += a.corr + a.sub + a.dels
        rc, hc = ref.replace(" ", ""), hyp.replace(" ", "")
        self.char_errors += editdistance.eval(rc, hc)
        self.chars += len(rc)
        self.utts += 1
        self.empty_hyps += int(not hyp.split())
        if lid_ok is not None:
            self.lid_known += 1
            self.lid_correct += int(lid_ok)
        return a

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
          hyp_lang: Optional[Mapping[str, str]] = None, hyp_path: str = "hyp",
          alignments: Optional[list] = None) -> Dict[str, Counts]:
    """Counts per true language of every reference utterance; a missing hypothesis is an error.
    ALIGNMENTS, when given, receives (utt, Alignment) per utterance."""
    missing = [u for u in refs if u not in hyps]
    if missing:
        raise DataDirError(hyp_path, None, f"{len(missing)} reference utterances have no hypothesis, e.g. '{missing[0]}'")
    out: Dict[str, Counts] = {}
    for utt, ref in refs.items():
        lang = utt2lid[utt]
        lid_ok = None if hyp_lang is None else hyp_lang.get(utt) == lang
        a = out.setdefault(lang, Counts()).add(ref, hyps[utt], lid_ok)
        if alignments is not None:
            alignments.append((utt, a))
    return out


def espnet_row(name: str, c: Counts) -> str:
    """One row of ESPnet's WER table: |dataset|Snt|Wrd|Corr|Sub|Del|Ins|Err|S.Err| (rates in % of Wrd / Snt)."""
    pw = (lambda n: f"{100.0 * n / c.words:.1f}") if c.words else (lambda n: "-")
    se = f"{100.0 * c.sent_err / c.utts:.1f}" if c.utts else "-"
    return (f"|{name}|{c.utts}|{c.words}|{pw(c.corr)}|{pw(c.sub)}|{pw(c.dels)}|{pw(c.ins)}|"
            f"{pw(c.sub + c.dels + c.ins)}|{se}|")


def wer_diff_interval(a: Mapping[str, tuple], b: Mapping[str, tuple], clusters: Mapping[str, str],
                      what: str = "speakers", n: int = 2000, seed: int = 0, level=None):
    """WER(a) - WER(b) in points over the utterances both decoded, with a paired percentile bootstrap interval
    (common/verdict.bootstrap) that resamples whole CLUSTERS ({utt: speaker}): the utterances of one speaker are
    not independent draws, so 91 utterances of 12 speakers give an interval as wide as 12 speakers warrant.
    A / B: {utt: (word errors, reference words)}. None when fewer than 2 clusters or no reference words. LEVEL a tuple:
    one interval per level, from one set of resamples."""
    import numpy as np

    from local_models.common.verdict import LEVEL, bootstrap

    common = sorted(set(a) & set(b))
    missing = [u for u in common if u not in clusters]
    if missing:
        raise ValueError(f"wer_diff_interval: no {what[:-1] if what.endswith('s') else what} for utterance "
                         f"'{missing[0]}' (utt2spk)")
    ea, eb, w = (np.array([d[u][i] for u in common], dtype=float) for d, i in ((a, 0), (b, 0), (a, 1)))
    labels = [clusters[u] for u in common]
    if len(set(labels)) < 2 or w.sum() == 0:
        return None

    def diff(x, y, words):
        return 100.0 * (x.sum() - y.sum()) / max(words.sum(), 1.0)

    return bootstrap(diff, ea, eb, w, clusters=labels, n=n, seed=seed, what=what,
                     level=LEVEL if level is None else level)


ESPNET_HEADER = ["|dataset|Snt|Wrd|Corr|Sub|Del|Ins|Err|S.Err|", "|---|---|---|---|---|---|---|---|---|"]


def write_sclite(path: Path, name: str, total: Counts, alignments) -> None:
    """sclite-style result.txt: the summary (ESPnet's columns) then every utterance's alignment."""
    from local_models.common.datadir import atomic_open

    lines = [f"{name}", *ESPNET_HEADER, espnet_row("Sum/Avg", total), ""]
    for utt, a in alignments:
        lines += [f"id: ({utt})", f"Scores: (#C #S #D #I) {a.corr} {a.sub} {a.dels} {a.ins}",
                  f"REF:  {a.ref}", f"HYP:  {a.hyp}", f"Eval: {a.eval}", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path) as f:
        f.write("\n".join(lines))


def pooled(per_lang: Mapping[str, Counts], langs: Optional[Iterable[str]] = None) -> Counts:
    """Word-weighted total over languages (all, or `langs`)."""
    total = Counts()
    for lang, c in per_lang.items():
        if langs is None or lang in langs:
            total += c
    return total


SILENT_SHARE = 0.9  # a system "outputs nothing" for a language when this share of its hypotheses is empty


def werr(wer: Optional[float], base: Optional[float]) -> Optional[float]:
    if wer is None or base is None or base == 0:
        return None
    return 100.0 * (base - wer) / base


__all__ = ["Counts", "read_text", "score", "pooled", "werr", "wer_diff_interval"]
