"""HTS-style full-context labels of an analysed sentence (format: see the package docstring)."""
from __future__ import annotations

from collections import Counter
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from .alignment import align
from .sentence import Phone, Sentence, analyse

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
