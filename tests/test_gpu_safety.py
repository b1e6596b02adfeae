"""Device safety of the inference paths (issue #28), checked on a machine without a GPU.

A GPU run crashed where CPU runs never do: a CPU tensor added to a GPU one (the RNN-T beam search), `.numpy()`
on a GPU tensor (SAD frame scoring), fractional durations and reduced precision (JDI-T under bf16 autocast).
`pretend_cuda` reproduces the first two on the CPU: `to_pretend_cuda` turns a module's tensors into CPU
tensors of a subclass whose `.device` says cuda:0, and the torch-function mode enforces CUDA's rules on them:
an op that mixes them with non-scalar plain CPU tensors raises as CUDA does, `.numpy()` raises, `.cpu()` gives
a plain tensor, a factory or `.to()` with a cuda device makes a pretend-cuda tensor, and results of pretend-cuda
inputs are pretend-cuda. The JDI-T checks run under CPU bf16 autocast. Every check fails on the code before
the fixes (issue #28); the tools' checks: --ngpu without a GPU, --model-file / --model_file.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten, tree_map

ROOT = Path(__file__).resolve().parents[1]
CUDA = torch.device("cuda", 0)


# ---------------------------------------------------------------------------------------------- pretend cuda

class OnCuda(torch.Tensor):
    """A CPU tensor that a `pretend_cuda` mode treats as living on cuda:0."""

    __torch_function__ = torch._C._disabled_torch_function_impl  # the mode does all the work

    @property
    def device(self):
        return CUDA


def _on(t) -> bool:
    return isinstance(t, OnCuda)


def _plain(t):
    return t.as_subclass(torch.Tensor) if _on(t) else t


def _wrap(t):
    return t.as_subclass(OnCuda) if isinstance(t, torch.Tensor) and not _on(t) else t


# real CUDA accepts plain CPU tensors in these places: CPU index tensors, pack_padded_sequence's CPU lengths
# and the packed batch sizes an RNN then gets, copy_ across devices (and a type query)
_CPU_OPERANDS_OK = {"__getitem__", "__setitem__", "_pack_padded_sequence", "_pad_packed_sequence", "lstm", "gru",
                    "rnn_tanh", "rnn_relu", "copy_", "_has_compatible_shallow_copy_type"}


class pretend_cuda(TorchFunctionMode):
    """Within it, OnCuda tensors follow CUDA's device rules (see the module docstring)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        if name == "__get__":  # a property such as .data, .T, .grad: named by its owner
            name = getattr(getattr(func, "__self__", None), "__name__", "")
        tensors = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        on = any(_on(t) for t in tensors)
        if name in ("numpy", "__array__") and on:
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
                            "tensor to host memory first.")
        if name == "cpu":
            return _plain(func(*tree_map(_plain, args), **kwargs))
        if name == "cuda":
            return _wrap(_plain(args[0]).clone())
        target = None  # where the result goes: True cuda, False cpu, None like the inputs
        if name == "to":
            for a in list(args[1:]) + [kwargs.get("device")]:
                if isinstance(a, torch.Tensor):
                    target = _on(a)
                elif isinstance(a, (str, torch.device)):
                    target = torch.device(a).type == "cuda"
            args = tuple(_plain(a) if isinstance(a, torch.Tensor) else
                         torch.device("cpu") if isinstance(a, (str, torch.device)) else a for a in args)
            if "device" in kwargs:
                kwargs["device"] = "cpu"
        elif kwargs.get("device") is not None:  # a factory (torch.zeros(..., device=...)) or the like
            target = torch.device(kwargs["device"]).type == "cuda"
            kwargs["device"] = "cpu"
        if on and name not in _CPU_OPERANDS_OK and name != "to":
            cpu = [t for t in tensors if not _on(t) and t.dim() > 0]
            if cpu:
                raise RuntimeError(f"{name}: Expected all tensors to be on the same device, but found at least two "
                                   f"devices, cuda:0 and cpu! (CPU operand of shape {tuple(cpu[0].shape)})")
        out = func(*tree_map(_plain, args), **tree_map(_plain, kwargs))
        if name in ("_pack_padded_sequence", "_pad_packed_sequence") and on:  # batch sizes / lengths: CPU
            return _wrap(out[0]), out[1]
        if target is True or (target is None and on):
            return tree_map(_wrap, out)
        return out


