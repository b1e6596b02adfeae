"""egs/indic/asr1 decoding (local_models.multisoftmax.decode, local_models.bin.multisoftmax_decode) on tiny random
models: streaming = full-utterance decode, beam 1 = greedy, search scores against a brute-force forward over
the (T, U) lattice, the early switch-off rule (paper eq. 1-2), switched-off decoders not stepped, script LID
of vanilla hypotheses, and the CLI on an exp dir saved as ESPnet saves it.

Which score the search computes: every frame a hypothesis emits <= max_sym_per_frame units then a blank, and
hypotheses with the same prefix are merged by log-sum-exp, so a hypothesis' score is the summed probability of
its alignments that survived pruning, with <= max_sym_per_frame units per frame. With a beam wide enough to
prune nothing it must equal the forward algorithm over the lattice with that per-frame cap (and, with a cap
>= U, torchaudio's RNN-T loss); with pruning it is a lower bound of it.
"""
import json
import math
from pathlib import Path

import kaldiio
import numpy as np
import pytest
import torch
import yaml

from local_models.bin import multisoftmax_decode
from local_models.multisoftmax import units as U
from local_models.multisoftmax.decode import (LidFreeDecoder, StreamingBeamSearch, decode_full, decode_utterance,
                                              encode_chunks, lang_by_script, SwitchOff, switch_off_frames, t_avg)
from local_models.multisoftmax.inference import NO_LANG
from local_models.multisoftmax.model import UNION, MultilingualTransducer

torch.set_num_threads(1)
LANGS = ["en", "hi", "ta"]
TEXTS = {"en": "ab ba", "hi": "कख खक", "ta": "கங"}  # tiny grapheme inventories, distinct scripts
TINY = dict(enc_layers=2, enc_units=32, pred_layers=1, pred_units=32, embed_dim=16, joint_dim=32, lid_hidden=16)


@pytest.fixture(scope="module")
def units_dir(tmp_path_factory):
    """data/lang as stage 3 writes it: <lang>/units.txt and union/units.txt."""
    d = tmp_path_factory.mktemp("lang")
    vocabs = {lang: U.build_vocab([t]) for lang, t in TEXTS.items()}
    for lang, vocab in vocabs.items():
        U.write_units(d / lang / "units.txt", vocab)
    U.write_units(d / UNION / "units.txt", U.union_vocab(vocabs.values()))
    return d


@pytest.fixture(scope="module")
def token_lists(units_dir):
    from local_models.multisoftmax.task import read_token_lists

    return read_token_lists(units_dir, LANGS)


def tiny(token_lists, system="multisoftmax", seed=0, **kw):
    torch.manual_seed(seed)
    return liven(MultilingualTransducer(LANGS, token_lists, system=system, **TINY, **kw).eval())


@torch.no_grad()
def liven(net):
    """Sharper joint outputs than a fresh init's near-uniform ones, so that the search has choices to make."""
    for head in net.heads.values():
        for layer, gain in ((head.joint.enc, 4.0), (head.joint.pred, 4.0), (head.joint.out, 6.0)):
            layer.weight.mul_(gain)
    return net


def feats(T=60, seed=0):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal((T, 80)).astype(np.float32))


def encoder_frames(net, x):
    return torch.cat([h for h, _ in encode_chunks(net, x, chunk=1000)])


# ----------------------------------------------------------------------------- streaming = full

@pytest.mark.parametrize("beam", [1, 4])
def test_streaming_equals_full_utterance(token_lists, beam):
    net, x = tiny(token_lists, seed=1), feats(T=70)
    full = decode_full(net, x, "hi", beam=beam)
    assert full[0][0], "a random model should emit something"
    for chunk in (1, 3, 7):
        stream = decode_utterance(net, x, "hi", beam=beam, chunk=chunk)
        assert [u for u, _ in stream] == [u for u, _ in full]
        np.testing.assert_allclose([s for _, s in stream], [s for _, s in full], atol=1e-4)


