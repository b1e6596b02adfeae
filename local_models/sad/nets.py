"""The paper's neural SAD networks (Sec. 3, Fig. 4, Table 1), frame-wise on 10 ms STFT frames.

Front end (shared): log(1 + |STFT|) (257 bins at 8 kHz / FFT 512), per-bin normalisation (a BatchNorm1d
over the bins without affine parameters: running mean / variance learnt on the training data, a fixed
per-bin affine map at inference), then CNN blocks of [Conv2d 3x3 -> BatchNorm -> ReLU] x 2 followed by
a max pooling of stride 4 over frequency only (no time pooling: one output per input frame).
Channels x remaining bins are flattened per frame and fed to a temporal layer:

* `cnn1d`  : Conv1d k=3 (128 ch) -> BN -> ReLU -> Conv1d k=3 (10 ch)   (Table 1, row 1D-CNN)
* `rnn`    : BiGRU (hidden 256 in total) -> FF 256 x 10                (Table 1, row RNN)
* `seg_rnn`: the segment RNN: the frame sequence is cut into overlapping segments of L frames, shift S;
             each segment runs through one shared GRU (+ FF 256 x 10) and the output at its LAST
             frame is the segment's prediction y_i.

Output activation sigmoid, then max pooling over the 10 outputs. Since the sigmoid is monotonic,
max_k sigmoid(z_k) = sigmoid(max_k z_k): the nets return max_k z_k as a logit and the loss is
BCE-with-logits on it (the same function, numerically stable).

Segment RNN decisions (paper): d_i = y_i > alpha and frame t is speech iff ANY segment containing t has
d_i = 1. That equals thresholding max_{i: t in seg i} y_i at alpha, so the frame score is that max
(`segment_frame_scores`) and the recipe's threshold sweep applies unchanged. Training target of a
segment (our choice, consistent with the OR rule): 1 if any (valid) frame of the segment is speech.
"""
from __future__ import annotations

from typing import Sequence, Tuple

import numpy as np
import torch
from torch import nn

from .detectors import num_segments, segment_frame_scores  # noqa: F401  (torch-free: neural.NumpyNet uses them too)
from .systems import NETS as NET_NAMES

N_BINS = 257


def to_numpy(x: torch.Tensor) -> np.ndarray:
    """float32 numpy copy of a float tensor on any device, in any float dtype (bf16 has no numpy type)."""
    return x.detach().float().cpu().numpy()


def non_pad_mask(lengths: torch.Tensor, xs: torch.Tensor) -> torch.Tensor:
    """(B, T) bool on xs' device, True on the first lengths[b] units of row b (T = xs.shape[1]); lengths >= 1.
    ESPnet's make_non_pad_mask, imported here only: decoding (neural.load_net) never needs espnet."""
    from espnet.nets.pytorch_backend.nets_utils import make_non_pad_mask

    return make_non_pad_mask(lengths, xs=xs)


