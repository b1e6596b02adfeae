"""JDI-T (Lim et al., paper 002): a feed-forward Transformer TTS trained jointly with an autoregressive aligner.

`JDIT` is an ESPnet2 TTS model (espnet2.tts.abs_tts.AbsTTS; registered as `tts: jdit` by
local_models.jdit.task). Its parts (paper section 2, Figure 1), built from ESPnet's Transformer blocks:

* shared encoder: phoneme embedding, Transformer-TTS encoder pre-net (3 conv + batch norm + ReLU + dropout,
  then a linear projection), scaled positional encoding, `elayers` FFT blocks: multi-head self-attention and
  a "single layer 1D convolution network" (ESPnet `conv1d-linear`: conv of kernel 5 to `eunits` channels,
  ReLU, dropout, linear back to `adim`; the paper states no width for it, so "all other dimensions" = 512;
  its 2048 is the aligner FFN's), each with residual, dropout and a layer norm AFTER the sum (the paper
  normalises each block's output: `*_normalize_before: false`);
* feed-forward decoder: length regulator, `dlayers` FFT blocks, linear to the `odim` mel bins; L1 loss;
* autoregressive aligner (`ARAligner`): decoder pre-net (2 x linear + ReLU + dropout, linear to adim), scaled
  positional encoding, ONE decoder block (masked multi-head self-attention, single-head content attention
  over the encoder output with the forward-attention recursion of Algorithm 1, position-wise FFN; post-norm),
  linear to mel (L1 loss, teacher forcing on the targets shifted by one frame) and linear to the phoneme
  vocabulary (CTC recognizer loss against the input phonemes, blank = id 0 = ESPnet's <blank>, section 3.1);
  a guided attention loss (Tachibana et al., ESPnet's GuidedAttentionLoss) on the forward-attention weights;
* durations on the fly: per token, the frames whose attention argmax is that token; they drive the length
  regulator in training and are the log(d + 1) targets (L2 loss) of the duration predictor (FastSpeech's:
  2 x conv + ReLU + layer norm + dropout, linear), whose input is the encoder output DETACHED (section 2.3).

Loss (eq. 1) = ff_l1 + ar_l1 + duration + ctc + guided attention, each with a weight (default 1).
Mel L1 losses: mean over valid frames and bins; duration: mean squared error in the log domain over real
tokens; CTC: torch's `reduction="mean"` (each utterance's loss over its token count, averaged over the batch;
zero_infinity for utterances with fewer frames than tokens); guided attention: ESPnet's GuidedAttentionLoss with
sigma 0.2, the g of Tachibana et al. that the paper says it copies.

No <sos/eos> is appended to the text (unlike ESPnet's FastSpeech): the aligner never has to stop (it is only
run teacher-forced), so each duration belongs to a text token and sums to the utterance's frame count.

Synthesis uses the encoder, the duration predictor and the feed-forward decoder only: duration =
max(0, round(exp(prediction) - 1)), ESPnet's DurationPredictor.inference rule (the same as its FastSpeech
baseline). Zero is allowed because the training targets have zeros (tokens the attention argmax skips); if
every token of an utterance gets 0, each gets 1 frame (ESPnet's LengthRegulator does the same). The returned
`duration` is what the length regulator used, so len(feat_gen) == duration.sum().

Durations are frame counts: whatever arrives (given, predicted, scaled by alpha) becomes an int64 tensor
(`frame_durations`; fractional given durations are rounded at the token boundaries) before the length
regulator and the masks use it, and that index arithmetic, as the duration predictor's log -> frames
conversion, runs with autocast off (`full_precision`): in bf16, integers above 256 are not exact.
"""
from __future__ import annotations

import contextlib
from typing import Dict, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from typeguard import typechecked

from espnet2.torch_utils.device_funcs import force_gatherable
from espnet2.torch_utils.initialize import initialize
from espnet2.tts.abs_tts import AbsTTS
from espnet.nets.pytorch_backend.e2e_tts_tacotron2 import GuidedAttentionLoss
from espnet.nets.pytorch_backend.fastspeech.duration_predictor import DurationPredictor
from espnet.nets.pytorch_backend.fastspeech.length_regulator import LengthRegulator
# masks: ~make_pad_mask(lengths, maxlen=T) is make_non_pad_mask with a maxlen (this ESPnet's make_non_pad_mask
# takes none): bool on lengths' device. Every length JDIT passes is >= 1 (ESPnet marks a 0 length all valid).
from espnet.nets.pytorch_backend.nets_utils import make_pad_mask
from espnet.nets.pytorch_backend.tacotron2.encoder import Encoder as EncoderPrenet
from espnet.nets.pytorch_backend.transformer.attention import MultiHeadedAttention
from espnet.nets.pytorch_backend.transformer.embedding import ScaledPositionalEncoding
from espnet.nets.pytorch_backend.transformer.encoder import Encoder as TransformerEncoder
from espnet.nets.pytorch_backend.transformer.mask import subsequent_mask
from espnet.nets.pytorch_backend.transformer.positionwise_feed_forward import PositionwiseFeedForward