def test_generic_joint_path_gives_the_same(token_lists, monkeypatch):
    """The search projects frames and prefixes once when the head's joint is model.Joint; any other joint
    goes through model.joint_log_probs: both give the same n-best."""
    from local_models.multisoftmax import decode

    net, x = tiny(token_lists, seed=1), feats(T=40)
    fast = decode_utterance(net, x, "ta", beam=3, chunk=5)
    monkeypatch.setattr(decode, "Joint", type("OtherJoint", (), {}))
    generic = decode_utterance(net, x, "ta", beam=3, chunk=5)
    assert [u for u, _ in fast] == [u for u, _ in generic]
    np.testing.assert_allclose([s for _, s in fast], [s for _, s in generic], atol=1e-4)


def test_step_returns_best_so_far_and_counts_frames(token_lists):
    net = tiny(token_lists)
    h = encoder_frames(net, feats(T=30))
    search = StreamingBeamSearch(net, "en", beam=3)
    best = search.step(h[:4])  # a prefix-tree node (listing its units every chunk would cost O(length))
    assert best.units() == search.best() == search.final()[0][0] and best.length == len(search.best())
    assert search.frames == 4 and search.cpu_s >= 0
    search.step(h[4:])
    assert search.frames == len(h) and len(search.final()) <= 3


# ----------------------------------------------------------------------------- scores vs brute force

def lattice_log_probs(net, head, h, y):
    """(S, U+1, V) joint log-probs of every (frame, prefix length) node, prediction net run over the whole
    sequence at once (not through the search's per-prefix cache)."""
    seq = torch.tensor([[0] + list(y)])
    g, _ = net._pred_net(head)(net.heads[head].embed(seq))
    return net.joint_log_probs(head, h[:, None, :], g[0][None]).double()


def forward_log_prob(net, head, h, y, cap):
    """log P(y | x) summed over all alignments with <= cap units per frame (each frame ends with a blank)."""
    lp = lattice_log_probs(net, head, h, y)
    Ulen = len(y)
    alpha = [0.0] + [-math.inf] * Ulen
    for t in range(len(h)):
        new = [-math.inf] * (Ulen + 1)
        for u in range(Ulen + 1):
            acc = alpha[u]
            for k in range(cap + 1):  # emit y[u:u+k] in frame t, then the blank
                if u + k > Ulen or acc == -math.inf:
                    break
                new[u + k] = np.logaddexp(new[u + k], acc + float(lp[t, u + k, 0]))
                if u + k < Ulen:
                    acc += float(lp[t, u + k, y[u + k]])
        alpha = new
    return alpha[Ulen]


def simple_greedy(net, head, h, max_sym):
    """Textbook greedy: argmax each step; after max_sym units the frame's blank is forced."""
    y, score = [], 0.0
    state = net.pred_init_state(head, 1)
    g, state = net.pred_step(head, torch.zeros(1, dtype=torch.long), state)
    for t in range(len(h)):
        for n in range(max_sym + 1):
            lp = net.joint_log_probs(head, h[t][None], g)[0].double()
            k = 0 if n == max_sym else int(lp.argmax())
            score += float(lp[k])
            if k == 0:
                break
            y.append(k)
            g, state = net.pred_step(head, torch.tensor([k]), state)
    return y, score


