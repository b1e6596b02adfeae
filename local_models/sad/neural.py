"""Detectors of the trained neural SAD systems (paper Sec. 3 / Table 2).

`scores(wave, sr)` = the net's speech posterior per 10 ms frame (computed on the same STFT magnitude as
stage 2). Smoothing happens in `decide(scores, threshold)`, so the recipe's dev threshold sweep still works:
* "hmm": two-class HMM (5 noise + 5 speech states, stay 0.9; statistical.two_class_hmm / viterbi_ring)
  with emissions log p / log(1-p) and a bias logit(threshold) subtracted from the speech class (so the
  threshold plays the role of alpha: bias 0 at 0.5);
* "median": threshold, then a median filter over `median_s` seconds (default 0.5 s);
* "none": plain threshold (segment RNN: its segment OR rule already smooths).

Model directories: exp/<cnn1d|rnn|seg_rnn> under $SAD_EXP_DIR (default: ./exp), holding ESPnet's
config.yaml and valid.loss.best.pth (else latest.pth / the newest <N>epoch.pth), or `model_file` when given.
The net runs on `device` (cpu, or cuda for sad_decode --ngpu 1); the features go there, the posteriors come
back as float32 numpy.

Inference without torch (SpeechSegmenter on the CPU, issue #52: `import torch` alone holds about 470 MiB and takes
1.5 s): `NumpyNet` runs the same three nets' eval-mode forward in numpy on the checkpoint's weights, read by
`read_state_dict` without torch; `stft_magnitude` is stage 2's feature without librosa; the HMM's Viterbi is numpy
(`viterbi="numpy"`: statistical.viterbi_numpy). Each equals its torch / librosa original (tests/test_sad_lean_load.py).
"""
from __future__ import annotations

import collections
import os
import pickle
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

from local_models.common.errors import PackError
from local_models.common.viterbi import viterbi as librosa_viterbi, warm_up

from .detectors import SHIFT, Detector, n_frames, num_segments, segment_frame_scores
from .statistical import two_class_hmm, viterbi_numpy
from .systems import DEVBEST, SYSTEMS, VOTE, base_system, voters

STATES, STAY = 5, 0.9
POSTERIOR_SWEEP = [0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8,
                   0.85, 0.9, 0.95, 0.98]


def model_file(model_dir: Path, name: str = "") -> Path:
    """model_dir/name when given, else the best checkpoint there."""
    if name:
        if not (model_dir / name).is_file():
            raise FileNotFoundError(f"{model_dir / name}: no such model file")
        return model_dir / name
    for name in ("valid.loss.best.pth", "valid.loss.ave.pth", "latest.pth"):
        if (model_dir / name).exists():
            return model_dir / name
    epochs = sorted(model_dir.glob("*epoch.pth"), key=lambda p: int(p.name.split("epoch")[0]))
    if epochs:
        return epochs[-1]
    raise FileNotFoundError(f"{model_dir}: no trained model (valid.loss.best.pth, latest.pth or <N>epoch.pth); "
                            "run the training stage first")


def build_net(conf: dict):
    """An untrained net from an ESPnet SAD config (its `model` and `model_conf`)."""
    from .nets import NETS  # nets imports torch: loaded with the first net, not by `import neural`

    return NETS[conf["model"]](**(conf.get("model_conf") or {}))


def load_net(model_dir: Path, device="cpu", model_file_name: str = ""):
    """The net of an ESPnet SAD training dir on `device`, in eval mode, without importing espnet (same as
    SADTask.build_model_from_file(...).net: config.yaml's `model` / `model_conf`, the `net.` weights of
    `model_file_name`, default the best checkpoint: see model_file)."""
    if not (model_dir / "config.yaml").is_file():
        raise FileNotFoundError(f"{model_dir}/config.yaml: no trained model; run the training stage first")
    return load_net_files(model_dir / "config.yaml", model_file(model_dir, model_file_name), device)


def load_net_files(config: Path, checkpoint: Path, device="cpu", engine: str = "torch"):
    """The net of an ESPnet SAD config.yaml + checkpoint (its `net.` weights) on `device`, in eval mode (what
    load_net reads from a training dir, and a packed model's files). ENGINE "numpy": a NumpyNet (CPU only), which
    neither imports torch nor needs it installed."""
    import yaml

    conf = yaml.safe_load(Path(config).read_text())
    if engine == "numpy":
        return NumpyNet(conf, read_state_dict(checkpoint))
    import torch

    net = build_net(conf)
    state = torch.load(checkpoint, map_location=device)
    net.load_state_dict({k[len("net."):]: v for k, v in state.items() if k.startswith("net.")})
    return net.to(device).eval()


