"""Korean text -> espeak-ng phoneme tokens: the phones of the engine that speaks the mini corpus, one token per
phone event (the labels of `common.synth.synthesize(text, ESPEAK_VOICE).phones`, "sil" for leading silence and
pauses).

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
from typing import Iterable, List, Optional, Sequence

from local_models.common import synth

from . import g2p

TOKEN_TYPES = ("espeak", "jamo")
SIL = synth.SIL
# The mini corpus' voice (egs/kss/tts1/local/make_mini_corpus.py speaks with it).
ESPEAK_VOICE = synth.Voice("ko", "f2", rate=160, pitch=60, pitch_range=60)


# what espeak-ng is given for the jamo g2p's punctuation: its pause class as plain ASCII (espeak reads some other
# marks as words, e.g. '~' as English "tilde"); the g2p's silent characters are removed
_ESPEAK_PUNCT = {ch: {g2p.PAUSE: ","}.get(tok, tok) for ch, tok in g2p._PUNCT.items()}


def speakable(text: str, unknown: str = "error", dropped: Optional[List[str]] = None) -> str:
    """TEXT as espeak-ng is to read it: the characters the jamo g2p drops removed (unknown="drop"), its silent
    characters removed, its punctuation as ASCII , . ! ?; G2PError / ValueError as g2p."""
    own: List[str] = []
    g2p.text_to_tokens(text, unknown=unknown, dropped=own)
    if dropped is not None:
        dropped.extend(own)
    gone = set(own) | g2p.SILENT
    return "".join(_ESPEAK_PUNCT.get(ch, ch) for ch in text if ch not in gone)


def text_to_phonemes(text: str, unknown: str = "error", dropped: Optional[List[str]] = None) -> List[str]:
    """espeak-ng phoneme tokens of TEXT (see the module docstring): the phones of its synthesis, as the corpus'
    phones.ctm holds them (`synth.ms_phones`: a phone shorter than a millisecond has no row, so no token)."""
    utt = synth.synthesize(speakable(text, unknown, dropped), ESPEAK_VOICE)
    tokens = [label for label, _, _ in synth.ms_phones(utt.phones, utt.sample_rate)]
    switched = sorted({t for t in tokens if t.startswith("(") and t.endswith(")")})
    if switched:  # espeak read part of the text in another language: not Korean phonemes
        raise ValueError(f"espeak-ng switched language ({' '.join(switched)}) reading {text!r}")
    if all(t == SIL for t in tokens):
        raise ValueError(f"espeak-ng speaks no phone for {text!r}")
    return tokens


@functools.lru_cache(maxsize=1)
def inventory() -> tuple:
    """The phones espeak-ng's Korean rules produce, from a coverage text (< 1 s): every initial with every vowel,
    every final before a vowel and before every initial (tensing, nasalisation and the like happen there).
    The token list adds them after the training set's tokens, so a test sentence with a phone the training
    text lacks still has a token (untrained) instead of failing or becoming <unk>."""
    base = 0xAC00
    syllable = lambda lead, vowel, tail=0: chr(base + (lead * 21 + vowel) * 28 + tail)  # noqa: E731
    opens = [syllable(lead, v) for lead in range(19) for v in range(21)]
    words = ["".join(opens[i:i + 4]) for i in range(0, len(opens), 4)]
    words += [syllable(0, 0, t) + syllable(lead, 0) for t in range(1, 28) for lead in range(19)]
    words += [syllable(0, 0, t) for t in range(1, 28)]
    found = set()
    for i in range(0, len(words), 100):  # a few long sentences: fast, and the pauses between them give "sil"
        found.update(text_to_phonemes(" ".join(words[i:i + 100]) + "."))
    return tuple(sorted(found))


def token_type_of(token_list: Sequence[str]) -> str:
    """'espeak' or 'jamo': which front end a model's token list was made by (the jamo inventory has no "sil")."""
    return "espeak" if SIL in token_list else "jamo"


def tokens_of(text: str, token_type: str, unknown: str = "error", dropped: Optional[List[str]] = None) -> List[str]:
    """TEXT's tokens of TOKEN_TYPE ('espeak' phonemes or 'jamo')."""
    if token_type == "espeak":
        return text_to_phonemes(text, unknown, dropped)
    if token_type == "jamo":
        return g2p.text_to_tokens(text, unknown=unknown, dropped=dropped)
    raise ValueError(f"token type {token_type!r}: one of {', '.join(TOKEN_TYPES)}")


def full_inventory(token_type: str) -> Iterable[str]:
    return inventory() if token_type == "espeak" else g2p.INVENTORY