@torch.no_grad()
def test_scores_match_brute_force_forward(token_lists):
    # a vocabulary of 3 units (+ blank), 3 frames, <= 2 units a frame: at most 1093 prefixes, beam 5000 prunes none
    small = dict(token_lists, en=["<blank>", "a", "B_a", "<unk>"])
    net = tiny(small, seed=3)
    h = encoder_frames(net, feats(T=9, seed=3))
    assert len(h) == 3
    exhaustive = StreamingBeamSearch(net, "en", beam=5000, max_sym_per_frame=2)
    exhaustive.step(h)
    nbest = exhaustive.final()
    assert len(nbest) == sum(3 ** n for n in range(7))  # every prefix of <= 6 units survives
    for y, score in nbest[:5] + nbest[-3:]:
        assert score == pytest.approx(forward_log_prob(net, "en", h, y, cap=2), abs=1e-5)
    # a proper sub-distribution: alignments that would emit a 3rd unit in a frame are not counted
    assert np.logaddexp.reduce([s for _, s in nbest]) < 0

    # the reference itself: with no cap it is torchaudio's RNN-T loss
    y = nbest[0][0] or [1]
    union_ids = torch.tensor([[net.token_lists[UNION].index(small["en"][i]) for i in y]])
    nll = net.head_loss("en", h[None], torch.tensor([len(h)]), union_ids, torch.tensor([len(y)]))
    assert forward_log_prob(net, "en", h, y, cap=len(y)) == pytest.approx(-float(nll), abs=1e-4)

    greedy = StreamingBeamSearch(net, "en", beam=1, max_sym_per_frame=2)
    greedy.step(h)
    (gy, gscore), = greedy.final()
    ref_y, ref_score = simple_greedy(net, "en", h, 2)
    assert gy == ref_y and gscore == pytest.approx(ref_score, abs=1e-5)
    assert nbest[0][1] >= gscore  # the best full-sum score beats any single alignment


@torch.no_grad()
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_beam_vs_greedy_and_lower_bound(token_lists, seed):
    net = tiny(token_lists, seed=seed)
    h = encoder_frames(net, feats(T=45, seed=seed))
    greedy_y, greedy_s = decode_full(net, feats(T=45, seed=seed), "hi", beam=1)[0]
    assert (greedy_y, pytest.approx(greedy_s, abs=1e-5)) == simple_greedy(net, "hi", h, 3)
    y, s = decode_full(net, feats(T=45, seed=seed), "hi", beam=4)[0]
    assert s >= greedy_s - 1e-6  # (beam search does not guarantee this; it holds on these fixed seeds)
    assert s <= forward_log_prob(net, "hi", h, y, cap=3) + 1e-6  # pruned alignments: a lower bound


# ----------------------------------------------------------------------------- switch-off rule

def test_switch_off_rule_hand_made():
    # scores are plain numbers here: s_0(t) = -(t+1), s_1(t) = -2(t+1), s_2(t) = -4(t+1)
    lp = np.tile([-1.0, -2.0, -4.0], (6, 1))
    # lang 1 falls behind by t+1, lang 2 by 3(t+1); strict "<": lang 1 is off when t+1 > 2, i.e. t = 2
    assert switch_off_frames(lp, tau=-1, s_th=2).tolist() == [6, 2, 0]
    assert switch_off_frames(lp, tau=0, s_th=2).tolist() == [6, 2, 1]  # t > tau: not before frame 1
    assert switch_off_frames(lp, tau=3, s_th=2).tolist() == [6, 4, 4]
    assert switch_off_frames(lp, tau=0, s_th=5).tolist() == [6, 5, 1]  # t+1 > 5 from t = 5, 3(t+1) from t = 1
    for tau, s_th in ((math.inf, 0.0), (0, math.inf), (math.inf, math.inf)):
        active = switch_off_frames(lp, tau, s_th)
        assert active.tolist() == [6, 6, 6] and t_avg(active, 6) == 3.0  # = L: every decoder all the time
    assert t_avg(switch_off_frames(lp, tau=0, s_th=2), 6) == pytest.approx(9 / 6)
    # off is for good, even if the language takes the lead later: the max is over the decoders still on, so
    # the last one is never turned off (over all languages, lang 1 would go at frame 6 and leave none)
    late = np.array([[-5.0, -0.1]] * 3 + [[-0.01, -5.0]] * 10)
    assert switch_off_frames(late, tau=1, s_th=1.0).tolist() == [2, 13]
    rule = SwitchOff(2, tau=1, s_th=1.0)  # streaming, chunk by chunk: the same
    assert [rule.update(late[a:a + 4]).tolist() for a in range(0, 13, 4)] == [[2, 4], [2, 8], [2, 12], [2, 13]]
    # causal: the rule on the frames seen so far gives the same off-times, cut at the frames seen
    full = switch_off_frames(late, tau=0, s_th=0.5)
    for n in range(1, len(late) + 1):
        assert switch_off_frames(late[:n], tau=0, s_th=0.5).tolist() == np.minimum(full, n).tolist()
    with pytest.raises(ValueError):
        switch_off_frames(lp, tau=1, s_th=-0.1)


