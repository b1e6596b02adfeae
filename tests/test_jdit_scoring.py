"""egs/kss/tts1 scoring (local_models/jdit/metrics.py, report.py): the length-penalising MCD beside the DTW MCD,
baselines that did not converge left out of the ordering, and the interval verdicts (common/verdict.py)."""
import json
import re
from pathlib import Path

import numpy as np
import pytest
import soundfile

from local_models.common.mcd import mcd_dtw, read_source, score_sources
from local_models.common.plots import _EMBED
from local_models.jdit import metrics, report


def _trajectory(frames=120, order=23, seed=0):
    """A smooth mel-cepstral trajectory: a spoken utterance's slowly changing envelope."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 6 * np.pi, frames)[:, None]
    return np.sin(t * rng.uniform(0.3, 1.5, order + 1) + rng.uniform(0, 6, order + 1)) * rng.uniform(0.2, 1.0,
                                                                                                       order + 1)


def test_one_to_one_mcd_penalises_a_wrong_length_that_dtw_hides():
    ref = _trajectory()
    assert metrics.mcd_one_to_one(ref, ref) == {"mcd_1to1_db": 0.0, "mcd_1to1_sum_db": 0.0, "frames_1to1": 120}
    # the whole utterance in 17 % of its time (every 6th frame): DTW pairs each reference frame with a near one
    fast = ref[::6]
    assert len(fast) / len(ref) == pytest.approx(0.17, abs=0.01)
    dtw = mcd_dtw(ref, fast)["mcd_db"]
    one = metrics.mcd_one_to_one(ref, fast)
    assert one["frames_1to1"] == 120 and dtw < 4.0 and one["mcd_1to1_db"] > 4 * dtw, (dtw, one)
    # a wrong length scores worse the further it is off; c0 (the gain) is left out as in the DTW MCD
    half = ref[::2]
    assert dtw < metrics.mcd_one_to_one(ref, half)["mcd_1to1_db"] < one["mcd_1to1_db"]
    louder = ref.copy()
    louder[:, 0] += 3.0
    assert metrics.mcd_one_to_one(ref, louder)["mcd_1to1_db"] == 0.0
    # longer than the reference: the reference's last frame (its final silence) stands for the missing speech
    slow = np.repeat(ref, 2, axis=0)
    assert metrics.mcd_one_to_one(ref, slow)["frames_1to1"] == 240
    assert metrics.mcd_one_to_one(ref, slow)["mcd_1to1_db"] > 5 * mcd_dtw(ref, slow)["mcd_db"]
    with pytest.raises(ValueError, match="one order"):
        metrics.mcd_one_to_one(ref, ref[:, :10])


def _wavs(d, seconds, sr=16000):
    d.mkdir()
    rng = np.random.default_rng(1)
    for i, s in enumerate(seconds):
        t = np.arange(int(s * sr)) / sr
        x = 0.3 * np.sin(2 * np.pi * (150 + 40 * i) * t * (1 + 0.2 * t)) + 0.01 * rng.standard_normal(len(t))
        soundfile.write(d / f"u{i}.wav", x, sr)


def test_decode_dir_scores_as_mcd_score_does_plus_the_length_measures(tmp_path):
    """The stage's scorer analyses the reference once per set: its DTW numbers are mcd_score's, to the bit."""
    _wavs(tmp_path / "ref", [0.5, 0.6])
    _wavs(tmp_path / "hyp", [0.25, 0.7])
    want = score_sources(str(tmp_path / "ref"), str(tmp_path / "hyp"), True, None, None, 16000,
                         **metrics.MCD_ANALYSIS)
    refs = metrics._RefAnalysis(read_source(str(tmp_path / "ref")), 16000)
    got = metrics.score_decode_dir(refs, str(tmp_path / "ref"), str(tmp_path / "hyp"))
    for key, value in want.items():
        if key != "per_utt":
            assert got[key] == value, key
    for utt, r in want["per_utt"].items():
        assert {k: v for k, v in got["per_utt"][utt].items() if k in r} == r, utt
        assert got["per_utt"][utt]["length_ratio"] == r["hyp_frames"] / r["ref_frames"]
    assert got["per_utt"]["u0"]["length_ratio"] == pytest.approx(0.5, abs=0.02)
    assert got["length_ratio_utt_mean"] == pytest.approx(np.mean([v["length_ratio"] for v in got["per_utt"].values()]))
    one = got["per_utt"]["u0"]
    assert one["frames_1to1"] == one["ref_frames"] and one["mcd_1to1_db"] > one["mcd_db"]
    assert set(refs.done) == {"u0", "u1"}  # cached for the next decode dir of the set


def _row(mcd, n=8, ratio=1.0, failure=None, spread=0.3, one=None, seed=0):
    """A system's decode metrics on `test`: per-utterance MCD sums around MCD (frames 100 each)."""
    rng = np.random.default_rng(seed)
    per = {f"u{i}": {"mcd_sum_db": 100 * (mcd + spread * rng.standard_normal()), "frames": 100,
                     "mcd_1to1_sum_db": 100 * ((one or mcd + 3) + spread * rng.standard_normal()), "frames_1to1": 100}
           for i in range(n)}
    m = {"mcd": mcd, "mcd_1to1": one or mcd + 3, "length_ratio": ratio, "per_utt": per}
    if failure is not None:
        m["attention"] = {"failure_rate": failure}
    return {"test": m}


