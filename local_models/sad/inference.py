"""Inference of the Fearless Steps SAD systems.

* `SpeechSegmenter`: a packed system (or a recipe's exp/<system> dir) on a user's audio, any sample rate:
  `seg = SpeechSegmenter.from_pretrained("exp/cnn_hmm/packed/model.tar.gz")`; `seg("rec.wav")` -> [(start_s, end_s)];
  `seg.iter_segments("long.wav", chunk_s=60)` -> the same, chunk by chunk in bounded memory (streaming.py).
* `decode_data_dir` (stage 5, `local_models.bin.sad_decode`): a detector over every recording of a data dir,
  writing 10 ms frame scores, the recordings' durations and the real-time factor.

On the CPU a SpeechSegmenter runs its nets in numpy (neural.NumpyNet) and imports neither torch nor librosa, numba,
scipy.signal or ESPnet's training code (issue #52: the shipped model loads in under a second and 300 MB;
tests/test_sad_lean_load.py checks what gets imported, benchmarks/startup.py times it); torch comes in only for a
GPU. Audio that is not at 8 kHz is resampled as the recipe's data preparation resamples it (scipy's resample_poly),
whole or block by block, by common.audio.PolyphaseResampler: the nets hear what they were trained and tuned on
(soxr's filter, used before, moved 2.7 % of dev frames and the dev DCF from 7.81 to 8.17 %).
"""
from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

import numpy as np
import yaml
from tqdm import tqdm

from local_models.common.audio import (AudioError, checked_blocks, iter_audio_blocks, iter_utterances, polyphase,
                                       read_audio, with_last)
from local_models.common.datadir import atomic_open, read_table, write_table
from local_models.common.features import shard_writer
from local_models.common.pack import PackedModel, load_model
from local_models.common.results import cpu_load

from . import streaming
from .detectors import SHIFT, Detector
from .labels import to_intervals, write_rttm, write_segments
from .neural import NeuralDetector, load_net_files
from .pack import describe, exp_files
from .registry import detector_class, get_detector
from .statistical import StatConfig, StatisticalSAD
from .systems import NEURAL_SYSTEMS, VOTE, base_system

Segment = Tuple[float, float]


def make_detector(system: str, device: "torch.device", model_dir: str = "", model_file: str = "") -> Detector:
    """The detector of SYSTEM; a neural one's net on DEVICE (from MODEL_DIR / MODEL_FILE when given).
    Raises TypeError when MODEL_DIR is given to a system without a model."""
    opts = dict(device=str(device), model_file=model_file) if system in NEURAL_SYSTEMS else {}
    return get_detector(system, **opts, **({"model_dir": model_dir} if model_dir else {}))


def decode_data_dir(detector: Detector, system: str, data_dir, out_dir, sample_rate: int, device: "torch.device"):
    """Frame scores of every recording of DATA_DIR -> OUT_DIR/scores.{ark,scp}, OUT_DIR/reco2dur, OUT_DIR/rtf.json.
    Returns (audio seconds, processing seconds). Raises DataDirError / AudioError / ValueError / OSError.
    rtf.json's "threads": torch's thread count when a detector runs in torch, else 1 (sad_decode pins numpy's BLAS
    to one thread)."""
    out = Path(out_dir)
    audio_s = proc_s = 0.0
    durations = {}
    n = len(read_table(Path(data_dir) / "wav.scp"))
    load = cpu_load()  # before timing: whether other work shared the CPU
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
                   "threads": torch_threads(), "device": str(device), **load}, f, indent=1)
    return audio_s, proc_s


def torch_threads() -> int:
    """torch's intra-op threads if a detector imported torch (silero-vad, a net on a GPU), else 1 (numpy)."""
    torch = sys.modules.get("torch")
    return torch.get_num_threads() if torch is not None else 1


# ----------------------------------------------------------------------------- a user's audio
def torch_device(device) -> "torch.device":
    """DEVICE as a torch.device; ValueError when it names a GPU this machine does not have."""
    import torch

    try:
        dev = torch.device(device)
    except RuntimeError as e:
        raise ValueError(f"device '{device}': {e}") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device '{device}': torch sees no CUDA GPU here (use --device cpu)")
    return dev


def check_device(device) -> str:
    """DEVICE as a string: "cpu" as it is (the nets then run in numpy: no torch import), any other one checked by
    torch_device (ValueError when it names a GPU this machine does not have)."""
    return "cpu" if str(device) == "cpu" else str(torch_device(device))


