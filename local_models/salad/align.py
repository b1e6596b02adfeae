"""Phone times for a recording that has only a transcript: render the text with espeak-ng (whose phone events
are exact for its own audio), align the rendition to the recording by DTW over MFCCs, and carry every phone
boundary across the alignment path. The front end then aligns its phones to the carried espeak phones
(`frontend.label_text`), exactly as for the mini corpus.

This is a synthesis-based aligner: good to ~1-2 frames of 10 ms on read speech of the same language, worse on
spontaneous speech or in noise. Corpora with real segmentations should ship .lab files instead.
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np

HOP_S = 0.01  # DTW frame step: 10 ms keeps a 30 s utterance at 3000 x 3000 cells


def _mfcc(wave: np.ndarray, sr: int) -> np.ndarray:
    """(T, 19) per-utterance mean/variance-normalised MFCCs c1..c19 (c0, the level, differs between voices)."""
    import librosa

    hop = int(round(HOP_S * sr))
    m = librosa.feature.mfcc(y=np.asarray(wave, dtype=np.float32), sr=sr, n_mfcc=20, n_fft=int(0.025 * sr),
                             hop_length=hop, center=True)[1:].T
    return (m - m.mean(0)) / (m.std(0) + 1e-8)


def warp_events(events: Sequence[Tuple[str, int, int]], source: np.ndarray, target: np.ndarray,
                sr: int) -> List[Tuple[str, int, int]]:
    """Phone segments of `source` (samples) mapped onto `target` along the DTW path of their MFCCs.

    The result tiles [0, len(target)); a phone squeezed to nothing keeps one sample so that none disappears."""
    from scipy.spatial.distance import cdist

    from local_models.common.mcd import dtw_path

    a, b = _mfcc(source, sr), _mfcc(target, sr)
    path = dtw_path(cdist(a, b))
    first = np.full(len(a), -1)
    for i, j in path:  # first target frame each source frame meets
        if first[i] < 0:
            first[i] = j
    hop = int(round(HOP_S * sr))
    n = len(target)
    starts = [0]
    for _, s, _ in events[1:]:
        frame = min(int(round(s / hop)), len(a) - 1)
        starts.append(int(np.clip(first[frame] * hop, starts[-1] + 1, n - 1)))
    ends = starts[1:] + [n]
    if any(e <= s for s, e in zip(starts, ends)):
        raise ValueError(f"{len(events)} phones do not fit a {n}-sample recording")
    return [(lab, s, e) for (lab, _, _), s, e in zip(events, starts, ends)]


def label_recording(text: str, wave: np.ndarray, sr: int, voice=None):
    """frontend.label_text's result for a recording of `text` (any speaker) through an espeak-ng rendition."""
    from local_models.common.synth import Voice, synthesize

    from . import frontend

    rendition = synthesize(text, voice or Voice("es"), sample_rate=sr)
    events = warp_events(rendition.phones, rendition.wave.astype(np.float32) / 32768.0, wave, sr)
    return frontend.label_text(text, events, sr)
