"""SAD labels and scoring on hand-made examples (DCF, P, R, F1, collar, pooled vs per-file)."""
import pytest

from local_models.common.datadir import DataDirError
from local_models.sad.labels import merge, read_label_list, read_rttm, to_intervals, to_mask, write_rttm
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


# Three 10 s files, collar 0.5 s (reference non-speech within 0.5 s of a speech boundary not scored), by hand:
#   a: ref 0-5,  hyp 0-4:          miss 1 of 5 s speech, FA 0 of 4.5 s scored non-speech  -> DCF 0.75 * 0.2 = 0.15
#   b: ref 2-4,  hyp 2-4 and 6-8:  miss 0, FA 2 of 7 s (0-1.5, 4.5-10)                   -> DCF 0.25 * 2 / 7
#   c: ref 0-8,  hyp none:         miss 8 of 8 s, FA 0 of 1.5 s                           -> DCF 0.75
THREE_REF = {"a": [(0.0, 5.0)], "b": [(2.0, 4.0)], "c": [(0.0, 8.0)]}
THREE_HYP = {"a": [(0.0, 4.0)], "b": [(2.0, 4.0), (6.0, 8.0)], "c": []}
THREE_PER_FILE = (0.15 + 0.25 * 2 / 7 + 0.75) / 3  # the FS02 scorer's overall DCF: the mean of the files'
THREE_POOLED = 0.75 * 9 / 15 + 0.25 * 2 / 13       # times summed: 9 of 15 s missed, 2 of 13 s false alarm


def test_per_file_dcf_three_files_by_hand():
    s = score(THREE_REF, THREE_HYP, {"a": 10.0, "b": 10.0, "c": 10.0}, collar=0.5)
    assert [s["files"][r]["dcf"] for r in "abc"] == pytest.approx([0.15, 0.25 * 2 / 7, 0.75])
    assert s["per_file"]["dcf"] == pytest.approx(THREE_PER_FILE)
    assert s["pooled"]["dcf"] == pytest.approx(THREE_POOLED)


def test_results_json_and_table_carry_the_per_file_dcf(tmp_path):
    """report.score_system (stage 8's results.json entry) and the Table 2 row: pooled and per-file DCF side by side."""
    from local_models.sad.report import score_system, write_results_md

    data, exp = tmp_path / "data", tmp_path / "exp"
    for x in ("dev", "eval"):
        (data / x).mkdir(parents=True)
        write_rttm(data / x / "ref.rttm", THREE_REF)
        dec = exp / "stat_sad" / f"decode_{x}"
        dec.mkdir(parents=True)
        write_rttm(dec / "hyp.rttm", THREE_HYP)
        (dec / "reco2dur").write_text("a 10.000\nb 10.000\nc 10.000\n")
    m = score_system(exp, "stat_sad", ["dev", "eval"], data)
    assert m["eval"]["dcf"] == pytest.approx(THREE_POOLED) and m["eval"]["dcf_per_file"] == pytest.approx(THREE_PER_FILE)
    write_results_md(tmp_path / "RESULTS.md", {"systems": {"stat_sad": m}}, "fs02", "dev", "eval", False)
    md = (tmp_path / "RESULTS.md").read_text()
    header = next(x for x in md.splitlines() if x.startswith("| system | dev F1"))
    row = next(x for x in md.splitlines() if x.startswith("| Stat. SAD") or x.startswith("| Statistical"))
    names, cells = [c.strip() for c in header.split("|")], [c.strip() for c in row.split("|")]
    ours = {name: cells[names.index(name)] for name in names}  # first occurrence: ours (the paper's columns follow)
    assert ours["eval DCF"] == f"{100 * THREE_POOLED:.2f}" and ours["eval DCF per-file"] == f"{100 * THREE_PER_FILE:.2f}"
    assert ours["DCF per-file"] == f"{100 * THREE_PER_FILE:.2f}" and len(cells) == len(names)


def test_a_recording_missing_from_the_reference_is_an_error(tmp_path):
    """No silent 'all non-speech' for a recording the reference does not list; NON-SPEECH lines list one with none."""
    from local_models.sad.labels import check_covered

    write_rttm(tmp_path / "ref.rttm", {"a": [(1.0, 2.0)], "quiet": []}, {"a": 5.0, "quiet": 3.0})
    assert "NON-SPEECH quiet 1 0.000 3.000" in (tmp_path / "ref.rttm").read_text()
    ref = read_rttm(tmp_path / "ref.rttm")
    assert ref == {"a": [(1.0, 2.0)], "quiet": []}
    check_covered(ref, ["a", "quiet"], tmp_path, "score it")
    with pytest.raises(DataDirError, match="no reference for stray: cannot score it"):
        check_covered(ref, ["a", "quiet", "stray"], tmp_path, "score it")
