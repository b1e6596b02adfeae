"""JDI-T (paper 002): forward attention, durations from attention, the model's losses and synthesis, and the
ESPnet2 plug-in (train through the CLI on a fake corpus, resume, load with Text2Speech)."""
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from local_models.jdit.attention import (ContentAttention, durations_from_attention, forward_attention, viterbi_durations,
                                         viterbi_path)
from local_models.jdit.model import JDIT, aligner_durations

torch.set_num_threads(1)  # the machine's 2 cores are shared; tiny tensors gain nothing from threads
ROOT = Path(__file__).resolve().parents[1]
TINY_CONF = ROOT / "egs/kss/tts1/conf/tuning/train_jdit_tiny.yaml"
TINY = dict(adim=16, aheads=2, elayers=1, eunits=16, dlayers=1, dunits=16, embed_dim=16, eprenet_conv_chans=16,
            dprenet_units=16, aligner_heads=2, aligner_units=32, duration_predictor_chans=16)


def reference_forward_attention(w, u=None):
    """Algorithm 1 as written, in plain Python: w is T lists of N weights; u (T move probabilities) adds the
    transition agent of Zhang et al.: stay weighted by 1 - u_t, move by u_t."""
    N = len(w[0])
    alpha = [1.0] + [0.0] * (N - 1)
    out = []
    for t, w_t in enumerate(w):
        stay, move = (1.0, 1.0) if u is None else (1.0 - u[t], u[t])
        new = [(stay * alpha[n] + move * (alpha[n - 1] if n > 0 else 0.0)) * w_t[n] for n in range(N)]
        total = sum(new)
        alpha = [a / total for a in new]
        out.append(alpha)
    return out


def test_forward_attention_matches_the_algorithm_and_masks_padding():
    torch.manual_seed(0)
    att = ContentAttention(8)
    s, h = torch.randn(2, 12, 8), torch.randn(2, 5, 8)
    h_mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    context, alpha = att(s, h, h_mask)
    assert context.shape == (2, 12, 8) and alpha.shape == (2, 12, 5)
    log_w = att.log_weights(s, h, h_mask)
    for b, n in enumerate((5, 3)):
        w = torch.softmax(log_w[b, :, :n].double(), dim=-1).tolist()  # the real tokens' content weights
        want = torch.tensor(reference_forward_attention(w), dtype=alpha.dtype)
        assert torch.allclose(alpha[b, :, :n], want, atol=1e-5)
    assert (alpha[1, :, 3:] == 0).all()
    assert torch.allclose(alpha.sum(-1), torch.ones(2, 12), atol=1e-5)
    # support: frame t (0-based) can only have reached token t + 1
    reach = torch.arange(5)[None, :] > torch.arange(12)[:, None] + 1
    assert (alpha[:, reach] == 0).all()


def test_forward_attention_with_transition_agent_matches_the_loop():
    torch.manual_seed(0)
    att = ContentAttention(8, transition_agent=True)
    s, h = torch.randn(1, 15, 8), torch.randn(1, 6, 8)
    h_mask = torch.ones(1, 6, dtype=torch.bool)
    _, alpha = att(s, h, h_mask)
    w = torch.softmax(att.log_weights(s, h, h_mask)[0].double(), dim=-1).tolist()
    u = torch.sigmoid(att.transition(s)[0, :, 0].double()).tolist()
    want = torch.tensor(reference_forward_attention(w, u), dtype=alpha.dtype)
    assert torch.allclose(alpha[0], want, atol=1e-5) and not torch.allclose(alpha[0], torch.tensor(
        reference_forward_attention(w), dtype=alpha.dtype), atol=1e-3)
    # an untrained JDIT moves at the prior rate: with uniform content weights, about move_prior tokens per frame
    model = JDIT(idim=10, odim=4, aligner_transition_agent=True, aligner_move_prior=0.2, **TINY)
    ta = model.aligner.src_attn.transition
    assert torch.allclose(torch.sigmoid(ta(torch.randn(3, 16))), torch.tensor(0.2))
    a = forward_attention(torch.full((1, 200, 60), -math.log(60.0)), ta(torch.randn(1, 200, 16)).squeeze(-1))
    mean_pos = (a[0] * torch.arange(60.0)).sum(-1)
    assert abs(float(mean_pos[-1]) / 200 - 0.2) < 0.02


