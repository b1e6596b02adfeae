"""Text -> espeak-ng phoneme tokens: the phones of the engine that speaks the mini corpus, one token per phone event
(the labels of `common.synth.synthesize(text, VOICES[lang]).phones`, "sil" for leading silence and pauses), for
Korean (lang "ko", the default) and Spanish ("es": the real single-speaker corpus, Tux Paint's Spanish reader).

The paper feeds phonemes. The mini corpus is spoken by espeak-ng, so its own phonemes are the phonetic truth
there: every token has an engine event, the true durations map one to one (no jamo-to-phone alignment, no silent
initial ㅇ with zero frames), and the aligner's durations can be checked token by token. This is the route of
ESPnet's `espeak_ng_<language>` g2p for other languages; we take the event labels of a synthesis rather than
espeak's phoneme string because the labels are what the corpus' phones.ctm holds (tested: identical for every
training sentence). The labels do not depend on the voice's pitch, and the corpus is spoken with ESPEAK_VOICE.
The jamo front end (`g2p.text_to_tokens`) stays for recorded speech (real KSS), where no engine event exists.

Text is checked as the jamo g2p checks it (a character with no Korean reading: `G2PError` naming it, or dropped
with unknown="drop"), so both token types accept the same texts; espeak-ng is given the g2p's punctuation as
ASCII , . ! ? and none of its silent characters (it would read '~' or '*' as English words).
"""
from __future__ import annotations

import functools
import unicodedata
from typing import Iterable, List, Optional, Sequence

from local_models.common import synth

from . import g2p

TOKEN_TYPES = ("espeak", "jamo")
SIL = synth.SIL
# The mini corpus' voice (egs/kss/tts1/local/make_mini_corpus.py speaks with it).
ESPEAK_VOICE = synth.Voice("ko", "f2", rate=160, pitch=60, pitch_range=60)
# the voice whose phone events are the tokens, per language (the labels do not depend on variant or pitch)
VOICES = {"ko": ESPEAK_VOICE, "es": synth.Voice("es")}
LANGS = tuple(VOICES)
LANGUAGE_NAMES = {"ko": "Korean", "es": "Spanish"}


def check_lang(lang: str) -> str:
    if lang not in VOICES:
        raise ValueError(f"front end language {lang!r}: one of {', '.join(LANGS)}")
    return lang


# what espeak-ng is given for the jamo g2p's punctuation: its pause class as plain ASCII (espeak reads some other
# marks as words, e.g. '~' as English "tilde"); the g2p's silent characters are removed
_ESPEAK_PUNCT = {ch: {g2p.PAUSE: ","}.get(tok, tok) for ch, tok in g2p._PUNCT.items()}


# Spanish: punctuation as espeak-ng's pause classes in ASCII; marks that change no phone; signs espeak-ng's
# Spanish rules read as words (numbers too)
_ES_PUNCT = {",": ",", ".": ".", "!": "!", "?": "?", ";": ",", ":": ",", "(": ",", ")": ",", "—": ",", "–": ",",
             "…": "."}
_ES_SILENT = set("¡¿«»\"'“”‘’")
_ES_SIGNS = set("$€¥£%=+&ºª-")


class UnreadableText(ValueError):
    """Characters the Spanish front end has no reading for; `chars` is [(char, 1-based position)]."""

    def __init__(self, text: str, chars: List[tuple]):
        self.chars = chars
        shown = ", ".join(f"{c!r} (U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}) at position {i}"
                          for c, i in chars[:10])
        super().__init__(f"no Spanish reading for {shown} in {text!r} (it reads Latin letters, digits, spaces, "
                         f"{''.join(sorted(_ES_SIGNS))} and the punctuation {''.join(_ES_PUNCT)}{''.join(sorted(_ES_SILENT))})")


def _es_readable(ch: str) -> bool:
    return (ch.isspace() or ch in _ES_PUNCT or ch in _ES_SILENT or ch in _ES_SIGNS or "0" <= ch <= "9"
            or (ch.isalpha() and unicodedata.name(ch, "").startswith("LATIN ")))


def speakable_es(text: str, unknown: str = "error", dropped: Optional[List[str]] = None) -> str:
    """Spanish TEXT as espeak-ng is to read it (module docstring); UnreadableText for a character with no reading
    (unknown="error"), else it is dropped and added to DROPPED."""
    if unknown not in ("error", "drop"):
        raise ValueError(f"unknown={unknown!r}: 'error' or 'drop'")
    text = unicodedata.normalize("NFC", text)
    bad = [(c, i) for i, c in enumerate(text, 1) if not _es_readable(c)]
    if bad and unknown == "error":
        raise UnreadableText(text, bad)
    if dropped is not None:
        dropped.extend(c for c, _ in bad)
    gone = {c for c, _ in bad} | _ES_SILENT
    return " ".join("".join(_ES_PUNCT.get(ch, ch) for ch in text if ch not in gone).split())


def speakable(text: str, unknown: str = "error", dropped: Optional[List[str]] = None, lang: str = "ko") -> str:
    """TEXT as espeak-ng is to read it. Korean: the characters the jamo g2p drops removed (unknown="drop"), its
    silent characters removed, its punctuation as ASCII , . ! ?; G2PError / ValueError as g2p. Spanish:
    speakable_es."""
    if check_lang(lang) == "es":
        return speakable_es(text, unknown, dropped)
    own: List[str] = []
    g2p.text_to_tokens(text, unknown=unknown, dropped=own)
    if dropped is not None:
        dropped.extend(own)
    gone = set(own) | g2p.SILENT
    return "".join(_ESPEAK_PUNCT.get(ch, ch) for ch in text if ch not in gone)


