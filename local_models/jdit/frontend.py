"""Korean text as a person types it -> the tokens a KSS / JDI-T model reads (jamo or espeak-ng phonemes).

KSS' training text (its expanded column, and the mini corpus) spells everything in Hangul; typed text does not.
Before the tokens (`g2p.text_to_tokens`, `phonemes.text_to_phonemes`), `normalize` spells out what it can read:

* numbers (ASCII or full-width digits): Sino-Korean (3 -> 삼, 1,500 -> 천오백, 2024 -> 이천이십사, 10000 -> 만,
  3.14 -> 삼 점 일사); a number with leading zeros (010) and one longer than 20 digits digit by digit (공일공);
  before a counter that takes the native numerals (개, 명, 마리, 살, 시, 시간, 잔, 권, 장, ...: `NATIVE_COUNTERS`)
  a number of 1-99 is read natively (3개 -> 세 개, 20살 -> 스무 살); 6월 / 10월 -> 유월 / 시월;
* "%" -> 퍼센트; Latin letters -> their Korean names, letter by letter (TV -> 티브이, KTX -> 케이티엑스), the way
  acronyms are read (a word such as "hello" is spelled, too: write it in Hangul to have it read as a word);
* full-width forms (Ａ, ３, ！) as their ASCII counterparts.

Spaces and punctuation then go to `g2p` unchanged. A character neither reads (Hanja, emoji, other scripts,
symbols): `UnreadableText`, naming every such character and its 1-based position in the text as typed.
"""
from __future__ import annotations

import re
import unicodedata
from typing import List, Tuple

from . import g2p
from .phonemes import tokens_of

SINO = "영일이삼사오육칠팔구"
DIGIT_NAMES = "공일이삼사오육칠팔구"  # digit-by-digit reading (phone numbers, codes)
SMALL_UNITS = ("", "십", "백", "천")
BIG_UNITS = ("", "만", "억", "조", "경")
NATIVE_ONES = ("", "한", "두", "세", "네", "다섯", "여섯", "일곱", "여덟", "아홉")  # attributive forms
NATIVE_TENS = ("", "열", "스물", "서른", "마흔", "쉰", "예순", "일흔", "여든", "아흔")
# counters read with the native numerals (1-99); longest first so 시간 wins over 시
NATIVE_COUNTERS = tuple(sorted(("개", "명", "마리", "살", "시", "시간", "잔", "병", "권", "장", "벌", "채", "대",
                                "가지", "사람", "군데", "달", "그릇", "켤레", "송이", "척", "통", "번째"),
                               key=len, reverse=True))
MONTHS = {6: "유", 10: "시"}  # the two irregular month names (유월, 시월)
LATIN = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                 ("에이", "비", "씨", "디", "이", "에프", "지", "에이치", "아이", "제이", "케이", "엘", "엠", "엔", "오",
                  "피", "큐", "알", "에스", "티", "유", "브이", "더블유", "엑스", "와이", "제트")))
SYMBOLS = {"%": "퍼센트"}
MAX_DIGITS = 20  # up to 경 (10^16) groups; longer numbers are read digit by digit

# a number: digits with optional thousands separators, optional decimal part
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


class UnreadableText(ValueError):
    """Characters the Korean front end cannot read; `chars` is [(char, 1-based position)]."""

    def __init__(self, chars: List[Tuple[str, int]]):
        self.chars = chars
        shown = ", ".join(f"{c!r} (U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}) at position {i}"
                          for c, i in chars[:10])
        more = f" and {len(chars) - 10} more" if len(chars) > 10 else ""
        super().__init__(f"the Korean front end cannot read {shown}{more} (it reads Hangul, digits, Latin letters, "
                         "spaces and . , ! ? ; : ~ - % and quotes)")


def _halfwidth(text: str) -> str:
    """Full-width ASCII forms (U+FF01-FF5E) -> ASCII; everything else unchanged (NFKC would also rewrite jamo)."""
    return "".join(chr(ord(c) - 0xFEE0) if 0xFF01 <= ord(c) <= 0xFF5E else c for c in text)


def _readable(ch: str) -> bool:
    return (ch.isspace() or ch in g2p._PUNCT or ch in g2p.SILENT or ch in SYMBOLS or ch.upper() in LATIN
            or "0" <= ch <= "9" or g2p.char_to_jamo(ch) is not None)


