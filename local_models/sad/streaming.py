"""Chunked speech activity detection of long recordings in bounded memory (SpeechSegmenter.iter_segments), with the
decisions of one pass over the whole recording.

Three stages run chunk by chunk, each keeping only the state it needs:
1. frame scores on overlapping windows (`ScoreWindows`): a window is scored as if it were a recording and only
   frames `left` / `right` away from its edges are kept. The STFT (FFT 512 centred: 4 frames), the CNN front end
   (2 frames per block), the 1-D CNN's temporal convolutions and the segment RNN's segments (L frames on the
   recording's grid of shift S) see finitely far: with that much context the kept scores are the whole-recording
   ones (up to the float rounding of batched kernels). The BiGRU (rnn) and the statistical SAD (noise tracking,
   GMMs fitted per recording, Viterbi) see the whole recording: the BiGRU's forward direction carries its state from
   window to window (exact, `BiGRUWindows`) and its backward one gets `context_s` seconds past each window
   (RNN_CONTEXT_S); the statistical SAD gets STAT_CONTEXT_S on each side. Both come close, not equal
   (tests/test_sad_inference.py measures how close).
2. the decision: a threshold; the median filter (its half window kept from the last chunk, the newest half
   window waiting for the next one); the HMM Viterbi (`StreamingViterbi`: a frame is decided once the best paths
   into every state at the newest frame agree on it, the traceback coalescence of an online Viterbi; the lag is
   about the current segment, capped by `max_lag`; numpy, statistical.viterbi_forward). All three are exact.
3. runs of speech frames -> (start_s, end_s), each yielded once its end is decided (`SegmentBuilder`).
"""
from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from .detectors import SHIFT, n_frames
from .neural import NeuralDetector, NumpyNet, hmm_emissions, median_smooth, receptive_field, stft_magnitude
from .statistical import two_class_hmm, viterbi_forward

SAMPLE_RATE = 8000  # every packed system is an 8 kHz system
HOP = int(round(SHIFT * SAMPLE_RATE))  # samples per 10 ms frame
FEATURE_MARGIN = 4  # frames: the centred FFT of 512 samples reaches 256 samples = 3.2 frames to either side
EMPTY = np.zeros(0, dtype=bool)


# ----------------------------------------------------------------------------- the HMM, online
def _coalesced(ptr: np.ndarray, live: np.ndarray) -> Tuple[int, int]:
    """(k, state): the newest frame k (index into PTR's frames) where the traces back from every LIVE state of the
    newest frame meet, in STATE; (-1, 0) when they do not meet."""
    cur = np.asarray(live)
    for k in range(len(ptr) - 1, -1, -1):
        if (cur == cur[0]).all():
            return k, int(cur[0])
        if k > 0:
            cur = ptr[k, cur]
    return -1, 0


def _trace(ptr: np.ndarray, k: int, state: int) -> np.ndarray:
    """The states of frames 0..k of PTR on the path that is in STATE at frame k."""
    out = np.empty(k + 1, dtype=np.int64)
    out[k] = state
    for t in range(k, 0, -1):
        state = out[t - 1] = ptr[t, state]
    return out


class StreamingViterbi:
    """Viterbi decoding fed chunk by chunk: `push(log_emis)` returns the states of the frames decided so far (in
    order), `finish()` the rest. Their concatenation is common.viterbi.viterbi of the joined chunks (same values, same
    ties) unless no decision was possible for MAX_LAG frames: then the oldest half of them follows the best path of
    that moment (the only approximation; bounded memory: MAX_LAG x states back pointers)."""

    def __init__(self, log_trans: np.ndarray, log_init: np.ndarray, max_lag: int = 60000):
        self.log_trans = np.ascontiguousarray(log_trans, dtype=np.float64)
        self.log_init = np.ascontiguousarray(log_init, dtype=np.float64)
        self.max_lag = max(2, int(max_lag))
        self.value: Optional[np.ndarray] = None
        self.ptr = np.zeros((0, len(self.log_init)), dtype=np.uint16)

    def push(self, log_emis: np.ndarray) -> np.ndarray:
        log_emis = np.ascontiguousarray(log_emis, dtype=np.float64)
        if len(log_emis) == 0:
            return np.zeros(0, dtype=np.int64)
        if self.value is None:  # librosa: value[0] = log_prob[0] + log_p_init
            value, ptr = viterbi_forward(log_emis[1:], self.log_trans, log_emis[0] + self.log_init)
            ptr = np.concatenate([np.zeros((1, ptr.shape[1]), dtype=np.uint16), ptr])
        else:
            value, ptr = viterbi_forward(log_emis, self.log_trans, self.value)
        self.value, self.ptr = value, np.concatenate([self.ptr, ptr])
        live = np.flatnonzero(np.isfinite(value))  # a path through a -inf state never wins later
        k, state = _coalesced(self.ptr, live if len(live) else np.arange(len(value)))
        out = self._emit(k, state) if k >= 0 else np.zeros(0, dtype=np.int64)
        if len(self.ptr) > self.max_lag:
            path = _trace(self.ptr, len(self.ptr) - 1, int(np.argmax(self.value)))
            k = len(self.ptr) - self.max_lag // 2 - 1
            out = np.concatenate([out, path[: k + 1]])
            self.ptr = self.ptr[k + 1:]
        return out

    def _emit(self, k: int, state: int) -> np.ndarray:
        path = _trace(self.ptr, k, state)
        self.ptr = self.ptr[k + 1:]
        return path

    def finish(self) -> np.ndarray:
        if self.value is None or len(self.ptr) == 0:
            return np.zeros(0, dtype=np.int64)
        return self._emit(len(self.ptr) - 1, int(np.argmax(self.value)))  # librosa: the last state by argmax