def text_to_phonemes(text: str, unknown: str = "error", dropped: Optional[List[str]] = None,
                     lang: str = "ko") -> List[str]:
    """espeak-ng phoneme tokens of TEXT in LANG (see the module docstring): the phones of its synthesis, as the
    corpus' phones.ctm holds them (`synth.ms_phones`: a phone shorter than a millisecond has no row, so no token)."""
    voice = VOICES[check_lang(lang)]
    utt = synth.synthesize(speakable(text, unknown, dropped, lang), voice)
    tokens = [label for label, _, _ in synth.ms_phones(utt.phones, utt.sample_rate)]
    switched = sorted({t for t in tokens if t.startswith("(") and t.endswith(")")})
    if switched:  # espeak read part of the text in another language: not phonemes of LANG
        raise ValueError(f"espeak-ng switched language ({' '.join(switched)}) reading {text!r}")
    if all(t == SIL for t in tokens):
        raise ValueError(f"espeak-ng speaks no phone for {text!r}")
    return tokens


@functools.lru_cache(maxsize=None)
def inventory(lang: str = "ko") -> tuple:
    """The phones espeak-ng's rules for LANG produce, from a coverage text (Korean: _korean_coverage; Spanish:
    _spanish_coverage). The token list adds them after the training set's tokens, so a test sentence with a phone
    the training text lacks still has a token (untrained) instead of failing or becoming <unk>."""
    words = _korean_coverage() if check_lang(lang) == "ko" else _spanish_coverage()
    found = set()
    for i in range(0, len(words), 100):  # a few long sentences: fast, and the pauses between them give "sil"
        found.update(text_to_phonemes(" ".join(words[i:i + 100]) + ".", lang=lang))
    return tuple(sorted(found))


def _korean_coverage() -> List[str]:
    """Korean coverage words (< 1 s to speak): every initial with every vowel, every final before a vowel and
    before every initial (tensing, nasalisation and the like happen there)."""
    base = 0xAC00
    syllable = lambda lead, vowel, tail=0: chr(base + (lead * 21 + vowel) * 28 + tail)  # noqa: E731
    opens = [syllable(lead, v) for lead in range(19) for v in range(21)]
    words = ["".join(opens[i:i + 4]) for i in range(0, len(opens), 4)]
    words += [syllable(0, 0, t) + syllable(lead, 0) for t in range(1, 28) for lead in range(19)]
    words += [syllable(0, 0, t) for t in range(1, 28)]
    return words


# Spanish spellings of the onsets (each letter and digraph, qu / gu before e i, the clusters), vowels and diphthongs,
# codas; the loan words give the phones only loans have (sh, the j of jazz, ts)
_ES_ONSETS = ["", "b", "c", "ch", "d", "f", "g", "gu", "h", "j", "k", "l", "ll", "m", "n", "ñ", "p", "qu", "r", "rr",
              "s", "t", "v", "w", "x", "y", "z", "bl", "br", "cl", "cr", "dr", "fl", "fr", "gl", "gr", "pl", "pr", "tr"]
_ES_VOWELS = ["a", "e", "i", "o", "u", "á", "é", "í", "ó", "ú", "ai", "au", "ei", "eu", "oi", "ia", "ie", "io", "iu",
              "ua", "ue", "ui", "uo", "ü"]
_ES_CODAS = ["", "n", "s", "l", "r", "d", "z", "x", "m", "b", "c", "p", "t", "g"]
_ES_LOANS = ["show", "jazz", "whisky", "sándwich", "software", "hobby", "pizza", "CD", "DVD"]


def _spanish_coverage() -> List[str]:
    """Spanish coverage words: every onset spelling before every vowel spelling word-initially, between vowels
    (the fricative b d g, the tap), after a nasal, l and s (stops, assimilated nasals) and before every coda (final
    and before a consonant), plus a few loan words. A coverage text rather than the training set's tokens: the
    inventory must not depend on which sentences the corpus happens to hold (a test sentence's phone then has a
    token), and the same text gives the same list for any corpus."""
    words = []
    for onset in _ES_ONSETS:
        for vowel in _ES_VOWELS:
            syl = onset + vowel
            words += [syl, "a" + syl, "an" + syl] + (["al" + syl, "as" + syl] if vowel == "a" else [])
    words += ["pa" + coda + c for coda in _ES_CODAS for c in ("", "ta", "ca", "ga", "ba", "da", "ma", "la")]
    return words + _ES_LOANS


def token_type_of(token_list: Sequence[str]) -> str:
    """'espeak' or 'jamo': which front end a model's token list was made by (the jamo inventory has no "sil")."""
    return "espeak" if SIL in token_list else "jamo"


def tokens_of(text: str, token_type: str, unknown: str = "error", dropped: Optional[List[str]] = None,
              lang: str = "ko") -> List[str]:
    """TEXT's tokens of TOKEN_TYPE ('espeak' phonemes of LANG or 'jamo', Korean only)."""
    if token_type == "espeak":
        return text_to_phonemes(text, unknown, dropped, lang=lang)
    if token_type == "jamo":
        if check_lang(lang) != "ko":
            raise ValueError(f"token type jamo reads Korean only, not lang {lang!r}: use espeak")
        return g2p.text_to_tokens(text, unknown=unknown, dropped=dropped)
    raise ValueError(f"token type {token_type!r}: one of {', '.join(TOKEN_TYPES)}")


def full_inventory(token_type: str, lang: str = "ko") -> Iterable[str]:
    return inventory(lang) if token_type == "espeak" else g2p.INVENTORY
