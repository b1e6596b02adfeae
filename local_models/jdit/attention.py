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
* `viterbi_durations` (not the paper's rule; an alternative read-out for evaluation): the best monotonic path
  through the same content weights and transition probabilities the recursion uses. alpha_t is a FILTERED
  distribution (it sees frames up to t only), so its argmax moves to the next token only once the evidence
  for it has accumulated: it lags at boundaries. The best path uses the whole utterance (as forced alignment
  does), and can be required to end on the last token. It reads frame t off decoder step t + 1: the aligner is
  teacher forced on the frames shifted by one, so step t's query has seen frames < t only, and the evidence of
  frame t first enters at step t + 1. Scored by step t the path is one frame late at boundaries (mini corpus
  dev set, 15 utterances: mean signed boundary error +0.99 frames by step t, -0.01 by step t + 1).
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

import numpy as np
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
        # the last call's log content weights (B, T, N) and move logits (B, T) (None without the agent),
        # detached: what viterbi_durations needs besides the lengths
        self.log_w: Optional[torch.Tensor] = None
        self.move_logit: Optional[torch.Tensor] = None

    def log_weights(self, s: torch.Tensor, h: torch.Tensor, h_mask: torch.Tensor) -> torch.Tensor:
        """log w_t(n) (B, T, N): log-softmax over the real tokens of the scaled dot-product energies."""
        energies = torch.matmul(self.linear_q(s), self.linear_k(h).transpose(1, 2)) * self.scale
        energies = energies.float().masked_fill(~h_mask[:, None, :], LOG_ZERO)
        return torch.log_softmax(energies, dim=-1)

    def forward(self, s: torch.Tensor, h: torch.Tensor, h_mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        move = self.transition(s).squeeze(-1) if self.transition is not None else None
        log_w = self.log_weights(s, h, h_mask)
        alpha = forward_attention(log_w, move)
        self.log_w = log_w.detach()
        self.move_logit = move.detach() if move is not None else None
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


# Not librosa.sequence.viterbi (nor common.viterbi, its log-domain core): both take ONE transition matrix, but
# the transition agent's stay / move weights change per frame, and the path must end on the last token.
def viterbi_path(log_w: np.ndarray, log_stay: np.ndarray, log_move: np.ndarray, end_at_last: bool = True) -> np.ndarray:
    """Token index per frame (T,) of the best monotonic path for ONE utterance: log_w (T, N) log content weights
    of its real frames and tokens; log_stay, log_move (T,) the log transition weights into each frame (zeros
    without the transition agent, as Algorithm 1 weighs stay and move by 1 and 1). Same lattice as the
    recursion: before frame 0 the path is on token 0, each frame stays or moves one token on; a path scores
    the sum of its transitions and its frames' log weights. end_at_last: the path must end on the last token
    (when it cannot, with fewer frames than tokens, it ends where it scores best)."""
    T, N = log_w.shape
    delta = np.full(N, -np.inf)
    delta[0] = 0.0
    moved = np.zeros((T, N), dtype=bool)  # backpointer: the path came from token n - 1
    for t in range(T):
        stay = delta + log_stay[t]
        move = np.concatenate(([-np.inf], delta[:-1])) + log_move[t]
        moved[t] = move > stay
        delta = np.maximum(stay, move) + log_w[t]
    n = N - 1 if end_at_last and np.isfinite(delta[N - 1]) else int(np.argmax(delta))
    path = np.empty(T, dtype=np.int64)
    for t in range(T - 1, -1, -1):
        path[t] = n
        n -= int(moved[t, n])
    return path


def next_step(x: torch.Tensor) -> torch.Tensor:
    """Per-step values x (T, ...) moved to the frame they first describe: row t is step t + 1's (the aligner's
    query at step t + 1 is the first to have seen frame t); the last frame, with no later step, keeps its own."""
    return torch.cat([x[1:], x[-1:]]) if len(x) > 1 else x


def viterbi_durations(log_w: torch.Tensor, move_logit: Optional[torch.Tensor], text_lengths: torch.Tensor,
                      feats_lengths: torch.Tensor, end_at_last: bool = True) -> torch.Tensor:
    """Durations (B, N) long from the best monotonic path of each utterance (see viterbi_path): log_w (B, T, N)
    and move_logit (B, T) or None as ContentAttention keeps them, each frame scored by the step after it
    (`next_step`). Each row sums to feats_lengths[b]."""
    B, T, N = log_w.shape
    out = torch.zeros(B, N, dtype=torch.long)  # the search runs in numpy, on the CPU
    for b in range(B):
        t_len, n_len = int(feats_lengths[b]), int(text_lengths[b])
        lw = next_step(log_w[b, :t_len, :n_len].detach().double().cpu())
        lw = (lw - torch.logsumexp(lw, dim=-1, keepdim=True)).numpy()  # renormalised over the real tokens
        if move_logit is None:
            stay = move = np.zeros(t_len)
        else:
            m = next_step(move_logit[b, :t_len].detach().double().cpu())
            stay, move = F.logsigmoid(-m).numpy(), F.logsigmoid(m).numpy()
        path = viterbi_path(lw, stay, move, end_at_last)
        out[b, :n_len] = torch.from_numpy(np.bincount(path, minlength=n_len))
    return out.to(log_w.device)
