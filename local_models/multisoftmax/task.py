"""ESPnet2 task of the multilingual RNN-T systems (docs/espnet2.md): `python -m local_models.bin.multisoftmax_train`.

Data (stage 4 writes them: local_models.bin.multisoftmax_prepare, data.prepare): `feats` (T, 80) log-mels (kaldi_ark), `text`
union-vocabulary unit ids (text_int), `lid` language id in the order of the model's `langs` (text_int).
A `utt2category` file beside feats.scp (the language of each utterance) makes ESPnet's folded batch
sampler build single-language mini-batches; shuffled each epoch, a batch's language is then drawn in
proportion to the language's share of the training data (paper Section 4).

model_conf: `units_dir` (data/lang: <lang>/units.txt and union/units.txt; read once and stored in
config.yaml as `token_lists`, so a trained model needs no data dir), `stats_file` (npz with the training
features' mean and std; stored in the model as buffers), `lid_hours_file` (a JSON {lang: training hours},
stage 4's train_all/hours.json: the LID loss is then balanced over languages, model.balanced_lid_weights,
and the weights are stored in config.yaml as `lid_class_weights`), and MultilingualTransducer's arguments.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Dict, List, Tuple

from typeguard import typechecked

from local_models.common.compat import lean_espnet_imports

lean_espnet_imports()  # before espnet2: g2p_en without nltk downloads, rarely used modules deferred (common/compat)

from espnet2.train.abs_espnet_model import AbsESPnetModel
from espnet2.train.class_choices import ClassChoices

from local_models.common.espnet_task import LocalTask

from .espnet_model import TransducerModel, load_from_files
from .model import UNION, balanced_lid_weights
from .units import read_units


model_choices = ClassChoices(
    "model",
    classes=dict(transducer=TransducerModel),
    type_check=AbsESPnetModel,
    default="transducer",
)


def read_token_lists(units_dir, langs) -> Dict[str, List[str]]:
    """{lang: units, ..., "union": units} from units_dir/<lang>/units.txt (errors name the file)."""
    return {name: read_units(Path(units_dir) / name / "units.txt") for name in list(langs) + [UNION]}


class TransducerTask(LocalTask):
    class_choices_list = [model_choices]
    float_pad_value, int_pad_value, not_sequence = 0.0, -1, ("lid",)
    train_hint = "train the model first: run.sh stage 4"

    @classmethod
    def required_data_names(cls, train: bool = True, inference: bool = False) -> Tuple[str, ...]:
        return ("feats", "text", "lid")

    @classmethod
    @typechecked
    def build_model(cls, args: argparse.Namespace) -> AbsESPnetModel:
        conf = dict(args.model_conf or {})
        units_dir, hours_file = conf.pop("units_dir", None), conf.pop("lid_hours_file", None)
        if units_dir is not None:  # first build: read the unit lists once
            conf["token_lists"] = read_token_lists(units_dir, conf.get("langs", []))
        if hours_file is not None:  # first build: the LID loss weights from the training hours
            try:
                hours = json.loads(Path(hours_file).read_text())
            except (OSError, ValueError) as e:
                raise ValueError(f"lid_hours_file {hours_file}: {e}") from e
            conf["lid_class_weights"] = balanced_lid_weights(hours, conf.get("langs", []))
        if units_dir is not None or hours_file is not None:
            # config.yaml keeps what was read; the statistics live in the checkpoint's buffers: a rebuild
            # from config.yaml needs none of the files
            args.model_conf = {k: v for k, v in conf.items() if k != "stats_file"}
        if "token_lists" not in conf:
            raise ValueError("model_conf needs units_dir (data/lang) or token_lists")
        return model_choices.get_class(args.model)(**conf)


load_trained = TransducerTask.load_trained  # (model_dir, model_file="valid.loss.best.pth", device="cpu")


__all__ = ["TransducerTask", "TransducerModel", "read_token_lists", "load_trained", "load_from_files"]
