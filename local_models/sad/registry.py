"""The SAD systems by name: the reference detectors (detectors.py), the statistical SAD (statistical.py) and the
neural systems (neural.py), for the command line (`DETECTORS`, `NEURAL_SYSTEMS`), the pack stage and inference
(`detector_class`, `get_detector`). Kept apart from detectors.py, whose `Detector` base the other two build on."""
from __future__ import annotations

from typing import Dict, Type

from .detectors import Detector, EnergyDetector, SileroDetector, WebrtcDetector
from .neural import NEURAL
from .statistical import StatisticalSAD

NEURAL_SYSTEMS = ("cnn_hmm", "cnn_median", "rnn_hmm", "rnn_median", "seg_rnn", "majority_vote")
DETECTORS = ("energy", "webrtcvad", "silero_vad", "stat_sad") + NEURAL_SYSTEMS

_CLASSES: Dict[str, Type[Detector]] = {
    d.name: d for d in (EnergyDetector, WebrtcDetector, SileroDetector, StatisticalSAD, *NEURAL)}


def detector_class(name: str) -> Type[Detector]:
    if name not in _CLASSES:
        raise ValueError(f"unknown SAD system '{name}'; known: {', '.join(sorted(_CLASSES))}")
    return _CLASSES[name]


def get_detector(name: str, **kwargs) -> Detector:
    return detector_class(name)(**kwargs)
