"""local_models/common/sealed.py: each scoring of a sealed set is counted under the configuration that scored it."""
import pytest

from local_models.common import sealed


def test_looks_count_per_configuration(tmp_path):
    conf = tmp_path / "train.yaml"
    conf.write_text("lr: 1e-3\n")
    fp = sealed.fingerprint([conf], {"threshold": 0.5})
    assert fp == sealed.fingerprint([conf], {"threshold": 0.5}) and len(fp) == 12
    exp = tmp_path / "exp"
    assert sealed.looks(exp, ["test"], fp) == {"test": 0}
    assert sealed.record_look(exp, ["test", "eval_ood"], fp, commit="abc") == {"test": 1, "eval_ood": 1}
    assert sealed.looks_line({"test": 1, "eval_ood": 1}) == (
        "Sealed sets scored under this configuration: test 1 time, eval_ood 1 time.")
    assert sealed.record_look(exp, ["test"], fp, commit="abc") == {"test": 2}
    assert "test scored more than once" in sealed.looks_line({"test": 2})
    # a changed choice is a new configuration: its first look is clean again, the old ones stay in the log
    other = sealed.fingerprint([conf], {"threshold": 0.6})
    assert other != fp and sealed.record_look(exp, ["test"], other, commit="abc") == {"test": 1}
    conf.write_text("lr: 2e-3\n")
    assert sealed.fingerprint([conf], {"threshold": 0.5}) != fp
    lines = (exp / "sealed_looks.tsv").read_text().splitlines()
    assert lines[0] == sealed.HEADER and len(lines) == 5


def test_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such configuration file .*missing.yaml"):
        sealed.fingerprint([tmp_path / "missing.yaml"])
    (tmp_path / "sealed_looks.tsv").write_text(sealed.HEADER + "\n2026-01-01\ttest\n")
    with pytest.raises(ValueError, match=r"sealed_looks.tsv:2: expected 4"):
        sealed.record_look(tmp_path, ["test"], "x", commit="c")
    assert (tmp_path / "sealed_looks.tsv").read_text().count("\n") == 2  # nothing appended to a damaged log
    assert sealed.looks_line({}) == "No sealed set was scored."
