"""Streaming decoding of the multilingual RNN-T (paper 001, Sections 4.2 and 6.3).

Search. `StreamingBeamSearch` is a frame-synchronous RNN-T beam search over one head. Every frame, each
hypothesis emits 0 .. `max_sym_per_frame` units and then the blank that moves it to the next frame (a
hypothesis that has emitted the maximum is *forced* to take the blank, with the blank's log-prob). At each
emission step the pool "hypotheses that took the blank" + "one-unit extensions of those still emitting" is
pruned to the `beam` best, so beam 1 is exactly greedy search (argmax; a blank wins ties). Hypotheses that
end the frame with the same unit prefix are merged (log-sum-exp), so a score is the log of the summed
probability of the alignments of that prefix that survived pruning, restricted to <= max_sym_per_frame
units per frame: with no pruning it is exactly the forward (full-sum) log P(y | x) of the capped lattice,
with pruning a lower bound of it (tests/test_multisoftmax_decode.py checks both against a brute-force forward).
Hypotheses are prefix-tree nodes (`Prefix`: O(1) hash, no copies), so a frame costs the same however long the
utterance; prediction-network outputs are cached per prefix (the survivors' and their extensions': bounded by
the beam); the prediction and joint networks run batched over the hypotheses of an emission step.
`step(enc_chunk)` consumes frames as they arrive (a streaming encoder's chunks), so decoding chunk by chunk
equals decoding the whole utterance at once.

LID-free decoding (Section 4.2). One encoder pass feeds every language's search (`LidFreeDecoder`), frame-
synchronously; the LID head's frame log-posteriors are accumulated, and the chosen language is the one with
the highest average posterior over the utterance's frames among the decoders still running. The true
language's output of the same run is the oracle.

Early switch-off (Section 6.3, eq. 1-2). s_l(t) = sum_{t'<=t} log P_t'(l); decoder l is turned off at the
first frame t (0-based, 30 ms encoder frames) with t > tau and s_l(t) < max_l' s_l'(t) - s_th (max over the
decoders still on: the paper's l_max; over all languages every decoder could end up off), having then
decoded frames 0 .. t-1 (t active frames); never turned off: all S frames. T_avg = sum_l active_l / S
(= L when tau or s_th is inf). The rule is causal, so applying it to the frames seen so far gives the same
off-times as applying it to the whole utterance, and a switched-off search is simply never stepped again.
With s_th >= 0 the leading running decoder is never turned off: one always runs.

Stacking note: the 10 ms -> 30 ms stacking only looks back (units.stack_frames); `encode_chunks` stacks the
whole utterance up front (the last, partial 30 ms block repeats the final frame, as a stream's end would)
and runs the encoder chunk by chunk carrying its LSTM state.

Public API:
    StreamingBeamSearch(model, head, beam=4, max_sym_per_frame=3): .step(enc_chunk) -> best hypothesis so far
        (a Prefix node: .units()), .best() -> its units, .final() -> [(units, log-prob)] best first, .frames, .cpu_s
    Prefix: a hypothesis as a prefix-tree node (parent, unit, length; O(1) hash), .units() -> unit ids
    iter_encode(model, feats, chunk=10, lid=None, with_lid=False) -> yields (h (S_c, H), lid log-post or None)
    encode_chunks(...) -> the same as a list
    decode_utterance(model, feats, head, beam=4, chunk=10, ...) -> n-best  (streaming)
    decode_full(model, feats, head, beam=4, ...) -> n-best                  (one encoder pass, one step)
    SwitchOff(L, tau, s_th).update(log_post chunk) -> active frames per language so far (streaming rule)
    switch_off_frames(log_post (S, L), tau, s_th) -> active frames per language;  t_avg(active, S)
    LidFreeDecoder(model, beam=4, max_sym_per_frame=3, tau=inf, s_th=inf): .step(h, lid_logp), .leader(),
        .running_leader() (O(languages), for partial results), .result()
    lang_by_script(units, lang_units) -> language or None   (vanilla union head's LID)
"""
from __future__ import annotations

import contextlib
import math
import time
import warnings
from dataclasses import dataclass
from typing import Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import torch

from .model import Joint
from .units import SPECIAL, WORD_START

NBest = List[Tuple[List[int], float]]
INF = float("inf")


@contextlib.contextmanager
def cpu_kernels():
    """No grad, and PyTorch's native LSTM kernels instead of oneDNN's: for the one-step prediction-network
    calls and short encoder chunks of streaming, oneDNN's per-call setup makes them ~5-10x slower on CPU."""
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # oneDNN's "TF32 acceleration ... Intel GPUs" notice
        with torch.backends.mkldnn.flags(enabled=False):
            yield


