"""Cross-check: the across-speaker, within-context ABX error computed by `zerospeech-libriabx2`.

zerospeech-libriabx2 (package `zrc_abx2`, the ZeroSpeech 2021 revision of libri-light's ABX) runs on
CPU, offline, from a directory of ``<file>.npy`` features and the same ``.item`` file. Its condition
``speaker_mode=across, context_mode=within, distance_mode=cosine`` computes the same cells, triplet
scores and DTW as `local_models.vqvae.abx`. Known differences, all small:

- frame selection: frames ceil(on/shift - 0.5) <= t < floor(off/shift - 0.5) (one frame fewer at
  the end than ABXpy's centre rule); `abx_error(..., rule="libri-light")` reproduces it;
- averaging: it pools contexts and X speakers in one mean per (speaker of A/B, A, B), where
  ZeroSpeech 2019 averages contexts first, then speaker pairs (same result when every cell exists);
- float32 distances (ties can break differently), and a 1e-12 extra feature dimension;
- by default it subsamples (at most 10 items per (context, phone, speaker) group, 5 X speakers per
  A/B); here both limits are lifted unless given, so that the comparison is exact.
"""
from __future__ import annotations

import contextlib
import io
import os
import tempfile
import warnings
from importlib import metadata
from typing import Mapping, Optional, Union

import numpy as np

from .featio import write_npy_dir

NO_LIMIT = 10 ** 9


def libriabx2_version() -> Optional[str]:
    """Installed zerospeech-libriabx2 version, or None when it is not importable."""
    try:
        version = metadata.version("zerospeech-libriabx2")
        import zrc_abx2  # noqa: F401  (the Cython DTW must have been built)
        import libri_light_dtw  # noqa: F401
    except (metadata.PackageNotFoundError, ImportError):
        return None
    return version


def reference_abx_error(features: Mapping[str, np.ndarray], item_file: Union[str, os.PathLike],
                        frame_shift: float, max_size_group: Optional[int] = None,
                        max_x_across: Optional[int] = None, seed: int = 3459) -> float:
    """zerospeech-libriabx2's across-speaker within-context ABX error (%) of {file: (T, D)} features."""
    if libriabx2_version() is None:
        raise RuntimeError("zerospeech-libriabx2 is not installed (pip install zerospeech-libriabx2, "
                           "pinned in tools/requirements.txt)")
    import zrc_abx2

    with tempfile.TemporaryDirectory(prefix="libriabx2.") as tmp:
        write_npy_dir(features, tmp, dtype=np.float32)
        args = zrc_abx2.EvalArgs(
            path_data=tmp,
            path_item_file=str(item_file),
            file_extension=".npy",
            feature_size=frame_shift,
            cuda=False,
            speaker_mode="across",
            context_mode="within",
            distance_mode="cosine",
            max_size_group=max_size_group or NO_LIMIT,
            max_x_across=max_x_across or NO_LIMIT,
            seed=seed,
            pooling="none",
        )
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = zrc_abx2.EvalABX().eval_abx(args)
    for r in results:
        if r["abx-s-condition"] == "across" and r["abx-c-condition"] == "within":
            return float(r["score"]) * 100.0
    raise RuntimeError(f"zerospeech-libriabx2 returned no across/within score: {results}")
