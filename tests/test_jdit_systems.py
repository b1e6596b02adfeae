"""local_models/jdit/systems.py: the one list of egs/kss/tts1's names (torch-free), its consumers and its CLI."""
import subprocess
import sys
from pathlib import Path

import pytest

from local_models.jdit import systems

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs/kss/tts1"


def test_import_is_torch_free():
    code = ("import sys, local_models.jdit.systems; "
            "print(' '.join(m for m in ('torch', 'espnet', 'espnet2', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_consumers_use_the_same_names():
    from local_models.bin import jdit_score
    from local_models.jdit import pack, report

    assert set(systems.PAPER_ROWS) == set(systems.SYSTEMS)
    assert set(systems.LABELS) == {"gt_mel", *systems.SYSTEMS} == set(systems.PAPER_MOS)
    assert set(systems.DESCRIPTIONS) == set(systems.SYSTEMS)
    assert set(systems.AUTOREGRESSIVE) <= set(systems.SYSTEMS) and set(systems.TEACHER) <= set(systems.SYSTEMS)
    # a teacher trains before its student
    assert all(systems.SYSTEMS.index(t) < systems.SYSTEMS.index(s) for s, t in systems.TEACHER.items())
    assert report.LABELS is systems.LABELS and report.PAPER_MOS is systems.PAPER_MOS
    assert report.AUTOREGRESSIVE is systems.AUTOREGRESSIVE and pack.AUTOREGRESSIVE is systems.AUTOREGRESSIVE
    assert pack.DESCRIPTIONS is systems.DESCRIPTIONS and systems.FEED_FORWARD == ("jdit", "fastspeech")
    assert "from local_models.jdit.systems import FEED_FORWARD" in (ROOT / "benchmarks/kss_speed.py").read_text()
    assert jdit_score.get_parser().parse_args(["--systems", "jdit", "--sets", "test", "--corpus", "c"]).gt_mel_rows \
        == list(systems.GT_MEL_ROWS)
    assert report.ScoreOptions(systems=("jdit",), sets=("test",), corpus="c").gt_mel_rows == systems.GT_MEL_ROWS
    # every GT-mel row is gt_mel or the other vocoder's (stages.sh: exp/gt_mel_$(alt_name))
    assert set(systems.GT_MEL_ROWS) == {"gt_mel", *(f"gt_mel_{systems.alt_name(v)}" for v in systems.VOCODERS)}
    # a training config per system, at both sizes (stages.sh config_of)
    for s in systems.SYSTEMS:
        for suffix in ("", "_tiny"):
            assert (RECIPE / f"conf/tuning/train_{s}{suffix}.yaml").is_file(), (s, suffix)


def test_stages_default_systems_are_systems_py():
    """A literal default (no Python run when stages.sh is sourced, --help included), checked against SYSTEMS."""
    text = (ROOT / "local_models/jdit/stages.sh").read_text()
    assert f'systems="{" ".join(systems.SYSTEMS)}"' in text
    # no case statement or list repeats them
    assert "jdit|tacotron2" not in text and "in jdit tacotron2" not in text and "main:griffin_lim" not in text


def test_functions():
    assert systems.ordered(["fastspeech", "transformer", "jdit"]) == ("jdit", "transformer", "fastspeech")
    systems.check(["jdit", "transformer", "fastspeech"])
    with pytest.raises(ValueError, match="unknown system 'foo'"):
        systems.check(["jdit", "foo"])
    with pytest.raises(ValueError, match="fastspeech needs its teacher, transformer"):
        systems.check(["fastspeech"])
    assert [systems.vocoder_of(w, "griffin_lim") for w in ("main", "alt")] == ["griffin_lim", systems.PWG_MODEL]
    assert [systems.vocoder_of(w, "pwg") for w in ("main", "alt")] == [systems.PWG_MODEL, "griffin_lim"]
    assert [systems.vocoder_of(w, "a/b.pkl") for w in ("main", "alt")] == ["a/b.pkl", "griffin_lim"]
    assert [systems.vocoder_of(w, "mbmelgan") for w in ("main", "alt")] == [
        "exp/vocoder_mbmelgan/checkpoint.pkl", "griffin_lim"]
    assert [systems.alt_name(v) for v in ("griffin_lim", "pwg", "a/b.pkl")] == ["pwg", "griffin_lim", "griffin_lim"]
    with pytest.raises(ValueError, match="--vocoder wavenet"):
        systems.vocoder_of("main", "wavenet")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "local_models.jdit.systems", *args], cwd=ROOT, capture_output=True,
                          text=True)


def test_cli():
    assert _cli("names").stdout == "jdit tacotron2 transformer fastspeech\n"
    assert _cli("ordered", "fastspeech transformer", "tacotron2").stdout == "tacotron2 transformer fastspeech\n"
    assert _cli("vocoder_of", "main", "pwg").stdout == "exp/vocoder_pwg/checkpoint.pkl\n"
    assert _cli("alt_name", "griffin_lim").stdout == "pwg\n"
    assert _cli("label", "jdit").stdout == "JDI-T (ours)\n"
    ok = _cli("check", "jdit transformer fastspeech")
    assert ok.returncode == 0 and ok.stdout == ""
    bad = _cli("check", "jdit", "foo")
    assert bad.returncode == 1 and "unknown system 'foo' (jdit, tacotron2, transformer, fastspeech)" in bad.stderr
    assert _cli("ordered", "fastspeech").returncode == 1
    assert _cli("vocoder_of", "main", "wavenet").returncode == 1
    assert "vocoder_of" in _cli("--help").stdout
