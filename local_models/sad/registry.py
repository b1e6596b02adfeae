"""The detector class of each SAD system that systems.py names: the reference detectors (detectors.py), the
statistical SAD (statistical.py) and the neural systems (neural.py), for the pack stage, inference and the bin/ tools
(`detector_class`, `get_detector`). Kept apart from detectors.py, whose `Detector` base the other two build on."""
from __future__ import annotations

from typing import Dict, Type

from .detectors import Detector, EnergyDetector, SileroDetector, WebrtcDetector
from .neural import NEURAL
from .statistical import StatisticalSAD
from .systems import DETECTORS, UnknownSystem

_CLASSES: Dict[str, Type[Detector]] = {
    d.name: d for d in (EnergyDetector, WebrtcDetector, SileroDetector, StatisticalSAD, *NEURAL)}
if set(_CLASSES) != set(DETECTORS):
    raise ImportError(f"the SAD detector classes {sorted(_CLASSES)} and systems.DETECTORS {sorted(DETECTORS)} differ")


def detector_class(name: str) -> Type[Detector]:
    if name not in _CLASSES:
        raise UnknownSystem(f"unknown SAD system '{name}'; known: {', '.join(sorted(_CLASSES))}")
    return _CLASSES[name]


def get_detector(name: str, **kwargs) -> Detector:
    return detector_class(name)(**kwargs)