def _opts(tmp_path, **kw):
    return report.ScoreOptions(systems=("jdit", "tacotron2", "transformer", "fastspeech"), sets=("test",),
                               corpus="toy", exp=tmp_path / "exp", data=tmp_path / "data", **kw)


def test_baselines_that_did_not_converge_are_reported_not_ranked(tmp_path):
    rows = {"jdit": _row(9.0, ratio=0.9), "tacotron2": _row(11.0, failure=0.2, seed=1),
            "transformer": _row(12.0, failure=1.0, seed=2), "fastspeech": _row(8.0, ratio=0.17, seed=3)}
    j = report.judge(_opts(tmp_path), rows, {})
    assert j["not_converged"] == {
        "transformer": "attention failed on 100.0 % of utterances",
        "fastspeech": "its teacher's (Transformer) attention failed on 100.0 % of utterances; length ratio 0.17, "
                      "outside 0.5-2"}
    lines = j["ordering"]
    assert any(l.startswith("MCD ordering on `test`, FastSpeech vs JDI-T (ours): not judged, not converged")
               for l in lines)
    assert not any("FastSpeech − JDI-T" in l for l in lines)  # its 8.0 dB is not ranked above JDI-T's 9.0
    taco = [l for l in lines if l.startswith("MCD (DTW) on `test`, Tacotron2 − JDI-T (ours)")]
    want = (sum(v["mcd_sum_db"] for v in rows["tacotron2"]["test"]["per_utt"].values())
            - sum(v["mcd_sum_db"] for v in rows["jdit"]["test"]["per_utt"].values())) / 800  # frame-pooled, paired
    assert len(taco) == 1 and f": **holds**, {want:+.2f} [+" in taco[0] and "bootstrap over 8 utterances" in taco[0]
    # the default since the departures were re-chosen on dev
    assert taco[0].endswith("; chosen on dev (the departures, first found on test, re-chosen there against the "
                             "paper's settings).")
    # the paper puts the Transformer above JDI-T on KSS: once converged, a lower JDI-T MCD contradicts it
    rows["transformer"] = _row(12.0, failure=0.1, seed=2)
    trf = next(line for line in report.judge(_opts(tmp_path), rows, {})["ordering"]
               if line.startswith("MCD (DTW) on `test`, Tr"))
    assert "(the paper's KSS MOS puts Transformer above): does NOT hold, +" in trf
    # one length rule for every system, JDI-T included: then nothing is ranked
    rows["jdit"] = _row(9.0, ratio=2.5)
    assert all("not judged" in l for l in report.judge(_opts(tmp_path), rows, {})["ordering"])


