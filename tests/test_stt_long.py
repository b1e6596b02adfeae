"""speech-to-text on inputs of any length (issue #52; local_models/multisoftmax/inference.py), on a tiny random
multilingual RNN-T: the long-form search is decode.StreamingBeamSearch step for step, with hypothesis and cache
sizes bounded by the beam and never more than max_sym_per_frame units a frame however long the input; features,
stacking and encoding block by block equal the one-pass ones; streaming partial texts equal units_to_text."""
import numpy as np
import pytest
import torch

from local_models.common.features import FeatConfig, compute
from local_models.multisoftmax.decode import LidFreeDecoder, StreamingBeamSearch, encode_chunks, lang_by_script
from local_models.multisoftmax.inference import (LongFormLidFree, LongFormSearch, _BestText, _Prefix, block_features,
                                                 iter_encode_blocks)
from local_models.multisoftmax.model import UNION, MultilingualTransducer
from local_models.multisoftmax.units import units_to_text

torch.set_num_threads(1)
LANGS = ["en", "hi"]
UNITS = {"en": ["a", "b", "B_a", "B_b"], "hi": ["क", "ख", "B_क", "B_ख"]}
TOKENS = {**{lang: ["<blank>", *u, "<unk>"] for lang, u in UNITS.items()},
          UNION: ["<blank>", *UNITS["en"], *UNITS["hi"], "<unk>"]}
TINY = dict(enc_layers=1, enc_units=24, pred_layers=1, pred_units=24, embed_dim=8, joint_dim=24, lid_hidden=8)


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


@pytest.mark.parametrize("beam,max_sym,runaway", [(1, 3, False), (4, 3, False), (4, 2, True), (3, 5, False)])
def test_long_form_search_is_the_recipes_search(beam, max_sym, runaway):
    net = tiny(seed=beam, runaway=runaway)
    h = frames(net, 120, seed=beam)
    old, new = StreamingBeamSearch(net, "en", beam, max_sym), LongFormSearch(net, "en", beam, max_sym)
    for start in range(0, len(h), 7):
        old.step(h[start:start + 7])
        assert new.step(h[start:start + 7]).units() == old.best()
    assert new.final() == old.final() and new.frames == old.frames == 120


def test_search_state_stays_bounded_and_symbols_per_frame_capped():
    """A model that never takes a blank voluntarily: every frame ends with max_sym_per_frame units (forced blank),
    and hypotheses and prediction cache stay bounded by the beam however far the search has gone; the best
    hypothesis is a node (the recipe's search lists its units on every step: O(length) a chunk)."""
    beam, max_sym = 3, 3
    net = tiny(seed=3, runaway=True)
    h = frames(net, 100)
    search = LongFormSearch(net, "hi", beam, max_sym)
    for block in range(5):
        for start in range(0, len(h), 10):
            best = search.step(h[start:start + 10])
            assert isinstance(best, _Prefix) and len(search.hyps) <= beam
            assert len(search._cache) <= beam * (1 + beam * max_sym) + 1
        assert best.length == search.frames * max_sym  # exactly the cap, never more
        assert all(p.length <= search.frames * max_sym for p in search.hyps)


def test_prefix_nodes_hash_and_compare_as_tuples():
    root = _Prefix()
    a = _Prefix(_Prefix(_Prefix(root, 1), 2), 3)
    b = _Prefix(_Prefix(_Prefix(root, 1), 2), 3)  # the same units, other nodes
    c = _Prefix(_Prefix(root, 1), 2)
    assert a == b and hash(a) == hash(b) and a.units() == [1, 2, 3] and a.length == 3
    assert a != c and _Prefix(c, 4) != a and root.units() == [] and {a: 1}[b] == 1


def test_lid_free_long_form_equals_the_recipes():
    net = tiny(seed=5)
    x = torch.from_numpy(np.random.default_rng(5).standard_normal((400, 80)).astype(np.float32))
    old, new = LidFreeDecoder(net, 3, 3, 2, 0.5), LongFormLidFree(net, 3, 3, 2, 0.5)
    for h, lp in encode_chunks(net, x, 10, with_lid=True):
        assert np.array_equal(old.step(h, lp), new.step(h, lp))
        assert new.running_leader()[0] == old.leader()[0]
        np.testing.assert_allclose(new.running_leader()[1], old.leader()[1], rtol=1e-12)
    a, b = old.result(), new.result()
    assert (a.lang, a.nbest, a.active_frames.tolist()) == (b.lang, b.nbest, b.active_frames.tolist())


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
    text, node, keep = _BestText(names, by_script), _Prefix(), []
    assert text(node) == "" and text.language() is None
    for _ in range(300):
        if keep and rng.random() < 0.3:  # the best hypothesis switches to another branch
            node = keep[rng.integers(len(keep))]
        for _ in range(rng.integers(0, 4)):
            node = _Prefix(node, int(rng.integers(1, len(names))))
        keep.append(node)
        units = [names[u] for u in node.units()]
        assert text(node) == units_to_text(units) and text.language() == lang_by_script(units, by_script)
