"""SAD labels and scoring on hand-made examples (DCF, P, R, F1, collar, pooled vs per-file)."""
import pytest

from local_models.common.datadir import DataDirError
from local_models.sad.labels import merge, read_label_list, read_rttm, to_intervals, to_mask
from local_models.sad.metrics import score


def test_hand_computed_no_collar():
    # 10 s file; reference speech 2-4 s and 6-7 s (3 s); hypothesis 2.5-4.5 s.
    ref, hyp = {"a": [(2.0, 4.0), (6.0, 7.0)]}, {"a": [(2.5, 4.5)]}
    r = score(ref, hyp, {"a": 10.0})["pooled"]
    # TP 1.5, FN 1.5 (2-2.5, 6-7), FP 0.5, TN 6.5
    assert r["p_miss"] == pytest.approx(0.5)
    assert r["p_fa"] == pytest.approx(0.5 / 7)
    assert r["dcf"] == pytest.approx(0.75 * 0.5 + 0.25 * 0.5 / 7)
    assert r["precision"] == pytest.approx(0.75)
    assert r["recall"] == pytest.approx(0.5)
    assert r["f1"] == pytest.approx(2 * 0.75 * 0.5 / 1.25)


def test_collar_removes_only_nonspeech_near_boundaries():
    ref, hyp = {"a": [(2.0, 4.0)]}, {"a": [(1.7, 4.3), (8.0, 8.5)]}
    no_collar = score(ref, hyp, {"a": 10.0})
    with_collar = score(ref, hyp, {"a": 10.0}, collar=0.5)
    # without collar: FP = 0.6 + 0.5; with collar the 0.3 s overhangs fall in unscored non-speech
    assert no_collar["counts"]["fp"] == pytest.approx(1.1)
    assert with_collar["counts"]["fp"] == pytest.approx(0.5)
    # scored non-speech shrinks by 2 x 0.5 s; speech is still fully scored
    assert with_collar["counts"]["tn"] + with_collar["counts"]["fp"] == pytest.approx(8.0 - 1.0)
    assert with_collar["counts"]["tp"] == pytest.approx(2.0)
    # a miss inside speech is never forgiven by the collar
    miss = score(ref, {"a": [(2.2, 4.0)]}, {"a": 10.0}, collar=0.5)
    assert miss["counts"]["fn"] == pytest.approx(0.2)


def test_pooled_vs_per_file():
    ref = {"a": [(0.0, 1.0)], "b": [(0.0, 9.0)]}
    hyp = {"a": [], "b": [(0.0, 9.0)]}
    s = score(ref, hyp, {"a": 10.0, "b": 10.0})
    assert s["pooled"]["p_miss"] == pytest.approx(1.0 / 10.0)
    assert s["per_file"]["p_miss"] == pytest.approx((1.0 + 0.0) / 2)
    assert s["files"]["a"]["recall"] == 0.0


def test_perfect_and_empty():
    ref = {"a": [(1.0, 2.0)]}
    assert score(ref, ref, {"a": 5.0})["pooled"]["dcf"] == 0.0
    r = score(ref, {}, {"a": 5.0})["pooled"]
    assert r["dcf"] == pytest.approx(0.75) and r["f1"] == 0.0


def test_masks_and_intervals_round_trip():
    iv = [(0.05, 0.13), (0.5, 0.61)]
    mask = to_mask(iv, 100, 0.01)
    assert mask.sum() == 8 + 11
    assert to_intervals(mask, 0.01) == [pytest.approx((0.05, 0.13)), pytest.approx((0.5, 0.61))]
    assert merge([(3, 4), (1, 2), (1.5, 3.2)]) == [(1, 4)]
    assert merge([(1, 2), (2.05, 3)], gap=0.1) == [(1, 3)]


def test_label_readers_and_errors(tmp_path):
    (tmp_path / "r.rttm").write_text("SPEAKER rec1 1 1.00 0.50 <NA> <NA> speech <NA> <NA>\n"
                                     "SPEAKER rec1 1 1.40 0.60 <NA> <NA> speech <NA> <NA>\n")
    assert read_rttm(tmp_path / "r.rttm") == {"rec1": [(1.0, 2.0)]}
    (tmp_path / "l.txt").write_text("0.0 1.5 NS\n1.5 2.5 S\n2.5 4.0 NS\n")
    assert read_label_list(tmp_path / "l.txt") == [(1.5, 2.5)]
    (tmp_path / "bad.txt").write_text("0.0 1.5 NS\n1.5 2.5 maybe\n")
    with pytest.raises(DataDirError, match="bad.txt:2: unknown label"):
        read_label_list(tmp_path / "bad.txt")
    (tmp_path / "bad.rttm").write_text("SPEAKER rec1 1 x 0.5\n")
    with pytest.raises(DataDirError, match="bad.rttm:1"):
        read_rttm(tmp_path / "bad.rttm")