def test_ordering_verdict_follows_the_interval_not_the_point(tmp_path):
    close = {"jdit": _row(9.0, spread=2.0), "tacotron2": _row(9.3, spread=2.0, failure=0.0, seed=5)}
    line = report.judge(_opts(tmp_path), close, {})["ordering"][0]
    assert ": not told apart, " in line and "**" not in line
    # speakers: the bootstrap resamples them, not the utterances
    (tmp_path / "data/test").mkdir(parents=True)
    (tmp_path / "data/test/utt2spk").write_text("".join(f"u{i} s{i % 3}\n" for i in range(8)))
    judged = report.judge(_opts(tmp_path), close, {})
    assert "bootstrap over 3 speakers" in judged["ordering"][0]
    # one seed per system: the report says the intervals do not cover training noise, where it judges anything
    assert report.SEED_NOTE in report._verdict_lines(judged, {})
    assert report.SEED_NOTE not in report._verdict_lines(dict(judged, lines=[]), {})


def _durations(err, n_utts=10, tokens=6):
    """Duration tables with the aligner off by ERR frames on every other token (MAE err / 2)."""
    ref = {f"u{i}": np.full(tokens, 8) for i in range(n_utts)}
    hyp = {u: d + np.array([err if k % 2 == 0 else 0 for k in range(tokens)]) for u, d in ref.items()}
    return {("test", "events"): {"jdit_aligner": metrics.duration_accuracy(hyp, ref, "x")}}


def test_duration_goal_is_judged_on_the_upper_end_of_its_interval(tmp_path):
    opts = _opts(tmp_path, chosen_on="dev", sealed_sets=("test",))
    assert report.judge(opts, {}, _durations(2))["goals"] == [
        "JDI-T aligner duration MAE on `test` against the engine events (goal < 2 frames): **met**, 1.00 [1.00, 1.00] "
        "(95 % bootstrap over 10 utterances); chosen on dev (the departures, first found on test, re-chosen there "
        "against the paper's settings)."]
    assert "NOT met, 3.00" in report.judge(opts, {}, _durations(6))["goals"][0]
    # utterances that disagree: the interval straddles the goal
    durs = _durations(2)
    per = durs[("test", "events")]["jdit_aligner"]["per_utt"]
    for i, u in enumerate(sorted(per)):
        per[u] = [6 * (i % 2) * 4, 6]  # MAE 0 or 4 frames
    assert ": not shown, 2.00 [" in report.judge(opts, {}, durs)["goals"][0]
    # a set of one utterance gives no interval: not judged
    one = {("test", "events"): {"jdit_aligner": metrics.duration_accuracy({"a": np.array([1])}, {"a": np.array([1])},
                                                                          "x")}}
    assert report.judge(opts, {}, one)["goals"][0].endswith(": not judged, 0.00 frames on 1 utterance (an interval "
                                                             "needs 2).")
    # the dev set's rows are shown, never judged against the goal
    assert report.judge(opts, {}, {("dev", "events"): _durations(2)[("test", "events")]})["goals"] == []


def test_chosen_on_says_where_the_departures_were_chosen(tmp_path):
    assert report.chosen_on_text(_opts(tmp_path, sealed_sets=("test", "ood"))).startswith(
        "dev (the departures, first found on test, re-chosen there")  # the default
    opts = _opts(tmp_path, sealed_sets=("test", "ood"), chosen_on="test")
    assert report.chosen_on_text(opts).startswith("test (JDI-T's departures from the paper were chosen on this sealed")
    (tmp_path / "exp/tts_jdit").mkdir(parents=True)
    (tmp_path / "exp/tts_jdit/config.yaml").write_text("tts_conf:\n  aligner_transition_agent: false\n")
    assert report.chosen_on_text(opts) == "no set (JDI-T with the paper's aligner settings)"
    (tmp_path / "exp/tts_jdit/config.yaml").write_text("tts_conf:\n  guided_attn_weight: 50.0\n")
    assert report.chosen_on_text(report.ScoreOptions(("jdit",), ("test",), "c", exp=tmp_path / "exp",
                                                     chosen_on="dev2")) == "dev2"