# ----------------------------------------------------------------------------- decisions, chunk by chunk
class ThresholdDecider:
    """score > threshold (every detector's plain decision: stat_sad, seg_rnn, majority_vote's votes)."""

    def __init__(self, threshold: float):
        self.threshold = threshold

    def push(self, scores: np.ndarray) -> np.ndarray:
        return scores > self.threshold

    def finish(self) -> np.ndarray:
        return EMPTY


class MedianDecider:
    """neural.median_smooth(scores > threshold, window_s), exact chunk by chunk."""

    def __init__(self, threshold: float, window_s: float):
        self.threshold, self.window_s = threshold, window_s
        self.half = max(1, int(round(window_s / SHIFT)) | 1) // 2  # median_smooth's odd window
        self.buf, self.start, self.done = EMPTY, 0, 0  # undecided (+ half a window of decided) frames from START

    def _run(self, final: bool) -> np.ndarray:
        end = self.start + len(self.buf)
        stop = end if final else end - self.half
        if stop <= self.done:
            return EMPTY
        out = median_smooth(self.buf, self.window_s)[self.done - self.start: stop - self.start]
        self.done = stop
        keep = max(self.start, stop - self.half)  # the left half window of the next frame out
        self.buf, self.start = self.buf[keep - self.start:], keep
        return out

    def push(self, scores: np.ndarray) -> np.ndarray:
        self.buf = np.concatenate([self.buf, scores > self.threshold])
        return self._run(final=False)

    def finish(self) -> np.ndarray:
        return self._run(final=True)


class HMMDecider:
    """neural.hmm_smooth(scores, threshold, states, stay), exact chunk by chunk (StreamingViterbi)."""

    def __init__(self, threshold: float, states: int, stay: float, max_lag: int = 60000):
        self.threshold, self.states = threshold, states
        log_trans, log_init = two_class_hmm(states, stay)
        self.viterbi = StreamingViterbi(log_trans, log_init, max_lag)

    def push(self, scores: np.ndarray) -> np.ndarray:
        if len(scores) == 0:
            return EMPTY
        return self.viterbi.push(hmm_emissions(scores, self.threshold, self.states)) >= self.states

    def finish(self) -> np.ndarray:
        return self.viterbi.finish() >= self.states