def build_members(spec: dict, model: PackedModel, device: str) -> List[Tuple[Detector, float]]:
    """(detector, threshold) of every member of the system SPEC describes (one, or majority_vote's three); the nets
    in numpy on the CPU, in torch on a GPU."""
    if spec["kind"] == "stat_sad":
        return [(StatisticalSAD(StatConfig(**spec["stat_config"]), threshold=spec["threshold"]), spec["threshold"])]
    members = []
    engine = "numpy" if device == "cpu" else "torch"
    for m in spec["members"]:
        net = load_net_files(model.file(m["config"]), model.file(m["model_file"]), device, engine)
        cls = detector_class(base_system(m["system"]))
        det = cls(threshold=m["threshold"], smoothing=m["smoothing"], median_s=m["median_s"], device=str(device),
                  hmm_states=m["hmm_states"], hmm_stay=m["hmm_stay"], _net=net,
                  viterbi="numpy" if engine == "numpy" else "librosa")  # numpy: no numba / librosa to load
        members.append((det, m["threshold"]))
    return members


OPERATING_POINTS = ("dcf", "fa_bounded")


def at_operating_point(spec: dict, point: str) -> dict:
    """SPEC deciding at POINT: 'dcf' (the dev-tuned lowest-DCF threshold, as packed) or 'fa_bounded' (the lowest dev
    DCF that keeps music and tone false alarms, of the kinds dev has, within the bound on dev: fewer false alarms on
    music and tones, more misses)."""
    if point not in OPERATING_POINTS:
        raise ValueError(f"operating point '{point}': one of {', '.join(OPERATING_POINTS)}")
    if point == "dcf":
        return spec
    if spec["system"] == VOTE or len(spec.get("members", [None])) != 1:
        raise ValueError(f"{spec['system']}: the FA-bounded operating point is one threshold of one system; a vote's "
                         "members keep their DCF-tuned thresholds (use the dcf operating point)")
    th = spec.get("threshold_fa_bounded")
    if th is None:
        raise ValueError(f"{spec['system']}: this model has no FA-bounded threshold (stage 6 found none: its dev set "
                         "had no events table, no threshold kept within the bound, or the system is the majority vote, "
                         "or it was packed before the point existed); use the dcf operating point")
    return with_threshold(spec, th)


def with_threshold(spec: dict, th: float) -> dict:
    """SPEC of one system (not the vote) deciding at threshold TH."""
    out = {**spec, "threshold": float(th)}
    if "members" in spec:  # the one net's decision (stat_sad has no members)
        out["members"] = [{**spec["members"][0], "threshold": float(th)}]
    return out


FIRST_BLOCK_S = 1.0  # iter_segments' first block: the first region comes out early (issue #52: within 200 ms)
# a file this short is read in one block: the nets finish it within ~0.1 s on one thread, while growing blocks would
# make the BiGRU rerun its context at each one (RTF 0.0075 at 10 s against 0.0046 whole)
ONE_BLOCK_UP_TO_S = 15.0
STAT_FIRST_BLOCK_S = 20.0  # the statistical SAD's first block on a file longer than a chunk (first region within ~0.1 s)
SHIPPED = Path(__file__).resolve().parent / "pretrained" / "model.tar.gz"  # from_pretrained()'s default