def to_pretend_cuda(module: torch.nn.Module) -> torch.nn.Module:
    """The module's parameters and buffers as OnCuda tensors (its Parameters replaced, as module.to() does with
    overwrite_module_params_on_conversion)."""
    old = torch.__future__.get_overwrite_module_params_on_conversion()
    torch.__future__.set_overwrite_module_params_on_conversion(True)
    try:
        with pretend_cuda():
            module.to(CUDA)
    finally:
        torch.__future__.set_overwrite_module_params_on_conversion(old)
    assert all(_on(t) for t in list(module.parameters()) + list(module.buffers()))
    return module


def test_pretend_cuda_enforces_cuda_rules():
    """The simulator itself: the errors a GPU gives, and no false alarms on what CUDA accepts."""
    lin = to_pretend_cuda(torch.nn.Linear(3, 2))
    with pretend_cuda():
        assert lin.weight.device.type == "cuda"
        x = torch.zeros(4, 3, device=lin.weight.device)
        y = lin(x)
        assert y.device.type == "cuda" and y.cpu().device.type == "cpu"
        assert isinstance(y.detach().float().cpu().numpy(), np.ndarray)
        assert (y + torch.tensor(1.0)).device.type == "cuda"  # a CPU scalar is fine on CUDA
        assert y[torch.tensor([0, 2])].shape == (2, 2)  # CPU indices too
        assert y.sum().item() == y.sum().item() and len(y.tolist()) == 4
        with pytest.raises(RuntimeError, match="same device"):
            lin(torch.zeros(4, 3))
        with pytest.raises(RuntimeError, match="same device"):
            y + torch.zeros(2)
        with pytest.raises(TypeError, match="numpy"):
            y.numpy()
        with pytest.raises(TypeError, match="numpy"):
            np.asarray(y)


# ---------------------------------------------------------------------------------------------- 1. RNN-T search

def tiny_transducer(system="multisoftmax", **kw):
    from local_models.multisoftmax import units as U
    from local_models.multisoftmax.model import UNION, MultilingualTransducer

    vocabs = {"en": U.build_vocab(["ab ba"]), "hi": U.build_vocab(["कख खक"])}
    lists = dict(vocabs, **{UNION: U.union_vocab(vocabs.values())})
    torch.manual_seed(0)
    net = MultilingualTransducer(["en", "hi"], lists, system=system, enc_layers=1, enc_units=16, pred_layers=1,
                                 pred_units=16, embed_dim=8, joint_dim=16, lid_hidden=8, **kw).eval()
    with torch.no_grad():  # sharper joint outputs than a fresh init's: the search emits units
        for head in net.heads.values():
            head.joint.out.weight.mul_(8.0)
    return net


def mel(T=24):
    return torch.from_numpy(np.random.default_rng(0).standard_normal((T, 80)).astype(np.float32))


@pytest.mark.parametrize("system,lid", [("multisoftmax", None), ("onehot", 1)])
def test_rnnt_streaming_search_runs_on_the_models_device(system, lid):
    """The crash: the search's hypothesis scores were a CPU tensor added to the joint's (GPU) log-probs; the
    one-hot system's language input and the encoder's lengths were CPU tensors too."""
    from local_models.multisoftmax.decode import decode_full, decode_utterance, encode_chunks

    net = tiny_transducer(system)
    head = "hi" if system == "multisoftmax" else "union"
    want = decode_utterance(net, mel(), head, beam=3, chunk=4, lid=lid)
    to_pretend_cuda(net)
    with pretend_cuda():
        x = mel().to(CUDA)
        got = decode_utterance(net, x, head, beam=3, chunk=4, lid=lid)
        assert [u for u, _ in decode_full(net, x, head, beam=3, lid=lid)] == [u for u, _ in got]
        assert all(h.device.type == "cuda" for h, _ in encode_chunks(net, x, 4, lid))
    assert want[0][0] and [u for u, _ in got] == [u for u, _ in want]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-6)


def test_rnnt_lid_free_decoding_runs_on_the_models_device():
    from local_models.multisoftmax.decode import LidFreeDecoder, encode_chunks

    net = to_pretend_cuda(tiny_transducer(lid=True))
    with pretend_cuda():
        dec = LidFreeDecoder(net, beam=2, tau=3, s_th=0.1)
        for h, lp in encode_chunks(net, mel().to(CUDA), 5, with_lid=True):
            dec.step(h, lp)
        res = dec.result()
    assert res.lang in ("en", "hi") and res.frames == 8


# ---------------------------------------------------------------------------------------------- 2. SAD scoring

SAD_TINY = dict(channels=[4, 8], hidden=8)


