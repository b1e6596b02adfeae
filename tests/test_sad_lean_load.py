"""The shipped SAD model loads lean (issues #51 / #52): a fresh process that loads it and segments a file imports no
torch, librosa, numba, scipy.signal / scipy.stats or ESPnet training code (checked on sys.modules: behaviour, not
time; benchmarks/startup.py --sad_load_runs times it). The torch-free pieces equal their originals: the numpy nets
against the torch nets (1e-5), the numpy STFT against stage 2's librosa feature (bit for bit), the numpy Viterbi
against librosa's, the weights reader against torch.load, and the shipped model's decisions against the torch +
librosa pipeline it was trained and tuned with."""
import collections
import io
import json
import os
import pickle
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
import soundfile
import torch

from local_models.common.errors import PackError
from local_models.common.features import FeatConfig, compute
from local_models.common.viterbi import viterbi as librosa_core_viterbi
from local_models.sad import inference
from local_models.sad.nets import NETS
from local_models.sad import neural
from local_models.sad.neural import NumpyNet, load_net_files, read_state_dict, stft_magnitude
from local_models.sad.statistical import two_class_hmm, viterbi_numpy

ROOT = Path(__file__).resolve().parents[1]
SR = 8000
STAGE2 = FeatConfig(kind="stft", sample_rate=SR, win_ms=50, hop_ms=10, n_fft=512)
# what loading the shipped model and segmenting must not import (prefixes of module names)
NOT_IMPORTED = ("torch", "librosa", "numba", "scipy.signal", "scipy.stats", "espnet2.train", "espnet2.tasks",
                "espnet2.bin", "sklearn")


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPEECH_RECIPES_CACHE", str(tmp_path / "cache"))


def speechlike(seconds: float, seed: int, sr: int = SR) -> np.ndarray:
    """Buzzy voiced bursts with a formant-like ripple in low noise (the shipped model calls some of it speech)."""
    rng = np.random.default_rng(seed)
    wave = (rng.standard_normal(int(seconds * sr)) * 0.005).astype(np.float32)
    t = 0.5
    while t < seconds - 1.5:
        d = rng.uniform(0.4, 1.2)
        a, b = int(t * sr), int((t + d) * sr)
        n = np.arange(b - a) / sr
        f0 = rng.uniform(100, 220) * (1 + 0.1 * np.sin(2 * np.pi * 3 * n))
        buzz = np.sign(np.sin(2 * np.pi * np.cumsum(f0) / sr)) * (1 + 0.5 * np.sin(2 * np.pi * 700 * n))
        wave[a:b] += (0.1 * buzz * np.hanning(b - a) ** 0.3).astype(np.float32)
        t += d + rng.uniform(0.3, 1.5)
    return wave


def shipped_files(tmp_path):
    """(config, checkpoint) of the shipped model, unpacked."""
    model = inference.load_model(inference.SHIPPED, paper="sad")
    return model.file("config"), model.file("model_file")


# ----------------------------------------------------------------------------- what a fresh process imports
LOAD_AND_SEGMENT = """
import json, sys
from local_models.sad.inference import SpeechSegmenter
seg = SpeechSegmenter.from_pretrained()
whole = seg(sys.argv[1])
chunked = list(seg.iter_segments(sys.argv[2], chunk_s=2.0))
whole16 = seg(sys.argv[2])
print(json.dumps({"whole": whole, "chunked": chunked, "whole16": whole16, "modules": sorted(sys.modules)}))
"""

CLI = """
import json, sys
from local_models.bin.speech_segments import main
rc = main([sys.argv[1], "--json", sys.argv[2], "--threads", "1"])
print(json.dumps({"rc": rc, "modules": sorted(sys.modules)}))
"""


def run_fresh(code: str, *args, tmp_path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1",
           "SPEECH_RECIPES_CACHE": str(tmp_path / "fresh_cache")}
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, cwd=ROOT,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def heavy(modules) -> list:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in NOT_IMPORTED)]


def test_shipped_model_loads_and_segments_without_torch_librosa_scipy_stats(tmp_path):
    wave = speechlike(12, 1)
    soundfile.write(tmp_path / "a8k.wav", wave, SR)
    soundfile.write(tmp_path / "a16k.wav", np.repeat(wave, 2), 2 * SR)  # resampled by numpy's polyphase filter, no scipy
    got = run_fresh(LOAD_AND_SEGMENT, tmp_path / "a8k.wav", tmp_path / "a16k.wav", tmp_path=tmp_path)
    assert heavy(got["modules"]) == []
    assert got["whole"] and got["chunked"]  # it did segment
    assert all(0 <= a < b <= 12.0 for a, b in got["whole"] + got["chunked"])
    assert got["whole16"] == got["chunked"]  # whole and chunked resample alike (both the recipes' polyphase filter)


