"""Rule-based grapheme to phoneme conversion with Castilian glides and allophones."""
from __future__ import annotations

import re
from typing import List, Sequence, Tuple

from .phones import PHONE_CLASSES, VOWELS

_ACCENTED = set("áéíóú")
_VOWEL_LETTERS = {"a": "a", "e": "e", "i": "i", "o": "o", "u": "u", "ü": "u",
                  "á": "a", "é": "e", "í": "i", "ó": "o", "ú": "u"}
VOWEL_SPELLINGS = "aeiouáéíóúü"
# Ordered (pattern, phones) rules, tried at each letter; the first match wins. Letters not listed map to
# themselves (d f l m n p s t). Lookbehinds see the letters already consumed.
_G2P_RULES = tuple((re.compile(pattern), tuple(phones.split())) for pattern, phones in (
    ("ch", "tS"), ("ll", "L"), ("rr", "rr"),
    ("^r|(?<=[lns])r", "rr"),  # initial r and r after l n s are trills
    ("r", "r"),
    ("qu(?=[eéií])", "k"), ("gu(?=[eéií])", "g"),  # silent u (gü keeps it: ü is a vowel letter)
    ("g(?=[eéií])", "x"), ("c(?=[eéií])", "T"),
    ("(?<=^m[eé])x(?=ic)", "x"),  # México, mexicano keep the old spelling of the jota
    ("^x", "s"), ("x", "k s"),
    (f"(?<=[{VOWEL_SPELLINGS}])y(?![{VOWEL_SPELLINGS}])", "j"),  # rey, hoy, muy: glide closing a diphthong
    (f"y(?![{VOWEL_SPELLINGS}])", "i"),  # the conjunction y
    ("y", "jj"),
    ("^p(?=s)", ""),  # psicología
    ("h", ""), ("[bv]", "b"), ("[cqk]", "k"), ("z", "T"), ("j", "x"), ("ñ", "J"), ("w", "w"),
))
Segment = Tuple[str, bool]  # (phone, carries a written accent)


def letters_to_segments(word: str) -> List[Segment]:
    """Letters -> phonemes, before glides and allophones; vowels keep their written accent."""
    segs: List[Segment] = []
    pos = 0
    while pos < len(word):
        letter = word[pos]
        if letter in _VOWEL_LETTERS:
            segs.append((_VOWEL_LETTERS[letter], letter in _ACCENTED))
            pos += 1
            continue
        for pattern, phones in _G2P_RULES:
            match = pattern.match(word, pos)
            if match:
                segs.extend((p, False) for p in phones)
                pos = match.end()
                break
        else:
            segs.append((letter, False))
            pos += 1
    return segs


def glides(segs: List[Segment]) -> List[Segment]:
    """Unaccented i / u next to a vowel become glides j / w; in i+u and u+i the first one does (ciudad, cuidado)."""
    out = list(segs)
    for k in range(len(out)):  # left to right: a glide made here is no longer a vowel for the next letter
        phone, accented = out[k]
        if phone not in ("i", "u") or accented:
            continue
        next_vowel = k + 1 < len(out) and out[k + 1][0] in VOWELS
        prev_vowel = k > 0 and out[k - 1][0] in VOWELS
        if next_vowel or prev_vowel:
            out[k] = ("j" if phone == "i" else "w", False)
    return out


_SPIRANTS = {"b": "B", "d": "D", "g": "G"}
_NASALS = PHONE_CLASSES["nasal"]
_LABIALS = ("p", "b", "f")  # not m: espeak keeps "n m" (inmenso), both are heard


def allophones(phonemes: Sequence[str]) -> List[str]:
    """Castilian allophones over one phrase (words run together): b d g -> B D G, except after the pause that
    starts the phrase, after a nasal, and (d only) after a lateral; n -> m before p b f (un beso, enfermo)."""
    out = []
    for k, p in enumerate(phonemes):
        prev = phonemes[k - 1] if k else None
        if p in _SPIRANTS and prev is not None and prev not in _NASALS and not (p == "d" and prev in ("l", "L")):
            p = _SPIRANTS[p]
        elif p == "n" and k + 1 < len(phonemes) and phonemes[k + 1] in _LABIALS:
            p = "m"
        out.append(p)
    return out
