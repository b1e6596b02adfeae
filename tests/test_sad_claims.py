"""The SAD headline judged on intervals (local_models/sad/claims.py): the units a bootstrap resamples, the chunk rows
stage 8 keeps, the paper's ordering as pairs, and stage 8's record of its looks at the sealed sets."""
import json

import numpy as np
import pytest

from local_models.common.verdict import DOES_NOT_HOLD, HOLDS, NOT_TOLD_APART
from local_models.sad import claims
from local_models.sad.events import Event, fa_by_chunk, robustness, write_events
from local_models.sad.labels import write_rttm
from local_models.sad.metrics import chunk_spans, count_chunks, count_file, dcf_of_counts
from test_sad_operating_point import chunk_rows

LABELS = {n: n for n in ("seg_rnn", "cnn_hmm", "rnn_hmm", "stat_sad", "energy")}


def test_chunk_spans_cover_the_recording_and_fold_a_short_tail():
    assert chunk_spans(140.0) == [(0.0, 60.0), (60.0, 140.0)]  # a 20 s tail joins the chunk before
    assert chunk_spans(150.0) == [(0.0, 60.0), (60.0, 120.0), (120.0, 150.0)]  # half a chunk is one
    assert chunk_spans(200.0) == [(0.0, 60.0), (60.0, 120.0), (120.0, 200.0)]
    assert chunk_spans(20.0) == [(0.0, 20.0)]


def test_chunk_counts_and_false_alarms_sum_to_the_recordings():
    """The pieces a bootstrap resamples add up to the figures the tables give: no time lost or counted twice (the
    collar is laid over the whole recording, so a boundary near a cut is treated as in count_file)."""
    ref = [(10.0, 30.0), (59.7, 61.0), (100.0, 170.0)]
    hyp = [(9.0, 31.0), (59.0, 62.5), (95.0, 150.0), (175.0, 179.0)]
    for collar in (0.0, 0.5):
        whole = count_file(ref, hyp, 200.0, collar)
        parts = count_chunks(ref, hyp, 200.0, collar)
        assert len(parts) == 3
        for k in ("tp", "fp", "tn", "fn"):
            assert sum(getattr(p, k) for p in parts) == pytest.approx(getattr(whole, k), abs=1e-6)
        assert dcf_of_counts([[p.tp, p.fp, p.tn, p.fn] for p in parts]) == pytest.approx(whole.rates()["dcf"])
    events = [Event(40.0, 50.0, "music", 0.0), Event(170.0, 190.0, "tone", 5.0), Event(59.0, 64.0, "music", 0.0)]
    pieces = fa_by_chunk(ref, hyp, 200.0, events, 60.0)
    total = robustness({"r": ref}, {"r": hyp}, {"r": 200.0}, {"r": events})
    for kind in ("music", "tone", "background"):
        den = sum(p[kind][0] for p in pieces if kind in p)
        num = sum(p[kind][1] for p in pieces if kind in p)
        assert den == pytest.approx(total["seconds"][kind]) and num / den == pytest.approx(total["fa"][kind])
    assert "tone" not in pieces[0] and "music" not in pieces[2]  # a kind that does not sound in a piece: no key


def test_units_are_recordings_when_there_are_enough_else_chunks_else_none():
    many = chunk_rows(0.05, n=12, recs=6)
    clusters, what = claims.units(many)
    assert what == "recordings" and len(set(clusters)) == 6
    assert "over 6 recordings" in claims.dcf_diff(many, chunk_rows(0.08, n=12, recs=6, seed=1)).method
    clusters, what = claims.units(chunk_rows(0.05, n=10, recs=2))
    assert clusters is None and what == "1-minute chunks of 2 recordings"
    with pytest.raises(claims.NoInterval, match="2 recordings, 4 chunks of 60 s: fewer than 5 units"):
        claims.units(chunk_rows(0.05, n=4, recs=2))


def ordering_rows(**dcf):
    return {n: chunk_rows(d, seed=i, jitter=0.01) for i, (n, d) in enumerate(dcf.items())}


