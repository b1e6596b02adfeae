"""Neural SAD (paper Sec. 3): segment aggregation, net shapes, learning, ESPnet training + resume, detector."""
import os
import subprocess
import sys
from pathlib import Path

import kaldiio
import numpy as np
import pytest
import torch

from local_models.sad.neural import NeuralDetector, hmm_smooth, median_smooth
from local_models.sad.nets import NETS, num_segments, segment_frame_scores

ROOT = Path(__file__).resolve().parents[1]
TINY = dict(channels=[4, 8], hidden=8)


def slow_segment_frame_scores(y, L, S, T):
    out = np.full(T, -np.inf)
    for t in range(T):
        for i in range(len(y)):
            if i * S <= t < i * S + L:
                out[t] = max(out[t], y[i])
    return out


@pytest.mark.parametrize("L,S,T", [(5, 1, 23), (5, 5, 23), (10, 3, 31), (25, 5, 7), (3, 2, 1)])
def test_segment_frame_scores_matches_slow_loop(L, S, T):
    rng = np.random.default_rng(L * 100 + S)
    y = rng.random(num_segments(T, L, S))
    fast = segment_frame_scores(y, L, S, T)
    np.testing.assert_allclose(fast, slow_segment_frame_scores(y, L, S, T))
    assert np.isfinite(fast).all()  # every frame is covered
    np.testing.assert_allclose(segment_frame_scores(torch.tensor(y), L, S, T).numpy(), fast)
    # OR rule: frame speech iff any segment containing it says speech
    alpha = 0.5
    d = y > alpha
    ref = np.array([any(d[i] for i in range(len(y)) if i * S <= t < i * S + L) for t in range(T)])
    np.testing.assert_array_equal(fast > alpha, ref)


@pytest.mark.parametrize("name", sorted(NETS))
@pytest.mark.parametrize("T", [1, 7, 33])
def test_one_score_per_frame(name, T):
    net = NETS[name](**TINY).eval()
    x = torch.rand(2, T, 257)
    logits, ulen = net(x, torch.tensor([T, T]))
    target, mask = net.targets(torch.zeros(2, T), torch.tensor([T, T]))
    assert logits.shape == target.shape == mask.shape
    # decoding (frame_probs: chunked front end, one score per frame) gives the posteriors of the training forward:
    # a frame-level net's sigmoid, a segment net's segment posteriors spread over their frames (max over the cover)
    with torch.no_grad():
        want = torch.sigmoid(net(x[:1], torch.tensor([T]))[0][0]).numpy()
    if name == "seg_rnn":
        want = segment_frame_scores(want, net.L, net.S, T)
    np.testing.assert_allclose(net.frame_probs(x[:1]), want, rtol=1e-5, atol=1e-6)
    assert net.frame_probs(x[:1]).shape == (T,)


def test_training_masks_are_the_hand_written_ones():
    """targets' masks come from ESPnet's make_non_pad_mask; the arange masks they replaced, for 1 <= length <= T."""
    from local_models.sad.nets import non_pad_mask

    rng = np.random.default_rng(0)
    for _ in range(20):
        B, T = int(rng.integers(1, 6)), int(rng.integers(1, 50))
        lengths = torch.tensor(rng.integers(1, T + 1, size=B))
        lengths[rng.integers(0, B)] = T
        labels = torch.tensor(rng.integers(-1, 2, size=(B, T)), dtype=torch.float32)
        mask = non_pad_mask(lengths, labels)
        assert mask.dtype == torch.bool and mask.device == labels.device
        assert torch.equal(mask, torch.arange(T)[None] < lengths[:, None])
        for name in sorted(NETS):
            net = NETS[name](**TINY, **({"seg_len": 5, "seg_shift": 2} if name == "seg_rnn" else {}))
            target, valid = net.targets(labels, lengths)
            if name != "seg_rnn":
                assert torch.equal(valid, (torch.arange(T)[None] < lengths[:, None]) & (labels >= 0))
            else:
                M = target.shape[1]
                seg_lengths = torch.tensor([num_segments(int(n), 5, 2) for n in lengths])
                assert torch.equal(valid, torch.arange(M)[None] < seg_lengths[:, None])


def test_chunked_front_end_equals_full():
    net = NETS["cnn1d"](**TINY).eval()
    x = torch.rand(1, 101, 257)
    with torch.no_grad():
        np.testing.assert_allclose(net.front.forward_chunked(x, chunk=17).numpy(), net.front(x).numpy(), atol=1e-5)