def test_results_json_keeps_the_looks_and_the_verdicts(tmp_path, monkeypatch):
    """Two scorings of the sealed test set under one configuration: 2 looks, said in RESULTS.md; a user's own set
    scored afterwards keeps the looks of the rows it shows."""
    from local_models.bin import jdit_score

    monkeypatch.chdir(tmp_path)
    # scored from a modified checkout, every scoring is a look, whatever the checkout this test runs from
    commit = {"now": "abc1234+dirty"}
    monkeypatch.setattr("local_models.common.sealed.git_commit", lambda *a, **k: commit["now"])
    (tmp_path / "conf.yaml").write_text("a: 1\n")
    per_utt = {f"u{i}": dict(hyp_frames=90, ref_frames=100, mcd_sum_db=900.0 + i, frames=100,
                             mcd_1to1_sum_db=1200.0, frames_1to1=100) for i in range(3)}
    for x in ("test", "mine"):
        (tmp_path / f"data/{x}").mkdir(parents=True)
        (tmp_path / f"data/{x}/wav.scp").write_text("")
        d = tmp_path / f"exp/tts_jdit/decode_{x}"
        d.mkdir(parents=True)
        (d / "synth.json").write_text(json.dumps(dict(
            utterances=3, audio_seconds=1.0, acoustic_rtf=0.02, vocoder_rtf=0.3, threads=1,
            per_utt={u: dict(peak=0.5, hit_maxlen=False) for u in per_utt})))
        (d / "mcd.json").write_text(json.dumps(dict(
            mcd_db_frame_pooled=9.01, mcd_db_utt_mean=9.01, lf0_rmse_frame_pooled=0.2, vuv_error_frame_pooled=0.1,
            mcd_1to1_db_frame_pooled=12.0, settings=dict(sample_rates=[16000], order=[23], alpha=[0.41],
                                                         shift_ms=5.0), per_utt=per_utt)))
    args = ["--systems", "jdit", "--corpus", "toy", "--config-files", "conf.yaml", "--option", "vocoder=griffin_lim"]
    jdit_score.main([*args, "--sets", "test"])
    res = json.loads((tmp_path / "exp/results.json").read_text())
    assert res["sealed_looks"]["looks"] == {"test": 1} and res["systems"]["jdit"]["test"]["mcd_1to1"] == 12.0
    assert "per_utt" not in res["systems"]["jdit"]["test"]
    md = (tmp_path / "RESULTS.md").read_text()
    assert "Sealed sets scored under this configuration: test 1 time." in md
    assert "| JDI-T (ours) | 3.77 | 3.52 | 9.01 | 12.00 | 0.200 | 10.0 | 0.90 | no attention at synthesis | yes |" in md
    assert res["headline"][:2] == ["`test` MCD (DTW): JDI-T (ours) 9.01 dB",
                                   "`test` MCD 1:1 (penalises a wrong length) / length ratio: JDI-T (ours) 12.00 dB / "
                                   "0.90"]
    jdit_score.main([*args, "--sets", "test"])
    assert "test 2 times (test scored more than once" in (tmp_path / "RESULTS.md").read_text()
    jdit_score.main([*args, "--sets", "mine"])
    assert json.loads((tmp_path / "exp/results.json").read_text())["sealed_looks"]["looks"] == {"test": 2}
    (tmp_path / "conf.yaml").write_text("a: 2\n")  # another configuration: its looks start again
    jdit_score.main([*args, "--sets", "test"])
    assert json.loads((tmp_path / "exp/results.json").read_text())["sealed_looks"]["looks"] == {"test": 1}
    # scored by a clean commit: the same files again are a rescoring; a changed one (an MCD) is another look
    commit["now"] = "abc1234"
    jdit_score.main([*args, "--sets", "test"])
    jdit_score.main([*args, "--sets", "test"])
    looks = json.loads((tmp_path / "exp/results.json").read_text())["sealed_looks"]
    assert looks["looks"] == {"test": 2} and looks["rescored"] == {"test": 1}
    mcd = tmp_path / "exp/tts_jdit/decode_test/mcd.json"
    mcd.write_text(mcd.read_text().replace("9.01", "9.02", 1))
    jdit_score.main([*args, "--sets", "test"])
    assert json.loads((tmp_path / "exp/results.json").read_text())["sealed_looks"]["looks"] == {"test": 3}
    # so is a new utt2spk (the bootstrap's clusters: it can move an interval with no output changed)
    (tmp_path / "data/test/utt2spk").write_text("".join(f"{u} s{i % 2}\n" for i, u in enumerate(per_utt)))
    jdit_score.main([*args, "--sets", "test"])
    assert json.loads((tmp_path / "exp/results.json").read_text())["sealed_looks"]["looks"] == {"test": 4}
    with pytest.raises(SystemExit, match="--option vocoder: expected KEY=VALUE"):
        jdit_score.main(["--systems", "jdit", "--corpus", "toy", "--sets", "test", "--option", "vocoder"])


