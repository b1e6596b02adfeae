"""Linguistic input vectors of the SALAD recipe: HTS labels + question file -> per-phone and per-frame features.

Paper section 3.2: each phone's label becomes a vector of one-hot, binary and real values (362 dims in the
paper; conf/questions_es.hed gives 361), replicated for every frame of the phone's duration, with two more
dims: the phone's duration normalised to [0, 1] by the train-set maximum, and the frame's relative position
inside the phone. The real-valued dims (CQS questions, `numeric_dims`) are z-normalised by the caller with
train statistics.

    load_questions(path) -> Questions
    phone_features(labels, questions) -> (starts_s, ends_s, X (num_phones, D) float32)
    numeric_dims(questions) -> bool mask (D,)
    frame_durations(starts_s, ends_s, frame_shift_s, num_frames) -> frames per phone
    frame_features(X, starts_s, ends_s, frame_shift_s, num_frames, max_dur_frames=...) -> (T, D + 2) float32
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
    return Questions(path, binary, numeric, names)


def numeric_dims(questions: Questions) -> np.ndarray:
    """Boolean mask over the feature dims: True for the real-valued (CQS) ones, to be z-normalised."""
    return np.arange(questions.dim) >= len(questions.binary)


def phone_features(labels: Union[PathLike, Sequence[str]], questions: Questions
                   ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts_s, ends_s, X): phone times in seconds (NaN for untimed labels) and X float32 (num_phones, D),
    from a .lab path or a list of label lines."""
    from nnmnkwii.frontend import merlin as fe
    from nnmnkwii.io import hts

    lines: List[LabLine] = read_lab(labels) if isinstance(labels, (str, os.PathLike)) else parse_lab(labels)
    label_file = hts.HTSLabelFile().load(
        lines=[l.label if l.start is None else f"{l.start} {l.end} {l.label}" for l in lines])
    x = fe.linguistic_features(label_file, questions.binary, questions.numeric,
                               add_frame_features=False, subphone_features=None)
    starts = np.array([np.nan if l.start is None else l.start * 1e-7 for l in lines])
    ends = np.array([np.nan if l.end is None else l.end * 1e-7 for l in lines])
    return starts, ends, x.astype(np.float32)


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
    if not max_dur_frames > 0:
        raise ValueError(f"max_dur_frames must be positive, got {max_dur_frames}")
    owners = _frame_owners(ends_s, frame_shift_s, num_frames)
    durations = np.bincount(owners, minlength=len(x))
    first_frame = np.cumsum(durations) - durations
    dur = durations[owners].astype(np.float64)
    position = (np.arange(len(owners)) - first_frame[owners] + 0.5) / dur
    extra = np.stack([np.clip(dur / max_dur_frames, 0.0, 1.0), position], axis=1)
    return np.concatenate([x[owners], extra], axis=1).astype(np.float32)
