"""run_demo discovers recipes and tabulates exp/results.json; update_results merges atomically."""
import json

from local_models.bin import run_demo
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


def test_demo_with_no_recipes(tmp_path, capsys):
    (tmp_path / "TEMPLATE" / "toy1").mkdir(parents=True)
    (tmp_path / "TEMPLATE" / "toy1" / "run.sh").write_text("exit 1\n")
    assert run_demo.main(["--egs", str(tmp_path), "--summary", str(tmp_path / "s.md")]) == 0
    assert "no recipes" in capsys.readouterr().out


def test_demo_runs_recipes_and_reports_failures(tmp_path, monkeypatch):
    monkeypatch.setattr(run_demo, "ROOT", tmp_path)
    egs = tmp_path / "egs"
    good, bad = egs / "a" / "x1", egs / "b" / "y1"
    for d in (good, bad):
        d.mkdir(parents=True)
    (good / "run.sh").write_text('mkdir -p exp; echo \'{"systems": {"sys1": {"dev": {"f1": 0.5}, "eval": {"dcf": 0.1, "dcf_no_collar": 0.2}, "rtf": 0.25}}}\' > exp/results.json\n')
    (bad / "run.sh").write_text("exit 3\n")
    summary = tmp_path / "s.md"
    assert run_demo.main(["--egs", str(egs), "--summary", str(summary)]) == 1
    text = summary.read_text()
    assert "| a/x1 | ok |" in text and "| sys1 | eval.dcf=0.1, rtf=0.25 |" in text
    assert "| b/y1 | FAILED (exit 3) |" in text
