"""SALAD and the MUSA-RNN baseline (paper Fig. 1, Table 1): frame-level linguistic -> 43-dim acoustic mapping.

Both start with the same embedding h_t = ReLU(W x_t + b).
- MUSA-RNN: LSTM core of size HidRNN, dropout 0.5, and a recurrent LSTM output layer of 43 units.
- SALAD: sinusoidal position codes (offset by the stream position in stateful training) added to the embedding,
  dropout 0.5, N post-LN Transformer-encoder blocks (multi-head self-attention with dropout 0.1, FFN
  H -> d_ff -> H with dropout 0.5), linear output layer to 43.
  `window` (frames, optional) restricts attention to |i - j| <= window // 2. It is computed block-locally
  (blocks of window // 2 frames attend to their own and both neighbouring blocks), so the cost grows
  linearly with length instead of quadratically; with a window that covers the sequence it equals full
  attention.

Every forward takes (x (B, T, idim), lengths (B,)) plus a carried `state` (RNN: LSTM states; SALAD: the
position offset of each row) and returns (y (B, T, 43), new state).
"""
from __future__ import annotations

import contextlib
import warnings
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn


def lengths_to_mask(lengths: torch.Tensor, T: int) -> torch.Tensor:
    """(B, T) bool, True on valid frames.

    Not ESPnet's make_non_pad_mask: the installed one (espnet 202511) takes no maxlen, and for a lengths tensor it
    builds a (T+1, T+1) matrix: 0.4 s on one thread at T = 7000 frames (35 s of speech), the order of the windowed
    Big SALAD's whole decode of them (0.84 s, RESULTS.md Table 3), which would skew the latency benchmark; it also
    marks a length-0 row all valid. For 1 <= length <= T both give the same mask."""
    return torch.arange(T, device=lengths.device)[None, :] < lengths[:, None]


