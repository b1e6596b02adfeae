"""What every local ESPnet2 task shares (docs/espnet2.md): one optimizer, ESPnet's Trainer, the model
ClassChoices as command-line options, no preprocessing, no optional data."""
from __future__ import annotations

import argparse
from typing import Tuple

from espnet2.tasks.abs_task import AbsTask
from espnet2.train.trainer import Trainer


class LocalTask(AbsTask):
    """Subclasses set `class_choices_list` and implement build_collate_fn, required_data_names and build_model;
    task-specific options go in `add_options`."""

    num_optimizers: int = 1
    trainer = Trainer

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
    def build_preprocess_fn(cls, args: argparse.Namespace, train: bool):
        return None

    @classmethod
    def optional_data_names(cls, train: bool = True, inference: bool = False) -> Tuple[str, ...]:
        return ()