def test_forward_attention_gradients_stay_finite_with_padding_and_sharp_energies():
    torch.manual_seed(0)
    energies = (30 * torch.randn(2, 40, 6)).requires_grad_()
    mask = torch.tensor([[True] * 6, [True] * 2 + [False] * 4])
    log_w = torch.log_softmax(energies.masked_fill(~mask[:, None], -1e30), dim=-1)
    alpha = forward_attention(log_w)
    (alpha * torch.randn_like(alpha)).sum().backward()
    assert torch.isfinite(alpha).all() and torch.isfinite(energies.grad).all()
    assert torch.allclose(alpha.sum(-1), torch.ones(2, 40), atol=1e-5)


def test_forward_attention_is_exact_where_float32_probabilities_underflow():
    # energy gaps of hundreds: the weights are below float32's smallest number (1e-45), float64 still has them
    torch.manual_seed(0)
    energies = 100.0 * torch.randn(1, 30, 6, dtype=torch.float64)
    alpha = forward_attention(torch.log_softmax(energies, dim=-1).float())
    want = torch.tensor(reference_forward_attention(torch.softmax(energies[0], dim=-1).tolist()), dtype=torch.float64)
    assert torch.isfinite(alpha).all() and torch.allclose(alpha[0].double(), want, atol=1e-5)


def test_forward_attention_moves_one_token_per_step_at_most():
    T, N = 10, 4
    # energies rising with n: the alignment moves on at every frame, one token at a time, then stays at the end
    log_w = torch.log_softmax(3.0 * torch.arange(N).float().expand(1, T, N), dim=-1)
    path = forward_attention(log_w)[0].argmax(-1).tolist()
    assert path == [min(t + 1, N - 1) for t in range(T)]
    # energies around a diagonal: a monotonic path, steps of 0 or 1, first to last token
    T, N = 30, 7
    t = torch.arange(T).float()[:, None]
    n = torch.arange(N).float()[None, :]
    log_w = torch.log_softmax(-4.0 * (n - t * (N - 1) / (T - 1)) ** 2, dim=-1)[None]
    path = forward_attention(log_w)[0].argmax(-1)
    steps = path[1:] - path[:-1]
    assert ((steps == 0) | (steps == 1)).all() and path[-1] == N - 1


def test_durations_count_argmax_frames_and_ignore_padding():
    alpha = torch.zeros(2, 6, 4)
    for t, n in enumerate([0, 0, 1, 2, 2, 3]):
        alpha[0, t, n] = 1.0
    for t, n in enumerate([0, 1, 1, 1]):
        alpha[1, t, n] = 0.6
    alpha[1, 3, 3] = 0.9  # weight on a padded token (never in practice): not counted there
    alpha[1, 4:, 3] = 1.0  # padded frames: ignored
    d = durations_from_attention(alpha, torch.tensor([4, 2]), torch.tensor([6, 4]))
    assert d.tolist() == [[2, 1, 2, 1], [1, 3, 0, 0]]
    assert d.sum(1).tolist() == [6, 4]


def _best_path_by_enumeration(log_w, log_stay, log_move, end_at_last):
    """Slow reference: score every monotonic path (token 0 before frame 0, each frame stays or moves by one)."""
    import itertools

    T, N = log_w.shape
    best, best_path = -np.inf, None
    for moves in itertools.product((0, 1), repeat=T):
        path = np.cumsum(moves)
        if path[-1] >= N or (end_at_last and path[-1] != N - 1):
            continue
        score = sum(log_w[t, path[t]] + (log_move[t] if moves[t] else log_stay[t]) for t in range(T))
        if score > best:
            best, best_path = score, path
    return best_path


