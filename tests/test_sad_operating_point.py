"""The FA-bounded operating point (local_models/sad/decisions.py): chosen on the tuning set's events table, written
beside the DCF-tuned threshold, and the report's robustness goal judged at it."""
import kaldiio
import numpy as np
import pytest

from local_models.sad.augment import Event
from local_models.sad.decisions import (FA_BOUND_SUFFIX, fa_bounded_row, measured_kinds, tune_threshold,
                                        write_detections)
from local_models.sad.detectors import SHIFT, Detector
from local_models.sad.events import write_events
from local_models.sad.labels import read_rttm
from local_models.common.results import update_results
from local_models.sad.report import ood_goal_line, score_system


def _row(th, dcf, music=None, tone=None):
    fa = {k: v for k, v in (("music", music), ("tone", tone)) if v is not None}
    return {"threshold": th, "dcf": dcf, **({"fa": fa} if fa else {})}


def test_fa_bounded_row_is_the_lowest_dcf_within_the_bound_on_every_kind():
    rows = [_row(0.1, 0.02, 0.40, 0.30), _row(0.3, 0.04, 0.10, 0.05), _row(0.5, 0.03, 0.12, 0.01),
            _row(0.7, 0.06, 0.02, 0.01)]
    assert fa_bounded_row(rows)["threshold"] == 0.3  # 0.5 has the lower DCF but lets 12 % of the music through
    assert fa_bounded_row(rows, bound=0.02)["threshold"] == 0.7 and fa_bounded_row(rows, bound=0.001) is None
    # a tuning set without tones bounds its music alone (measured_kinds), and says so; no events table: no point
    music_only = [_row(0.3, 0.04, music=0.12), _row(0.5, 0.05, music=0.08), _row(0.7, 0.09, music=0.01)]
    assert measured_kinds(music_only) == ("music",) and fa_bounded_row(music_only)["threshold"] == 0.5
    assert measured_kinds(rows) == ("music", "tone") and measured_kinds([_row(0.3, 0.04)]) == ()
    assert fa_bounded_row([_row(0.3, 0.04)]) is None


def _sets(tmp_path, events=True):
    """10 s: speech 1-3 s (scores 0.93 for 1-2 s, 0.67 for 2-3 s) and 6-7 s (0.93); music 3-6 s (0.62); tone 7.5-8.5 s
    (0.33); else 0.04 (off every sweep's grid points)."""
    t = np.arange(int(10 / SHIFT)) * SHIFT
    s = np.full(t.shape, 0.04, np.float32)
    for lo, hi, v in ((1, 2, 0.93), (2, 3, 0.67), (6, 7, 0.93), (3, 6, 0.62), (7.5, 8.5, 0.33)):
        s[(t >= lo) & (t < hi)] = v
    dec, data = tmp_path / "decode_dev", tmp_path / "dev"
    dec.mkdir(parents=True, exist_ok=True)
    data.mkdir(parents=True, exist_ok=True)
    kaldiio.save_ark(str(dec / "scores.ark"), {"r": s[:, None]}, scp=str(dec / "scores.scp"))
    (dec / "reco2dur").write_text("r 10.0\n")
    (data / "ref.rttm").write_text("SPEAKER r 1 1.000 2.000 <NA> <NA> speech <NA> <NA>\n"
                                   "SPEAKER r 1 6.000 1.000 <NA> <NA> speech <NA> <NA>\n")
    (data / "events").unlink(missing_ok=True)
    if events:
        write_events(data / "events", {"r": [Event(3.0, 6.0, "music", 5.0), Event(7.5, 8.5, "tone", 5.0)]})
    return dec, data