# ----------------------------------------------------------------------------- frame scores on overlapping windows
class ScoreWindows:
    """Frame scores of a recording fed as consecutive sample blocks (8 kHz), from SCORE_FN(wave) -> one score per
    10 ms frame of WAVE, run on windows with LEFT / RIGHT frames of context; windows start on multiples of ALIGN
    frames (the segment RNN's shift). `push(samples, final)` returns the scores of the frames now kept, in order.
    HOP = 1: the input is already one row per frame (the BiGRU's windows over its front end's output, of ITEM_SHAPE)
    and SCORE_FN may return rows too. FINAL_FRAMES(samples): the frames the last push ends at (default: the
    recording's 10 ms frames, rounded up)."""

    def __init__(self, score_fn: Callable[[np.ndarray], np.ndarray], left: int, right: int, align: int = 1,
                 hop: int = HOP, item_shape: Tuple[int, ...] = (),
                 final_frames: Optional[Callable[[int], int]] = None):
        self.score_fn, self.left, self.right, self.align = score_fn, int(left), int(right), max(1, int(align))
        self.hop = int(hop)
        self.final_frames = final_frames or (  # the recording's frames (ceil); for rows, every row
            (lambda n: n_frames(n, SAMPLE_RATE)) if self.hop == HOP else (lambda n: n))
        self.buf = np.zeros((0,) + tuple(item_shape), dtype=np.float32)
        self.buf_frame = 0  # frame (sample buf_frame * HOP) where buf starts
        self.samples = 0  # seen so far
        self.done = 0  # frames returned so far

    def _window_start(self, frame: int) -> int:
        return max(0, frame - self.left) // self.align * self.align

    def push(self, samples: np.ndarray, final: bool = False) -> np.ndarray:
        self.buf = np.concatenate([self.buf, np.asarray(samples, dtype=np.float32)])
        self.samples += len(samples)
        hop = self.hop
        if final:
            end = keep = self.final_frames(self.samples)
        else:
            end = self.samples // hop  # whole frames of samples
            keep = end - self.right
        if keep <= self.done or self.samples == 0:
            return np.zeros(0, dtype=np.float32)
        w0 = self._window_start(self.done)
        a = (w0 - self.buf_frame) * hop
        wave = self.buf[a:] if final else self.buf[a: a + (end - w0) * hop]
        scores = np.asarray(self.score_fn(wave), dtype=np.float32)
        out = scores[self.done - w0: keep - w0]
        self.done = keep
        nxt = self._window_start(keep)
        self.buf, self.buf_frame = self.buf[(nxt - self.buf_frame) * hop:], nxt
        return out


class BiGRUWindows:
    """The numpy BiGRU's scores from its front end's rows fed in order (Chain's second stage): the forward direction
    carries its state from push to push, so it reads each row once and exactly as the whole-file call does; only
    the backward direction needs context, RIGHT rows past the ones kept (NumpyNet.head_stream). `push(rows, final)`
    returns the scores of the rows now kept; at the end, of every row."""

    def __init__(self, net: NumpyNet, right: int, width: int):
        self.net, self.right = net, int(right)
        self.buf = np.zeros((0, width), dtype=np.float32)  # the rows from `done` on
        self.rows = 0  # seen so far
        self.done = 0  # scores returned so far
        self.h_fwd: Optional[np.ndarray] = None  # the forward state after row done - 1

    def push(self, rows: np.ndarray, final: bool = False) -> np.ndarray:
        self.buf = np.concatenate([self.buf, np.asarray(rows, dtype=np.float32).reshape(-1, self.buf.shape[1])])
        self.rows += len(rows)
        n = (self.rows if final else self.rows - self.right) - self.done
        if n <= 0:
            return np.zeros(0, dtype=np.float32)
        scores, self.h_fwd = self.net.head_stream(self.buf, n, self.h_fwd)
        self.buf, self.done = self.buf[n:], self.done + n
        return scores


class Chain:
    """Two window stages one after the other: FIRST's kept rows are SECOND's input (the BiGRU's front end, then
    the GRU). At the end the first gives every STFT row (1 + samples // HOP, one more than the 10 ms frames when
    the length is a multiple of HOP), as the whole-file call feeds the GRU, and the scores are cut to the frames."""

    def __init__(self, first: ScoreWindows, second: ScoreWindows):
        self.first, self.second = first, second
        self.given = 0  # scores returned so far

    def push(self, samples: np.ndarray, final: bool = False) -> np.ndarray:
        rows = self.first.push(samples, final)
        out = self.second.push(rows, final) if len(rows) or final else np.zeros(0, dtype=np.float32)
        if final:
            out = out[: max(0, n_frames(self.first.samples, SAMPLE_RATE) - self.given)]
        self.given += len(out)
        return out


class DecisionStream:
    """Samples in, decided frames out, for one detector: ScoreWindows then a decider."""

    def __init__(self, windows: ScoreWindows, decider):
        self.windows, self.decider = windows, decider

    def push(self, samples: np.ndarray, final: bool = False) -> np.ndarray:
        d = self.decider.push(self.windows.push(samples, final))
        return np.concatenate([d, self.decider.finish()]) if final else d


