"""Output units and input framing of the multi-softmax RNN-T (paper 001, Section 5).

Units. The paper's output vocabulary per language is "the respective graphemes, graphemes with B_
prefix and <blank>": a word is spelt as its graphemes, the first one marked `B_` (word start), so a
unit sequence maps back to words without a separate space symbol:

    "नमस्ते दुनिया" -> B_न म स ् त े B_द ु न ि य ा

Graphemes are Unicode code points, not extended grapheme clusters: an Indic vowel sign (matra),
virama, nukta, anusvara or visarga is a unit of its own, never glued to its consonant. This keeps
the inventory small and closed (clusters such as "स्ते" would multiply it), every written word is
spellable from the inventory, and a word's units are simply `list(word)`. Text is NFC-normalised
first (`normalise`), so two spellings of the same text give the same units; note that NFC *splits*
the precomposed nukta letters (क़ U+0958 .. य़ U+095F are composition exclusions) into letter + nukta.

Vocabulary files (`write_units` / `read_units`) are ESPnet token lists, one unit per line, the line
number (from 0) being the id:
    <blank>                      id 0 (the RNN-T blank)
    graphemes, by code point     every grapheme seen in the training text
    B_ + the same graphemes      same order
    <unk>                        last
Every grapheme gets both forms (the paper's definition), so a grapheme that starts a word only in
dev/test is still a known unit. A unit outside a vocabulary is either an error (`encode` without
`unk`: `UnknownUnitError` names the unit) or mapped to `<unk>` (`encode(..., unk=UNK)`,
`map_unknown`): the data stage maps dev/test units unseen in training to `<unk>` and reports them.

Framing. "The encoder is fed with 640-dimensional features, obtained by stacking 80-dimensional
features from eight frames in the past. The frames are shifted by 30ms": `stack_frames` turns
(T, 80) log-mels at 10 ms into (ceil(T / 3), 640) at 30 ms, each output made of the current frame
and the seven before it (causal: a streaming encoder never waits for future audio).

Public API:
    LANGS, BLANK, UNK, WORD_START, check_lang(lang), script_of(lang), shared_script(langs)
    normalise(text, lang) -> str
    word_units(word) -> List[str];  text_to_units(text) -> List[str];  units_to_text(units) -> str
    build_vocab(texts) -> List[str];  union_vocab(vocabs) -> List[str];  graphemes_of(vocab) -> List[str]
    write_units(path, vocab);  read_units(path) -> List[str]
    encode(units, vocab, unk=None) -> List[int];  decode(ids, vocab) -> List[str]
    map_unknown(units, vocab, unk=UNK) -> (units, unknown units)
    stack_frames(feats, n=8, stride=3);  stack_frames_batch(feats, lengths, n=8, stride=3)
    stacked_length(num_frames, stride=3)
"""
from __future__ import annotations

import unicodedata
from typing import Collection, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from local_models.common.datadir import DataDirError, atomic_open, iter_lines

# The recipe's languages and their scripts: the paper's four (Table 1) and the other languages of MUCS 2021
# (egs/indic/asr1/local/prepare_mucs.py). Another language needs only a line here: normalisation is script-agnostic
# and every unit inventory is built from the language's own training text (build_vocab). Hindi and Marathi share
# Devanagari: vanilla's language-by-script (decode.lang_by_script) tells them apart only by graphemes one of them
# lacks in training (Marathi's ळ), else it is a tie (no language); RESULTS gives vanilla's LID for languages that
# share a script as n/a (shared_script, report.without_script_lid).
LANGS: Dict[str, str] = {
    "en": "Indian English (Latin script)",
    "hi": "Hindi (Devanagari)",
    "ta": "Tamil (Tamil script)",
    "gu": "Gujarati (Gujarati script)",
    "mr": "Marathi (Devanagari)",
    "or": "Odia (Odia script)",
    "te": "Telugu (Telugu script)",
    # the real-speech corpus (egs/indic/asr1 --corpus real, local/prepare_real.py): recorded speech, all Latin script
    "cs": "Czech (Latin script)",
    "nl": "Dutch (Latin script)",
    "es": "Spanish (Latin script)",
    "ca": "Catalan (Latin script)",
    "fr": "French (Latin script)",
}
BLANK = "<blank>"
UNK = "<unk>"
SPECIAL = (BLANK, UNK)
WORD_START = "B_"

# Apostrophe look-alikes, read as the ASCII apostrophe (kept inside words: "don't").
_APOSTROPHES = {"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u0060": "'", "\u00b4": "'"}


