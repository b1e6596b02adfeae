"""Decoding of the Fearless Steps SAD recipe (stage 5, `local_models.bin.sad_decode`): a detector over every
recording of a data dir, writing 10 ms frame scores, the recordings' durations and the real-time factor."""
from __future__ import annotations

import json
import time
from pathlib import Path

import torch
from tqdm import tqdm

from local_models.common.audio import AudioError, iter_utterances
from local_models.common.datadir import atomic_open, read_table, write_table
from local_models.common.features import shard_writer

from .detectors import NEURAL_SYSTEMS, Detector, get_detector


def make_detector(system: str, device: torch.device, model_dir: str = "", model_file: str = "") -> Detector:
    """The detector of SYSTEM; a neural one's net on DEVICE (from MODEL_DIR / MODEL_FILE when given).
    Raises TypeError when MODEL_DIR is given to a system without a model."""
    opts = dict(device=str(device), model_file=model_file) if system in NEURAL_SYSTEMS else {}
    return get_detector(system, **opts, **({"model_dir": model_dir} if model_dir else {}))


def decode_data_dir(detector: Detector, system: str, data_dir, out_dir, sample_rate: int, device: torch.device):
    """Frame scores of every recording of DATA_DIR -> OUT_DIR/scores.{ark,scp}, OUT_DIR/reco2dur, OUT_DIR/rtf.json.
    Returns (audio seconds, processing seconds). Raises DataDirError / AudioError / ValueError / OSError."""
    out = Path(out_dir)
    audio_s = proc_s = 0.0
    durations = {}
    n = len(read_table(Path(data_dir) / "wav.scp"))
    with shard_writer(out / "scores") as scores:
        for rec, wave, sr in tqdm(iter_utterances(data_dir, sample_rate), total=n,
                                  desc=f"sad_decode {system}", disable=None, mininterval=5):
            if wave.size == 0:
                raise AudioError(f"{data_dir}/wav.scp: '{rec}' has no samples")
            t0 = time.perf_counter()
            frame_scores = detector.scores(wave, sr)
            # the decision (threshold + HMM Viterbi / median / segment OR) is part of a system's cost:
            # timed here at the default threshold; the tuned one is applied by sad_segments
            detector.decide(frame_scores)
            proc_s += time.perf_counter() - t0
            scores[rec] = frame_scores.reshape(-1, 1)
            audio_s += len(wave) / sr
            durations[rec] = f"{len(wave) / sr:.3f}"
    write_table(out / "reco2dur", durations)
    with atomic_open(out / "rtf.json") as f:
        json.dump({"system": system, "audio_s": audio_s, "proc_s": proc_s, "rtf": proc_s / audio_s,
                   "threads": torch.get_num_threads(), "device": str(device)}, f, indent=1)
    return audio_s, proc_s
