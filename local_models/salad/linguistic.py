"""Linguistic input vectors of the SALAD recipe: HTS labels + question file -> per-phone and per-frame features.

Paper section 3.2: each phone's label becomes a vector of one-hot, binary and real values (362 dims in the
paper; conf/questions_es.hed gives 361), replicated for every frame of the phone's duration, with two more
dims: the phone's duration normalised to [0, 1] by the train-set maximum, and the frame's relative position
inside the phone. The real-valued dims (CQS questions, `numeric_dims`) are z-normalised by the caller with
train statistics.

    load_questions(path) -> Questions
    phone_features(labels, questions) -> (starts_s, ends_s, X (num_phones, D) float32)
    numeric_dims(questions) -> bool mask (D,)
    phone_names(labels) -> the current phone of every label
    frame_durations(starts_s, ends_s, frame_shift_s, num_frames) -> frames per phone
    frame_features(X, starts_s, ends_s, frame_shift_s, num_frames, max_dur_frames=...) -> (T, D + 2) float32
    frames_from_durations(X, durations, max_dur_frames=...) -> the same from frames per phone (synthesis)
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from local_models.common.datadir import DataDirError, PathLike, iter_lines

from .frontend import LabLine, parse_lab, read_lab

# The line shapes nnmnkwii's parser understands (it splits on single spaces and braces).
_QUESTION = re.compile(r'(QS|CQS) "([^"\s]+)" \{([^{}\s]+)\}')
_CAPTURES = ("(\\d+)", "([\\d\\.]+)", "([-\\d]+)")  # the capture groups nnmnkwii keeps in CQS patterns


@dataclass(frozen=True)
class Questions:
    """A parsed question file: nnmnkwii's binary / numeric regex dicts and the question names in vector order
    (every QS in file order, then every CQS)."""

    path: str
    binary: dict
    numeric: dict
    names: Tuple[str, ...]
    matchers: Tuple[tuple, ...] = ()  # per QS: its patterns as (kind, literal or regex), see `_matcher`

    @property
    def dim(self) -> int:
        return len(self.names)


def _check_question_line(path: str, lineno: int, line: str, seen: Dict[str, int]) -> Tuple[str, str]:
    match = _QUESTION.fullmatch(line)
    if not match:
        raise DataDirError(path, lineno, f"expected 'QS \"name\" {{pattern,...}}' or 'CQS \"name\" {{pattern}}' "
                                         f"(single spaces, no spaces in patterns), got {line!r}")
    kind, name, patterns = match.groups()
    if name in seen:
        raise DataDirError(path, lineno, f"question '{name}' already defined on line {seen[name]}")
    seen[name] = lineno
    captures = sum(patterns.count(c) for c in _CAPTURES)
    if kind == "CQS" and ("," in patterns or captures != 1):
        raise DataDirError(path, lineno, f"CQS '{name}' needs one pattern with one capture group such as (\\d+)")
    if kind == "QS" and "(" in patterns:
        raise DataDirError(path, lineno, f"QS '{name}' has a capture group: use CQS for numeric questions")
    return kind, name


def load_questions(path: PathLike) -> Questions:
    """Parse an HTS question file (QS / CQS lines, '#' comments, empty lines); errors name file and line."""
    from nnmnkwii.io import hts  # imported lazily: pulls in scipy

    path = str(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"question file {path} does not exist")
    seen: Dict[str, int] = {}
    kinds: List[Tuple[str, str]] = []
    for lineno, line in iter_lines(path):
        if line and not line.startswith("#"):
            kinds.append(_check_question_line(path, lineno, line, seen))
    if not kinds:
        raise DataDirError(path, None, "no QS / CQS questions")
    binary, numeric = hts.load_question_set(path)
    names = tuple(n for k, n in kinds if k == "QS") + tuple(n for k, n in kinds if k == "CQS")
    matchers = tuple(tuple(_matcher(r) for r in binary[i][1]) for i in range(len(binary)))
    return Questions(path, binary, numeric, names, matchers)


_REGEX_META = set(".^$*+?{}[]|()")


def _matcher(regex) -> tuple:
    """A QS pattern as nnmnkwii compiled it, as the cheapest exact test: ("start", text) for an anchored literal
    (LL-a: ^\\Aa\\^), ("in", text) for a literal anywhere (*-a+*: \\-a\\+), else ("re", regex). A substring test
    is what re.search does for a literal, without a regex call per phone and question (phone_features takes
    half nnmnkwii's time; tests/test_salad_frontend.py checks they agree)."""
    p, kind = regex.pattern, "in"
    for anchor in ("^\\A", "\\A", "^"):
        if p.startswith(anchor):
            p, kind = p[len(anchor):], "start"
            break
    text, i = [], 0
    while i < len(p):
        if p[i] == "\\":
            if i + 1 == len(p) or p[i + 1].isalnum() or p[i + 1] == "_":  # \d, \A, \b ...: a real regex
                return ("re", regex)
            text.append(p[i + 1])
            i += 2
        elif p[i] in _REGEX_META:
            return ("re", regex)
        else:
            text.append(p[i])
            i += 1
    return (kind, "".join(text))


def _binary_vector(matchers, label: str) -> List[int]:
    """nnmnkwii's pattern_matching_binary (1 when any pattern of the question matches) through `_matcher`s."""
    out = []
    for patterns in matchers:
        hit = 0
        for kind, m in patterns:
            if (m in label) if kind == "in" else label.startswith(m) if kind == "start" else m.search(label):
                hit = 1
                break
        out.append(hit)
    return out


def phone_names(labels: Union[PathLike, Sequence[str]]) -> List[str]:
    """The current phone (p3) of every label line of a .lab path or a list of label lines."""
    lines = read_lab(labels) if isinstance(labels, (str, os.PathLike)) else parse_lab(labels)
    return [line.label.split("-", 1)[1].split("+", 1)[0] for line in lines]


def numeric_dims(questions: Questions) -> np.ndarray:
    """Boolean mask over the feature dims: True for the real-valued (CQS) ones, to be z-normalised."""
    return np.arange(questions.dim) >= len(questions.binary)


def phone_features(labels: Union[PathLike, Sequence[str]], questions: Questions
                   ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts_s, ends_s, X): phone times in seconds (NaN for untimed labels) and X float32 (num_phones, D),
    from a .lab path or a list of label lines."""
    from nnmnkwii.frontend.merlin import pattern_matching_continous_position

    lines: List[LabLine] = read_lab(labels) if isinstance(labels, (str, os.PathLike)) else parse_lab(labels)
    # nnmnkwii's linguistic_features (phone-aligned, no frame features) row by row: QS answers, then CQS values
    x = np.zeros((len(lines), questions.dim), dtype=np.float32)
    nb = len(questions.binary)
    for i, line in enumerate(lines):
        x[i, :nb] = _binary_vector(questions.matchers, line.label)
        if questions.numeric:
            x[i, nb:] = pattern_matching_continous_position(questions.numeric, line.label)[0]
    starts = np.array([np.nan if l.start is None else l.start * 1e-7 for l in lines])
    ends = np.array([np.nan if l.end is None else l.end * 1e-7 for l in lines])
    return starts, ends, x


def _frame_owners(ends_s: np.ndarray, frame_shift_s: float, num_frames: Optional[int]) -> np.ndarray:
    """Phone index of every frame: the phone covering the frame's centre t * shift + shift / 2; frames past the
    last phone (num_frames longer than the labels) belong to the last phone."""
    ends_s = np.asarray(ends_s, dtype=np.float64)
    if len(ends_s) == 0 or not np.all(np.isfinite(ends_s)):
        raise ValueError("frame features need timed labels (no phones, or phones without times)")
    if np.any(np.diff(ends_s) <= 0):
        raise ValueError("phone end times must strictly increase")
    if frame_shift_s <= 0:
        raise ValueError(f"frame_shift_s must be positive, got {frame_shift_s}")
    if num_frames is None:
        num_frames = int(round(ends_s[-1] / frame_shift_s))
    if num_frames < 1:
        raise ValueError(f"need at least one frame, got num_frames={num_frames}")
    centres = (np.arange(num_frames) + 0.5) * frame_shift_s
    return np.minimum(np.searchsorted(ends_s, centres, side="right"), len(ends_s) - 1)


def frame_durations(starts_s: np.ndarray, ends_s: np.ndarray, frame_shift_s: float = 0.005,
                    num_frames: Optional[int] = None) -> np.ndarray:
    """Frames per phone as `frame_features` assigns them (a phone shorter than a frame may get 0); sums to
    num_frames (default: the label length in frames)."""
    owners = _frame_owners(ends_s, frame_shift_s, num_frames)
    return np.bincount(owners, minlength=len(starts_s))


def frame_features(x: np.ndarray, starts_s: np.ndarray, ends_s: np.ndarray, frame_shift_s: float = 0.005,
                   num_frames: Optional[int] = None, *, max_dur_frames: float) -> np.ndarray:
    """(T, D + 2) float32: each phone's vector repeated over its frames, plus (1) the phone's duration in frames
    / max_dur_frames (the train-set maximum), clipped to [0, 1], and (2) the frame's position in the phone,
    (k + 0.5) / duration."""
    x = np.asarray(x)
    if x.ndim != 2 or len(x) != len(starts_s) or len(x) != len(ends_s):
        raise ValueError(f"X has shape {x.shape} but there are {len(starts_s)} starts / {len(ends_s)} ends")
    owners = _frame_owners(ends_s, frame_shift_s, num_frames)
    return frames_from_durations(x, np.bincount(owners, minlength=len(x)), max_dur_frames=max_dur_frames)


def frames_from_durations(x: np.ndarray, durations: np.ndarray, *, max_dur_frames: float) -> np.ndarray:
    """`frame_features` from durations in frames (N,) instead of times: what synthesis with predicted durations
    feeds the acoustic model. A phone of 0 frames contributes none."""
    x, durations = np.asarray(x), np.asarray(durations)
    if x.ndim != 2 or durations.shape != (len(x),):
        raise ValueError(f"X has shape {x.shape} but durations have shape {durations.shape}")
    if not np.issubdtype(durations.dtype, np.integer) or np.any(durations < 0) or durations.sum() < 1:
        raise ValueError("durations must be non-negative integers (frames), at least one frame in all")
    if not max_dur_frames > 0:
        raise ValueError(f"max_dur_frames must be positive, got {max_dur_frames}")
    owners = np.repeat(np.arange(len(x)), durations)
    first_frame = np.cumsum(durations) - durations
    dur = durations[owners].astype(np.float64)
    position = (np.arange(len(owners)) - first_frame[owners] + 0.5) / dur
    extra = np.stack([np.clip(dur / max_dur_frames, 0.0, 1.0), position], axis=1)
    return np.concatenate([x[owners], extra], axis=1).astype(np.float32)