# ----------------------------------------------------------------------------- LID-free decoding

def hand_made_lid(S):
    """en (id 0) and ta unlikely for 5 frames, then en very likely: en leads the average posterior."""
    p = np.array([[0.01, 0.98, 0.01]] * 5 + [[0.9, 0.05, 0.05]] * (S - 5))
    return torch.from_numpy(np.log(p))


@torch.no_grad()
def test_switched_off_decoder_is_not_stepped_nor_chosen(token_lists, monkeypatch):
    net = tiny(token_lists, lid=True)
    chunks = encode_chunks(net, feats(T=60), chunk=4, with_lid=True)
    h = torch.cat([c for c, _ in chunks])
    S = len(h)
    lid = hand_made_lid(S)
    calls = {}
    predict = StreamingBeamSearch._predict

    def counting_predict(search, prefixes, state, tokens):  # the search's one call of the prediction network
        calls[search.head] = calls.get(search.head, 0) + 1
        return predict(search, prefixes, state, tokens)

    monkeypatch.setattr(StreamingBeamSearch, "_predict", counting_predict)

    def run(tau, s_th):
        calls.clear()
        dec, start = LidFreeDecoder(net, beam=3, tau=tau, s_th=s_th), 0
        for c, _ in chunks:
            dec.step(c, lid[start:start + len(c)])
            start += len(c)
        return dec.result(), dict(calls)

    res, all_calls = run(math.inf, math.inf)
    assert res.lang == "en" and res.active_frames.tolist() == [S] * 3 and res.t_avg == 3
    for lang in LANGS:  # the shared encoder pass gives each language what its own decode gives
        alone = decode_utterance(net, feats(T=60), lang, beam=3, chunk=4)
        assert res.nbest[lang][0][0] == alone[0][0]

    res, off_calls = run(2, 1.0)  # en and ta off at frame 3 (t > 2, far behind hi), in the first chunk
    assert res.active_frames.tolist() == [3, S, 3] and res.t_avg == pytest.approx((6 + S) / S)
    assert res.lang == "hi"  # en has the highest average posterior but was switched off
    assert res.avg_post[0] > res.avg_post[1]
    calls.clear()
    StreamingBeamSearch(net, "en", beam=3).step(h[:3])  # what 3 frames of en cost
    assert off_calls["en"] == calls["en"] < all_calls["en"]
    assert off_calls["hi"] == all_calls["hi"]
    # its CPU time is kept per language (no timing comparison here: a test asserts calls, benchmarks time)
    assert set(res.cpu_s) == set(LANGS) and all(s >= 0 for s in res.cpu_s.values())


# ----------------------------------------------------------------------------- script LID

def test_vanilla_lid_by_script(token_lists):
    lists = {lang: token_lists[lang] for lang in LANGS}
    assert lang_by_script(["B_a", "b", "B_b"], lists) == "en"
    assert lang_by_script(["B_क", "ख"], lists) == "hi"
    assert lang_by_script(["B_க", "ங", "B_a"], lists) == "ta"  # majority
    assert lang_by_script(["B_a", "क"], lists) is None  # tie
    assert lang_by_script([], lists) is None
    assert lang_by_script(["<unk>", "<blank>"], lists) is None
    assert lang_by_script(["z"], lists) is None  # in no list


# ----------------------------------------------------------------------------- CLI