from .attention import ContentAttention, durations_from_attention, viterbi_durations


def full_precision(device: torch.device):
    """Autocast off on `device`, for index arithmetic (durations, lengths, masks): it keeps its own dtypes."""
    if torch.amp.is_autocast_available(device.type):
        return torch.autocast(device.type, enabled=False)
    return contextlib.nullcontext()


def frame_durations(durations: torch.Tensor) -> torch.Tensor:
    """Given durations -> int64 frames per token, same shape and device (what the length regulator repeats).

    Integer dtypes are taken as they are. Floating ones (e.g. 5.5 frames per token, seconds x frame rate) are
    rounded at the token boundaries, in float64 whatever their dtype (bf16 included): b_i = round(d_1 + ... +
    d_i) (half to even), frames_i = b_i - b_(i-1), along the last dim; so a row's total is round(sum d) and no
    token moves by more than one frame (5.5 x 4: boundaries 6 11 16 22 -> 6 5 5 6; truncating each token gave
    5 x 4 = 20). Negative, NaN or infinite durations: ValueError."""
    with full_precision(durations.device):
        d = durations.double() if durations.is_floating_point() else durations.long()
        if not bool(torch.isfinite(d).all()):
            raise ValueError("durations must be finite frame counts, got NaN or inf")
        if bool((d < 0).any()):
            raise ValueError(f"durations must be >= 0 frames, got {float(d.min()):g}")
        if not d.is_floating_point():
            return d
        bounds = torch.round(torch.cumsum(d, dim=-1)).long()
        return torch.diff(bounds, dim=-1, prepend=torch.zeros_like(bounds[..., :1]))


class ARAligner(torch.nn.Module):
    """The autoregressive Transformer of JDI-T (paper Figure 2b), run teacher-forced only.

    forward(ys_in, ys_lengths, hs, h_mask) -> (mel (B, T, odim), ctc_logits (B, T, vocab), alpha (B, T, N)).
    ys_in: the target frames shifted right by one (a zero frame first); h_mask (B, N) True on real tokens."""

    def __init__(self, odim: int, vocab_size: int, adim: int, aheads: int, units: int, prenet_layers: int = 2,
                 prenet_units: int = 256, prenet_dropout_rate: float = 0.5, dropout_rate: float = 0.1,
                 positional_dropout_rate: float = 0.1, attn_dropout_rate: float = 0.1,
                 transition_agent: bool = False, move_prior: float = 0.15):
        super().__init__()
        layers = []
        for i in range(prenet_layers):
            layers += [torch.nn.Linear(odim if i == 0 else prenet_units, prenet_units), torch.nn.ReLU(),
                       torch.nn.Dropout(prenet_dropout_rate)]
        # Not ESPnet's tacotron2 Prenet: that one keeps its dropout on in eval mode (for AR generation), which
        # would make the teacher-forced durations of a trained model random.
        self.prenet = torch.nn.Sequential(*layers, torch.nn.Linear(prenet_units if prenet_layers else odim, adim))
        self.pos_enc = ScaledPositionalEncoding(adim, positional_dropout_rate)
        self.self_attn = MultiHeadedAttention(aheads, adim, attn_dropout_rate)
        self.src_attn = ContentAttention(adim, transition_agent, move_prior)
        self.feed_forward = PositionwiseFeedForward(adim, units, dropout_rate)
        self.norm1, self.norm2, self.norm3 = (torch.nn.LayerNorm(adim) for _ in range(3))
        self.dropout = torch.nn.Dropout(dropout_rate)
        self.feat_out = torch.nn.Linear(adim, odim)
        self.ctc_out = torch.nn.Linear(adim, vocab_size)

    def forward(self, ys_in: torch.Tensor, ys_lengths: torch.Tensor, hs: torch.Tensor, h_mask: torch.Tensor):
        T = ys_in.size(1)
        y_mask = ~make_pad_mask(ys_lengths, maxlen=T)
        self_mask = y_mask.unsqueeze(-2) & subsequent_mask(T, device=ys_in.device).unsqueeze(0)  # (B, T, T)
        x = self.pos_enc(self.prenet(ys_in))
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, self_mask)))
        context, alpha = self.src_attn(x, hs, h_mask)
        x = self.norm2(x + self.dropout(context))
        x = self.norm3(x + self.dropout(self.feed_forward(x)))
        return self.feat_out(x), self.ctc_out(x), alpha


