"""Run a recipe's run.sh as a user would (a shared helper of the recipe tests; not a test module)."""
import importlib.util
import os
import subprocess
import sys
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


def load_nonspeech_set_script():
    """egs/fearless_steps/sad1/local/make_nonspeech_set.py as a module (it is a recipe script, not a package)."""
    spec = importlib.util.spec_from_file_location(
        "make_nonspeech_set", ROOT / "egs" / "fearless_steps" / "sad1" / "local" / "make_nonspeech_set.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks the module up
    spec.loader.exec_module(module)
    return module


def nonspeech_sources_missing(script=None):
    """Why the SAD recipe's built-in non-speech set cannot be built here (a Debian file missing), or None."""
    ns = script or load_nonspeech_set_script()
    try:
        for make in ("train", "eval"):
            ns.check_requirements(make)
    except ns.MissingDebianFile as e:
        return str(e)
    return None


def headline_of_run(recipe) -> list:
    """The run's headline: results.json's claims, checked to be what RESULTS.md's headline section (the source of
    README's cell, `make readme`) says, each with a measured number."""
    import json
    import re

    from local_models.common.readme import headline

    recipe = Path(recipe)
    claims = json.loads((recipe / "exp" / "results.json").read_text(encoding="utf-8"))["headline"]
    got = headline(recipe / "RESULTS.md")
    assert got is not None and got[1] == claims and claims, (got, claims)
    assert all(re.search(r"\d", c) for c in claims), claims
    return claims
