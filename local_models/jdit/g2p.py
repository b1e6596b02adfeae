"""Korean text -> jamo-level phoneme tokens, offline (the `jamo` package; no model, no download).

The paper converts text "to phoneme sequences using an internal text processing tool"; we use the
jamo decomposition that ESPnet's `korean_jaso` g2p also uses, so the token inventory is the same
(the conjoining jamo code points), with a defined treatment of spaces and punctuation:

* Hangul syllable -> initial consonant + vowel (+ final consonant), the conjoining jamo of
  U+1100-1112 (19 initials), U+1161-1175 (21 vowels), U+11A8-11C2 (27 finals). Initial and final
  forms of a consonant are different tokens (e.g. initial U+1100 vs final U+11A8 for ㄱ); the
  silent initial ㅇ (U+110B) is kept, as in ESPnet, so every syllable starts with an initial token.
  Modern conjoining jamo in the text are kept as they are; lone compatibility jamo (U+3131-3163,
  e.g. "ㅋㅋ") become the initial form of a consonant (final form if it has none) or the vowel.
* Whitespace between two words -> "<space>" (word boundary). Never at the start or end.
* Pause punctuation , ; : … ~ · and dashes -> "<pau>"; sentence-final . ! ? -> ".", "!", "?"
  (kept apart: a question is spoken with another contour). A run of punctuation and spaces between
  two words becomes ONE token, the strongest of the run ("?" > "!" > "." > "<pau>"), which replaces
  the "<space>" there. Punctuation before the first word is dropped; after the last word it is kept.
* Quotes and brackets (" ' “ ” ‘ ’ ( ) [ ] { } < > 「 」 『 』 《 》 〈 〉 *) are silent: dropped.
* Anything else (Latin letters, digits, Hanja, other symbols) is an error naming the character
  (`G2PError`), unless unknown="drop", which drops it (the CLI reports how many it dropped).
  KSS' expanded column spells numbers and foreign words in Hangul, so the error means bad input.
"""
from __future__ import annotations

import unicodedata
from collections import Counter
from typing import Dict, Iterable, List, Optional, Sequence

SPACE = "<space>"
PAUSE = "<pau>"
BLANK, UNK, SOS_EOS = "<blank>", "<unk>", "<sos/eos>"

LEADS = tuple(chr(c) for c in range(0x1100, 0x1113))
VOWELS = tuple(chr(c) for c in range(0x1161, 0x1176))
TAILS = tuple(chr(c) for c in range(0x11A8, 0x11C3))
PUNCT_TOKENS = (PAUSE, ".", "!", "?")
# Every token text_to_tokens can produce.
INVENTORY = LEADS + VOWELS + TAILS + (SPACE,) + PUNCT_TOKENS

_PUNCT: Dict[str, str] = {}
for _chars, _tok in ((",;:…~·-–—〜、，；：", PAUSE), (".。．", "."), ("!！", "!"), ("?？", "?")):
    _PUNCT.update(dict.fromkeys(_chars, _tok))
_STRENGTH = {PAUSE: 0, ".": 1, "!": 2, "?": 3}
SILENT = frozenset("\"'“”‘’()[]{}<>「」『』《》〈〉*")


class G2PError(ValueError):
    """A character that has no pronunciation; `column` is 1-based."""

    def __init__(self, char: str, column: int):
        self.char, self.column = char, column
        name = unicodedata.name(char, "unnamed")
        hint = ""
        if char.isdigit():
            hint = " (spell numbers out in Hangul; KSS: use the expanded column)"
        elif char.isascii() and char.isalpha():
            hint = " (spell foreign words in Hangul)"
        super().__init__(f"character {char!r} (U+{ord(char):04X} {name}) at column {column} has no Korean "
                         f"pronunciation{hint}")


