"""Spanish (Castilian) text front end of the SALAD recipe: text -> HTS-style full-context phone labels.

The paper (section 3.2) feeds the decoder hand-crafted features "extracted in the label format": phone identities
in a context window, part of speech, stress, positions and distances of syllables, words and phrases. This module
writes such labels; conf/questions_es.hed and `linguistic.py` turn them into vectors.

    analyse(text) -> Sentence          normalisation (numbers to words), words and punctuation, phrases split
                                       at punctuation, rule-based G2P with Castilian allophones, syllables,
                                       lexical stress, coarse part of speech, sentence type
    align(sentence, events, rate)      phone times: our phones DP-aligned to espeak-ng's phone events
    to_hts(sentence, times=None)       one label line per phone
    label_text(text, events, rate)     the three above in one call
    write_lab(path, lines), read_lab(path), parse_lab(lines, source)

Label format (one line per phone, shown wrapped here; a field is "xx" where it is undefined, not "x", which is
the jota phone):

    p1^p2-p3+p4=p5@p6_p7/A:a1_a2/B:b1-b2@b3-b4&b5-b6#b7-b8$b9-b10|b11/C:c1+c2/D:d1_d2
    /E:e1+e2@e3+e4&e5#e6+e7/F:f1_f2/G:g1_g2|g3/H:h1=h2^h3=h4|h5/I:i1_i2/J:j1+j2-j3!j4#j5=j6

    p1..p5  phones two before .. two after the current one p3 ("xx" beyond the utterance)
    p6 p7   position of the phone in its syllable, forward / backward (1 = first / last)
    A       previous syllable: stressed (0/1), number of phones
    B       current syllable: stressed, #phones, position in its word fw/bw, position in its phrase fw/bw,
            #stressed syllables before / after it in the phrase, distance in syllables to the previous / next
            stressed syllable of the phrase, its vowel
    C       next syllable: stressed, #phones
    D F     previous / next word: part of speech (POS_TAGS), #syllables
    E       current word: part of speech, #syllables, position in its phrase fw/bw, content word (0/1),
            #content words before / after it in the phrase
    G I     previous / next phrase: #syllables, #words; G also the previous phrase's final punctuation
    H       current phrase: #syllables, #words, position in the utterance fw/bw, final punctuation (PUNCTUATION)
    J       utterance: #syllables, #words, #phrases, sentence type (SENTENCE_TYPES), #syllables and #words after
            the current one (after the pause, for pauses)

Each field sits between a (left, right) pair of delimiters that no other field shares, and values are
alphanumeric, so the HTS pattern "*<left>VALUE<right>*" matches that field only. Pauses (sil, pau) have "xx" in
their own syllable, word and phrase fields (p6, p7, B, E, H); their A, D, G and C, F, I fields describe the units
before and after the pause.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from local_models.common.datadir import DataDirError, PathLike, atomic_open, iter_lines

# ----------------------------------------------------------------------------- phone set

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

# ----------------------------------------------------------------------------- normalisation

_LETTERS = set("abcdefghijklmnopqrstuvwxyzñáéíóúü")
_OPENING = "¿¡"
_KEPT_PUNCT = set(PUNCTUATION) | set(_OPENING)
_TOKEN = re.compile(r"[a-zñáéíóúü]+|[,;:.?!¿¡]")
_NUMBER = re.compile(r"\d{1,3}(?:\.\d{3})+(?!\d)|\d+(?:,\d+)?")

_UNITS = ("cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince dieciséis "
          "diecisiete dieciocho diecinueve veinte veintiuno veintidós veintitrés veinticuatro veinticinco "
          "veintiséis veintisiete veintiocho veintinueve").split()
_TENS = {3: "treinta", 4: "cuarenta", 5: "cincuenta", 6: "sesenta", 7: "setenta", 8: "ochenta", 9: "noventa"}
_HUNDREDS = {1: "ciento", 2: "doscientos", 3: "trescientos", 4: "cuatrocientos", 5: "quinientos",
             6: "seiscientos", 7: "setecientos", 8: "ochocientos", 9: "novecientos"}
_MAX_NUMBER = 10 ** 12  # longer digit strings are read digit by digit


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
    if c in _LETTERS or c in _KEPT_PUNCT:
        return c
    if c in "'’":  # o'higgins -> ohiggins
        return ""
    if c == "…":
        return "."
    base = unicodedata.normalize("NFD", c)[0]  # à -> a, ç -> c, ö -> o
    return base if base in _LETTERS else " "


def normalise(text: str) -> str:
    """Lower-case text with numbers spelt out; only Spanish letters, kept punctuation and single spaces."""
    text = unicodedata.normalize("NFC", text).lower()
    text = _NUMBER.sub(_expand_number, text)
    return " ".join("".join(_normalise_char(c) for c in text).split())


# ----------------------------------------------------------------------------- grapheme to phoneme

_ACCENTED = set("áéíóú")
_VOWEL_LETTERS = {"a": "a", "e": "e", "i": "i", "o": "o", "u": "u", "ü": "u",
                  "á": "a", "é": "e", "í": "i", "ó": "o", "ú": "u"}
_V = "aeiouáéíóúü"
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
    (f"(?<=[{_V}])y(?![{_V}])", "j"),  # rey, hoy, muy: glide closing a diphthong
    (f"y(?![{_V}])", "i"),  # the conjunction y
    ("y", "jj"),
    ("^p(?=s)", ""),  # psicología
    ("h", ""), ("[bv]", "b"), ("[cqk]", "k"), ("z", "T"), ("j", "x"), ("ñ", "J"), ("w", "w"),
))
Segment = Tuple[str, bool]  # (phone, carries a written accent)


def _letters_to_segments(word: str) -> List[Segment]:
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


def _glides(segs: List[Segment]) -> List[Segment]:
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


def _stressed_syllable(word: str, syllables: List[List[Segment]]) -> int:
    """Index of the lexically stressed syllable: the written accent, else the penultimate for words ending in a
    vowel, n or s, else the last."""
    for k, syl in enumerate(syllables):
        if any(accented for _, accented in syl):
            return k
    if len(syllables) > 1 and word[-1] in _V + "ns":
        return len(syllables) - 2
    return len(syllables) - 1


def _split_segments(segs: List[Segment]) -> List[List[Segment]]:
    out, pos = [], 0
    for syl in syllabify([p for p, _ in segs]):
        out.append(segs[pos:pos + len(syl)])
        pos += len(syl)
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


# ----------------------------------------------------------------------------- part of speech

# (tag, lexically stressed, words). Unstressed: articles, short possessives, prepositions, conjunctions,
# relatives and clitic pronouns (they lean on the next word); the first listing of a word wins.
_CLOSED_CLASSES = (
    ("det", False, "el la lo los las al del mi mis tu tus su sus"),
    ("det", True, "un una unos unas este esta estos estas ese esa esos esas aquel aquella aquellos aquellas "
                  "nuestro nuestra nuestros nuestras vuestro vuestra vuestros vuestras cada algún alguna algunos "
                  "algunas ningún ninguna ninguno todo toda todos todas otro otra otros otras mucho mucha muchos "
                  "muchas poco poca pocos pocas varios varias tanto tanta tantos tantas"),
    ("prep", False, "a ante bajo con contra de desde en entre hacia hasta para por sin so sobre tras"),
    ("prep", True, "según durante mediante"),
    ("conj", False, "y e ni o u pero sino que si porque aunque pues mas como cuando donde mientras conque"),
    ("pron", False, "me te se nos os le les quien quienes cual cuales cuyo cuya cuyos cuyas"),
    ("pron", True, "yo tú él ella ello ellos ellas nosotros nosotras vosotros vosotras usted ustedes mí ti sí "
                   "conmigo contigo consigo alguien nadie algo nada esto eso aquello"),
    ("wh", True, "qué quién quiénes cómo dónde cuándo cuánto cuánta cuántos cuántas cuál cuáles adónde"),
    ("aux", True, "he has ha hemos habéis han había habías habíamos habíais habían habrá habrán hay haber ser "
                  "soy eres es somos sois son era eras éramos eran fue fueron sido sea sean será serán estar "
                  "estoy estás está estamos están estaba estaban esté estén"),
    ("adv", True, "no sí muy más menos ya también tampoco siempre nunca jamás aquí allí ahí allá acá hoy ayer "
                  "bien mal así ahora luego después antes entonces todavía aún casi solo sólo tan bastante "
                  "quizá quizás tarde pronto cerca lejos dentro fuera arriba abajo apenas además"),
    ("num", True, " ".join(_UNITS + list(_TENS.values()) + list(_HUNDREDS.values()))
     + " cien mil millón millones veintiún"),
)


def _build_lexicon() -> Dict[str, Tuple[str, bool]]:
    lexicon: Dict[str, Tuple[str, bool]] = {}
    for tag, stressed, words in _CLOSED_CLASSES:
        for word in words.split():
            lexicon.setdefault(word, (tag, stressed))
    return lexicon


_LEXICON = _build_lexicon()
# Suffix heuristics for open-class words, first match wins.
_SUFFIX_POS = tuple((re.compile(p), tag) for p, tag in (
    (r"mente$", "adv"),
    (r"(ando|iendo|yendo)$", "verb"),  # gerunds
    (r"..(ar|er|ir)$", "verb"),  # infinitives
    (r"...(aba|aban|ían|aron|ieron|aré|ará|arán|eré|erá|erán|iré|irá|irán)$", "verb"),
    (r"...[aei]mos$", "verb"),
    (r"...(ó|ió)$", "verb"),  # preterite: llegó, pidió
    (r"...(ado|ido)s?$", "verb"),  # participles
))


def part_of_speech(word: str) -> Tuple[str, bool]:
    """(coarse POS tag, lexically stressed) of a normalised word: closed-class lists, else suffix rules."""
    if word in _LEXICON:
        return _LEXICON[word]
    for pattern, tag in _SUFFIX_POS:
        if pattern.search(word):
            return tag, True
    return "content", True


# ----------------------------------------------------------------------------- sentence structure


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
        if token in _OPENING:
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
    syllables = _split_segments(_glides(_letters_to_segments(word)))
    return [[p for p, _ in syl] for syl in syllables], _stressed_syllable(word, syllables) if stressed else None


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
    tokens = [t for t in _TOKEN.findall(normalised) if t in _KEPT_PUNCT or _letters_to_segments(t)]
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


# ----------------------------------------------------------------------------- alignment to espeak-ng

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


# ----------------------------------------------------------------------------- labels

_LABEL = ("{p1}^{p2}-{p3}+{p4}={p5}@{p6}_{p7}"
          "/A:{a1}_{a2}"
          "/B:{b1}-{b2}@{b3}-{b4}&{b5}-{b6}#{b7}-{b8}${b9}-{b10}|{b11}"
          "/C:{c1}+{c2}"
          "/D:{d1}_{d2}"
          "/E:{e1}+{e2}@{e3}+{e4}&{e5}#{e6}+{e7}"
          "/F:{f1}_{f2}"
          "/G:{g1}_{g2}|{g3}"
          "/H:{h1}={h2}^{h3}={h4}|{h5}"
          "/I:{i1}_{i2}"
          "/J:{j1}+{j2}-{j3}!{j4}#{j5}={j6}")
UNDEFINED = "xx"  # "x" is a phone (jota)


def _fmt(value) -> str:
    if value is None:
        return UNDEFINED
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _syllable_fields(sentence: Sentence) -> List[Dict[str, object]]:
    """B fields of every syllable (positions and stress counts within its word and phrase)."""
    out: List[Dict[str, object]] = []
    for phrase in sentence.phrases:
        syls = [s for w in phrase.words for s in sentence.words[w].syllables]
        stressed = [k for k, s in enumerate(syls) if sentence.syllables[s].stressed]
        for k, s in enumerate(syls):
            syl = sentence.syllables[s]
            in_word = sentence.words[syl.word].syllables
            before = [q for q in stressed if q < k]
            after = [q for q in stressed if q > k]
            out.append(dict(b1=syl.stressed, b2=len(syl.phones),
                            b3=in_word.index(s) + 1, b4=len(in_word) - in_word.index(s),
                            b5=k + 1, b6=len(syls) - k, b7=len(before), b8=len(after),
                            b9=k - before[-1] if before else None, b10=after[0] - k if after else None,
                            b11=syl.vowel))
    return out


def _word_fields(sentence: Sentence) -> List[Dict[str, object]]:
    """E fields of every word (its place among the words and content words of its phrase)."""
    out: List[Dict[str, object]] = []
    for phrase in sentence.phrases:
        content = [sentence.words[w].content for w in phrase.words]
        for k, w in enumerate(phrase.words):
            word = sentence.words[w]
            out.append(dict(e1=word.pos, e2=len(word.syllables), e3=k + 1, e4=len(phrase.words) - k,
                            e5=word.content, e6=sum(content[:k]), e7=sum(content[k + 1:])))
    return out


def _phrase_fields(sentence: Sentence) -> List[Dict[str, object]]:
    """H fields of every phrase."""
    n = len(sentence.phrases)
    return [dict(h1=_phrase_summary(sentence, f)[0], h2=len(phrase.words), h3=f + 1, h4=n - f, h5=phrase.punct)
            for f, phrase in enumerate(sentence.phrases)]


def _syllable_summary(sentence: Sentence, s: Optional[int]) -> Tuple[Optional[bool], Optional[int]]:
    """(stressed, #phones) of a neighbouring syllable (A, C)."""
    return (None, None) if s is None else (sentence.syllables[s].stressed, len(sentence.syllables[s].phones))


def _word_summary(sentence: Sentence, w: Optional[int]) -> Tuple[Optional[str], Optional[int]]:
    """(POS, #syllables) of a neighbouring word (D, F)."""
    return (None, None) if w is None else (sentence.words[w].pos, len(sentence.words[w].syllables))


def _phrase_summary(sentence: Sentence, f: Optional[int]) -> Tuple[Optional[int], Optional[int], Optional[str]]:
    """(#syllables, #words, final punctuation) of a phrase (G, H, I)."""
    if f is None:
        return None, None, None
    phrase = sentence.phrases[f]
    return sum(len(sentence.words[w].syllables) for w in phrase.words), len(phrase.words), phrase.punct


def _neighbours(seq: Sequence[Phone], attr: str, count: int) -> List[Tuple[Optional[int], Optional[int]]]:
    """(previous, next) unit index (attr: syllable, word or phrase) of every phone; for pauses, the units on
    either side of the pause."""
    units = [getattr(p, attr) for p in seq]
    out: List[Tuple[Optional[int], Optional[int]]] = []
    for k, cur in enumerate(units):
        if cur is None:
            before = next((u for u in reversed(units[:k]) if u is not None), None)
            after = next((u for u in units[k + 1:] if u is not None), None)
            out.append((before, after))
        else:
            out.append((cur - 1 if cur > 0 else None, cur + 1 if cur + 1 < count else None))
    return out


def _positions_in_syllable(seq: Sequence[Phone]) -> List[Tuple[Optional[int], Optional[int]]]:
    """(forward, backward) 1-based position of every phone in its syllable; (None, None) for pauses."""
    sizes = Counter(p.syllable for p in seq if p.syllable is not None)
    seen: Counter = Counter()
    out: List[Tuple[Optional[int], Optional[int]]] = []
    for p in seq:
        if p.syllable is None:
            out.append((None, None))
        else:
            seen[p.syllable] += 1
            out.append((seen[p.syllable], sizes[p.syllable] - seen[p.syllable] + 1))
    return out


_B_KEYS = ("b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10", "b11")
_E_KEYS = ("e1", "e2", "e3", "e4", "e5", "e6", "e7")
_H_KEYS = ("h1", "h2", "h3", "h4", "h5")


def _labels(sentence: Sentence, seq: Sequence[Phone]) -> List[str]:
    syl_fields, word_fields = _syllable_fields(sentence), _word_fields(sentence)
    phrase_fields = _phrase_fields(sentence)
    syl_nb = _neighbours(seq, "syllable", len(sentence.syllables))
    word_nb = _neighbours(seq, "word", len(sentence.words))
    phrase_nb = _neighbours(seq, "phrase", len(sentence.phrases))
    in_syl = _positions_in_syllable(seq)
    names = [UNDEFINED] * 2 + [p.name for p in seq] + [UNDEFINED] * 2
    lines = []
    for k, phone in enumerate(seq):
        (ps, ns), (pw, nw), (pf, nf) = syl_nb[k], word_nb[k], phrase_nb[k]
        # syllables / words after this phone's own (for a pause: after the pause)
        next_syl = phone.syllable + 1 if phone.syllable is not None else ns
        next_word = phone.word + 1 if phone.word is not None else nw
        fields: Dict[str, object] = dict(zip(("p1", "p2", "p3", "p4", "p5"), names[k:k + 5]))
        fields.update(p6=in_syl[k][0], p7=in_syl[k][1])
        fields.update(zip(("a1", "a2"), _syllable_summary(sentence, ps)))
        fields.update(syl_fields[phone.syllable] if phone.syllable is not None else dict.fromkeys(_B_KEYS))
        fields.update(zip(("c1", "c2"), _syllable_summary(sentence, ns)))
        fields.update(zip(("d1", "d2"), _word_summary(sentence, pw)))
        fields.update(word_fields[phone.word] if phone.word is not None else dict.fromkeys(_E_KEYS))
        fields.update(zip(("f1", "f2"), _word_summary(sentence, nw)))
        fields.update(zip(("g1", "g2", "g3"), _phrase_summary(sentence, pf)))
        fields.update(phrase_fields[phone.phrase] if phone.phrase is not None else dict.fromkeys(_H_KEYS))
        fields.update(zip(("i1", "i2"), _phrase_summary(sentence, nf)[:2]))
        fields.update(j1=len(sentence.syllables), j2=len(sentence.words), j3=len(sentence.phrases),
                      j4=sentence.type,
                      j5=len(sentence.syllables) - (len(sentence.syllables) if next_syl is None else next_syl),
                      j6=len(sentence.words) - (len(sentence.words) if next_word is None else next_word))
        lines.append(_LABEL.format(**{key: _fmt(v) for key, v in fields.items()}))
    return lines


def _htk_time(seconds: float) -> int:
    return int(round(seconds * 1e7))  # HTK labels count 100 ns units


def to_hts(sentence: Sentence, times: Optional[Sequence[Tuple[Phone, float, float]]] = None) -> List[str]:
    """Full-context label lines: "start end label" (100 ns units) for `times` as given by align(), or the bare
    labels of the sentence's own phones when times is None."""
    if times is None:
        return _labels(sentence, sentence.phones)
    if not times:
        raise ValueError("to_hts: empty phone times")
    for phone, start, end in times:
        if not end > start:
            raise ValueError(f"to_hts: phone {phone.name!r} has end {end} <= start {start}")
    labels = _labels(sentence, [p for p, _, _ in times])
    return [f"{_htk_time(start)} {_htk_time(end)} {label}" for (_, start, end), label in zip(times, labels)]


class Labels(NamedTuple):
    lines: List[str]
    matched: int  # front-end phones matched exactly to espeak's (0 without events)
    total: int  # front-end phones


def label_text(text: str, events: Optional[Sequence[Tuple[str, int, int]]] = None,
               sample_rate: Optional[int] = None) -> Labels:
    """analyse + align (when espeak `events` are given, with their `sample_rate`) + to_hts."""
    sentence = analyse(text)
    if events is None:
        return Labels(to_hts(sentence), 0, len(sentence.phones))
    if not sample_rate:
        raise ValueError("label_text: events need their sample_rate")
    result = align(sentence, events, sample_rate)
    return Labels(to_hts(sentence, result.segments), result.matched, result.total)


# ----------------------------------------------------------------------------- .lab files


class LabLine(NamedTuple):
    start: Optional[int]  # 100 ns units; None in untimed label files
    end: Optional[int]
    label: str


def parse_lab(lines: Iterable[str], source: str = "<labels>") -> List[LabLine]:
    """Parse "start end label" or bare "label" lines (all of one kind); errors name source and line."""
    out: List[LabLine] = []
    for lineno, line in enumerate(lines, 1):
        out.append(_parse_lab_line(line.rstrip("\r\n"), source, lineno, out[-1] if out else None))
    if not out:
        raise DataDirError(source, None, "no labels")
    return out


def _parse_lab_line(line: str, source: str, lineno: int, prev: Optional[LabLine]) -> LabLine:
    cols = line.split()
    if len(cols) == 1:
        entry = LabLine(None, None, cols[0])
    elif len(cols) == 3:
        try:
            entry = LabLine(int(cols[0]), int(cols[1]), cols[2])
        except ValueError:
            raise DataDirError(source, lineno, f"start and end must be integers (100 ns units): {line!r}") from None
        if not 0 <= entry.start < entry.end:
            raise DataDirError(source, lineno, f"need 0 <= start < end, got {entry.start} {entry.end}")
    else:
        raise DataDirError(source, lineno, f"expected 'start end label' or 'label', got {len(cols)} fields: {line!r}")
    if prev is not None:
        if (prev.start is None) != (entry.start is None):
            raise DataDirError(source, lineno, "mixes timed and untimed labels")
        if entry.start is not None and entry.start < prev.end:
            raise DataDirError(source, lineno, f"starts at {entry.start}, before the previous end {prev.end}")
    return entry


def read_lab(path: PathLike) -> List[LabLine]:
    """Read an HTS label file; ValueError naming file and line on malformed lines."""
    return parse_lab((line for _, line in iter_lines(path)), str(path))


def write_lab(path: PathLike, lines: Sequence[str]) -> None:
    """Write label lines atomically (no half-written file survives an interruption)."""
    with atomic_open(path) as f:
        f.writelines(line + "\n" for line in lines)
