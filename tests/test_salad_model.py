"""SALAD recipe: acoustic features, metrics, models, stateful batching, stream windows."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from local_models.common.features import ArkStream
from local_models.salad import acoustic
from local_models.salad.model import SALAD, _band_attention, build, for_precision, precision_context

SR = 16000


def voiced_wave(seconds=0.8, f0=120.0):
    """A vowel-like test signal: harmonics of a gliding F0 with a formant-ish envelope, then silence."""
    t = np.arange(int(seconds * SR)) / SR
    phase = 2 * np.pi * np.cumsum(f0 * (1 + 0.2 * t / seconds)) / SR
    x = sum(np.sin(k * phase) / k * (1.5 if k in (4, 5, 12) else 1.0) for k in range(1, 30))
    return np.concatenate([0.2 * x / np.max(np.abs(x)), np.random.RandomState(0).randn(SR // 5) * 1e-3])


def test_world_round_trip_43_dims_right_length_not_silent():
    x = voiced_wave()
    feats = acoustic.analyse(x, SR, f0_method="dio")
    assert feats.shape == (len(x) // 80 + 1, 43)
    assert set(np.unique(feats[:, acoustic.UV])) <= {0.0, 1.0}
    voiced = feats[:, acoustic.UV] > 0.5
    assert voiced[5:150].all() and not voiced[-10:].any()  # harmonic part voiced, noise tail unvoiced
    # interpolated log-F0: finite everywhere, near log(120..144 Hz) on the voiced part
    assert np.all(np.isfinite(feats[:, acoustic.LF0]))
    assert 110 < np.exp(np.median(feats[voiced, acoustic.LF0])) < 150
    y = acoustic.synthesize(feats, SR)
    assert abs(len(y) - len(x)) <= 80
    rms = np.sqrt(np.mean(y[: int(0.7 * SR)] ** 2))
    assert rms > 0.01 and np.max(np.abs(y)) < 1.0


def test_interpolate_lf0_fills_gaps_linearly_and_holds_ends():
    f0 = np.array([0, 100, 0, 0, 400, 0.0])
    lf0 = acoustic.interpolate_lf0(f0)
    assert np.allclose(lf0[[0, 1]], math.log(100)) and np.allclose(lf0[[4, 5]], math.log(400))
    assert np.allclose(lf0[2], math.log(100) + (math.log(400) - math.log(100)) / 3)
    assert np.allclose(acoustic.interpolate_lf0(np.zeros(3)), math.log(acoustic.F0_FLOOR))


def test_scores_zero_for_identical_and_match_hand_computation():
    rng = np.random.RandomState(1)
    ref = rng.randn(20, 43).astype(np.float32)
    ref[:, acoustic.UV] = (rng.rand(20) > 0.5)
    s = acoustic.pool_scores([acoustic.scores(ref, ref.copy())])
    assert s["mcd_db"] == 0 and s["f0_rmse_hz"] == 0 and s["vuv_acc"] == 100
    hyp = ref.copy()
    hyp[:, 0] += 0.1  # c0 only: every frame distortion = 10 sqrt(2) / ln 10 * 0.1
    hyp[:, acoustic.UV] = 1 - ref[:, acoustic.UV]
    s = acoustic.pool_scores([acoustic.scores(ref, hyp)])
    assert s["mcd_db"] == pytest.approx(10 * math.sqrt(2) / math.log(10) * 0.1, rel=1e-5)
    assert s["vuv_acc"] == 0


def test_mcd_without_silence_ignores_the_silence_frames_hand_example():
    """Six frames, phones sil a a pau b sil: the speech frames are off by 0.1 in c0 only (frame MCD
    10 sqrt(2) / ln 10 * 0.1 = 0.6142 dB each), the silences by 100 (or 1000) in c1: the MCD without silence stays
    0.6142 dB whatever the silences do; the MCD with silence moves with them."""
    mask = acoustic.speech_frames([1, 2, 1, 1, 1], ["sil", "a", "pau", "b", "sil"])
    assert mask.tolist() == [False, True, True, False, True, False]
    ref = np.zeros((6, acoustic.DIM), np.float32)
    pooled = {}
    for err in (100.0, 1000.0):
        hyp = ref.copy()
        hyp[mask, 0] = 0.1
        hyp[~mask, 1] = err
        r = acoustic.scores(ref, hyp, mask)
        assert r["speech_frames"] == 3 and r["frames"] == 6
        pooled[err] = acoustic.pool_scores([r])
        assert pooled[err]["mcd_speech_db"] == pytest.approx(0.614185, abs=1e-6)
        # with silence: (3 * 0.6141 + 3 * 6.1419 * err) / 6 dB
        assert pooled[err]["mcd_db"] == pytest.approx((3 * 0.614185 + 3 * 6.141851 * err) / 6, rel=1e-6)
    assert pooled[1000.0]["mcd_db"] > 9 * pooled[100.0]["mcd_db"]
    # pooled over utterances by frames, not by utterance: a second utterance of 1 speech frame with error 0
    two = acoustic.pool_scores([acoustic.scores(ref, hyp, mask), acoustic.scores(ref[:1], ref[:1], [True])])
    assert two["mcd_speech_db"] == pytest.approx(3 * 0.614185 / 4, abs=1e-6) and two["speech_frames"] == 4
    with pytest.raises(ValueError, match="cover 5 frames, the utterance has 6"):
        acoustic.scores(ref, hyp, mask[:5])
    assert "mcd_speech_db" not in acoustic.pool_scores([acoustic.scores(ref, hyp)])  # no labels: no such figure


def test_silence_phones_are_the_front_ends():
    from local_models.salad import frontend

    assert set(acoustic.SILENCES) == set(frontend.SILENCES)


def test_minmax_round_trip():
    x = np.random.RandomState(2).randn(50, 43) * 3
    x[:, 5] = 7.0  # a constant dim must not divide by zero
    mm = acoustic.MinMax.fit(x)
    y = mm.normalise(x)
    assert y.min() >= 0 and y.max() <= 1 + 1e-6
    assert np.allclose(mm.denormalise(y), x, atol=1e-5)


@pytest.mark.parametrize("radius", [1, 3, 7, 20])
def test_band_attention_equals_dense_band_mask(radius):
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 2, 2, 23, 8).unbind(0)
    valid = torch.arange(23)[None] < torch.tensor([[23], [15]])
    out = _band_attention(q, k, v, radius, valid, 0.0)
    i = torch.arange(23)
    mask = ((i[:, None] - i[None]).abs() <= radius)[None] & valid[:, None, :] | torch.eye(23, dtype=torch.bool)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None])
    assert torch.allclose(out[0], ref[0], atol=1e-5)
    assert torch.allclose(out[1, :, :15], ref[1, :, :15], atol=1e-5)


def test_windowed_salad_equals_full_when_window_covers_sequence():
    torch.manual_seed(0)
    full = SALAD(12, 43, emb=16, d_ff=32, num_blocks=2, heads=2).eval()
    win = SALAD(12, 43, emb=16, d_ff=32, num_blocks=2, heads=2, window=64).eval()
    win.load_state_dict(full.state_dict())
    x, lengths = torch.randn(2, 30, 12), torch.tensor([30, 21])
    for b in win.blocks:  # force the block-local kernel with a band that covers the sequence
        b.attn.radius = 29
    b_out = win(x, lengths)[0]
    assert torch.allclose(b_out[0], full(x, lengths)[0][0], atol=1e-5)
    assert torch.allclose(b_out[1, :21], full(x, lengths)[0][1, :21], atol=1e-5)
    for b in win.blocks:  # a narrow window really changes the output
        b.attn.radius = 2
    assert not torch.allclose(win(x, lengths)[0][0], full(x, lengths)[0][0], atol=1e-3)


def test_unpadded_batch_skips_the_mask_and_agrees_with_a_padded_batch():
    torch.manual_seed(0)
    net = SALAD(12, 43, emb=16, d_ff=32, num_blocks=2, heads=2).eval()
    x = torch.randn(2, 30, 12)
    padded = net(x, torch.tensor([30, 21]))[0]
    alone = net(x[1:, :21], torch.tensor([21]))[0]  # no padding: the mask-free SDPA call
    assert torch.allclose(alone[0], padded[1, :21], atol=1e-5)


@pytest.mark.parametrize("arch,conf", [("salad", dict(emb=32, d_ff=64, num_blocks=2, heads=4)),
                                       ("rnn", dict(emb=32, hidden=48))])
def test_low_precisions_quantise_and_stay_close_to_fp32(arch, conf):
    torch.manual_seed(0)
    net = build(arch, 12, 43, **conf).eval()
    x, lengths = torch.randn(1, 50, 12), torch.tensor([50])
    with torch.inference_mode():
        ref = net(x, lengths)[0]
        q = for_precision(net, "int8")
        y8 = q(x, lengths)[0]
        with precision_context("bf16"):
            y16 = net(x, lengths)[0].float()
    kinds = {type(m).__module__ for m in q.modules()}
    assert any("quantized" in k for k in kinds), kinds  # int8 Linear / LSTM kernels, not the fp32 ones
    assert not any("quantized" in type(m).__module__ for m in net.modules())  # the fp32 net is untouched
    assert for_precision(net, "fp32") is net
    for y in (y8, y16):
        err = (y - ref).norm() / ref.norm()
        assert 0 < err < 0.05, err  # close to fp32, but really computed another way
    with pytest.raises(ValueError, match="unknown precision"):
        for_precision(net, "fp8")


def _model(arch, **conf):
    from local_models.salad.task import RNNModel, SaladModel

    cls = RNNModel if arch == "rnn" else SaladModel
    return cls(idim=6, odim=43, **conf)


def test_stateful_rnn_carries_state_between_consecutive_windows():
    torch.manual_seed(0)
    m = _model("rnn", emb=8, hidden=16, dropout=0.0).train()
    x, y = torch.randn(3, 20, 6), torch.rand(3, 20, 43)
    W = 10
    L = torch.full((3,), W)
    pos0 = torch.tensor([[0, 0], [0, 1], [0, 2]])
    m(x[:, :W], L, y[:, :W], L, pos=pos0)
    loss1 = m(x[:, W:], L, y[:, W:], L, pos=pos0 + torch.tensor([1, 0]))[0]
    full, _ = m.predict(x, torch.full((3,), 20))  # one pass over the whole stream
    assert torch.allclose(loss1, ((full[:, W:] - y[:, W:]) ** 2).mean(), atol=1e-6)
    # a window that does not follow the previous one starts from zero state
    fresh = _model("rnn", emb=8, hidden=16, dropout=0.0).train()
    fresh.load_state_dict(m.state_dict())
    loss_reset = fresh(x[:, W:], L, y[:, W:], L, pos=pos0 + torch.tensor([1, 0]))[0]
    assert not torch.allclose(loss_reset, loss1)


def test_stateful_salad_positions_continue_across_windows():
    m = _model("salad", emb=8, d_ff=16, num_blocks=1, heads=2).train()
    pos = torch.tensor([[0, 0], [3, 1]])
    assert m._state(pos, 120).tolist() == [0, 360]
    assert m.eval()._state(pos, 120) is None  # validation / decoding: full utterances from position 0


def _fake_dump(tmp_path, lengths):
    d = tmp_path / "train"
    rng = np.random.RandomState(0)
    mats = {}
    with ArkStream(d / "acou") as a, ArkStream(d / "ling") as lg:
        for i, n in enumerate(lengths):
            utt = f"u{i:02d}"
            mats[utt] = rng.randn(n, 43).astype(np.float32)
            a.write(utt, mats[utt])
            lg.write(utt, mats[utt][:, :5] + 1)
    (d / "utt2num_frames").write_text("".join(f"u{i:02d} {n}\n" for i, n in enumerate(lengths)))
    return d, np.concatenate([mats[u] for u in sorted(mats)])


def test_make_windows_cuts_streams_of_the_concatenation(tmp_path):
    import kaldiio

    from local_models.common.datadir import read_table
    from local_models.salad.data import make_windows

    d, cat = _fake_dump(tmp_path, [37, 5, 52, 29, 40])  # 163 frames
    per, dropped = make_windows(d, tmp_path / "win", streams=3, window=10)
    piece = 163 // 3  # 54 frames per stream -> 5 windows, 4 dropped per stream + 1 beyond the streams
    assert (per, dropped) == (5, 163 - 3 * 5 * 10)
    pos = read_table(tmp_path / "win" / "pos")
    keys = list(pos)
    assert keys[:3] == ["w000000_s000", "w000000_s001", "w000000_s002"]  # window-major: batch b = window b
    scp = read_table(tmp_path / "win" / "acou.scp")
    assert len(scp) == 15
    for key, value in pos.items():
        b, s = map(int, value.split())
        start = s * piece + b * 10
        assert np.array_equal(kaldiio.load_mat(scp[key]), cat[start:start + 10])


def test_make_windows_rejects_too_little_data(tmp_path):
    from local_models.salad.data import make_windows

    d, _ = _fake_dump(tmp_path, [30])
    with pytest.raises(ValueError, match="cannot fill"):
        make_windows(d, tmp_path / "win", streams=4, window=10)


def test_positional_codes_are_the_papers_sinusoids():
    """c_{t,2i} = sin(t / 10000^(2i/H)), c_{t,2i+1} = cos(t / 10000^(2i/H)), against a loop over the formula,
    with an odd H (the last sine has no cosine) and a stateful window's offset positions."""
    import math

    from local_models.salad.model import sinusoid_codes

    for dim in (6, 7):
        pos = torch.tensor([[0, 1, 2, 5], [360, 361, 362, 1000]])
        got = sinusoid_codes(pos, dim)
        want = torch.zeros(2, 4, dim)
        for b in range(2):
            for t in range(4):
                for i in range(0, dim, 2):
                    a = pos[b, t].item() / 10000 ** (i / dim)
                    want[b, t, i] = math.sin(a)
                    if i + 1 < dim:
                        want[b, t, i + 1] = math.cos(a)
        assert torch.allclose(got, want, atol=1e-5), (dim, (got - want).abs().max())
    # a window continuing a stream at frame 360 is coded as frames 360.., not 0..
    assert not torch.allclose(sinusoid_codes(torch.tensor([[0, 1]]), 8), sinusoid_codes(torch.tensor([[360, 361]]), 8))