def test_tuning_writes_both_thresholds_and_a_retune_without_events_drops_the_bounded_one(tmp_path):
    det = Detector(sweep=[0.1, 0.5, 0.7])
    dec, data = _sets(tmp_path)
    th = tmp_path / "threshold"
    tune_threshold(det, "toy", dec, data, th)
    # DCF weighs the 1 s missed at 0.7 (P_miss 1/3) above the music let through at 0.5; the bound keeps the music out
    assert float(th.read_text()) == 0.5
    bounded = tmp_path / f"threshold{FA_BOUND_SUFFIX}"
    assert float(bounded.read_text()) == 0.7
    write_detections(det, 0.5, [dec], 0.7)
    assert read_rttm(dec / f"hyp{FA_BOUND_SUFFIX}.rttm")["r"] == [(1.0, 2.0), (6.0, 7.0)]
    assert read_rttm(dec / "hyp.rttm")["r"] == [(1.0, 7.0)]  # the music between the speech called speech

    dec, data = _sets(tmp_path, events=False)  # the same set without its events table: no bound can be checked
    tune_threshold(det, "toy", dec, data, th)
    assert not bounded.exists()
    write_detections(det, 0.5, [dec], None)
    assert not (dec / f"hyp{FA_BOUND_SUFFIX}.rttm").exists()