def test_readme_cell_reads_the_interval_verdicts(tmp_path):
    """README's KSS cell from the new headline: the FastSpeech ordering verdict (or 'not judged' when it did not
    converge) and the goal's verdict; the old wording (the committed RESULTS.md) is still read as before."""
    from local_models.common.readme import HOLDS, cell

    rows = {"jdit": _row(9.0, ratio=0.9), "transformer": _row(12.0, failure=0.0, seed=2),
            "fastspeech": _row(11.0, seed=3)}
    j = report.judge(_opts(tmp_path, chosen_on="dev"), rows, _durations(6))
    claims = report.headline(tmp_path / "exp", ("test",), rows, {}, j)
    text, ok = cell("egs/kss/tts1", claims)
    diff = next(l for l in claims if "FastSpeech − JDI-T" in l).split(": ")[1].split(", ")[1].split(" ")[0]
    assert ok and text == (f"MCD FastSpeech − JDI-T {diff} dB (paper MOS 3.23 vs 3.52): {HOLDS}; aligner MAE 3.00 "
                           "frames (goal < 2): **not met**")
    rows["fastspeech"] = _row(8.0, ratio=0.17, seed=3)
    claims = report.headline(tmp_path / "exp", ("test",), rows, {}, report.judge(_opts(tmp_path), rows, {}))
    assert cell("egs/kss/tts1", claims) == (
        "MCD JDI-T 9.00 dB; vs FastSpeech (paper MOS 3.52 vs 3.23): not judged, not converged", True)
    # FastSpeech not judged, Tacotron2 converged: its ordering (DTW, and 1:1 beside it) is the one the cell gives
    rows["tacotron2"] = _row(11.0, failure=0.0, seed=4)
    claims = report.headline(tmp_path / "exp", ("test",), rows, {}, report.judge(_opts(tmp_path), rows, {}))
    text, ok = cell("egs/kss/tts1", claims)
    assert ok and re.fullmatch(rf"MCD Tacotron2 − JDI-T \+\d\.\d\d dB \(paper MOS 3\.33 vs 3\.52\): "
                               rf"{re.escape(HOLDS)}; 1:1 [^;]+", text), text
    old = ["`test` MCD: JDI-T (ours) 9.44 dB, FastSpeech 11.03 dB, Transformer 12.39 dB"]
    assert cell("egs/kss/tts1", old) == (f"MCD JDI-T 9.44 vs FastSpeech 11.03 dB (paper MOS 3.52 vs 3.23): {HOLDS}",
                                         True)


