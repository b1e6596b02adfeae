"""Inputs of any length (issue #52) on a tiny random multilingual RNN-T. decode.StreamingBeamSearch keys its
hypotheses by prefix-tree nodes (decode.Prefix): step for step the same search as the tuple-keyed one it replaced
(`TupleSearch` below, the slow reference: same best per chunk, n-best and scores, at several beams and
max_sym_per_frame, a runaway model included), with hypothesis and cache sizes bounded by the beam and never more than
max_sym_per_frame units a frame however long the input; LidFreeDecoder's running leader equals its exact one;
features, stacking and encoding block by block (local_models/multisoftmax/inference.py) equal the one-pass ones;
streaming partial texts equal units_to_text; an input over LONG_S (read by blocks) is refused or warned about by
check_audio's rules over the whole input, as a short one is (silence; the clipped share, one warning)."""
import logging

import numpy as np
import pytest
import soundfile
import torch
from test_multisoftmax_inference import SYSTEMS, make_recipe
from test_multisoftmax_inference import speech as speech_wav

from local_models.common.audio import AudioError
from local_models.common.features import FeatConfig, compute
from local_models.multisoftmax.decode import (LidFreeDecoder, Prefix, StreamingBeamSearch, _logaddexp, cpu_kernels,
                                              encode_chunks, lang_by_script)
from local_models.multisoftmax.inference import LONG_S, Speech2Text, _BestText, block_features, iter_encode_blocks
from local_models.multisoftmax.model import UNION, MultilingualTransducer
from local_models.multisoftmax.units import units_to_text

torch.set_num_threads(1)
LANGS = ["en", "hi"]
UNITS = {"en": ["a", "b", "B_a", "B_b"], "hi": ["क", "ख", "B_क", "B_ख"]}
TOKENS = {**{lang: ["<blank>", *u, "<unk>"] for lang, u in UNITS.items()},
          UNION: ["<blank>", *UNITS["en"], *UNITS["hi"], "<unk>"]}
TINY = dict(enc_layers=1, enc_units=24, pred_layers=1, pred_units=24, embed_dim=8, joint_dim=24, lid_hidden=8)


