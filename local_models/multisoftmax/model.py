"""Multilingual streaming RNN-T models of paper 001 (Sections 3-4): one class, five systems.

    system        softmax heads             language input        LID head
    mono          one language's units      -                     -          (`lang`: which one)
    vanilla       union of all languages    -                     -
    onehot        union of all languages    one-hot at the input  -
    multisoftmax  one per language          -                     optional (`lid: true`, Section 4.2)

A *head* is an embedding of the previous unit, a joint network and a softmax over that head's units.
Multi-softmax shares the encoder and the prediction LSTM across languages; each language has its own
embedding, joint and softmax (paper Fig. 1). `lsp: true` gives every language its own prediction LSTM
too (Section 4.1, Fig. 2). The LID head is a frame classifier on the encoder output trained with
cross-entropy against the utterance's language at every frame; its loss is added to the RNN-T loss
and, sitting on the encoder only, updates only the encoder and itself (Section 4.2). The paper's LID
branch is "LID specific output and softmax layer"; `lid_rnn_layers > 0` puts a small unidirectional LSTM
of its own before that softmax (ours: on the mini corpus a frame MLP on the shared tiny encoder could not
tell Hindi, Tamil and Gujarati apart even on training data), and `lid_class_weights` balances the loss.

Every model reads targets as ids of the *union* vocabulary and maps them to its heads' ids with a
lookup buffer, so one set of data files serves every system. The unit lists travel inside the model
configuration (`token_lists`), so a trained model decodes without the recipe's data directory.

Streaming: the encoder and prediction network are unidirectional LSTMs and the input stacking only
looks back (units.stack_frames), so `encode(..., state)` over consecutive chunks equals one pass over
the whole utterance; the search in decode.py drives `pred_step` and `joint` one step at a time.
"""
from __future__ import annotations

import warnings
from typing import Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from espnet.nets.pytorch_backend.nets_utils import make_non_pad_mask, make_pad_mask
from torch import nn

from .systems import MODELS as SYSTEMS  # the architectures (model_conf system=)
from .units import BLANK, stack_frames_batch, stacked_length

UNION = "union"

LSTMState = Tuple[torch.Tensor, torch.Tensor]


def rnnt_loss(logits: torch.Tensor, targets: torch.Tensor, logit_lengths: torch.Tensor,
              target_lengths: torch.Tensor, blank: int = 0) -> torch.Tensor:
    """Per-utterance RNN-T negative log-likelihood (torchaudio's fused kernel; logits (B, T, U+1, V))."""
    from torchaudio.functional import rnnt_loss as _rnnt_loss

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torchaudio's maintenance-phase deprecation notice
        return _rnnt_loss(logits.float(), targets.int(), logit_lengths.int(), target_lengths.int(),
                          blank=blank, reduction="none", clamp=-1)


class Joint(nn.Module):
    """z = W_out tanh(W_enc h_t + W_pred g_u): enc (..., H), pred (..., P) broadcastable -> logits (..., V)."""

    def __init__(self, enc_dim: int, pred_dim: int, joint_dim: int, vocab_size: int):
        super().__init__()
        self.enc = nn.Linear(enc_dim, joint_dim)
        self.pred = nn.Linear(pred_dim, joint_dim, bias=False)
        self.out = nn.Linear(joint_dim, vocab_size)

    def forward(self, enc: torch.Tensor, pred: torch.Tensor) -> torch.Tensor:
        return self.out(torch.tanh(self.enc(enc) + self.pred(pred)))


class Head(nn.Module):
    """Language-specific (or union) output side: embedding of the previous unit, joint and softmax."""

    def __init__(self, vocab_size: int, embed_dim: int, enc_dim: int, pred_dim: int, joint_dim: int):
        super().__init__()
        self.vocab_size = vocab_size
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.joint = Joint(enc_dim, pred_dim, joint_dim, vocab_size)