def check_readable(text: str) -> None:
    """UnreadableText naming every character of TEXT (as typed) that neither normalize nor g2p reads."""
    text = unicodedata.normalize("NFC", text)
    bad = [(c, i) for i, c in enumerate(text, 1) if not _readable(_halfwidth(c))]
    if bad:
        raise UnreadableText(bad)


def sino_integer(digits: str) -> str:
    """Sino-Korean reading of a non-negative integer's digits: 0 -> 영, 10 -> 십, 1500 -> 천오백, 10000 -> 만,
    110000 -> 십일만. A 1 before 십 / 백 / 천 is silent, and 만 alone is not 일만 (standard reading)."""
    n = int(digits)
    if n == 0:
        return SINO[0]
    groups = []
    while n:
        groups.append(n % 10000)
        n //= 10000
    out = []
    for big in range(len(groups) - 1, -1, -1):
        g = groups[big]
        if g == 0:
            continue
        words = []
        for pos in range(3, -1, -1):
            d = g // 10 ** pos % 10
            if d == 0:
                continue
            silent_one = d == 1 and pos > 0
            words.append(("" if silent_one else SINO[d]) + SMALL_UNITS[pos])
        word = "".join(words)
        if big == 1 and word == "일":  # 10000 is 만, not 일만
            word = ""
        out.append(word + BIG_UNITS[big])
    return "".join(out)


def native_number(n: int) -> str:
    """Native Korean attributive numeral, 1-99 (3 -> 세, 20 -> 스무, 21 -> 스물한)."""
    if not 1 <= n <= 99:
        raise ValueError(f"native numerals cover 1-99, got {n}")
    tens, ones = divmod(n, 10)
    if n == 20:
        return "스무"
    return NATIVE_TENS[tens] + NATIVE_ONES[ones]


def read_number(token: str, following: str) -> str:
    """One number as written (TOKEN: digits, thousands commas, decimal point) before the text FOLLOWING it."""
    whole, _, frac = token.replace(",", "").partition(".")
    if len(whole) > 1 and whole.startswith("0") or len(whole) > MAX_DIGITS:
        spoken = "".join(DIGIT_NAMES[int(d)] for d in whole)  # a code or phone number: digit by digit
    elif not frac and following.startswith("월") and int(whole) in MONTHS:
        spoken = MONTHS[int(whole)]
    elif not frac and 1 <= int(whole) <= 99 and following.startswith(NATIVE_COUNTERS):
        spoken = native_number(int(whole))
    else:
        spoken = sino_integer(whole)
    if frac:
        spoken += " 점 " + "".join(SINO[int(d)] for d in frac)
    return spoken


def normalize(text: str) -> str:
    """TEXT with numbers, %, Latin letters and full-width forms spelled in Hangul (module docstring); raises
    UnreadableText for characters nothing reads, ValueError for empty text."""
    if not text or not text.strip():
        raise ValueError("empty text: nothing to say")
    check_readable(text)
    text = _halfwidth(unicodedata.normalize("NFC", text))
    out, last = [], 0
    for m in _NUMBER.finditer(text):
        # a native counter may follow after a space: "3 개"
        following = text[m.end():].lstrip()
        out += [text[last:m.start()], read_number(m.group(), following)]
        last = m.end()
    out.append(text[last:])
    spelled = "".join(out)
    spelled = "".join(SYMBOLS.get(c, LATIN.get(c.upper(), c)) for c in spelled)
    return spelled


def text_to_tokens(text: str, token_type: str, lang: str = "ko") -> List[str]:
    """Typed TEXT -> tokens of TOKEN_TYPE, jamo or espeak-ng phonemes of LANG. Korean: normalize, then
    phonemes.tokens_of; other languages: phonemes.tokens_of alone (espeak-ng reads their numbers and signs itself,
    phonemes.speakable_es). ValueError for empty text, text with nothing to pronounce, or characters nothing reads
    (UnreadableText, with their positions)."""
    if lang != "ko":
        if not text or not text.strip():
            raise ValueError("empty text: nothing to say")
        return tokens_of(text, token_type, unknown="error", lang=lang)
    return tokens_of(normalize(text), token_type, unknown="error")
