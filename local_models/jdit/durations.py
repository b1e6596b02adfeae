"""Reference durations (frames per text_phn token) from the mini corpus' true espeak-ng phone times.

With espeak-ng phoneme tokens (`phonemes`, the recipe's default) every token is one phone event: `event_frames`
maps them one to one. With jamo tokens (`g2p`, the front end for recorded speech), espeak-ng reads Korean jamo
by jamo (its ko rules map each conjoining jamo to 0-2 phones: silent initial
ㅇ -> none, ㅊ -> tS h, ㅘ -> w a, ㄺ -> l g or k ...), so its phone sequence and our jamo tokens are
nearly parallel but not 1:1. `align` finds the monotonic assignment of every phone to one token that
costs least under a small compatibility table (a jamo takes 0-4 consecutive phones; consonant jamo
prefer the espeak consonants of their letter, vowel jamo vowels and glides, <space> and punctuation
tokens silence; the short glottal onset espeak puts before some vowel-initial words, phone ';', goes to
the silent initial ㅇ). A token's duration is the time of its phones; tokens with no phone get 0 frames; the
leading silence goes to the first token. Durations are converted to frames at the feature hop (token
boundaries rounded to the nearest frame, the last one at the utterance's frame count), so they sum to
utt2num_frames, as ESPnet's `durations` files do (ESPnet2 FastSpeech also wants a final 0 for <sos/eos>).

These are reference durations for checking what a model's aligner learns (e.g. JDI-T's durations
from the autoregressive attention) on the mini corpus: compare per token, or per word via the
<space> / punctuation tokens, which are exact espeak word boundaries up to rounding to frames.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from local_models.jdit.g2p import PAUSE, PUNCT_TOKENS, SPACE, VOWELS

# consonant jamo (by Unicode name suffix) -> espeak-ng consonant bases it is read as
_LETTER_PHONES: Dict[str, Tuple[str, ...]] = {
    "KIYEOK": ("g", "k", "q"), "SSANGKIYEOK": ("k", "q", "g"), "NIEUN": ("n",), "TIKEUT": ("d", "t"),
    "SSANGTIKEUT": ("t", "d"), "RIEUL": ("*", "l", "L", "r"), "MIEUM": ("m",), "PIEUP": ("b", "p"),
    "SSANGPIEUP": ("p", "b"), "SIOS": ("s", "t"), "SSANGSIOS": ("s", "t"), "IEUNG": ("N",),
    "CIEUC": ("tS", "dZ", "t"), "SSANGCIEUC": ("tS", "t"), "CHIEUCH": ("tS", "h", "t"),
    "KHIEUKH": ("k", "h", "q"), "THIEUTH": ("t", "h"), "PHIEUPH": ("p", "h"), "HIEUH": ("h", "t"),
}
# vowel jamo -> espeak-ng phones it is read as (glide + vowel for the diphthongs)
_VOWEL_PHONES: Dict[str, Tuple[str, ...]] = dict(zip(VOWELS, (
    ("a",), ("E",), ("j", "a"), ("j", "E"), ("@",), ("e",), ("j", "@"), ("j", "e"), ("o",), ("w", "a"),
    ("w", "E"), ("w", "e"), ("j", "o"), ("u",), ("w", "@"), ("w", "e"), ("w", "i"), ("j", "u"), ("u-",),
    ("u-", "j"), ("i",))))
MAX_PHONES = 4  # most phones one token can take
SIL = "sil"


def _consonant_phones(tok: str) -> Tuple[str, ...]:
    """espeak bases of a consonant jamo token; clusters (ᆰ = RIEUL-KIYEOK) take their letters' union."""
    import unicodedata

    name = unicodedata.name(tok).split(" ", 2)[-1]  # "HANGUL JONGSEONG RIEUL-KIYEOK" -> "RIEUL-KIYEOK"
    out: Tuple[str, ...] = ()
    for letter in name.split("-"):
        out += _LETTER_PHONES.get(letter, ())
    return out


def _base(phone: str) -> str:
    """espeak phone label -> base: drop tense/palatal marks ('-', ';') and aspiration (kh -> k)."""
    b = phone.rstrip("-;")
    if len(b) > 1 and b.endswith("h"):
        b = b[:-1]
    return b


def phone_class(phone: str) -> str:
    if phone == SIL:
        return "sil"
    b = phone.rstrip("-;")
    if not b:
        return "mod"  # a bare palatalisation mark
    if b[0] in "aeiouE@":
        return "vowel"
    if b in ("j", "w"):
        return "glide"
    return "cons"