def test_the_ordering_is_judged_on_the_pairs_intervals_not_on_the_points():
    pairs = (("seg_rnn", "cnn_hmm"), ("seg_rnn", "rnn_hmm"), ("cnn_hmm", "stat_sad"), ("rnn_hmm", "stat_sad"),
             ("stat_sad", "energy"))
    clear = dict(seg_rnn=0.02, cnn_hmm=0.05, rnn_hmm=0.06, stat_sad=0.10, energy=0.20)
    v, pair, iv = claims.ordering_verdict(ordering_rows(**clear), pairs, "dcf", LABELS)
    assert v == HOLDS and pair == "seg_rnn - cnn_hmm" and iv.high < 0  # the pair nearest zero decides
    # seg RNN a hair below CNN + HMM in the points, inside the chunks' spread: the data cannot tell them apart
    close = {**clear, "seg_rnn": 0.0495}
    v, pair, iv = claims.ordering_verdict(ordering_rows(**close), pairs, "dcf", LABELS)
    assert v == NOT_TOLD_APART and pair == "seg_rnn - cnn_hmm" and iv.low < 0 < iv.high
    assert 100 * (dcf_of_counts([r[3] for r in ordering_rows(**close)["seg_rnn"]])
                  - dcf_of_counts([r[3] for r in ordering_rows(**close)["cnn_hmm"]])) == pytest.approx(iv.estimate)
    reversed_ = {**clear, "stat_sad": 0.30}
    v, pair, iv = claims.ordering_verdict(ordering_rows(**reversed_), pairs, "dcf", LABELS)
    assert v == DOES_NOT_HOLD and pair == "stat_sad - energy" and iv.low > 0
    assert iv.level == pytest.approx(0.99) and "99 %" in iv.text()  # one of 5 pairs reversed: Bonferroni's level
    # without collar: the rows' other counts
    rows = ordering_rows(**clear)
    for r in rows["seg_rnn"]:
        r[4] = [10.0, 20.0, 10.0, 20.0]  # DCF 0.75 without collar
    assert claims.ordering_verdict(rows, pairs, "dcf_no_collar", LABELS)[0] == DOES_NOT_HOLD
    assert claims.ordering_verdict(rows, pairs, "dcf", LABELS)[0] == HOLDS


def test_a_reversed_pair_needs_the_family_wise_interval_and_holding_needs_every_95_interval():
    from local_models.common.verdict import Interval

    def judged(*ivs, level=0.95):
        return [(f"p{i}", Interval(e, lo, hi, level), "does NOT hold" if lo > 0 else "holds" if hi < 0 else
                 "not told apart") for i, (e, lo, hi) in enumerate(ivs)]

    at95 = judged((-2, -3, -1), (1.0, 0.2, 1.8))  # p1 reversed at 95 % ...
    wide = judged((-2, -3.5, -0.5), (1.0, -0.3, 2.3), level=0.99)  # ... but its 99 % interval reaches zero
    v, pair, iv = claims.combine_comparisons(at95, wide)
    assert (v, pair, iv.level, iv.low) == (NOT_TOLD_APART, "p1", 0.99, -0.3)  # shown with the interval that decided
    assert claims.combine_comparisons(at95)[:2] == (DOES_NOT_HOLD, "p1")  # without the family's intervals
    reversed_ = judged((-2, -3.5, -0.5), (1.0, 0.1, 2.3), level=0.99)
    v, pair, iv = claims.combine_comparisons(at95, reversed_)
    assert (v, pair, iv.level) == (DOES_NOT_HOLD, "p1", 0.99)
    # holding is judged on the 95 % intervals even where the wider ones reach zero
    all_below = judged((-2, -3, -1), (-1, -1.8, -0.2))
    v, pair, iv = claims.combine_comparisons(all_below, judged((-2, -3.5, -0.5), (-1, -2.1, 0.1), level=0.99))
    assert (v, pair, iv.level, iv.high) == (HOLDS, "p1", 0.95, -0.2)


