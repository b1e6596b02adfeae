"""ESPnet2 task for the VQ-VAE and its codebook inverter (docs/espnet2.md): `python -m local_models.bin.vqvae_train`.

Data: `feats` (T, F) MFCC or log-mel frames (kaldi_ark), `sids` speaker index (text_int, VQ-VAE only) and
`spec` (T, n_bins) linear magnitude spectrogram at the same 10 ms frames (kaldi_ark, inverter only).
`--model vqvae`: model_conf = build_vqvae's arguments (encoder_type transformer | conv, idim, num_speakers,
num_codes, smooth_weight, jitter_p, ...). `--model inverter`: model_conf = vqvae_config + vqvae_model (a trained,
frozen VQ-VAE that turns feats into codes), n_bins and CodebookInverter's arguments.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import torch

from local_models.common.compat import lean_espnet_imports

lean_espnet_imports()  # before espnet2: g2p_en without nltk downloads, rarely used modules deferred (common/compat)

from espnet2.torch_utils.device_funcs import force_gatherable
from espnet2.train.abs_espnet_model import AbsESPnetModel
from espnet2.train.class_choices import ClassChoices
from espnet.nets.pytorch_backend.nets_utils import make_pad_mask

from local_models.common.espnet_task import LocalTask

from .model import STRIDE, CodebookInverter, build_vqvae


class VQVAEModel(AbsESPnetModel):
    """ESPnet wrapper of model.VQVAE: reports loss, reconstruction, commitment, smoothing, code perplexity."""

    def __init__(self, idim: int, num_speakers: int, encoder_type: str = "transformer", **conf):
        super().__init__()
        self.vqvae = build_vqvae(encoder_type, idim, num_speakers, **conf)

    def forward(self, feats: torch.Tensor, feats_lengths: torch.Tensor, sids: Optional[torch.Tensor] = None,
                **kwargs):
        sids = torch.zeros(feats.shape[0], dtype=torch.long, device=feats.device) if sids is None else sids.view(-1)
        out = self.vqvae(feats, feats_lengths, sids.long())
        stats = {k: v.detach() for k, v in out.items() if k != "n_codes"}
        loss, stats, weight = force_gatherable((out["loss"], stats, out["n_codes"]), feats.device)
        return loss, stats, weight

    def collect_feats(self, feats, feats_lengths, **kwargs) -> Dict[str, torch.Tensor]:
        return {}

    @torch.no_grad()
    def encode(self, feats: torch.Tensor, feats_lengths: torch.Tensor):
        """(z, codes, code lengths) for inference."""
        return self.vqvae.encode(feats, feats_lengths)


class InverterModel(AbsESPnetModel):
    """Codebook inverter on top of a frozen, trained VQ-VAE; loss = mean squared error to the linear
    magnitude spectrogram (paper eq. 14) over valid frames."""

    def __init__(self, vqvae_config: str, vqvae_model: str, n_bins: int, **conf):
        super().__init__()
        # read on the CPU (the device is not known yet); a submodule, it then moves with the inverter: the
        # trainer's and build_model_from_file's model.to(device) (load_trained(device=...)) move both
        vq, _ = VQVAETask.build_model_from_file(vqvae_config, vqvae_model, "cpu")
        self.vqvae = vq
        for p in self.vqvae.parameters():
            p.requires_grad_(False)
        self.vqvae.eval()
        self.inverter = CodebookInverter(self.vqvae.vqvae.codebook.dim, n_bins, **conf)

    def train(self, mode: bool = True):
        super().train(mode)
        self.vqvae.eval()  # frozen: no EMA updates, no dropout, no jitter
        return self

    def predict(self, feats: torch.Tensor, feats_lengths: torch.Tensor):
        """(magnitude (B, S, n_bins), lengths S) from input features."""
        with torch.no_grad():
            _, codes, clen = self.vqvae.encode(feats, feats_lengths)
            e = self.vqvae.vqvae.codebook.embed[codes]
        return self.inverter(e, clen)

    def forward(self, feats: torch.Tensor, feats_lengths: torch.Tensor, spec: torch.Tensor,
                spec_lengths: torch.Tensor, **kwargs):
        pred, plen = self.predict(feats, feats_lengths)
        T = min(pred.shape[1], spec.shape[1])
        lengths = torch.minimum(torch.minimum(plen, spec_lengths), torch.tensor(T, device=plen.device))
        m = (~make_pad_mask(lengths, maxlen=T)).unsqueeze(-1).float()
        n = m.sum().clamp(min=1)
        loss = ((pred[:, :T] - spec[:, :T]) ** 2 * m).sum() / (n * spec.shape[2])
        stats = dict(loss=loss.detach())
        loss, stats, weight = force_gatherable((loss, stats, n.detach()), feats.device)
        return loss, stats, weight

    def collect_feats(self, feats, feats_lengths, **kwargs) -> Dict[str, torch.Tensor]:
        return {}


model_choices = ClassChoices(
    "model",
    classes=dict(vqvae=VQVAEModel, inverter=InverterModel),
    type_check=AbsESPnetModel,
    default="vqvae",
)


class VQVAETask(LocalTask):
    class_choices_list = [model_choices]
    float_pad_value, int_pad_value, not_sequence = 0.0, 0, ("sids",)

    @classmethod
    def required_data_names(cls, train: bool = True, inference: bool = False) -> Tuple[str, ...]:
        return ("feats",)

    @classmethod
    def optional_data_names(cls, train: bool = True, inference: bool = False) -> Tuple[str, ...]:
        return ("sids", "spec")


def load_trained(model_dir, model_file: str = "valid.loss.best.pth", kind=None, device="cpu") -> AbsESPnetModel:
    """VQVAETask.load_trained: the model of exp dir `model_dir` in eval mode on `device` (an inverter with its
    frozen VQ-VAE); kind: VQVAEModel or InverterModel to insist on."""
    return VQVAETask.load_trained(model_dir, model_file, device, kind=kind)


__all__ = ["VQVAETask", "VQVAEModel", "InverterModel", "STRIDE", "load_trained"]