def save_exp(d: Path, token_lists, system, **kw):
    """An exp dir as ESPnet's trainer leaves it: config.yaml (model + model_conf) and the state dict."""
    from local_models.multisoftmax.task import TransducerModel

    conf = dict(langs=LANGS, token_lists=token_lists, system=system, **TINY, **kw)
    torch.manual_seed(0)
    model = TransducerModel(**conf)
    d.mkdir(parents=True)
    (d / "config.yaml").write_text(yaml.safe_dump(dict(model="transducer", model_conf=conf), allow_unicode=True),
                                   encoding="utf-8")
    torch.save(model.state_dict(), d / "valid.loss.best.pth")
    return d


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    rng = np.random.default_rng(1)
    utts = {f"utt{i}": rng.standard_normal((int(n), 80)).astype(np.float32) for i, n in enumerate([40, 61, 33])}
    kaldiio.save_ark(str(d / "feats.ark"), utts, scp=str(d / "feats.scp"))
    (d / "utt2lid").write_text("utt0 en\nutt1 hi\nutt2 ta\n")
    (d / "utt2lid_short").write_text("utt0 en\nutt2 ta\n")
    return d


def table(path):
    return dict((line.split(" ", 1) + [""])[:2] for line in path.read_text(encoding="utf-8").splitlines())


def test_cli_lidfree_grid_and_known(tmp_path, token_lists, corpus, capsys):
    exp = save_exp(tmp_path / "exp" / "ms_lid", token_lists, "multisoftmax", lid=True)
    base = ["--model_dir", str(exp), "--feats", str(corpus / "feats.scp"), "--beam", "2", "--chunk", "3"]
    out = tmp_path / "dec_lidfree"
    assert multisoftmax_decode.main(base + ["--utt2lid", str(corpus / "utt2lid"), "--mode", "lidfree",
                                     "--switch_off_grid", "inf:inf 1:0", str(out)]) == 0
    grid = json.loads((out / "switchoff" / "switch_off_grid.json").read_text())
    assert [Path(g["dir"]).name for g in grid] == ["inf_inf", "1_0"]
    assert (out / "hyp").read_text() == (out / "switchoff" / "inf_inf" / "hyp").read_text()
    for d, expect_all in ((out, True), (out / "switchoff" / "inf_inf", True), (out / "switchoff" / "1_0", False)):
        for name in ("hyp_units", "hyp", "hyp_lang", "hyp_oracle", "lid_post", "decoder_frames"):
            assert list(table(d / name)) == ["utt0", "utt1", "utt2"], name
        hyp_units, hyp = table(d / "hyp_units"), table(d / "hyp")
        assert all(U.units_to_text(hyp_units[u].split()) == hyp[u] for u in hyp)
        assert set(table(d / "hyp_lang").values()) <= set(LANGS)
        posts = [list(map(float, v.split())) for v in table(d / "lid_post").values()]
        assert all(len(p) == 3 and abs(sum(p) - 1) < 1e-3 for p in posts)
        frames = {u: list(map(int, v.split())) for u, v in table(d / "decoder_frames").items()}
        assert frames["utt1"][0] == 21 and all(len(f) == 4 for f in frames.values())
        stats = json.loads((d / "decode_stats.json").read_text())
        assert stats["utterances"] == 3 and stats["langs"] == LANGS and stats["decoder_cpu_s"] >= 0
        assert stats["encoder_cpu_s"] >= 0
        # LID accuracy: the share of utterances whose chosen language (hyp_lang) is utt2lid's
        truth, chosen = table(corpus / "utt2lid"), table(d / "hyp_lang")
        assert stats["lid_accuracy"] == pytest.approx(sum(chosen[u] == truth[u] for u in truth) / 3)
        # T_avg (paper eq. 2) per utterance: the decoders' active frames over the utterance's, then the mean
        assert stats["T_avg"] == pytest.approx(np.mean([sum(f[1:]) / f[0] for f in frames.values()]))
        assert stats["active_frames"] == sum(sum(f[1:]) for f in frames.values())
        if expect_all:
            assert stats["T_avg"] == 3 and stats["tau"] == "inf"
            assert all(f[1:] == [f[0]] * 3 for f in frames.values())
        else:  # s_th = 0: every decoder but the leader stops after frame 1
            assert all(sorted(f[1:]) == [2, 2, f[0]] for f in frames.values())
            assert stats["T_avg"] < 3

    out = tmp_path / "dec_known"
    assert multisoftmax_decode.main(base + ["--utt2lid", str(corpus / "utt2lid"), "--out_dir", str(out)]) == 0
    assert table(out / "hyp_lang") == {"utt0": "en", "utt1": "hi", "utt2": "ta"}
    assert not (out / "lid_post").exists()
    # known-language hypotheses use only that language's units
    for utt, units in table(out / "hyp_units").items():
        assert set(units.split()) <= set(token_lists[table(out / "hyp_lang")[utt]])

    capsys.readouterr()
    assert multisoftmax_decode.main(base + ["--utt2lid", str(corpus / "utt2lid_short"), "--out_dir",
                                     str(tmp_path / "bad")]) == 1
    err = capsys.readouterr().err
    assert "utt2lid_short" in err and "utt1" in err
    assert not (tmp_path / "bad").exists()


