"""SALAD report: system comparisons on the MCD without silence, with paired bootstrap intervals and verdicts; the
sealed-set looks and the README cell read from the new headline wording."""
import json

import numpy as np
import pytest

from local_models.common.readme import cell
from local_models.salad import report

SYSTEMS = ["small_rnn", "small_salad", "big_rnn", "big_salad"]


def _decode(exp, spk, system, sums, mcd_offset=0.0):
    """A decode dir of <spk>_test: per-utterance sums and the pooled scores.json they give."""
    d = exp / spk / system / f"decode_{spk}_test"
    d.mkdir(parents=True)
    (d / "per_utt_sums.json").write_text(json.dumps(sums))
    frames = sum(s["frames"] for s in sums.values())
    speech = sum(s["speech_frames"] for s in sums.values())
    (d / "scores.json").write_text(json.dumps({
        "mcd_db": sum(s["mcd_sum_db"] for s in sums.values()) / frames,
        "mcd_speech_db": sum(s["mcd_speech_sum_db"] for s in sums.values()) / speech, "speech_frames": speech,
        "f0_rmse_hz": 10.0, "vuv_acc": 95.0, "utterances": len(sums), "frames": frames, "num_params": 1000}))


def _sums(rng, n, speech_mcd, silence_mcd):
    """N utterances of 100 frames (70 speech): frame MCDs around SPEECH_MCD in speech, SILENCE_MCD in silence."""
    out = {}
    for i in range(n):
        sp = speech_mcd + rng.normal(0, 0.3)
        out[f"u{i:02d}"] = {"frames": 100, "speech_frames": 70, "mcd_speech_sum_db": 70 * sp,
                            "mcd_sum_db": 70 * sp + 30 * silence_mcd}
    return out


@pytest.fixture
def exp(tmp_path):
    rng = np.random.default_rng(0)
    exp = tmp_path / "exp"
    for spk in ("M1", "F1"):
        # Big: SALAD 1 dB above RNN in speech, but silence hides it (SALAD's silences are better): the verdict is
        # read on the no-silence MCD
        _decode(exp, spk, "big_rnn", _sums(np.random.default_rng(1), 30, 5.0, 9.0))
        _decode(exp, spk, "big_salad", _sums(np.random.default_rng(1), 30, 6.0, 5.0))
        # Small: the two differ by noise only
        _decode(exp, spk, "small_rnn", _sums(rng, 30, 6.0, 8.0))
        _decode(exp, spk, "small_salad", _sums(rng, 30, 6.0, 8.0))
    return exp


def test_comparison_is_the_pooled_no_silence_gap_with_a_paired_interval(exp):
    comps = report.comparisons(exp, ["M1", "F1"])
    big = comps["M1_big"]
    a = json.loads((exp / "M1" / "big_salad" / "decode_M1_test" / "per_utt_sums.json").read_text())
    b = json.loads((exp / "M1" / "big_rnn" / "decode_M1_test" / "per_utt_sums.json").read_text())
    by_hand = (sum(v["mcd_speech_sum_db"] for v in a.values()) - sum(v["mcd_speech_sum_db"] for v in b.values())) / (
        70 * 30)
    assert big["speech"]["estimate"] == pytest.approx(by_hand) == pytest.approx(1.0)
    # the same utterances' noise in both systems: paired, the interval is tight around +1 dB
    assert 0.99 < big["speech"]["low"] <= big["speech"]["high"] < 1.01
    assert big["all"]["estimate"] == pytest.approx((70 * 1.0 - 30 * 4.0) / 100)  # with silence: SALAD looks better
    assert big["paper"] == pytest.approx(5.43 - 5.15)
    small = comps["M1_small"]["speech"]
    assert small["low"] < 0 < small["high"]  # unpaired noise: not told apart


def test_headline_verdicts_and_the_readme_cell(exp):
    comps = report.comparisons(exp, ["M1", "F1"])
    claims = report.headline({}, ["M1", "F1"], None, comps)
    big = next(c for c in claims if c.startswith("M1 big:"))
    assert "at most +0.30 dB" in big and "(paper +0.28 dB; one seed each)" in big and ": NOT met, +1.00 [" in big
    assert "bootstrap over 30 utterances" in big and "chosen on M1_valid" in big
    small = next(c for c in claims if c.startswith("M1 small:"))
    assert ": not told apart, " in small and "**" not in small
    text, ok = cell("egs/tcstar/tts1", claims)
    # a goal keeps the report's word (met / not met), not an ordering's (holds)
    assert ok and text == "MCD Big SALAD - RNN +1.00 / +1.00 dB (paper +0.28 / +0.11; <= 0.3): **not met**"
    # a price within 0.3 dB on its whole interval is met; the cell says met only when both speakers meet it
    met = [c.replace(": NOT met, ", ": **met**, ") for c in claims]
    assert cell("egs/tcstar/tts1", met)[0].endswith("<= 0.3): **met**")
    shown = [c.replace(": **met**, ", ": not shown, ", 1) if c.startswith("F1 big") else c for c in met]
    assert cell("egs/tcstar/tts1", shown)[0].endswith("<= 0.3): not shown")


