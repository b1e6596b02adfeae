"""Offline sentence generation for the synthetic mini-corpora.

The vocabulary comes from the CLDR data shipped inside `babel` (territory, language, script
and currency names, month and weekday names, unit names), so every language gets real words in
its native script with no download. Sentences are random word sequences: meaningless, but
they exercise the language's full phone inventory, which is what an ASR smoke test needs.
"""
from __future__ import annotations

import random
import re
import unicodedata
from functools import lru_cache
from typing import Dict, List, Tuple

# Our language codes -> (babel locale, Unicode code-point ranges of the native script).
_LATIN = ((0x41, 0x5A), (0x61, 0x7A), (0xC0, 0x24F))
LANGS: Dict[str, Tuple[str, Tuple[Tuple[int, int], ...]]] = {
    "en-gb": ("en", _LATIN),
    "en-us": ("en", _LATIN),
    # English accents of the SAD recipe's held-out evaluation voices (synth.SUPPORTED_LANGS lists them too)
    "en-029": ("en", _LATIN), "en-gb-scotland": ("en", _LATIN), "en-gb-x-gbcwmd": ("en", _LATIN),
    "en-gb-x-rp": ("en", _LATIN),
    "es": ("es", _LATIN),
    "gu": ("gu", ((0x0A80, 0x0AFF),)),
    "hi": ("hi", ((0x0900, 0x097F),)),
    "ko": ("ko", ((0xAC00, 0xD7A3), (0x1100, 0x11FF), (0x3130, 0x318F))),
    "ta": ("ta", ((0x0B80, 0x0BFF),)),
    # babble languages of the SAD recipe's non-speech set (synth.SUPPORTED_LANGS lists them too)
    "cs": ("cs", _LATIN), "de": ("de", _LATIN), "fr": ("fr", _LATIN), "it": ("it", _LATIN),
    "nl": ("nl", _LATIN), "pl": ("pl", _LATIN), "pt": ("pt", _LATIN), "ru": ("ru", ((0x0400, 0x04FF),)),
    "sv": ("sv", _LATIN), "tr": ("tr", _LATIN),
}
# A few unit keys per category: unit names are common nouns, a useful contrast to proper names.
_UNITS = (
    "length-meter", "length-kilometer", "length-centimeter", "length-mile", "mass-kilogram",
    "mass-gram", "duration-hour", "duration-minute", "duration-second", "duration-day",
    "duration-week", "duration-month", "duration-year", "volume-liter", "temperature-celsius",
    "speed-kilometer-per-hour", "area-hectare", "energy-calorie", "digital-byte",
)
# Characters espeak reads aloud or mangles (digits as numbers, brackets/symbols as names).
# Sentence punctuation (.,?! and the danda) is kept: espeak turns it into pauses and intonation.
_ODD_CHARS = re.compile(r"[\d()\[\]{}<>/\\|#@&*+=_~^`\"“”„«»%$€£¥§©®°•…]")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.?!;:।])")
_PUNCT_ONLY = re.compile(r"[\s,.?!;:।'’-]*")


def check_lang(lang: str) -> str:
    if lang not in LANGS:
        raise ValueError(f"unsupported language {lang!r}; supported: {', '.join(sorted(LANGS))}")
    return lang


def clean_text(text: str) -> str:
    """Drop characters espeak would read oddly (digits, brackets, symbols); squeeze spaces."""
    text = unicodedata.normalize("NFC", text)
    text = " ".join(_ODD_CHARS.sub(" ", text).split())
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)  # "(word)," -> "word ," -> "word,"
    return "" if _PUNCT_ONLY.fullmatch(text) else text


def _in_script(word: str, ranges) -> bool:
    # Combining marks (Indic vowel signs, virama) are category M*, not alphabetic: allow them
    # as long as they sit in the script's own block.
    return all(any(lo <= ord(c) <= hi for lo, hi in ranges) for c in word) and any(c.isalpha() for c in word)


def _cldr_phrases(locale_code: str) -> List[str]:
    from babel import Locale
    from babel.units import get_unit_name

    loc = Locale.parse(locale_code)
    phrases: List[str] = []
    for table in (loc.territories, loc.languages, loc.scripts, loc.currencies):
        phrases.extend(str(v) for v in table.values())
    for table in (loc.months, loc.days):
        phrases.extend(str(v) for v in table["format"]["wide"].values())
    for unit in _UNITS:
        try:
            name = get_unit_name(unit, locale=loc)
        except Exception:  # unit missing in this CLDR version: not needed
            name = None
        if name:
            phrases.append(str(name))
    return phrases


@lru_cache(maxsize=None)
def vocabulary(lang: str) -> Tuple[str, ...]:
    """Sorted native-script words for `lang` (sorted so order does not depend on dict order)."""
    locale_code, ranges = LANGS[check_lang(lang)]
    words = set()
    for phrase in _cldr_phrases(locale_code):
        for word in clean_text(phrase).replace("-", " ").split():
            if _in_script(word, ranges) and len(word) >= 2:
                words.add(word.lower() if ranges is _LATIN else word)
    if len(words) < 50:
        raise RuntimeError(f"babel gave only {len(words)} words for {lang!r}; is babel's CLDR data installed?")
    return tuple(sorted(words))


def sentences(lang: str, n: int, seed: int = 0, min_words: int = 3, max_words: int = 10) -> List[str]:
    """n random sentences of min_words..max_words words, deterministic in (lang, seed).

    Lower-case words separated by spaces, no punctuation: ready for a Kaldi `text` table."""
    check_lang(lang)
    if not 1 <= min_words <= max_words:
        raise ValueError(f"need 1 <= min_words <= max_words, got {min_words}, {max_words}")
    if n < 0:
        raise ValueError(f"number of sentences must be >= 0, got {n}")
    vocab = vocabulary(lang)
    rng = random.Random(f"sentences:{lang}:{seed}")  # str seeds hash with sha512: stable across runs
    return [" ".join(rng.sample(vocab, rng.randint(min_words, max_words))) for _ in range(n)]


def read_text_file(path) -> List[str]:
    """Sentences from a UTF-8 file, one per line; cleaned like generated text, blanks skipped."""
    lines = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = clean_text(line)
            if line:
                lines.append(line)
    if not lines:
        raise ValueError(f"{path}: no usable sentences (empty, or nothing left after removing digits/symbols)")
    return lines