def test_viterbi_path_matches_enumeration_of_all_monotonic_paths():
    rng = np.random.default_rng(0)
    for trial in range(30):
        T, N = int(rng.integers(3, 9)), int(rng.integers(2, 5))
        log_w = torch.log_softmax(torch.from_numpy(rng.normal(size=(T, N)) * 2), dim=-1).numpy()
        m = rng.normal(size=T)
        stay, move = (np.zeros(T), np.zeros(T)) if trial % 3 == 0 else (-np.log1p(np.exp(m)), -np.log1p(np.exp(-m)))
        for end_at_last in (True, False):
            if end_at_last and T < N - 1:
                continue
            ref = _best_path_by_enumeration(log_w, stay, move, end_at_last)
            assert viterbi_path(log_w, stay, move, end_at_last).tolist() == ref.tolist(), (trial, end_at_last)


def test_viterbi_durations_use_future_frames_where_the_filtered_argmax_lags():
    # Token 1 is favoured only mildly by steps 2-3 and strongly from step 4: the filtered forward attention
    # (argmax alpha_t) switches late; the best path, which sees the later steps, switches at step 2, and as step
    # t + 1 is the first to have seen frame t (teacher forcing on the shifted frames), at frame 1.
    w = torch.tensor([[0.9, 0.1], [0.9, 0.1], [0.4, 0.6], [0.4, 0.6], [0.02, 0.98], [0.02, 0.98]])
    log_w = torch.log(w)[None]
    move = torch.full((1, 6), -2.0)  # moving costs: the transition agent says "stay" (u = 0.12)
    argmax_d = durations_from_attention(forward_attention(log_w, move), torch.tensor([2]), torch.tensor([6]))
    vit_d = viterbi_durations(log_w, move, torch.tensor([2]), torch.tensor([6]))
    assert argmax_d.tolist() == [[4, 2]]
    assert vit_d.tolist() == [[1, 5]]
    # the same path as viterbi_path on the weights moved one step back (the last frame keeps its own)
    lw = torch.log_softmax(log_w[0], -1)
    stay, mv = torch.nn.functional.logsigmoid(-move[0]), torch.nn.functional.logsigmoid(move[0])
    path = viterbi_path(torch.cat([lw[1:], lw[-1:]]).double().numpy(), stay.double().numpy(), mv.double().numpy())
    assert np.bincount(path, minlength=2).tolist() == [1, 5]
    # padding: frames and tokens beyond the lengths are not counted; rows sum to the frame count
    pad = torch.cat([log_w, torch.full((1, 6, 1), -1e30)], dim=-1)
    d = viterbi_durations(torch.cat([pad, pad]), None, torch.tensor([2, 2]), torch.tensor([6, 3]))
    assert d[:, 2].tolist() == [0, 0] and d.sum(1).tolist() == [6, 3]


def test_espnet_masks_equal_the_replaced_hand_written_ones():
    """model.py's masks are ESPnet's (~make_pad_mask with maxlen); the replaced lengths_to_mask (arange < length)
    on random lengths >= 1 (every length JDIT passes) and maxlen >= the longest: same values, dtype, device."""
    from espnet.nets.pytorch_backend.nets_utils import make_pad_mask

    g = torch.Generator().manual_seed(0)
    for _ in range(50):
        B = int(torch.randint(1, 6, (1,), generator=g))
        lengths = torch.randint(1, 40, (B,), generator=g)
        maxlen = int(lengths.max()) + int(torch.randint(0, 5, (1,), generator=g))
        old = torch.arange(maxlen, device=lengths.device)[None, :] < lengths[:, None]
        new = ~make_pad_mask(lengths, maxlen=maxlen)
        assert new.dtype == old.dtype == torch.bool and new.device == lengths.device and torch.equal(new, old)


