"""Syllabification (onset maximisation) and lexical stress of Spanish words."""
from __future__ import annotations

from typing import List, Sequence, Tuple

from .g2p import VOWEL_SPELLINGS, Segment
from .phones import GLIDES, VOWELS

# Two-consonant onsets of Spanish (phonemic: before b d g become approximants). "tl" is split in Castilian.
_ONSETS = {("p", "r"), ("p", "l"), ("b", "r"), ("b", "l"), ("f", "r"), ("f", "l"), ("t", "r"), ("d", "r"),
           ("k", "r"), ("k", "l"), ("g", "r"), ("g", "l")}


def _nuclei(phones: Sequence[str]) -> List[Tuple[int, int]]:
    """[first, last] phone index of every nucleus: a vowel with the glides on either side of it.

    A glide between two vowels opens the second syllable (le-ja), as in rising diphthongs."""
    spans: List[Tuple[int, int]] = []
    for v, phone in enumerate(phones):
        if phone not in VOWELS:
            continue
        first = v
        while first > 0 and phones[first - 1] in GLIDES and (not spans or first - 1 > spans[-1][1]):
            first -= 1
        last = v
        while last + 1 < len(phones) and phones[last + 1] in GLIDES and not (
                last + 2 < len(phones) and phones[last + 2] in VOWELS):
            last += 1
        spans.append((first, last))
    return spans


def syllabify(phones: Sequence[str]) -> List[List[str]]:
    """Split one word's phonemes into syllables by onset maximisation with the legal onsets of Spanish.

    A word without a vowel stays one syllable."""
    spans = _nuclei(phones)
    if not spans:
        return [list(phones)]
    cuts = [0]
    for (_, end), (start, _) in zip(spans, spans[1:]):
        cluster = tuple(phones[end + 1:start])
        onset = 2 if len(cluster) >= 2 and cluster[-2:] in _ONSETS else min(1, len(cluster))
        cuts.append(start - onset)
    cuts.append(len(phones))
    return [list(phones[a:b]) for a, b in zip(cuts, cuts[1:])]


def stressed_syllable(word: str, syllables: List[List[Segment]]) -> int:
    """Index of the lexically stressed syllable: the written accent, else the penultimate for words ending in a
    vowel, n or s, else the last."""
    for k, syl in enumerate(syllables):
        if any(accented for _, accented in syl):
            return k
    if len(syllables) > 1 and word[-1] in VOWEL_SPELLINGS + "ns":
        return len(syllables) - 2
    return len(syllables) - 1


def split_segments(segs: List[Segment]) -> List[List[Segment]]:
    """A word's segments cut where syllabify() cuts its phones (the written accents travel along)."""
    out, pos = [], 0
    for syl in syllabify([p for p, _ in segs]):
        out.append(segs[pos:pos + len(syl)])
        pos += len(syl)
    return out