class UnknownUnitError(ValueError):
    """A unit that is not in the vocabulary (the message names it and its position)."""

    def __init__(self, unit: str, position: int, num_units: int):
        self.unit, self.position = unit, position
        super().__init__(f"unit {unit!r} (position {position}) is not in the vocabulary ({num_units} units); "
                         f"map unseen units with unk={UNK!r} or rebuild the vocabulary")


def script_of(lang: str) -> str:
    """The script LANGS names for LANG: "Indian English (Latin script)" -> "Latin"; "Hindi (Devanagari)" ->
    "Devanagari"."""
    desc = LANGS[check_lang(lang)]
    return desc[desc.rindex("(") + 1:].rstrip(")").removesuffix(" script")


def shared_script(langs: Sequence[str]) -> Dict[str, List[str]]:
    """{lang: the other languages of LANGS written in its script}, for every language that shares its script (Hindi
    and Marathi: Devanagari; the real-speech corpus: all Latin). Vanilla's language-by-script LID
    (decode.lang_by_script) is only defined for the others."""
    out = {}
    for lang in langs:
        others = [o for o in langs if o != lang and script_of(o) == script_of(lang)]
        if others:
            out[lang] = others
    return out


def check_lang(lang: str) -> str:
    if lang not in LANGS:
        raise ValueError(f"unknown language code {lang!r}; known: {', '.join(LANGS)}")
    return lang


# ----------------------------------------------------------------------------- text

def _is_word_char(c: str) -> bool:
    return unicodedata.category(c)[0] in "LMN"


def normalise(text: str, lang: str) -> str:
    """The transcript as the recipe models it; raise ValueError if nothing is left.

    NFC; lower case (Latin letters: English, and English words inside Indic text); punctuation and
    symbols (Unicode categories P*, S*: . , ? ! " - ( ) । ॥ ॰ ...) become spaces, except an apostrophe
    between two word characters ("don't"); invisible format and control characters (ZWJ, ZWNJ, BOM:
    category C*) are dropped; digits are kept (they are graphemes); spaces are collapsed.
    """
    check_lang(lang)
    text = unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).lower())
    chars = [_APOSTROPHES.get(c, c) for c in text]
    out = []
    for i, c in enumerate(chars):
        cat = unicodedata.category(c)
        if c.isspace():
            out.append(" ")
        elif c == "'" and 0 < i < len(chars) - 1 and _is_word_char(chars[i - 1]) and _is_word_char(chars[i + 1]):
            out.append(c)
        elif cat[0] in "PSZ":
            out.append(" ")
        elif cat[0] == "C":
            continue
        else:
            out.append(c)
    result = " ".join("".join(out).split())
    if not result:
        raise ValueError(f"nothing is left of {text!r} after normalisation ({lang}: punctuation and symbols removed)")
    return result


def word_units(word: str) -> List[str]:
    """Graphemes (code points) of one word, the first prefixed `B_`: "की" -> ["B_क", "ी"]."""
    if not word or any(c.isspace() for c in word):
        raise ValueError(f"not a word: {word!r} (empty or contains whitespace)")
    return [WORD_START + word[0], *word[1:]]


def text_to_units(text: str) -> List[str]:
    """Units of a (normalised) text; words are separated by whitespace."""
    units: List[str] = []
    for word in text.split():
        units.extend(word_units(word))
    return units


def units_to_text(units: Iterable[str]) -> str:
    """Words back from units: a `B_` unit starts a new word, any other unit continues the current one.

    `units_to_text(text_to_units(t)) == t` for every normalised text. A sequence that does not start
    with a `B_` unit (a hypothesis may not) still decodes: its first unit starts the first word.
    `<blank>` is skipped; `<unk>` stays in its word as the literal "<unk>" (so it counts as an error).
    """
    words: List[str] = []
    for unit in units:
        if unit == BLANK:
            continue
        if not unit or any(c.isspace() for c in unit):
            raise ValueError(f"invalid unit {unit!r} (empty or contains whitespace)")
        if unit.startswith(WORD_START) and unit not in SPECIAL:
            grapheme = unit[len(WORD_START):]
            if not grapheme:
                raise ValueError(f"invalid unit {unit!r}: word-start prefix without a grapheme")
            words.append(grapheme)
        elif words:
            words[-1] += unit
        else:
            words.append(unit)
    return " ".join(words)


# ----------------------------------------------------------------------------- vocabularies

def _vocab_from_graphemes(graphemes: Iterable[str]) -> List[str]:
    ordered = sorted(set(graphemes))
    return [BLANK, *ordered, *(WORD_START + g for g in ordered), UNK]