def _variant(root, name, errors, n_utts=12, tokens=8, seed=0):
    """A work dir whose JDI-T aligner is off by ERRORS frames on every token (alternating sign) of dev."""
    rng = np.random.default_rng(seed)
    work = root / name
    (work / "data" / "dev").mkdir(parents=True)
    align = work / "exp" / "tts_jdit" / "align_dev"
    align.mkdir(parents=True)
    true, hyp = [], []
    for i in range(n_utts):
        d = rng.integers(3, 12, tokens)
        e = np.where(np.arange(tokens) % 2 == 0, errors, -errors)
        true.append(f"u{i:02d} " + " ".join(map(str, d)))
        hyp.append(f"u{i:02d} " + " ".join(map(str, np.maximum(0, d + e))))
    (work / "data" / "dev" / "durations").write_text("\n".join(true) + "\n")
    (align / "durations_aligner").write_text("\n".join(hyp) + "\n")
    return work


def test_choose_keeps_a_departure_only_when_its_interval_is_below_the_paper(tmp_path):
    paper = _variant(tmp_path, "paper", 2)
    better = _variant(tmp_path, "departures", 1)
    kept, lines = report.choose({"departures": better, "paper": paper})
    text = "\n".join(lines)
    assert kept == "departures" and "Kept: **departures**" in text
    assert "| departures |" in text and "-1.00 [-1.00, -1.00]" in text  # 1 frame better on every token
    # a dev-only report says so, and where and by what its variants were trained
    assert "No sealed set was scored: every variant on `dev` only." in text and "## Environment" in text
    assert "- trained: `jdit (departures)`, `jdit (paper)`: not recorded" in text
    # no better than the paper's settings: the paper's are kept (the default wins a tie)
    same = _variant(tmp_path, "same", 2)
    assert report.choose({"same": same, "paper": paper})[0] == "paper"
    worse = _variant(tmp_path, "worse", 3)
    assert report.choose({"worse": worse, "paper": paper})[0] == "paper"
    # a variant without its dev alignment: named
    (worse / "exp" / "tts_jdit" / "align_dev" / "durations_aligner").unlink()
    with pytest.raises(FileNotFoundError, match="align_dev"):
        report.choose({"worse": worse, "paper": paper})
    with pytest.raises(ValueError, match="'paper'"):
        report.choose({"worse": worse})


def test_jdit_choose_command(tmp_path, capsys):
    from local_models.bin import jdit_choose

    paper, better = _variant(tmp_path, "paper", 2), _variant(tmp_path, "departures", 1)
    out = tmp_path / "choice.md"
    assert jdit_choose.main(["--out", str(out), f"departures={better}", f"paper={paper}"]) == 0
    assert capsys.readouterr().out.strip() == "departures" and "Kept: **departures**" in out.read_text()
    with pytest.raises(ValueError, match="NAME=WORKDIR"):
        jdit_choose.main(["--out", str(out), "paper"])


def test_vocoder_summary_names_each_architecture(tmp_path):
    """exp/vocoder_<name>: the steps trained and the generator, for Parallel WaveGAN and Multi-band MelGAN; whether
    the adversarial loss ever ran."""
    import shutil

    import yaml

    recipe = Path(__file__).resolve().parents[1] / "egs" / "kss" / "tts1" / "conf" / "tuning"
    for name, want in (("pwg", "10 layers x 16 residual channels"),
                       ("mbmelgan", "4 sub-bands, 128 channels, upsampling 4 x 4 x 4")):
        d = tmp_path / f"vocoder_{name}"
        d.mkdir()
        shutil.copy(recipe / f"train_{name}_tiny.yaml", d / "config.yml")
        (d / "checkpoint-500steps.pkl").write_bytes(b"")
        text = report.vocoder_summary(d)
        assert text.startswith("500 steps") and want in text, text
        conf = yaml.safe_load((d / "config.yml").read_text())
        adversarial = conf["discriminator_train_start_steps"] < conf["train_max_steps"]
        assert ("adversarial loss from step" in text) == adversarial and ("STFT losses only" in text) != adversarial
    assert report.vocoder_summary(tmp_path / "nothing") == ""


