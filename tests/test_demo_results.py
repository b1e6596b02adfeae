"""run_demo discovers recipes and tabulates exp/results.json; update_results merges atomically."""
import json

from local_models.bin import run_demo
from local_models.common import demo as demo_lib
from local_models.common.results import update_results


def test_update_results_merges_systems(tmp_path):
    path = tmp_path / "exp" / "results.json"
    update_results(path, "x/y", "mini", {"seg_rnn": {"dev": {"dcf": 0.1}}})
    data = update_results(path, "x/y", "mini", {"seg_rnn": {"eval": {"dcf": 0.2}}, "silero_vad": {"rtf": 0.01}})
    assert data["systems"] == {"seg_rnn": {"dev": {"dcf": 0.1}, "eval": {"dcf": 0.2}}, "silero_vad": {"rtf": 0.01}}
    assert json.loads(path.read_text()) == data and data["hardware"]
    # another corpus: old numbers are not comparable and are dropped
    data = update_results(path, "x/y", "real", {"a": {"f1": 1.0}})
    assert data["systems"] == {"a": {"f1": 1.0}}


def test_update_results_headline_sees_merged_systems(tmp_path):
    """The headline is computed from the merged systems, earlier runs' included, in the same write."""
    path = tmp_path / "results.json"
    update_results(path, "x/y", "mini", {"old": {"dcf": 0.3}})

    def claims(systems):
        best = min(systems, key=lambda s: systems[s]["dcf"])
        return [f"best {best} of {len(systems)}"]

    data = update_results(path, "x/y", "mini", {"new": {"dcf": 0.1}}, headline=claims)
    assert data["headline"] == ["best new of 2"] == json.loads(path.read_text())["headline"]
    data = update_results(path, "x/y", "mini", {"new": {"dcf": 0.5}}, headline=claims)
    assert data["headline"] == ["best old of 2"]
    assert update_results(path, "x/y", "mini", {})["headline"] == ["best old of 2"]  # no headline fn: kept

def test_demo_with_no_recipes(tmp_path, capsys):
    (tmp_path / "TEMPLATE" / "toy1").mkdir(parents=True)
    (tmp_path / "TEMPLATE" / "toy1" / "run.sh").write_text("exit 1\n")
    assert run_demo.main(["--egs", str(tmp_path), "--summary", str(tmp_path / "s.md")]) == 0
    assert "no recipes" in capsys.readouterr().out


def fake_egs(tmp_path):
    egs = tmp_path / "egs"
    good, bad, stale = egs / "a" / "x1", egs / "b" / "y1", egs / "c" / "z1"
    for d in (good, bad, stale):
        (d / "local").mkdir(parents=True)
    (good / "run.sh").write_text('mkdir -p exp; echo \'{"systems": {"sys1": {"dev": {"f1": 0.5}, '
                                 '"eval": {"dcf": 0.1, "dcf_no_collar": 0.2}, "rtf": 0.25}}}\' > exp/results.json\n')
    (good / "local" / "demo.sh").write_text('mkdir -p exp/demo; printf "### a/x1\\n\\nsegments: 3\\n" > exp/demo/summary.md\n')
    (bad / "run.sh").write_text("exit 3\n")
    (bad / "local" / "demo.sh").write_text("echo broken model; exit 3\n")
    # a failed demo must not show the summary an earlier run left behind
    (stale / "run.sh").write_text("exit 0\n")
    (stale / "local" / "demo.sh").write_text("exit 4\n")
    (stale / "exp" / "demo").mkdir(parents=True)
    (stale / "exp" / "demo" / "summary.md").write_text("### c/z1\n\nOLD RESULT\n")
    return egs


