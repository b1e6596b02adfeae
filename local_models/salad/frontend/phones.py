"""Castilian phone set, phone classes and the tag sets (POS, punctuation, sentence type) of the labels."""
from __future__ import annotations

from typing import Dict, Tuple

# Castilian phones, SAMPA-like names (IPA and an example word). No [N], [z] or [ɟʝ]: those allophones are
# predictable from the context window of the labels.
PHONES: Dict[str, str] = {
    "a": "a (casa)", "e": "e (mesa)", "i": "i (piso)", "o": "o (codo)", "u": "u (luna)",
    "j": "j glide (cielo, aire, rey)", "w": "w glide (agua, auto)",
    "p": "p (padre)", "b": "b (vaso, hombre)", "t": "t (todo)", "d": "d (donde, caldo)",
    "k": "k (casa, queso)", "g": "g (gato, tengo)",
    "B": "β (haba, lavar)", "D": "ð (cada)", "G": "ɣ (agua, lago)",
    "f": "f (foca)", "T": "θ (caza, cena)", "s": "s (sala)", "x": "x (jamón, gente)", "jj": "ʝ (yo, mayo)",
    "tS": "tʃ (chico)",
    "m": "m (mano)", "n": "n (nada)", "J": "ɲ (año)",
    "l": "l (lado)", "L": "ʎ (llave)",
    "r": "ɾ tap (caro, tres, mar)", "rr": "r trill (perro, rosa, honra)",
    "sil": "silence at the utterance edges", "pau": "phrase-break pause",
}
PHONE_CLASSES: Dict[str, Tuple[str, ...]] = {
    "vowel": ("a", "e", "i", "o", "u"),
    "front_vowel": ("e", "i"),
    "back_vowel": ("o", "u"),
    "open_vowel": ("a",),
    "mid_vowel": ("e", "o"),
    "close_vowel": ("i", "u"),
    "glide": ("j", "w"),
    "consonant": ("p", "b", "t", "d", "k", "g", "B", "D", "G", "f", "T", "s", "x", "jj", "tS",
                  "m", "n", "J", "l", "L", "r", "rr"),
    "plosive": ("p", "b", "t", "d", "k", "g"),
    "approximant": ("B", "D", "G"),
    "fricative": ("f", "T", "s", "x", "jj"),
    "affricate": ("tS",),
    "nasal": ("m", "n", "J"),
    "lateral": ("l", "L"),
    "rhotic": ("r", "rr"),
    "liquid": ("l", "L", "r", "rr"),
    "voiced": ("a", "e", "i", "o", "u", "j", "w", "b", "d", "g", "B", "D", "G", "jj", "m", "n", "J",
               "l", "L", "r", "rr"),
    "voiceless": ("p", "t", "k", "f", "T", "s", "x", "tS"),
    "labial": ("p", "b", "B", "f", "m", "w"),
    "dental_alveolar": ("t", "d", "D", "T", "s", "n", "l", "r", "rr"),
    "palatal": ("j", "jj", "tS", "J", "L"),
    "velar": ("k", "g", "G", "x", "w"),
    "silence": ("sil", "pau"),
}
SILENCES = PHONE_CLASSES["silence"]
VOWELS = PHONE_CLASSES["vowel"]
GLIDES = PHONE_CLASSES["glide"]

# Coarse parts of speech. "content" covers nouns and adjectives (the open classes no rule recognises).
POS_TAGS = ("det", "prep", "conj", "pron", "wh", "aux", "verb", "adv", "num", "content")
CONTENT_POS = ("wh", "verb", "adv", "num", "content")
# Phrase-final punctuation: , / ; or : / . / ? / ! / none (end of text, or an opening ¿ ¡ after a word).
PUNCTUATION = {",": "com", ";": "sem", ":": "sem", ".": "per", "?": "que", "!": "exc"}
PUNCTUATION_TYPES = ("com", "sem", "per", "que", "exc", "non")
SENTENCE_TYPES = ("dec", "int", "exc")  # declarative, interrogative, exclamative