# ----------------------------------------------------------------------------- inference without torch
N_FFT, WIN, HOP = 512, 400, 80  # stage 2's FeatConfig(kind="stft", sample_rate=8000, win_ms=50, hop_ms=10, n_fft=512)
STFT_BLOCK = 4096  # frames per FFT call: bounded temporaries on long recordings


def hann_window() -> np.ndarray:
    """scipy.signal.get_window("hann", WIN, fftbins=True) (periodic; scipy's general_cosine arithmetic) centred in
    N_FFT zeros, as librosa.stft pads it (librosa.util.pad_center)."""
    fac = np.linspace(-np.pi, np.pi, WIN + 1)
    w = np.zeros(WIN + 1)
    w += 0.5 * np.cos(0 * fac)
    w += 0.5 * np.cos(1 * fac)
    out = np.zeros(N_FFT)
    lpad = (N_FFT - WIN) // 2
    out[lpad: lpad + WIN] = w[:WIN]
    return out


def stft_magnitude(wave: np.ndarray) -> np.ndarray:
    """(1 + len // HOP, 257) float32 |STFT| of an 8 kHz WAVE: common.features.compute(wave, stage 2's FeatConfig),
    i.e. librosa.stft (centred frames, zero padding, the Hann window, numpy's FFT, float64 products stored as
    complex64), computed here without importing librosa (whose stft loads scipy.signal: 0.8 s, 50 MiB)."""
    y = np.pad(np.asarray(wave, dtype=np.float32), N_FFT // 2)
    frames = np.lib.stride_tricks.sliding_window_view(y, N_FFT)[::HOP]
    window = hann_window()
    out = np.empty((len(frames), N_FFT // 2 + 1), dtype=np.float32)
    for a in range(0, len(frames), STFT_BLOCK):
        spec = np.fft.rfft(window * frames[a: a + STFT_BLOCK], axis=-1).astype(np.complex64)
        out[a: a + STFT_BLOCK] = np.abs(spec)
    return out


# torch.save's storage classes -> numpy dtypes (the ones a SAD net's state dict holds)
STORAGE_DTYPES = {"FloatStorage": "f4", "DoubleStorage": "f8", "HalfStorage": "f2", "LongStorage": "i8",
                  "IntStorage": "i4", "ShortStorage": "i2", "CharStorage": "i1", "ByteStorage": "u1",
                  "BoolStorage": "?"}


def _rebuild_tensor(storage, offset, size, stride, *_):
    """torch._utils._rebuild_tensor_v2 onto numpy: SIZE elements of STORAGE from OFFSET with STRIDE (in elements).
    The view must lie inside the storage (torch's own check): as_strided would otherwise read past the buffer."""
    if not isinstance(storage, np.ndarray):
        raise ValueError(f"a tensor's storage is a {type(storage).__name__}")
    size, stride = tuple(size), tuple(stride)
    if not all(type(v) is int for v in (offset, *size, *stride)) or len(size) != len(stride):
        raise ValueError(f"tensor layout offset {offset!r}, size {size!r}, stride {stride!r} is not one")
    if offset < 0 or min(size + stride, default=0) < 0:
        raise ValueError(f"negative tensor offset, size or stride ({offset}, {size}, {stride})")
    if 0 in size:  # no elements: torch accepts any storage
        return np.zeros(size, dtype=storage.dtype)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= len(storage):
        raise ValueError(f"tensor (offset {offset}, size {size}, stride {stride}) reads element {last} of a storage "
                         f"of {len(storage)}")
    item = storage.itemsize
    return np.lib.stride_tricks.as_strided(storage[offset:], shape=size, strides=tuple(s * item for s in stride)).copy()


class _StateDictUnpickler(pickle.Unpickler):
    """A torch.save'd state dict's pickle, with numpy arrays for its tensors; anything but tensors in (ordered)
    dicts is refused, as torch.load(weights_only=True) does."""

    def __init__(self, f, read_storage, endian: str):
        super().__init__(f)
        self.read_storage, self.endian = read_storage, endian

    def find_class(self, module, name):
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor
        if (module, name) == ("torch._utils", "_rebuild_parameter"):
            return lambda data, *_: data
        if module == "torch" and name in STORAGE_DTYPES:
            return name
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a state dict of tensors")

    def persistent_load(self, pid):
        kind, storage, key = pid[:3]
        if kind != "storage" or storage not in STORAGE_DTYPES:
            raise pickle.UnpicklingError(f"unknown persistent id {pid[:2]}")
        return np.frombuffer(self.read_storage(key), dtype=self.endian + STORAGE_DTYPES[storage])


def read_state_dict(checkpoint) -> Dict[str, np.ndarray]:
    """{name: numpy array} of a torch.save'd state dict (torch's zip format: <prefix>/data.pkl, one file per storage
    under <prefix>/data/, <prefix>/byteorder), read without torch. PackError naming the file when it is not one."""
    try:
        with zipfile.ZipFile(checkpoint) as z:
            pkl = next((n for n in z.namelist() if n.endswith("/data.pkl")), None)
            if pkl is None:
                raise PackError(f"{checkpoint}: not a torch checkpoint (no data.pkl)")
            prefix = pkl[: -len("/data.pkl")]
            order = z.read(f"{prefix}/byteorder").decode() if f"{prefix}/byteorder" in z.namelist() else "little"
            with z.open(pkl) as f:
                state = _StateDictUnpickler(f, lambda key: z.read(f"{prefix}/data/{key}"),
                                            "<" if order == "little" else ">").load()
    except PackError:
        raise
    except Exception as e:  # a crafted pickle fails in many ways (IndexError, struct.error, RecursionError, ...)
        raise PackError(f"{checkpoint}: not a readable torch checkpoint of weights "
                        f"({type(e).__name__}: {e})".replace("\n", " ")) from None
    if not isinstance(state, dict):
        raise PackError(f"{checkpoint}: holds a {type(state).__name__}, not a state dict")
    return state


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function as 0.5 tanh(x / 2) + 0.5: no overflow anywhere (exp(-x) is inf below x = -88 in float32),
    so no np.errstate per call (the GRU calls it every frame), and exactly 0 / 1 at saturation as torch."""
    return (0.5 * np.tanh(0.5 * x) + 0.5).astype(np.float32, copy=False)


def _bn_scale_shift(w: Dict[str, np.ndarray], prefix: str, eps: float = 1e-5) -> Tuple[np.ndarray, np.ndarray]:
    """An eval-mode BatchNorm as y = x * scale + shift per channel (running statistics; its affine map when the
    layer has one)."""
    scale = 1 / np.sqrt(w[prefix + "running_var"] + eps)
    shift = -w[prefix + "running_mean"] * scale
    if prefix + "weight" in w:
        scale, shift = scale * w[prefix + "weight"], shift * w[prefix + "weight"] + w[prefix + "bias"]
    return scale, shift


def _batch_norm(x: np.ndarray, w: Dict[str, np.ndarray], prefix: str, axis: int) -> np.ndarray:
    """Eval-mode BatchNorm over AXIS of X."""
    shape = [1] * x.ndim
    shape[axis] = -1
    scale, shift = _bn_scale_shift(w, prefix)
    return (x * scale.reshape(shape) + shift.reshape(shape)).astype(np.float32)


def _fold_batch_norm(weight: np.ndarray, bias: np.ndarray, w: Dict[str, np.ndarray],
                     prefix: str) -> Tuple[np.ndarray, np.ndarray]:
    """A convolution (WEIGHT (C_out, ...), BIAS (C_out,)) followed by an eval-mode BatchNorm over its output
    channels, as one convolution: done once at load."""
    scale, shift = _bn_scale_shift(w, prefix)
    folded = weight * scale.reshape((-1,) + (1,) * (weight.ndim - 1))
    return folded.astype(np.float32), (bias * scale + shift).astype(np.float32)


def _conv2d3x3(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """torch's Conv2d(kernel 3, padding 1) on X (C_in, T, F) -> (C_out, T, F) as one matmul over the nine shifted
    copies. The copies are contiguous slices of the zero-padded input flattened row by row (row length F + 2): tap
    (i, j) of output (t, f) sits at (t + i) (F + 2) + f + j, so the outputs come on the padded grid and its two extra
    columns are dropped (one more zero row keeps the last slice inside)."""
    c_in, T, F = x.shape
    Fp, L = F + 2, T * (F + 2)
    p = np.zeros((c_in, T + 3, Fp), dtype=np.float32)
    p[:, 1: T + 1, 1: F + 1] = x
    flat = p.reshape(c_in, -1)
    cols = np.empty((c_in, 9, L), dtype=np.float32)
    for k, (i, j) in enumerate((i, j) for i in range(3) for j in range(3)):
        cols[:, k] = flat[:, i * Fp + j: i * Fp + j + L]
    out = weight.reshape(len(weight), c_in * 9) @ cols.reshape(c_in * 9, L)
    out += bias[:, None]
    return out.reshape(len(weight), T, Fp)[:, :, :F]


def _conv1d(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """torch's Conv1d(kernel k, padding k // 2) on X (T, C_in) -> (T, C_out)."""
    k = weight.shape[2]
    T = len(x)
    p = np.pad(x, ((k // 2, k // 2), (0, 0)))
    cols = np.concatenate([p[i: i + T] for i in range(k)], axis=1)  # (T, k * C_in), tap-major
    return cols @ weight.transpose(2, 1, 0).reshape(-1, len(weight)) + bias


def _gru(x: np.ndarray, w: Dict[str, np.ndarray], bidirectional: bool, h0: Optional[np.ndarray] = None,
         x_back: Optional[np.ndarray] = None) -> np.ndarray:
    """torch's one-layer GRU (gates r, z, n; forward, and backward when BIDIRECTIONAL) over X (N, T, D) from a zero
    state -> (N, T, H) or (N, T, 2H) (forward then backward outputs, as torch concatenates them). Streaming
    (NumpyNet.head_stream): H0 (N, H or 2H) is the initial state instead of zeros, and X_BACK (N, T, D), when
    given, is what the backward direction reads instead of X. A step's cost is
    numpy's per-call overhead (the arrays are tiny), so a step is one product for all gates of both directions and
    ten elementwise calls into preallocated buffers (about 40 % less time than one product per direction and a
    logistic per gate, each result a new array; the same numbers)."""
    dirs = ["", "_reverse"] if bidirectional else [""]
    K, H = len(dirs), w["gru.weight_hh_l0"].shape[1]
    N, T, _ = x.shape
    KH = K * H
    # one step = one (N, KH + 1) @ (KH + 1, 3 KH) product for every gate of both directions: columns [r | z | n],
    # each [forward | backward]; the constant 1 at the state's end carries n's hidden bias (it sits inside r * (...))
    w_hh = np.zeros((KH + 1, 3 * KH), dtype=np.float32)
    gi = np.empty((T, N, 3 * KH), dtype=np.float32)
    for k, d in enumerate(dirs):
        W, b_hh = w["gru.weight_hh_l0" + d], w["gru.bias_hh_l0" + d]
        inp = (x_back if k and x_back is not None else x) @ w["gru.weight_ih_l0" + d].T + w["gru.bias_ih_l0" + d]
        inp[..., : 2 * H] += b_hh[: 2 * H]  # r and z add both biases
        if k:
            inp = inp[:, ::-1]  # the backward direction reads the sequence from its end
        for g in range(3):
            cols = slice(g * KH + k * H, g * KH + (k + 1) * H)
            w_hh[k * H:(k + 1) * H, cols] = W[g * H:(g + 1) * H].T
            gi[:, :, cols] = inp[..., g * H:(g + 1) * H].transpose(1, 0, 2)
        w_hh[KH, 2 * KH + k * H: 2 * KH + (k + 1) * H] = b_hh[2 * H:]
    w_hh[:, : 2 * KH] *= 0.5  # the logistic as (tanh(a / 2) + 1) / 2: r's and z's inputs halved once, here
    gi[:, :, : 2 * KH] *= 0.5
    out = np.empty((T + 1, N, KH + 1), dtype=np.float32)  # row t + 1: the state after step t, then the constant 1
    out[..., KH] = 1
    out[0, :, :KH] = 0 if h0 is None else h0
    # preallocated step buffers and their fixed views: a step makes no array and slices nothing but its row
    gh = np.empty((N, 3 * KH), dtype=np.float32)
    gh_rz, gh_n = gh[:, : 2 * KH], gh[:, 2 * KH:]
    rz = np.empty((N, 2 * KH), dtype=np.float32)
    r, z = rz[:, :KH], rz[:, KH:]
    n = np.empty((N, KH), dtype=np.float32)
    dh = np.empty((N, KH), dtype=np.float32)
    gi_rz, gi_n = gi[:, :, : 2 * KH], gi[:, :, 2 * KH:]
    states = out[:, :, :KH]
    tanh, add, mul, sub, matmul = np.tanh, np.add, np.multiply, np.subtract, np.matmul
    for t in range(T):
        h = out[t]
        matmul(h, w_hh, out=gh)
        add(gi_rz[t], gh_rz, out=rz)
        tanh(rz, out=rz)
        rz += 1
        rz *= 0.5
        mul(gh_n, r, out=n)
        n += gi_n[t]
        tanh(n, out=n)
        sub(states[t], n, out=dh)
        dh *= z
        add(n, dh, out=states[t + 1])  # (1 - z) n + z h
    st = out[1:, :, :KH]
    if bidirectional:
        st = np.concatenate([st[:, :, :H], st[::-1, :, H:]], axis=2)
    return np.ascontiguousarray(st.transpose(1, 0, 2))


class NumpyNet:
    """The eval-mode forward of nets.NETS[conf["model"]] in numpy, on a state dict from read_state_dict:
    frame_probs(feats (T, 257)) -> (T,) float32 speech posteriors, equal to the torch net's to float32 rounding
    (tests/test_sad_lean_load.py). `field`: (frames of context each side, segment grid) of a net that sees finitely
    far (cnn1d, seg_rnn; streaming.window_context), None for the BiGRU."""

    FRONT_CHUNK = 500  # frames per front-end pass (as CNNFrontEnd.forward_chunked: bounded memory)

    def __init__(self, conf: dict, state: Dict[str, np.ndarray]):
        self.kind = conf["model"]
        self.conf = dict(conf.get("model_conf") or {})
        if self.kind not in ("cnn1d", "rnn", "seg_rnn"):
            raise PackError(f"net '{self.kind}' is not one of the SAD nets (cnn1d, rnn, seg_rnn)")
        self.w = {k[len("net."):]: np.asarray(v, dtype=np.float32) for k, v in state.items()
                  if k.startswith("net.") and not k.endswith("num_batches_tracked")}
        self.n_blocks = len(self.conf.get("channels", (16, 32, 64, 128)))
        self.context = 2 * self.n_blocks  # CNNFrontEnd.context
        self.L, self.S = int(self.conf.get("seg_len", 5)), int(self.conf.get("seg_shift", 1))
        self.infer_batch = int(self.conf.get("infer_batch", 20000))  # segments per GRU pass (SegRNNSAD's)
        self.bi = bool(self.conf.get("bidirectional", False)) if self.kind == "seg_rnn" else True
        # each conv of the front end with its BatchNorm folded in: (weight, bias) per block, two convs each
        # (nn.Sequential indices: 7 modules per block, conv, BN, ReLU, conv, BN, ReLU, pool)
        self.front_convs = [[_fold_batch_norm(self.w[f"front.cnn.{c}.weight"], self.w[f"front.cnn.{c}.bias"], self.w,
                                              f"front.cnn.{c + 1}.") for c in (7 * b, 7 * b + 3)]
                            for b in range(self.n_blocks)]
        if self.kind == "cnn1d":
            self.tcn0 = _fold_batch_norm(self.w["tcn.0.weight"], self.w["tcn.0.bias"], self.w, "tcn.1.")
            k = self.w["tcn.0.weight"].shape[2] // 2 + self.w["tcn.3.weight"].shape[2] // 2
            self.field: Optional[Tuple[int, int]] = (self.context + k, 1)
        elif self.kind == "seg_rnn":
            self.field = (self.context + self.L - 1, self.S)
        else:
            self.field = None

    def _front_chunk(self, feats: np.ndarray) -> np.ndarray:
        w = self.w
        x = _batch_norm(np.log1p(np.maximum(feats, 0)), w, "front.norm.", axis=1)[None]  # (1, T, F)
        for block in self.front_convs:
            for weight, bias in block:  # conv + BatchNorm (folded), ReLU
                x = np.maximum(_conv2d3x3(x, weight, bias), 0)
            f = x.shape[2] // 4  # MaxPool2d((1, 4)) over frequency: the max of 4 strided views (a reduce over an
            x = np.maximum(np.maximum(x[:, :, 0: 4 * f: 4], x[:, :, 1: 4 * f: 4]),  # axis of 4 is 5x slower)
                           np.maximum(x[:, :, 2: 4 * f: 4], x[:, :, 3: 4 * f: 4]))
        return x.transpose(1, 0, 2).reshape(x.shape[1], -1)  # (T, C * F')

    def front(self, feats: np.ndarray) -> np.ndarray:
        """CNNFrontEnd.forward_chunked: chunks with `context` frames of overlap, the same result as one pass."""
        T, c, n = len(feats), self.context, self.FRONT_CHUNK
        outs = []
        for a in range(0, max(T, 1), n):
            lo, hi = max(0, a - c), min(T, a + n + c)
            outs.append(self._front_chunk(feats[lo:hi])[a - lo: a - lo + min(n, T - a)])
        return np.concatenate(outs)

    def frame_probs(self, feats: np.ndarray) -> np.ndarray:
        return self.head(self.front(np.asarray(feats, dtype=np.float32)))

    def head(self, h: np.ndarray) -> np.ndarray:
        """(T,) speech posteriors from the front end's (T, C * F') output (streaming runs the two apart: the front
        end sees 4 frames, the BiGRU the whole window)."""
        w = self.w
        if self.kind == "cnn1d":
            z = np.maximum(_conv1d(h, *self.tcn0), 0)  # conv + BatchNorm (folded), ReLU
            return _sigmoid(_conv1d(z, w["tcn.3.weight"], w["tcn.3.bias"]).max(axis=1))
        if self.kind == "rnn":
            return self.head_stream(h, len(h), None)[0]  # the whole recording: one push of every row
        return self._segment_probs(h)

    def head_stream(self, rows: np.ndarray, n: int, h_fwd: Optional[np.ndarray]) -> Tuple[np.ndarray, np.ndarray]:
        """The BiGRU's head() for the first N of ROWS (front-end rows from a stream), the forward direction starting
        from H_FWD (its state after the row before; None: zero) and the backward one reading all of ROWS from their
        end (the rows past N are its context): (probs (N,), the forward state after row N - 1). Both directions
        run in one step loop, as head() runs them (a step costs numpy's call overhead); the forward one reads N rows
        and then zeros that only move its states past N."""
        w, H = self.w, self.w["gru.weight_hh_l0"].shape[1]
        fwd = np.zeros_like(rows)
        fwd[:n] = rows[:n]
        h0 = np.zeros((1, 2 * H), dtype=np.float32)
        if h_fwd is not None:
            h0[0, :H] = h_fwd
        out = _gru(fwd[None], w, bidirectional=True, h0=h0, x_back=rows[None])[0, :n]
        return _sigmoid((out @ w["ff.weight"].T + w["ff.bias"]).max(axis=1)), out[n - 1, :H].copy()

    def _segment_probs(self, h: np.ndarray) -> np.ndarray:
        """SegRNNSAD.frame_probs: segments (L, shift S) of the zero-padded features through the GRU, each read out
        at its end (bidirectional: both directions' final states), then the frames' max over their segments. The
        segments go through in batches of `infer_batch`, as the torch net's: memory stays bounded on long input."""
        T, D = h.shape
        M = num_segments(T, self.L, self.S)
        h = np.concatenate([h, np.zeros(((M - 1) * self.S + self.L - T, D), dtype=np.float32)]) \
            if (M - 1) * self.S + self.L > T else h
        segs = np.lib.stride_tricks.sliding_window_view(h, self.L, axis=0)[:: self.S][:M].transpose(0, 2, 1)
        y = np.concatenate([self._segment_logits(np.ascontiguousarray(segs[a: a + self.infer_batch]))
                            for a in range(0, M, self.infer_batch)])
        return segment_frame_scores(_sigmoid(y), self.L, self.S, T).astype(np.float32)

    def _segment_logits(self, segs: np.ndarray) -> np.ndarray:
        """SegRNNSAD._run: (N, L, D) segments -> (N,) logits (max over the FF outputs of each segment's end)."""
        out = _gru(segs, self.w, self.bi)  # (N, L, H or 2H)
        H = len(self.w["gru.weight_hh_l0"]) // 3
        last = np.concatenate([out[:, -1, :H], out[:, 0, H:]], axis=1) if self.bi else out[:, -1]
        return (last @ self.w["ff.weight"].T + self.w["ff.bias"]).max(axis=1)


def receptive_field(net) -> Optional[Tuple[int, int]]:
    """(frames of context each side of the net's input features, segment grid) of a net whose scores see finitely
    far: the 1-D CNN and the segment RNN (streaming.window_context's exact windows); None for the BiGRU."""
    if isinstance(net, NumpyNet):
        return net.field
    from torch import nn  # a torch net is already loaded: so is torch

    from .nets import CNN1dSAD, SegRNNSAD

    if isinstance(net, CNN1dSAD):
        return net.front.context + sum(m.kernel_size[0] // 2 for m in net.tcn if isinstance(m, nn.Conv1d)), 1
    if isinstance(net, SegRNNSAD):  # the segments holding a frame start up to L - 1 frames before it
        return net.front.context + net.L - 1, net.S
    return None


VITERBI = ("librosa", "numpy")


def hmm_smooth(post: np.ndarray, threshold: float = 0.5, states: int = STATES, stay: float = STAY,
               kernel: str = "librosa") -> np.ndarray:
    """Viterbi decisions over the paper's 2 x 5-state HMM with emissions from frame posteriors. KERNEL "librosa":
    librosa's compiled core (common.viterbi; fast, for the recipe's threshold sweeps over whole dev sets, but loading
    numba and librosa takes 0.9 s and 120 MiB); "numpy": statistical.viterbi_numpy, the same path in numpy (about
    10 us a frame; what SpeechSegmenter runs, so that loading a model stays light)."""
    log_trans, log_init = two_class_hmm(states, stay)
    emis = hmm_emissions(post, threshold, states)
    if kernel == "numpy":
        return viterbi_numpy(emis, log_trans, log_init) >= states
    return librosa_viterbi(emis, log_trans, log_init) >= states


def hmm_emissions(post: np.ndarray, threshold: float = 0.5, states: int = STATES) -> np.ndarray:
    """(T, 2 x states) log emissions of hmm_smooth: log(1-p) for the noise states, log p - logit(threshold) for
    the speech states (frame by frame: the chunked decoder of streaming.py computes them chunk by chunk)."""
    p = np.clip(post.astype(np.float64), 1e-6, 1 - 1e-6)
    th = float(np.clip(threshold, 1e-6, 1 - 1e-6))
    bias = np.log(th) - np.log1p(-th)
    emis = np.empty((len(p), 2 * states))
    emis[:, :states] = np.log1p(-p)[:, None]
    emis[:, states:] = (np.log(p) - bias)[:, None]
    return emis


def median_smooth(decisions: np.ndarray, window_s: float = 0.5) -> np.ndarray:
    from scipy.ndimage import median_filter

    size = max(1, int(round(window_s / SHIFT)) | 1)  # odd window
    return median_filter(decisions.astype(np.uint8), size=size, mode="nearest").astype(bool)


@dataclass
class NeuralDetector(Detector):
    threshold: float = 0.5
    name = "neural"
    sweep: List[float] = field(default_factory=lambda: list(POSTERIOR_SWEEP))
    model_dir: str = ""
    smoothing: str = "hmm"  # hmm | median | none
    median_s: float = 0.5
    device: str = "cpu"
    model_file: str = ""  # checkpoint in model_dir; "": the best one (neural.model_file)
    hmm_states: int = STATES  # per class (the paper's 5)
    hmm_stay: float = STAY
    _net: object = field(default=None, repr=False)  # a loaded net (a packed model's) instead of model_dir's
    viterbi: str = "librosa"  # the HMM's Viterbi kernel (hmm_smooth's KERNEL): librosa, or numpy for a light load

    model_name = ""  # exp/<model_name> when model_dir is not given

    def __post_init__(self):
        if not self.model_dir:
            self.model_dir = str(Path(os.environ.get("SAD_EXP_DIR", "exp")) / self.model_name)
        if self.smoothing not in ("hmm", "median", "none"):
            raise ValueError(f"unknown smoothing '{self.smoothing}' (hmm, median, none)")
        if self.viterbi not in VITERBI:
            raise ValueError(f"unknown Viterbi kernel '{self.viterbi}' ({', '.join(VITERBI)})")
        if self.smoothing == "hmm" and self.viterbi == "librosa":
            warm_up()  # the compiled kernel, outside the timed decoding

    @property
    def net(self):
        if self._net is None:
            self._net = load_net(Path(self.model_dir), self.device, self.model_file)
        return self._net

    def posteriors_from_feats(self, feats: np.ndarray, total: int) -> np.ndarray:
        net = self.net
        feats = np.ascontiguousarray(feats, dtype=np.float32)
        if isinstance(net, NumpyNet):
            post = net.frame_probs(feats)
        else:
            import torch

            x = torch.as_tensor(feats, device=next(net.parameters()).device)
            with torch.inference_mode():
                post = net.frame_probs(x[None])
        post = np.asarray(post, dtype=np.float32)[:total]
        if len(post) < total:
            post = np.pad(post, (0, total - len(post)), mode="edge")
        return post

    def scores(self, wave, sr):
        if sr != 8000:
            raise ValueError(f"the neural SAD systems are 8 kHz systems, got {sr} Hz")
        return self.posteriors_from_feats(stft_magnitude(wave), n_frames(len(wave), sr))

    def decide(self, scores, threshold=None):
        th = self.threshold if threshold is None else threshold
        if self.smoothing == "hmm":
            return hmm_smooth(scores, th, self.hmm_states, self.hmm_stay, self.viterbi)
        d = scores > th
        return median_smooth(d, self.median_s) if self.smoothing == "median" else d


def system_class(name: str) -> type:
    """The detector class of the neural system NAME, from its entry in systems.SYSTEMS (net, decision)."""
    spec = SYSTEMS[name]
    cls = type("".join(w.upper() if w in ("cnn", "rnn", "hmm") else w.capitalize() for w in name.split("_")),
               (NeuralDetector,), {"__annotations__": {"smoothing": str}, "smoothing": spec.smoothing, "name": name,
                                   "model_name": spec.net, "__module__": __name__})
    return dataclass(cls)


# one class per neural system of systems.SYSTEMS (CNNHMM, CNNMedian, RNNHMM, RNNMedian, SegRNN, ...)
SYSTEM_CLASSES = {n: system_class(n) for n, s in SYSTEMS.items() if s.kind == "neural"}
CNNHMM, CNNMedian = SYSTEM_CLASSES["cnn_hmm"], SYSTEM_CLASSES["cnn_median"]
RNNHMM, RNNMedian = SYSTEM_CLASSES["rnn_hmm"], SYSTEM_CLASSES["rnn_median"]
SegRNN = SYSTEM_CLASSES["seg_rnn"]


def devbest_model_dir(exp: Path) -> Path:
    """The training dir of the dev-best (L, S) grid point that exp/seg_rnn_devbest/model_dir names (stage 7 writes
    it, recipe-relative)."""
    where = Path(exp) / DEVBEST / "model_dir"
    if not where.is_file():
        raise FileNotFoundError(f"{where}: missing (stage 7 of the recipe writes it)")
    return Path(exp).parent / where.read_text().strip()


@dataclass
class MajorityVote(Detector):
    """Frame = speech if at least 2 of its 3 members say so (the paper's majority vote), each member at its own
    dev-tuned threshold (exp/<member>/threshold); members: `voters`. Scores = the number of votes; the threshold
    1.5 is the rule itself, not a tuned value (the threshold sweep holds only it). Decodes the members in turn."""

    threshold: float = 1.5
    name = VOTE
    sweep: List[float] = field(default_factory=lambda: [1.5])
    device: str = "cpu"    # the members' nets run there
    model_file: str = ""   # checkpoint in each member's exp dir; "": each one's best
    _dets: object = field(default=None, repr=False)

    def __post_init__(self):
        warm_up()  # its members' HMM Viterbi kernel, outside the timed decoding

    def members(self) -> list:
        """[(detector, threshold)] of the voters in $SAD_EXP_DIR (default exp/)."""
        exp = Path(os.environ.get("SAD_EXP_DIR", "exp"))
        out = []
        for name in voters(exp):
            cls = SYSTEM_CLASSES[base_system(name)]
            model_dir = str(devbest_model_dir(exp)) if name == DEVBEST else ""
            det = cls(device=self.device, model_file=self.model_file, model_dir=model_dir)
            th_file = exp / name / "threshold"
            out.append((det, float(th_file.read_text()) if th_file.is_file() else det.threshold))
        return out

    def scores(self, wave, sr):
        if self._dets is None:
            self._dets = self.members()
        votes = None
        for det, th in self._dets:
            d = det.decide(det.scores(wave, sr), th).astype(np.float32)
            votes = d if votes is None else votes + d
        return votes


NEURAL = (*SYSTEM_CLASSES.values(), MajorityVote)
