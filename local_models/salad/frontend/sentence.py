"""Sentence structure: `analyse(text)` -> Sentence (phones, syllables, words, phrases, sentence type)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, NamedTuple, Optional, Sequence, Tuple

from .g2p import allophones, glides, letters_to_segments
from .normalisation import KEPT_PUNCT, OPENING_PUNCT, TOKEN, normalise
from .phones import CONTENT_POS, PUNCTUATION, VOWELS
from .pos import part_of_speech
from .syllables import split_segments, stressed_syllable


@dataclass(frozen=True)
class Phone:
    """One phone; syllable / word / phrase are indices into the Sentence, None for sil and pau."""

    name: str
    syllable: Optional[int] = None
    word: Optional[int] = None
    phrase: Optional[int] = None


@dataclass(frozen=True)
class Syllable:
    phones: Tuple[str, ...]
    stressed: bool
    word: int

    @property
    def vowel(self) -> Optional[str]:
        return next((p for p in self.phones if p in VOWELS), None)


@dataclass(frozen=True)
class Word:
    text: str
    pos: str
    syllables: Tuple[int, ...]
    phrase: int

    @property
    def content(self) -> bool:
        return self.pos in CONTENT_POS


@dataclass(frozen=True)
class Phrase:
    words: Tuple[int, ...]
    punct: str  # one of PUNCTUATION_TYPES


@dataclass(frozen=True)
class Sentence:
    """An analysed utterance: sil, the phrases' phones with a pau between phrases, sil."""

    text: str  # normalised (normalise())
    type: str  # one of SENTENCE_TYPES
    phones: Tuple[Phone, ...]
    syllables: Tuple[Syllable, ...]
    words: Tuple[Word, ...]
    phrases: Tuple[Phrase, ...]


class _RawPhrase(NamedTuple):
    words: List[str]
    punct: str
    opening: str  # "¿", "¡" or ""


def _split_phrases(tokens: Sequence[str]) -> List[_RawPhrase]:
    """Words grouped into phrases closed by punctuation. An opening ¿ ¡ after words also starts a phrase."""
    phrases: List[_RawPhrase] = []
    words: List[str] = []
    opening = ""
    for token in tokens:
        if token in OPENING_PUNCT:
            if words:
                phrases.append(_RawPhrase(words, "non", opening))
                words = []
            opening = token
        elif token in PUNCTUATION:
            if words:  # punctuation with no word before it ("?!", "...") adds nothing
                phrases.append(_RawPhrase(words, PUNCTUATION[token], opening))
                words, opening = [], ""
        else:
            words.append(token)
    if words:
        phrases.append(_RawPhrase(words, "non", opening))
    return phrases


def _sentence_type(last: _RawPhrase) -> str:
    if last.punct == "que" or (last.punct != "exc" and last.opening == "¿"):
        return "int"
    if last.punct == "exc" or last.opening == "¡":
        return "exc"
    return "dec"


def _word_syllables(word: str, stressed: bool) -> Tuple[List[List[str]], Optional[int]]:
    """(phonemic syllables, index of the stressed one; None for an unstressed function word)."""
    syllables = split_segments(glides(letters_to_segments(word)))
    return [[p for p, _ in syl] for syl in syllables], stressed_syllable(word, syllables) if stressed else None


def _analyse_phrase(words: Sequence[str]) -> List[Tuple[str, str, List[Tuple[Tuple[str, ...], bool]]]]:
    """Per word: (word, POS tag, [(a syllable's surface phones, stressed)]); allophones run across words."""
    tags = [part_of_speech(w) for w in words]
    analysed = [_word_syllables(w, stressed) for w, (_, stressed) in zip(words, tags)]
    surface = iter(allophones([p for sylls, _ in analysed for syl in sylls for p in syl]))
    return [(w, tag, [(tuple(next(surface) for _ in syl), k == stress) for k, syl in enumerate(sylls)])
            for w, (tag, _), (sylls, stress) in zip(words, tags, analysed)]


def analyse(text: str) -> Sentence:
    """Analyse one utterance; ValueError (naming the text) when nothing speakable remains."""
    normalised = normalise(text)
    # words of silent letters only ("h") have no phones: drop them like unsupported characters
    tokens = [t for t in TOKEN.findall(normalised) if t in KEPT_PUNCT or letters_to_segments(t)]
    raw_phrases = _split_phrases(tokens)
    if not raw_phrases:
        raise ValueError(f"no Spanish words to speak in {text!r}")
    phones: List[Phone] = [Phone("sil")]
    syllables: List[Syllable] = []
    words: List[Word] = []
    phrases: List[Phrase] = []
    for f, raw in enumerate(raw_phrases):
        if f:
            phones.append(Phone("pau"))
        first_word = len(words)
        for word, tag, word_syllables in _analyse_phrase(raw.words):
            w, first_syl = len(words), len(syllables)
            for surface, stressed in word_syllables:
                phones.extend(Phone(p, len(syllables), w, f) for p in surface)
                syllables.append(Syllable(surface, stressed, w))
            words.append(Word(word, tag, tuple(range(first_syl, len(syllables))), f))
        phrases.append(Phrase(tuple(range(first_word, len(words))), raw.punct))
    phones.append(Phone("sil"))
    return Sentence(normalised, _sentence_type(raw_phrases[-1]),
                    tuple(phones), tuple(syllables), tuple(words), tuple(phrases))
