"""JDI-T's aligner attention (paper 002, section 3.2, Algorithm 1) and the durations read off it (section 2.2).

* `ContentAttention`: single-head scaled dot-product attention from the decoder states s_1:T over the encoder
  outputs h_1:N, computed for all T x N pairs at once; it gives the per-step weights w_t(n) (a softmax over n,
  padded encoder positions masked).
* `forward_attention`: Algorithm 1 over those weights, one decoder step at a time (vectorised over batch and
  encoder positions): alpha_0 = one-hot at the first token, alpha'_t(n) = (alpha_{t-1}(n) + alpha_{t-1}(n-1))
  * w_t(n), alpha_t = alpha'_t / sum_m alpha'_t(m). It runs in the log domain (the same numbers, see the test
  against the plain loop): in probability space the product of many small weights underflows to an all-zero
  row once the energies get sharp, and the recursion never recovers from that.
* `durations_from_attention`: per token, the number of valid frames whose attention argmax is that token.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import torch
import torch.nn.functional as F

# "log 0" of masked / unreachable positions: finite, because logaddexp(-inf, -inf) has a NaN gradient, and far
# below any real log weight, so that a reachable position always outweighs an unreachable one (a floor of, say,
# -1e4 lets a trained model whose energies differ by 1e4 jump backwards). The recursion clamps at it so that it
# never drifts to -inf over long utterances (float32 holds -3.4e38).
LOG_ZERO = -1.0e30


def forward_attention(log_w: torch.Tensor, move_logit: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Forward-attention weights alpha (B, T, N) from log content-attention weights log_w (B, T, N).

    log_w rows must be log-softmax outputs with padded encoder positions at (about) LOG_ZERO. The result's
    rows sum to 1; alpha_t can only be non-zero at positions <= t + 1 (0-based t: one step per frame at most).
    move_logit (B, T), optional: the transition agent of Zhang et al. (the paper's ref. [12], section 2.3):
    step t weighs "move" by u_t = sigmoid(move_logit[:, t]) and "stay" by 1 - u_t instead of 1 and 1.
    Computed in float32 whatever the input dtype (AMP)."""
    B, T, N = log_w.shape
    log_w = log_w.float().clamp(min=LOG_ZERO)  # masked entries: about LOG_ZERO - logsumexp
    log_a = torch.full((B, N), LOG_ZERO, device=log_w.device)
    log_a[:, 0] = 0.0  # alpha_0: all mass on the first token
    if move_logit is not None:
        log_move, log_stay = F.logsigmoid(move_logit.float()), F.logsigmoid(-move_logit.float())
    out = []
    for t in range(T):
        if move_logit is None:
            stay_or_move = torch.logaddexp(log_a, F.pad(log_a[:, :-1], (1, 0), value=LOG_ZERO))
        else:
            stay_or_move = torch.logaddexp(log_a + log_stay[:, t, None],
                                           F.pad(log_a[:, :-1], (1, 0), value=LOG_ZERO) + log_move[:, t, None])
        log_a = stay_or_move + log_w[:, t]
        log_a = (log_a - torch.logsumexp(log_a, dim=-1, keepdim=True)).clamp(min=LOG_ZERO)
        out.append(log_a)
    return torch.stack(out, dim=1).exp()


class ContentAttention(torch.nn.Module):
    """Single-head content attention with the forward-attention recursion on top (Algorithm 1).

    forward(s, h, h_mask) -> (context (B, T, D), alpha (B, T, N)); h_mask (B, N) is True on real tokens.
    `self.attn` keeps the last alpha (B, 1, T, N), like ESPnet's MultiHeadedAttention, for plotting."""

    def __init__(self, dim: int, transition_agent: bool = False, move_prior: float = 0.15):
        super().__init__()
        # transition agent: u_t from the decoder state s_t alone (no context feedback, so w and u stay
        # parallel over t), its bias set so that an untrained model moves at move_prior tokens per frame
        self.transition = None
        if transition_agent:
            self.transition = torch.nn.Linear(dim, 1)
            self.move_prior = move_prior
        self.linear_q = torch.nn.Linear(dim, dim)
        self.linear_k = torch.nn.Linear(dim, dim)
        self.linear_v = torch.nn.Linear(dim, dim)
        self.linear_out = torch.nn.Linear(dim, dim)
        self.scale = 1.0 / math.sqrt(dim)
        self.attn: Optional[torch.Tensor] = None

    def log_weights(self, s: torch.Tensor, h: torch.Tensor, h_mask: torch.Tensor) -> torch.Tensor:
        """log w_t(n) (B, T, N): log-softmax over the real tokens of the scaled dot-product energies."""
        energies = torch.matmul(self.linear_q(s), self.linear_k(h).transpose(1, 2)) * self.scale
        energies = energies.float().masked_fill(~h_mask[:, None, :], LOG_ZERO)
        return torch.log_softmax(energies, dim=-1)

    def forward(self, s: torch.Tensor, h: torch.Tensor, h_mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        move = self.transition(s).squeeze(-1) if self.transition is not None else None
        alpha = forward_attention(self.log_weights(s, h, h_mask), move)
        alpha = alpha.masked_fill(~h_mask[:, None, :], 0.0)
        self.attn = alpha.detach().unsqueeze(1)
        context = torch.matmul(alpha.to(h.dtype), self.linear_v(h))
        return self.linear_out(context), alpha


def durations_from_attention(alpha: torch.Tensor, text_lengths: torch.Tensor,
                             feats_lengths: torch.Tensor) -> torch.Tensor:
    """Durations (B, N) long: for each token, how many frames t < feats_lengths[b] have their attention
    argmax on it (paper section 2.2). Frames beyond the feature length are ignored, tokens beyond the text
    length get 0, and each row sums to feats_lengths[b]."""
    B, T, N = alpha.shape
    # padded tokens carry no weight; masking them anyway keeps a degenerate all-zero row on a real token
    token_mask = torch.arange(N, device=alpha.device)[None, :] < text_lengths[:, None]
    best = alpha.masked_fill(~token_mask[:, None, :], -1.0).argmax(dim=-1)  # (B, T)
    frame_mask = torch.arange(T, device=alpha.device)[None, :] < feats_lengths[:, None]
    d = torch.zeros(B, N, dtype=torch.long, device=alpha.device)
    return d.scatter_add_(1, best, frame_mask.long())
