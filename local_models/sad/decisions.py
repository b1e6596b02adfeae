"""From frame scores to speech intervals: threshold tuning on a reference set, segments + RTTM
(stage 6, `local_models.bin.sad_segments`)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Mapping

import kaldiio
import numpy as np

from local_models.common.datadir import DataDirError, atomic_open, read_table

from .detectors import SHIFT, Detector
from .labels import Intervals, load_reference, to_intervals, write_rttm, write_segments
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


def tune_threshold(detector: Detector, system: str, decode_dir, data_dir, threshold_file) -> None:
    """Sweep DETECTOR's thresholds on DECODE_DIR against DATA_DIR's reference; write the lowest pooled DCF's
    threshold to THRESHOLD_FILE and the sweep to <THRESHOLD_FILE>.sweep.json."""
    ref = load_reference(data_dir)
    if not ref:
        raise DataDirError(data_dir, None, "no reference (ref.rttm or ref_segments) to tune on")
    rows = sweep(detector, load_scores(decode_dir), load_durations(decode_dir), ref, detector.sweep)
    with atomic_open(f"{threshold_file}.sweep.json") as f:
        json.dump({"system": system, "collar": PRIMARY_COLLAR, "rows": rows}, f, indent=1)
    with atomic_open(threshold_file) as f:
        f.write(f"{best_threshold(rows)}\n")


def write_detections(detector: Detector, threshold: float, decode_dirs) -> None:
    """DECODE_DIR/segments and DECODE_DIR/hyp.rttm of every decode dir, at THRESHOLD."""
    for d in decode_dirs:
        speech = detect(detector, load_scores(d), threshold)
        write_segments(Path(d) / "segments", speech)
        write_rttm(Path(d) / "hyp.rttm", speech)
