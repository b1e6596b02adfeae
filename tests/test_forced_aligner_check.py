"""benchmarks/forced_aligner_check.py: the boundary matching behind its recall / precision, and its clear error when
pocketsphinx (not a dependency of the collection) is missing."""
import builtins
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import forced_aligner_check as fac  # noqa: E402


def test_each_true_boundary_takes_one_aligner_boundary_within_the_tolerance():
    # two true boundaries near the same aligner boundary: only one may take it
    assert fac.matched_errors([1.00, 1.01], [1.005], 0.02) == [pytest.approx(0.005)]
    # the nearest free one, not the first in the list; none beyond the tolerance
    assert fac.matched_errors([1.0, 2.0], [0.97, 0.99, 2.3], 0.02) == [pytest.approx(0.01)]
    assert fac.matched_errors([1.0], [], 0.05) == []


def test_missing_pocketsphinx_is_a_clear_error(monkeypatch):
    real_import = builtins.__import__

    def no_pocketsphinx(name, *args, **kwargs):
        if name == "pocketsphinx":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pocketsphinx)
    with pytest.raises(SystemExit, match=r"pip install pocketsphinx==5\.1\.1"):
        fac.decoder()


def test_the_reading_follows_the_numbers():
    row = {"band_limited": False, "utterances": 50, "failed": 2, "recall": {"20ms": 0.85, "50ms": 0.95},
           "precision": {"20ms": 0.86, "50ms": 0.96}, "median_error_ms": 9.0, "p90_error_ms": 30.0}
    env = {"pocketsphinx": "5.1.1", "sentences": 25, "voices": 8, "commit": "abc"}
    assert "good enough to time ABX items" in fac.markdown([row, dict(row, band_limited=True)], env)
    bad = dict(row, recall={"20ms": 0.56, "50ms": 0.7})
    assert "not good enough" in fac.markdown([bad, bad], env)
    assert "not good enough" in fac.markdown([dict(row, failed=21), row], env)