def sinusoid_codes(positions: torch.Tensor, dim: int) -> torch.Tensor:
    """Paper eq.: c_{t,2i} = sin(t / 10000^(2i/H)), c_{t,2i+1} = cos(...). positions (B, T) -> (B, T, dim)."""
    i = torch.arange(0, dim, 2, device=positions.device, dtype=torch.float32)
    angle = positions.to(torch.float32)[..., None] / torch.pow(10000.0, i / dim)
    codes = torch.zeros(*positions.shape, dim, device=positions.device)
    codes[..., 0::2] = torch.sin(angle)
    codes[..., 1::2] = torch.cos(angle[..., : dim // 2])
    return codes


def _band_attention(q, k, v, radius: int, key_valid: torch.Tensor, dropout_p: float) -> torch.Tensor:
    """Self-attention restricted to |i - j| <= radius, block-local: O(T * radius) time and memory.

    q, k, v: (B, h, T, d); key_valid: (B, T) bool. Queries in block b (size radius) see keys of blocks
    b-1, b, b+1, masked to the band and to valid keys; each query also sees itself, so padded rows stay finite."""
    B, h, T, d = q.shape
    blk = max(int(radius), 1)
    nb = -(-T // blk)
    pad = nb * blk - T
    q = F.pad(q, (0, 0, 0, pad)).view(B, h, nb, blk, d)
    # keys/values padded by one block on each side, then cut into overlapping 3-block spans
    kp = F.pad(k, (0, 0, blk, pad + blk)).unfold(2, 3 * blk, blk).transpose(-1, -2)  # (B, h, nb, 3blk, d)
    vp = F.pad(v, (0, 0, blk, pad + blk)).unfold(2, 3 * blk, blk).transpose(-1, -2)
    qi = torch.arange(nb * blk, device=q.device).view(nb, blk, 1)
    kj = (torch.arange(nb, device=q.device).view(nb, 1, 1) - 1) * blk + torch.arange(3 * blk, device=q.device)
    band = (qi - kj).abs() <= radius  # (nb, blk, 3blk)
    valid = F.pad(key_valid, (blk, pad + blk)).unfold(1, 3 * blk, blk)  # (B, nb, 3blk)
    mask = (band[None] & valid[:, :, None, :]) | (qi == kj)[None]
    out = F.scaled_dot_product_attention(q, kp, vp, attn_mask=mask[:, None], dropout_p=dropout_p)
    return out.reshape(B, h, nb * blk, d)[:, :, :T]


class SelfAttention(nn.Module):
    """Multi-head self-attention through torch's fused scaled_dot_product_attention (never the T x T
    weights in Python), full or banded."""

    def __init__(self, dim: int, heads: int, dropout: float, window: Optional[int] = None):
        super().__init__()
        if dim % heads:
            raise ValueError(f"embedding size {dim} is not divisible by {heads} heads")
        self.heads, self.dropout = heads, dropout
        self.radius = None if window is None else max(int(window) // 2, 1)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        p = self.dropout if self.training else 0.0
        if self.radius is None or self.radius >= T - 1:
            # no padding (batch 1 at synthesis): no mask, which lets torch pick its fused flash kernel
            mask = None if bool(valid.all()) else valid[:, None, None, :]
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        else:
            y = _band_attention(q, k, v, self.radius, valid, p)
        return self.out(y.transpose(1, 2).reshape(B, T, D))


class Block(nn.Module):
    """Transformer-encoder block (post-LN as in Vaswani et al.): x = LN(x + MHA(x)); x = LN(x + FFN(x))."""

    def __init__(self, dim: int, heads: int, d_ff: int, attn_dropout: float, ffn_dropout: float,
                 window: Optional[int] = None):
        super().__init__()
        self.attn = SelfAttention(dim, heads, attn_dropout, window)
        self.drop_attn = nn.Dropout(attn_dropout)
        self.norm1 = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, d_ff), nn.ReLU(), nn.Dropout(ffn_dropout), nn.Linear(d_ff, dim))
        self.drop_ffn = nn.Dropout(ffn_dropout)
        self.norm2 = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        x = self.norm1(x + self.drop_attn(self.attn(x, valid)))
        return self.norm2(x + self.drop_ffn(self.ffn(x)))


class SALAD(nn.Module):
    """Self-attention linguistic-acoustic decoder. state = (B,) position offsets (None: 0)."""

    def __init__(self, idim: int, odim: int = 43, emb: int = 128, d_ff: int = 1024, num_blocks: int = 3,
                 heads: int = 8, attn_dropout: float = 0.1, ffn_dropout: float = 0.5, pos_dropout: float = 0.5,
                 window: Optional[int] = None):
        super().__init__()
        self.emb = nn.Linear(idim, emb)
        self.pos_dropout = nn.Dropout(pos_dropout)
        self.blocks = nn.ModuleList(Block(emb, heads, d_ff, attn_dropout, ffn_dropout, window)
                                    for _ in range(num_blocks))
        self.proj = nn.Linear(emb, odim)
        self.dim = emb

    def forward(self, x: torch.Tensor, lengths: torch.Tensor, state: Optional[torch.Tensor] = None):
        B, T, _ = x.shape
        offset = torch.zeros(B, dtype=torch.long, device=x.device) if state is None else state
        positions = offset[:, None] + torch.arange(T, device=x.device)[None, :]
        h = self.pos_dropout(torch.relu(self.emb(x)) + sinusoid_codes(positions, self.dim).to(x.dtype))
        valid = lengths_to_mask(lengths, T)
        for block in self.blocks:
            h = block(h, valid)
        return self.proj(h), offset + lengths


class MusaRNN(nn.Module):
    """MUSA-RNN: embedding -> LSTM(HidRNN) -> dropout -> recurrent LSTM output layer of odim units.
    state = ((h1, c1), (h2, c2)) of the two LSTMs, or None for zeros."""

    def __init__(self, idim: int, odim: int = 43, emb: int = 128, hidden: int = 450, dropout: float = 0.5):
        super().__init__()
        self.emb = nn.Linear(idim, emb)
        self.core = nn.LSTM(emb, hidden, batch_first=True)
        self.drop = nn.Dropout(dropout)
        self.out = nn.LSTM(hidden, odim, batch_first=True)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor, state=None):
        s1, s2 = (None, None) if state is None else state
        h, s1 = self.core(torch.relu(self.emb(x)), s1)
        y, s2 = self.out(self.drop(h), s2)
        return y, (s1, s2)


def build(arch: str, idim: int, odim: int = 43, **conf) -> nn.Module:
    if arch == "salad":
        return SALAD(idim, odim, **conf)
    if arch == "rnn":
        return MusaRNN(idim, odim, **conf)
    raise ValueError(f"unknown arch {arch!r} (salad, rnn)")


def num_params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def dense_macs_per_frame(net: nn.Module) -> int:
    """Multiply-adds per generated frame in the weight matrices (every Linear, and an LSTM's input and recurrent
    matrices), i.e. everything but attention's scores: the arithmetic a frame costs whatever the model shape."""
    macs = 0
    for m in net.modules():
        if isinstance(m, nn.Linear):
            macs += m.in_features * m.out_features
        elif isinstance(m, nn.LSTM):
            macs += 4 * m.hidden_size * (m.input_size + m.hidden_size) * m.num_layers
    return macs


PRECISIONS = ("fp32", "bf16", "int8")


def for_precision(net: nn.Module, precision: str) -> nn.Module:
    """The inference network in `precision`: fp32 / bf16 the same module (bf16 comes from `precision_context`),
    int8 a dynamically quantised copy (int8 weights of every Linear and LSTM, activations quantised on the fly;
    VNNI / AMX int8 kernels where the CPU has them)."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r} ({', '.join(PRECISIONS)})")
    if precision != "int8":
        return net
    with warnings.catch_warnings():  # torch.ao's eager API warns that it will move to torchao; it still works
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(net, {nn.Linear, nn.LSTM}, dtype=torch.qint8).eval()


def precision_context(precision: str, device_type: str = "cpu"):
    """bf16: autocast on `device_type` (CPU: matmuls in bf16, AVX512-BF16 / AMX where present); else nothing."""
    if precision == "bf16":
        return torch.autocast(device_type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def keep_rows(state, keep: torch.Tensor):
    """LSTM state ((h1, c1), (h2, c2)) with the rows where `keep` (B,) is False reset to zero."""
    if isinstance(state, tuple):
        return tuple(keep_rows(s, keep) for s in state)
    return state * keep.to(state.dtype)[None, :, None]  # h / c are (layers, B, H)


def detach_state(state):
    if state is None:
        return None
    if isinstance(state, tuple):
        return tuple(detach_state(s) for s in state)
    return state.detach()


__all__ = ["SALAD", "MusaRNN", "build", "num_params", "lengths_to_mask", "sinusoid_codes", "PRECISIONS",
           "for_precision", "precision_context", "dense_macs_per_frame"]
