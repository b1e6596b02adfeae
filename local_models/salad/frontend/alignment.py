"""Phone times for an analysed sentence: our phones DP-aligned to espeak-ng's phone events."""
from __future__ import annotations

from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from .phones import GLIDES, SILENCES, VOWELS
from .sentence import Phone, Sentence

# espeak-ng's Spanish phone mnemonics -> our phones. Diphthongs split into vowel + glide (sharing the time
# equally); mnemonics missing here (";", espeak's i-vowel hiatus transition, or anything unexpected) have no
# counterpart and lend their time to a neighbour.
ESPEAK_PHONES: Dict[str, Tuple[str, ...]] = {
    **{p: (p,) for p in ("a", "e", "i", "o", "u", "j", "w", "p", "b", "t", "d", "k", "g", "B", "D",
                         "f", "T", "s", "x", "tS", "m", "n", "l", "r", "sil")},
    "E": ("e",), "O": ("o",), "Q": ("G",), "z": ("s",), "S": ("s",), "J^": ("jj",), "dZ": ("jj",),
    "N": ("n",), "n^": ("J",), "l^": ("L",), "**": ("r",), "R": ("rr",), "R2": ("rr",),
    "aI": ("a", "j"), "aU": ("a", "w"), "eI": ("e", "j"), "eU": ("e", "w"), "oI": ("o", "j"), "oU": ("o", "w"),
}
_INDEL = 1.0
_CLOSE_PAIRS = {frozenset(pair) for pair in (
    ("b", "B"), ("d", "D"), ("g", "G"), ("p", "b"), ("t", "d"), ("k", "g"), ("r", "rr"), ("l", "L"),
    ("L", "jj"), ("j", "jj"), ("i", "j"), ("u", "w"), ("n", "J"), ("n", "m"), ("s", "T"), ("tS", "jj"),
)}
_VOCALIC = set(VOWELS) | set(GLIDES)


def _is_silence(name: Optional[str]) -> bool:
    return name in SILENCES


def phone_distance(ours: str, theirs: Optional[str]) -> float:
    """Substitution cost of the alignment: 0 same phone, 0.5 close pair, 1 same broad class, 1.6 vowel vs
    consonant (all below two indels); silence only ever pairs with silence."""
    if _is_silence(ours) or _is_silence(theirs):
        return 0.0 if _is_silence(ours) and _is_silence(theirs) else 10.0
    if theirs is None:
        return 1.5
    if ours == theirs:
        return 0.0
    if frozenset((ours, theirs)) in _CLOSE_PAIRS:
        return 0.5
    return 1.0 if (ours in _VOCALIC) == (theirs in _VOCALIC) else 1.6


def _split_span(start: float, end: float, weights: Sequence[float]) -> List[float]:
    """Edges cutting [start, end] in proportion to weights; the outer edges are exactly start and end, so
    neighbouring pieces share identical boundaries."""
    total, acc = sum(weights), 0.0
    edges = [start]
    for w in weights[:-1]:
        acc += w
        edges.append(start + (end - start) * acc / total)
    return edges + [end]


class _Unit(NamedTuple):
    name: Optional[str]  # our phone for this piece of an espeak phone; None when it has no counterpart
    start: float  # samples
    end: float


def _espeak_units(events: Sequence[Tuple[str, int, int]]) -> List[_Unit]:
    if not events:
        raise ValueError("align: no espeak phone events")
    units: List[_Unit] = []
    expected = 0
    for label, start, end in events:
        if start != expected or end <= start:
            raise ValueError(f"align: espeak events must tile the wave from sample 0; got {label!r} "
                             f"[{start}, {end}) after sample {expected}")
        names = ESPEAK_PHONES.get(label, (None,))
        edges = _split_span(start, end, [1.0] * len(names))
        units.extend(_Unit(n, a, b) for n, a, b in zip(names, edges, edges[1:]))
        expected = end
    return units