class TupleSearch(StreamingBeamSearch):
    """The search before issue #52, the slow reference: hypotheses and prediction cache keyed by unit tuples
    (hashed and copied whole on every look-up), the prediction net run through model.pred_step (nn.LSTM's
    forward, not the search's torch.lstm shortcut), the best hypothesis listed on every step."""

    def __init__(self, model, head: str, beam: int = 4, max_sym_per_frame: int = 3):
        super().__init__(model, head, beam, max_sym_per_frame)
        self._cache = {(): self._cache[next(iter(self.hyps))]}
        self.hyps = {(): 0.0}

    def step(self, enc_chunk):
        super().step(enc_chunk)
        return self.best()

    def best_prefix(self):
        return max(self.hyps.items(), key=lambda kv: kv[1])[0]

    def best(self):
        return list(self.best_prefix())

    def final(self):
        return [(list(p), s) for p, s in sorted(self.hyps.items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))]

    def _predict(self, prefixes, state, tokens):
        g, (h, c) = self.model.pred_step(self.head, tokens, state)
        q = self._joint.pred(g) if self._joint is not None else g
        for i, p in enumerate(prefixes):
            self._cache[p] = (q[i], (h[:, i], c[:, i]))

    def _extend_cache(self, prefixes):
        todo = [p for p in prefixes if p not in self._cache]
        if todo:
            parents = [self._cache[p[:-1]][1] for p in todo]
            state = (torch.stack([h for h, _ in parents], 1), torch.stack([c for _, c in parents], 1))
            self._predict(todo, state, torch.tensor([p[-1] for p in todo], dtype=torch.long))

    def _frame(self, enc):
        done, emitting = {}, dict(self.hyps)
        for step in range(self.max_sym + 1):
            prefixes = list(emitting)
            self._extend_cache(prefixes)
            logp = self._log_probs(enc, torch.stack([self._cache[p][0] for p in prefixes])).double()
            base = torch.tensor([emitting[p] for p in prefixes], dtype=logp.dtype)
            for p, s in zip(prefixes, (base + logp[:, 0]).tolist()):
                done[p] = _logaddexp(done.get(p), s)
            if step == self.max_sym:
                break
            cand = (base[:, None] + logp[:, 1:]).reshape(-1)
            vals, idx = cand.topk(min(self.beam, cand.numel()))
            pool = [(s, True, p) for p, s in done.items()]
            width = logp.shape[1] - 1
            pool += [(s, False, prefixes[i // width] + (i % width + 1,)) for s, i in zip(vals.tolist(), idx.tolist())]
            kept = sorted(pool, key=lambda x: -x[0])[:self.beam]
            done = {p: s for s, is_done, p in kept if is_done}
            emitting = {p: s for s, is_done, p in kept if not is_done}
            if not emitting:
                break
        self.hyps = dict(sorted(done.items(), key=lambda kv: -kv[1])[:self.beam])
        self._cache = {p: v for p, v in self._cache.items() if p in self.hyps or (p[:-1] in self.hyps if p else True)}


class TupleLidFree(LidFreeDecoder):
    """decode.LidFreeDecoder over `TupleSearch`es (the reference of the LID-free search)."""

    def __init__(self, model, beam=4, max_sym_per_frame=3, tau=float("inf"), s_th=float("inf")):
        super().__init__(model, beam, max_sym_per_frame, tau, s_th)
        self.searches = {lang: TupleSearch(model, model.head_of(lang), beam, max_sym_per_frame) for lang in self.langs}


@torch.no_grad()
def tiny(seed=0, runaway=False, **kw):
    """A random net; RUNAWAY: the blank never wins (the quick-size demo model's runaway unit strings)."""
    torch.manual_seed(seed)
    net = MultilingualTransducer(LANGS, TOKENS, system="multisoftmax", lid=True, **TINY, **kw).eval()
    for head in net.heads.values():
        for layer, gain in ((head.joint.enc, 4.0), (head.joint.pred, 4.0), (head.joint.out, 6.0)):
            layer.weight.mul_(gain)
        if runaway:
            head.joint.out.bias[0] = -50.0
    return net


def frames(net, n, seed=0):
    """N encoder frames (30 ms) of random features."""
    x = torch.from_numpy(np.random.default_rng(seed).standard_normal((3 * n, 80)).astype(np.float32))
    return torch.cat([h for h, _ in encode_chunks(net, x, chunk=1000)])


@pytest.mark.parametrize("beam,max_sym,runaway", [(1, 3, False), (4, 3, False), (4, 2, True), (3, 5, False),
                                                  (2, 1, False), (5, 3, True), (4, 0, False)])
def test_search_equals_the_tuple_search(beam, max_sym, runaway):
    """Same best hypothesis after every chunk, same hypotheses and scores after every frame, same n-best."""
    net = tiny(seed=beam + 10 * max_sym, runaway=runaway)
    h = frames(net, 120, seed=beam)
    old, new = TupleSearch(net, "en", beam, max_sym), StreamingBeamSearch(net, "en", beam, max_sym)
    emitted = False
    for start in range(0, len(h), 7):
        best = new.step(h[start:start + 7])
        assert isinstance(best, Prefix) and best.units() == old.step(h[start:start + 7]) == new.best()
        assert [(p.units(), s) for p, s in new.hyps.items()] == [(list(p), s) for p, s in old.hyps.items()]
        emitted |= best.length > 0
    assert new.final() == old.final() and new.frames == old.frames == 120
    assert emitted or max_sym == 0, "the random net should emit something"
    with cpu_kernels():  # the cached prediction outputs: the torch.lstm shortcut gives nn.LSTM's numbers exactly
        for p in new.hyps:
            assert torch.equal(new._cache[p][0], old._cache[tuple(p.units())][0])


def test_search_state_stays_bounded_and_symbols_per_frame_capped():
    """A model that never takes a blank voluntarily: every frame ends with max_sym_per_frame units (forced blank),
    and hypotheses and prediction cache stay bounded by the beam however far the search has gone; the best
    hypothesis is a node (listing its units on every step would cost O(length) a chunk)."""
    beam, max_sym = 3, 3
    net = tiny(seed=3, runaway=True)
    h = frames(net, 100)
    search = StreamingBeamSearch(net, "hi", beam, max_sym)
    for block in range(5):
        for start in range(0, len(h), 10):
            best = search.step(h[start:start + 10])
            assert isinstance(best, Prefix) and len(search.hyps) <= beam
            assert len(search._cache) <= beam * (1 + beam * max_sym) + 1
        assert best.length == search.frames * max_sym  # exactly the cap, never more
        assert all(p.length <= search.frames * max_sym for p in search.hyps)


def test_steps_never_list_a_hypothesis(monkeypatch):
    """Listing a hypothesis' units costs O(length): the search steps without it (only best() / final() list)."""
    net = tiny(seed=3, runaway=True)
    h = frames(net, 60)
    search = StreamingBeamSearch(net, "hi", 4, 3)
    units = Prefix.units
    monkeypatch.setattr(Prefix, "units", lambda self: pytest.fail("a step listed a hypothesis' units"))
    for start in range(0, len(h), 10):
        search.step(h[start:start + 10])
    monkeypatch.setattr(Prefix, "units", units)
    assert len(search.best()) == 180 and len(search.final()) == 4


def test_prefix_nodes_hash_and_compare_as_tuples():
    root = Prefix()
    a = Prefix(Prefix(Prefix(root, 1), 2), 3)
    b = Prefix(Prefix(Prefix(Prefix(), 1), 2), 3)  # the same units, other nodes (another root)
    c = Prefix(Prefix(root, 1), 2)
    assert a == b and hash(a) == hash(b) and a.units() == [1, 2, 3] and a.length == 3
    assert a != c and Prefix(c, 4) != a and Prefix(c, 3) == a and root.units() == [] and {a: 1}[b] == 1
    assert a != (1, 2, 3) and a != Prefix(Prefix(Prefix(root, 1), 3), 3)


def test_lid_free_equals_the_tuple_search():
    net = tiny(seed=5)
    x = torch.from_numpy(np.random.default_rng(5).standard_normal((400, 80)).astype(np.float32))
    old, new = TupleLidFree(net, 3, 3, 2, 0.5), LidFreeDecoder(net, 3, 3, 2, 0.5)
    for h, lp in encode_chunks(net, x, 10, with_lid=True):
        assert np.array_equal(old.step(h, lp), new.step(h, lp))
        assert new.running_leader()[0] == new.leader()[0] == old.leader()[0]
        np.testing.assert_allclose(new.running_leader()[1], new.leader()[1], rtol=1e-12)
        assert np.array_equal(new.running_leader()[2], new.leader()[2])
    a, b = old.result(), new.result()
    assert (a.lang, a.nbest, a.active_frames.tolist()) == (b.lang, b.nbest, b.active_frames.tolist())
    assert np.array_equal(a.avg_post, b.avg_post) and b.active_frames.min() < b.frames  # one was switched off


@pytest.mark.parametrize("chunk", [1, 4, 10])
def test_block_encoding_equals_one_pass(chunk):
    """Stacking + encoder + LID chunk by chunk over features that arrive in uneven blocks: the same tensors as
    decode.iter_encode over the whole input (frames not a multiple of the 3-frame stride included)."""
    net = tiny(seed=chunk)
    x = torch.from_numpy(np.random.default_rng(chunk).standard_normal((301, 80)).astype(np.float32))
    whole = encode_chunks(net, x, chunk, with_lid=True)
    cuts = [0, 1, 2, 17, 18, 95, 160, 161, 250, 301]
    blocks = [x[a:b] for a, b in zip(cuts, cuts[1:])]
    got = list(iter_encode_blocks(net, blocks, chunk, with_lid=True))
    assert len(got) == len(whole)
    for (h, lp), (h2, lp2, fed) in zip(whole, got):
        assert torch.equal(h, h2) and torch.equal(lp, lp2)
    assert got[-1][2] == 301
    one = list(iter_encode_blocks(net, [x], chunk))  # a single block (an input up to 60 s)
    assert all(torch.equal(h, h2) for (h, _), (h2, _, _) in zip(whole, one))


def test_block_features_equal_one_pass():
    cfg = FeatConfig("logmel", 16000, 25.0, 10.0, 512, 80, 13)
    wave = np.random.default_rng(0).normal(0, 0.1, 16000 * 3 + 123).astype(np.float32)
    whole = compute(wave, cfg)
    cuts = [0, 5000, 5001, 16000, 40000, len(wave)]
    got = np.concatenate(list(block_features((wave[a:b] for a, b in zip(cuts, cuts[1:])), cfg)))
    assert got.shape == whole.shape
    np.testing.assert_allclose(got, whole, atol=1e-4)


def test_partial_text_updates_equal_units_to_text_and_script_lid():
    names = TOKENS[UNION]
    by_script = {lang: TOKENS[lang] for lang in LANGS}
    rng = np.random.default_rng(0)
    text, node, keep = _BestText(names, by_script), Prefix(), []
    assert text(node) == "" and text.language() is None
    for _ in range(300):
        if keep and rng.random() < 0.3:  # the best hypothesis switches to another branch
            node = keep[rng.integers(len(keep))]
        for _ in range(rng.integers(0, 4)):
            node = Prefix(node, int(rng.integers(1, len(names))))
        keep.append(node)
        units = [names[u] for u in node.units()]
        assert text(node) == units_to_text(units) and text.language() == lang_by_script(units, by_script)


# ----------------------------------------------------------------------------- audio checks of a long input

@pytest.fixture(scope="module")
def s2t(tmp_path_factory):
    """A tiny random packed multisoftmax_lid model (test_multisoftmax_inference's), 16 kHz log-mels."""
    from local_models.multisoftmax.pack import pack_system

    root = tmp_path_factory.mktemp("indic")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SPEECH_RECIPES_CACHE", str(root / "cache"))
        recipe = make_recipe(root, {"multisoftmax_lid": SYSTEMS["multisoftmax_lid"]})
        yield Speech2Text.from_pretrained(pack_system(recipe, "multisoftmax_lid", root / "lid.tar.gz"))


def test_silent_long_input_fails_as_a_short_one(s2t, tmp_path):
    """A silent 59 s file (read whole) and a silent 61 s one (read in 10 s blocks, each block allowed to be a
    pause): the same error."""
    errors = {}
    for seconds in (59, 61):
        path = tmp_path / f"silent{seconds}.wav"
        soundfile.write(path, np.zeros(16000 * seconds, np.float32), 16000)
        with pytest.raises(AudioError) as e:
            s2t(path)
        errors[seconds] = str(e.value).replace(str(path), "<input>")
    assert 59 < LONG_S < 61 and errors[61] == errors[59] == "<input>: silent (every sample below -100 dBFS)"


def clipped_input(tmp_path, name, clipped_s, seconds=70):
    """SECONDS of speech-like 16 kHz audio whose first CLIPPED_S seconds from 20 s are a full-scale square wave."""
    path = speech_wav(tmp_path / name, sr=16000, seconds=seconds, seed=4)
    wave, _ = soundfile.read(path, dtype="float32")
    t = np.arange(16000 * clipped_s)
    wave[16000 * 20:16000 * (20 + clipped_s)] = np.where(t // 40 % 2, 1.0, -1.0)
    soundfile.write(path, wave, 16000)
    return path


def test_long_input_clipping_is_judged_over_the_whole_input(s2t, tmp_path, caplog):
    """70 s with one fully clipped 10 s block (14.3 % of the input): decoded, with one warning (not refused by that
    block, not warned about per block); 70 s with 40 s clipped (57.1 %): refused, naming the whole input's share."""
    path = clipped_input(tmp_path, "clip10.wav", 10)
    with caplog.at_level(logging.WARNING):
        hyps = s2t(path)
    warnings = [r.getMessage() for r in caplog.records if "clipped" in r.getMessage()]
    assert hyps and warnings == [f"warning: {path}: clipped (14.3 % of samples at full scale): results may suffer; "
                                 "lower the recording level"]
    path = clipped_input(tmp_path, "clip40.wav", 40)
    with pytest.raises(AudioError, match=r"clip40.wav: clipped \(57.1 % of samples at full scale; at most 50 %"):
        s2t(path)