class JDIT(AbsTTS):
    """JDI-T acoustic model (see the module docstring). Sizes default to the paper's (section 4.2)."""

    @typechecked
    def __init__(
        self,
        idim: int,
        odim: int,
        adim: int = 512,
        aheads: int = 8,
        elayers: int = 6,
        eunits: int = 512,
        dlayers: int = 6,
        dunits: int = 512,
        positionwise_layer_type: str = "conv1d-linear",
        positionwise_conv_kernel_size: int = 5,
        encoder_normalize_before: bool = False,
        decoder_normalize_before: bool = False,
        embed_dim: int = 512,
        eprenet_conv_layers: int = 3,
        eprenet_conv_chans: int = 512,
        eprenet_conv_filts: int = 5,
        eprenet_dropout_rate: float = 0.5,
        use_batch_norm: bool = True,
        dprenet_layers: int = 2,
        dprenet_units: int = 256,
        dprenet_dropout_rate: float = 0.5,
        aligner_heads: int = 8,
        aligner_units: int = 2048,
        duration_predictor_layers: int = 2,
        duration_predictor_chans: int = 512,
        duration_predictor_kernel_size: int = 3,
        duration_predictor_dropout_rate: float = 0.1,
        transformer_enc_dropout_rate: float = 0.1,
        transformer_enc_positional_dropout_rate: float = 0.1,
        transformer_enc_attn_dropout_rate: float = 0.1,
        transformer_dec_dropout_rate: float = 0.1,
        transformer_dec_positional_dropout_rate: float = 0.1,
        transformer_dec_attn_dropout_rate: float = 0.1,
        aligner_dropout_rate: float = 0.1,
        aligner_positional_dropout_rate: float = 0.1,
        aligner_attn_dropout_rate: float = 0.1,
        init_type: str = "xavier_uniform",
        init_enc_alpha: float = 1.0,
        init_dec_alpha: float = 1.0,
        ff_l1_weight: float = 1.0,
        ar_l1_weight: float = 1.0,
        duration_weight: float = 1.0,
        ctc_weight: float = 1.0,
        guided_attn_weight: float = 1.0,
        guided_attn_sigma: float = 0.2,
        aligner_transition_agent: bool = False,
        aligner_move_prior: float = 0.15,
    ):
        super().__init__()
        self.idim, self.odim = idim, odim
        self.padding_idx = 0  # the collate pads text with 0, which is also <blank> (never a real token)
        self.spks = self.langs = self.spk_embed_dim = None  # single speaker; Text2Speech reads these
        self.weights = dict(ff_l1=ff_l1_weight, ar_l1=ar_l1_weight, duration=duration_weight, ctc=ctc_weight,
                            attn=guided_attn_weight)

        if eprenet_conv_layers > 0:
            encoder_input_layer = torch.nn.Sequential(
                EncoderPrenet(idim=idim, embed_dim=embed_dim, elayers=0, econv_layers=eprenet_conv_layers,
                              econv_chans=eprenet_conv_chans, econv_filts=eprenet_conv_filts,
                              use_batch_norm=use_batch_norm, dropout_rate=eprenet_dropout_rate,
                              padding_idx=self.padding_idx),
                torch.nn.Linear(eprenet_conv_chans, adim),
            )
        else:
            encoder_input_layer = torch.nn.Embedding(idim, adim, padding_idx=self.padding_idx)
        self.encoder = TransformerEncoder(
            idim=idim, attention_dim=adim, attention_heads=aheads, linear_units=eunits, num_blocks=elayers,
            input_layer=encoder_input_layer, dropout_rate=transformer_enc_dropout_rate,
            positional_dropout_rate=transformer_enc_positional_dropout_rate,
            attention_dropout_rate=transformer_enc_attn_dropout_rate, pos_enc_class=ScaledPositionalEncoding,
            normalize_before=encoder_normalize_before, positionwise_layer_type=positionwise_layer_type,
            positionwise_conv_kernel_size=positionwise_conv_kernel_size,
        )
        self.duration_predictor = DurationPredictor(
            idim=adim, n_layers=duration_predictor_layers, n_chans=duration_predictor_chans,
            kernel_size=duration_predictor_kernel_size, dropout_rate=duration_predictor_dropout_rate,
        )
        self.length_regulator = LengthRegulator()
        # the feed-forward decoder is an encoder stack without input layer (as in ESPnet's FastSpeech)
        self.decoder = TransformerEncoder(
            idim=0, attention_dim=adim, attention_heads=aheads, linear_units=dunits, num_blocks=dlayers,
            input_layer=None, dropout_rate=transformer_dec_dropout_rate,
            positional_dropout_rate=transformer_dec_positional_dropout_rate,
            attention_dropout_rate=transformer_dec_attn_dropout_rate, pos_enc_class=ScaledPositionalEncoding,
            normalize_before=decoder_normalize_before, positionwise_layer_type=positionwise_layer_type,
            positionwise_conv_kernel_size=positionwise_conv_kernel_size,
        )
        self.feat_out = torch.nn.Linear(adim, odim)
        self.aligner = ARAligner(
            odim=odim, vocab_size=idim, adim=adim, aheads=aligner_heads, units=aligner_units,
            prenet_layers=dprenet_layers, prenet_units=dprenet_units, prenet_dropout_rate=dprenet_dropout_rate,
            dropout_rate=aligner_dropout_rate, positional_dropout_rate=aligner_positional_dropout_rate,
            attn_dropout_rate=aligner_attn_dropout_rate, transition_agent=aligner_transition_agent,
            move_prior=aligner_move_prior,
        )
        self.attn_criterion = GuidedAttentionLoss(sigma=guided_attn_sigma, alpha=1.0)

        if init_type != "pytorch":
            initialize(self, init_type)
        self.encoder.embed[-1].alpha.data = torch.tensor(init_enc_alpha)
        self.decoder.embed[-1].alpha.data = torch.tensor(init_dec_alpha)
        self.aligner.pos_enc.alpha.data = torch.tensor(init_dec_alpha)
        if aligner_transition_agent:  # start moving at the prior rate, whatever the decoder state
            ta = self.aligner.src_attn.transition
            torch.nn.init.zeros_(ta.weight)
            torch.nn.init.constant_(ta.bias, float(np.log(aligner_move_prior / (1.0 - aligner_move_prior))))

    # ---- building blocks -------------------------------------------------------------------------------
    def encode(self, text: torch.Tensor, text_lengths: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """Encoder output hs (B, N, adim) and the token mask (B, N), True on real tokens."""
        h_mask = ~make_pad_mask(text_lengths, maxlen=text.size(1))
        hs, _ = self.encoder(text, h_mask.unsqueeze(1))
        return hs, h_mask

    def decode(self, hs: torch.Tensor, ds: torch.Tensor) -> torch.Tensor:
        """Feed-forward decoder: mel (B, max sum(ds), odim) from the encoder output expanded by integer
        durations ds (B, N); the expansion and the mask run with autocast off."""
        if ds.is_floating_point():
            raise TypeError(f"durations must be an integer tensor (frame_durations), got {ds.dtype}")
        with full_precision(hs.device):
            xs = self.length_regulator(hs, ds)
            mask = ~make_pad_mask(ds.sum(dim=1), maxlen=xs.size(1)).unsqueeze(1)
        zs, _ = self.decoder(xs, mask)
        return self.feat_out(zs)

    def run_aligner(self, hs: torch.Tensor, h_mask: torch.Tensor, feats: torch.Tensor, feats_lengths: torch.Tensor):
        """Teacher-forced aligner on normalised feats: (mel, ctc_logits, alpha), see ARAligner."""
        ys_in = F.pad(feats[:, :-1], (0, 0, 1, 0))  # a zero frame first, the last frame dropped
        return self.aligner(ys_in, feats_lengths, hs, h_mask)

    @torch.no_grad()
    def align(self, text: torch.Tensor, text_lengths: torch.Tensor, feats: torch.Tensor,
              feats_lengths: torch.Tensor, readouts: Sequence[str] = ("argmax",)
              ) -> Tuple[Dict[str, torch.Tensor], torch.Tensor]:
        """The aligner's durations (B, N) per read-out and its forward-attention weights (B, T, N) for (text,
        normalised feats), teacher forced, from one aligner pass. Read-outs: "argmax", the paper's rule, what
        the model uses as duration targets for this pair; "viterbi", the best monotonic path through the same
        weights, ending on the last token (see attention.viterbi_durations; evaluation only). Call in eval
        mode for deterministic output (dropout)."""
        unknown = set(readouts) - {"argmax", "viterbi"}
        if unknown:
            raise ValueError(f"unknown duration read-out(s) {sorted(unknown)}: argmax or viterbi")
        hs, h_mask = self.encode(text, text_lengths)
        _, _, alpha = self.run_aligner(hs, h_mask, feats, feats_lengths)
        ds = {}
        if "argmax" in readouts:
            ds["argmax"] = durations_from_attention(alpha, text_lengths, feats_lengths)
        if "viterbi" in readouts:
            att = self.aligner.src_attn  # it keeps the log weights and move logits of the pass just run
            ds["viterbi"] = viterbi_durations(att.log_w, att.move_logit, text_lengths, feats_lengths)
        return ds, alpha

    # ---- ESPnet2 interface -----------------------------------------------------------------------------
    def forward(
        self,
        text: torch.Tensor,
        text_lengths: torch.Tensor,
        feats: torch.Tensor,
        feats_lengths: torch.Tensor,
        durations: Optional[torch.Tensor] = None,
        durations_lengths: Optional[torch.Tensor] = None,
        spembs: Optional[torch.Tensor] = None,
        sids: Optional[torch.Tensor] = None,
        lids: Optional[torch.Tensor] = None,
    ) -> Tuple[torch.Tensor, Dict[str, torch.Tensor], torch.Tensor]:
        """Loss, stats and weight (batch size) of a batch: text (B, N) ids, feats (B, T, odim) normalised.

        `durations` from the data loader (a `durations` data file) are ignored: JDI-T takes its durations
        from its own aligner. Speaker / language inputs are not supported (single-speaker model)."""
        if spembs is not None or sids is not None or lids is not None:
            raise ValueError("JDIT is a single-speaker model: remove spembs / sids / lids from the training data")
        text = text[:, : int(text_lengths.max())]  # for data-parallel
        feats = feats[:, : int(feats_lengths.max())]
        hs, h_mask = self.encode(text, text_lengths)

        ar_outs, ctc_logits, alpha = self.run_aligner(hs, h_mask, feats, feats_lengths)
        ds = durations_from_attention(alpha.detach(), text_lengths, feats_lengths)
        d_outs = self.duration_predictor(hs.detach(), ~h_mask)  # stop-gradient into the encoder (section 2.3)
        ff_outs = self.decode(hs, ds)

        frame_mask = ~make_pad_mask(feats_lengths, maxlen=feats.size(1)).unsqueeze(-1)
        n_bins = frame_mask.sum() * self.odim
        ff_l1 = ((ff_outs - feats).abs() * frame_mask).sum() / n_bins
        ar_l1 = ((ar_outs - feats).abs() * frame_mask).sum() / n_bins
        duration_loss = F.mse_loss(d_outs.masked_select(h_mask), torch.log(ds.float() + 1.0).masked_select(h_mask))
        log_probs = torch.log_softmax(ctc_logits.float(), dim=-1).transpose(0, 1)  # (T, B, V)
        ctc_loss = F.ctc_loss(log_probs, text, feats_lengths, text_lengths, blank=0, reduction="mean",
                              zero_infinity=True)
        attn_loss = self.attn_criterion(alpha, text_lengths, feats_lengths)
        parts = dict(ff_l1=ff_l1, ar_l1=ar_l1, duration=duration_loss, ctc=ctc_loss, attn=attn_loss)
        loss = sum(self.weights[k] * v for k, v in parts.items())

        with torch.no_grad():
            valid = frame_mask[..., 0]
            focus_rate = (alpha.max(dim=-1)[0] * valid).sum() / valid.sum()  # mean max attention weight
        stats = dict(
            loss=loss.detach(),
            ff_l1_loss=ff_l1.detach(),
            ar_l1_loss=ar_l1.detach(),
            duration_loss=duration_loss.detach(),
            ctc_loss=ctc_loss.detach(),
            attn_loss=attn_loss.detach(),
            focus_rate=focus_rate,
            zero_duration_rate=(ds.eq(0) & h_mask).sum() / h_mask.sum(),
            encoder_alpha=self.encoder.embed[-1].alpha.detach(),
            decoder_alpha=self.decoder.embed[-1].alpha.detach(),
            aligner_alpha=self.aligner.pos_enc.alpha.detach(),
        )
        loss, stats, weight = force_gatherable((loss, stats, text.size(0)), loss.device)
        return loss, stats, weight

    @torch.no_grad()
    def inference(
        self,
        text: torch.Tensor,
        feats: Optional[torch.Tensor] = None,
        durations: Optional[torch.Tensor] = None,
        spembs: Optional[torch.Tensor] = None,
        sids: Optional[torch.Tensor] = None,
        lids: Optional[torch.Tensor] = None,
        alpha: float = 1.0,
        use_teacher_forcing: bool = False,
    ) -> Dict[str, Optional[torch.Tensor]]:
        """Synthesise one utterance: text (N,) ids -> dict(feat_gen (sum(duration), odim) normalised mel,
        duration (N,) int64 frames per token, att_w).

        Without teacher forcing: predicted durations (module docstring), att_w None. With
        use_teacher_forcing: the given `durations` (N,) frames (fractional ones rounded at the token boundaries:
        frame_durations), else the aligner's durations on `feats` (T, odim, normalised), and then att_w (T, N)
        is the forward attention (Text2Speech derives durations and a focus rate from it). alpha scales the
        durations (speaking rate: 2.0 = half as fast), each token rounded. len(feat_gen) == duration.sum();
        feat_gen is float32 also under autocast."""
        if spembs is not None or sids is not None or lids is not None:
            raise ValueError("JDIT is a single-speaker model: no spembs / sids / lids")
        xs = text.view(1, -1).long()
        ilens = torch.tensor([xs.size(1)], device=xs.device)
        hs, h_mask = self.encode(xs, ilens)
        att_w = None
        if use_teacher_forcing and durations is not None:
            if durations.numel() != xs.size(1):
                raise ValueError(f"{durations.numel()} durations for {xs.size(1)} tokens (JDIT appends no <sos/eos>)")
            ds = frame_durations(durations.reshape(1, -1).to(xs.device))
        elif use_teacher_forcing:
            if feats is None:
                raise ValueError("use_teacher_forcing needs feats (or durations)")
            ys = feats.unsqueeze(0)
            _, _, att = self.run_aligner(hs, h_mask, ys, torch.tensor([ys.size(1)], device=ys.device))
            ds = durations_from_attention(att, ilens, torch.tensor([ys.size(1)], device=ys.device))
            att_w = att[0]
        else:
            # max(0, round(exp(x) - 1)) in float32: bf16's 3 significant digits can round to the wrong frame count
            with full_precision(hs.device):
                ds = self.duration_predictor.inference(hs.float(), ~h_mask)
        with full_precision(hs.device):
            if alpha != 1.0:
                if alpha <= 0:
                    raise ValueError(f"alpha must be > 0, got {alpha}")
                ds = torch.round(ds.double() * alpha)
            ds = ds.long()
            if int(ds.sum()) == 0:
                ds = torch.ones_like(ds)  # as ESPnet's LengthRegulator: never an empty output
        outs = self.decode(hs, ds)
        # float32 whatever the autocast: ESPnet's GlobalMVN.inverse takes the frame count from feat_gen's dtype
        # (x.new_full(..., T)), and a bf16 T above 256 is rounded, which zeroes the last frames of feat_gen_denorm
        return dict(feat_gen=outs[0].float(), duration=ds[0], att_w=att_w)


@torch.no_grad()
def aligner_durations(model, text, feats) -> np.ndarray:
    """Frames per token that a trained JDI-T's aligner gives one (text ids (N,), raw feats (T, odim)) pair,
    teacher forced. `model` is the ESPnetTTSModel of TTSTask.build_model_from_file (its global_mvn, if any,
    normalises feats first) or a bare JDIT (feats already normalised). Sums to T."""
    tts = getattr(model, "tts", model)
    if not isinstance(tts, JDIT):
        raise TypeError(f"aligner_durations needs a JDIT model, got {type(tts).__name__}")
    was_training = model.training
    model.eval()
    device = next(tts.parameters()).device
    x = torch.tensor(np.asarray(text), dtype=torch.long, device=device).view(1, -1)
    y = torch.tensor(np.asarray(feats), dtype=torch.float32, device=device).unsqueeze(0)
    ylens = torch.tensor([y.size(1)], device=device)
    normalize = getattr(model, "normalize", None)
    if normalize is not None:
        y, _ = normalize(y, ylens)
    ds, _ = tts.align(x, torch.tensor([x.size(1)], device=device), y, ylens)
    model.train(was_training)
    return ds["argmax"][0].cpu().numpy()