class SpeechSegmenter:
    """Speech regions of a recording by one packed SAD system of egs/fearless_steps/sad1 (its net, dev-tuned
    threshold and decision: HMM / median filter / segment read-out / majority vote; or the statistical SAD).

    Audio at any sample rate is resampled to the systems' 8 kHz; channels are averaged. Frames are 10 ms; a frame
    whose samples are all digital silence (below -100 dBFS) is never speech (a silent file has no speech)."""

    sample_rate = streaming.SAMPLE_RATE
    frame_shift = SHIFT

    def __init__(self, members: Sequence[Tuple[Detector, float]], spec: dict, card: Optional[dict] = None,
                 context_s: Optional[float] = None, min_speech_ms: float = 0.0, min_silence_ms: float = 0.0,
                 speech_pad_ms: float = 0.0):
        self.members, self.spec, self.card = list(members), spec, dict(card or {})
        self.vote_threshold = spec["threshold"] if spec["system"] == VOTE else None
        self.context_s = context_s  # chunked decoding: context of the whole-recording detectors (None: streaming's)
        # silero-vad's region options (0: the recipe's regions as decided); streaming.SegmentTidier
        self.tidy = (min_speech_ms / 1000, min_silence_ms / 1000, speech_pad_ms / 1000)
        streaming.SegmentTidier(*self.tidy)  # a negative value is an error now, not at the first file

    @classmethod
    def from_pretrained(cls, path=None, device="cpu", operating_point: str = "dcf", threshold: Optional[float] = None,
                        **kwargs) -> "SpeechSegmenter":
        """PATH: a packed archive (exp/<system>/packed/model.tar.gz), an unpacked one, or a recipe's exp/<system>;
        None: the model shipped with the package (SHIPPED). OPERATING_POINT: at_operating_point; THRESHOLD: the
        decision threshold instead of the tuned one (not for the majority vote); KWARGS: __init__'s (context_s,
        min_speech_ms, min_silence_ms, speech_pad_ms)."""
        device = check_device(device)  # before any work
        if path is None:
            if not SHIPPED.is_file():
                raise FileNotFoundError(f"no SAD model is shipped in this install ({SHIPPED}): give a model path")
            path = SHIPPED
        model = load_model(path, paper="sad", exp_resolver=exp_files)
        if "decision" in model.files:
            spec = yaml.safe_load(model.file("decision").read_text(encoding="utf-8"))
        else:
            spec = describe(path)[0]
        spec = at_operating_point(spec, operating_point)
        if threshold is not None:
            if spec["system"] == VOTE:
                raise ValueError("a threshold is not an option of the majority vote (its members keep theirs)")
            spec = with_threshold(spec, threshold)
        return cls(build_members(spec, model, device), spec, model.card, **kwargs)

    @property
    def system(self) -> str:
        return self.spec["system"]

    @property
    def threshold(self) -> float:
        return self.spec["threshold"]

    # -- whole recording ---------------------------------------------------------------------------
    def read(self, audio, sample_rate: Optional[int] = None) -> np.ndarray:
        """AUDIO (a path, an (array, rate) pair, or an array with SAMPLE_RATE) -> mono float32 at 8 kHz."""
        if sample_rate is not None:
            audio = (audio, sample_rate)
        elif isinstance(audio, np.ndarray):
            raise ValueError("an array needs its sample_rate")
        wave, rate = read_audio(audio, allow_silent=True)
        return polyphase(wave, rate, self.sample_rate)  # resample_poly's result, without loading scipy.signal

    def frame_scores(self, audio, sample_rate: Optional[int] = None) -> np.ndarray:
        """One score per 10 ms frame: the net's speech posterior (stat_sad: its 0/1 decision; majority_vote: the
        members' votes), before the system's decision."""
        wave = self.read(audio, sample_rate)
        if self.vote_threshold is None:
            return self.members[0][0].scores(wave, self.sample_rate)
        return self._votes(wave)

    def _votes(self, wave) -> np.ndarray:
        return sum(det.decide(det.scores(wave, self.sample_rate), th).astype(np.float32) for det, th in self.members)

    def frame_decisions(self, audio, sample_rate: Optional[int] = None) -> np.ndarray:
        """(frames,) bool: speech per 10 ms frame, as the recipe decides (stage 6) at the tuned threshold."""
        return self._decide(self.read(audio, sample_rate))

    def _decide(self, wave) -> np.ndarray:
        if self.vote_threshold is None:
            det, th = self.members[0]
            d = det.decide(det.scores(wave, self.sample_rate), th)
        else:
            d = self._votes(wave) > self.vote_threshold
        return d & ~streaming.silent_frames(wave, len(d))

    def __call__(self, audio, sample_rate: Optional[int] = None) -> List[Segment]:
        """Speech regions [(start_s, end_s), ...] of AUDIO, in one pass over the whole recording."""
        wave = self.read(audio, sample_rate)
        segs = [(float(a), float(b)) for a, b in to_intervals(self._decide(wave), SHIFT)]
        if segs:  # the last frame may reach past the end
            segs[-1] = (segs[-1][0], min(segs[-1][1], len(wave) / self.sample_rate))
        return streaming.SegmentTidier(*self.tidy).apply(segs, len(wave) / self.sample_rate)

    # -- chunk by chunk ----------------------------------------------------------------------------
    def _stream(self):
        streams = [streaming.decision_stream(det, th, self.context_s) for det, th in self.members]
        return streams[0] if self.vote_threshold is None else streaming.VoteStream(streams, self.vote_threshold)

    def _first_block_s(self, total: Optional[float], chunk_s: float) -> Optional[float]:
        """iter_segments' first block (growing 1.5x until the first region is out; None: CHUNK_S from the start):
        FIRST_BLOCK_S for the nets; STAT_FIRST_BLOCK_S for the statistical SAD on a file longer than a chunk (its
        60 s chunk plus 10 s of context took ~0.2 s on one thread before the first region; a file of one chunk stays
        one block, equal to the whole call); a file of at most ONE_BLOCK_UP_TO_S: one block."""
        if total is not None and total <= ONE_BLOCK_UP_TO_S:
            return None
        if all(isinstance(det, NeuralDetector) for det, _ in self.members):
            return min(chunk_s, FIRST_BLOCK_S)
        return min(chunk_s, STAT_FIRST_BLOCK_S) if total is None or total > chunk_s else None

    def iter_segments(self, path, chunk_s: float = 60.0, progress: bool = False) -> Iterator[Segment]:
        """The speech regions of the audio file PATH (hours long is fine), each yielded as soon as its end is
        decided. The nets read blocks of FIRST_BLOCK_S seconds growing 1.5x until the first region is out (within
        about 0.1 s on one thread, whatever the file's length), then CHUNK_S at a time (a file of at most
        ONE_BLOCK_UP_TO_S seconds: one block, or CHUNK_S ones); the statistical SAD, which
        fits its models to what it sees, reads a file of one chunk whole and a longer one from STAT_FIRST_BLOCK_S
        seconds growing the same way (_first_block_s). Memory: a chunk plus its context.
        The result equals __call__'s for the CNN and segment-RNN systems, and for the statistical SAD on a file of
        one chunk; the BiGRU sees `context_s` (40 s: streaming.RNN_CONTEXT_S) around each block instead of the whole
        recording (the shipped one's decisions were the whole-file ones on the real dev set; not guaranteed),
        the statistical SAD `context_s` (10 s) around each chunk of a longer file (nearly equal). Silence and
        clipping are judged on the whole file, as __call__ judges them (common.audio.checked_blocks)."""
        if not chunk_s > 0:
            raise ValueError(f"chunk_s must be positive, got {chunk_s}")
        import soundfile

        name = str(path)
        stream, mask, segments = self._stream(), streaming.SilenceMask(), streaming.SegmentBuilder(SHIFT)
        tidy = streaming.SegmentTidier(*self.tidy)
        n = 0
        try:
            total = round(soundfile.info(name).duration, 1)
        except (RuntimeError, soundfile.LibsndfileError):
            total = None  # iter_audio_blocks names the problem
        answered = [False]  # smaller blocks until the first region is out, then whole chunks
        blocks = with_last(checked_blocks(
            iter_audio_blocks(path, self.sample_rate, chunk_s, first_s=self._first_block_s(total, chunk_s),
                              full_now=lambda: answered[0]), name, self.sample_rate, allow_silent=True))
        with tqdm(total=total, desc=Path(name).name, unit="s", disable=None if progress else True, leave=False) as bar:
            for block, last in blocks:
                n += len(block)
                bar.update(round(len(block) / self.sample_rate, 1))
                mask.push(block, final=last)
                out = tidy.feed(segments.feed(mask.apply(stream.push(block, final=last))))
                out += tidy.advance(segments.quiet_until)  # not past a region still open
                answered[0] = answered[0] or bool(out)
                yield from out
        yield from tidy.feed(segments.close(n / self.sample_rate))
        yield from tidy.close(n / self.sample_rate)