def test_cli_onehot_and_mono_known(tmp_path, token_lists, corpus, capsys):
    common = ["--feats", str(corpus / "feats.scp"), "--utt2lid", str(corpus / "utt2lid"), "--beam", "2"]
    exp = save_exp(tmp_path / "exp" / "onehot", token_lists, "onehot")
    assert multisoftmax_decode.main(["--model_dir", str(exp), "--out_dir", str(tmp_path / "d1")] + common) == 0
    assert set(table(tmp_path / "d1" / "hyp")) == {"utt0", "utt1", "utt2"}
    exp = save_exp(tmp_path / "exp" / "mono_hi", token_lists, "mono", lang="hi")
    capsys.readouterr()
    assert multisoftmax_decode.main(["--model_dir", str(exp), "--out_dir", str(tmp_path / "d2")] + common) == 1
    err = capsys.readouterr().err
    assert "utt0" in err and "mono model decodes hi only" in err


def test_cli_vanilla_lidfree_and_errors(tmp_path, token_lists, corpus, capsys):
    exp = save_exp(tmp_path / "exp" / "vanilla", token_lists, "vanilla")
    out = tmp_path / "dec"
    args = ["--model_dir", str(exp), "--feats", str(corpus / "feats.scp"), "--utt2lid", str(corpus / "utt2lid"),
            "--mode", "lidfree", "--beam", "1", "--out_dir", str(out)]
    assert multisoftmax_decode.main(args) == 0
    langs = table(out / "hyp_lang")
    units = table(out / "hyp_units")
    for utt, lang in langs.items():
        lists = {lang: token_lists[lang] for lang in LANGS}
        assert lang == (lang_by_script(units[utt].split(), lists) or NO_LANG)
    assert json.loads((out / "decode_stats.json").read_text())["T_avg"] == 1
    # LID-free needs no utt2lid: the same hypotheses and languages, LID accuracy not scored
    bare = tmp_path / "bare"
    assert multisoftmax_decode.main([a for a in args if a not in ("--utt2lid", str(corpus / "utt2lid"))][:-1] + [str(bare)]) == 0
    assert table(bare / "hyp") == table(out / "hyp") and table(bare / "hyp_lang") == langs
    assert json.loads((bare / "decode_stats.json").read_text())["lid_accuracy"] is None
    assert "LID accuracy not scored (no --utt2lid)" in capsys.readouterr().err
    capsys.readouterr()
    assert multisoftmax_decode.main(args + ["--switch_off_grid", "30:0.5"]) == 1  # no LID head
    assert "switch_off_grid" in capsys.readouterr().err
    assert multisoftmax_decode.main(args + ["--tau", "30", "--s_th", "0.5"]) == 1
    assert "--tau" in capsys.readouterr().err
    exp = save_exp(tmp_path / "exp" / "ms", token_lists, "multisoftmax")
    assert multisoftmax_decode.main(["--model_dir", str(exp)] + args[2:]) == 1
    assert "LID head" in capsys.readouterr().err
    assert multisoftmax_decode.main(["--model_dir", str(tmp_path / "nowhere")] + args[2:]) == 1
    assert "config.yaml" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # the output dir twice (positional and --out_dir)
        multisoftmax_decode.main(args + [str(out)])
