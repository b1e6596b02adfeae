"""ESPnet2 task for the SALAD / MUSA-RNN acoustic models (docs/espnet2.md): `python -m local_models.bin.salad_train`.

Data: `ling` (T, D) raw linguistic frames and `acou` (T, 43) raw acoustic frames (kaldi_ark, same T; the model
normalises both with the train statistics it holds), and in stateful training `pos` (text_int "<window> <stream>").

Stateful training (paper section 3.3): the train set is all utterances concatenated, cut into S streams and
windows of W frames; key `w<window>_s<stream>` sorts window-major, so with `--batch_type unsorted
--batch_size S --stateful true` batch b holds window b of every stream, in stream order, and is not shuffled.
The RNN carries its LSTM states from batch to batch (a row's state is reset when the previous batch did not hold
that stream's previous window); SALAD starts each row's position codes at window * W.

Loss: mean squared error over valid frames and all 43 dims. Reported stats: loss and `mcd` (dB, c0..c39 after
undoing the min-max scaling, frame-weighted: the validation criterion the paper early-stops on).
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Dict, Optional, Tuple

import numpy as np
import torch

from local_models.common.compat import lean_espnet_imports

lean_espnet_imports()  # before espnet2: g2p_en without nltk downloads, rarely used modules deferred (common/compat)

from espnet2.torch_utils.device_funcs import force_gatherable
from espnet2.train.abs_espnet_model import AbsESPnetModel
from espnet2.train.class_choices import ClassChoices
from espnet2.utils.types import str2bool

from local_models.common.espnet_task import LocalTask
from local_models.common.mcd import DB

from . import acoustic
from .model import build, detach_state, for_precision, keep_rows, lengths_to_mask, precision_context


class AcousticModel(AbsESPnetModel):
    """ESPnet wrapper of model.SALAD / model.MusaRNN (`arch`), with stateful-batch bookkeeping."""

    arch = ""

    def __init__(self, idim: int, odim: int = acoustic.DIM, stats_file: Optional[str] = None, **conf):
        super().__init__()
        self.net = build(self.arch, idim, odim, **conf)
        # Normalisation lives in the model (like ESPnet's global MVN) and is saved with it: inputs z-normalised
        # on their real-valued dims, targets min-max scaled to [0, 1]. Without stats_file: identity (the values
        # then come from the checkpoint).
        in_mean, in_std = torch.zeros(idim), torch.ones(idim)
        out_lo, out_scale = torch.zeros(odim), torch.ones(odim)
        if stats_file:
            mm, zn, _ = acoustic.load_stats(stats_file)
            if len(zn.mean) != idim or len(mm.lo) != odim:
                raise ValueError(f"{stats_file}: statistics of {len(zn.mean)} -> {len(mm.lo)} dims, "
                                 f"model is {idim} -> {odim}")
            in_mean = torch.tensor(np.where(zn.mask, zn.mean, 0.0))
            in_std = torch.tensor(np.where(zn.mask, zn.std, 1.0))
            out_lo, out_scale = torch.tensor(mm.lo), torch.tensor(mm.scale)
        for name, value in (("in_mean", in_mean), ("in_std", in_std), ("out_lo", out_lo), ("out_scale", out_scale)):
            self.register_buffer(name, value.float())
        self.precision = "fp32"  # inference precision (load_trained(precision=...))
        self._carry = None
        self._carry_pos: Optional[torch.Tensor] = None

    def _state(self, pos: Optional[torch.Tensor], T: int):
        """The state a stateful batch starts from (None outside stateful training)."""
        if pos is None or not self.training:
            return None
        if self.arch == "salad":
            return pos[:, 0].long() * T
        prev = self._carry_pos
        if self._carry is None or prev is None or prev.shape != pos.shape:
            return None
        keep = (pos[:, 0] == prev[:, 0] + 1) & (pos[:, 1] == prev[:, 1])
        return keep_rows(self._carry, keep) if keep.any() else None

    def predict(self, ling: torch.Tensor, lengths: torch.Tensor, state=None):
        """(B, T, 43) normalised acoustic frames from raw linguistic frames, and the new state."""
        return self.net((ling - self.in_mean) / self.in_std, lengths, state)

    @torch.no_grad()
    def synthesise_frames(self, ling: np.ndarray) -> np.ndarray:
        """(T, 43) raw acoustic frames of one utterance's raw linguistic frames (T, D), from position 0, computed
        on the model's device; float32 numpy out."""
        device = self.in_mean.device
        x = torch.tensor(np.asarray(ling, dtype=np.float32), device=device)[None]
        with precision_context(self.precision, device.type):
            y, _ = self.predict(x, torch.tensor([x.shape[1]], device=device))
        return (y[0].float() * self.out_scale + self.out_lo).detach().cpu().numpy()

    def forward(self, ling: torch.Tensor, ling_lengths: torch.Tensor, acou: torch.Tensor,
                acou_lengths: torch.Tensor, pos: Optional[torch.Tensor] = None, **kwargs):
        T = min(ling.shape[1], acou.shape[1])
        lengths = torch.clamp(torch.minimum(ling_lengths, acou_lengths), max=T)
        ling, acou = ling[:, :T], acou[:, :T]
        if pos is not None:
            pos = pos.view(ling.shape[0], -1)
        y, state = self.predict(ling, lengths, self._state(pos, T))
        target = (acou - self.out_lo) / self.out_scale
        if self.training and pos is not None and self.arch == "rnn":
            self._carry, self._carry_pos = detach_state(state), pos.detach().clone()
        m = lengths_to_mask(lengths, T).unsqueeze(-1).to(y.dtype)
        frames = m.sum().clamp(min=1)
        loss = (((y - target) ** 2) * m).sum() / (frames * y.shape[-1])
        with torch.no_grad():
            diff = (y - target)[..., acoustic.MC] * self.out_scale[acoustic.MC]
            mcd = (DB * torch.sqrt(2.0 * (diff ** 2).sum(-1)) * m[..., 0]).sum() / frames
        stats = dict(loss=loss.detach(), mcd=mcd)
        return force_gatherable((loss, stats, frames.detach()), ling.device)

    def collect_feats(self, ling, ling_lengths, **kwargs) -> Dict[str, torch.Tensor]:
        return {}