def test_speech_segments_command_without_heavy_imports(tmp_path):
    soundfile.write(tmp_path / "rec.wav", np.repeat(speechlike(6, 2), 2), 2 * SR)
    got = run_fresh(CLI, tmp_path / "rec.wav", tmp_path / "out.json", tmp_path=tmp_path)
    assert got["rc"] == 0 and heavy(got["modules"]) == []
    assert str(tmp_path / "rec.wav") in json.loads((tmp_path / "out.json").read_text())


def test_the_import_check_sees_torch(tmp_path):
    """The check itself: a process that imports torch (and scipy.stats) is caught."""
    got = run_fresh("import json, sys, torch, scipy.stats; print(json.dumps({'modules': sorted(sys.modules)}))",
                    tmp_path=tmp_path)
    found = heavy(got["modules"])
    assert "torch" in found and "scipy.stats" in found


def test_a_bad_archive_is_one_line(tmp_path):
    bad = tmp_path / "model.tar.gz"
    bad.write_bytes(b"not an archive at all")
    with pytest.raises(PackError, match="not a model archive") as e:
        inference.SpeechSegmenter.from_pretrained(bad)
    assert "\n" not in str(e.value) and str(bad) in str(e.value)
    soundfile.write(tmp_path / "rec.wav", speechlike(3, 3), SR)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-m", "local_models.bin.speech_segments", "--model", str(bad),
                          str(tmp_path / "rec.wav")], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().count("\n") == 0 and out.stderr.startswith("speech-segments: error: ")


# ----------------------------------------------------------------------------- the torch-free pieces
@pytest.mark.filterwarnings("ignore:n_fft=512 is too large")  # librosa on inputs shorter than the FFT
@pytest.mark.parametrize("seconds", [0.03, 0.0375, 1.0, 7.01, 61.3])
def test_stft_is_stage2s_librosa_feature_bit_for_bit(seconds):
    wave = speechlike(max(seconds, 2.0), 4)[: int(seconds * SR)]
    np.testing.assert_array_equal(stft_magnitude(wave), compute(wave, STAGE2))


def test_state_dict_reader_is_torch_load(tmp_path):
    _, checkpoint = shipped_files(tmp_path)
    want = torch.load(checkpoint, map_location="cpu")
    got = read_state_dict(checkpoint)
    assert list(got) == list(want)
    for k, v in want.items():
        assert got[k].dtype == v.numpy().dtype and np.array_equal(got[k], v.numpy()), k
    # a non-contiguous tensor and a view with an offset into a shared storage
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    torch.save({"t": base.T, "row": base[2], "n": torch.tensor(7), "last": base[3, 5], "empty": base[4:],
                "spread": base[0].expand(3, 6)}, tmp_path / "views.pth")
    got = read_state_dict(tmp_path / "views.pth")
    assert np.array_equal(got["t"], base.T.numpy()) and np.array_equal(got["row"], base[2].numpy())
    assert got["n"] == 7 and got["last"] == 23 and got["empty"].shape == (0, 6)
    assert np.array_equal(got["spread"], base[0].expand(3, 6).numpy())  # stride 0


class _Storage:
    """Stands for storage "0" (4 floats) of a crafted checkpoint."""


class _CraftedTensor:
    """Pickles as torch.save writes a tensor (torch._utils._rebuild_tensor_v2), with any layout."""

    def __init__(self, storage, offset, size, stride):
        self.args = (storage, offset, size, stride, False, collections.OrderedDict())

    def __reduce__(self):
        return torch._utils._rebuild_tensor_v2, self.args


class _CraftedPickler(pickle.Pickler):
    def persistent_id(self, obj):
        return ("storage", torch.FloatStorage, "0", "cpu", 4) if isinstance(obj, _Storage) else None


def crafted_checkpoint(path: Path, offset, size, stride, storage=None) -> Path:
    """A torch-format zip whose one tensor has the given layout over a storage of 4 floats."""
    buf = io.BytesIO()
    _CraftedPickler(buf, protocol=2).dump({"net.x": _CraftedTensor(storage or _Storage(), offset, size, stride)})
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("c/data.pkl", buf.getvalue())
        z.writestr("c/data/0", np.arange(4, dtype="<f4").tobytes())
        z.writestr("c/byteorder", "little")
    return path