def test_length_regulator_with_zero_durations():
    m = JDIT(idim=10, odim=4, **TINY)
    hs = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).unsqueeze(-1)
    out = m.length_regulator(hs, torch.tensor([[2, 0, 1], [1, 1, 0]]))
    assert out[..., 0].tolist() == [[1.0, 1.0, 3.0], [4.0, 5.0, 0.0]]  # 0 frames drop a token; padding is 0
    # synthesis: all-zero predicted durations -> one frame per token; alpha scales the durations
    m.eval()
    m.duration_predictor.inference = lambda xs, masks: torch.zeros(xs.shape[:2], dtype=torch.long)
    out = m.inference(torch.tensor([3, 4, 5]))
    assert out["duration"].tolist() == [1, 1, 1] and out["feat_gen"].shape == (3, 4)
    m.duration_predictor.inference = lambda xs, masks: torch.tensor([[2, 0, 3]])
    out = m.inference(torch.tensor([3, 4, 5]), alpha=2.0)
    assert out["duration"].tolist() == [4, 0, 6] and out["feat_gen"].shape == (10, 4)


def _batch():
    torch.manual_seed(1)
    text = torch.randint(2, 9, (3, 7))
    text_lengths = torch.tensor([7, 5, 3])
    text[1, 5:] = text[2, 3:] = 0
    feats = torch.randn(3, 30, 80)
    feats_lengths = torch.tensor([30, 24, 11])
    return text, text_lengths, feats, feats_lengths


def test_tiny_jdit_losses_gradients_and_synthesis():
    torch.manual_seed(0)
    # eq. (1)'s weights, none of them 1 (the tiny config's guided attention weight is 50): with all weights 1 a
    # model that dropped them would still pass the sum below
    weights = dict(ff_l1_loss=0.5, ar_l1_loss=2.0, duration_loss=0.25, ctc_loss=3.0, attn_loss=50.0)
    m = JDIT(idim=10, odim=80, **TINY, ff_l1_weight=0.5, ar_l1_weight=2.0, duration_weight=0.25, ctc_weight=3.0,
             guided_attn_weight=50.0)
    text, tl, feats, fl = _batch()
    loss, stats, weight = m(text, tl, feats, fl)
    for key in ("loss", "ff_l1_loss", "ar_l1_loss", "duration_loss", "ctc_loss", "attn_loss", "focus_rate"):
        assert key in stats and math.isfinite(float(stats[key])), key
    assert all(float(stats[k]) > 0 for k in weights)  # each term counts, so each weight shows in the total
    want = sum(w * float(stats[k]) for k, w in weights.items())
    assert float(loss.detach()) == pytest.approx(want, rel=1e-5) and int(weight) == 3
    loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in m.parameters() if p.grad is not None)
    assert m.aligner.src_attn.linear_q.weight.grad.abs().sum() > 0  # the attention learns from the AR/CTC/GA losses

    # the aligner's durations are what the model trains on: they sum to the frame counts
    m.eval()
    both, alpha = m.align(text, tl, feats, fl, readouts=("argmax", "viterbi"))
    ds = both["argmax"]
    assert ds.sum(1).tolist() == fl.tolist() and (ds[1, 5:] == 0).all() and alpha.shape == (3, 30, 7)
    assert both["viterbi"].sum(1).tolist() == fl.tolist() and (both["viterbi"][1, 5:] == 0).all()
    # one utterance alone (no padding: ESPnet's conv layers see the padded neighbours in a batch); the
    # best-path read-out comes from that pass, not from the batch before it
    d1, _ = m.align(text[2:, :3], tl[2:], feats[2:, :11], fl[2:], readouts=("viterbi", "argmax"))
    assert aligner_durations(m, text[2, :3], feats[2, :11]).tolist() == d1["argmax"][0].tolist()
    assert d1["argmax"].sum() == 11 and d1["viterbi"].sum() == 11
    with pytest.raises(ValueError, match="read-out"):
        m.align(text, tl, feats, fl, readouts=("mean",))

    out = m.inference(text[0])
    assert out["att_w"] is None and (out["duration"] >= 0).all()
    assert out["feat_gen"].shape == (int(out["duration"].sum()), 80)
    out = m.inference(text[0], feats=feats[0], use_teacher_forcing=True)
    assert out["duration"].tolist() == ds[0].tolist() and out["att_w"].shape == (30, 7)
    assert out["feat_gen"].shape == (30, 80)


