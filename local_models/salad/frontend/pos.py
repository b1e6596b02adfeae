"""Coarse part of speech and lexical stress of Spanish words: closed-class lists, else suffix rules."""
from __future__ import annotations

import re
from typing import Dict, Tuple

from .normalisation import NUMBER_WORDS

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
    ("num", True, " ".join(NUMBER_WORDS)),
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
