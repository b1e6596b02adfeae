"""utils/parse_options.sh: Kaldi-style option parsing sourced by bash recipes."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UTILS = ROOT / "utils"

RECIPE = """#!/usr/bin/env bash
# Toy recipe: one line describing it.
# Stages: 1 data  2 features  3 train
set -euo pipefail
stage=1
stop_stage=100
nj=4
train_config=conf/train.yaml
use_gpu=false
empty_opt=
. parse_options.sh   # (utils/ is on PATH)
not_an_option=1
echo "stage=${stage}"
echo "stop_stage=${stop_stage}"
echo "nj=${nj}"
echo "train_config=${train_config}"
echo "use_gpu=${use_gpu}"
echo "empty_opt=${empty_opt}"
echo "nargs=$#"
for a in "$@"; do echo "arg=[${a}]"; done
"""


@pytest.fixture
def recipe(tmp_path):
    path = tmp_path / "run.sh"
    path.write_text(RECIPE)
    return path


def run(script, *args, cwd=None):
    env = dict(os.environ, PATH=f"{UTILS}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(
        ["bash", str(script), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=30
    )


def values(out):
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line and not line.startswith("arg="))


def args_of(out):
    return [line[5:-1] for line in out.splitlines() if line.startswith("arg=[")]


def test_defaults_without_options(recipe):
    r = run(recipe)
    assert r.returncode == 0, r.stderr
    v = values(r.stdout)
    assert v["stage"] == "1" and v["stop_stage"] == "100" and v["nj"] == "4" and v["use_gpu"] == "false"
    assert v["nargs"] == "0"


def test_sets_variables(recipe):
    r = run(recipe, "--stage", "3", "--stop-stage", "5", "--nj", "4")
    assert r.returncode == 0, r.stderr
    v = values(r.stdout)
    assert (v["stage"], v["stop_stage"], v["nj"]) == ("3", "5", "4")


def test_equals_form_and_underscore_name(recipe):
    r = run(recipe, "--train-config=conf/x=y.yaml", "--stop_stage", "7", "--empty-opt=", "--nj=2")
    assert r.returncode == 0, r.stderr
    v = values(r.stdout)
    assert v["train_config"] == "conf/x=y.yaml"
    assert v["stop_stage"] == "7" and v["nj"] == "2" and v["empty_opt"] == ""


def test_value_with_spaces_and_dashes(recipe):
    r = run(recipe, "--train-config", "--lr 0.1 --epochs 'two'")
    assert r.returncode == 0, r.stderr
    assert values(r.stdout)["train_config"] == "--lr 0.1 --epochs 'two'"


def test_unknown_option_is_an_error(recipe):
    r = run(recipe, "--stage", "2", "--foo-bar", "3")
    assert r.returncode == 1
    assert "--foo-bar" in r.stderr and "--help" in r.stderr
    assert "stage=" not in r.stdout


def test_variable_defined_after_source_is_not_an_option(recipe):
    r = run(recipe, "--not-an-option", "3")
    assert r.returncode == 1 and "--not-an-option" in r.stderr


def test_missing_value_is_an_error(recipe):
    r = run(recipe, "--nj")
    assert r.returncode == 1
    assert "--nj" in r.stderr and "value" in r.stderr


def test_boolean_values(recipe):
    ok = run(recipe, "--use-gpu", "true")
    assert ok.returncode == 0, ok.stderr
    assert values(ok.stdout)["use_gpu"] == "true"
    bad = run(recipe, "--use-gpu", "yes")
    assert bad.returncode == 1
    assert "--use-gpu" in bad.stderr and "true or false" in bad.stderr


def test_positional_args_preserved(recipe):
    r = run(recipe, "--nj", "8", "data/train", "a b", "--stage", "9")
    assert r.returncode == 0, r.stderr
    v = values(r.stdout)
    assert v["nj"] == "8" and v["stage"] == "1"  # parsing stopped at data/train
    assert args_of(r.stdout) == ["data/train", "a b", "--stage", "9"]


def test_double_dash_ends_options(recipe):
    r = run(recipe, "--stage", "2", "--", "--nj", "9")
    assert r.returncode == 0, r.stderr
    v = values(r.stdout)
    assert v["stage"] == "2" and v["nj"] == "4"
    assert args_of(r.stdout) == ["--nj", "9"]


def test_config_file(recipe, tmp_path):
    conf = tmp_path / "opts.conf"
    conf.write_text("# comment\nnj=16\nstage=2\nuse_gpu=true\n")
    r = run(recipe, "--stage", "5", "--config", str(conf), "pos")
    assert r.returncode == 0, r.stderr
    v = values(r.stdout)
    # the config is read first; command-line options win whatever their position
    assert v["nj"] == "16" and v["stage"] == "5" and v["use_gpu"] == "true"
    assert args_of(r.stdout) == ["pos"]
    r2 = run(recipe, f"--config={conf}")
    assert r2.returncode == 0 and values(r2.stdout)["stage"] == "2"


def test_missing_config_is_an_error(recipe, tmp_path):
    r = run(recipe, "--config", str(tmp_path / "nope.conf"))
    assert r.returncode == 1 and "nope.conf" in r.stderr


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help(recipe, flag):
    r = run(recipe, "--nj", "2", flag)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "Toy recipe: one line describing it." in out
    assert "Stages: 1 data  2 features  3 train" in out
    assert "Options:" in out
    assert "set -euo" not in out
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip().startswith("--")}
    for opt, default in [("--stage", "1"), ("--stop-stage", "100"), ("--train-config", "conf/train.yaml"),
                         ("--use-gpu", "false")]:
        assert opt in lines, out
        assert lines[opt].rstrip().endswith(default), lines[opt]
    assert "--not-an-option" not in lines
    assert "stage=" not in out.replace("--stage", "")  # the recipe body did not run


def test_strict_mode_without_args_and_no_leaked_helpers(tmp_path):
    script = tmp_path / "strict.sh"
    script.write_text(
        "#!/usr/bin/env bash\nset -euo pipefail\nx=1\nflag=false\n. parse_options.sh\n"
        'echo "x=${x} flag=${flag} n=$#"\n'
        'if declare -p | grep -q " __po_"; then echo LEAK; fi\n'
        'if declare -F | grep -q __po_; then echo LEAKF; fi\n'
    )
    r = run(script)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "x=1 flag=false n=0"
    r = run(script, "--flag", "true", "--x", "2", "rest")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "x=2 flag=true n=1"


def test_help_of_a_recipe_run_from_elsewhere(tmp_path):
    """A recipe cds into its own dir before parsing: --help still finds its header from a relative path."""
    d = tmp_path / "egs" / "toy"
    d.mkdir(parents=True)
    (d / "run.sh").write_text(RECIPE.replace("set -euo pipefail\n", 'set -euo pipefail\ncd "$(dirname "$0")"\n'))
    env = dict(os.environ, PATH=f"{UTILS}:{os.environ['PATH']}")
    r = subprocess.run(["bash", "egs/toy/run.sh", "--help"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "Toy recipe: one line describing it." in r.stdout and "--train-config" in r.stdout
