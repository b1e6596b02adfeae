"""`<command> --help` of the five inference commands loads nothing heavy (issue #52: a user asking for help does not
wait for numpy, torch or yaml). Checked on what the interpreter actually imports (`python -X importtime` lists every
module it loads, on stderr), never on a time: how long a start takes is benchmarks/startup.py's business."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {  # console script -> module
    "speech-segments": "local_models.bin.speech_segments",
    "speech-to-text": "local_models.bin.speech_to_text",
    "speech-to-units": "local_models.bin.speech_to_units",
    "text-to-speech": "local_models.bin.text_to_speech",
    "units-to-speech": "local_models.bin.units_to_speech",
}
# top-level packages --help must not import (each costs 0.1-5 s to load)
HEAVY = {"numpy", "torch", "torchaudio", "soundfile", "yaml", "scipy", "espnet", "espnet2", "kaldiio", "librosa"}
IMPORT_LINE = re.compile(r"^import time:\s*[\d]+ \|\s*[\d]+ \| *(\S+)$")


def imported_by(argv) -> tuple:
    """(stdout, top-level packages imported) of `python -X importtime ARGV` run from the repository root."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-X", "importtime", *argv], capture_output=True, text=True, cwd=ROOT,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    modules = {m.group(1).split(".")[0] for m in map(IMPORT_LINE.match, out.stderr.splitlines()) if m}
    assert "argparse" in modules, "no import lines read: did -X importtime's output format change?"
    return out.stdout, modules


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_imports_nothing_heavy(command):
    stdout, modules = imported_by(["-m", COMMANDS[command], "--help"])
    assert stdout.startswith(f"usage: {command} ")
    assert not modules & HEAVY, f"{command} --help imports {sorted(modules & HEAVY)}"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_console_script_help_imports_nothing_heavy(command):
    """The installed wrapper (tools/venv/bin/<command>), which finds its entry point through importlib.metadata."""
    script = Path(sys.executable).parent / command
    if not script.is_file():
        pytest.skip(f"{command} is not installed beside {sys.executable}")
    stdout, modules = imported_by([str(script), "--help"])
    assert stdout.startswith(f"usage: {command} ")
    assert not modules & HEAVY, f"{script} --help imports {sorted(modules & HEAVY)}"


def test_imported_by_sees_a_heavy_import():
    """The check itself: a module that does import numpy is caught."""
    _, modules = imported_by(["-c", "import argparse, numpy"])
    assert "numpy" in modules & HEAVY


def test_inlined_fa_bound_is_the_sad_package_value():
    """speech-segments' help names the FA-bounded operating point's bound without importing local_models.sad."""
    from local_models.bin import speech_segments
    from local_models.sad.decisions import FA_BOUND

    assert speech_segments.FA_BOUND == FA_BOUND
    help_text = " ".join(speech_segments.get_parser().format_help().split())
    assert f"at most {FA_BOUND * 100:.0f} % of dev's music" in help_text


def test_error_classes_are_one_class_wherever_imported():
    """cli.run_main catches the classes of common/errors.py; the modules that raise them must raise those very
    classes (a copy under the old name would escape as a traceback)."""
    from local_models.common import audio, cli, datadir, errors, pack, synth

    assert audio.AudioError is errors.AudioError and datadir.DataDirError is errors.DataDirError
    assert pack.PackError is errors.PackError and synth.EspeakUnavailable is errors.EspeakUnavailable
    assert {errors.AudioError, errors.DataDirError, errors.PackError, errors.EspeakUnavailable} <= set(cli.USER_ERRORS)
