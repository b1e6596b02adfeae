"""Run a recipe's run.sh as a user would (a shared helper of the recipe tests; not a test module)."""
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the environment a test must not inherit: an activated venv, and corpus locations that would make a recipe read a
# real corpus instead of building its mini corpus
_UNSET = ("VIRTUAL_ENV", "PYTHONPATH", "KSS", "INDIC", "FEARLESS_STEPS", "TCSTAR", "ZEROSPEECH2019")


def run_recipe(recipe, *args, check=True, extra_env=None):
    """`bash run.sh ARGS` in RECIPE; with check, a failure raises with the output's tail."""
    env = {k: v for k, v in os.environ.items() if k not in _UNSET}
    env.update(MAIN_ROOT=str(ROOT), **(extra_env or {}))
    proc = subprocess.run(["bash", "run.sh", *args], cwd=recipe, env=env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"run.sh {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc
