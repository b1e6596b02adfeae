"""Text normalisation: lower case, numbers spelt out as Spanish words, only letters and kept punctuation."""
from __future__ import annotations

import re
import unicodedata

from .phones import PUNCTUATION

_LETTERS = set("abcdefghijklmnopqrstuvwxyzñáéíóúü")
OPENING_PUNCT = "¿¡"
KEPT_PUNCT = set(PUNCTUATION) | set(OPENING_PUNCT)
TOKEN = re.compile(r"[a-zñáéíóúü]+|[,;:.?!¿¡]")
_NUMBER = re.compile(r"\d{1,3}(?:\.\d{3})+(?!\d)|\d+(?:,\d+)?")

_UNITS = ("cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince dieciséis "
          "diecisiete dieciocho diecinueve veinte veintiuno veintidós veintitrés veinticuatro veinticinco "
          "veintiséis veintisiete veintiocho veintinueve").split()
_TENS = {3: "treinta", 4: "cuarenta", 5: "cincuenta", 6: "sesenta", 7: "setenta", 8: "ochenta", 9: "noventa"}
_HUNDREDS = {1: "ciento", 2: "doscientos", 3: "trescientos", 4: "cuatrocientos", 5: "quinientos",
             6: "seiscientos", 7: "setecientos", 8: "ochocientos", 9: "novecientos"}
_MAX_NUMBER = 10 ** 12  # longer digit strings are read digit by digit
# Every word a cardinal is spelt with (the part-of-speech lexicon tags them "num").
NUMBER_WORDS = tuple(_UNITS + list(_TENS.values()) + list(_HUNDREDS.values())) + (
    "cien", "mil", "millón", "millones", "veintiún")


def number_words(n: int) -> str:
    """Spanish cardinal of 0 <= n < 10**12 ("mil novecientos noventa y cinco"); longer ones digit by digit."""
    if n < 0:
        raise ValueError(f"number_words needs n >= 0, got {n}")
    if n < 30:
        return _UNITS[n]
    if n < 100:
        tens, unit = divmod(n, 10)
        return _TENS[tens] + (f" y {_UNITS[unit]}" if unit else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return "cien" if n == 100 else _HUNDREDS[hundreds] + (f" {number_words(rest)}" if rest else "")
    if n < 10 ** 6:
        thousands, rest = divmod(n, 1000)
        head = "mil" if thousands == 1 else f"{_apocope(number_words(thousands))} mil"
    elif n < _MAX_NUMBER:
        millions, rest = divmod(n, 10 ** 6)
        head = "un millón" if millions == 1 else f"{_apocope(number_words(millions))} millones"
    else:
        return " ".join(_UNITS[int(d)] for d in str(n))
    return head + (f" {number_words(rest)}" if rest else "")


def _apocope(words: str) -> str:
    # "uno" before "mil" / "millones" shortens: veintiún mil, treinta y un mil.
    if words.endswith("veintiuno"):
        return words[:-len("veintiuno")] + "veintiún"
    return words[:-1] if words.endswith("uno") else words


def _expand_number(match: "re.Match[str]") -> str:
    token = match.group()
    if "," in token:  # decimal comma: "3,5" -> tres coma cinco; "3,05" -> tres coma cero cinco
        whole, frac = token.split(",")
        frac_words = " ".join(_UNITS[int(d)] for d in frac) if frac.startswith("0") else number_words(int(frac))
        return f" {number_words(int(whole))} coma {frac_words} "
    return f" {number_words(int(token.replace('.', '')))} "


def _normalise_char(c: str) -> str:
    if c in _LETTERS or c in KEPT_PUNCT:
        return c
    if c in "'’":  # o'higgins -> ohiggins
        return ""
    if c == "…":
        return "."
    base = unicodedata.normalize("NFD", c)[0]  # à -> a, ç -> c, ö -> o
    return base if base in _LETTERS else " "


# Marks that only separate words (read as a space); every other character outside the letters, digits and kept
# punctuation is one the front end cannot read (`unreadable_characters`).
SEPARATORS = set('"«»“”„‘‚()[]{}-‐‑–—_/*·')


def _readable(c: str) -> bool:
    if c.isspace() or c in SEPARATORS or c in "'’…" or ("0" <= c <= "9"):
        return True
    c = unicodedata.normalize("NFC", c).lower()
    return all(ch in _LETTERS or ch in KEPT_PUNCT or unicodedata.normalize("NFD", ch)[0] in _LETTERS for ch in c)


def unreadable_characters(text: str) -> list:
    """The distinct characters of TEXT the front end cannot read (other scripts, symbols such as % € @ &, emoji,
    control characters), in order of appearance; `normalise` would silently drop them."""
    return list(dict.fromkeys(c for c in text if not _readable(c)))


def normalise(text: str) -> str:
    """Lower-case text with numbers spelt out; only Spanish letters, kept punctuation and single spaces."""
    text = unicodedata.normalize("NFC", text).lower()
    text = _NUMBER.sub(_expand_number, text)
    return " ".join("".join(_normalise_char(c) for c in text).split())
