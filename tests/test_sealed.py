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
    with pytest.raises(ValueError, match=r"sealed_looks.tsv:2: expected 5"):
        sealed.record_look(tmp_path, ["test"], "x", commit="c")
    assert (tmp_path / "sealed_looks.tsv").read_text().count("\n") == 2  # nothing appended to a damaged log
    assert sealed.looks_line({}) == "No sealed set was scored."


def test_a_rescoring_of_the_same_outputs_is_not_a_look(tmp_path):
    exp, conf = tmp_path / "exp", tmp_path / "decode.yaml"
    conf.write_text("beam: 4\n")
    hyp = tmp_path / "sys" / "decode_test" / "hyp"
    hyp.parent.mkdir(parents=True)
    hyp.write_text("u1 a b\n")
    absent = tmp_path / "other" / "decode_test" / "hyp"  # a system that did not decode the set: left out
    kw = dict(commit="abc1234")
    first = sealed.score_looks(exp, ["test"], ["test"], [conf], outputs={"test": [hyp, absent]}, **kw)
    assert first["looks"] == {"test": 1} and "rescored" not in first
    again = sealed.score_looks(exp, ["test"], ["test"], [conf], outputs={"test": [tmp_path / "sys" / ".." / "sys" /
                                                                                   "decode_test" / "hyp", absent]}, **kw)
    assert again["looks"] == {"test": 1} and again["rescored"] == {"test": 1}
    assert sealed.record_line(again) == (
        "Sealed sets scored under this configuration: test 1 time. Rescored from the same outputs and references by "
        "the same code (byte for byte: no number not seen before): test 1 time, not counted as looks.")
    # the same outputs scored by other code (another commit, or a modified checkout) may show new numbers: a look
    for commit in ("def5678", "def5678+dirty", "def5678+dirty", "unknown"):
        sealed.score_looks(exp, ["test"], ["test"], [conf], outputs={"test": [hyp]}, commit=commit)
    assert sealed.looks(exp, ["test"], first["config"]) == {"test": 1 + 4}
    assert sealed.score_looks(exp, ["test"], ["test"], [conf], outputs={"test": [hyp]}, commit="def5678")["looks"] \
        == {"test": 5}  # ... and again by that clean commit: a rescoring of its first look
    hyp.write_text("u1 a c\n")  # a new decode: new numbers, a new look
    assert sealed.score_looks(exp, ["test"], ["test"], [conf], outputs={"test": [hyp]}, **kw)["looks"] == {"test": 6}
    # without outputs (and every line of a 4-field log written before they were kept) each scoring is a look
    assert sealed.score_looks(exp, ["test"], ["test"], [conf], **kw)["looks"] == {"test": 7}
    assert sealed.score_looks(exp, ["test"], ["test"], [conf], **kw)["looks"] == {"test": 7 + 1}
    assert sealed.outputs_fingerprint([absent]) == sealed.NO_OUTPUTS
    log = exp / "sealed_looks.tsv"
    old = [sealed.HEADER.rsplit("\t", 1)[0]] + ["\t".join(l.split("\t")[:4]) for l in log.read_text().splitlines()[1:]]
    log.write_text("\n".join(old) + "\n")
    assert sealed.looks(exp, ["test"], first["config"]) == {"test": 10}  # every one of the 10 scorings
    # a configuration's rescorings are not looks under a later one either
    conf.write_text("beam: 8\n")
    log.unlink()
    sealed.score_looks(exp, ["test"], ["test"], [conf], outputs={"test": [hyp]}, **kw)
    sealed.score_looks(exp, ["test"], ["test"], [conf], outputs={"test": [hyp]}, **kw)
    conf.write_text("beam: 16\n")
    assert sealed.score_looks(exp, ["test"], ["test"], [conf], outputs={"test": [hyp]}, **kw)["earlier"] == {"test": 1}


def test_tuning_on_a_sealed_set_is_refused_naming_it():
    from local_models.common.sealed import SealedSetError, check_tuning

    check_tuning(["dev"], ["eval", "eval_ood"])  # dev: fine
    with pytest.raises(SealedSetError, match="threshold: eval is a sealed set"):
        check_tuning(["dev", "eval"], ["eval", "eval_ood"], "threshold")


def test_score_looks_counts_only_sealed_sets_per_configuration(tmp_path):
    from local_models.common.sealed import score_looks

    conf = tmp_path / "decode.yaml"
    conf.write_text("beam: 4\n")
    first = score_looks(tmp_path / "exp", ["dev", "test"], ["test"], [conf])
    assert first["looks"] == {"test": 1}
    assert score_looks(tmp_path / "exp", ["dev", "test"], ["test"], [conf])["looks"] == {"test": 2}
    conf.write_text("beam: 8\n")  # another configuration: its own count
    other = score_looks(tmp_path / "exp", ["test"], ["test"], [conf])
    assert other["looks"] == {"test": 1} and other["config"] != first["config"]
    assert "earlier" not in first
    assert score_looks(tmp_path / "exp", ["dev"], ["test"], [conf])["looks"] == {}
    # ... but the two looks under the first configuration are not forgotten: a system added after them (a new
    # configuration) may have followed them, and RESULTS.md says so beside the clean-looking count
    assert other["earlier"] == {"test": 2}
    assert sealed.record_line(other) == (
        "Sealed sets scored under this configuration: test 1 time. Scored before under other configurations: test 2 "
        "times: a choice made since (a system added, a rule changed) may have followed those scores, so they are not "
        "fully held out.")
    assert sealed.record_line(first) == "Sealed sets scored under this configuration: test 1 time."
    assert sealed.record_line(None) == "No sealed set was scored."


def test_sealed_check_command_exits_1_naming_the_set(capsys):
    from local_models.common.sealed import main

    assert main(["check", "--tuning", "dev", "--sealed", "test"]) == 0
    assert main(["check", "--tuning", "test", "--sealed", "test", "--what", "beam"]) == 1
    assert "beam: test is a sealed set" in capsys.readouterr().err
