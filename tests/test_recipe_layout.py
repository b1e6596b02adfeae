"""The recipe layout of docs/architecture.md: a corpus's run.sh holds settings only (at most 60 lines) and sources its
paper's shared stages (local_models/<package>/stages.sh); local/ holds corpus preparation, no stage library; every
recipe has a README; `./run.sh --help` lists the shared stages' options next to the corpus's own."""
import os
import re
import subprocess
from pathlib import Path

import pytest

from recipe_runner import ROOT, run_recipe

RECIPES = {  # recipe -> the package whose stages it runs
    "egs/debian_speech/sad1": "sad",
    "egs/fearless_steps/sad1": "sad",
    "egs/indic/asr1": "multisoftmax",
    "egs/kss/tts1": "jdit",
    "egs/tcstar/tts1": "salad",
    "egs/zerospeech2019/unit1": "vqvae",
}
STAGES_LINE = re.compile(r'^\. "\$\{MAIN_ROOT\}/local_models/(\w+)/stages\.sh"', re.M)


def test_every_recipe_is_listed():
    found = {str(p.parent.relative_to(ROOT)) for p in ROOT.glob("egs/*/*/run.sh")} - {"egs/TEMPLATE/toy1"}
    assert found == set(RECIPES)


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_run_sh_is_settings_that_source_the_shared_stages(recipe):
    text = (ROOT / recipe / "run.sh").read_text()
    assert len(text.splitlines()) <= 60, f"{recipe}/run.sh: {len(text.splitlines())} lines"
    assert STAGES_LINE.findall(text) == [RECIPES[recipe]]
    assert (ROOT / "local_models" / RECIPES[recipe] / "stages.sh").is_file()
    assert not re.search(r"^\s*if stage_enabled", text, re.M), "stage logic belongs in stages.sh"
    assert not re.search(r"^\s*\w+\s*\(\)\s*\{", text, re.M), "shell functions belong in stages.sh"
    assert not (ROOT / recipe / "local" / "lib.sh").exists()
    assert (ROOT / recipe / "README.md").is_file()


@pytest.mark.parametrize("package", sorted(set(RECIPES.values())))
def test_stage_script_registers_its_options_and_parses(package):
    script = ROOT / "local_models" / package / "stages.sh"
    text = script.read_text()
    assert 'option_files+=("${BASH_SOURCE[0]}")' in text
    assert re.search(r"^run_stages\(\)", text, re.M)
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0


def test_help_shows_corpus_and_stage_options():
    """--help prints run.sh's header, the stage script's header, and the options of both files once each."""
    out = run_recipe(ROOT / "egs/fearless_steps/sad1", "--help").stdout
    stage_header = (ROOT / "local_models/sad/stages.sh").read_text().splitlines()[1].lstrip("# ")
    assert stage_header in out, "the stage script's header is missing from --help"
    options = re.findall(r"^  --([\w-]+)", out, re.M)
    assert len(options) == len(set(options)), "an option listed twice"
    for opt in ("stage", "stop-stage", "train-min", "systems", "ngpu", "inference-model"):
        assert opt in options, opt


def test_stage_default_systems_are_the_papers_names():
    """stages.sh defaults are literals (no Python run when a recipe sources them, --help included), and they are
    exactly the names of the paper's systems.py, in its order."""
    import re

    from local_models.jdit import systems as jdit
    from local_models.multisoftmax import systems as multisoftmax
    from local_models.sad import systems as sad
    from local_models.salad import systems as salad

    want = {"jdit": jdit.SYSTEMS, "multisoftmax": tuple(multisoftmax.SYSTEMS), "sad": sad.DETECTORS,
            "salad": salad.SYSTEMS}
    for package, names in want.items():
        text = (ROOT / "local_models" / package / "stages.sh").read_text()
        found = re.findall(r'^systems="([^"]*)"', text, re.M)
        assert found == [" ".join(names)], (package, found)


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_path_sh_finds_the_repository_through_a_work_dir_link(recipe, tmp_path):
    """A work dir that links the recipe's path.sh (exp/real, exp/choose/<variant>) gets the repository as MAIN_ROOT
    without setting it, whatever its depth."""
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    (work / "path.sh").symlink_to(ROOT / recipe / "path.sh")
    env = {k: v for k, v in os.environ.items() if k != "MAIN_ROOT"}
    out = subprocess.run(["bash", "-c", ". ./path.sh && echo \"$MAIN_ROOT\""], cwd=work, capture_output=True,
                         text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()).resolve() == ROOT.resolve()