def build_vocab(texts: Iterable[str]) -> List[str]:
    """Vocabulary of normalised texts: `<blank>`, every grapheme seen (by code point), the same with
    `B_`, `<unk>`. Deterministic: depends only on the set of graphemes, not on text order."""
    graphemes = set()
    for text in texts:
        for word in text.split():
            graphemes.update(word)
    if not graphemes:
        raise ValueError("no text to build a vocabulary from")
    return _vocab_from_graphemes(graphemes)


def graphemes_of(vocab: Iterable[str]) -> List[str]:
    """The plain graphemes of a vocabulary (special units dropped, `B_x` read as `x`), sorted."""
    out = set()
    for unit in vocab:
        if unit in SPECIAL:
            continue
        grapheme = unit[len(WORD_START):] if unit.startswith(WORD_START) else unit
        if len(grapheme) != 1:
            raise ValueError(f"unit {unit!r} is not a grapheme, B_ + a grapheme, {BLANK} or {UNK}")
        out.add(grapheme)
    return sorted(out)


def union_vocab(vocabs: Iterable[Iterable[str]]) -> List[str]:
    """One vocabulary holding every language's units, in the same canonical order (the vanilla and
    one-hot baselines' shared softmax)."""
    graphemes = set()
    for vocab in vocabs:
        graphemes.update(graphemes_of(vocab))
    if not graphemes:
        raise ValueError("union of empty vocabularies")
    return _vocab_from_graphemes(graphemes)


# paper Table 1: each language's vocabulary size (<blank> included)
PAPER_VOCAB_SIZES = {"en": 133, "hi": 59, "ta": 97, "gu": 123}


