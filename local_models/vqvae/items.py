"""ZeroSpeech / ABX ``.item`` files, made from phone alignments.

Format (ZeroSpeech 2017/2019, libri-light and zerospeech-libriabx2 read the same): a header line
``#file onset offset #phone prev-phone next-phone speaker`` then one line per item,
``<file> <onset_s> <offset_s> <phone> <prev-phone> <next-phone> <speaker>``.

An item is one phone token with its triphone context. Phones that are silence/pause, and phones
without a real phone on both sides (utterance edges, or next to a silence) make no item: the
alignment ``a sil b c d sil`` gives one item, ``c`` in context ``b _ d``. Neighbours are consecutive
entries of an utterance's alignment (a gap between two phones does not break the context).

By default (``span="triphone"``) an item spans the whole triphone, from the start of the previous
phone to the end of the next one: the ZeroSpeech 2015-2021 "within-context" ABX compares triphones
that differ in their middle phone ("beg" vs "bag"). ``span="phone"`` gives the middle phone's own
times (the phoneme-level item files of zerospeech-libriabx2).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from local_models.common.datadir import DataDirError, atomic_open, c_sort_key, iter_lines

ITEM_HEADER = "#file onset offset #phone prev-phone next-phone speaker"
DEFAULT_SILENCE = frozenset({"sil", "SIL", "sp", "SP", "spn", "SPN", "<sil>", "<SIL>", "pau", "h#", "_"})
# Adjacent phones may overlap / leave a gap of this much (alignments rounded to the ms, e.g. CTM).
TIME_TOLERANCE = 1e-6

PhoneAlignment = Sequence[Tuple[str, float, float]]


class ItemFileError(DataDirError):
    """A defect in an item file or an alignment file; the message names file, line and reason."""


@dataclass(frozen=True)
class Item:
    file: str
    onset: float
    offset: float
    phone: str
    prev: str
    next: str
    speaker: str

    @property
    def context(self) -> Tuple[str, str]:
        return (self.prev, self.next)

    def line(self) -> str:
        return f"{self.file} {_fmt(self.onset)} {_fmt(self.offset)} {self.phone} {self.prev} {self.next} {self.speaker}"


def _fmt(t: float) -> str:
    # 10 us resolution; drop trailing zeros so that 0.5 is written "0.5"
    s = f"{t:.5f}".rstrip("0")
    return s + "0" if s.endswith(".") else s


def speaker_from_name(utt: str) -> str:
    """Speaker = file-name prefix up to the first '_' or '-' (ZeroSpeech 'S002_0379088085',
    Kaldi 'spk-utt'); the whole name when it has neither."""
    cut = [i for i in (utt.find("_"), utt.find("-")) if i > 0]
    return utt[: min(cut)] if cut else utt


def _check_token(what: str, value: str, where: str) -> None:
    if not value or any(c.isspace() for c in value):
        raise ValueError(f"{where}: {what} {value!r} is empty or contains whitespace")


def check_alignment(utt: str, phones: PhoneAlignment) -> None:
    """Raise ValueError naming the utterance and phone index if the alignment is malformed:
    labels must be non-empty without whitespace, 0 <= start < end, phones in time order and not
    overlapping (up to TIME_TOLERANCE)."""
    _check_token("utterance id", utt, "alignment")
    prev_end = -math.inf
    for i, entry in enumerate(phones):
        where = f"alignment of {utt!r}, phone {i}"
        try:
            label, start, end = entry
            start, end = float(start), float(end)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: expected (phone, start_s, end_s), got {entry!r}") from None
        _check_token("phone", label, where)
        if not (math.isfinite(start) and math.isfinite(end)) or start < 0 or not end > start:
            raise ValueError(f"{where} ({label}): need 0 <= start < end, got {start}..{end}")
        if start < prev_end - TIME_TOLERANCE:
            raise ValueError(f"{where} ({label}): starts at {start} before the previous phone ends ({prev_end})")
        prev_end = end


def make_items(
    alignments: Mapping[str, PhoneAlignment],
    speakers: Union[Mapping[str, str], Callable[[str], str], None] = None,
    silence: Iterable[str] = DEFAULT_SILENCE,
    span: str = "triphone",
) -> List[Item]:
    """One Item per phone token that has a non-silence phone on both sides.

    alignments: {utt: [(phone, start_s, end_s), ...]} in time order (silences included or not).
    speakers: utt2spk mapping, or a function of the utterance id (default: `speaker_from_name`).
    Items come sorted by file (C order) then onset.
    """
    if span not in ("triphone", "phone"):
        raise ValueError(f"span must be 'triphone' or 'phone', got {span!r}")
    silence = frozenset(silence)
    if speakers is None:
        speakers = speaker_from_name
    items: List[Item] = []
    for utt in sorted(alignments, key=c_sort_key):
        phones = list(alignments[utt])
        check_alignment(utt, phones)
        if callable(speakers):
            spk = speakers(utt)
        else:
            if utt not in speakers:
                raise ValueError(f"utterance {utt!r} has no speaker (not in utt2spk)")
            spk = speakers[utt]
        _check_token("speaker", spk, f"utterance {utt!r}")
        for i in range(1, len(phones) - 1):
            (p0, s0, _), (p1, s1, e1), (p2, _, e2) = phones[i - 1], phones[i], phones[i + 1]
            if p0 in silence or p1 in silence or p2 in silence:
                continue
            onset, offset = (float(s0), float(e2)) if span == "triphone" else (float(s1), float(e1))
            items.append(Item(utt, onset, offset, p1, p0, p2, spk))
    return items


def write_item_file(path: Union[str, os.PathLike], items: Iterable[Item]) -> int:
    """Write the header and one line per item, atomically; return the number of items."""
    n = 0
    with atomic_open(path) as f:
        f.write(ITEM_HEADER + "\n")
        for item in items:
            f.write(item.line() + "\n")
            n += 1
    return n


def read_item_file(path: Union[str, os.PathLike]) -> List[Item]:
    """Read an item file; ItemFileError names the file and line of any defect."""
    if not Path(path).is_file():
        raise ItemFileError(path, None, "item file does not exist")
    items: List[Item] = []
    for lineno, line in iter_lines(path):
        fields = line.split()
        if lineno == 1:
            if fields != ITEM_HEADER.split():
                raise ItemFileError(path, 1, f"header must be '{ITEM_HEADER}', got '{line.strip()}'")
            continue
        if not fields:
            raise ItemFileError(path, lineno, "empty line")
        if len(fields) != 7:
            raise ItemFileError(path, lineno, f"expected 7 fields (file onset offset phone prev next speaker), "
                                              f"got {len(fields)}")
        onset, offset = _time_span(path, lineno, fields[1], fields[2], "onset/offset", as_duration=False)
        items.append(Item(fields[0], onset, offset, fields[3], fields[4], fields[5], fields[6]))
    if not items:
        raise ItemFileError(path, None, "no items (empty file or header only)")
    return items


def _time_span(path, lineno: int, a: str, b: str, names: str, as_duration: bool) -> Tuple[float, float]:
    """(start, end) in seconds from fields A B: onset offset, or start duration (as_duration); both finite,
    start >= 0, end > start. Errors name the file and line."""
    try:
        start, second = float(a), float(b)
    except ValueError:
        raise ItemFileError(path, lineno, f"{names} are not numbers: '{a}' '{b}'") from None
    end = start + second if as_duration else second
    if not (math.isfinite(start) and math.isfinite(second)) or start < 0 or not end > start:
        need = "start >= 0 and duration > 0" if as_duration else "0 <= onset < offset"
        raise ItemFileError(path, lineno, f"need {need}, got {a} {b}")
    return start, end


def read_ctm(path: Union[str, os.PathLike]) -> Dict[str, List[Tuple[str, float, float]]]:
    """Read phone alignments from a CTM (``<utt> <channel> <start_s> <dur_s> <phone> [conf]``, as
    the mini-corpus builder writes ``phones.ctm``) into {utt: [(phone, start_s, end_s), ...]}, each
    utterance sorted by start time."""
    if not Path(path).is_file():
        raise ItemFileError(path, None, "CTM file does not exist")
    out: Dict[str, List[Tuple[str, float, float]]] = {}
    for lineno, line in iter_lines(path):
        fields = line.split()
        if not fields or fields[0].startswith(";;"):
            continue
        if len(fields) not in (5, 6):
            raise ItemFileError(path, lineno, f"CTM lines need 5 or 6 fields (utt channel start dur phone [conf]), "
                                              f"got {len(fields)}")
        start, end = _time_span(path, lineno, fields[2], fields[3], "start/duration", as_duration=True)
        out.setdefault(fields[0], []).append((fields[4], start, end))
    for phones in out.values():
        phones.sort(key=lambda p: p[1])
    return out


def item_summary(items: Sequence[Item]) -> Dict[str, int]:
    """Counts that say whether an item file can give an across-speaker ABX score at all."""
    return {
        "items": len(items),
        "files": len({it.file for it in items}),
        "speakers": len({it.speaker for it in items}),
        "phones": len({it.phone for it in items}),
        "contexts": len({it.context for it in items}),
    }


def items_from_ctm(ctm: Union[str, os.PathLike], utt2spk: Optional[Mapping[str, str]] = None,
                   silence: Iterable[str] = DEFAULT_SILENCE, span: str = "triphone") -> List[Item]:
    """`make_items` over a CTM file; alignment errors are re-raised naming the CTM file."""
    alignments = read_ctm(ctm)
    try:
        return make_items(alignments, utt2spk, silence, span)
    except ValueError as e:
        raise ItemFileError(ctm, None, str(e)) from None
