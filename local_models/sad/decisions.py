"""From frame scores to speech intervals: threshold tuning on a reference set, segments + RTTM
(stage 6, `local_models.bin.sad_segments`)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple

import kaldiio
import numpy as np

from local_models.common.datadir import DataDirError, atomic_open, read_table

from .detectors import SHIFT, Detector
from .events import load_events, robustness
from .labels import Intervals, check_covered, load_reference, to_intervals, write_rttm, write_segments
from .metrics import score

PRIMARY_COLLAR = 0.5  # FS02 scorer default; thresholds are tuned on pooled DCF with this collar
# The FA-bounded operating point: the lowest tuning-set DCF among the thresholds that call at most FA_BOUND of the
# time of each of FA_BOUND_KINDS speech there (the robustness goal's bound, met on the tuning set, not the test set).
# DCF weighs a miss 3x a false alarm, so its own best threshold lets much music and many tones through.
FA_BOUND, FA_BOUND_KINDS = 0.10, ("music", "tone")
FA_BOUND_SUFFIX = "_fa10"  # exp/<system>/threshold_fa10, DECODE_DIR/hyp_fa10.rttm


def bounded_path(threshold_file) -> Path:
    """Where the FA-bounded threshold lives beside THRESHOLD_FILE (exp/<system>/threshold -> threshold_fa10)."""
    return Path(f"{threshold_file}{FA_BOUND_SUFFIX}")


def read_threshold_file(path) -> Optional[float]:
    """The threshold in PATH (one number), or None when PATH does not exist."""
    path = Path(path)
    if not path.is_file():
        return None
    text = path.read_text()
    try:
        return float(text.strip())
    except ValueError:
        raise ValueError(f"{path}: not a threshold ({text[:40]!r})") from None


def load_scores(decode_dir) -> Dict[str, np.ndarray]:
    return {k: np.asarray(v)[:, 0] for k, v in kaldiio.load_scp(str(Path(decode_dir) / "scores.scp")).items()}


def load_durations(decode_dir) -> Dict[str, float]:
    return {k: float(v) for k, v in read_table(Path(decode_dir) / "reco2dur").items()}


def detect(detector: Detector, scores: Mapping[str, np.ndarray], threshold: float) -> Dict[str, Intervals]:
    return {rec: to_intervals(detector.decide(s, threshold), SHIFT) for rec, s in scores.items()}


def sweep(detector: Detector, scores, durations, ref, thresholds: List[float], collar=PRIMARY_COLLAR,
          events=None) -> List[dict]:
    """Pooled DCF (and P/R/F1) for every threshold; with EVENTS (the set's events table) also the false-alarm
    share of each kind of non-speech ('fa', no collar: events.robustness)."""
    rows = []
    for th in thresholds:
        hyp = detect(detector, scores, th)
        row = {"threshold": th, **score(ref, hyp, durations, collar)["pooled"]}
        if events:
            row["fa"] = robustness(ref, hyp, durations, events)["fa"]
        rows.append(row)
    return rows


def best_row(rows: List[dict]) -> dict:
    """The sweep row with the lowest pooled DCF (ties: the lower threshold)."""
    return min(rows, key=lambda r: (r["dcf"], r["threshold"]))


def best_threshold(rows: List[dict]) -> float:
    return best_row(rows)["threshold"]


def measured_kinds(rows: List[dict], kinds=FA_BOUND_KINDS) -> Tuple[str, ...]:
    """Those of KINDS the sweep measured false alarms on (the ones the tuning set's events table holds)."""
    return tuple(k for k in kinds if rows and all(k in r.get("fa", {}) for r in rows))


def fa_bounded_row(rows: List[dict], kinds=FA_BOUND_KINDS, bound: float = FA_BOUND) -> Optional[dict]:
    """The lowest-DCF sweep row whose false-alarm share is at most BOUND on each of KINDS that the sweep measured
    (measured_kinds: a tuning set without tones bounds its music alone, and says so); None when it measured none of
    them (no events table) or no threshold keeps within the bound."""
    bounded = measured_kinds(rows, kinds)
    ok = [r for r in rows if bounded and all(r["fa"][k] <= bound for k in bounded)]
    return best_row(ok) if ok else None


def tune_threshold(detector: Detector, system: str, decode_dir, data_dir, threshold_file) -> None:
    """Sweep DETECTOR's thresholds on DECODE_DIR against DATA_DIR's reference; write the lowest pooled DCF's
    threshold to THRESHOLD_FILE, the FA-bounded one (fa_bounded_row, when DATA_DIR has an events table and a
    threshold qualifies; else none) to THRESHOLD_FILE + FA_BOUND_SUFFIX, and the sweep to <THRESHOLD_FILE>.sweep.json."""
    ref = load_reference(data_dir)
    if not ref:
        raise DataDirError(data_dir, None, "no reference (ref.rttm or ref_segments) to tune on")
    durations = load_durations(decode_dir)
    check_covered(ref, durations, data_dir, "tune on it")
    rows = sweep(detector, load_scores(decode_dir), durations, ref, detector.sweep,
                 events=load_events(data_dir))
    bounded = fa_bounded_row(rows)
    with atomic_open(f"{threshold_file}.sweep.json") as f:
        kinds = measured_kinds(rows)
        json.dump({"system": system, "collar": PRIMARY_COLLAR, "rows": rows,
                   "fa_bound": {"kinds": list(kinds), "not_measured": [k for k in FA_BOUND_KINDS if k not in kinds],
                                "bound": FA_BOUND, "threshold": bounded and bounded["threshold"]}}, f, indent=1)
    with atomic_open(threshold_file) as f:
        f.write(f"{best_threshold(rows)}\n")
    bounded_file = bounded_path(threshold_file)
    if bounded is None:
        bounded_file.unlink(missing_ok=True)  # an earlier tuning's point must not outlive this one
    else:
        with atomic_open(bounded_file) as f:
            f.write(f"{bounded['threshold']}\n")


def write_detections(detector: Detector, threshold: float, decode_dirs, bounded: Optional[float] = None) -> None:
    """DECODE_DIR/segments and DECODE_DIR/hyp.rttm of every decode dir, at THRESHOLD; hyp_fa10.rttm at BOUNDED, the
    FA-bounded threshold (removed when there is none)."""
    for d in decode_dirs:
        scores = load_scores(d)
        speech = detect(detector, scores, threshold)
        write_segments(Path(d) / "segments", speech)
        write_rttm(Path(d) / "hyp.rttm", speech)
        bounded_rttm = Path(d) / f"hyp{FA_BOUND_SUFFIX}.rttm"
        if bounded is None:
            bounded_rttm.unlink(missing_ok=True)
        else:
            write_rttm(bounded_rttm, detect(detector, scores, bounded))