READ_IN_CHILD = """
import json, sys
from local_models.common.errors import PackError
from local_models.sad.neural import read_state_dict
out = {}
for f in sys.argv[1:]:
    try:
        out[f] = ["read", {k: v.tolist() for k, v in read_state_dict(f).items()}]
    except PackError as e:
        out[f] = ["PackError", str(e)]
    except Exception as e:
        out[f] = [type(e).__name__, str(e)]
print(json.dumps(out))
"""


def test_crafted_tensor_layouts_are_one_line_errors_not_crashes(tmp_path):
    """A view past its storage (which as_strided would read, or segfault on), a bad offset, size or stride, or a
    storage that is not one: PackError naming the file, read in a child process so that a crash shows as one."""
    bad = {"past_end": (1, (4,), (1,)), "offset_past_end": (10, (4,), (1,)), "huge_stride": (0, (4,), (10 ** 10,)),
           "huge_size": (0, (10 ** 12,), (1,)), "huge_2d": (0, (2, 3), (1, 2)), "negative_stride": (3, (4,), (-1,)),
           "negative_offset": (-1, (2,), (1,)), "negative_size": (0, (-2,), (1,)), "scalar_out_of_range": (10, (), ()),
           "scalar_negative": (-5, (), ()), "rank_mismatch": (0, (2, 2), (1,)), "float_offset": (0.5, (2,), (1,)),
           "storage_not_array": (0, (2,), (1,), 5)}
    files = {name: str(crafted_checkpoint(tmp_path / f"{name}.pth", *layout)) for name, layout in bad.items()}
    good = {"whole": (0, (4,), (1,)), "last_one": (3, (), ()), "strided": (1, (2,), (2,)), "stride0": (3, (3,), (0,)),
            "empty_past_end": (99, (0, 5), (5, 1))}
    files.update({name: str(crafted_checkpoint(tmp_path / f"{name}.pth", *layout)) for name, layout in good.items()})
    proc = subprocess.run([sys.executable, "-c", READ_IN_CHILD, *files.values()], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    out = json.loads(proc.stdout)
    for name in bad:
        kind, msg = out[files[name]]
        assert kind == "PackError" and msg.startswith(f"{files[name]}: not a readable torch checkpoint"), (name, msg)
        assert "\n" not in msg, name
    assert {name: out[files[name]] for name in good} == {
        "whole": ["read", {"net.x": [0, 1, 2, 3]}], "last_one": ["read", {"net.x": 3}],
        "strided": ["read", {"net.x": [1, 3]}], "stride0": ["read", {"net.x": [3, 3, 3]}],
        "empty_past_end": ["read", {"net.x": []}]}


def test_state_dict_reader_refuses_what_is_not_weights(tmp_path):
    (tmp_path / "text.pth").write_text("hello")
    with pytest.raises(PackError, match="text.pth: not a readable torch checkpoint"):
        read_state_dict(tmp_path / "text.pth")
    torch.save({"net.x": torch.zeros(2), "f": Path("/x")}, tmp_path / "obj.pth")  # a pickled object, not a tensor
    with pytest.raises(PackError, match="obj.pth: .*is not part of a state dict"):
        read_state_dict(tmp_path / "obj.pth")
    with zipfile.ZipFile(tmp_path / "evil.pth", "w") as z:  # a pickle that would call os.system
        z.writestr("evil/data.pkl", pickle.dumps({"x": os.system}))
    with pytest.raises(PackError, match="evil.pth: .*posix.system is not part of a state dict"):
        read_state_dict(tmp_path / "evil.pth")


def randomised(net):
    """NET in eval mode with random weights and batch-norm statistics (so that every parameter matters)."""
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, t in net.state_dict().items():
            if t.dtype.is_floating_point:
                t.copy_(torch.rand(t.shape, generator=g) + 0.5 if "running_var" in name
                        else torch.randn(t.shape, generator=g) * 0.3)
    return net.eval()


NET_CONFS = [("rnn", {"channels": [4, 8], "hidden": 8}),
             ("cnn1d", {"channels": [4, 8], "hidden": 8}),
             ("seg_rnn", {"channels": [4, 8], "hidden": 8, "seg_len": 5, "seg_shift": 2, "bidirectional": True}),
             ("seg_rnn", {"channels": [4], "hidden": 6, "seg_len": 3, "seg_shift": 1})]


@pytest.mark.parametrize("model,conf", NET_CONFS)
@pytest.mark.parametrize("T", [1, 7, 523])
def test_numpy_nets_are_the_torch_nets(model, conf, T, monkeypatch):
    monkeypatch.setattr(NumpyNet, "FRONT_CHUNK", 200)  # several chunks of the front end at T = 523
    net = randomised(NETS[model](**conf))
    feats = np.abs(np.random.default_rng(T).standard_normal((T, 257))).astype(np.float32) * 3
    want = net.frame_probs(torch.tensor(feats)[None])
    npnet = NumpyNet({"model": model, "model_conf": conf}, {f"net.{k}": v.numpy() for k, v in net.state_dict().items()})
    got = npnet.frame_probs(feats)
    assert got.dtype == np.float32 and got.shape == want.shape == (T,)
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=0)