def test_tiny_config_departures_reach_the_model():
    """The three departures conf/tuning/train_jdit_tiny.yaml names (and RESULTS.md reports from config.yaml) are
    what the model built from it uses: the transition agent, guided attention weight 50, peak lr 1.021e-3."""
    import yaml

    conf = yaml.safe_load(TINY_CONF.read_text())
    m = JDIT(idim=10, odim=80, **conf["tts_conf"])
    assert m.weights["attn"] == conf["tts_conf"]["guided_attn_weight"] == 50.0
    assert conf["tts_conf"]["aligner_transition_agent"] is True and m.aligner.src_attn.transition is not None
    assert conf["optim_conf"]["lr"] == pytest.approx(0.2 * 128 ** -0.5 * 300 ** -0.5, rel=1e-3)
    paper = yaml.safe_load((ROOT / "egs/kss/tts1/conf/tuning/train_jdit.yaml").read_text())["tts_conf"]
    base = JDIT(idim=10, odim=80, **{**TINY, "guided_attn_weight": paper["guided_attn_weight"],
                                     "aligner_transition_agent": paper["aligner_transition_agent"]})
    assert base.weights["attn"] == 1.0 and base.aligner.src_attn.transition is None


def test_duration_predictor_does_not_train_the_encoder():
    torch.manual_seed(0)
    only_duration = dict(ff_l1_weight=0.0, ar_l1_weight=0.0, ctc_weight=0.0, guided_attn_weight=0.0)
    m = JDIT(idim=10, odim=80, **TINY, **only_duration)
    m(*_batch())[0].backward()
    assert all(p.grad is None or not p.grad.any() for p in m.encoder.parameters())
    assert any(p.grad is not None and p.grad.any() for p in m.duration_predictor.parameters())
    m.zero_grad(set_to_none=True)
    ff_only = dict(ar_l1_weight=0.0, duration_weight=0.0, ctc_weight=0.0, guided_attn_weight=0.0)
    m = JDIT(idim=10, odim=80, **TINY, **ff_only)
    m(*_batch())[0].backward()
    assert any(p.grad is not None and p.grad.any() for p in m.encoder.parameters())


def _fake_corpus(d: Path):
    """A 8-utterance corpus in the recipe's layout: feats.scp (kaldi_ark), text_phn, shapes, token list, stats."""
    import kaldiio

    tokens = ["<blank>", "<unk>", "a", "b", "c", "d", "e", "<space>", "<sos/eos>"]
    (d / "tokens.txt").write_text("".join(t + "\n" for t in tokens))
    rng = np.random.default_rng(0)
    all_feats = []
    for name, utts in (("train", range(6)), ("dev", range(6, 8))):
        s = d / name
        s.mkdir()
        texts, fshape, tshape = [], [], []
        with kaldiio.WriteHelper(f"ark,scp:{s}/feats.ark,{s}/feats.scp") as w:
            for i in utts:
                utt = f"spk-u{i}"
                toks = list(rng.choice(tokens[2:8], size=3 + i % 4))
                frames = 12 + 3 * i
                x = (rng.standard_normal((frames, 80)) + 5.0).astype(np.float32)
                w(utt, x)
                all_feats.append(x)
                texts.append(f"{utt} {' '.join(toks)}\n")
                fshape.append(f"{utt} {frames},80\n")
                tshape.append(f"{utt} {len(toks)},{len(tokens)}\n")
        (s / "text_phn").write_text("".join(texts))
        (s / "feats_shape").write_text("".join(fshape))
        (s / "text_shape").write_text("".join(tshape))
    x = np.concatenate(all_feats).astype(np.float64)
    np.savez(d / "feats_stats.npz", count=np.array(len(x)), sum=x.sum(0), sum_square=(x * x).sum(0))
    return tokens


