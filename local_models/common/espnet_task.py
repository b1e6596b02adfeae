"""What every local ESPnet2 task shares (docs/espnet2.md): one optimizer, ESPnet's Trainer, the model
ClassChoices as command-line options, no preprocessing, no optional data, ESPnet's CommonCollateFn with the
task's padding values, the model built from its ClassChoices and `load_trained` of a trained exp dir."""
from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Callable, Collection, Dict, List, Optional, Tuple

import numpy as np
import torch
from typeguard import typechecked

from local_models.common.compat import lean_espnet_imports

lean_espnet_imports()  # before espnet2: g2p_en without nltk downloads, rarely used modules deferred (common/compat)

from espnet2.tasks.abs_task import AbsTask  # noqa: E402
from espnet2.train.abs_espnet_model import AbsESPnetModel  # noqa: E402
from espnet2.train.collate_fn import CommonCollateFn  # noqa: E402
from espnet2.train.trainer import Trainer  # noqa: E402


def nothing_left_to_train(args: argparse.Namespace) -> bool:
    """Whether a --resume run finds its training finished: OUTPUT_DIR/checkpoint.pth has reached --max_epoch, so the
    trainer only reloads it (a recipe rerun resumes every model). An unreadable checkpoint is the trainer's to report."""
    ckpt = Path(args.output_dir) / "checkpoint.pth"
    if not getattr(args, "resume", False) or not ckpt.is_file():
        return False
    try:
        state = torch.load(ckpt, map_location="cpu", weights_only=False)
        return int(state["reporter"]["epoch"]) >= int(args.max_epoch)
    except Exception:  # noqa: BLE001 - any unreadable checkpoint: let ESPnet's resume say what is wrong with it
        return False


def record_run(args: argparse.Namespace) -> None:
    """Record which commit and device train ARGS.output_dir (common/results.record_training), for any ESPnet2 task's
    parsed arguments: not for --collect_stats / --print_config / --dry_run, by rank 0 only, and not for a resumed
    run with nothing left to train (it would name a commit that trained nothing)."""
    if args.output_dir and not (args.collect_stats or args.print_config or args.dry_run) \
            and not nothing_left_to_train(args):
        from local_models.common.results import record_training

        # an external launcher (torchrun, srun) gives the rank by environment before ESPnet reads it
        rank = args.dist_rank if args.dist_rank is not None else int(os.environ.get("RANK", "0") or 0)
        record_training(args.output_dir, ngpu=args.ngpu, dist_rank=rank)


def flush_denormals() -> None:
    """Subnormal floats (|x| < 1.2e-38) take a slow microcode path on x86 CPUs, and a model's backward pass fills
    with them as it trains: the Indic RNN-T of the tiny recipe spent 2.1 s on one batch's backward at epoch 8 and
    0.57 s with them flushed to zero (0.8 / 0.66 s at initialisation), so its epochs grew from 4 to 7 minutes.
    Flushing changes only values below 1.2e-38. It holds for the calling thread (the recipes train with one thread
    per process on the CPU; GPU kernels are not concerned)."""
    torch.set_flush_denormal(True)


class TrainingHooks:
    """What every task of the collection adds to an ESPnet2 task's main and worker, mixed in before the task
    (LocalTask here; JDI-T's task before ESPnet's TTSTask): the training's commit and device recorded, subnormal
    floats flushed in each worker process."""

    @classmethod
    def main(cls, args: Optional[argparse.Namespace] = None, cmd=None):
        """ESPnet's main, after recording which commit and device train OUTPUT_DIR (common/results.record_training:
        RESULTS.md's environment block names them)."""
        if args is None:
            args = cls.get_parser().parse_args(cmd)
        record_run(args)
        return super().main(args=args)

    @classmethod
    def main_worker(cls, args: argparse.Namespace):
        """ESPnet's worker (each DDP process runs one) with subnormal floats flushed (flush_denormals)."""
        flush_denormals()
        return super().main_worker(args)


class LocalTask(TrainingHooks, AbsTask):
    """Subclasses set `class_choices_list` (its first ClassChoices picks the model) and implement
    required_data_names; what differs between tasks is declared as class attributes:
      float_pad_value, int_pad_value  CommonCollateFn's padding of float arrays (features) and int arrays
      not_sequence                    keys that are not sequences (stacked as they are, no `<key>_lengths`)
      default_model_file              load_trained's checkpoint when none is named
      train_hint                      what load_trained's missing-file error tells to do
    Task-specific options go in `add_options`; a model that is more than `Class(**model_conf)` overrides
    build_model; a checkpoint ESPnet's build_model_from_file cannot rebuild as it is overrides build_trained."""

    num_optimizers: int = 1
    trainer = Trainer
    float_pad_value: float = 0.0
    int_pad_value: int = -1
    not_sequence: Tuple[str, ...] = ()
    default_model_file: str = "valid.loss.best.pth"
    train_hint: str = "train the model first"

    @classmethod
    def add_options(cls, group) -> None:
        """Task-specific command-line options (none by default)."""

    @classmethod
    def add_task_arguments(cls, parser: argparse.ArgumentParser):
        group = parser.add_argument_group(description="Task related")
        cls.add_options(group)
        for class_choices in cls.class_choices_list:
            class_choices.add_arguments(group)
        return parser

    @classmethod
    @typechecked
    def build_collate_fn(cls, args: argparse.Namespace, train: bool) -> Callable[
        [Collection[Tuple[str, Dict[str, np.ndarray]]]], Tuple[List[str], Dict[str, torch.Tensor]]
    ]:
        return CommonCollateFn(float_pad_value=cls.float_pad_value, int_pad_value=cls.int_pad_value,
                               not_sequence=cls.not_sequence)

    @classmethod
    def build_preprocess_fn(cls, args: argparse.Namespace, train: bool):
        return None

    @classmethod
    def optional_data_names(cls, train: bool = True, inference: bool = False) -> Tuple[str, ...]:
        return ()

    @classmethod
    @typechecked
    def build_model(cls, args: argparse.Namespace) -> AbsESPnetModel:
        """`--model NAME --model_conf {...}`: the chosen class of the first ClassChoices, built from its conf."""
        choices = cls.class_choices_list[0]
        return choices.get_class(getattr(args, choices.name))(**(getattr(args, f"{choices.name}_conf") or {}))

    @classmethod
    def build_trained(cls, config_file: Path, model_file: Path, device="cpu") -> AbsESPnetModel:
        """The model of a training config + checkpoint, on `device` (ESPnet's build_model_from_file)."""
        model, _ = cls.build_model_from_file(str(config_file), str(model_file), str(device))
        return model

    @classmethod
    def load_trained(cls, model_dir, model_file: Optional[str] = None, device="cpu", config_file=None,
                     kind: Optional[type] = None) -> AbsESPnetModel:
        """The model trained into exp dir `model_dir` (config.yaml + model_file, default `default_model_file`; with
        model_dir None, the explicit config_file and model_file paths of a packed model), in eval mode, on `device`.

        kind: the model class to insist on; the error names the config that holds something else."""
        name = cls.default_model_file if model_file is None else model_file
        conf = Path(config_file) if config_file else Path(model_dir) / "config.yaml"
        ckpt = Path(model_dir) / name if model_dir is not None else Path(name)
        for f in (conf, ckpt):
            if not f.is_file():
                raise FileNotFoundError(f"{f}: missing ({cls.train_hint})")
        model = cls.build_trained(conf, ckpt, device)
        if kind is not None and not isinstance(model, kind):
            raise ValueError(f"{conf}: holds a {type(model).__name__}, not a {kind.__name__}")
        return model.eval()