def test_demo_joins_sections_and_reports_failures(tmp_path):
    egs = fake_egs(tmp_path)
    summary = tmp_path / "s.md"
    assert run_demo.main(["--egs", str(egs), "--summary", str(summary), "--jobs", "2"]) == 1
    text = summary.read_text()
    assert "| a/x1 | ok |" in text and "### a/x1\n\nsegments: 3" in text
    assert "| b/y1 | FAILED (exit 3) |" in text and "broken model" in text
    assert "| c/z1 | FAILED (exit 4) |" in text and "OLD RESULT" not in text
    assert run_demo.main(["--egs", str(egs), "--summary", str(summary), "--only", "a/x1"]) == 0
    assert "b/y1" not in summary.read_text()
    # a recipe without a demo (its corpus must be downloaded first) is listed, not counted as a failure
    (egs / "d" / "w1").mkdir(parents=True)
    (egs / "d" / "w1" / "run.sh").write_text("exit 0\n")
    assert run_demo.main(["--egs", str(egs), "--summary", str(summary), "--only", "a/x1", "d/w1"]) == 0
    assert "| d/w1 | no demo (no local/demo.sh) |" in summary.read_text()


def test_reproduce_tabulates_results(tmp_path):
    egs = fake_egs(tmp_path)
    summary = tmp_path / "r.md"
    assert run_demo.main(["--mode", "reproduce", "--egs", str(egs), "--summary", str(summary)]) == 1
    text = summary.read_text()
    assert "| a/x1 | ok |" in text and "| sys1 | eval.dcf=0.1, rtf=0.25 |" in text
    assert "| b/y1 | FAILED (exit 3) |" in text


def test_unknown_recipe_is_an_error(tmp_path):
    egs = fake_egs(tmp_path)
    import pytest
    with pytest.raises(ValueError, match="no recipe q/q1"):
        demo_lib.find_recipes(egs, ["q/q1"])


def test_environment_is_recorded_and_kept_on_an_identical_rescoring(tmp_path, monkeypatch):
    from local_models.common import results

    path = tmp_path / "exp" / "results.json"
    first = update_results(path, "x/y", "mini", {"a": {"f1": 1.0}})["environment"]
    assert first["commit"] == results.git_commit() and first["python"] and first["torch"] and first["cores"] >= 1
    monkeypatch.setattr(results, "environment", lambda path=None: {**first, "date": "2099-01-01 00:00 UTC"})
    again = update_results(path, "x/y", "mini", {"a": {"f1": 1.0}})["environment"]
    assert again == first  # same code and machine: the rescoring leaves results.json as it was
    monkeypatch.setattr(results, "environment", lambda path=None: {**first, "date": "2099-01-01 00:00 UTC",
                                                                   "torch": "9.9"})
    changed = update_results(path, "x/y", "mini", {"a": {"f1": 1.0}})["environment"]
    assert changed["date"] == "2099-01-01 00:00 UTC" and changed["torch"] == "9.9"
    # same environment, other numbers: the date is the run that measured them
    monkeypatch.setattr(results, "environment", lambda path=None: {**changed, "date": "2100-01-01 00:00 UTC"})
    assert update_results(path, "x/y", "mini", {"a": {"f1": 0.5}})["environment"]["date"] == "2100-01-01 00:00 UTC"
    block = "\n".join(results.environment_lines(changed))
    assert "## Environment" in block and "torch `9.9`" in block and first["commit"] in block


def test_git_commit_names_the_code_not_the_working_dir(tmp_path):
    from local_models.common.results import CODE_ROOT, git_commit

    # a recipe copied outside any repository still names the collection's commit
    assert git_commit(tmp_path) == git_commit(CODE_ROOT) != "unknown"


def test_git_commit_without_a_checkout_is_the_senders_record(tmp_path, monkeypatch):
    from local_models.common import results

    # a copy of the tree on a lent GPU machine has no .git: the commit its sender recorded (gpu_train.sh), else unknown
    monkeypatch.setattr(results, "CODE_ROOT", tmp_path)
    monkeypatch.delenv("SPEECH_RECIPES_COMMIT", raising=False)
    assert results.git_commit() == "unknown"
    monkeypatch.setenv("SPEECH_RECIPES_COMMIT", "abc1234+dirty")
    assert results.git_commit() == "abc1234+dirty"