def chunk_rows(dcf, fa=(), n=10, recs=2, jitter=0.004, seed=0):
    """N one-minute chunk rows (report.chunk_rows' shape) of RECS recordings whose pooled DCF (with and without
    collar) is DCF, each chunk's off by up to JITTER, and whose false-alarm share of each kind of FA {kind: share}
    is that share (the same jitter)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        d = dcf + rng.uniform(-jitter, jitter)
        counts = [30 * (1 - d), 30 * d, 30 * (1 - d), 30 * d]  # tp, fp, tn, fn: P_miss = P_fa = d
        kinds = {k: [10.0, 10.0 * (v + rng.uniform(-jitter, jitter))] for k, v in dict(fa).items()}
        rows.append([f"r{i % recs}", 60.0 * (i // recs), 60.0 * (i // recs + 1), counts, counts, kinds])
    return rows


def _system(dev_nc, ood_nc, ood_fa, bounded_dev_nc, bounded_ood_nc, bounded_ood_fa):
    fa, bfa = dict(zip(("music", "tone"), ood_fa)), dict(zip(("music", "tone"), bounded_ood_fa))
    return {"threshold": 0.02, "threshold_fa_bounded": 0.3,
            "dev": {"dcf_no_collar": dev_nc, "fa_bounded": {"dcf": bounded_dev_nc, "dcf_no_collar": bounded_dev_nc}},
            "eval_ood": {"dcf_no_collar": ood_nc, "robustness": {"fa": fa}, "chunks": chunk_rows(ood_nc, fa),
                         "fa_bounded": {"dcf": bounded_ood_nc, "dcf_no_collar": bounded_ood_nc, "fa": bfa,
                                        "chunks": chunk_rows(bounded_ood_nc, bfa, seed=1)}}}


def _silero(nc=0.2137):
    return {"eval_ood": {"dcf_no_collar": nc, "chunks": chunk_rows(nc, seed=2),
                         "fa_bounded": {"dcf_no_collar": 0.31, "chunks": chunk_rows(0.31, seed=3)}}}


def test_goal_at_the_bounded_point_picks_on_dev_and_keeps_silero_at_its_best_dcf():
    systems = {"rnn_hmm": _system(0.05, 0.052, (0.15, 0.11), 0.045, 0.077, (0.05, 0.016)),
               # better on eval_ood at both points, but worse on dev: never the one judged
               "cnn_hmm": _system(0.06, 0.040, (0.05, 0.05), 0.100, 0.030, (0.01, 0.01)),
               "silero_vad": _silero()}
    line = ood_goal_line(systems, "dev")
    assert ": NOT met (RNN + HMM: DCF no collar 5.20 vs silero-vad 21.37, FA music 15.00" in line
    # judged on intervals: DCF 5.2 - 21.37 / 2 is about -5.5 points, music about 15 % (above the 10 % bound)
    assert "FA music: NOT met, 15.0" in line
    # NOT met is shown on the intervals that decided it: one of 3 parts, Bonferroni's 98.33 % each
    assert "(98.33 % bootstrap over 10 1-minute chunks of 2 recordings where music sounds)" in line
    assert "on intervals (%) (98.33 % each: one of 3 parts missing its bound decides, Bonferroni)" in line
    assert "DCF no collar - half of silero-vad's: met, -5.4" in line
    line = ood_goal_line(systems, "dev", bounded=True)
    assert "at the FA-bounded thresholds" in line and "added after the DCF-tuned thresholds were seen to fail" in line
    assert ": **met** (RNN + HMM: DCF no collar 7.70 vs silero-vad 21.37, FA music 5.00, FA tone 1.60)" in line
    bounded = systems["rnn_hmm"]["eval_ood"]["fa_bounded"]
    bounded["chunks"] = chunk_rows(0.077, {"music": 0.13, "tone": 0.016}, seed=1)
    assert ": NOT met (" in ood_goal_line(systems, "dev", bounded=True)
    # a share whose interval holds the bound: neither met nor NOT met, whatever its point says
    bounded["chunks"] = chunk_rows(0.077, {"music": 0.098, "tone": 0.016}, seed=1, jitter=0.03)
    assert ": not shown (" in ood_goal_line(systems, "dev", bounded=True)
    # too few chunks to resample: no verdict, and the line says why instead of judging the points
    bounded["chunks"] = chunk_rows(0.077, {"music": 0.05, "tone": 0.016}, n=3, seed=1)
    line = ood_goal_line(systems, "dev", bounded=True)
    assert ": no verdict (" in line and "fewer than 5 units to resample" in line and "**" not in line
    del systems["rnn_hmm"]["dev"]["fa_bounded"]  # no bounded point on dev: that system is not a candidate
    assert "(CNN + HMM:" in ood_goal_line(systems, "dev", bounded=True)


def test_goal_without_chunk_rows_gets_no_verdict():
    """results.json scored before the chunk rows were kept (the committed reports): the points alone are no verdict."""
    systems = {"rnn_hmm": _system(0.05, 0.052, (0.05, 0.01), 0.045, 0.077, (0.05, 0.016)), "silero_vad": _silero()}
    del systems["rnn_hmm"]["eval_ood"]["chunks"]
    line = ood_goal_line(systems, "dev")
    assert ": no verdict, an interval cannot be computed (no chunk rows" in line and "**" not in line


def test_stage6_cli_to_the_scores_and_results_json_and_back(tmp_path):
    """sad_segments --tune writes the bounded point and its RTTM; score_system scores it; a re-tune on a dev without
    events removes both, and results.json forgets the earlier point (it merges key by key)."""
    from local_models.bin.sad_segments import main

    exp, data = tmp_path / "exp", tmp_path / "data"
    exp.mkdir()
    data.mkdir()
    dec, ref_dir = _sets(exp / "silero_vad")  # exp/silero_vad/decode_dev, exp/silero_vad/dev -> data/dev
    ref_dir.rename(data / "dev")
    th = exp / "silero_vad" / "threshold"
    args = ["--system", "silero_vad", "--threshold-file", str(th), "--tune", str(dec), str(data / "dev"), str(dec)]
    assert main(args) == 0
    assert float((exp / "silero_vad" / "threshold_fa10").read_text()) == 0.65  # music (0.62) out, speech (0.67) in
    m = score_system(exp, "silero_vad", ["dev"], data)
    assert m["threshold_fa_bounded"] == 0.65 and m["dev"]["fa_bounded"]["fa"] == {"music": 0.0, "tone": 0.0, "background": 0.0}
    results = tmp_path / "results.json"
    update_results(results, "fearless_steps/sad1", "mini", {"silero_vad": m})

    (data / "dev" / "events").unlink()
    assert main(args) == 0
    assert not (exp / "silero_vad" / "threshold_fa10").exists() and not (dec / "hyp_fa10.rttm").exists()
    m = score_system(exp, "silero_vad", ["dev"], data)
    assert m["threshold_fa_bounded"] is None and m["dev"]["fa_bounded"] is None
    merged = update_results(results, "fearless_steps/sad1", "mini", {"silero_vad": m})["systems"]["silero_vad"]
    assert merged["threshold_fa_bounded"] is None and merged["dev"]["fa_bounded"] is None