def paper_vocabularies() -> Dict[str, List[str]]:
    """Unit lists of the paper's sizes (Table 1) for counting parameters at paper size: per language <blank>,
    (size - 1) / 2 stand-in graphemes, their B_ forms and our <unk>, on disjoint code points; and their union."""
    vocabs = {}
    for (lang, size), first in zip(PAPER_VOCAB_SIZES.items(), (0x100, 0x900, 0xB80, 0xA80)):
        graphemes = [chr(first + i) for i in range((size - 1) // 2)]
        vocabs[lang] = [BLANK, *graphemes, *(WORD_START + g for g in graphemes), UNK]
    vocabs["union"] = union_vocab(vocabs.values())
    return vocabs


def write_units(path, vocab: Sequence[str]) -> None:
    """ESPnet token list: one unit per line (line k = id k), written atomically."""
    seen = set()
    for unit in vocab:
        if not unit or any(c.isspace() for c in unit):
            raise ValueError(f"{path}: invalid unit {unit!r} (empty or contains whitespace)")
        if unit in seen:
            raise ValueError(f"{path}: duplicate unit {unit!r}")
        seen.add(unit)
    with atomic_open(path) as f:
        f.writelines(f"{unit}\n" for unit in vocab)


def read_units(path) -> List[str]:
    """Read a token list; errors (DataDirError) name the file and line."""
    vocab: List[str] = []
    first: Dict[str, int] = {}
    try:
        for lineno, line in iter_lines(path):
            unit = line.strip()
            if not unit or len(unit.split()) != 1:
                raise DataDirError(path, lineno, f"expected one unit per line, got {line!r}")
            if unit in first:
                raise DataDirError(path, lineno, f"duplicate unit {unit!r} (first on line {first[unit]})")
            first[unit] = lineno
            vocab.append(unit)
    except FileNotFoundError:
        raise DataDirError(path, None, "unit list does not exist") from None
    if not vocab:
        raise DataDirError(path, None, "unit list is empty")
    return vocab


# ----------------------------------------------------------------------------- ids

Vocab = Union[Sequence[str], Mapping[str, int]]


def _index(vocab: Vocab) -> Mapping[str, int]:
    return vocab if isinstance(vocab, Mapping) else {u: i for i, u in enumerate(vocab)}


def encode(units: Sequence[str], vocab: Vocab, unk: Optional[str] = None) -> List[int]:
    """Ids of `units` in `vocab` (a token list or a {unit: id} map; pass a map when encoding many).

    Unknown units raise `UnknownUnitError` naming the unit, unless `unk` is given: then they get the
    id of `unk` (which must be in the vocabulary)."""
    index = _index(vocab)
    unk_id = None
    if unk is not None:
        if unk not in index:
            raise ValueError(f"unk unit {unk!r} is not in the vocabulary")
        unk_id = index[unk]
    ids = []
    for position, unit in enumerate(units):
        i = index.get(unit, unk_id)
        if i is None:
            raise UnknownUnitError(unit, position, len(index))
        ids.append(i)
    return ids


def decode(ids: Iterable[int], vocab: Sequence[str]) -> List[str]:
    """Units of ids (a token list indexed by id)."""
    out = []
    for i in ids:
        i = int(i)
        if not 0 <= i < len(vocab):
            raise ValueError(f"id {i} outside the vocabulary (0..{len(vocab) - 1})")
        out.append(vocab[i])
    return out


def map_unknown(units: Sequence[str], vocab: Collection[str], unk: str = UNK) -> Tuple[List[str], List[str]]:
    """(units with every unit outside `vocab` replaced by `unk`, the replaced units in order)."""
    mapped, unknown = [], []
    for unit in units:
        if unit in vocab:
            mapped.append(unit)
        else:
            mapped.append(unk)
            unknown.append(unit)
    return mapped, unknown


# ----------------------------------------------------------------------------- framing

def stacked_length(num_frames, stride: int = 3):
    """Frames after `stack_frames`: ceil(num_frames / stride) (ints or integer arrays/tensors)."""
    return (num_frames + stride - 1) // stride


def _stack_index(num_out: int, n: int, stride: int) -> np.ndarray:
    """(num_out, n) input-frame indices, lower-clipped at 0: output j takes frames a-n+1 .. a, oldest
    first, where a = stride * j + stride - 1 is the last frame of the j-th stride block."""
    anchors = np.arange(num_out) * stride + (stride - 1)
    return np.maximum(anchors[:, None] - (n - 1) + np.arange(n)[None, :], 0)


def _check_stack_args(n: int, stride: int) -> None:
    if n < 1 or stride < 1:
        raise ValueError(f"need n >= 1 and stride >= 1, got n={n}, stride={stride}")


def stack_frames(feats, n: int = 8, stride: int = 3):
    """Stack `n` frames and keep every `stride`-th: (T, D) -> (ceil(T / stride), n * D).

    Paper 001: 80-dim log-mels every 10 ms -> 640 dims every 30 ms. Output frame j is the
    concatenation, oldest first, of input frames a-7 .. a with a = 3j + 2: the whole current 30 ms
    block (frames 3j .. 3j+2) and the five frames before it, nothing from the future. Frames before the
    start repeat frame 0 (no past yet); frames after the end (the last, partial block when T is not a
    multiple of 3) repeat the last frame. Works on numpy arrays and torch tensors (any leading batch
    dims, all of length T; for padded batches of different lengths use `stack_frames_batch`).
    """
    _check_stack_args(n, stride)
    num_frames, dim = feats.shape[-2], feats.shape[-1]
    if num_frames < 1:
        raise ValueError("cannot stack an utterance of 0 frames")
    index = np.minimum(_stack_index(stacked_length(num_frames, stride), n, stride), num_frames - 1)
    if isinstance(feats, np.ndarray):
        out = np.take(feats, index.reshape(-1), axis=-2)
    else:  # torch
        import torch

        out = feats.index_select(-2, torch.as_tensor(index.reshape(-1), device=feats.device))
    return out.reshape(*feats.shape[:-2], index.shape[0], n * dim)


def stack_frames_batch(feats, lengths, n: int = 8, stride: int = 3):
    """`stack_frames` of every utterance of a padded batch: (B, T, D), lengths (B,) ->
    ((B, ceil(T / stride), n * D), ceil(lengths / stride)). Each utterance is stacked exactly as on its
    own (its end is padded with its own last frame, never with the batch padding); positions past an
    utterance's new length repeat its last frame. numpy arrays or torch tensors (same type out)."""
    _check_stack_args(n, stride)
    batch, num_frames, dim = feats.shape
    lens = np.asarray(lengths.cpu() if hasattr(lengths, "cpu") else lengths, dtype=np.int64).reshape(-1)
    if lens.shape[0] != batch:
        raise ValueError(f"{lens.shape[0]} lengths for a batch of {batch}")
    if batch and (lens.min() < 1 or lens.max() > num_frames):
        raise ValueError(f"lengths must lie in 1..{num_frames}, got {lens.tolist()}")
    num_out = stacked_length(num_frames, stride)
    index = np.minimum(_stack_index(num_out, n, stride)[None], (lens - 1)[:, None, None])  # (B, T', n)
    rows = np.arange(batch)[:, None, None]
    if isinstance(feats, np.ndarray):
        out, out_lens = feats[rows, index], stacked_length(lens, stride)
    else:  # torch
        import torch

        out = feats[torch.as_tensor(rows, device=feats.device), torch.as_tensor(index, device=feats.device)]
        out_lens = stacked_length(torch.as_tensor(lens, device=lengths.device if hasattr(lengths, "device") else None),
                                  stride)
    return out.reshape(batch, num_out, n * dim), out_lens