class VoteStream:
    """Frames decided by all member streams so far -> votes > THRESHOLD (majority_vote; members lag differently)."""

    def __init__(self, members: Sequence[DecisionStream], threshold: float):
        self.members, self.threshold = list(members), threshold
        self.pending: List[np.ndarray] = [EMPTY for _ in self.members]

    def push(self, samples: np.ndarray, final: bool = False) -> np.ndarray:
        self.pending = [np.concatenate([p, m.push(samples, final)]) for p, m in zip(self.pending, self.members)]
        n = min(len(p) for p in self.pending)
        votes = sum(p[:n].astype(np.float32) for p in self.pending)
        self.pending = [p[n:] for p in self.pending]
        return votes > self.threshold


# ----------------------------------------------------------------------------- decisions -> segments
class SegmentBuilder:
    """Runs of speech frames -> (start_s, end_s), as labels.to_intervals gives for the joined decisions."""

    def __init__(self, shift: float = SHIFT):
        self.shift, self.frames, self.open = shift, 0, None  # open: start frame of a run not yet ended

    def feed(self, decisions: np.ndarray) -> List[Tuple[float, float]]:
        d = np.asarray(decisions, dtype=bool)
        prev = np.concatenate([[self.open is not None], d[:-1]]) if len(d) else d
        out = []
        for i in np.flatnonzero(d != prev):
            if d[i]:
                self.open = self.frames + int(i)
            else:
                out.append((float(self.open * self.shift), float((self.frames + int(i)) * self.shift)))
                self.open = None
        self.frames += len(d)
        return out

    @property
    def quiet_until(self) -> float:
        """Seconds from the start up to which the decided frames hold no region still to come out: the start of the
        open run, else the frames decided (what SegmentTidier.advance may be given)."""
        return float((self.open if self.open is not None else self.frames) * self.shift)

    def close(self, duration_s: Optional[float] = None) -> List[Tuple[float, float]]:
        """The run still open at the end (its end clipped to DURATION_S: the last frame may reach past it)."""
        if self.open is None:
            return []
        end = float(self.frames * self.shift)
        seg = (float(self.open * self.shift), min(end, duration_s) if duration_s is not None else end)
        self.open = None
        return [seg]


class SegmentTidier:
    """What a VAD user sets on the regions (silero-vad's options): gaps shorter than MIN_SILENCE_S are bridged,
    regions then shorter than MIN_SPEECH_S dropped, the rest padded by PAD_S on each side (clipped to the recording;
    regions that the padding makes touch are joined). Streaming: `feed` the regions as they are decided, `advance`
    to SegmentBuilder.quiet_until (a region that has begun but not ended may still join), `close` at the end; a region leaves once no later region can join it (at most
    max(MIN_SILENCE_S, 2 PAD_S) after its end), so the whole-file and streaming results are the same."""

    def __init__(self, min_speech_s: float = 0.0, min_silence_s: float = 0.0, pad_s: float = 0.0):
        if min(min_speech_s, min_silence_s, pad_s) < 0:
            raise ValueError("min_speech / min_silence / pad must be >= 0")
        self.min_speech, self.pad = min_speech_s, pad_s
        self.gap = max(min_silence_s, 2 * pad_s)  # a gap below this closes (padding would make them touch)
        self.pending: Optional[List[float]] = None
        self.last_end = 0.0  # end of the last region let out, padded: the next one starts after it

    def _out(self, duration_s: Optional[float] = None) -> List[Tuple[float, float]]:
        start, end = self.pending
        self.pending = None
        if end - start < self.min_speech:
            return []
        start, end = max(0.0, self.last_end, start - self.pad), end + self.pad
        if duration_s is not None:
            end = min(end, duration_s)
        self.last_end = end
        return [(start, end)]

    def feed(self, regions) -> List[Tuple[float, float]]:
        out = []
        for start, end in regions:
            if self.pending is not None and start - self.pending[1] < self.gap:
                self.pending[1] = end
                continue
            if self.pending is not None:
                out += self._out()
            self.pending = [start, end]
        return out

    def advance(self, now_s: float) -> List[Tuple[float, float]]:
        """Regions no later one can join, once NOW_S seconds have been decided."""
        if self.pending is not None and now_s - self.pending[1] >= self.gap:
            return self._out()
        return []

    def close(self, duration_s: Optional[float] = None) -> List[Tuple[float, float]]:
        return self._out(duration_s) if self.pending is not None else []

    def apply(self, regions, duration_s: Optional[float] = None) -> List[Tuple[float, float]]:
        """The whole-file result: every region at once."""
        return self.feed(regions) + self.close(duration_s)


