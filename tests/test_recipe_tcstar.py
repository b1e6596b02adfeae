"""Smoke run of egs/tcstar/tts1 on a tiny mini corpus, then decoding a data dir with transcripts only; the duration
model, two-stage synthesis with predicted durations and the packed models speaking text from the archive alone."""
import json
import math
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import soundfile
from recipe_runner import headline_of_run, run_recipe as run

from local_models.common.results import git_commit
from local_models.common.sealed import clean_commit

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs" / "tcstar" / "tts1"
SYSTEMS = "small_rnn big_salad big_salad_win"
pytestmark = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").exists(),
                                reason="needs tools/venv (make install)")
SMALL = ("--nj", "1", "--mini-utts", "24", "--systems", SYSTEMS, "--train-config-suffix", "_smoke", "--streams", "8", "--window", "40",
         "--num-wavs", "2")


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    dst = tmp_path_factory.mktemp("tcstar") / "tts1"
    shutil.copytree(RECIPE, dst, ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads", "RESULTS.md"))
    run(dst, *SMALL)
    return dst


def reference_metrics(dump, decode):
    """The decode's MCD with and without silence through common/mcd.py's duration-aligned MCD (the MUSA / SALAD
    definition, checked on hand examples in tests/test_mcd.py), the speech frames read here from the dump's phones
    and frames per phone (sil / pau: the front end's silences), and V/UV accuracy [%] (the last of the 43 dims)."""
    import kaldiio
    import numpy as np

    from local_models.common.datadir import read_table
    from local_models.common.mcd import mcd_corpus

    ref, hyp = kaldiio.load_scp(str(dump / "acou.scp")), kaldiio.load_scp(str(decode / "feats.scp"))
    dur, phones = read_table(dump / "dur"), read_table(dump / "phones")
    speech = {u: np.repeat([p not in ("sil", "pau") for p in phones[u].split()], [int(d) for d in dur[u].split()])
              for u in hyp}
    pairs = {u: (ref[u][:, :40], hyp[u][:, :40]) for u in hyp}
    every = mcd_corpus(pairs, dtw=False)
    nosil = mcd_corpus({u: (r[speech[u]], h[speech[u]]) for u, (r, h) in pairs.items()}, dtw=False)
    hits = sum(int(np.sum((ref[u][:, 42] > 0.5) == (hyp[u][:, 42] > 0.5))) for u in hyp)
    return (every["mcd_db_frame_pooled"], nosil["mcd_db_frame_pooled"], nosil["frames"],
            100 * hits / every["frames"])


def test_full_run_trains_and_scores_every_model(recipe):
    results = json.loads((recipe / "exp" / "results.json").read_text())
    assert results["corpus"] == "mini" and results["recipe"] == "tcstar/tts1"
    for spk in ("M1", "F1"):
        for s in SYSTEMS.split():
            m = results["systems"][f"{spk}_{s}"]
            # the stored numbers are the reference metrics of the decoded and the reference frames
            mcd, nosil, speech, vuv = reference_metrics(recipe / "dump" / spk / f"{spk}_test",
                                                        recipe / "exp" / spk / s / f"decode_{spk}_test")
            assert m["mcd"] == pytest.approx(mcd, rel=1e-9) and m["vuv_acc"] == pytest.approx(vuv, rel=1e-9)
            assert m["mcd_speech"] == pytest.approx(nosil, rel=1e-9) and m["speech_frames"] == speech
            assert 0 < speech < m["frames"]  # the labels' sil at each utterance's ends is left out
            assert m["f0_rmse"] > 0
            # audible (a 2-epoch smoke model may still clip: its c0 is far off; the demo run reports clipping)
            assert m["wav_rms_dbfs_min"] > -60 and 0 <= m["wav_clipped_max"] <= 1
            d = recipe / "exp" / spk / s
            assert (d / "valid.mcd.best.pth").exists()
            assert len(list((d / f"decode_{spk}_test" / "wav").glob("*.wav"))) == 2
    conf = (recipe / "exp" / "M1" / "big_salad_win" / "config.yaml").read_text()
    assert "window: 16" in conf and "stateful: true" in conf
    md = (recipe / "RESULTS.md").read_text()
    # no same-size SALAD / RNN pair here: the windowed model's price is the comparison, judged on its interval
    window = [c for c in headline_of_run(recipe) if "windowed - full Big SALAD MCD (test, no silence)" in c]
    assert len(window) == 2 and all(re.search(r": (\*\*met\*\*|not shown|NOT met), [+-]\d+\.\d+ \[[+-]\d+\.\d+, "
                                              r"[+-]\d+\.\d+\] \(95 % bootstrap over \d+ utterances\)", c)
                                    for c in window), window
    # the test sets are sealed: this first scoring is one look at each, said at the top of RESULTS.md
    assert results["sealed_looks"]["looks"] == {"M1_test": 1, "F1_test": 1}
    assert "Sealed sets scored under this configuration: M1_test 1 time, F1_test 1 time." in md.split("## Headline")[0]
    assert results["environment"]["trained"]["M1_big_salad_win"].startswith("commit ")
    assert "Table 2 shape" in md and "| 5.18 |" in md and "| 5.43 |" in md  # the paper's numbers stand beside ours
    assert "MCD gap SALAD - RNN" in md
    assert (recipe / "exp" / "images" / "f0_hist_M1.png").is_file()
    # Fig. 2 shown in the report, copied beside it (exp/ is not committed)
    assert "![F0 histograms, M1](images/RESULTS/f0_hist_M1.png)" in md
    assert (recipe / "images" / "RESULTS" / "f0_hist_M1.png").read_bytes() == \
        (recipe / "exp" / "images" / "f0_hist_M1.png").read_bytes()


def test_duration_model_and_predicted_duration_synthesis_are_scored(recipe):
    from local_models.common.datadir import read_table

    results = json.loads((recipe / "exp" / "results.json").read_text())["systems"]
    for spk in ("M1", "F1"):
        d = results[f"{spk}_duration"]
        assert d["phones"] > 50 and 0 < d["dur_rmse_frames"] < 100 and d["dur_rmse_ms"] == 5 * d["dur_rmse_frames"]
        # a 2-epoch model may predict one constant duration: then Pearson r is undefined (NaN), never made up
        assert math.isnan(d["dur_pearson"]) or -1 <= d["dur_pearson"] <= 1
        assert 0.2 < d["length_ratio"] < 5 and d["best_epoch"] >= 1
        pred = read_table(recipe / "exp" / spk / "duration" / f"decode_{spk}_test" / "durations")
        labelled = read_table(recipe / "dump" / spk / f"{spk}_test" / "dur")
        assert pred.keys() == labelled.keys()
        for utt, frames in pred.items():  # one integer >= 1 per phone of the labels
            assert len(frames.split()) == len(labelled[utt].split()) and min(map(int, frames.split())) >= 1
        for s in SYSTEMS.split():
            m = results[f"{spk}_{s}"]
            # the labelled-duration synthesis through DTW: a path never costs more per frame than the diagonal
            assert 0 < m["mcd_gt_dtw"] <= m["mcd"] + 1e-9
            # the synthesis from the predicted durations has exactly their frames, and is what was scored
            sc = json.loads((recipe / "exp" / spk / s / f"decode_{spk}_test_pred" / "scores.json").read_text())
            assert sc["frames_pred"] == sum(sum(map(int, v.split())) for v in pred.values())
            assert sc["mcd_db"] == m["mcd_pred"] and math.isfinite(m["mcd_pred"]) and m["f0_rmse_pred"] > 0
            assert m["length_ratio_pred"] == d["length_ratio"]
            assert len(list((recipe / "exp" / spk / s / f"decode_{spk}_test_pred" / "wav").glob("*.wav"))) == 2
    md = (recipe / "RESULTS.md").read_text()
    assert "## Two-stage synthesis: predicted durations (MUSA duration model)" in md and "| MUSA LSTM |" in md
    assert "| MCD [dB] labelled durations, 1:1 (Table 2) | labelled, DTW | predicted, DTW |" in md
    assert f"| {results['M1_big_salad']['mcd_pred']:.2f} |" in md and "DTW path" in md


def test_packed_models_speak_fresh_text_from_the_archive_alone(recipe, tmp_path):
    from local_models.common.pack import read_card

    for spk in ("M1", "F1"):
        for s in SYSTEMS.split():
            archive = recipe / "exp" / spk / s / "packed" / "model.tar.gz"
            card = read_card(archive)
            assert card["system"] == f"{spk}/{s}" and card["sample_rate"] == 16000 and card["corpus"] == "mini"
            assert {"mcd_speech", "mcd", "mcd_pred", "mcd_gt_dtw", "dur_rmse_frames", "dur_rmse_ms"} <= set(
                card["metrics"])
            assert card["training"]["acoustic"]["steps"] > 0 and card["training_data"]["utterances"] > 10
    copy = tmp_path / "model.tar.gz"
    # Small RNN: its recurrent output layer is tanh-bounded, so even after 2 epochs its frames stay in the
    # training range (a 2-epoch SALAD's linear output can put c0 far off and clip)
    shutil.copy(recipe / "exp" / "M1" / "small_rnn" / "packed" / "model.tar.gz", copy)
    out = tmp_path / "out.wav"
    text = "Mañana lloverá en Valencia: 12 grados."  # no training sentence has a weather word
    env = {**os.environ, "SPEECH_RECIPES_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run([str(ROOT / "tools" / "venv" / "bin" / "python"), "-m", "local_models.bin.text_to_speech",
                           "--model", str(copy), "--text", text, "-o", str(out), "--threads", "1"],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    wav, sr = soundfile.read(out)
    rms = 20 * math.log10(max(float((wav ** 2).mean()) ** 0.5, 1e-12))
    assert sr == 16000 and 1.0 < len(wav) / sr < 15 and rms > -60 and (abs(wav) >= 0.999).mean() < 0.01
    proc = subprocess.run([str(ROOT / "tools" / "venv" / "bin" / "python"), "-m", "local_models.bin.text_to_speech",
                           "--model", str(copy), "--text", "Hola 你好", "-o", str(tmp_path / "bad.wav")],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 2 and "'你'" in proc.stderr and not (tmp_path / "bad.wav").exists()


def test_training_used_the_stateful_windows(recipe):
    pos = (recipe / "dump" / "M1" / "train_windows" / "pos").read_text().split("\n")
    assert pos[0].split()[1:] == ["0", "0"] and pos[1].split()[1:] == ["0", "1"]
    n_streams = len({line.split()[2] for line in pos if line})
    assert n_streams == 8


def test_rerun_of_scoring_is_identical(recipe):
    """Decoding again (the stateful windowed model, one speaker: the others decode alike), then scoring every
    system again, changes no number."""
    before = json.loads((recipe / "exp" / "results.json").read_text())
    md = (recipe / "RESULTS.md").read_text()
    run(recipe, *SMALL, "--stage", "5", "--stop-stage", "5", "--speakers", "M1", "--systems", "big_salad_win")
    run(recipe, *SMALL, "--stage", "6", "--stop-stage", "6")
    after = json.loads((recipe / "exp" / "results.json").read_text())
    assert before["systems"] == after["systems"] and before["comparisons"] == after["comparisons"]
    # ... and the decodes came out byte for byte as before: scored by the same clean commit, a rescoring, not a new
    # look at the sealed sets, and RESULTS.md says so (from a modified checkout the code may differ: a look)
    assert after["sealed_looks"]["config"] == before["sealed_looks"]["config"]
    if clean_commit(git_commit()):
        assert after["sealed_looks"]["looks"] == before["sealed_looks"]["looks"]
        assert after["sealed_looks"]["rescored"] == {x: 1 for x in before["sealed_looks"]["looks"]}
        assert "Rescored from the same outputs" in (recipe / "RESULTS.md").read_text()
    else:
        assert after["sealed_looks"]["looks"] == {x: n + 1 for x, n in before["sealed_looks"]["looks"].items()}

    def unchanged(text):  # all but the looks sentence and the scoring date
        return [line for line in text.splitlines() if not line.startswith(("Sealed sets scored", "- date:"))]

    assert unchanged((recipe / "RESULTS.md").read_text()) == unchanged(md)
    # a decode that changes (one test utterance's scores) is a new look
    per_utt = next((recipe / "exp").glob("M1/big_salad_win/decode_M1_test/per_utt.txt"))
    keep = per_utt.read_bytes()
    try:
        per_utt.write_bytes(keep + b"\n")
        run(recipe, *SMALL, "--stage", "6", "--stop-stage", "6")
        looks = json.loads((recipe / "exp" / "results.json").read_text())["sealed_looks"]["looks"]
        # a modified checkout: every scoring a look (the identical rerun above too)
        dirty = int(not clean_commit(git_commit()))
        assert looks["M1_test"] == before["sealed_looks"]["looks"]["M1_test"] + 1 + dirty
        assert looks["F1_test"] == before["sealed_looks"]["looks"]["F1_test"] + 2 * dirty
    finally:
        per_utt.write_bytes(keep)


def test_decodes_an_unseen_set_with_transcripts_only(recipe):
    """A user's set: other voice, 22.05 kHz, no labels, straight to the decode stage (stages 2-3 never saw it):
    stage 5 labels it (espeak-ng alignment) and extracts its features itself."""
    from local_models.common.synth import Voice, synthesize

    d = recipe / "data" / "other"
    (d / "wav").mkdir(parents=True)
    texts = {"X_1": "La comisión presentará el informe mañana.", "X_2": "¿Quién defiende la reforma?"}
    for utt, text in texts.items():
        u = synthesize(text, Voice("es", "m6", rate=150, pitch=30))
        soundfile.write(d / "wav" / f"{utt}.wav", u.wave, u.sample_rate)
    (d / "wav.scp").write_text("".join(f"{u} {d / 'wav' / u}.wav\n" for u in texts))
    (d / "text").write_text("".join(f"{u} {t}\n" for u, t in texts.items()))
    (d / "utt2spk").write_text("".join(f"{u} X\n" for u in texts))
    (d / "spk2utt").write_text("X X_1 X_2\n")
    # one system (every system decodes through the same stage-5 path; the smoke run decoded them all)
    run(recipe, *SMALL, "--stage", "5", "--stop-stage", "6", "--test-sets", "other", "--systems", "big_salad")
    assert len((d / "lab.scp").read_text().splitlines()) == 2
    results = json.loads((recipe / "exp" / "results.json").read_text())["systems"]
    # decoded by each speaker's model (two models, two numbers), scored against the new voice, the silences the
    # aligner put at the ends of each utterance left out of the MCD without silence
    assert results["M1_big_salad"]["other"]["mcd"] != results["F1_big_salad"]["other"]["mcd"]
    for spk in ("M1", "F1"):
        sums = json.loads((recipe / "exp" / spk / "big_salad" / "decode_other" / "per_utt_sums.json").read_text())
        assert set(sums) == set(texts) and all(0 < v["speech_frames"] < v["frames"] for v in sums.values())


def test_empty_transcript_is_a_clear_error(recipe):
    d = recipe / "data" / "bad"
    shutil.copytree(recipe / "data" / "other", d)
    (d / "lab.scp").unlink()
    (d / "text").write_text("X_1 La comisión.\nX_2 \n")
    proc = run(recipe, *SMALL, "--stage", "2", "--stop-stage", "2", "--test-sets", "bad", check=False)
    assert proc.returncode != 0
    assert "text:2" in proc.stderr and "empty transcript" in proc.stderr
    assert not (d / "lab.scp").exists()


def test_latency_benchmark_per_precision_with_distortion(recipe):
    """benchmarks/salad_latency.py times every precision (both models of a ratio in the same one), scores the
    trained models' synthesis in each precision, and stage 6 turns it into Table 3 + the acceptance lines."""
    import subprocess
    import sys

    py = str(ROOT / "tools" / "venv" / "bin" / "python")
    common = ["--recipe", str(recipe), "--max-seconds", "1.5", "--long-steps", "2", "--max-files", "2",
              "--repeats", "1", "--precision", "fp32", "int8"]
    proc = subprocess.run([py, str(ROOT / "benchmarks" / "salad_latency.py"), *common, "--trained", "--mcd",
                           "--systems", "big_salad big_salad_win", "--out", str(recipe / "exp" / "lat_mcd.json")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rep = json.loads((recipe / "exp" / "lat_mcd.json").read_text())
    decoded = json.loads((recipe / "exp" / "M1" / "big_salad" / "decode_M1_test" / "scores.json").read_text())
    # fp32 scoring in the benchmark is the decode stage's scoring
    assert abs(rep["by_precision"]["fp32"]["test_mcd_db"]["big_salad"] - decoded["mcd_db"]) < 1e-3
    int8 = rep["by_precision"]["int8"]["test_mcd_db"]["big_salad"]  # quantised: other frames, another MCD
    assert math.isfinite(int8) and int8 != rep["by_precision"]["fp32"]["test_mcd_db"]["big_salad"]
    assert rep["mcd_model_params"]["big_salad"] == rep["by_precision"]["fp32"]["fits"]["big_salad"]["params"]  # --trained
    # speed at the smoke sizes, Big RNN included, then scoring reads it
    proc = subprocess.run([py, str(ROOT / "benchmarks" / "salad_latency.py"), *common, "--config-suffix", "_smoke",
                           "--systems", "big_rnn big_salad big_salad_win"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lat = json.loads((recipe / "exp" / "latency.json").read_text())
    assert set(lat["by_precision"]) == {"fp32", "int8"} and lat["precision"] == "fp32"
    assert lat["by_precision"]["int8"]["fits"]["big_rnn"]["speedup_vs_big_rnn"] == 1.0
    assert lat["by_precision"]["int8"]["fits"]["big_salad"]["params"] == lat["fits"]["big_salad"]["params"] > 0
    run(recipe, *SMALL, "--stage", "6", "--stop-stage", "6")
    md = (recipe / "RESULTS.md").read_text()
    assert "int8: at 1.5 s [s]" in md and "no pass / fail bar" in md and "windowed - full Big SALAD MCD" in md
    assert "](images/RESULTS/latency_fp32.png)" in md and (recipe / "images" / "RESULTS" / "latency_fp32.png").is_file()
    # the CPU's own ceilings, measured in the same run: each model's achieved rate is stated as a share of them
    peaks = lat["by_precision"]["fp32"]["matmul_peaks"]
    assert peaks["mm_gflops"] > peaks["mv_gflops"] > 0 and lat["by_precision"]["int8"]["matmul_peaks"]["mm_gflops"] is None
    for f in lat["fits"].values():
        assert f["dense_share_of_mm_peak"] == pytest.approx(f["dense_gflops_at_max_s"] / peaks["mm_gflops"])
    assert f"matrix-matrix {peaks['mm_gflops']:.0f} GFLOP/s" in md and lat["cpu_model"] in md
    assert lat["cores"] >= 1 and f"load average when it started was {lat['load_average_at_start']:.2f}" in md
    m = json.loads((recipe / "exp" / "results.json").read_text())["systems"]["M1_big_salad_win"]
    assert m["speedup_vs_big_rnn_int8"] > 0 and m["latency_35s_measured_fp32"] > 0


def test_latency_section_says_whether_the_cpu_was_shared():
    from local_models.common.results import load_text

    assert load_text({}) == ""  # a latency.json from before the load was recorded
    assert "latencies are upper bounds" in load_text({"load_average_at_start": 1.3, "cores": 2}, "latencies")
    idle = load_text({"load_average_at_start": 0.9, "cores": 2})  # one of 2 cores free for a 1-thread timing ...
    assert "0.90 on 2 cores" in idle and "1 core(s) were free" in idle and "upper bounds" not in idle
    # ... but not for a 2-thread one
    assert "upper bounds" in load_text({"load_average_at_start": 0.9, "cores": 2, "threads": 2})


def test_precision_table_says_when_the_mcd_models_are_not_the_timed_ones():
    from local_models.salad.report import precision_table

    fits = {"big_salad": {"measured_at_max_s": 1.0, "speedup_vs_big_rnn": 2.0, "params": 9_660_000}}
    lat = {"max_seconds": 35, "mcd_speaker": "M1", "fits": fits, "mcd_model_params": {"big_salad": 650_000},
           "by_precision": {"fp32": {"fits": fits, "test_mcd_db": {"big_salad": 7.5}}}}
    text = "\n".join(precision_table(lat))
    assert "Big SALAD 0.65 M trained vs 9.66 M timed" in text and "| Big SALAD | 1.000 | 2.0x | 7.50 |" in text
    lat["mcd_model_params"]["big_salad"] = 9_660_000  # the timed models are the trained ones: nothing to say
    assert "trained vs" not in "\n".join(precision_table(lat))


def test_stage_4_refuses_a_sealed_validation_set(recipe):
    """The recipe's one choice is stage 4's checkpoint (lowest MCD on <spk>_valid): a sealed <spk>_valid stops the
    run before any work, with one line naming it."""
    proc = run(recipe, *SMALL, "--stage", "4", "--stop-stage", "4", "--sealed-sets", "M1_test M1_valid", check=False)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if "sealed" in line]
    assert errors == ["error: stage 4 (the checkpoint is picked on <spk>_valid): M1_valid is a sealed set (sealed: "
                      "M1_test M1_valid): choices are made on dev, sealed sets are only scored"], proc.stderr[-2000:]
    assert "Stage 4: train" not in proc.stderr


def test_the_checkpoint_pick_never_reads_the_sealed_sets(recipe, tmp_path):
    """With every sealed set's data, features and decodes moved aside, stage 4 (the recipe's only choice: each
    model's checkpoint, picked on <spk>_valid) runs again, for one speaker's windowed SALAD and duration model (the
    same code picks every model's), and picks the same checkpoints."""
    def picks():
        return {str(p.relative_to(recipe)): os.readlink(p) for p in sorted(recipe.glob("exp/*/*/valid.*.best.pth"))}

    before = picks()
    assert len(before) == 2 * (len(SYSTEMS.split()) + 1)  # every acoustic model and the duration model
    started = time.time()
    sealed = [d for spk in ("M1", "F1")
              for d in (recipe / "data" / f"{spk}_test", recipe / "dump" / spk / f"{spk}_test",
                        *recipe.glob(f"exp/{spk}/*/decode_{spk}_test*"))]
    aside = {d: tmp_path / str(i) for i, d in enumerate(sealed)}
    for d, where in aside.items():
        shutil.move(d, where)
    try:
        run(recipe, *SMALL, "--stage", "4", "--stop-stage", "4", "--speakers", "F1", "--systems", "big_salad_win")
        assert picks() == before
        assert (recipe / "exp" / "F1" / "big_salad_win" / "train.log").stat().st_mtime > started  # it did run
    finally:
        for d, where in aside.items():
            shutil.move(where, d)