def test_report_ordering_lines_carry_pooled_per_file_and_the_interval():
    from local_models.sad.report import ordering_lines

    rows = ordering_rows(seg_rnn=0.02, cnn_hmm=0.05, rnn_hmm=0.06, stat_sad=0.10, energy=0.20)
    systems = {n: {"eval": {"dcf": dcf_of_counts([r[3] for r in rs]), "dcf_per_file": 0.5, "chunks": rs,
                            "dcf_no_collar": dcf_of_counts([r[4] for r in rs]), "dcf_per_file_no_collar": 0.25}}
               for n, rs in rows.items()}
    lines = [x for x in ordering_lines(systems, "eval", "dev") if x]
    assert len(lines) == 2
    assert lines[0].startswith("Paper's ordering on eval DCF (collar 0.5 s, as the paper) (seg RNN < CNN+HMM, RNN+HMM "
                               "< stat. SAD < energy baseline) here "
                               f"(Seg. RNN {100 * systems['seg_rnn']['eval']['dcf']:.2f}, ")
    assert f", energy {100 * systems['energy']['eval']['dcf']:.2f}); per-file mean" in lines[0]
    assert "; per-file mean (50.00, 50.00, 50.00, 50.00, 50.00); the pair that decides, Seg. RNN - CNN + HMM" in lines[0]
    assert "(% points): **holds**, -2.92 [" in lines[0]
    assert "(95 % bootstrap over 10 1-minute chunks of 2 recordings); chosen on dev" in lines[0]
    assert "per-file mean (25.00," in lines[1]
    from local_models.common.readme import cell

    assert cell("egs/fearless_steps/sad1", lines)[0].endswith("ordering **holds**")
    for rs in rows.values():  # too few chunks: no verdict, the points' order said as such
        del rs[4:]
    line = ordering_lines(systems, "eval", "dev")[1]
    assert ": no verdict, an interval cannot be computed (2 recordings, 4 chunks of 60 s" in line
    assert "the points are in the paper's order" in line and "**" not in line
    assert cell("egs/fearless_steps/sad1", [line])[0].endswith("ordering no verdict (no interval)")


def write_set(root, name, ref, hyp, durs, events=None, system="stat_sad"):
    data, dec = root / "data" / name, root / "exp" / system / f"decode_{name}"
    data.mkdir(parents=True, exist_ok=True)
    dec.mkdir(parents=True)
    write_rttm(data / "ref.rttm", ref, durs)
    write_rttm(dec / "hyp.rttm", hyp)
    (dec / "reco2dur").write_text("".join(f"{r} {d:.3f}\n" for r, d in durs.items()))
    if events:
        write_events(data / "events", events)


def test_score_system_keeps_the_chunk_rows_and_the_per_file_dcf_without_collar(tmp_path):
    from local_models.sad.metrics import score
    from local_models.sad.report import score_system

    ref = {"a": [(5.0, 70.0)], "b": [(0.0, 20.0), (100.0, 110.0)]}
    hyp = {"a": [(4.0, 60.0)], "b": [(0.0, 25.0), (90.0, 112.0)]}
    durs = {"a": 130.0, "b": 125.0}
    write_set(tmp_path, "eval", ref, hyp, durs, {"b": [Event(80.0, 95.0, "music", 0.0)]})
    m = score_system(tmp_path / "exp", "stat_sad", ["eval"], tmp_path / "data")["eval"]
    rows = m["chunks"]
    assert [(r[0], r[1], r[2]) for r in rows] == [("a", 0.0, 60.0), ("a", 60.0, 130.0), ("b", 0.0, 60.0),
                                                  ("b", 60.0, 125.0)]
    assert dcf_of_counts([r[3] for r in rows]) == pytest.approx(m["dcf"], abs=1e-4)
    assert dcf_of_counts([r[4] for r in rows]) == pytest.approx(m["dcf_no_collar"], abs=1e-4)
    assert m["dcf_per_file_no_collar"] == pytest.approx(score(ref, hyp, durs, 0.0)["per_file"]["dcf"])
    assert rows[3][5]["music"] == [15.0, 5.0] and "music" not in rows[2][5]  # 90-95 s of 80-95 s called speech
    json.dumps(rows)  # results.json keeps them