def _hcj_to_jamo(ch: str) -> str:
    """A modern compatibility jamo -> conjoining jamo (consonants: initial form if any, else final)."""
    import jamo

    if 0x314F <= ord(ch) <= 0x3163:
        return jamo.hcj_to_jamo(ch, "vowel")
    name = unicodedata.name(ch).replace("HANGUL LETTER ", "")
    for prefix, forms in (("HANGUL CHOSEONG ", LEADS), ("HANGUL JONGSEONG ", TAILS)):
        for form in forms:
            if unicodedata.name(form) == prefix + name:
                return form
    raise G2PError(ch, 0)  # not reached for modern compatibility jamo


def char_to_jamo(ch: str) -> Optional[List[str]]:
    """Jamo tokens of one character, or None when it is not Korean."""
    o = ord(ch)
    if 0xAC00 <= o <= 0xD7A3:
        import jamo

        return list(jamo.h2j(ch))
    if ch in LEADS or ch in VOWELS or ch in TAILS:
        return [ch]
    if 0x3131 <= o <= 0x3163:
        return [_hcj_to_jamo(ch)]
    return None


def text_to_tokens(text: str, unknown: str = "error", dropped: Optional[List[str]] = None) -> List[str]:
    """Tokens of `text` (see the module docstring). unknown: "error" raises G2PError, "drop" drops
    the character (and appends it to `dropped` when given). Text with no Korean letter is an error."""
    if unknown not in ("error", "drop"):
        raise ValueError(f"unknown must be 'error' or 'drop', got {unknown!r}")
    text = unicodedata.normalize("NFC", text)
    tokens: List[str] = []
    punct: Optional[str] = None  # strongest punctuation since the last word
    space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            space = True
            continue
        if ch in _PUNCT:
            tok = _PUNCT[ch]
            if punct is None or _STRENGTH[tok] > _STRENGTH[punct]:
                punct = tok
            continue
        if ch in SILENT:
            continue
        jamos = char_to_jamo(ch)
        if jamos is None:
            if unknown == "error":
                raise G2PError(ch, i + 1)
            if dropped is not None:
                dropped.append(ch)
            continue
        if tokens and (punct or space):
            tokens.append(punct or SPACE)
        punct, space = None, False
        tokens.extend(jamos)
    if not tokens:
        raise ValueError(f"no Korean letter in {text!r}: nothing to pronounce")
    if punct:
        tokens.append(punct)
    return tokens


def is_word_token(tok: str) -> bool:
    """True for jamo tokens (a letter), False for <space> and punctuation tokens."""
    return tok not in (SPACE,) + PUNCT_TOKENS


def token_list(token_seqs: Iterable[Sequence[str]], full_inventory: bool = True,
               inventory: Iterable[str] = INVENTORY) -> List[str]:
    """ESPnet2 token list of the training texts, in the shape of `espnet2.bin.tokenize_text
    --write_vocabulary true --add_symbol '<blank>:0' --add_symbol '<unk>:1' --add_symbol '<sos/eos>:-1'`:
    <blank>, <unk>, the tokens by decreasing count (ties in C order, so the list does not depend on
    utterance order), <sos/eos> last. With full_inventory, the INVENTORY tokens the training texts never
    use follow the counted ones (before <sos/eos>): test or out-of-domain text with a rare jamo then gets
    an (untrained) embedding of its own instead of silently becoming <unk>. INVENTORY: the front end's tokens
    (the jamo inventory, or phonemes.inventory() for espeak-ng phonemes)."""
    counts = Counter(tok for seq in token_seqs for tok in seq)
    for special in (BLANK, UNK, SOS_EOS):
        if special in counts:
            raise ValueError(f"token {special!r} is reserved")
    ordered = sorted(counts, key=lambda t: (-counts[t], t.encode("utf-8")))
    if full_inventory:
        ordered += sorted((t for t in set(inventory) if t not in counts), key=lambda t: t.encode("utf-8"))
    return [BLANK, UNK, *ordered, SOS_EOS]