def test_a_vocoder_is_named_by_its_own_config_wherever_it_sits(tmp_path):
    """A trained vocoder's name comes from the config.yml beside its checkpoint (generator type; a MelGAN with
    sub-bands is Multi-band MelGAN), not from the dir it was copied to; without a config, stage 4's exp dir name;
    the reference-mel row of a report names it so."""
    import shutil

    import yaml

    from local_models.jdit.vocoder import vocoder_label

    tuning = Path(__file__).resolve().parents[1] / "egs" / "kss" / "tts1" / "conf" / "tuning"
    for name, want in (("pwg", "Parallel WaveGAN"), ("mbmelgan", "Multi-band MelGAN")):
        d = tmp_path / "elsewhere" / name
        d.mkdir(parents=True)
        shutil.copy(tuning / f"train_{name}_tiny.yaml", d / "config.yml")
        assert vocoder_label(str(d / "checkpoint.pkl")) == want
    one_band = yaml.safe_load((tuning / "train_mbmelgan_tiny.yaml").read_text())
    one_band["generator_params"]["out_channels"] = 1
    (tmp_path / "elsewhere" / "mbmelgan" / "config.yml").write_text(yaml.safe_dump(one_band))
    assert vocoder_label(str(tmp_path / "elsewhere" / "mbmelgan" / "checkpoint.pkl")) == "MelGAN"
    assert vocoder_label(str(tmp_path / "exp" / "vocoder_mbmelgan" / "checkpoint.pkl")) == "Multi-band MelGAN"
    assert vocoder_label(str(tmp_path / "mine.pkl")) == "mine.pkl"
    assert vocoder_label("griffin_lim") == "Griffin-Lim"

    # a decode dir of the recipe whose synth.json names the copied Multi-band MelGAN by a path relative to the recipe
    shutil.copy(tuning / "train_mbmelgan_tiny.yaml", tmp_path / "elsewhere" / "mbmelgan" / "config.yml")
    dec = tmp_path / "exp" / "gt_mel" / "decode_test"
    dec.mkdir(parents=True)
    per = {"u1": dict(frames=8, seconds=0.1, peak=0.5, hit_maxlen=False)}
    (dec / "synth.json").write_text(json.dumps(dict(
        vocoder="elsewhere/mbmelgan/checkpoint.pkl", utterances=1, audio_seconds=0.1, acoustic_rtf=0.0,
        vocoder_rtf=0.01, threads=1, per_utt=per)))
    m = report.decode_metrics(dec)
    assert m["vocoder"] == "mbmelgan" and m["vocoder_label"] == "Multi-band MelGAN"
    assert report.row_name("gt_mel", {"test": m}) == "GT mel + Multi-band MelGAN"


def test_the_report_shows_one_attention_plot_per_aligned_set(tmp_path):
    exp = tmp_path / "exp"
    for x, utts in (("test", ["b_02", "a_01"]), ("ood", ["o (0)"]), ("dev", [])):
        d = exp / "tts_jdit" / f"align_{x}" / "images"
        d.mkdir(parents=True)
        for u in utts:
            (d / f"{u}.png").write_bytes(f"{x} {u}".encode())
    figs = report.attention_figures(exp)
    # a name a markdown link can hold, whatever the utterance id
    assert {n: p.read_bytes() for n, p in figs.items()} == {"attention_ood__o--0-.png": b"ood o (0)",
                                                             "attention_test__a_01.png": b"test a_01"}
    lines = report._speed_lines(exp, {})
    embeds = [line for line in lines if line.startswith("![")]
    assert embeds == ["![JDI-T aligner attention, ood o--0-](exp/images/attention_ood__o--0-.png)",
                      "![JDI-T aligner attention, test a_01](exp/images/attention_test__a_01.png)"]
    assert all(_EMBED.fullmatch(e) for e in embeds)  # write_report will copy and link each
    assert "`" + (exp / "tts_jdit/align_test/images/b_02.png").as_posix() + "`" in "\n".join(lines)  # all listed