def test_stage8_records_its_looks_and_the_trained_nets(tmp_path, monkeypatch):
    """sad_score --sealed: each scoring of a sealed set is a look under the configuration (config files + options);
    results.json keeps the count, RESULTS.md says it near the top; the nets' training commits reach the
    environment block."""
    from local_models.bin.sad_score import main
    from local_models.common.results import record_training

    ref, hyp, durs = {"a": [(5.0, 70.0)]}, {"a": [(4.0, 60.0)]}, {"a": 130.0}
    for x in ("dev", "eval"):
        for system in ("stat_sad", "cnn_hmm"):
            write_set(tmp_path, x, ref, hyp, durs, system=system)
    (tmp_path / "exp" / "stat_sad" / "decode_eval" / "rtf.json").write_text(json.dumps(
        {"proc_s": 1.0, "audio_s": 130.0, "threads": 1}))
    record_training(tmp_path / "exp" / "cnn1d")
    conf = tmp_path / "train_cnn1d.yaml"
    conf.write_text("max_epoch: 1\n")
    monkeypatch.chdir(tmp_path)
    # scored from a modified checkout, every scoring is a look (the same outputs rescored by a clean commit are not:
    # test_sealed.py), whatever the checkout this test runs from
    monkeypatch.setattr("local_models.common.sealed.git_commit", lambda *a, **k: "abc1234+dirty")
    args = ["--systems", "stat_sad", "cnn_hmm", "--sets", "dev", "eval", "--exp", "exp", "--data", "data",
            "--results-md", "RESULTS.md", "--sealed", "eval", "eval_ood", "--config-files", str(conf), "--options", "systems=stat_sad"]
    assert main(args) == 0 and main(args) == 0
    results = json.loads((tmp_path / "exp" / "results.json").read_text())
    assert results["sealed_looks"]["looks"] == {"eval": 2}  # dev is not sealed, eval_ood was not scored
    md = (tmp_path / "RESULTS.md").read_text()
    head = md.split("## Table 2")[0]
    assert "Sealed sets scored under this configuration: eval 2 times (eval scored more than once" in head
    # the environment block names the commit that trained the net cnn_hmm decodes with (stat_sad trains nothing)
    assert set(results["environment"]["trained"]) == {"cnn_hmm"} and "- trained: `cnn_hmm`: commit " in head
    conf.write_text("max_epoch: 2\n")  # another configuration: its first look
    assert main(args) == 0
    assert json.loads((tmp_path / "exp" / "results.json").read_text())["sealed_looks"]["looks"] == {"eval": 1}
    assert main(args[:-2] + ["--options", "systems=stat_sad cnn_hmm"]) == 0  # an option is configuration too
    assert json.loads((tmp_path / "exp" / "results.json").read_text())["sealed_looks"]["looks"] == {"eval": 1}
    # a scored neural system names the net it decodes with; stat_sad trains nothing
    from local_models.sad.report import trained_nets

    assert trained_nets(tmp_path / "exp", ["stat_sad", "cnn_hmm", "majority_vote"]) == {
        "cnn_hmm": tmp_path / "exp" / "cnn1d"}
    (tmp_path / "exp" / "seg_rnn_devbest").mkdir()
    (tmp_path / "exp" / "seg_rnn_devbest" / "model_dir").write_text("exp/seg_grid/L9_S3\n")
    assert trained_nets(tmp_path / "exp", ["seg_rnn_devbest"]) == {
        "seg_rnn_devbest": tmp_path / "exp" / "seg_grid" / "L9_S3"}
    assert main(args[:-7]) == 0  # without --sealed: no look counted, the record stays as it was
    assert json.loads((tmp_path / "exp" / "results.json").read_text())["sealed_looks"]["looks"] == {"eval": 1}
    assert main(args + ["bad"]) == 1  # an option that is not KEY=VALUE: an error, not a look


def test_a_goal_part_missing_its_bound_at_95_only_is_not_shown():
    from local_models.common.verdict import Interval

    dcf = ("DCF", "met", Interval(-5.0, -6.0, -4.0), "")
    music_95 = ("FA music", "NOT met", Interval(15.0, 10.5, 19.0), "")  # above the 10 % bound at 95 % ...
    music_f = ("FA music", "not shown", Interval(15.0, 9.5, 20.0, 0.975), "")  # ... not at 97.5 % (one of 2 parts)
    assert claims.combine_goals([dcf, music_95], [dcf, music_f]) == "not shown"
    assert claims.combine_goals([dcf, music_95]) == "NOT met"  # without the family's intervals
    assert claims.combine_goals([dcf, ("FA music", "met", Interval(5.0, 3.0, 7.0), "")]) == "met"
