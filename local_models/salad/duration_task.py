"""ESPnet2 task for the MUSA duration model (docs/espnet2.md): `python -m local_models.bin.salad_duration_train`.

Data: `lingp` (N, D) raw phone-level linguistic vectors (kaldi_ark; the model z-normalises the real-valued dims
with the train statistics it holds) and `dur` (N,) frames per phone (text_int), one utterance per sample, batches
of utterances sorted by length. The network is unidirectional, so the padding after an utterance's last phone
never reaches its outputs; the loss skips it.

Loss: mean squared error of the normalised log-duration z = (log(1 + frames) - mean) / std over real phones.
Reported stats: loss and `rmse` (frames, the predicted durations rounded as at synthesis, >= 1) - validation
picks the checkpoint on loss.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import numpy as np
import torch

from local_models.common.compat import lean_espnet_imports

lean_espnet_imports()  # before espnet2: g2p_en without nltk downloads, rarely used modules deferred (common/compat)

from espnet2.torch_utils.device_funcs import force_gatherable
from espnet2.train.abs_espnet_model import AbsESPnetModel
from espnet2.train.class_choices import ClassChoices

from local_models.common.espnet_task import LocalTask

from .duration import DurationLSTM, frames_of, load_duration_stats
from .model import lengths_to_mask


class DurationModel(AbsESPnetModel):
    """ESPnet wrapper of duration.DurationLSTM with its normalisation (buffers saved with the weights)."""

    def __init__(self, idim: int, stats_file: Optional[str] = None, emb: int = 128, hidden: int = 256,
                 layers: int = 1, dropout: float = 0.5):
        super().__init__()
        self.net = DurationLSTM(idim, emb, hidden, layers, dropout)
        in_mean, in_std, dur_mean, dur_std = torch.zeros(idim), torch.ones(idim), 0.0, 1.0
        if stats_file:
            m, s, dur_mean, dur_std = load_duration_stats(stats_file)
            if len(m) != idim:
                raise ValueError(f"{stats_file}: statistics of {len(m)} dims, model input is {idim}")
            in_mean, in_std = torch.tensor(m), torch.tensor(s)
        for name, value in (("in_mean", in_mean), ("in_std", in_std), ("dur_mean", torch.tensor(dur_mean)),
                            ("dur_std", torch.tensor(dur_std))):
            self.register_buffer(name, torch.as_tensor(value).float())

    def log1p_frames(self, lingp: torch.Tensor) -> torch.Tensor:
        """(B, N) predicted log(1 + frames) of raw phone vectors (B, N, D)."""
        z = self.net((lingp - self.in_mean) / self.in_std)
        return z * self.dur_std + self.dur_mean

    @torch.no_grad()
    def predict(self, lingp: np.ndarray, speed: float = 1.0) -> np.ndarray:
        """Frames per phone (N,) int64, >= 1, of one utterance's raw phone vectors (N, D), divided by `speed`;
        computed on the model's device."""
        x = torch.tensor(np.asarray(lingp, dtype=np.float32), device=self.in_mean.device)[None]
        return frames_of(self.log1p_frames(x)[0], speed).cpu().numpy()

    def forward(self, lingp: torch.Tensor, lingp_lengths: torch.Tensor, dur: torch.Tensor,
                dur_lengths: torch.Tensor, **kwargs):
        N = min(lingp.shape[1], dur.shape[1])
        lengths = torch.clamp(torch.minimum(lingp_lengths, dur_lengths), max=N)
        lingp, dur = lingp[:, :N], dur[:, :N].float()
        z = self.net((lingp - self.in_mean) / self.in_std)
        target = (torch.log1p(dur) - self.dur_mean) / self.dur_std
        m = lengths_to_mask(lengths, N).to(z.dtype)
        phones = m.sum().clamp(min=1)
        loss = (((z - target) ** 2) * m).sum() / phones
        with torch.no_grad():
            pred = frames_of(z * self.dur_std + self.dur_mean).float()
            rmse = torch.sqrt((((pred - dur) ** 2) * m).sum() / phones)
        return force_gatherable((loss, dict(loss=loss.detach(), rmse=rmse), phones.detach()), lingp.device)

    def collect_feats(self, lingp, lingp_lengths, **kwargs) -> Dict[str, torch.Tensor]:
        return {}


duration_choices = ClassChoices("model", classes=dict(lstm=DurationModel), type_check=AbsESPnetModel,
                                default="lstm")


class DurationTask(LocalTask):
    class_choices_list = [duration_choices]
    float_pad_value, int_pad_value = 0.0, 0
    train_hint = "train the model first: run.sh stage 4"

    @classmethod
    def required_data_names(cls, train: bool = True, inference: bool = False) -> Tuple[str, ...]:
        return ("lingp", "dur")

    @classmethod
    def build_trained(cls, config_file, model_file, device="cpu") -> AbsESPnetModel:
        from .task import build_from_files

        return build_from_files(duration_choices, config_file, model_file, device)


def load_duration_model(config_file, model_file, device="cpu") -> DurationModel:
    """The trained duration model of a config.yaml + checkpoint, eval mode, on `device`."""
    return DurationTask.load_trained(None, model_file, device, config_file)


__all__ = ["DurationModel", "DurationTask", "load_duration_model"]
