"""Transformer VQ-VAE (paper 003, Sec. 3), the conv VQ-VAE baseline (the authors' 2019 system) and their parts.

Frames: input (B, T, F) at 10 ms; the encoder reaches stride 4 with two stride-2 convolutions (kernel 4,
padding 1), so code t covers input frames 4t-3 .. 4t+6 and is centred on frame 4t + 1.5 (time 0.04 t + 0.015 s
for librosa-centred input frames); T' = floor(T / 4). Features are normalised per utterance (mean / variance
over its valid frames) inside the model: the same model then serves unseen speakers and channels.
"""
from __future__ import annotations

import math
from typing import Dict, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
# Masks: make_pad_mask(lengths, maxlen=T) is (B, T) bool on lengths' device, True on padding; ~ of it is
# make_non_pad_mask with a maxlen (this ESPnet's make_non_pad_mask has none). Every length here is >= 1 and
# <= T (ESPnet maps a length of 0 to no padding at all).
from espnet.nets.pytorch_backend.nets_utils import make_pad_mask

from .frontend import STRIDE  # noqa: E402  (defined with the front end, which must not import torch)


def utterance_mvn(x: torch.Tensor, mask: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Mean / variance normalisation of every utterance over its valid frames (padding stays 0)."""
    m = mask.unsqueeze(-1).float()
    n = m.sum(1, keepdim=True).clamp(min=1)
    mean = (x * m).sum(1, keepdim=True) / n
    var = ((x - mean) ** 2 * m).sum(1, keepdim=True) / n
    return (x - mean) / torch.sqrt(var + eps) * m


def strided_length(lengths: torch.Tensor) -> torch.Tensor:
    """Output length of one Conv1d(kernel 4, stride 2, padding 1): floor(L / 2)."""
    return torch.div(lengths, 2, rounding_mode="floor")


class EMACodebook(nn.Module):
    """K x D codebook, L2 nearest neighbour, updated by exponential moving averages (paper ref. [17]).

    EMA (training, on valid frames only): N_k <- d N_k + (1 - d) n_k, m_k <- d m_k + (1 - d) sum_{t: c_t = k} z_t,
    with N Laplace-smoothed (eps) before e_k = m_k / N_k. The codebook gets no gradient.

    Not in the paper, but needed for the codebook to be used at all: the codes are initialised from the first
    training batch's encoder outputs (a random init far from z sends every frame to one code), and a code whose
    EMA count falls below `dead_count` frames is restarted at a random encoder output of the current batch.
    """

    def __init__(self, num_codes: int, dim: int, decay: float = 0.99, eps: float = 1e-5, dead_count: float = 1.0):
        super().__init__()
        self.num_codes, self.dim, self.decay, self.eps, self.dead_count = num_codes, dim, decay, eps, dead_count
        embed = torch.randn(num_codes, dim)
        self.register_buffer("embed", embed)
        self.register_buffer("ema_count", torch.ones(num_codes))
        self.register_buffer("ema_weight", embed.clone())
        self.register_buffer("initialised", torch.tensor(False))

    @torch.no_grad()
    def _random_rows(self, zf: torch.Tensor, n: int) -> torch.Tensor:
        idx = torch.randint(0, zf.shape[0], (n,), device=zf.device)
        return zf[idx] + 1e-3 * torch.randn(n, self.dim, device=zf.device)

    @torch.no_grad()
    def init_from(self, z: torch.Tensor, mask: torch.Tensor) -> None:
        """Data-dependent initialisation (once, first training batch)."""
        if bool(self.initialised) or not mask.any():
            return
        self.embed.copy_(self._random_rows(z[mask].float(), self.num_codes))
        self.ema_weight.copy_(self.embed)
        self.ema_count.fill_(1.0)
        self.initialised.fill_(True)

    def nearest(self, z: torch.Tensor) -> torch.Tensor:
        """Indices argmin_k ||z - e_k||_2 for z (..., D)."""
        flat = z.reshape(-1, self.dim)
        d = flat.pow(2).sum(1, keepdim=True) - 2 * flat @ self.embed.t() + self.embed.pow(2).sum(1)[None, :]
        return d.argmin(1).reshape(z.shape[:-1])

    @torch.no_grad()
    def ema_update(self, z: torch.Tensor, codes: torch.Tensor, mask: torch.Tensor) -> None:
        zf, cf = z[mask].float(), codes[mask]
        onehot = F.one_hot(cf, self.num_codes).type_as(zf)  # (N, K)
        counts = onehot.sum(0)
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            torch.distributed.all_reduce(counts)
        dw = onehot.t() @ zf
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            torch.distributed.all_reduce(dw)
        self.ema_count.mul_(self.decay).add_(counts, alpha=1 - self.decay)
        self.ema_weight.mul_(self.decay).add_(dw, alpha=1 - self.decay)
        n = self.ema_count.sum()
        smoothed = (self.ema_count + self.eps) / (n + self.num_codes * self.eps) * n
        self.embed.copy_(self.ema_weight / smoothed[:, None])
        dead = self.ema_count < self.dead_count
        if self.dead_count > 0 and dead.any() and zf.shape[0] > 0:
            fresh = self._random_rows(zf, int(dead.sum()))
            self.embed[dead] = fresh
            self.ema_weight[dead] = fresh
            self.ema_count[dead] = 1.0


def temporal_jitter(codes: torch.Tensor, lengths: torch.Tensor, p: float,
                    generator: Optional[torch.Generator] = None) -> torch.Tensor:
    """Paper eq. 11-12: with probability p take the left neighbour's code, with p the right one's
    (never across the sequence ends: a first/last frame drawn to go out of range keeps its own)."""
    if p <= 0:
        return codes
    B, T = codes.shape
    u = torch.rand(B, T, generator=generator, device=codes.device)
    t = torch.arange(T, device=codes.device)[None, :].expand(B, T)
    left = (u < p) & (t > 0)
    right = (u >= p) & (u < 2 * p) & (t < lengths[:, None] - 1)
    src = t - left.long() + right.long()
    return codes.gather(1, src)


class PositionalEncoding(nn.Module):
    """Sinusoidal position encoding added to (B, T, D)."""

    def __init__(self, dim: int, max_len: int = 20000):
        super().__init__()
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, dim, 2) * (-math.log(10000.0) / dim))
        pe = torch.zeros(max_len, dim)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div[: dim // 2])
        self.register_buffer("pe", pe, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.pe[: x.shape[1]].unsqueeze(0)


def transformer_layer(dim: int, heads: int, ff: int, dropout: float) -> nn.TransformerEncoderLayer:
    """Paper Fig. 1: layer norm -> multi-head self-attention -> residual; layer norm -> 2 linear + ReLU."""
    return nn.TransformerEncoderLayer(dim, heads, ff, dropout, activation="relu", batch_first=True, norm_first=True)


class TransformerEncoder(nn.Module):
    """Paper Fig. 3a: blocks of [2 pre-LN Transformer layers + strided 1D conv], two blocks reach stride 4.
    No position encoding by default: the paper gives the encoder none (only the inverter gets "additional"
    sinusoidal PE), and a unit should not depend on where it sits; pos_enc=True adds it as an option."""

    def __init__(self, idim: int, dim: int = 256, heads: int = 4, ff: int = 1024, layers_per_block: int = 2,
                 code_dim: int = 64, dropout: float = 0.1, pos_enc: bool = False):
        super().__init__()
        self.inp = nn.Linear(idim, dim)
        self.pe = PositionalEncoding(dim) if pos_enc else nn.Identity()
        self.blocks = nn.ModuleList(
            nn.ModuleList([transformer_layer(dim, heads, ff, dropout) for _ in range(layers_per_block)])
            for _ in range(2))
        self.convs = nn.ModuleList(nn.Conv1d(dim, dim, 4, stride=2, padding=1) for _ in range(2))
        self.out = nn.Linear(dim, code_dim)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        h = self.pe(self.inp(x))
        for i, (layers, conv) in enumerate(zip(self.blocks, self.convs)):
            pad = make_pad_mask(lengths, maxlen=h.shape[1])
            # inference on unpadded input (one utterance): no mask, torch's fast attention path (3x faster on the
            # CPU; the masked path changes nothing but rounding: 0 of 2,234 codes differed in a smoke-model check)
            mask = pad if self.training or bool(pad.any()) else None
            for layer in layers:
                h = layer(h, src_key_padding_mask=mask)
            h = h.masked_fill(pad.unsqueeze(-1), 0.0)
            h = conv(h.transpose(1, 2)).transpose(1, 2)
            # ReLU between blocks only: after the last conv a linear projection follows, and a ReLU there (no
            # normalisation before it) died in training (1 seed in 5 at the tiny config: every unit <= 0, z
            # constant, one code for everything; ~93 % of its units dead in a seed that trained)
            if i < len(self.convs) - 1:
                h = F.relu(h)
            lengths = strided_length(lengths)
        return self.out(h), lengths


class ConvEncoder(nn.Module):
    """The 2019 conv VQ-VAE encoder at the same stride 4: conv stacks with two stride-2 convolutions."""

    def __init__(self, idim: int, dim: int = 256, code_dim: int = 64, convs_per_block: int = 2):
        super().__init__()
        layers = [nn.Conv1d(idim, dim, 3, padding=1), nn.ReLU()]
        for _ in range(2):
            for _ in range(convs_per_block - 1):
                layers += [nn.Conv1d(dim, dim, 3, padding=1), nn.BatchNorm1d(dim), nn.ReLU()]
            layers += [nn.Conv1d(dim, dim, 4, stride=2, padding=1), nn.BatchNorm1d(dim), nn.ReLU()]
        self.net = nn.Sequential(*layers)
        self.out = nn.Linear(dim, code_dim)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        h = self.net(x.transpose(1, 2)).transpose(1, 2)
        return self.out(h), strided_length(strided_length(lengths))


class Decoder(nn.Module):
    """Paper Fig. 3b: [1D conv + x2 up-sampling] twice, conditioned on a speaker embedding, then a
    conv stack to the feature dimension."""

    def __init__(self, code_dim: int, odim: int, num_speakers: int, spk_dim: int = 64, dim: int = 256):
        super().__init__()
        self.spk = nn.Embedding(max(num_speakers, 1), spk_dim)
        self.inp = nn.Conv1d(code_dim + spk_dim, dim, 3, padding=1)
        self.ups = nn.ModuleList(nn.Conv1d(dim + spk_dim, dim, 3, padding=1) for _ in range(2))
        self.out = nn.Sequential(nn.Conv1d(dim, dim, 5, padding=2), nn.ReLU(), nn.Conv1d(dim, odim, 1))

    def _with_spk(self, h: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return torch.cat([h, s[:, :, None].expand(-1, -1, h.shape[2])], 1)

    def forward(self, e: torch.Tensor, sids: torch.Tensor) -> torch.Tensor:
        s = self.spk(sids)
        h = F.relu(self.inp(self._with_spk(e.transpose(1, 2), s)))
        for conv in self.ups:
            h = F.interpolate(h, scale_factor=2, mode="nearest")
            h = F.relu(conv(self._with_spk(h, s)))
        return self.out(h).transpose(1, 2)


class VQVAE(nn.Module):
    """Encoder -> EMA codebook (commitment gamma, temporal smoothing lambda, jitter p) -> speaker decoder.

    Loss (paper eq. 7-10): MSE reconstruction of the normalised input (Gaussian NLL up to constants)
    + gamma ||z - sg(e)||^2 + lambda sum_t ||z_t - z_{t+1}||^2, each averaged over valid frames.
    """

    def __init__(self, encoder: nn.Module, idim: int, num_speakers: int, num_codes: int = 128,
                 code_dim: int = 64, commitment: float = 0.25, smooth_weight: float = 0.0, jitter_p: float = 0.0,
                 spk_dim: int = 64, dec_dim: int = 256, ema_decay: float = 0.99):
        super().__init__()
        # numbers may arrive as strings from the command line (YAML reads "5e-3" as a string)
        commitment, smooth_weight, jitter_p = float(commitment), float(smooth_weight), float(jitter_p)
        if not 0 <= jitter_p < 0.5:
            raise ValueError(f"jitter_p must be in [0, 0.5), got {jitter_p}")
        self.encoder = encoder
        self.codebook = EMACodebook(num_codes, code_dim, decay=ema_decay)
        self.decoder = Decoder(code_dim, idim, num_speakers, spk_dim, dec_dim)
        self.commitment, self.smooth_weight, self.jitter_p = commitment, smooth_weight, jitter_p
        self.num_speakers = num_speakers

    def encode(self, x: torch.Tensor, lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(z (B, T', D), codes (B, T'), code lengths) of raw features."""
        x = utterance_mvn(x, ~make_pad_mask(lengths, maxlen=x.shape[1]))
        z, zlen = self.encoder(x, lengths)
        return z, self.codebook.nearest(z), zlen

    def forward(self, x: torch.Tensor, lengths: torch.Tensor, sids: torch.Tensor) -> Dict[str, torch.Tensor]:
        target = utterance_mvn(x, ~make_pad_mask(lengths, maxlen=x.shape[1]))
        z, zlen = self.encoder(target, lengths)
        codes = self.codebook.nearest(z)
        zmask = ~make_pad_mask(zlen, maxlen=z.shape[1])
        if self.training:
            if not bool(self.codebook.initialised):
                self.codebook.init_from(z.detach(), zmask)
                codes = self.codebook.nearest(z)
            self.codebook.ema_update(z.detach(), codes, zmask)
            codes_used = temporal_jitter(codes, zlen, self.jitter_p)
        else:
            codes_used = codes
        e = self.codebook.embed[codes_used]
        zq = z + (e - z).detach()  # straight-through: the decoder's gradient reaches the encoder
        sids = sids.clamp(0, max(self.num_speakers - 1, 0))
        recon = self.decoder(zq, sids)
        T = min(recon.shape[1], target.shape[1])
        xmask = (~make_pad_mask(torch.clamp(zlen * STRIDE, max=T), maxlen=T)).unsqueeze(-1).float()
        n_frames = xmask.sum().clamp(min=1) * target.shape[2]
        recon_loss = ((recon[:, :T] - target[:, :T]) ** 2 * xmask).sum() / n_frames
        zm = zmask.unsqueeze(-1).float()
        n_codes = zm.sum().clamp(min=1)
        commit = ((z - self.codebook.embed[codes].detach()) ** 2 * zm).sum() / n_codes
        pair = (zmask[:, 1:] & zmask[:, :-1]).unsqueeze(-1).float()
        smooth = ((z[:, 1:] - z[:, :-1]) ** 2 * pair).sum() / pair.sum().clamp(min=1)
        loss = recon_loss + self.commitment * commit + self.smooth_weight * smooth
        with torch.no_grad():
            used = torch.bincount(codes[zmask], minlength=self.codebook.num_codes).float()
            prob = used / used.sum().clamp(min=1)
            perplexity = torch.exp(-(prob * torch.log(prob.clamp(min=1e-10))).sum())
        return dict(loss=loss, recon=recon_loss.detach(), commit=commit.detach(), smooth=smooth.detach(),
                    perplexity=perplexity, n_codes=n_codes.detach())


def build_vqvae(encoder_type: str, idim: int, num_speakers: int, num_codes: int = 128, code_dim: int = 64,
                enc_dim: int = 256, heads: int = 4, ff: int = 1024, layers_per_block: int = 2, dropout: float = 0.1,
                pos_enc: bool = False, **kwargs) -> VQVAE:
    if encoder_type == "transformer":
        enc = TransformerEncoder(idim, enc_dim, heads, ff, layers_per_block, code_dim, dropout, pos_enc)
    elif encoder_type == "conv":
        enc = ConvEncoder(idim, enc_dim, code_dim, convs_per_block=layers_per_block)
    else:
        raise ValueError(f"encoder_type must be 'transformer' or 'conv', got {encoder_type!r}")
    return VQVAE(enc, idim, num_speakers, num_codes=num_codes, code_dim=code_dim, **kwargs)


class MultiScaleConv(nn.Module):
    """Parallel 1D convolutions of several kernel widths, concatenated and projected (inverter, paper Fig. 4)."""

    def __init__(self, idim: int, dim: int, kernels=(1, 3, 5, 7)):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv1d(idim, dim, k, padding=k // 2) for k in kernels)
        self.proj = nn.Conv1d(dim * len(kernels), dim, 1)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T, idim) -> (B, T, dim)
        h = torch.cat([F.relu(c(x.transpose(1, 2))) for c in self.convs], 1)
        return self.norm(self.proj(h).transpose(1, 2))


class CodebookInverter(nn.Module):
    """Paper Sec. 4: codes E[c_t] duplicated r = S / T times -> multi-scale conv -> sinusoidal PE +
    3 Transformer layers -> multi-scale conv -> linear magnitude spectrogram (B, S, n_bins)."""

    def __init__(self, code_dim: int, n_bins: int, dim: int = 256, heads: int = 4, ff: int = 1024,
                 layers: int = 3, dropout: float = 0.1, repeat: int = STRIDE):
        super().__init__()
        self.repeat = repeat
        self.conv1 = MultiScaleConv(code_dim, dim)
        self.pe = PositionalEncoding(dim)
        self.layers = nn.ModuleList(transformer_layer(dim, heads, ff, dropout) for _ in range(layers))
        self.conv2 = MultiScaleConv(dim, dim)
        self.out = nn.Linear(dim, n_bins)

    def forward(self, e: torch.Tensor, code_lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        h = e.repeat_interleave(self.repeat, dim=1)
        lengths = code_lengths * self.repeat
        pad = make_pad_mask(lengths, maxlen=h.shape[1])
        # padding zeroed before the convolutions: an utterance's frames do not depend on its batch
        h = self.pe(self.conv1(h.masked_fill(pad.unsqueeze(-1), 0.0)))
        for layer in self.layers:
            h = layer(h, src_key_padding_mask=pad)
        h = self.conv2(h.masked_fill(pad.unsqueeze(-1), 0.0))
        return F.softplus(self.out(h)), lengths  # magnitudes are >= 0