def synthetic_batch(B=6, T=60, seed=0):
    g = torch.Generator().manual_seed(seed)
    labels = (torch.rand(B, T // 10, generator=g) > 0.5).float().repeat_interleave(10, dim=1)
    feats = torch.rand(B, T, 257, generator=g) * 0.01 + labels[..., None] * 5.0
    return feats, labels


@pytest.mark.parametrize("name", sorted(NETS))
def test_loss_decreases(name):
    from local_models.sad.task import ESPnetSADModel

    torch.manual_seed(0)
    model = ESPnetSADModel(NETS[name](**TINY))
    feats, labels = synthetic_batch()
    lens = torch.full((len(feats),), feats.shape[1])
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(30):
        loss, stats, weight = model(feats, lens, labels, lens)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < 0.5 * losses[0], losses


def test_hmm_and_median_smoothing():
    post = np.r_[np.full(50, 0.1), np.full(50, 0.9), np.full(50, 0.1)]
    post[20] = 0.95  # one-frame blip: removed by both smoothers
    d = hmm_smooth(post, 0.5)
    assert not d[:45].any() and d[55:95].all() and not d[105:].any()
    m = median_smooth(post > 0.5, 0.5)
    assert not m[20] and m[60:90].all()
    # the threshold moves the HMM decision: a low threshold accepts 0.3 posteriors
    assert hmm_smooth(np.full(40, 0.3), 0.1).all() and not hmm_smooth(np.full(40, 0.3), 0.5).any()


def write_fake_corpus(d: Path, n=3, T=500, seed=0):
    """Whole-stream STFT-like features (loud = speech) + ref.rttm, as stage 2 / stage 1 leave them."""
    rng = np.random.default_rng(seed)
    data = d / "data"
    data.mkdir(parents=True)
    feats, rttm = {}, []
    for r in range(n):
        rec = f"rec{r}"
        lab = np.zeros(T, bool)
        for s in rng.integers(0, T - 60, size=4):
            lab[s: s + 40] = True
        feats[rec] = (rng.random((T, 257)) * 0.01 + lab[:, None] * 3.0).astype(np.float32)
        padded = np.r_[False, lab, False]
        edges = np.flatnonzero(padded[1:] != padded[:-1])
        rttm += [f"SPEAKER {rec} 1 {a * 0.01:.2f} {(b - a) * 0.01:.2f} <NA> <NA> speech <NA> <NA>\n"
                 for a, b in zip(edges[::2], edges[1::2])]
    kaldiio.save_ark(str(d / "feats.ark"), feats, scp=str(d / "feats.scp"))
    (data / "ref.rttm").write_text("".join(rttm))
    return d / "feats.scp", data


def run_module(mod, *args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", mod, *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def test_espnet_training_resume_and_detector(tmp_path):
    scp, data = write_fake_corpus(tmp_path)
    chunks = tmp_path / "chunks"
    run_module("local_models.bin.sad_make_chunks", "--chunk-frames", "100", "--seed", "1", str(scp), str(data),
               str(chunks), cwd=tmp_path)
    lines = (chunks / "feats_shape").read_text().split()
    assert lines and lines[1] == "100,257"
    lab = kaldiio.load_scp(str(chunks / "labels.scp"))
    assert all(v.shape == (100,) and set(np.unique(v)) <= {0.0, 1.0} for v in lab.values())
    config = tmp_path / "train.yaml"
    config.write_text("batch_type: unsorted\nbatch_size: 4\nnum_iters_per_epoch: 2\noptim: adam\noptim_conf:\n"
                      "    lr: 0.001\nnum_workers: 0\nuse_tensorboard: false\nmodel: cnn1d\nmodel_conf:\n"
                      "    channels: [4, 8]\n    hidden: 8\n")
    common = ["--config", str(config), "--ngpu", "0", "--output_dir", "exp/cnn1d", "--resume", "true",
              "--train_data_path_and_name_and_type", f"{chunks}/feats.scp,feats,kaldi_ark",
              "--train_data_path_and_name_and_type", f"{chunks}/labels.scp,labels,kaldi_ark",
              "--valid_data_path_and_name_and_type", f"{chunks}/feats.scp,feats,kaldi_ark",
              "--valid_data_path_and_name_and_type", f"{chunks}/labels.scp,labels,kaldi_ark",
              "--train_shape_file", f"{chunks}/feats_shape", "--valid_shape_file", f"{chunks}/feats_shape"]
    run_module("local_models.bin.sad_train", *common, "--max_epoch", "1", cwd=tmp_path)
    exp = tmp_path / "exp" / "cnn1d"
    assert (exp / "checkpoint.pth").is_file() and (exp / "1epoch.pth").exists()
    proc = run_module("local_models.bin.sad_train", *common, "--max_epoch", "2", cwd=tmp_path)
    assert "2/2epoch started" in proc.stderr and "1/2epoch started" not in proc.stderr
    assert (exp / "2epoch.pth").exists() and (exp / "valid.loss.best.pth").exists()

    # the detector decodes with the checkpoint of lowest validation loss (ESPnet's valid.loss.best.pth), its net's
    # weights, and smooths with the HMM at the threshold it is given
    det = NeuralDetector(model_dir=str(exp), smoothing="hmm")
    best = torch.load(exp / "valid.loss.best.pth", map_location="cpu")
    weights = det.net.state_dict()
    assert set(weights) == {k[len("net."):] for k in best if k.startswith("net.")}
    assert all(torch.equal(weights[k[len("net."):]], v) for k, v in best.items() if k.startswith("net."))
    wave = np.random.default_rng(0).standard_normal(8000 * 3).astype(np.float32) * 0.1
    s = det.scores(wave, 8000)
    assert s.shape == (300,)
    for th in (0.2, 0.5, 0.8):
        np.testing.assert_array_equal(det.decide(s, th), hmm_smooth(s, th))


class _Fixed:
    """A member whose decisions are given (scores = decisions; decide at its threshold)."""

    def __init__(self, decisions):
        self.d = np.asarray(decisions, dtype=bool)

    def scores(self, wave, sr):
        return self.d.astype(np.float32)

    def decide(self, scores, threshold):
        return scores > threshold


def test_majority_vote_is_at_least_two_of_three():
    from local_models.sad.neural import MajorityVote

    vote = MajorityVote()
    assert vote.threshold == 1.5 and vote.sweep == [1.5]  # the rule, not a tuned value
    vote._dets = [(_Fixed([0, 1, 0, 1, 1, 0]), 0.5), (_Fixed([0, 0, 1, 1, 1, 0]), 0.5), (_Fixed([0, 0, 0, 0, 1, 1]), 0.5)]
    scores = vote.scores(np.zeros(48), 8000)
    np.testing.assert_array_equal(scores, [0, 1, 1, 2, 3, 1])
    # one voice of three is not a majority (a vote at 0.5 would call frames 1, 2 and 5 speech too)
    np.testing.assert_array_equal(vote.decide(scores), [False, False, False, True, True, False])


def test_vote_members_follow_the_dev_best_seg_rnn(tmp_path, monkeypatch):
    from local_models.sad.neural import MajorityVote, SegRNN, voters

    exp = tmp_path / "exp"
    for name, th in (("cnn_hmm", "0.3"), ("rnn_hmm", "0.4"), ("seg_rnn", "0.2")):
        (exp / name).mkdir(parents=True)
        (exp / name / "threshold").write_text(th)
    assert voters(exp) == ("cnn_hmm", "rnn_hmm", "seg_rnn")
    (exp / "seg_rnn_devbest").mkdir()
    (exp / "seg_rnn_devbest" / "threshold").write_text("0.35")
    (exp / "seg_rnn_devbest" / "model_dir").write_text("exp/seg_grid/L25_S1\n")
    assert voters(exp) == ("cnn_hmm", "rnn_hmm", "seg_rnn_devbest")
    monkeypatch.setenv("SAD_EXP_DIR", str(exp))
    members = MajorityVote().members()
    assert [th for _, th in members] == [0.3, 0.4, 0.35]
    seg = members[2][0]
    assert isinstance(seg, SegRNN) and Path(seg.model_dir) == tmp_path / "exp" / "seg_grid" / "L25_S1"
    assert Path(members[0][0].model_dir) == exp / "cnn1d"


def test_report_net_names_are_the_nets_that_exist():
    """sad/report.py keeps the net names as literals (it must not import torch); they must stay nets.NETS' keys."""
    from local_models.sad.nets import NETS
    from local_models.sad.report import NET_NAMES

    assert NET_NAMES == tuple(NETS)