# ----------------------------------------------------------------------------- files (speech-segments)
def recording_ids(paths: Sequence) -> List[str]:
    """The recording id of every file (its name without the suffix); ValueError when two files share one."""
    ids = [Path(p).stem for p in paths]
    seen = {}
    for p, rec in zip(paths, ids):
        if rec in seen:
            raise ValueError(f"{seen[rec]} and {p} would both be recording '{rec}' (rename one)")
        seen[rec] = p
    return ids


def segment_files(segmenter: SpeechSegmenter, paths: Sequence, recs: Sequence[str], chunk_s: float = 60.0):
    """{rec: [(start_s, end_s)]} of every file: chunk by chunk (CHUNK_S > 0, with a progress bar) or in one pass."""
    if chunk_s < 0:
        raise ValueError(f"--chunk_s must be >= 0, got {chunk_s}")
    return {rec: (list(segmenter.iter_segments(p, chunk_s, progress=True)) if chunk_s > 0 else segmenter(p))
            for p, rec in zip(paths, recs)}


def write_speech(speech: dict, rttm=None, segments=None, json_file=None, names: Optional[dict] = None) -> None:
    """{rec: segments} as an RTTM, a Kaldi segments file and / or JSON ({file name (NAMES[rec]): [[start, end]]}),
    each written atomically."""
    if rttm:
        write_rttm(rttm, speech)
    if segments:
        write_segments(segments, speech)
    if json_file:
        import json

        with atomic_open(json_file) as f:
            json.dump({(names or {}).get(rec, rec): [[round(a, 3), round(b, 3)] for a, b in segs]
                       for rec, segs in speech.items()}, f, indent=1)
            f.write("\n")
