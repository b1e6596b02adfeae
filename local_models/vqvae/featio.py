"""Frame-level features or codes for evaluation: kaldiio scp / ark, or a directory of ``<utt>.npy``."""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Dict, Iterator, Union

import numpy as np


class NpyDir(Mapping):
    """Read-only {utt: array} over ``<dir>/<utt>.npy``; files are loaded on access."""

    def __init__(self, directory: Union[str, os.PathLike]):
        self.directory = Path(directory)
        self._paths = {p.stem: p for p in sorted(self.directory.glob("*.npy"))}
        if not self._paths:
            raise FileNotFoundError(f"{self.directory}: no .npy files")

    def __getitem__(self, utt: str) -> np.ndarray:
        return np.load(self._paths[utt])

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


def load_features(path: Union[str, os.PathLike]) -> Mapping:
    """{utt: array} from a directory of .npy files, a kaldiio .scp (lazy) or an .ark file."""
    path = Path(path)
    if path.is_dir():
        return NpyDir(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such features file or directory")
    import kaldiio

    if path.suffix == ".scp":
        return kaldiio.load_scp(str(path))
    if path.suffix == ".ark":
        return dict(kaldiio.load_ark(str(path)))
    raise ValueError(f"{path}: features must be a directory of .npy files, a .scp or an .ark file")


def write_npy_dir(features: Mapping, directory: Union[str, os.PathLike], dtype=np.float32) -> Dict[str, Path]:
    """Write {utt: array} as ``<directory>/<utt>.npy``; returns the paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    out = {}
    for utt, feat in features.items():
        if "/" in utt or utt.startswith("."):
            raise ValueError(f"utterance id {utt!r} cannot be a file name")
        out[utt] = directory / f"{utt}.npy"
        np.save(out[utt], np.asarray(feat, dtype=dtype))
    return out


def read_utt_list(path, available: Mapping) -> list:
    """Utterance ids (first column; more columns allowed) of a list file, each checked against `available`."""
    from local_models.common.datadir import DataDirError, _line_of, read_table

    utts = list(read_table(path, allow_empty_value=True))
    for utt in utts:
        if utt not in available:
            raise DataDirError(path, _line_of(path, utt), f"'{utt}' is not among the {len(available)} utterances given")
    return utts
