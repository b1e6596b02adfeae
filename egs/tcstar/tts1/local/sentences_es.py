"""Spanish sentences in the register of TC-STAR (parliamentary speeches, broadcast news) for the mini corpus.

A small template grammar written for this recipe: noun phrases with articles and adjectives, verbs in several
tenses, prepositional phrases, subordinate clauses, numbers, and phrase punctuation (commas, questions,
exclamations), so that every field of the full-context labels (POS, stress, phrase position, sentence type)
takes many values. Deterministic in the seed.
"""
from __future__ import annotations

import random
from typing import List

SUBJECTS = [
    "el gobierno", "la comisión", "el presidente", "la ministra", "el parlamento", "la oposición",
    "los diputados", "las comunidades autónomas", "el consejo europeo", "la señora portavoz", "el grupo socialista",
    "los ciudadanos", "la unión europea", "el tribunal", "mi grupo", "la mayoría de los países", "nuestro partido",
    "el ayuntamiento de sevilla", "la policía", "los trabajadores del sector",
]
VERBS = [
    "ha aprobado", "presentará", "rechaza", "defendió", "debe revisar", "quiere reducir", "apoyaba",
    "ha propuesto", "analizará", "critica", "financia", "ha firmado", "pidió", "necesita", "garantiza",
    "está estudiando", "aplazó", "impulsa", "recordó", "votará",
]
OBJECTS = [
    "la reforma laboral", "el presupuesto", "una nueva ley", "el acuerdo pesquero", "los fondos de cohesión",
    "la directiva", "el plan de empleo", "las ayudas a la agricultura", "un informe detallado",
    "la política exterior", "el tratado", "los impuestos", "la propuesta de resolución", "el sistema de pensiones",
    "las inversiones en investigación", "el calendario electoral", "la red de ferrocarriles",
]
PPS = [
    "en el pleno de mañana", "durante la sesión", "para el próximo año", "con el apoyo de todos",
    "antes del verano", "en la reunión de bruselas", "desde hace meses", "sin ninguna duda",
    "a pesar de las críticas", "por unanimidad", "en esta cámara", "según los datos oficiales",
    "hasta el final de la legislatura", "frente a la crisis", "entre los estados miembros",
]
ADVERBS = ["hoy", "ayer", "finalmente", "también", "claramente", "todavía", "ahora", "probablemente", "además"]
CONNECTORS = ["porque", "aunque", "mientras", "ya que", "pero", "y", "cuando", "si"]
OPENERS = ["señor presidente", "señorías", "en primer lugar", "por otra parte", "sin embargo", "en resumen",
           "como saben", "por lo tanto"]
QUESTIONS = ["qué opina", "cuándo presentará", "por qué rechaza", "cómo piensa financiar", "quién defiende",
             "dónde se aplicará"]
NUMBERS = ["dos", "tres", "quince", "cuarenta", "cien", "doscientos", "mil", "veinte", "tres mil"]
UNITS = ["millones de euros", "por ciento", "empresas", "diputados", "días", "kilómetros"]


def _clause(rng: random.Random) -> str:
    words = [rng.choice(SUBJECTS)]
    if rng.random() < 0.3:
        words.append(rng.choice(ADVERBS))
    words += [rng.choice(VERBS), rng.choice(OBJECTS)]
    if rng.random() < 0.5:
        words.append(rng.choice(PPS))
    if rng.random() < 0.2:
        words.append(f"con {rng.choice(NUMBERS)} {rng.choice(UNITS)}")
    return " ".join(words)


def sentence(rng: random.Random) -> str:
    """One sentence: a statement (possibly with opener and subordinate clause), a question or an exclamation."""
    kind = rng.random()
    if kind < 0.15:
        subj = rng.choice(SUBJECTS)
        return f"¿{rng.choice(QUESTIONS).capitalize()} {subj} {rng.choice(OBJECTS)}?"
    if kind < 0.22:
        return f"¡{_clause(rng).capitalize()}!"
    parts: List[str] = []
    if rng.random() < 0.35:
        parts.append(rng.choice(OPENERS))
    parts.append(_clause(rng))
    if rng.random() < 0.4:
        parts.append(f"{rng.choice(CONNECTORS)} {_clause(rng)}")
    text = ", ".join(parts)
    return text[0].upper() + text[1:] + "."


def sentences(n: int, seed: int = 0) -> List[str]:
    """n distinct sentences, deterministic in seed."""
    rng = random.Random(f"tcstar-mini:{seed}")
    out, seen = [], set()
    while len(out) < n:
        s = sentence(rng)
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


if __name__ == "__main__":
    import sys

    print("\n".join(sentences(int(sys.argv[1]) if len(sys.argv) > 1 else 10)))
