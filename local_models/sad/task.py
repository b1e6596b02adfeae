"""ESPnet2 task for frame-level SAD (docs/espnet2.md): `python -m local_models.bin.sad_train`.

Data: `feats` (T, 257) STFT magnitudes and `labels` (T,) 0/1 float32 frame labels (kaldi_ark, made by
sad_make_chunks). Model choice `--model {cnn1d,rnn,seg_rnn}` (nets.NETS, named in systems.NETS) with `--model_conf`
(see nets.py); the ESPnet model wraps the net and computes BCE on its logits over the valid
(non-padded) units.
"""
from __future__ import annotations

import argparse
from typing import Dict, Optional, Tuple

import torch
from typeguard import typechecked

from local_models.common.compat import lean_espnet_imports

lean_espnet_imports()  # before espnet2: g2p_en without nltk downloads, rarely used modules deferred (common/compat)

from espnet2.torch_utils.device_funcs import force_gatherable
from espnet2.train.abs_espnet_model import AbsESPnetModel
from espnet2.train.class_choices import ClassChoices
from espnet2.utils.types import float_or_none

from local_models.common.espnet_task import LocalTask

from .nets import NETS, AbsSADNet

model_choices = ClassChoices(
    "model",
    classes=dict(NETS),  # the nets of systems.NETS
    type_check=AbsSADNet,
    default=next(iter(NETS)),
)


class ESPnetSADModel(AbsESPnetModel):
    """BCE between the net's logits (frames, or segments for seg_rnn) and the matching targets.

    Padded frames (beyond labels_lengths, or labels < 0) are masked out of the loss."""

    def __init__(self, net: AbsSADNet, pos_weight: Optional[float] = None):
        super().__init__()
        self.net = net
        self.pos_weight = pos_weight

    def forward(self, feats: torch.Tensor, feats_lengths: torch.Tensor, labels: torch.Tensor,
                labels_lengths: torch.Tensor, **kwargs):
        if labels.dim() == 3:
            labels = labels[..., 0]
        T = min(feats.shape[1], labels.shape[1])
        feats, labels = feats[:, :T], labels[:, :T]
        lengths = torch.minimum(feats_lengths, labels_lengths).clamp(max=T)
        logits, _ = self.net(feats, lengths)
        target, mask = self.net.targets(labels, lengths)
        pw = None if self.pos_weight is None else torch.tensor(self.pos_weight, device=logits.device)
        per = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none", pos_weight=pw)
        m = mask.float()
        n = m.sum().clamp(min=1)
        loss = (per * m).sum() / n
        with torch.no_grad():
            acc = (((logits > 0).float() == target).float() * m).sum() / n
        stats = dict(loss=loss.detach(), acc=acc.detach())
        loss, stats, weight = force_gatherable((loss, stats, n.detach()), loss.device)
        return loss, stats, weight

    def collect_feats(self, feats, feats_lengths, labels=None, labels_lengths=None, **kwargs) -> Dict[str, torch.Tensor]:
        return {}


class SADTask(LocalTask):
    class_choices_list = [model_choices]
    # feats pad with 0; labels are float32 (padded with 0 too) so the loss masks by labels_lengths
    float_pad_value, int_pad_value = 0.0, -1

    @classmethod
    def add_options(cls, group) -> None:
        group.add_argument("--pos_weight", type=float_or_none, default=None,
                           help="BCE weight of the speech class (None: 1)")

    @classmethod
    def required_data_names(cls, train: bool = True, inference: bool = False) -> Tuple[str, ...]:
        return ("feats",) if inference else ("feats", "labels")

    @classmethod
    @typechecked
    def build_model(cls, args: argparse.Namespace) -> ESPnetSADModel:
        net_class = model_choices.get_class(args.model)
        net = net_class(**(args.model_conf or {}))
        return ESPnetSADModel(net, pos_weight=getattr(args, "pos_weight", None))