def _train(d: Path, exp: Path, max_epoch: int, resume: bool):
    data = []
    for mode, s in (("train", "train"), ("valid", "dev")):
        data += [f"--{mode}_data_path_and_name_and_type", f"{d / s}/feats.scp,speech,kaldi_ark",
                 f"--{mode}_data_path_and_name_and_type", f"{d / s}/text_phn,text,text",
                 f"--{mode}_shape_file", f"{d / s}/feats_shape", f"--{mode}_shape_file", f"{d / s}/text_shape"]
    cmd = [sys.executable, "-m", "local_models.bin.jdit_train", "--config", str(TINY_CONF),
           "--normalize_conf", f"stats_file={d / 'feats_stats.npz'}", "--token_list", str(d / "tokens.txt"),
           "--output_dir", str(exp), "--ngpu", "0", "--batch_size", "3", "--max_epoch", str(max_epoch),
           "--resume", str(resume).lower(), "--seed", "0", "--tts_conf", "elayers=1", "--tts_conf", "dlayers=1",
           "--tts_conf", "adim=32", "--tts_conf", "embed_dim=32", "--tts_conf", "eprenet_conv_chans=32", *data]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    res = subprocess.run(cmd, cwd=d, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stderr


def test_train_resume_and_text2speech_round_trip(tmp_path):
    tokens = _fake_corpus(tmp_path)
    exp = tmp_path / "exp"
    log1 = _train(tmp_path, exp, max_epoch=1, resume=False)
    assert "1/1epoch started" in log1 and (exp / "checkpoint.pth").is_file()
    log2 = _train(tmp_path, exp, max_epoch=2, resume=True)
    assert "2/2epoch started" in log2 and "1/2epoch started" not in log2  # resumed after epoch 1
    assert torch.load(exp / "checkpoint.pth", weights_only=False)["reporter"]["epoch"] == 2
    # each run (the first and the resumed one) recorded its commit and device (RESULTS.md's environment block)
    from local_models.common.results import trained_by

    assert [r["ngpu"] for r in trained_by(exp)] == [0, 0] and all(r["commit"] for r in trained_by(exp))

    import local_models.jdit.task  # noqa: F401  (registers tts: jdit before ESPnet builds the model)
    from espnet2.bin.tts_inference import Text2Speech

    tts = Text2Speech(train_config=exp / "config.yaml", model_file=exp / "2epoch.pth")
    assert type(tts.tts).__name__ == "JDIT"
    out = tts("a b <space> c")
    assert out["feat_gen"].shape == (int(out["duration"].sum()), 80) and len(out["duration"]) == 4
    assert out["feat_gen_denorm"].shape == out["feat_gen"].shape
    ids = np.array([tokens.index(t) for t in "d e a".split()])
    out2 = tts(ids)
    assert out2["feat_gen"].shape[0] == int(out2["duration"].sum())
    # teacher-forced aligner durations of a (text, raw feats) pair, through the ESPnet model's global_mvn
    import kaldiio

    feats = kaldiio.load_scp(str(tmp_path / "train/feats.scp"))["spk-u0"]
    d = aligner_durations(tts.model, ids, feats)
    assert d.shape == (3,) and d.sum() == len(feats)


def test_griffin_lim_is_deterministic():
    """The same mel gives the same wav, call after call (the random initial phases come from a fixed seed on a
    forked generator: torch's global random state is left as it was); a mel of a few frames works too (torch.stft's
    reflect padding needs more samples than that: silent frames are added and cut off again)."""
    import numpy as np
    import torch

    from local_models.jdit.vocoder import GriffinLim

    conf = {"sample_rate": 22050, "n_fft": 1024, "hop_length": 256, "n_mels": 80, "fmin": 80, "fmax": 7600}
    mel = np.random.default_rng(0).normal(-2.0, 0.5, (40, 80)).astype(np.float32)
    gl = GriffinLim(conf, 4)
    state = torch.random.get_rng_state()
    first, again = gl(mel), GriffinLim(conf, 4)(mel)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert first.dtype == np.float32 and first.shape == ((40 - 1) * 256,)
    np.testing.assert_array_equal(first, again)
    assert np.abs(first).max() > 0
    for frames in (2, 3, 5):
        assert gl(mel[:frames]).shape == ((frames - 1) * 256,)
    assert gl(mel[:1]).shape == (1024,) and np.abs(gl(mel[:1])).max() > 0  # one frame: one window, not nothing
