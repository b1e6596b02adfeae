"""tools/typecheck_switch.py, installed into tools/venv: typeguard's @typechecked is a no-op in every process (as
under python -O) unless SPEECH_RECIPES_TYPECHECK=1, which keeps ESPnet's run-time type checks."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PY = ROOT / "tools" / "venv" / "bin" / "python"
pytestmark = pytest.mark.skipif(not PY.exists(), reason="needs tools/venv (make install)")
CODE = """
from typeguard import typechecked
@typechecked
def digits(x: int) -> int:
    return len(str(x))
try:
    digits("8")
    print("unchecked")
except Exception as e:
    print(type(e).__name__)
"""


def _run(value, tmp_path):
    script = tmp_path / "check.py"  # typeguard instruments from the source file (not from `python -c`)
    script.write_text(CODE)
    env = {k: v for k, v in os.environ.items() if k != "SPEECH_RECIPES_TYPECHECK"}
    if value is not None:
        env["SPEECH_RECIPES_TYPECHECK"] = value
    return subprocess.run([str(PY), str(script)], env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_checks_off_by_default_and_on_when_asked(tmp_path):
    assert _run(None, tmp_path) == "unchecked" and _run("0", tmp_path) == "unchecked"
    assert _run("1", tmp_path) == "TypeCheckError"


def test_installed_copy_is_the_repository_file():
    site = subprocess.run([str(PY), "-c", "import speech_recipes_typecheck as m; print(m.__file__)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert Path(site).read_text() == (ROOT / "tools" / "typecheck_switch.py").read_text()
