"""local_models/salad/systems.py: the one list of egs/tcstar/tts1's names (torch-free), its consumers, its CLI, and
the report's speaker columns under a speaker map."""
import subprocess
import sys
from pathlib import Path

import pytest

from local_models.salad import systems

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs/tcstar/tts1"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "local_models.salad.systems", *args], cwd=ROOT, capture_output=True,
                          text=True)


def test_import_is_torch_free():
    code = ("import sys, local_models.salad.systems; "
            "print(' '.join(m for m in ('torch', 'espnet', 'espnet2', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_consumers_use_the_same_names():
    from local_models.salad import pack, report

    assert set(systems.LABELS) == set(systems.SYSTEMS)
    assert set(systems.PAPER_LATENCY) <= set(systems.SYSTEMS)
    assert all(set(rows) <= set(systems.SYSTEMS) for rows in systems.PAPER.values())
    assert systems.PAPER_SPEAKERS == ("M1", "F1")
    assert report.LABELS is systems.LABELS and pack.LABELS is systems.LABELS
    assert report.PAPER is systems.PAPER and report.PAPER_LATENCY is systems.PAPER_LATENCY
    assert report.DURATION == pack.DURATION_SYSTEM == systems.DURATION
    assert pack.QUESTIONS == systems.QUESTIONS and (RECIPE / systems.QUESTIONS).is_file()
    assert (ROOT / "egs" / systems.RECIPE) == RECIPE
    # the stage default is a literal (no Python run when stages.sh is sourced), checked here against SYSTEMS
    stages = (ROOT / "local_models/salad/stages.sh").read_text()
    assert f'systems="{" ".join(systems.SYSTEMS)}"' in stages
    assert "python -m local_models.salad.systems check" in stages
    for s in (*systems.SYSTEMS, systems.DURATION):
        for suffix in ("", "_tiny", "_smoke"):
            assert (RECIPE / f"conf/tuning/train_{s}{suffix}.yaml").is_file(), (s, suffix)


def test_speaker_map():
    assert systems.parse_speaker_map("72:M1 73:F1") == {"72": "M1", "73": "F1"}
    assert systems.parse_speaker_map("") == {}
    for bad, message in (("72", "not CORPUS_SPEAKER:NAME"), ("72:M_1", "not CORPUS_SPEAKER:NAME"),
                         ("72:M1 72:F1", "'72' is mapped twice"), ("72:M1 73:M1", "mapped to 'M1'")):
        with pytest.raises(ValueError, match=message):
            systems.parse_speaker_map(bad)
    assert systems.unmapped(["M1", "72", "F1"]) == ["72"]


def test_cli():
    assert cli("names").stdout.split() == list(systems.SYSTEMS)
    assert cli("check", "small_rnn big_salad").returncode == 0
    assert cli("label", "big_salad_win").stdout.strip() == systems.LABELS["big_salad_win"]
    assert cli("paper_speakers").stdout.split() == ["M1", "F1"]
    assert cli("unmapped", "M1 72", "75").stdout.split() == ["72", "75"]
    assert cli("speaker_map", "72:M1 73:F1").stdout.split() == ["72=M1", "73=F1"]
    bad = cli("check", "small_rnn", "tiny_salad")
    assert bad.returncode == 1 and "unknown system 'tiny_salad'" in bad.stderr and not bad.stdout.strip()
    bad = cli("speaker_map", "72-M1")
    assert bad.returncode == 1 and "'72-M1' is not CORPUS_SPEAKER:NAME" in bad.stderr
    assert cli("--help").returncode == 0 and "speaker_map" in cli("--help").stdout


def test_report_names_the_corpus_speaker_of_each_column():
    from local_models.salad import report

    scores = {"params_m": 1.0, "mcd": 6.0, "mcd_speech": 5.5, "f0_rmse": 20.0, "vuv_acc": 90.0}
    results = {"M1_small_rnn": scores, "72_small_rnn": scores}
    mapped = "\n".join(report.table2(results, ["M1"], ["small_rnn"], {"73": "F1", "72": "M1"}))
    assert "**M1** = corpus speaker 72 (test set `M1_test`)" in mapped and "| 1.17 M |" not in mapped
    assert "| Small RNN | 1.00 M / 1.17 M | 5.50 | 6.00 | 5.18 |" in mapped  # MCD no silence, with silence, paper
    # a numbered speaker without a map: a sentence saying so, and no empty paper columns
    numbered = "\n".join(report.table2(results, ["72"], ["small_rnn"]))
    assert "Speaker 72 has no column in the paper" in numbered and '--speaker_map \\"72:M1 73:F1\\"' not in numbered
    assert '--speaker_map "72:M1 73:F1"' in numbered
    assert "| Small RNN | 1.00 M | 5.50 | 6.00 | 20.00 | 90.0 |" in numbered and "paper |" not in numbered
    # without a map, the mini corpus's table is unchanged (the committed RESULTS.md's heading)
    assert "**M1** (test set `M1_test`)" in "\n".join(report.table2(results, ["M1"], ["small_rnn"]))
    assert "**M1** (test set `M1_test`)" in (RECIPE / "RESULTS.md").read_text()