class MultilingualTransducer(nn.Module):
    """See the module docstring. `token_lists` maps every language code (and "union") to its unit list;
    the language ids (`lid` inputs, LID classes) follow the order of `langs`, also for a mono system."""

    def __init__(self, langs: Sequence[str], token_lists: Dict[str, List[str]], system: str = "multisoftmax",
                 lang: Optional[str] = None, lsp: bool = False, lid: bool = False, lid_weight: float = 1.0,
                 lid_class_weights: Optional[Sequence[float]] = None, lid_rnn_layers: int = 0, idim: int = 80,
                 stack: int = 8, stride: int = 3, enc_layers: int = 6, enc_units: int = 1024,
                 pred_layers: int = 2, pred_units: int = 1024, embed_dim: int = 1024, joint_dim: int = 1024,
                 lid_hidden: int = 1024, dropout: float = 0.0, lang_joint_dim: Optional[int] = None):
        super().__init__()
        langs = list(langs)
        if system not in SYSTEMS:
            raise ValueError(f"system {system!r}: expected one of {', '.join(SYSTEMS)}")
        if not langs or len(set(langs)) != len(langs):
            raise ValueError(f"langs {langs!r}: expected distinct language codes")
        if (system == "mono") != (lang is not None) or (lang is not None and lang not in langs):
            raise ValueError(f"lang {lang!r}: a mono system needs one of langs ({' '.join(langs)}), others none")
        if (lsp or lid) and system != "multisoftmax":
            raise ValueError("lsp and lid extend the multisoftmax system only")
        heads = [UNION] if system in ("vanilla", "onehot") else [lang] if system == "mono" else langs
        for name in heads + [UNION]:
            if name not in token_lists:
                raise ValueError(f"token_lists has no unit list for {name!r}")
            if token_lists[name][0] != BLANK:
                raise ValueError(f"unit list {name!r} must start with {BLANK} (id 0, the RNN-T blank)")
        self.langs, self.system, self.heads_names = langs, system, heads
        self.token_lists = {name: list(token_lists[name]) for name in heads + [UNION]}
        self.lsp, self.lid_weight, self.stack_n, self.stride = lsp, lid_weight, stack, stride
        in_dim = idim * stack + (len(langs) if system == "onehot" else 0)
        self.encoder = nn.LSTM(in_dim, enc_units, enc_layers, batch_first=True,
                               dropout=dropout if enc_layers > 1 else 0.0)
        self.enc_dropout = nn.Dropout(dropout)
        # lang_joint_dim: the joint size of the one-language heads (multi-softmax and mono; the union head keeps
        # joint_dim). The paper gives no size; its Table 6 puts multi-softmax below vanilla, which a full-size
        # joint per language cannot be. A finetuned multi-softmax (a mono model) needs its seed's size.
        if lang_joint_dim is not None and lang_joint_dim < 1:
            raise ValueError(f"lang_joint_dim {lang_joint_dim}: expected a positive size (or none: joint_dim)")
        self.heads = nn.ModuleDict({h: Head(len(self.token_lists[h]), embed_dim, enc_units, pred_units,
                                            joint_dim if h == UNION else lang_joint_dim or joint_dim)
                                    for h in heads})
        pred_names = heads if lsp else ["shared"]
        self.pred_nets = nn.ModuleDict({p: nn.LSTM(embed_dim, pred_units, pred_layers, batch_first=True,
                                                   dropout=dropout if pred_layers > 1 else 0.0)
                                        for p in pred_names})
        if lid_rnn_layers < 0 or (lid_rnn_layers and not lid):
            raise ValueError(f"lid_rnn_layers {lid_rnn_layers}: needs lid: true and >= 0 layers")
        # LID branch: a frame MLP on the encoder output, or (lid_rnn_layers > 0) a unidirectional LSTM of its own
        # (streaming: state carried across chunks) that accumulates the evidence before the softmax
        self.lid_rnn = nn.LSTM(enc_units, lid_hidden, lid_rnn_layers, batch_first=True) if lid_rnn_layers else None
        self.lid_head = (None if not lid else nn.Linear(lid_hidden, len(langs)) if self.lid_rnn is not None else
                         nn.Sequential(nn.Linear(enc_units, lid_hidden), nn.ReLU(), nn.Linear(lid_hidden, len(langs))))
        if lid_class_weights is not None and (not lid or len(lid_class_weights) != len(langs)
                                              or min(lid_class_weights) <= 0):
            raise ValueError(f"lid_class_weights {lid_class_weights!r}: needs lid: true and one weight > 0 per "
                             f"language ({' '.join(langs)})")
        # per-language weights of the LID cross-entropy (balanced_lid_weights); none: every frame weighs 1
        self.register_buffer("lid_class_weights", torch.tensor(
            lid_class_weights if lid_class_weights is not None else [1.0] * len(langs), dtype=torch.float),
            persistent=False)
        # union id -> head id (-1: not a unit of that head)
        union_index = {u: i for i, u in enumerate(self.token_lists[UNION])}
        for h in heads:
            table = torch.full((len(union_index),), -1, dtype=torch.long)
            for i, u in enumerate(self.token_lists[h]):
                if u not in union_index:
                    raise ValueError(f"unit {u!r} of {h!r} is not in the union unit list")
                table[union_index[u]] = i
            self.register_buffer(f"u2h_{h}", table, persistent=False)

    # ------------------------------------------------------------------ structure
    @property
    def has_lid(self) -> bool:
        return self.lid_head is not None

    def head_of(self, lang: str) -> str:
        if lang not in self.langs:
            raise ValueError(f"language {lang!r} is not one of this model's languages ({' '.join(self.langs)})")
        if lang in self.heads:
            return lang
        if UNION in self.heads:
            return UNION
        raise ValueError(f"this {self.system} model has no head for language {lang!r} (heads: {' '.join(self.heads)})")

    def _pred_net(self, head: str) -> nn.LSTM:
        return self.pred_nets[head if self.lsp else "shared"]

    def num_params(self, lang: Optional[str] = None) -> int:
        """Parameters of the whole model, or of what decoding `lang` uses (the others' heads dropped)."""
        total = sum(p.numel() for p in self.parameters())
        if lang is None:
            return total
        keep = {self.head_of(lang)}
        for h in self.heads_names:
            if h not in keep:
                total -= sum(p.numel() for p in self.heads[h].parameters())
                if self.lsp:
                    total -= sum(p.numel() for p in self.pred_nets[h].parameters())
        return total

    # ------------------------------------------------------------------ encoder
    def stack(self, feats: torch.Tensor, lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """(B, T, 80) log-mels at 10 ms -> (B, ceil(T/3), 640) at 30 ms (causal stacking)."""
        return stack_frames_batch(feats, lengths, self.stack_n, self.stride)

    def encode(self, x: torch.Tensor, lengths: torch.Tensor, lid: Optional[torch.Tensor] = None,
               state: Optional[LSTMState] = None) -> Tuple[torch.Tensor, LSTMState]:
        """Encoder over stacked frames x (B, S, 640); lid (B,) language ids (one-hot system only).
        Returns (B, S, H) and the LSTM state after the last frame (for the next chunk); padded frames
        are beyond `lengths`, so with B > 1 the state is only meaningful for full-length rows."""
        if self.system == "onehot":
            if lid is None:
                raise ValueError("the one-hot system needs the input language (lid)")
            onehot = F.one_hot(lid.long(), len(self.langs)).to(device=x.device, dtype=x.dtype)
            x = torch.cat([x, onehot[:, None, :].expand(-1, x.shape[1], -1)], dim=-1)
        h, state = self.encoder(x, state)
        return self.enc_dropout(h), state

    def lid_log_posteriors(self, h: torch.Tensor, state: Optional[LSTMState] = None
                           ) -> Tuple[torch.Tensor, Optional[LSTMState]]:
        """(B, S, L) frame-level log P(language) from encoder frames, and the LID LSTM's state after the last
        frame (None without one): pass it with the next chunk to stream."""
        if self.lid_head is None:
            raise ValueError("this model has no LID head (train a multisoftmax system with lid: true)")
        if self.lid_rnn is not None:
            h, state = self.lid_rnn(h, state)
        return torch.log_softmax(self.lid_head(h), dim=-1), state

    # ------------------------------------------------------------------ prediction network and joint
    def pred_init_state(self, head: str, n: int) -> LSTMState:
        lstm = self._pred_net(head)
        w = lstm.weight_hh_l0
        z = torch.zeros(lstm.num_layers, n, lstm.hidden_size, device=w.device, dtype=w.dtype)
        return z, z.clone()

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def pred_step(self, head: str, tokens: torch.Tensor, state: LSTMState) -> Tuple[torch.Tensor, LSTMState]:
        """One prediction-network step for N hypotheses: last emitted unit ids (N,) of `head` (blank = start)
        and LSTM state (layers, N, P) -> (N, P) output and new state."""
        g, state = self._pred_net(head)(self.heads[head].embed(tokens)[:, None, :], state)
        return g[:, 0], state

    def joint_log_probs(self, head: str, enc: torch.Tensor, pred: torch.Tensor) -> torch.Tensor:
        """log-softmax over `head`'s units of the joint of encoder frames and prediction outputs
        (broadcastable, e.g. enc (N, H) with pred (N, P))."""
        return torch.log_softmax(self.heads[head].joint(enc, pred), dim=-1)

    def to_head_ids(self, head: str, union_ids: torch.Tensor) -> torch.Tensor:
        return getattr(self, f"u2h_{head}")[union_ids]

    # ------------------------------------------------------------------ training
    def head_loss(self, head: str, h: torch.Tensor, hlens: torch.Tensor, text: torch.Tensor,
                  tlens: torch.Tensor) -> torch.Tensor:
        """Per-utterance RNN-T loss of rows that all use `head`; text holds union ids (padding >= tlens)."""
        U, S = int(tlens.max()), int(hlens.max())
        text, h = text[:, :U], h[:, :S]  # the loss kernel wants the padded sizes to be the longest row's
        valid = make_non_pad_mask(tlens)  # (B, U) bool: U is the longest row (transcripts are never empty)
        ids = self.to_head_ids(head, text.clamp(min=0))
        bad = valid & (ids < 0)
        if bad.any():
            b, u = bad.nonzero()[0].tolist()
            unit = self.token_lists[UNION][int(text[b, u])]
            raise ValueError(f"target unit {unit!r} is not a unit of head {head!r}")
        ids = torch.where(valid, ids, torch.zeros_like(ids))
        start = torch.zeros(len(ids), 1, dtype=torch.long, device=ids.device)  # blank starts the history
        g, _ = self._pred_net(head)(self.heads[head].embed(torch.cat([start, ids], dim=1)))
        logits = self.heads[head].joint(h[:, :, None, :], g[:, None, :, :])  # (B, S, U+1, V)
        return rnnt_loss(logits, ids, hlens, tlens)

    def forward(self, feats: torch.Tensor, feats_lengths: torch.Tensor, text: torch.Tensor,
                text_lengths: torch.Tensor, lid: torch.Tensor) -> Dict[str, torch.Tensor]:
        """Losses of a batch: feats (B, T, 80), text (B, U) union ids, lid (B,) language ids (order of
        `langs`). Rows of different languages may share a batch: each goes through its own head."""
        x, xlens = self.stack(feats, feats_lengths)
        h, _ = self.encode(x, xlens, lid)
        per_utt = torch.zeros(len(x), device=x.device)
        covered = torch.zeros_like(lid, dtype=torch.bool)
        for head in self.heads_names:
            rows = (torch.ones_like(lid, dtype=torch.bool) if head == UNION
                    else lid == self.langs.index(head))
            covered |= rows
            if rows.any():
                idx = rows.nonzero()[:, 0]
                per_utt = per_utt.index_put((idx,), self.head_loss(head, h[idx], xlens[idx], text[idx],
                                                                   text_lengths[idx]))
        if not covered.all():
            lang = self.langs[int(lid[~covered][0])]
            raise ValueError(f"an utterance in language {lang!r}: this {self.system} model has no head for it")
        out = dict(loss_rnnt=per_utt.mean())
        loss = out["loss_rnnt"]
        if self.lid_head is not None:
            logp, _ = self.lid_log_posteriors(h)
            m = ~make_pad_mask(xlens, maxlen=h.shape[1])  # (B, S) bool, True on an utterance's frames
            target = lid.long()[:, None].expand(-1, h.shape[1])
            # summed over an utterance's frames like the RNN-T loss (a sum over its units), then averaged
            # over utterances: the paper adds the two losses, and a per-frame mean would be ~100x too weak
            w = self.lid_class_weights[lid.long()][:, None]
            ce = -(logp.gather(-1, target[..., None])[..., 0] * m * w).sum() / len(x)
            out["loss_lid"] = ce
            out["lid_frame_acc"] = ((logp.argmax(-1) == target) & m).sum() / m.sum()
            loss = loss + self.lid_weight * ce
        out["loss"] = loss
        return out


def balanced_lid_weights(hours: Dict[str, float], langs: Sequence[str]) -> List[float]:
    """Per-language LID cross-entropy weights (order of `langs`) that give every language the same total
    weight, w_l = 1 / (L share_l), so that the average frame still weighs 1 (sum_l share_l w_l = 1).
    Unweighted, the mini corpus' 3:1 imbalance drove the LID head to the large languages' prior: it called
    every Tamil and Gujarati test utterance English or Hindi. Not in the paper (23 000 h, LID 83-96 %)."""
    missing = [lang for lang in langs if hours.get(lang, 0) <= 0]
    if missing:
        raise ValueError(f"no training hours for {', '.join(missing)}: cannot balance the LID loss")
    total = sum(hours[lang] for lang in langs)
    return [round(total / (len(langs) * hours[lang]), 6) for lang in langs]


def num_encoder_frames(num_frames, stride: int = 3):
    """Encoder frames (30 ms) of an utterance of `num_frames` 10 ms frames."""
    return stacked_length(num_frames, stride)


__all__ = ["MultilingualTransducer", "SYSTEMS", "UNION", "rnnt_loss", "num_encoder_frames", "balanced_lid_weights"]