@pytest.mark.parametrize("name", ["cnn1d", "rnn", "seg_rnn"])
def test_sad_frame_probs_come_back_from_the_device_as_float32_numpy(name):
    """The crash: frame_probs called .numpy() on the net's (GPU) output."""
    from local_models.sad.nets import NETS

    torch.manual_seed(0)
    net = NETS[name](**SAD_TINY).eval()
    x = torch.rand(1, 23, 257)
    want = net.frame_probs(x)
    to_pretend_cuda(net)
    with pretend_cuda():
        got = net.frame_probs(x.to(CUDA))
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, atol=1e-6)


@pytest.mark.parametrize("name", ["cnn1d", "seg_rnn"])
def test_sad_frame_probs_under_bf16_autocast_are_float32_numpy(name):
    """numpy has no bf16: .numpy() of a bf16 output fails even on the CPU."""
    from local_models.sad.nets import NETS

    torch.manual_seed(0)
    net = NETS[name](**SAD_TINY).eval()
    x = torch.rand(1, 23, 257)
    want = net.frame_probs(x)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = net.frame_probs(x)
    assert low.dtype == np.float32 and low.shape == want.shape and np.abs(low - want).max() < 0.05


def test_sad_neural_detector_feeds_its_net_on_the_nets_device():
    """NeuralDetector made its features a CPU tensor whatever the net's device."""
    from local_models.sad.nets import NETS
    from local_models.sad.neural import SegRNN

    torch.manual_seed(0)
    net = NETS["seg_rnn"](**SAD_TINY).eval()
    feats = np.random.default_rng(0).random((31, 257)).astype(np.float32)
    det = SegRNN(model_dir="unused", _net=net)
    want = det.posteriors_from_feats(feats, 31)
    to_pretend_cuda(net)
    with pretend_cuda():
        got = det.posteriors_from_feats(feats, 31)
    np.testing.assert_allclose(got, want, atol=1e-6)


# ---------------------------------------------------------------------------------------------- 3. JDI-T durations

JDIT_TINY = dict(adim=16, aheads=2, elayers=1, eunits=16, dlayers=1, dunits=16, embed_dim=16, eprenet_conv_chans=16,
                 dprenet_units=16, aligner_heads=2, aligner_units=32, duration_predictor_chans=16)
BF16 = dict(device_type="cpu", dtype=torch.bfloat16)


def tiny_jdit():
    from local_models.jdit.model import JDIT

    torch.manual_seed(0)
    return JDIT(idim=10, odim=4, **JDIT_TINY).eval()


def spy_index_arithmetic(m):
    """Record, for every length-regulator and duration-predictor call, whether autocast was on and the
    durations' dtype."""
    calls = []
    lr, dp = m.length_regulator.forward, m.duration_predictor.inference

    def length_regulator(xs, ds, *a, **k):
        calls.append(("length_regulator", torch.is_autocast_enabled("cpu"), ds.dtype))
        return lr(xs, ds, *a, **k)

    def duration_predictor(xs, masks=None):
        out = dp(xs, masks)
        calls.append(("duration_predictor", torch.is_autocast_enabled("cpu"), out.dtype))
        return out

    m.length_regulator.forward, m.duration_predictor.inference = length_regulator, duration_predictor
    return calls


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_jdit_fractional_durations_are_rounded_at_token_boundaries(dtype):
    """The crash: 5.5 frames per token (floats) were truncated per token (.long(): 5 each), so the output was
    shorter than the durations the caller gave (4 x 5.5 = 22 frames -> 20) and the caller's indices ran past
    it. Now: b_i = round(cumulative duration), frames_i = b_i - b_(i-1), total round(sum)."""
    m = tiny_jdit()
    with torch.autocast(**BF16):
        out = m.inference(torch.tensor([3, 4, 5, 6]), durations=torch.full((4,), 5.5, dtype=dtype),
                          use_teacher_forcing=True)
    assert out["duration"].dtype == torch.int64 and out["duration"].tolist() == [6, 5, 5, 6]  # 6 11 16 22
    assert out["feat_gen"].shape == (22, 4) and out["feat_gen"].dtype == torch.float32
    # whole frame counts in a float tensor are taken as they are; integer tensors unchanged
    for d in (torch.tensor([2.0, 0.0, 3.0, 1.0]), torch.tensor([2, 0, 3, 1], dtype=torch.int32)):
        assert m.inference(torch.tensor([3, 4, 5, 6]), durations=d, use_teacher_forcing=True)["duration"].tolist() \
            == [2, 0, 3, 1]


@pytest.mark.parametrize("bad", [[2.0, -1.0, 3.0], [2.0, float("nan"), 1.0], [1, -2, 3]])
def test_jdit_rejects_negative_or_non_finite_durations(bad):
    m = tiny_jdit()
    with pytest.raises(ValueError, match="durations must be"):
        m.inference(torch.tensor([3, 4, 5]), durations=torch.tensor(bad), use_teacher_forcing=True)


