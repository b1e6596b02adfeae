"""The ESPnet2 model of the multilingual RNN-T systems (task.py registers it as `model: transducer`): global feature
normalisation around MultilingualTransducer and the loss report. Kept apart from task.py, whose ESPnet task imports
cost ~20 s (the trainer, the text preprocessors: g2p_en, inflect, nltk), so that `load_from_files` reads a trained
or packed model with torch alone (`Speech2Text`, speech-to-text)."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
import torch
import yaml
from espnet2.torch_utils.device_funcs import force_gatherable
from espnet2.train.abs_espnet_model import AbsESPnetModel

from .model import MultilingualTransducer


class TransducerModel(AbsESPnetModel):
    """ESPnet wrapper of MultilingualTransducer: global feature normalisation and the loss report."""

    def __init__(self, langs, token_lists: Dict[str, List[str]], stats_file: Optional[str] = None,
                 idim: int = 80, **conf):
        super().__init__()
        self.net = MultilingualTransducer(langs, token_lists, idim=idim, **conf)
        mean, std = torch.zeros(idim), torch.ones(idim)
        if stats_file:
            stats = np.load(stats_file)
            if stats["mean"].shape != (idim,):
                raise ValueError(f"{stats_file}: statistics of {stats['mean'].shape} dims, model input is {idim}")
            mean, std = torch.tensor(stats["mean"]), torch.tensor(np.maximum(stats["std"], 1e-5))
        self.register_buffer("feat_mean", mean.float())
        self.register_buffer("feat_std", std.float())

    def normalise(self, feats: torch.Tensor) -> torch.Tensor:
        return (feats - self.feat_mean) / self.feat_std

    def forward(self, feats: torch.Tensor, feats_lengths: torch.Tensor, text: torch.Tensor,
                text_lengths: torch.Tensor, lid: torch.Tensor, **kwargs):
        out = self.net(self.normalise(feats), feats_lengths, text, text_lengths, lid.view(-1))
        stats = {k: v.detach() for k, v in out.items()}
        return force_gatherable((out["loss"], stats, torch.tensor(float(len(feats)))), feats.device)

    def collect_feats(self, feats, feats_lengths, **kwargs) -> Dict[str, torch.Tensor]:
        return {}


def load_from_files(config, checkpoint, device="cpu") -> TransducerModel:
    """The model of an ESPnet config.yaml (its model_conf) + checkpoint, e.g. a packed model's, in eval mode on
    DEVICE: what TransducerTask.build_model_from_file builds, without the task's imports, and strict (a checkpoint
    of another configuration is an error, not a half-loaded model)."""
    try:
        conf = yaml.safe_load(Path(config).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ValueError(f"{config}: cannot read the model configuration ({e})") from None
    if conf.get("model", "transducer") != "transducer" or "token_lists" not in (conf.get("model_conf") or {}):
        raise ValueError(f"{config}: not a multilingual RNN-T configuration (model: transducer, model_conf with "
                         "token_lists)")
    model = TransducerModel(**conf["model_conf"]).to(device)
    try:
        model.load_state_dict(torch.load(checkpoint, map_location=device, weights_only=True))
    except (RuntimeError, OSError, EOFError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ValueError(f"{checkpoint}: not a checkpoint of the model in {config} ({first})") from None
    return model.eval()


__all__ = ["TransducerModel", "load_from_files"]