def test_segment_rnn_runs_in_segment_batches(monkeypatch):
    """NumpyNet's segment RNN takes `infer_batch` segments per GRU pass (bounded memory on long recordings), with
    the probabilities of one pass and of the torch net at the same infer_batch."""
    conf = {"channels": [4], "hidden": 6, "seg_len": 5, "seg_shift": 2, "bidirectional": True}
    net = randomised(NETS["seg_rnn"](**conf, infer_batch=7))
    state = {f"net.{k}": v.numpy() for k, v in net.state_dict().items()}
    feats = np.abs(np.random.default_rng(3).standard_normal((300, 257))).astype(np.float32) * 3
    one_pass = NumpyNet({"model": "seg_rnn", "model_conf": conf}, state).frame_probs(feats)
    batches = []
    gru = neural._gru
    monkeypatch.setattr(neural, "_gru", lambda x, *a: batches.append(len(x)) or gru(x, *a))
    got = NumpyNet({"model": "seg_rnn", "model_conf": {**conf, "infer_batch": 7}}, state).frame_probs(feats)
    assert batches == [7] * 21 + [2]  # 149 segments
    np.testing.assert_allclose(got, one_pass, atol=1e-6, rtol=0)
    np.testing.assert_allclose(got, net.frame_probs(torch.tensor(feats)[None]), atol=1e-5, rtol=0)


@pytest.mark.parametrize("model,conf", NET_CONFS)
def test_saturated_logits_give_no_overflow_warning(model, conf):
    """Logits and GRU gates far below -88 (where float32 exp(-x) overflows) give posteriors of 0 silently, as torch."""
    net = randomised(NETS[model](**conf))
    with torch.no_grad():
        for name, t in net.named_parameters():
            if name in ("ff.bias", "tcn.3.bias") or name.startswith("gru.bias_ih"):
                t.fill_(-1000.0)
    feats = np.abs(np.random.default_rng(1).standard_normal((40, 257))).astype(np.float32)
    npnet = NumpyNet({"model": model, "model_conf": conf}, {f"net.{k}": v.numpy() for k, v in net.state_dict().items()})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = npnet.frame_probs(feats)
    want = net.frame_probs(torch.tensor(feats)[None])
    assert np.all(want == 0)
    np.testing.assert_array_equal(got, want)


def test_numpy_viterbi_is_librosas():
    import librosa.sequence

    rng = np.random.default_rng(0)
    for S, T in ((2, 1), (3, 50), (10, 300)):  # dense HMM in probabilities: librosa's public viterbi
        trans = rng.random((S, S)) + 0.1
        trans /= trans.sum(axis=1, keepdims=True)
        prob = rng.uniform(0.01, 1.0, (S, T))
        init = np.full(S, 1 / S)
        want = librosa.sequence.viterbi(prob, trans, p_init=init)
        assert np.array_equal(viterbi_numpy(np.log(prob.T), np.log(trans), np.log(init)), want)
    log_trans, log_init = two_class_hmm(5, 0.9)  # the SAD ring: forbidden moves (-inf) and exact ties
    for seed in range(5):
        emis = np.round(np.random.default_rng(seed).standard_normal((400, 10)), 1)
        emis[:, :5] = emis[:, [0]]
        emis[:, 5:] = emis[:, [5]]
        assert np.array_equal(viterbi_numpy(emis, log_trans, log_init), librosa_core_viterbi(emis, log_trans, log_init))