def pair_cost(tok: str, phone: str) -> float:
    cls = phone_class(phone)
    if tok == SPACE or tok in PUNCT_TOKENS:
        return 0.0 if cls == "sil" else 3.0
    if cls == "sil":
        return 1.0
    if tok in VOWELS:
        if cls in ("vowel", "glide"):
            return 0.0 if phone.rstrip(":") in _VOWEL_PHONES[tok] else 0.3
        return 0.5 if cls == "mod" else 2.0
    # consonant jamo
    if cls == "mod":
        return 0.2
    if cls != "cons":
        return 2.0
    return 0.0 if _base(phone) in _consonant_phones(tok) else 0.5


def empty_cost(tok: str) -> float:
    if tok == SPACE or tok == "ᄋ":  # no pause between words; the silent initial ㅇ
        return 0.0
    if tok in PUNCT_TOKENS:
        return 0.5 if tok == PAUSE else 0.3
    if tok in VOWELS:
        return 2.0
    return 1.0  # a consonant espeak dropped (cluster simplification, ㅎ deletion)


def align(tokens: Sequence[str], phones: Sequence[str]) -> Tuple[List[Tuple[int, int]], float]:
    """Monotonic assignment of phones to tokens: [(first phone, end phone)) per token, total cost."""
    n, m = len(tokens), len(phones)
    inf = float("inf")
    cost = [[inf] * (m + 1) for _ in range(n + 1)]
    back = [[0] * (m + 1) for _ in range(n + 1)]
    cost[0][0] = 0.0
    for i in range(1, n + 1):
        tok = tokens[i - 1]
        e = empty_cost(tok)
        pc = [pair_cost(tok, p) for p in phones]
        row, prev = cost[i], cost[i - 1]
        for j in range(m + 1):
            best, arg = prev[j] + e, j
            acc = 0.0
            for k in range(j - 1, max(-1, j - MAX_PHONES - 1), -1):  # token takes phones k..j-1
                acc += pc[k]
                c = prev[k] + acc
                if c < best:
                    best, arg = c, k
            row[j], back[i][j] = best, arg
    if cost[n][m] == inf:
        raise ValueError(f"cannot align {n} tokens to {m} phones (more than {MAX_PHONES} phones per token)")
    spans: List[Tuple[int, int]] = [(0, 0)] * n
    j = m
    for i in range(n, 0, -1):
        k = back[i][j]
        spans[i - 1] = (k, j)
        j = k
    return spans, cost[n][m]


def token_frames(tokens: Sequence[str], ctm: Sequence[Tuple[float, float, str]], num_frames: int,
                 sample_rate: int, hop: int) -> Tuple[List[int], float]:
    """Frames per token from CTM rows (start_s, dur_s, phone) in time order; (durations, alignment cost).
    The leading silence (before the first token's phones) is part of the first token."""
    if not tokens:
        raise ValueError("no tokens")
    phones = [p for _, _, p in ctm]
    spans, total = align(tokens, phones)
    end = ctm[-1][0] + ctm[-1][1] if ctm else 0.0
    # the CTM tiles the utterance, so a token starts where its first phone (or, if it has none, the next
    # token's first phone) starts
    bounds = [ctm[k][0] if k < len(ctm) else end for k, _ in spans[1:]]
    return to_frames(bounds, num_frames, sample_rate, hop), total


def to_frames(bounds_s: Sequence[float], num_frames: int, sample_rate: int, hop: int) -> List[int]:
    """Frames per span between consecutive boundaries (seconds; the first span starts at frame 0, the last ends at
    NUM_FRAMES): each inner boundary rounded to the nearest frame, so they sum to NUM_FRAMES."""
    frames = [0] + [min(num_frames, max(0, round(b * sample_rate / hop))) for b in bounds_s] + [num_frames]
    for i in range(1, len(frames)):  # rounding never reorders, but keep the guarantee explicit
        frames[i] = max(frames[i], frames[i - 1])
    return [b - a for a, b in zip(frames, frames[1:])]


def event_frames(tokens: Sequence[str], ctm: Sequence[Tuple[float, float, str]], num_frames: int,
                 sample_rate: int, hop: int) -> List[int]:
    """Frames per espeak-ng phoneme token: token i is CTM row i (ValueError naming the first difference when the
    labels are not the tokens, e.g. text_phn made by another front end or voice than the audio)."""
    labels = [p for _, _, p in ctm]
    if list(tokens) != labels:
        i = next((k for k, (a, b) in enumerate(zip(tokens, labels)) if a != b), min(len(tokens), len(labels)))
        raise ValueError(f"the tokens are not the phone events: {len(tokens)} tokens, {len(labels)} phones, first "
                         f"difference at {i + 1} ({' '.join(tokens[i:i + 3]) or 'end'} vs "
                         f"{' '.join(labels[i:i + 3]) or 'end'}); make text_phn with --token-type espeak")
    return to_frames([start for start, _, _ in ctm[1:]], num_frames, sample_rate, hop)