def test_a_model_still_improving_is_named_with_the_way_it_would_move_the_gap(exp):
    comps = report.comparisons(exp, ["M1", "F1"])
    systems = {"M1_big_rnn": {"best_epoch": 40, "max_epoch": 40}, "M1_big_salad": {"best_epoch": 31, "max_epoch": 40},
               "M1_small_salad": {"best_epoch": 40, "max_epoch": 40}, "F1_big_rnn": {"best_epoch": 12, "max_epoch": 40}}
    claims = report.headline(systems, ["M1", "F1"], None, comps)
    big, small = (next(c for c in claims if c.startswith(p)) for p in ("M1 big:", "M1 small:"))
    # SALAD - RNN: a better RNN raises the gap, a better SALAD lowers it
    assert big.endswith(" Big RNN was still improving when training stopped: more training could move this gap up.")
    assert "Big SALAD was" not in big
    assert small.endswith(" Small SALAD was still improving when training stopped: more training could move this gap "
                          "down.")
    assert not any("still improving" in c for c in claims if c.startswith("F1"))  # converged models: nothing added
    # the README cell reads the verdict as before
    assert cell("egs/tcstar/tts1", claims)[0].startswith("MCD Big SALAD - RNN +1.00 / +1.00 dB")


def test_systems_scored_on_other_frames_are_refused(exp):
    f = exp / "M1" / "big_salad" / "decode_M1_test" / "per_utt_sums.json"
    sums = json.loads(f.read_text())
    sums["u00"]["speech_frames"] = 69
    f.write_text(json.dumps(sums))
    with pytest.raises(ValueError, match="different frames of M1_test"):
        report.comparisons(exp, ["M1"])


def test_scoring_counts_looks_at_sealed_sets_and_names_the_trained_models(exp, tmp_path, monkeypatch):
    # scored from a modified checkout, every scoring is a look (the same outputs rescored by a clean commit are not:
    # test_sealed.py), whatever the checkout this test runs from
    monkeypatch.setattr("local_models.common.sealed.git_commit", lambda *a, **k: "abc1234+dirty")
    conf = tmp_path / "train.yaml"
    conf.write_text("x: 1\n")
    md = tmp_path / "RESULTS.md"
    sets = ["M1_test", "F1_test"]
    for n in (1, 2):
        report.score(exp, ["M1", "F1"], SYSTEMS, sets, md, "mini", sealed=["M1_test"], config_files=[conf],
                     options={"seed": "0"})
        results = json.loads((exp / "results.json").read_text())
        assert results["sealed_looks"]["looks"] == {"M1_test": n}  # F1_test is not sealed here
        assert f"M1_test {n} time" in md.read_text()
    assert "scored more than once" in md.read_text()
    assert set(results["environment"]["trained"]) == {f"{spk}_{s}" for spk in ("M1", "F1") for s in SYSTEMS}
    text = md.read_text()
    assert "| Model | #Params (ours / paper) | MCD [dB] no silence ours | with silence ours | paper |" in text
    assert "NOT met" in text and "bootstrap over 30 utterances" in text
    report.score(exp, ["M1"], SYSTEMS, ["M1_test"], md, "mini", sealed=["M1_test", "F1_test"], config_files=[conf],
                 options={"seed": "0"})
    assert json.loads((exp / "results.json").read_text())["sealed_looks"]["looks"] == {"M1_test": 3}
    report.score(exp, ["F1"], SYSTEMS, ["F1_test"], md, "mini", sealed=["M1_test", "F1_test"], config_files=[conf],
                 options={"seed": "0"})  # another set scored: the earlier looks stay in view
    assert json.loads((exp / "results.json").read_text())["sealed_looks"]["looks"] == {"M1_test": 3, "F1_test": 1}
    # a sealed set listed but never decoded was not looked at
    report.score(exp, ["M1"], SYSTEMS, ["M1_test", "M1_other"], md, "mini", sealed=["M1_test", "M1_other"],
                 config_files=[conf], options={"seed": "0"})
    assert json.loads((exp / "results.json").read_text())["sealed_looks"]["looks"] == {"M1_test": 4}
    conf.write_text("x: 2\n")  # another configuration: its own count, the earlier looks said beside it
    report.score(exp, ["M1", "F1"], SYSTEMS, sets, md, "mini", sealed=["M1_test"], config_files=[conf])
    record = json.loads((exp / "results.json").read_text())["sealed_looks"]
    assert record["looks"] == {"M1_test": 1} and record["earlier"] == {"M1_test": 4}
    assert "Scored before under other configurations: M1_test 4 times" in md.read_text()


def test_speed_and_point_gaps_carry_no_verdict_word():
    """The speed-up is one timing per length on one CPU and the per-precision / sum-less MCD gaps are points: none of
    them may read "holds", "within" or "meets" (the verdict words are for intervals, #49)."""
    fits = {"big_rnn": {"speedup_vs_big_rnn": 1.0}, "big_salad": {"speedup_vs_big_rnn": 1.5},
            "big_salad_win": {"speedup_vs_big_rnn": 4.2}}
    lat = {"by_precision": {"fp32": {"fits": fits, "test_mcd_db": {"big_salad": 7.5, "big_salad_win": 7.0}}},
           "mcd_speaker": "M1", "threads": 1}
    slow, = [x for x in report.speed_claim(lat) if x.startswith("- ")]
    assert slow.endswith("the order-of-magnitude claim is not reached on this CPU (a timing, no interval).")
    assert "a point estimate" in slow and " within " not in slow and "holds" not in slow
    fits["big_salad_win"]["speedup_vs_big_rnn"] = 10.5
    assert report.speed_claim(lat)[1].endswith("claim is reached on this CPU (a timing, no interval).")
    systems = {"M1_big_salad_win": {"mcd": 7.0}, "M1_big_salad": {"mcd": 7.5}}
    line, = [x for x in report.window_gap(systems, ["M1"]) if x.startswith("- ")]
    assert "-0.50 dB" in line and "not judged" in line and "meets" not in line