def _edit_path(ours: Sequence[str], theirs: Sequence[Optional[str]]) -> List[Tuple[Optional[int], Optional[int]]]:
    """Minimum-cost edit alignment: [(our index or None, their index or None)] in order."""
    n, m = len(ours), len(theirs)
    cost = [[0.0] * (m + 1) for _ in range(n + 1)]
    move = [[""] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        cost[i][0], move[i][0] = i * _INDEL, "del"
    for j in range(1, m + 1):
        cost[0][j], move[0][j] = j * _INDEL, "ins"
    for i in range(1, n + 1):
        row, above, moves = cost[i], cost[i - 1], move[i]
        for j in range(1, m + 1):
            # ties prefer a substitution, then a deletion
            best, step = above[j - 1] + phone_distance(ours[i - 1], theirs[j - 1]), "sub"
            if above[j] + _INDEL < best:
                best, step = above[j] + _INDEL, "del"
            if row[j - 1] + _INDEL < best:
                best, step = row[j - 1] + _INDEL, "ins"
            row[j], moves[j] = best, step
    path: List[Tuple[Optional[int], Optional[int]]] = []
    i, j = n, m
    while i or j:
        step = move[i][j]
        path.append((i - 1 if step != "ins" else None, j - 1 if step != "del" else None))
        i, j = i - (step != "ins"), j - (step != "del")
    return path[::-1]


class Alignment(NamedTuple):
    """segments: (phone, start_s, end_s) tiling the wave; matched: front-end phones whose espeak partner is the
    same phone; total: front-end phones (the sentence's, before pauses are dropped or inserted)."""

    segments: List[Tuple[Phone, float, float]]
    matched: int
    total: int

    @property
    def match_rate(self) -> float:
        return self.matched / self.total if self.total else 0.0


# An unpartnered sil takes this weight (a partnered phone has 1) when it shares an espeak phone's time:
# espeak did not render that silence, so it gets a token duration.
_SHORT_SHARE = 0.25


def _units_around(path: Sequence[Tuple[Optional[int], Optional[int]]]) -> List[Tuple[Optional[int], Optional[int]]]:
    """For every path step, the nearest unit index at or before it and at or after it."""
    units = [j for _, j in path]
    return [(next((u for u in reversed(units[:k + 1]) if u is not None), None),
             next((u for u in units[k:] if u is not None), None)) for k in range(len(units))]


def _attachments(path: Sequence[Tuple[Optional[int], Optional[int]]], ours: Sequence[Phone],
                 units: Sequence[_Unit]) -> List[List[Tuple[Phone, float]]]:
    """For every unit, the (phone, weight) pairs that share its time, in utterance order. An unpartnered phone
    joins the unit before or after it, preferring one of its own kind (silence or speech); an unpartnered pau
    is dropped (there is no pause in the audio)."""
    members: List[List[Tuple[Phone, float]]] = [[] for _ in units]
    for (i, j), around in zip(path, _units_around(path)):
        if i is None:
            continue
        phone = ours[i]
        if j is not None:
            members[j].append((phone, 1.0))
        elif phone.name != "pau":
            candidates = [u for u in around if u is not None]
            same_kind = [u for u in candidates if _is_silence(units[u].name) == _is_silence(phone.name)]
            members[(same_kind or candidates)[0]].append((phone, _SHORT_SHARE if _is_silence(phone.name) else 1.0))
    return members


def _groups(members, units: Sequence[_Unit]) -> List[Tuple[List[Tuple[Phone, float]], float, float]]:
    """Merge units into contiguous time groups: an unpartnered espeak silence becomes a pau (or extends an
    adjacent silence), other unpartnered espeak phones join the previous speech group (else the next one)."""
    groups: List[list] = []
    carry: Optional[float] = None  # start of leading unpartnered speech waiting for the next group

    def all_silence(group) -> bool:
        return all(_is_silence(p.name) for p, _ in group[0])

    for unit, unit_members in zip(units, members):
        if not unit_members and _is_silence(unit.name):
            if groups and all_silence(groups[-1]) and carry is None:
                groups[-1][2] = unit.end
                continue
            unit_members = [(Phone("pau"), 1.0)]
        if unit_members:
            groups.append([list(unit_members), unit.start if carry is None else carry, unit.end])
            carry = None
        elif groups and not all_silence(groups[-1]) and carry is None:
            groups[-1][2] = unit.end
        elif carry is None:
            carry = unit.start
    if carry is not None:
        groups[-1][2] = units[-1].end
    return [(g[0], g[1], g[2]) for g in groups]


def align(sentence: Sentence, events: Sequence[Tuple[str, int, int]], sample_rate: int) -> Alignment:
    """Phone times for `sentence` from espeak-ng's phone events [(label, start, end)] in samples (as in
    `synthesize(text, voice).phones`, which tile the wave). Every front-end phone gets time except a pau with no
    espeak silence, which is dropped; an espeak silence with no partner becomes an inserted pau. Times strictly
    increase and tile [0, wave length]."""
    if sample_rate <= 0:
        raise ValueError(f"align: sample_rate must be positive, got {sample_rate}")
    units = _espeak_units(events)
    ours = list(sentence.phones)
    path = _edit_path([p.name for p in ours], [u.name for u in units])
    matched = sum(1 for i, j in path if i is not None and j is not None
                  and (ours[i].name == units[j].name or (_is_silence(ours[i].name) and _is_silence(units[j].name))))
    segments: List[Tuple[Phone, float, float]] = []
    for group, start, end in _groups(_attachments(path, ours, units), units):
        edges = _split_span(start, end, [w for _, w in group])
        segments.extend((phone, a / sample_rate, b / sample_rate) for (phone, _), a, b in zip(group, edges, edges[1:]))
    return Alignment(segments, matched, len(ours))