def test_jdit_index_arithmetic_is_integer_and_never_under_autocast():
    m = tiny_jdit()
    calls = spy_index_arithmetic(m)
    with torch.autocast(**BF16):
        out = m.inference(torch.tensor([3, 4, 5, 6]), alpha=1.3)
        m.inference(torch.tensor([3, 4, 5, 6]), durations=torch.tensor([2.5, 1.5, 3.0, 0.0]), use_teacher_forcing=True)
    assert len(out["feat_gen"]) == int(out["duration"].sum()) and out["duration"].dtype == torch.int64
    assert [c[0] for c in calls] == ["duration_predictor", "length_regulator", "length_regulator"]
    assert all(not autocast and dtype == torch.int64 for _, autocast, dtype in calls), calls


def test_jdit_denormalised_output_keeps_every_frame_under_bf16(tmp_path):
    """ESPnet's GlobalMVN.inverse sizes its mask from feat_gen's dtype (x.new_full(.., T)): with a bf16 feat_gen
    T = 257 became 256 and the last de-normalised frame came out zero."""
    from espnet2.layers.global_mvn import GlobalMVN
    from espnet2.tts.espnet_model import ESPnetTTSModel

    stats = tmp_path / "feats_stats.npz"
    np.savez(stats, count=10, sum=np.full(4, 30.0), sum_square=np.full(4, 100.0))  # mean 3, std 1
    model = ESPnetTTSModel(None, None, None, GlobalMVN(stats), None, None, tiny_jdit()).eval()
    with torch.autocast(**BF16):
        out = model.inference(torch.tensor([3, 4, 5, 6]), speech=torch.zeros(257, 4),
                              durations=torch.tensor([64, 64, 64, 65]), use_teacher_forcing=True)
    feat, denorm = out["feat_gen"], out["feat_gen_denorm"]
    assert denorm.shape == (257, 4) and bool((denorm[-1] != 0).all()), "the last frame was masked"
    torch.testing.assert_close(denorm.float(), feat.float() + 3.0, atol=0.05, rtol=0)
    assert feat.dtype == torch.float32


def test_jdit_synthesis_and_alignment_run_on_the_models_device():
    """The aligner's best-path read-out (viterbi) called .numpy() on the model's tensors."""
    m = tiny_jdit()
    text, feats = torch.tensor([[3, 4, 5, 6]]), torch.randn(1, 17, 4)
    want, _ = m.align(text, torch.tensor([4]), feats, torch.tensor([17]), readouts=("argmax", "viterbi"))
    to_pretend_cuda(m)
    with pretend_cuda():
        x, y = text.to(CUDA), feats.to(CUDA)
        got, alpha = m.align(x, torch.tensor([4], device=CUDA), y, torch.tensor([17], device=CUDA),
                             readouts=("argmax", "viterbi"))
        out = m.inference(x[0], durations=torch.tensor([2.5, 1.5, 3.0, 0.0], device=CUDA), use_teacher_forcing=True)
        assert all(v.device.type == "cuda" for v in [*got.values(), alpha, out["feat_gen"], out["duration"]])
        got = {k: v.cpu().tolist() for k, v in got.items()}
    assert got == {k: v.tolist() for k, v in want.items()} and out["duration"].cpu().tolist() == [2, 2, 3, 0]


# ---------------------------------------------------------------------------------------------- other decoders

@pytest.mark.parametrize("arch,conf", [("salad", dict(emb=16, d_ff=32, num_blocks=1, heads=2)),
                                       ("rnn", dict(emb=16, hidden=16))])