class CNNFrontEnd(nn.Module):
    """log1p -> per-bin norm -> CNN blocks (2 x [conv3x3, BN, ReLU], maxpool freq/4). (B, T, F) -> (B, T, D)."""

    def __init__(self, n_bins: int = N_BINS, channels: Sequence[int] = (16, 32, 64, 128), pool: int = 4):
        super().__init__()
        self.norm = nn.BatchNorm1d(n_bins, affine=False)
        blocks, c_in, f = [], 1, n_bins
        for c in channels:
            blocks += [nn.Conv2d(c_in, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(),
                       nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(),
                       nn.MaxPool2d((1, pool), stride=(1, pool))]
            c_in, f = c, f // pool
        if f < 1:
            raise ValueError(f"{len(channels)} blocks pool {n_bins} bins below one bin")
        self.cnn = nn.Sequential(*blocks)
        self.out_dim = c_in * f
        self.context = 2 * len(channels)  # frames of time context on each side (2 convs 3x3 per block)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        x = self.norm(torch.log1p(feats.clamp(min=0)).transpose(1, 2)).transpose(1, 2)  # (B, T, F)
        x = self.cnn(x.unsqueeze(1))  # (B, C, T, F')
        B, C, T, F = x.shape
        return x.permute(0, 2, 1, 3).reshape(B, T, C * F)

    @torch.no_grad()
    def forward_chunked(self, feats: torch.Tensor, chunk: int = 2000) -> torch.Tensor:
        """Same result as forward (eval mode) with bounded memory: chunks with `context` frames of overlap."""
        T, c = feats.shape[1], self.context
        if T <= chunk:
            return self.forward(feats)
        outs = []
        for a in range(0, T, chunk):
            lo, hi = max(0, a - c), min(T, a + chunk + c)
            y = self.forward(feats[:, lo:hi])
            outs.append(y[:, a - lo: a - lo + min(chunk, T - a)])
        return torch.cat(outs, dim=1)


class AbsSADNet(nn.Module):
    """forward(feats (B,T,F), lengths (B,)) -> (logits (B,U), unit_lengths (B,)); targets() maps frame labels
    (B,T) onto the same units (frames, or segments for seg_rnn); frame_probs(feats (1,T,F), on the net's
    device) -> (T,) float32 numpy."""

    def __init__(self, n_bins: int = N_BINS, channels: Sequence[int] = (16, 32, 64, 128)):
        super().__init__()
        self.front = CNNFrontEnd(n_bins, channels)

    def temporal(self, h: torch.Tensor, lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def forward(self, feats, lengths):
        return self.temporal(self.front(feats), lengths)

    def targets(self, labels: torch.Tensor, lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """(targets, valid mask) with the logits' shape."""
        mask = non_pad_mask(lengths, labels)  # chunks are never empty: lengths >= 1
        return labels.clamp(min=0).float(), mask & (labels >= 0)

    @torch.no_grad()
    def frame_probs(self, feats: torch.Tensor) -> np.ndarray:
        T = feats.shape[1]
        logits, _ = self.temporal(self.front.forward_chunked(feats), torch.tensor([T], device=feats.device))
        return to_numpy(torch.sigmoid(logits[0]))


class CNN1dSAD(AbsSADNet):
    def __init__(self, n_bins: int = N_BINS, channels: Sequence[int] = (16, 32, 64, 128), hidden: int = 128,
                 n_out: int = 10, kernel: int = 3):
        super().__init__(n_bins, channels)
        self.tcn = nn.Sequential(nn.Conv1d(self.front.out_dim, hidden, kernel, padding=kernel // 2), nn.BatchNorm1d(hidden),
                                 nn.ReLU(), nn.Conv1d(hidden, n_out, kernel, padding=kernel // 2))

    def temporal(self, h, lengths):
        z = self.tcn(h.transpose(1, 2))  # (B, n_out, T)
        return z.max(dim=1).values, lengths


class RNNSAD(AbsSADNet):
    def __init__(self, n_bins: int = N_BINS, channels: Sequence[int] = (16, 32, 64, 128), hidden: int = 128,
                 n_out: int = 10):
        super().__init__(n_bins, channels)
        self.gru = nn.GRU(self.front.out_dim, hidden, batch_first=True, bidirectional=True)
        self.ff = nn.Linear(2 * hidden, n_out)

    def temporal(self, h, lengths):
        T = h.shape[1]
        packed = nn.utils.rnn.pack_padded_sequence(h, lengths.cpu().clamp(min=1), batch_first=True, enforce_sorted=False)
        out, _ = self.gru(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=T)
        return self.ff(out).max(dim=-1).values, lengths


class SegRNNSAD(AbsSADNet):
    """Segment RNN. Segments (length L, shift S) of the CNN features share one GRU + FF; a segment's
    prediction is the output at its last frame (bidirectional: forward state at the last frame
    concatenated with the backward state at the first frame, i.e. both directions' final states).
    The sequence end is zero-padded so that the last segment ends at or after the last frame."""

    def __init__(self, n_bins: int = N_BINS, channels: Sequence[int] = (16, 32, 64, 128), hidden: int = 128,
                 n_out: int = 10, seg_len: int = 5, seg_shift: int = 1, bidirectional: bool = False,
                 infer_batch: int = 20000):
        super().__init__(n_bins, channels)
        self.L, self.S, self.bi, self.infer_batch = int(seg_len), int(seg_shift), bool(bidirectional), int(infer_batch)
        self.gru = nn.GRU(self.front.out_dim, hidden, batch_first=True, bidirectional=self.bi)
        self.hidden = hidden
        self.ff = nn.Linear(hidden * (2 if self.bi else 1), n_out)

    def _segments(self, h):
        B, T, D = h.shape
        M = num_segments(T, self.L, self.S)
        pad = (M - 1) * self.S + self.L - T
        if pad > 0:
            h = torch.cat([h, h.new_zeros(B, pad, D)], dim=1)
        return h.unfold(1, self.L, self.S).permute(0, 1, 3, 2), M  # (B, M, L, D)

    def _run(self, seg):  # (N, L, D) -> (N,) logits
        out, _ = self.gru(seg)
        last = out[:, -1] if not self.bi else torch.cat([out[:, -1, : self.hidden], out[:, 0, self.hidden:]], dim=-1)
        return self.ff(last).max(dim=-1).values

    def temporal(self, h, lengths):
        segs, M = self._segments(h)
        B = segs.shape[0]
        y = self._run(segs.reshape(B * M, self.L, -1)).view(B, M)
        seg_lengths = torch.tensor([num_segments(int(n), self.L, self.S) for n in lengths], device=h.device)
        return y, seg_lengths

    def targets(self, labels, lengths):
        valid = non_pad_mask(lengths, labels)
        lab = torch.where(valid & (labels >= 0), labels.float(), torch.zeros_like(labels, dtype=torch.float))
        segs, M = self._segments(lab.unsqueeze(-1))
        tgt = segs[..., 0].amax(dim=-1)  # OR over the segment's frames
        seg_lengths = torch.tensor([num_segments(int(n), self.L, self.S) for n in lengths], device=labels.device)
        return tgt, non_pad_mask(seg_lengths, tgt)  # every row has >= 1 segment

    @torch.no_grad()
    def frame_probs(self, feats):
        T = feats.shape[1]
        segs, M = self._segments(self.front.forward_chunked(feats))
        segs = segs[0]
        y = torch.cat([self._run(segs[i: i + self.infer_batch]) for i in range(0, M, self.infer_batch)])
        return to_numpy(segment_frame_scores(torch.sigmoid(y), self.L, self.S, T))


# the class of each net systems.NETS names (the ESPnet task's --model choices: task.model_choices)
NETS = {"cnn1d": CNN1dSAD, "rnn": RNNSAD, "seg_rnn": SegRNNSAD}
if tuple(NETS) != NET_NAMES:
    raise ImportError(f"nets.NETS {tuple(NETS)} and systems.NETS {NET_NAMES} name different nets")
