"""The template recipe end to end: stages, --help, missing inputs, and idempotent re-runs."""
import hashlib
import shutil
from pathlib import Path

import pytest
from recipe_runner import run_recipe as run

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "egs" / "TEMPLATE" / "toy1"

pytestmark = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").exists(),
                                reason="needs tools/venv (make install)")


@pytest.fixture
def recipe(tmp_path):
    """A copy of the template outside the checkout (MAIN_ROOT points back at it)."""
    dst = tmp_path / "toy1"
    shutil.copytree(TEMPLATE, dst, ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads"))
    return dst


def snapshot(recipe):
    """Hash of every output file except logs (which carry timestamps)."""
    out = {}
    for sub in ("data", "dump", "exp"):
        for p in sorted((recipe / sub).rglob("*")):
            if p.is_file() and "log" not in p.relative_to(recipe).parts and "q" not in p.parts:
                out[str(p.relative_to(recipe))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def test_help_lists_stages_and_options(recipe):
    proc = run(recipe, "--help")
    assert "Stages: 1 data" in proc.stdout and "3 score" in proc.stdout
    assert "--stop-stage" in proc.stdout.replace("stop_stage", "stop-stage") and "--nj" in proc.stdout


def test_unknown_option_is_an_error(recipe):
    proc = run(recipe, "--no-such-option", "1", check=False)
    assert proc.returncode != 0 and "no-such-option" in proc.stderr


def test_stage_names_missing_input(recipe):
    proc = run(recipe, "--stage", "3", check=False)
    assert proc.returncode != 0 and "run stage 2 (features) first" in proc.stderr


def test_run_twice_gives_identical_outputs(recipe):
    run(recipe)
    first = snapshot(recipe)
    assert "data/train/feats.scp" in first and "exp/results.json" in first and "data/test/phones.ctm" in first
    assert (recipe / "exp" / "corpus_stats" / "run.sh").read_text().count("corpus_stats.py") == 1
    assert "| test |" in (recipe / "RESULTS.md").read_text()
    run(recipe)
    assert snapshot(recipe) == first
    # no duplicated lines after the re-run
    lines = (recipe / "data" / "train" / "feats.scp").read_text().splitlines()
    assert len(lines) == len(set(lines)) == len((recipe / "data" / "train" / "utt2spk").read_text().splitlines())
    # train and test speakers are disjoint
    train_spk = {l.split()[0] for l in (recipe / "data/train/spk2utt").read_text().splitlines()}
    test_spk = {l.split()[0] for l in (recipe / "data/test/spk2utt").read_text().splitlines()}
    assert train_spk and test_spk and not train_spk & test_spk