class SaladModel(AcousticModel):
    arch = "salad"


class RNNModel(AcousticModel):
    arch = "rnn"


model_choices = ClassChoices(
    "model",
    classes=dict(salad=SaladModel, rnn=RNNModel),
    type_check=AbsESPnetModel,
    default="salad",
)


class SaladTask(LocalTask):
    class_choices_list = [model_choices]
    float_pad_value, int_pad_value, not_sequence = 0.0, 0, ("pos",)
    default_model_file = "valid.mcd.best.pth"
    train_hint = "train the model first: run.sh stage 4"

    @classmethod
    def add_options(cls, group) -> None:
        group.add_argument("--stateful", type=str2bool, default=False,
                           help="train batches in file order (window-major stream windows), never shuffled")

    @classmethod
    def build_sequence_iter_factory(cls, args: argparse.Namespace, iter_options, mode: str):
        factory = super().build_sequence_iter_factory(args, iter_options, mode)
        if args.stateful and iter_options.train:
            factory.shuffle = False  # batch b must follow batch b-1: the state flows between them
        return factory

    @classmethod
    def required_data_names(cls, train: bool = True, inference: bool = False) -> Tuple[str, ...]:
        return ("ling", "acou")

    @classmethod
    def optional_data_names(cls, train: bool = True, inference: bool = False) -> Tuple[str, ...]:
        return ("pos",)

    @classmethod
    def build_trained(cls, config_file, model_file, device="cpu") -> AbsESPnetModel:
        return build_from_files(model_choices, config_file, model_file, device)

    @classmethod
    def load_trained(cls, model_dir, model_file: Optional[str] = None, device="cpu", config_file=None,
                     kind: Optional[type] = None, precision: str = "fp32") -> AcousticModel:
        """LocalTask.load_trained, synthesising in `precision` (model.PRECISIONS: fp32, bf16 autocast, int8
        dynamic quantisation: CPU only)."""
        if precision == "int8" and torch.device(device).type != "cpu":
            raise ValueError(f"precision int8 (dynamic quantisation) runs on the CPU only, not on {device}")
        model = super().load_trained(model_dir, model_file, device, config_file, kind)
        model.net = for_precision(model.net, precision)
        model.precision = precision
        return model


def build_from_files(choices: ClassChoices, config_file, model_file, device="cpu") -> AbsESPnetModel:
    """The model a training config + checkpoint describe, on `device`, in eval mode. Normalisation statistics
    come from the checkpoint's buffers, so the config's `stats_file` (an absolute path into the recipe that
    trained it) is not read: a packed model works without its recipe."""
    import yaml

    for f in (config_file, model_file):
        if not Path(f).is_file():
            raise FileNotFoundError(f"{f}: missing (train the model first: run.sh stage 4)")
    conf = yaml.safe_load(Path(config_file).read_text(encoding="utf-8")) or {}
    if conf.get(choices.name) not in choices.classes:
        raise ValueError(f"{config_file}: '{choices.name}: {conf.get(choices.name)}' is not one of "
                         f"{', '.join(choices.classes)}")
    model_conf = {k: v for k, v in (conf.get(f"{choices.name}_conf") or {}).items() if k != "stats_file"}
    model = choices.get_class(conf[choices.name])(**model_conf)
    state = torch.load(model_file, map_location=torch.device(device), weights_only=True)
    model.load_state_dict(state)
    return model.to(device).eval()


def load_trained(model_dir, model_file: str = "valid.mcd.best.pth", precision: str = "fp32",
                 device="cpu", config_file=None) -> AcousticModel:
    """SaladTask.load_trained: the model trained into exp dir `model_dir` (config.yaml + model_file; or the
    explicit config_file and model_file paths of a packed model), in eval mode, on `device`, in `precision`."""
    return SaladTask.load_trained(model_dir, model_file, device, config_file, precision=precision)


__all__ = ["SaladTask", "SaladModel", "RNNModel", "AcousticModel", "load_trained", "build_from_files"]
