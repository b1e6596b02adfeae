"""From frame scores to speech intervals: threshold tuning on a reference set, segments + RTTM."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Mapping

import kaldiio
import numpy as np

from local_models.common.datadir import read_table

from .detectors import SHIFT, Detector
from .labels import Intervals, to_intervals
from .metrics import score

PRIMARY_COLLAR = 0.5  # FS02 scorer default; thresholds are tuned on pooled DCF with this collar


def load_scores(decode_dir) -> Dict[str, np.ndarray]:
    return {k: np.asarray(v)[:, 0] for k, v in kaldiio.load_scp(str(Path(decode_dir) / "scores.scp")).items()}


def load_durations(decode_dir) -> Dict[str, float]:
    return {k: float(v) for k, v in read_table(Path(decode_dir) / "reco2dur").items()}


def detect(detector: Detector, scores: Mapping[str, np.ndarray], threshold: float) -> Dict[str, Intervals]:
    return {rec: to_intervals(detector.decide(s, threshold), SHIFT) for rec, s in scores.items()}


def sweep(detector: Detector, scores, durations, ref, thresholds: List[float], collar=PRIMARY_COLLAR) -> List[dict]:
    """Pooled DCF (and P/R/F1) for every threshold."""
    rows = []
    for th in thresholds:
        rates = score(ref, detect(detector, scores, th), durations, collar)["pooled"]
        rows.append({"threshold": th, **rates})
    return rows


def best_row(rows: List[dict]) -> dict:
    """The sweep row with the lowest pooled DCF (ties: the lower threshold)."""
    return min(rows, key=lambda r: (r["dcf"], r["threshold"]))


def best_threshold(rows: List[dict]) -> float:
    return best_row(rows)["threshold"]