def _logaddexp(a: Optional[float], b: float) -> float:
    return b if a is None else float(np.logaddexp(a, b))


class Prefix:
    """A hypothesis' unit sequence as a node of a prefix tree (parent + last unit). The search keys its hypotheses
    and prediction cache by these: a tuple's hash and `p[:-1]` / `p + (u,)` copy cost O(length) per look-up, which
    made long inputs quadratic with a model that emits up to max_sym_per_frame units every frame (issue #52: 60 s
    spent half its time hashing, 600 s did not finish in 240 s); a node hashes in O(1) and compares in O(1) in the
    usual case (two equal sequences meet at a shared ancestor within a few steps). Equal sequences are equal
    nodes (the hash is the sequence's, built from the parent's), so merging and order are the tuples' exactly."""
    __slots__ = ("parent", "unit", "length", "_hash")

    def __init__(self, parent: Optional["Prefix"] = None, unit: int = 0):
        self.parent, self.unit = parent, unit
        self.length = 0 if parent is None else parent.length + 1
        self._hash = hash(()) if parent is None else hash((parent._hash, unit))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        a, b = self, other
        while a is not b:
            if not isinstance(b, Prefix) or (a._hash, a.length, a.unit) != (b._hash, b.length, b.unit):
                return False
            a, b = a.parent, b.parent
        return True

    def units(self) -> List[int]:
        """The unit ids, first to last (O(length): for results, not per step)."""
        out, node = [], self
        while node.parent is not None:
            out.append(node.unit)
            node = node.parent
        return out[::-1]


