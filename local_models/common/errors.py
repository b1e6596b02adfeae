"""The exceptions a user's mistake raises (a bad audio file, data-dir line or model archive, a missing espeak-ng),
in a module that imports nothing heavy: the command line (common/cli.py) names them to print one line instead of a
traceback, and must not import numpy, soundfile or yaml for that (`<command> --help` stays fast). Each is still
importable from the module that raises it (audio, datadir, pack, synth)."""
from __future__ import annotations

import os
from typing import Optional, Union


class AudioError(RuntimeError):
    """An audio file or array that cannot be used (local_models.common.audio)."""


class DataDirError(ValueError):
    """A defect in a data-dir file; the message names file, line and reason."""

    def __init__(self, path: Union[str, os.PathLike], line: Optional[int], reason: str):
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")


class PackError(ValueError):
    """A model archive that cannot be used: missing, corrupt, incomplete, or another paper's model."""


class EspeakUnavailable(RuntimeError):
    """libespeak-ng.so.1 could not be loaded or initialised."""