def test_salad_synthesis_runs_on_the_models_device(arch, conf):
    """synthesise_frames made its input a CPU tensor whatever the model's device."""
    from local_models.salad.task import RNNModel, SaladModel

    torch.manual_seed(0)
    model = (SaladModel if arch == "salad" else RNNModel)(idim=6, odim=43, **conf).eval()
    ling = np.random.default_rng(0).standard_normal((25, 6)).astype(np.float32)
    want = model.synthesise_frames(ling)
    to_pretend_cuda(model)
    with pretend_cuda():
        got = model.synthesise_frames(ling)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_vqvae_codes_and_inverter_run_on_the_models_device(tmp_path):
    """Code extraction made its input a CPU tensor; the inverter's frozen VQ-VAE (loaded on the CPU when the
    inverter is built) moves with the inverter."""
    import yaml

    from local_models.vqvae.inference import encode_all
    from local_models.vqvae.task import InverterModel, VQVAEModel

    conf = dict(idim=5, num_speakers=1, encoder_type="conv", num_codes=8, code_dim=4, enc_dim=16, dec_dim=16)
    torch.manual_seed(0)
    vq = VQVAEModel(**conf).eval()
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"model": "vqvae", "model_conf": conf}))
    torch.save(vq.state_dict(), tmp_path / "vq.pth")
    inv = InverterModel(str(tmp_path / "config.yaml"), str(tmp_path / "vq.pth"), n_bins=9, dim=16, heads=2, ff=32,
                        layers=1).eval()
    feats = {"u1": np.random.default_rng(0).standard_normal((22, 5)).astype(np.float32)}
    x = torch.from_numpy(feats["u1"])[None]
    want_codes = encode_all(vq, feats)
    with torch.no_grad():
        want_mag = inv.predict(x, torch.tensor([22]))[0]
    to_pretend_cuda(vq)
    to_pretend_cuda(inv)  # asserts that every parameter and buffer, the VQ-VAE's included, moved
    with pretend_cuda(), torch.no_grad():
        got_codes = encode_all(vq, feats, CUDA)
        mag, lengths = inv.predict(x.to(CUDA), torch.tensor([22], device=CUDA))
        assert mag.device.type == "cuda"
        mag = mag.cpu()
    assert got_codes["u1"].tolist() == want_codes["u1"].tolist()
    torch.testing.assert_close(mag, want_mag)


# ---------------------------------------------------------------------------------------------- the tools' options

# tool -> its required arguments (paths need not exist: --ngpu is checked before anything is read)
TOOLS = {
    "sad_decode": ["--system", "cnn_hmm", "data", "out"],
    "multisoftmax_decode": ["--model_dir", "exp", "--feats", "feats.scp", "--utt2lid", "utt2lid", "out"],
    "salad_decode": ["--model-dir", "exp", "dump", "out"],
    "jdit_synth": ["--fbank-conf", "fbank.conf", "--model-dir", "exp", "--text", "text_phn", "out"],
    "jdit_align": ["--model-dir", "exp", "data", "out"],
    "vqvae_extract": ["--model-dir", "exp", "feats.scp", "out"],
    "vqvae_resynth": ["--model-dir", "exp", "feats.scp", "out"],
    "jdit_inference": ["--train_config", "exp/config.yaml", "--output_dir", "out",
                       "--data_path_and_name_and_type", "text_phn,text,text"],
}


def tool(name):
    import importlib

    return importlib.import_module(f"local_models.bin.{name}")


def run_main(name, argv, capsys):
    """(exit status, stderr) of a tool's main, whether it returns a status or calls sys.exit."""
    try:
        rc = tool(name).main(argv)
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    if isinstance(rc, str):
        rc, err = 1, err + rc
    return rc, err


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_ngpu_without_a_gpu_is_a_clear_error(name, capsys, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # a GPU machine too must see the error here
    rc, err = run_main(name, ["--ngpu", "1"] + TOOLS[name], capsys)
    assert rc not in (0, None) and "--ngpu 1 but torch.cuda.is_available() is False" in err, err


@pytest.mark.parametrize("name", sorted(set(TOOLS) - {"jdit_inference"}))
@pytest.mark.parametrize("spelling", ["--model-file", "--model_file"])
def test_model_file_takes_both_spellings_and_ngpu_defaults_to_the_cpu(name, spelling):
    args = tool(name).get_parser().parse_args(TOOLS[name] + [spelling, "ckpt.pth"])
    assert args.model_file == "ckpt.pth" and args.ngpu == 0


@pytest.mark.parametrize("spelling", ["--model-file", "--model_file"])
def test_jdit_inference_hands_espnet_its_model_file_and_ngpu(spelling, monkeypatch):
    import espnet2.bin.tts_inference

    seen = []
    monkeypatch.setattr(espnet2.bin.tts_inference, "main", seen.append)
    tool("jdit_inference").main(TOOLS["jdit_inference"] + [spelling, "exp/ckpt.pth"])
    argv = seen[0]
    assert argv[argv.index("--model_file") + 1] == "exp/ckpt.pth" and argv[argv.index("--ngpu") + 1] == "0"
    assert "--model-file" not in argv and argv[:len(TOOLS["jdit_inference"])] == TOOLS["jdit_inference"]


def test_sad_decode_command_line_passes_the_device_options_through(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": ""}  # no GPU for torch even on a GPU machine
    proc = subprocess.run([sys.executable, "-m", "local_models.bin.sad_decode", "--system", "energy",
                           "--model_file", "x.pth", "--ngpu", "1", str(tmp_path), str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert proc.returncode != 0 and "--ngpu 1 but torch.cuda.is_available() is False" in proc.stderr, proc.stderr