class StreamingBeamSearch:
    """Frame-synchronous beam search of one head (see the module docstring). `model` is a
    MultilingualTransducer in eval mode; units are ids of `model.token_lists[head]` (0 = blank). Hypotheses are
    `Prefix` nodes, so a frame costs the same however long the utterance decoded so far."""

    def __init__(self, model, head: str, beam: int = 4, max_sym_per_frame: int = 3):
        if head not in model.heads_names:
            raise ValueError(f"head {head!r}: this model's heads are {' '.join(model.heads_names)}")
        if beam < 1 or max_sym_per_frame < 0:
            raise ValueError(f"need beam >= 1 and max_sym_per_frame >= 0, got {beam}, {max_sym_per_frame}")
        self.model, self.head, self.beam, self.max_sym = model, head, beam, max_sym_per_frame
        self.frames = 0      # encoder frames consumed (a switched-off search stops counting)
        self.cpu_s = 0.0     # process CPU time spent in step()
        joint = model.heads[head].joint
        # model.Joint is W_out tanh(W_enc h + W_pred g): project each frame once and each prefix once, so
        # that a step costs one small output layer; any other joint goes through model.joint_log_probs
        self._joint = joint if type(joint) is Joint else None
        # prefix -> (prediction output, projected if self._joint, (P,); LSTM state ((layers, P), (layers, P)))
        self._cache: Dict[Prefix, Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]] = {}
        root = Prefix()
        with cpu_kernels():
            self._predict([root], model.pred_init_state(head, 1), torch.zeros(1, dtype=torch.long, device=model.device))
        self.hyps: Dict[Prefix, float] = {root: 0.0}  # hypotheses after the last frame (all took its blank)

    # ------------------------------------------------------------------ public
    def step(self, enc_chunk: torch.Tensor) -> Prefix:
        """Consume encoder frames (S_c, H); return the best hypothesis so far as a node (`.units()` lists it;
        listing it every chunk would cost O(length) a chunk)."""
        t0 = time.process_time()
        with cpu_kernels():
            frames = self._joint.enc(enc_chunk) if self._joint is not None else enc_chunk
            for enc in frames:
                self._frame(enc)
        self.frames += len(enc_chunk)
        self.cpu_s += time.process_time() - t0
        return self.best_prefix()

    def best_prefix(self) -> Prefix:
        return max(self.hyps.items(), key=lambda kv: kv[1])[0]

    def best(self) -> List[int]:
        """The best hypothesis so far (unit ids)."""
        return self.best_prefix().units()

    def final(self) -> NBest:
        """n-best (unit ids, log-prob), best first (ties: shorter prefix first, then by ids)."""
        return sorted([(p.units(), s) for p, s in self.hyps.items()], key=lambda kv: (-kv[1], len(kv[0]), kv[0]))

    # ------------------------------------------------------------------ search
    def _predict(self, prefixes: Sequence[Prefix], state, tokens: torch.Tensor) -> None:
        """Prediction outputs and states of PREFIXES (last units TOKENS, parents' STATE). An nn.LSTM in eval mode
        runs as its forward runs it (torch.lstm on its flat weights) without the module's per-call checks: the
        same numbers (tests/test_stt_long.py), ~15% less time a search step on a tiny net."""
        lstm = self.model._pred_net(self.head)
        if isinstance(lstm, torch.nn.LSTM) and not (lstm.proj_size or lstm.training):
            emb = self.model.heads[self.head].embed(tokens)[:, None, :]
            g, h, c = torch.lstm(emb, state, lstm._flat_weights, lstm.bias, lstm.num_layers, 0.0, False,
                                 lstm.bidirectional, lstm.batch_first)
            g = g[:, 0]
        else:
            g, (h, c) = self.model.pred_step(self.head, tokens, state)
        q = self._joint.pred(g) if self._joint is not None else g
        for i, p in enumerate(prefixes):
            self._cache[p] = (q[i], (h[:, i], c[:, i]))

    def _extend_cache(self, prefixes: Sequence[Prefix]) -> None:
        """Prediction outputs of the prefixes not cached yet: one batched prediction step from their parents."""
        todo = [p for p in prefixes if p not in self._cache]
        if todo:
            parents = [self._cache[p.parent][1] for p in todo]
            state = (torch.stack([h for h, _ in parents], 1), torch.stack([c for _, c in parents], 1))
            self._predict(todo, state, torch.tensor([p.unit for p in todo], dtype=torch.long, device=state[0].device))

    def _log_probs(self, enc: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        if self._joint is not None:
            return torch.log_softmax(self._joint.out(torch.tanh(enc + q)), dim=-1)
        return self.model.joint_log_probs(self.head, enc[None, :], q)

    def _frame(self, enc: torch.Tensor) -> None:
        done: Dict[Prefix, float] = {}         # prefixes that took this frame's blank
        emitting: Dict[Prefix, float] = dict(self.hyps)  # prefixes that may still emit in this frame
        for step in range(self.max_sym + 1):
            prefixes = list(emitting)
            self._extend_cache(prefixes)
            logp = self._log_probs(enc, torch.stack([self._cache[p][0] for p in prefixes])).double()  # (N, V)
            base = torch.tensor([emitting[p] for p in prefixes], dtype=logp.dtype, device=logp.device)
            for p, s in zip(prefixes, (base + logp[:, 0]).tolist()):
                done[p] = _logaddexp(done.get(p), s)
            if step == self.max_sym:  # the rest had their maximum: the blank above was forced
                break
            cand = (base[:, None] + logp[:, 1:]).reshape(-1)
            vals, idx = cand.topk(min(self.beam, cand.numel()))
            # one pool of "took the blank" and "emits one more unit", best `beam` kept; sorted() is stable
            # and lists the blanks first, so a blank wins ties (beam 1 = greedy's argmax)
            pool = [(s, True, p) for p, s in done.items()]
            width = logp.shape[1] - 1
            pool += [(s, False, Prefix(prefixes[i // width], i % width + 1))
                     for s, i in zip(vals.tolist(), idx.tolist())]
            kept = sorted(pool, key=lambda x: -x[0])[:self.beam]
            done = {p: s for s, is_done, p in kept if is_done}
            emitting = {p: s for s, is_done, p in kept if not is_done}
            if not emitting:
                break
        self.hyps = dict(sorted(done.items(), key=lambda kv: -kv[1])[:self.beam])
        # keep the states of the surviving prefixes and of what this frame computed (likely reused next)
        self._cache = {p: v for p, v in self._cache.items()
                       if p in self.hyps or p.parent is None or p.parent in self.hyps}


# ---------------------------------------------------------------------------------------------- encoder

def iter_encode(model, feats: torch.Tensor, chunk: int = 10, lid: Optional[int] = None,
                with_lid: bool = False) -> Iterator[Tuple[torch.Tensor, Optional[torch.Tensor]]]:
    """Streaming encoder pass over normalised log-mels feats (T, 80): stack (causal), then the encoder
    `chunk` 30 ms frames at a time carrying its state. Yields (h (S_c, H), LID log-posteriors (S_c, L) or
    None) per chunk as it is computed; `lid` is the language id the one-hot system needs."""
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1 frame, got {chunk}")
    with cpu_kernels():  # entered per step, never held across a yield (the caller's grad mode stays its own)
        x, _ = model.stack(feats[None], torch.tensor([len(feats)], device=feats.device))
    lid_t = None if lid is None else torch.tensor([lid], device=feats.device)
    state, lid_state = None, None
    for start in range(0, x.shape[1], chunk):
        with cpu_kernels():
            xc = x[:, start:start + chunk]
            h, state = model.encode(xc, torch.tensor([xc.shape[1]], device=feats.device), lid_t, state)
            lp = None
            if with_lid:
                lp, lid_state = model.lid_log_posteriors(h, lid_state)
        yield h[0], None if lp is None else lp[0]


def encode_chunks(model, feats: torch.Tensor, chunk: int = 10, lid: Optional[int] = None,
                  with_lid: bool = False) -> List[Tuple[torch.Tensor, Optional[torch.Tensor]]]:
    """Every chunk of `iter_encode` at once: [(h (S_c, H), LID log-posteriors (S_c, L) or None)]."""
    return list(iter_encode(model, feats, chunk, lid, with_lid))


def decode_utterance(model, feats: torch.Tensor, head: str, beam: int = 4, chunk: int = 10,
                     max_sym_per_frame: int = 3, lid: Optional[int] = None) -> NBest:
    """Streaming decode: encoder and search advance `chunk` frames at a time."""
    search = StreamingBeamSearch(model, head, beam, max_sym_per_frame)
    for h, _ in encode_chunks(model, feats, chunk, lid):
        search.step(h)
    return search.final()


@cpu_kernels()
def decode_full(model, feats: torch.Tensor, head: str, beam: int = 4, max_sym_per_frame: int = 3,
                lid: Optional[int] = None) -> NBest:
    """Full-utterance decode (one encoder call, one search step over all frames), for comparison."""
    x, xlens = model.stack(feats[None], torch.tensor([len(feats)], device=feats.device))
    h, _ = model.encode(x, xlens, None if lid is None else torch.tensor([lid], device=feats.device))
    search = StreamingBeamSearch(model, head, beam, max_sym_per_frame)
    search.step(h[0])
    return search.final()


# ---------------------------------------------------------------------------------------------- switch-off

class SwitchOff:
    """Paper eq. 1, applied frame by frame as the LID log-posteriors arrive. Decoder l stops at the first
    0-based frame t with t > tau and s_l(t) < max s_l'(t) - s_th, the max over the decoders still on (it has
    then decoded t frames). Taking the max over the running decoders keeps the leader on: over all languages,
    a language whose decoder is already off could take the lead and turn every decoder off."""

    def __init__(self, num_langs: int, tau: float = INF, s_th: float = INF):
        if not s_th >= 0 or math.isnan(tau):
            raise ValueError(f"need s_th >= 0 (the leading decoder must keep running) and a tau, got {tau}, {s_th}")
        self.tau, self.s_th = tau, s_th
        self.s = np.zeros(num_langs)                  # s_l(t)
        self.on = np.ones(num_langs, dtype=bool)
        self.active = np.zeros(num_langs, dtype=np.int64)  # frames each decoder decoded
        self.t = 0

    def update(self, log_post) -> np.ndarray:
        """Consume (n, L) frame log-posteriors; return the active frames per language so far."""
        lp = np.asarray(log_post, dtype=np.float64)
        if lp.ndim != 2 or lp.shape[1] != len(self.s):
            raise ValueError(f"log-posteriors must be (frames, {len(self.s)} languages), got shape {lp.shape}")
        for row in lp:
            self.s += row
            if self.t > self.tau:
                self.on &= ~(self.s < self.s[self.on].max() - self.s_th)
            self.active += self.on
            self.t += 1
        return self.active.copy()


def switch_off_frames(log_post, tau: float = INF, s_th: float = INF) -> np.ndarray:
    """Active frames of each language's decoder over a whole utterance's (S, L) LID log-posteriors:
    (L,) ints, S for a decoder never turned off (see SwitchOff)."""
    lp = np.asarray(log_post, dtype=np.float64)
    return SwitchOff(lp.shape[-1] if lp.ndim == 2 else 0, tau, s_th).update(lp)


def t_avg(active_frames: Sequence[int], num_frames: int) -> float:
    """Paper eq. 2: sum over languages of the fraction of frames each decoder was active (L: all of them)."""
    return float(np.sum(active_frames)) / num_frames


@dataclass
class LidFreeResult:
    lang: str                     # chosen language: highest average LID posterior among running decoders
    nbest: Dict[str, NBest]       # every language's n-best (a switched-off one: as it was when stopped)
    avg_post: np.ndarray          # (L,) average frame posterior
    active_frames: np.ndarray     # (L,) frames each decoder decoded
    frames: int                   # S
    cpu_s: Dict[str, float]       # decoder CPU seconds per language

    @property
    def t_avg(self) -> float:
        return t_avg(self.active_frames, self.frames)


class LidFreeDecoder:
    """Every language's search over one shared encoder pass, with early switch-off (module docstring).
    Feed it chunks of encoder frames and their LID log-posteriors as they come."""

    def __init__(self, model, beam: int = 4, max_sym_per_frame: int = 3, tau: float = INF, s_th: float = INF):
        if not model.has_lid or model.heads_names != list(model.langs):
            raise ValueError("LID-free decoding needs a multisoftmax model with an LID head (lid: true)")
        self.langs = list(model.langs)
        self.switch = SwitchOff(len(self.langs), tau, s_th)
        self.searches = {lang: StreamingBeamSearch(model, model.head_of(lang), beam, max_sym_per_frame)
                         for lang in self.langs}
        self._log_post: List[np.ndarray] = []
        self._post_sum = np.zeros(len(self.langs))  # running sum of the frame posteriors (running_leader)
        self.frames = 0

    def step(self, h: torch.Tensor, lid_log_post: torch.Tensor) -> np.ndarray:
        """Consume (S_c, H) encoder frames and their (S_c, L) LID log-posteriors; step only the decoders
        still on (each up to its switch-off frame). Returns the active frames per language so far."""
        self._log_post.append(lid_log_post.detach().double().cpu().numpy())
        self._post_sum += np.exp(self._log_post[-1]).sum(axis=0)
        start, self.frames = self.frames, self.frames + len(h)
        active = self.switch.update(self._log_post[-1])
        for lang, n in zip(self.langs, active):
            search = self.searches[lang]
            if n > search.frames:  # search.frames >= start while it is on
                search.step(h[search.frames - start:n - start])
        return active

    def leader(self) -> Tuple[str, np.ndarray, np.ndarray]:
        """(language chosen on the frames so far, (L,) average frame posterior, (L,) bool decoders still on):
        after the last chunk, the language `result` chooses; before it, a streaming partial result's."""
        if not self.frames:
            raise ValueError("no frames decoded")
        return self._choose(np.exp(np.concatenate(self._log_post)).mean(axis=0))

    def running_leader(self) -> Tuple[str, np.ndarray, np.ndarray]:
        """`leader()` from the running sum of the posteriors, O(languages) a call for streaming partial results
        (`leader` concatenates every chunk's: O(frames)); the average equals leader's up to rounding."""
        if not self.frames:
            raise ValueError("no frames decoded")
        return self._choose(self._post_sum / self.frames)

    def _choose(self, avg: np.ndarray) -> Tuple[str, np.ndarray, np.ndarray]:
        running = np.array([self.searches[lang].frames for lang in self.langs]) == self.frames
        return self.langs[int(np.argmax(np.where(running, avg, -INF)))], avg, running

    def result(self) -> LidFreeResult:
        lang, avg, _ = self.leader()
        active = np.array([self.searches[lang].frames for lang in self.langs])
        return LidFreeResult(lang, {l: s.final() for l, s in self.searches.items()}, avg, active, self.frames,
                             {l: s.cpu_s for l, s in self.searches.items()})


# ---------------------------------------------------------------------------------------------- script LID

def lang_by_script(units: Iterable[str], lang_units: Mapping[str, Iterable[str]]) -> Optional[str]:
    """Language of a (vanilla union-head) hypothesis: the one whose unit list contains most of the
    hypothesis' grapheme units (B_x read as x; <blank>, <unk> ignored). Scripts are distinct (paper
    Section 5), so this is its script; None for an empty hypothesis, no match or a tie. Between languages of one
    script (units.shared_script) it decides on single letters only: the report gives no accuracy for them."""
    def grapheme(u: str) -> str:
        return u[len(WORD_START):] if u.startswith(WORD_START) else u

    sets = {lang: {grapheme(u) for u in us if u not in SPECIAL} for lang, us in lang_units.items()}
    graphemes = [grapheme(u) for u in units if u not in SPECIAL]
    counts = {lang: sum(g in s for g in graphemes) for lang, s in sets.items()}
    if not counts:
        return None
    top = max(counts.values())
    winners = [lang for lang, n in counts.items() if n == top]
    return winners[0] if top > 0 and len(winners) == 1 else None


__all__ = ["Prefix", "StreamingBeamSearch", "iter_encode", "encode_chunks", "decode_utterance", "decode_full",
           "SwitchOff", "switch_off_frames", "t_avg", "LidFreeDecoder", "LidFreeResult", "lang_by_script",
           "cpu_kernels"]