# ----------------------------------------------------------------------------- per detector
# seconds of context around a window for the detectors that see the whole recording (the numpy BiGRU: past it, for its
# backward direction only). The BiGRU's memory depends on the net: the tiny one shipped before (32 hidden) decided
# every frame as over the whole recording with 6 s on each side; the GPU-trained one shipped now (channels 4-8-16, 64
# hidden) remembers longer: on the real dev set (2 x 300 s, chunks of 2 s and 60 s), with the forward state carried,
# 6 s moved 317 of 120,000 decisions (posteriors up to 0.16 apart), 20 s 10, 30 s and 40 s none (posteriors within
# 0.011 and 0.0043). The statistical SAD fits its noise track and GMMs to what it sees
RNN_CONTEXT_S, STAT_CONTEXT_S = 40.0, 10.0


def window_context(detector, context_s: Optional[float] = None) -> Tuple[int, int, int]:
    """(left, right, align) frames of ScoreWindows for DETECTOR: the receptive field of the 1-D CNN and of the
    segment RNN (exact); CONTEXT_S seconds (None: RNN_CONTEXT_S for the BiGRU, STAT_CONTEXT_S otherwise) for the
    detectors that see the whole recording."""
    if isinstance(detector, NeuralDetector):
        field = receptive_field(detector.net)
        if field is not None:
            ctx, align = field
            return FEATURE_MARGIN + ctx, FEATURE_MARGIN + ctx, align
    if context_s is None:
        context_s = RNN_CONTEXT_S if isinstance(detector, NeuralDetector) else STAT_CONTEXT_S
    c = int(round(context_s / SHIFT))
    return c, c, 1


def decider_of(detector, threshold: float):
    """The chunk-by-chunk twin of DETECTOR.decide(scores, THRESHOLD)."""
    if isinstance(detector, NeuralDetector):
        if detector.smoothing == "hmm":
            return HMMDecider(threshold, detector.hmm_states, detector.hmm_stay)
        if detector.smoothing == "median":
            return MedianDecider(threshold, detector.median_s)
    return ThresholdDecider(threshold)  # Detector.decide: scores > threshold


def decision_stream(detector, threshold: float, context_s: Optional[float] = None) -> DecisionStream:
    left, right, align = window_context(detector, context_s)
    net = detector.net if isinstance(detector, NeuralDetector) else None
    if isinstance(net, NumpyNet) and net.field is None:
        # the BiGRU in numpy: its front end sees 4 frames, so it runs once per frame on exact windows; the GRU's
        # forward direction carries its state (each row once), only the backward one reruns over CONTEXT_S past a
        # window (BiGRUWindows)
        margin = FEATURE_MARGIN + net.context
        front = ScoreWindows(lambda wave: net.front(stft_magnitude(wave)), margin, margin,
                             final_frames=lambda samples: 1 + samples // HOP)  # every STFT row, as the whole call
        width = front.score_fn(np.zeros(HOP, dtype=np.float32)).shape[1]
        windows = Chain(front, BiGRUWindows(net, right, width))
        return DecisionStream(windows, decider_of(detector, threshold))
    return DecisionStream(ScoreWindows(lambda wave: detector.scores(wave, SAMPLE_RATE), left, right, align),
                          decider_of(detector, threshold))


# ----------------------------------------------------------------------------- digital silence
SILENCE = 1e-5  # common.audio.check_audio's silent level (-100 dBFS)


def silent_frames(wave: np.ndarray, total: int) -> np.ndarray:
    """(TOTAL,) bool: frame t's samples [t*HOP, (t+1)*HOP) all below SILENCE (no speech there, whatever a model
    says: a silent recording has no speech)."""
    loud = np.abs(np.asarray(wave)) >= SILENCE
    padded = np.zeros(total * HOP, dtype=bool)
    padded[: min(len(loud), total * HOP)] = loud[: total * HOP]
    return ~padded.reshape(total, HOP).any(axis=1)


class SilenceMask:
    """silent_frames of a recording fed block by block, applied to its decisions as they come (frames in order)."""

    def __init__(self):
        self.rest = np.zeros(0, dtype=np.float32)  # samples of a frame not yet complete
        self.flags = EMPTY  # silent flags of the frames not yet decided

    def push(self, samples: np.ndarray, final: bool = False) -> None:
        x = np.concatenate([self.rest, samples])
        whole = len(x) // HOP if not final else n_frames(len(x), SAMPLE_RATE)
        self.flags = np.concatenate([self.flags, silent_frames(x, whole)])
        self.rest = x[whole * HOP:]

    def apply(self, decisions: np.ndarray) -> np.ndarray:
        n = len(decisions)
        out = decisions & ~self.flags[:n]
        self.flags = self.flags[n:]
        return out