def test_shipped_decisions_are_the_torch_and_librosa_pipelines(tmp_path):
    """The shipped model decides every frame of a test recording as the pipeline it was trained and tuned with
    (librosa features, the torch net, librosa's Viterbi) does; its posteriors differ by float32 rounding only."""
    config, checkpoint = shipped_files(tmp_path)
    wave = speechlike(40, 5)
    seg = inference.SpeechSegmenter.from_pretrained()
    assert isinstance(seg.members[0][0].net, NumpyNet)
    torch_net = load_net_files(config, checkpoint)
    with torch.inference_mode():
        post = torch_net.frame_probs(torch.tensor(compute(wave, STAGE2))[None])[: len(wave) // 80]
    np.testing.assert_allclose(seg.frame_scores(wave, SR), post, atol=1e-5, rtol=0)
    log_trans, log_init = two_class_hmm(5, 0.9)
    from local_models.sad.neural import hmm_emissions, hmm_smooth

    want = librosa_core_viterbi(hmm_emissions(post, seg.threshold), log_trans, log_init) >= 5
    got = seg.frame_decisions(wave, SR)
    assert 0.05 < want.mean() < 0.95  # the recording has both decisions
    assert np.array_equal(got, want)
    assert seg.members[0][0].viterbi == "numpy"
    scores = seg.frame_scores(wave, SR)
    for th in (0.05, 0.15, 0.5, 0.9):  # both kernels of hmm_smooth, at several thresholds
        assert np.array_equal(hmm_smooth(scores, th, kernel="numpy"), hmm_smooth(scores, th, kernel="librosa"))


def test_chunked_bigru_sees_every_stft_row_as_the_whole_call():
    """With context covering the file, the chunked BiGRU's scores are the whole call's to the last frame, also when
    the length is a multiple of the hop (the STFT then has one row more than the 10 ms frames, and the whole call's
    backward GRU starts from it)."""
    from local_models.sad import streaming

    seg = inference.SpeechSegmenter.from_pretrained()
    for n in (24000, 24037):
        w = speechlike(3, 2)[:n] if n <= 24000 else np.concatenate([speechlike(3, 2), speechlike(1, 3)[:37]])
        whole = seg.frame_scores(w, SR)
        st = streaming.decision_stream(seg.members[0][0], seg.threshold, context_s=100)
        chunked = np.concatenate([st.windows.push(w[:n // 3]), st.windows.push(w[n // 3:], final=True)])
        assert len(chunked) == len(whole) and np.array_equal(chunked, whole), n


def test_streamed_bigru_carries_the_forward_state_exactly():
    """BiGRUWindows' forward direction reads each row once from the state it carried (the whole call's, bit for
    bit); without the carried state it would differ; the backward direction reads its context past the kept rows."""
    from local_models.sad import streaming

    net = inference.SpeechSegmenter.from_pretrained().members[0][0].net
    rows = net.front(neural.stft_magnitude(speechlike(6, 3)))  # (601, width): a 6 s recording's front-end rows
    H = net.w["gru.weight_hh_l0"].shape[1]
    whole = neural._gru(rows[None], net.w, bidirectional=True)[0]
    _, h1 = net.head_stream(rows[:250], 200, None)
    assert np.array_equal(h1, whole[199, :H])
    probs, h2 = net.head_stream(rows[200:], len(rows) - 200, h1)  # to the end: the backward one as the whole call
    assert np.array_equal(h2, whole[-1, :H])
    assert np.array_equal(probs, net.head(rows)[200:])
    _, cold = net.head_stream(rows[200:], len(rows) - 200, None)
    assert not np.allclose(cold, whole[-1, :H], atol=1e-4)  # the carried state matters
    # in chunks of 97 rows with 150 rows of context: each chunk's scores are the whole call's forward states beside
    # a backward pass over the chunk and its context (a slow reference, one bidirectional call per window)
    win = streaming.BiGRUWindows(net, right=150, width=rows.shape[1])
    for a in range(0, len(rows), 97):
        start, final = win.done, a + 97 >= len(rows)
        got = win.push(rows[a: a + 97], final=final)
        end = len(rows) if final else min(len(rows), a + 97)
        back = neural._gru(rows[None, start:end], net.w, bidirectional=True)[0, : len(got), H:]
        both = np.concatenate([whole[start: start + len(got), :H], back], axis=1)
        want = neural._sigmoid((both @ net.w["ff.weight"].T + net.w["ff.bias"]).max(axis=1))
        np.testing.assert_allclose(got, want, atol=1e-6, rtol=0)
    assert win.done == len(rows)
