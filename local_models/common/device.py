"""The device of a decoding / inference tool: `--ngpu N` (0 = CPU, the default; >= 1 = "cuda", one GPU used).

Every tool in local_models/bin that runs a trained model takes `--ngpu` (add_ngpu_option) and turns it into a
torch.device with `device_of` before it loads anything, so that a GPU run on a machine without one fails at
once with a clear message instead of deep inside torch. torch is imported only when a device is asked for (the
tools build their parsers without it).
"""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def device_of(ngpu: int) -> "torch.device":
    """--ngpu N -> torch.device: cpu for 0, cuda for >= 1; ValueError when CUDA is asked for and absent."""
    import torch

    if ngpu < 0:
        raise ValueError(f"--ngpu {ngpu}: expected 0 (CPU) or >= 1 (GPU)")
    if ngpu == 0:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise ValueError(f"--ngpu {ngpu} but torch.cuda.is_available() is False")
    return torch.device("cuda")


def add_ngpu_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ngpu", type=int, default=0,
                   help="0: run on the CPU (default); >= 1: on the GPU (cuda; one is used)")


__all__ = ["device_of", "add_ngpu_option"]
