"""egs/kss/tts1 stages 4-6: synthesis tool (vocoder, atomic output), JDI-T scoring (duration accuracy, tables),
and a smoke run of the whole recipe on a tiny mini corpus with one training epoch."""
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import librosa
import numpy as np
import pytest
import soundfile

from local_models.bin import jdit_align, jdit_mcd, jdit_score, jdit_pwg_train, jdit_synth
from local_models.common import launcher
from local_models.common.datadir import read_table
from local_models.common.longtext import level
from local_models.jdit import inference, metrics, report, vocoder
from recipe_runner import headline_of_run, run_recipe

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs" / "kss" / "tts1"
VENV = ROOT / "tools" / "venv" / "bin" / "python"
needs_venv = pytest.mark.skipif(not VENV.exists(), reason="tools/venv not installed (make install)")
needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")


def test_tools_have_help():
    for parser in (jdit_synth.get_parser(), jdit_score.get_parser(), jdit_align.get_parser(), jdit_pwg_train.get_parser(),
                   jdit_mcd.get_parser()):
        with pytest.raises(SystemExit) as e:
            parser.parse_args(["--help"])
        assert e.value.code == 0


def test_duration_accuracy_hand_example():
    ref = {"a": np.array([3, 0, 5]), "b": np.array([2, 2])}
    hyp = {"a": np.array([2, 1, 5]), "b": np.array([4, 0])}
    m = metrics.duration_accuracy(hyp, ref, "x")
    # errors 1, 1, 0, 2, 2 -> MAE 6/5, within +-1: 3 of 5, one zero of 5
    assert m["mae_frames"] == pytest.approx(1.2) and m["within1"] == pytest.approx(0.6)
    assert m["zero_share"] == pytest.approx(0.2) and m["tokens"] == 5
    # internal boundaries: a 3|3 vs 2|3, b 2 vs 4 -> errors 1, 0, 2
    assert m["boundary_mae_frames"] == pytest.approx(1.0) and m["boundary_within1"] == pytest.approx(2 / 3)
    assert m["boundary_signed_mean"] == pytest.approx(1 / 3) and "bias" not in m
    # per token type: signed errors k -1, +2; o +1; a 0, -2
    m = metrics.duration_accuracy(hyp, ref, "x", {"a": ["k", "o", "a"], "b": ["k", "a"]})
    assert m["bias"] == {"k": [0.5, 2], "o": [1.0, 1], "a": [-1.0, 2]}
    assert "`o` +1.0 (1), `a` -1.0 (2), `k` +0.5 (2)" in report.bias_line("test", m, min_count=1)
    # by transition class, with jamo tokens: a = [ᄀ ᅡ ᆫ] boundaries C>V -1, V>C 0; b = [ᄀ ᅡ] C>V +2
    jamo = {"a": ["ᄀ", "ᅡ", "ᆫ"], "b": ["ᄀ", "ᅡ"]}
    m = metrics.duration_accuracy(hyp, ref, "x", jamo)
    assert m["boundary_bias"] == {"C>V": [0.5, 2], "V>C": [0.0, 1]}
    assert m["bias"]["ᅡ"] == [-0.5, 2]
    assert "C>V +0.50 (2), V>C +0.00 (1)." in report.bias_line("test", m, min_count=1)
    assert [metrics.token_class(t) for t in ("ᄀ", "ᅡ", "ᆫ", "<space>", ".", "<pau>", "x")] == \
        ["C", "V", "C", "_", "P", "P", "?"]
    assert [metrics.token_class(t) for t in ("sil", "a", "u-", "w", "kh", "tS;-", ";", "x")] == \
        ["P", "V", "V", "V", "C", "C", "C", "?"]  # espeak-ng phonemes
    with pytest.raises(ValueError, match="utterance b: 3 durations for 2 tokens"):
        metrics.duration_accuracy({"b": np.array([1, 1, 2])}, ref, "x")
    with pytest.raises(ValueError, match="no utterance in common"):
        metrics.duration_accuracy({"c": np.array([1])}, ref, "x")
    with pytest.raises(ValueError, match="utterance b: 2 durations for 3 tokens in its text"):
        metrics.duration_accuracy(hyp, ref, "x", {"a": ["k", "o", "a"], "b": ["k", "a", "n"]})
    uni = metrics.uniform_durations({"a": np.array([3, 0, 5]), "c": np.array([7])})
    assert uni["a"].tolist() == [3, 2, 3] and uni["c"].tolist() == [7]


def test_aligner_summary_names_the_transition_agent_deviation(tmp_path):
    (tmp_path / "config.yaml").write_text("tts_conf:\n  aligner_transition_agent: true\n  guided_attn_weight: 50.0\n")
    assert "WITH the transition agent" in report.aligner_summary(tmp_path)
    assert "guided attention weight 50.0" in report.aligner_summary(tmp_path)
    (tmp_path / "config.yaml").write_text("tts_conf:\n  aligner_transition_agent: false\n")
    assert "as in the paper's Algorithm 1" in report.aligner_summary(tmp_path)
    assert report.aligner_summary(tmp_path / "missing") == ""


def test_attention_failures_on_hand_made_paths():
    clean = np.array([0, 0, 1, 2, 2, 3, 5, 6, 7, 7, 8, 9])  # steps of at most 2, ends on the last token
    assert metrics.attention_failures(clean, 10, False) == dict(skip=False, repeat=False, incomplete=False)
    skip = np.array([0, 1, 2, 7, 8, 9])
    assert metrics.attention_failures(skip, 10, False)["skip"]
    repeat = np.array([0, 1, 2, 3, 4, 5, 6, 1, 2, 3, 9])  # back to token 1 after reaching 6
    f = metrics.attention_failures(repeat, 10, False)
    assert f["repeat"] and f["skip"]  # ... and the final jump 3 -> 9 skips
    assert metrics.attention_failures(np.array([0, 1, 2, 3]), 10, False)["incomplete"]  # stopped early
    assert metrics.attention_failures(clean, 10, True)["incomplete"]  # ran to the maximum length
    # 4-D attention: the most focused head gives the path
    att = np.full((2, 2, 4, 3), 1 / 3)
    att[1, 0] = np.eye(3)[[0, 1, 1, 2]]
    assert metrics.attention_path(att).tolist() == [0, 1, 1, 2]


def test_teacher_durations_drop_the_eos_entry():
    ref = {"a": np.array([1, 2])}
    assert metrics.strip_eos({"a": np.array([1, 2, 1]), "b": np.array([3])}, ref)["a"].tolist() == [1, 2]


def test_mcd_json_is_rescored_when_the_analysis_changes(tmp_path, capsys):
    """jdit_mcd --skip-up-to-date (stage 6) keeps an mcd.json only if it is newer than the wav.scp and has the
    requested F0 method and rate; when every dir is current the reference is never read."""
    d = tmp_path / "decode_test"
    d.mkdir()
    (d / "wav.scp").write_text("u1 u1.wav\n")
    js = d / "mcd.json"
    js.write_text(json.dumps(dict(settings=dict(f0_method="dio", sample_rates=[16000]))))
    os.utime(d / "wav.scp", (time.time() - 10, time.time() - 10))
    assert metrics.mcd_json_is_current(str(d), 16000, "dio")
    assert not metrics.mcd_json_is_current(str(d), 16000, "harvest")  # another F0 method: score again
    assert not metrics.mcd_json_is_current(str(d), 22050, "dio")  # another rate
    missing_ref = str(tmp_path / "no_such_ref.scp")
    assert jdit_mcd.main(["--ref", missing_ref, "--sample-rate", "16000", "--f0-method", "dio", "--skip-up-to-date",
                          str(d)]) == 0
    assert "mcd.json is up to date (dio F0 at 16000 Hz)" in capsys.readouterr().out
    with pytest.raises(ValueError, match="no_such_ref"):  # harvest asked: the dir is scored, the reference read
        jdit_mcd.main(["--ref", missing_ref, "--sample-rate", "16000", "--skip-up-to-date", str(d)])
    js.write_text("{ half written")
    assert not metrics.mcd_json_is_current(str(d), 16000, "dio")
    js.write_text(json.dumps(dict(settings=dict(f0_method="dio", sample_rates=[16000]))))
    os.utime(js, (time.time() - 20, time.time() - 20))
    assert not metrics.mcd_json_is_current(str(d), 16000, "dio")  # older than the synthesis


def test_fbank_conf_errors(tmp_path):
    conf = tmp_path / "fbank.conf"
    conf.write_text("--sample-rate 22050\n--n-fft 1024\n--hop-length\n")
    with pytest.raises(ValueError, match=r"fbank.conf:3: expected '--key value'"):
        inference.read_fbank_conf(conf)
    conf.write_text("--sample-rate 22050\n--n-fft 1024\n")
    with pytest.raises(ValueError, match="no --hop-length"):
        inference.read_fbank_conf(conf)
    assert inference.read_fbank_conf(RECIPE / "conf" / "fbank.conf")["hop_length"] == "256"


def test_model_file_choice(tmp_path):
    with pytest.raises(FileNotFoundError, match="train it first"):
        inference.find_model_file(tmp_path)
    for name in ("2epoch.pth", "10epoch.pth", "9epoch.pth"):
        (tmp_path / name).write_bytes(b"")
    assert inference.find_model_file(tmp_path).name == "10epoch.pth"  # numeric, not lexical
    (tmp_path / "valid.loss.best.pth").write_bytes(b"")
    assert inference.find_model_file(tmp_path).name == "valid.loss.best.pth"


def test_gt_mel_griffin_lim_round_trip(tmp_path):
    """Reference mels -> Griffin-Lim: a wav of frames x hop samples, not silent, scored by jdit_synth's summary."""
    import kaldiio

    from local_models.common.features import FeatConfig, compute

    sr = 22050
    t = np.arange(int(0.6 * sr)) / sr
    wave = (0.3 * np.sin(2 * np.pi * 220 * t) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))).astype(np.float32)
    cfg = FeatConfig(kind="fbank", sample_rate=sr, win_ms=1024e3 / sr, hop_ms=256e3 / sr, n_fft=1024, n_mels=80,
                     fmin=80, fmax=7600)
    assert (cfg.win_length, cfg.hop_length) == (1024, 256)
    mel = compute(wave, cfg)
    with kaldiio.WriteHelper(f"ark,scp:{tmp_path}/f.ark,{tmp_path}/f.scp") as w:
        w("u1", mel)
    out = tmp_path / "gt"
    jdit_synth.main(["--feats", str(tmp_path / "f.scp"), "--fbank-conf", str(RECIPE / "conf/fbank.conf"),
                    "--griffin-lim-iters", "8", str(out)])
    y, fs = soundfile.read(out / "wav" / "u1.wav")
    assert fs == sr and abs(len(y) - mel.shape[0] * 256) <= 1024
    assert 0.05 < np.abs(y).max() <= 1.0
    # energy where the tone is: the synthesised spectrum peaks near 220 Hz
    spec = np.abs(np.fft.rfft(y))
    assert abs(np.fft.rfftfreq(len(y), 1 / sr)[spec.argmax()] - 220) < 15
    s = json.loads((out / "synth.json").read_text())
    assert s["utterances"] == 1 and s["vocoder_rtf"] > 0 and not (tmp_path / "gt.tmp").exists()
    assert read_table(out / "wav.scp")["u1"] == str((out / "wav" / "u1.wav").resolve())


def write_pwg_data(d: Path, n=4, sr=22050, seconds=0.8):
    """n tone wavs (16-bit PCM) and their recipe log-mels (conf/fbank.conf settings): a vocoder data dir."""
    import kaldiio

    from local_models.common.features import FeatConfig, compute

    d.mkdir(parents=True)
    cfg = FeatConfig(kind="fbank", sample_rate=22050, win_ms=1024e3 / 22050, hop_ms=256e3 / 22050, n_fft=1024,
                     n_mels=80, fmin=80, fmax=7600)
    t = np.arange(int(seconds * sr)) / sr
    with kaldiio.WriteHelper(f"ark,scp:{d}/feats.ark,{d}/feats.scp") as w, open(d / "wav.scp", "w") as scp:
        for i in range(n):
            wave = (0.3 * np.sin(2 * np.pi * (150 + 50 * i) * t)).astype(np.float32)
            soundfile.write(d / f"u{i}.wav", wave, sr, subtype="PCM_16")
            scp.write(f"u{i} {d / f'u{i}.wav'}\n")
            w(f"u{i}", compute(wave, cfg) if sr == 22050 else np.zeros((10, 80), np.float32))


def test_pwg_train_checks_the_data(tmp_path):
    conf = str(RECIPE / "conf/tuning/train_pwg_tiny.yaml")
    write_pwg_data(tmp_path / "low", sr=16000)
    with pytest.raises(SystemExit, match=r"low/wav.scp: u0 is 16000 Hz, the vocoder config says sampling_rate 22050"):
        jdit_pwg_train.main(["--config", conf, "--train-dir", str(tmp_path / "low"), "--valid-dir",
                        str(tmp_path / "low"), str(tmp_path / "exp")])
    (tmp_path / "nofeats").mkdir()
    (tmp_path / "nofeats/wav.scp").write_text("")
    with pytest.raises(SystemExit, match=r"nofeats/feats.scp: missing"):
        jdit_pwg_train.main(["--config", conf, "--train-dir", str(tmp_path / "nofeats"), "--valid-dir",
                        str(tmp_path / "nofeats"), str(tmp_path / "exp")])
    with pytest.raises(SystemExit, match="--max-steps 0"):
        jdit_pwg_train.main(["--config", conf, "--max-steps", "0", "--train-dir", str(tmp_path / "low"),
                        "--valid-dir", str(tmp_path / "low"), str(tmp_path / "exp")])
    assert not (tmp_path / "exp").exists()  # every check fails before anything is written
    (tmp_path / "ck").mkdir()
    for n in ("checkpoint-20steps.pkl", "checkpoint-5steps.pkl", "checkpoint.pkl", "checkpoint-xsteps.pkl"):
        (tmp_path / "ck" / n).write_bytes(b"")
    assert [n for n, _ in vocoder.checkpoints(tmp_path / "ck")] == [5, 20]


@needs_venv
def test_pwg_trains_resumes_and_vocodes(tmp_path):
    """The tiny PWG config trains through parallel-wavegan's trainer on a data dir, resumes from its newest
    checkpoint, and jdit_synth turns mels into a wav of frames x hop samples with the result."""
    write_pwg_data(tmp_path / "data")
    conf = str(RECIPE / "conf/tuning/train_pwg_tiny.yaml")
    args = ["--config", conf, "--train-dir", str(tmp_path / "data"), "--valid-dir", str(tmp_path / "data"),
            "--verbose", "0", str(tmp_path / "exp")]
    jdit_pwg_train.main(["--max-steps", "2", *args])
    assert [n for n, _ in vocoder.checkpoints(tmp_path / "exp")] == [2]
    jdit_pwg_train.main(["--max-steps", "3", *args])  # resumes from step 2
    assert [n for n, _ in vocoder.checkpoints(tmp_path / "exp")] == [2, 3]
    import torch

    assert torch.load(tmp_path / "exp/checkpoint.pkl", map_location="cpu")["steps"] == 3
    jdit_pwg_train.main(["--max-steps", "3", *args])  # nothing left to train
    assert [n for n, _ in vocoder.checkpoints(tmp_path / "exp")] == [2, 3]
    jdit_synth.main(["--feats", str(tmp_path / "data/feats.scp"), "--fbank-conf", str(RECIPE / "conf/fbank.conf"),
                    "--vocoder", str(tmp_path / "exp/checkpoint.pkl"), str(tmp_path / "voc")])
    s = json.loads((tmp_path / "voc/synth.json").read_text())
    y, fs = soundfile.read(tmp_path / "voc/wav/u0.wav")
    assert fs == 22050 and len(y) == s["per_utt"]["u0"]["frames"] * 256 and np.isfinite(y).all()
    assert s["vocoder"].endswith("checkpoint.pkl") and s["vocoder_rtf"] > 0
    # the generator's noise input is seeded: vocoding again gives the same wav
    jdit_synth.main(["--feats", str(tmp_path / "data/feats.scp"), "--fbank-conf", str(RECIPE / "conf/fbank.conf"),
                    "--vocoder", str(tmp_path / "exp/checkpoint.pkl"), str(tmp_path / "voc2")])
    np.testing.assert_array_equal(soundfile.read(tmp_path / "voc2/wav/u0.wav")[0], y)


def test_synth_errors_name_the_problem(tmp_path, capsys):
    with pytest.raises(SystemExit, match="give --model-dir and --text, or --feats"):
        jdit_synth.main(["--fbank-conf", str(RECIPE / "conf/fbank.conf"), str(tmp_path / "o")])
    (tmp_path / "text_phn").write_text("u1 ᄀ ᅡ\nu2\n", encoding="utf-8")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "valid.loss.best.pth").write_bytes(b"")
    with pytest.raises(SystemExit, match=r"text_phn:2: utterance 'u2' has no tokens"):
        jdit_synth.main(["--model-dir", str(tmp_path / "m"), "--text", str(tmp_path / "text_phn"),
                        "--fbank-conf", str(RECIPE / "conf/fbank.conf"), str(tmp_path / "o")])
    assert not (tmp_path / "o").exists() and not (tmp_path / "o.tmp").exists()


def test_score_writes_tables_and_json(tmp_path, monkeypatch):
    """jdit_score on hand-made stage-5/6 outputs: the tables carry the numbers given, the acceptance line says
    whether the aligner met it, results.json has every system."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data/test").mkdir(parents=True)
    (tmp_path / "data/test/durations").write_text("u1 3 0 5\nu2 2 2\n")
    (tmp_path / "data/test/durations_closure").write_text("u1 2 0 6\nu2 3 1\n")
    (tmp_path / "data/test/text_phn").write_text("u1 ᅡ ᄋ ᄏ\nu2 ᄏ ᅥ\n", encoding="utf-8")
    per = {"u1": dict(tokens=3, frames=8, seconds=0.1, peak=0.5, hit_maxlen=False, am_s=0.01, vocoder_s=0.02),
           "u2": dict(tokens=2, frames=4, seconds=0.05, peak=0.005, hit_maxlen=False, am_s=0.01, vocoder_s=0.02)}
    for d, mcd in (("exp/gt_mel/decode_test", 6.5), ("exp/tts_jdit/decode_test", 9.25)):
        (tmp_path / d).mkdir(parents=True)
        (tmp_path / d / "synth.json").write_text(json.dumps(dict(
            utterances=2, audio_seconds=0.15, acoustic_rtf=0.02, vocoder_rtf=0.3, threads=1, per_utt=per)))
        (tmp_path / d / "mcd.json").write_text(json.dumps(dict(
            mcd_db_frame_pooled=mcd, mcd_db_utt_mean=mcd, lf0_rmse_frame_pooled=0.2, vuv_error_frame_pooled=0.1,
            settings=dict(sample_rates=[16000], order=[23], alpha=[0.41], shift_ms=5.0),
            per_utt={"u1": dict(hyp_frames=9, ref_frames=10), "u2": dict(hyp_frames=5, ref_frames=5)})))
    (tmp_path / "exp/tts_jdit/align_test").mkdir()
    (tmp_path / "exp/tts_jdit/align_test/durations_aligner").write_text("u1 3 1 4\nu2 2 2\n")
    (tmp_path / "exp/tts_jdit/align_test/durations_predictor").write_text("u1 1 1 1\nu2 9 9\n")
    (tmp_path / "exp/tts_jdit/align_test/durations_aligner_viterbi").write_text("u1 3 0 5\nu2 2 2\n")
    jdit_score.main(["--systems", "jdit", "--sets", "test", "--corpus", "toy"])
    md = (tmp_path / "RESULTS.md").read_text()
    # no 1:1 MCD in these mcd.json files (scored before it existed): a dash
    assert "| JDI-T (ours) | 3.77 | 3.52 | 9.25 | — | 0.200 | 10.0 | 0.95 | no attention at synthesis | yes |" in md
    assert "| GT mel | 3.92 | 3.87 | 6.50 |" in md and "| Tacotron2 | 3.52 | 3.33 | not run |" in md
    # errors 0, 1, 1 | 0, 0: MAE 0.40, per utterance 2/3 and 0: the bootstrap's interval [0, 2/3]
    goal = ("JDI-T aligner duration MAE on `test` against the engine events (goal < 2 frames): **met**, 0.40 [0.00, "
            "0.67] (95 % bootstrap over 2 utterances); chosen on dev")
    assert f"Acceptance: {goal}" in md
    # against 2 0 6 / 3 1: errors 1, 1, 2 | 1, 1
    assert ("against the closures to the stop (goal < 2 frames): **met**, 1.20 [1.00, 1.33] (95 % bootstrap over 2 "
            "utterances)") in md
    assert "| test | closures to the stop | JDI-T aligner (attention argmax, teacher forced) | 1.20 |" in md
    # the best-path row and its sentence: 3 0 5 / 2 2 against the events: errors 0, 0, 0, 0, 0
    assert "| test | engine events | JDI-T aligner, best monotonic path (not the paper's rule, see below) | 0.00 |" in md
    assert "gives MAE 0.00 frames against the argmax's 0.40" in md
    claims = json.loads((tmp_path / "exp/results.json").read_text())["headline"]
    assert claims[0] == "`test` MCD (DTW): JDI-T (ours) 9.25 dB"
    assert [c[:c.index(" (95 %")] for c in claims[1:]] == [
        "JDI-T aligner duration MAE on `test` against the engine events (goal < 2 frames): **met**, 0.40 [0.00, 0.67]",
        "JDI-T aligner duration MAE on `test` against the closures to the stop (goal < 2 frames): **met**, 1.20 "
        "[1.00, 1.33]"]
    assert "## Headline (README's row for this recipe, generated)\n\n- `test` MCD (DTW): JDI-T (ours) 9.25 dB" in md
    # closure - events: u1 -1 0 +1, u2 +1 -1: the two ᄏ gain one frame each
    assert "- `test`: 2 tokens gain frames in the closure reference, mean +1.00 frames; most often `ᄏ` (2)." in md
    res = json.loads((tmp_path / "exp/results.json").read_text())
    jd = res["systems"]["jdit"]["test"]
    assert jd["mcd"] == 9.25 and jd["duration_mae_aligner"] == pytest.approx(0.4) and jd["silent"] == 1
    assert res["systems"]["duration_uniform"]["test"]["duration_mae"] == pytest.approx(0.8)  # 3 2 3 vs 3 0 5
    assert jd["duration_mae_aligner_closure"] == pytest.approx(1.2) and jd["duration_mae_predictor_closure"] > 0
    # uniform 3 2 3 / 2 2 vs 2 0 6 / 3 1: errors 1, 2, 3, 1, 1
    assert res["systems"]["duration_uniform"]["test"]["duration_mae_closure"] == pytest.approx(1.6)


SYSTEMS = ("jdit", "tacotron2", "transformer", "fastspeech")
FRESH_TEXT = "모레 저녁 7시 반에 역 앞 카페에서 봐요, 꼭 와요?"  # in no text of the recipe (checked below)


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    """The whole recipe (stages 1-7) at its quick size: 12 utterances, one epoch of each system (JDI-T, Tacotron2,
    Transformer, FastSpeech taught by the Transformer's durations), 2 PWG steps, 4 Griffin-Lim iterations."""
    recipe = tmp_path_factory.mktemp("kss") / "tts1"
    shutil.copytree(RECIPE, recipe, ignore=shutil.ignore_patterns("data", "dump", "exp", "images", "RESULTS.md"))
    # the speed benchmark once per model and sentence, on one thread (the smoke run only checks that it runs);
    # --nj 2: stage 4 trains two systems at a time (test_stage4_trains_in_parallel_fastspeech_after_its_teacher)
    run_recipe(recipe, "--nj", "2", "--ngpu", "0", "--mini-utts", "12", "--test-sets", "test", "--train-args", "--max_epoch 1 --batch_size 4 --use_matplotlib false",
               "--griffin-lim-iters", "4", "--pwg-max-steps", "2", "--bench-repeats", "1", "--bench-threads", "1",
               "--mcd-f0-method", "dio")  # the MCD's WORLD F0: dio, ~50x faster than the default harvest
    return recipe


def m_settings(decode_dir: Path) -> dict:
    return json.loads((decode_dir / "mcd.json").read_text())["settings"]


def _log_span(log: Path):
    """(start, end) of a launcher log that ended with code 0, from its header and footer (seconds)."""
    assert launcher.log_exit_code(log) == 0, log
    end = re.search(r"^# Ended \(code 0\) at (.+)$", log.read_text(), re.M).group(1).strip()
    return launcher.log_started(log), time.mktime(time.strptime(end, launcher.HEADER_TIME))


@needs_venv
@needs_espeak
def test_stage4_trains_in_parallel_fastspeech_after_its_teacher(recipe):
    """--nj 2: the Transformer -> FastSpeech chain and JDI-T train at the same time (one thread each), and FastSpeech
    starts only after the Transformer's teacher-forced durations exist."""
    exp = recipe / "exp"
    trf, fs, jdit = (_log_span(exp / f"tts_{s}" / "train.log") for s in ("transformer", "fastspeech", "jdit"))
    assert jdit[0] < trf[1] and trf[0] < jdit[1], (trf, jdit)  # overlapping
    durations = exp / "tts_transformer" / "teacher_train" / "durations" / "durations"
    assert trf[1] <= fs[0] and durations.stat().st_mtime <= fs[0] + 1, (trf, fs)


@needs_venv
@needs_espeak
def test_teacher_durations_are_tts_inferences_without_its_figures(recipe, tmp_path):
    """The teacher pass (jdit_inference --durations_only true) writes what ESPnet2's tts_inference writes for the
    same model and data, token for token, and none of its per-utterance figures."""
    exp = recipe / "exp" / "tts_transformer"
    fast = exp / "teacher_test"
    args = ["--train_config", str(exp / "config.yaml"), "--model_file", str(exp / "valid.loss.best.pth"),
            "--data_path_and_name_and_type", f"{recipe}/data/test/text_phn,text,text",
            "--data_path_and_name_and_type", f"{recipe}/data/test/feats.scp,speech,kaldi_ark",
            "--use_teacher_forcing", "true"]
    subprocess.run([str(VENV), "-m", "local_models.bin.jdit_inference", *args, "--output_dir", str(tmp_path / "ref")],
                   cwd=recipe, check=True, capture_output=True)
    for name in ("durations/durations", "focus_rates/focus_rates"):
        assert (fast / name).read_text() == (tmp_path / "ref" / name).read_text(), name
    assert list((tmp_path / "ref" / "att_ws").glob("*.png")) and not (fast / "att_ws").exists()


@needs_venv
@needs_espeak
def test_smoke_whole_recipe_one_epoch(recipe, tmp_path):
    """Stages 1-6: synthesised wavs, durations, RESULTS.md, results.json; then a data dir stages 2-3 never saw."""
    exp = recipe / "exp"
    assert (exp / "tts_jdit" / "1epoch.pth").exists() and (exp / "tts_jdit" / "run.sh").exists()
    dec = exp / "tts_jdit" / "decode_test"
    wavs = read_table(dec / "wav.scp")
    assert list(wavs) == ["kss-1_0011"]
    y, fs = soundfile.read(wavs["kss-1_0011"])
    frames = json.loads((dec / "synth.json").read_text())["per_utt"]["kss-1_0011"]["frames"]
    assert fs == 22050 and abs(len(y) - frames * 256) <= 1024 and np.abs(y).max() > 0
    tokens = read_table(recipe / "data/test/text_phn")["kss-1_0011"].split()
    align = read_table(exp / "tts_jdit/align_test/durations_aligner")["kss-1_0011"].split()
    assert len(align) == len(tokens)
    best = read_table(exp / "tts_jdit/align_test/durations_aligner_viterbi")["kss-1_0011"].split()
    assert len(best) == len(tokens) and sum(map(int, best)) == sum(map(int, align))
    assert sum(map(int, align)) == int(read_table(recipe / "data/test/utt2num_frames")["kss-1_0011"])
    plot = sorted((exp / "tts_jdit/align_test/images").glob("*.png"))[0]
    shown = recipe / "images" / "RESULTS" / f"attention_test__{plot.stem}.png"  # the report shows it, beside itself
    assert f"](images/RESULTS/{shown.name})" in (recipe / "RESULTS.md").read_text()
    assert shown.read_bytes() == plot.read_bytes()
    res = json.loads((exp / "results.json").read_text())
    assert {"gt_mel", "gt_mel_pwg", "jdit", "tacotron2", "transformer", "fastspeech",
            "duration_uniform"} <= set(res["systems"])
    assert (exp / "vocoder_pwg/checkpoint.pkl").exists()  # trained (2 steps), scored on the reference mels
    assert json.loads((exp / "gt_mel_pwg/decode_test/synth.json").read_text())["vocoder"].endswith("checkpoint.pkl")
    assert json.loads((dec / "synth.json").read_text())["vocoder"] == "griffin_lim"
    teacher = read_table(exp / "tts_transformer/teacher_train/durations/durations")
    phn = read_table(recipe / "data/train/text_phn")
    assert set(teacher) == set(phn) and all(len(teacher[u].split()) == len(phn[u].split()) + 1 for u in phn)
    assert "duration_mae_teacher" in res["systems"]["fastspeech"]["test"]
    # the failure rate is the share of the saved attention maps that skip, repeat or stop early, recomputed here
    from local_models.jdit.metrics import attention_failures, attention_path
    t2 = exp / "tts_tacotron2" / "decode_test"
    per = json.loads((t2 / "synth.json").read_text())["per_utt"]
    failed = [any(attention_failures(attention_path(a), a.shape[-1], per[u]["hit_maxlen"]).values())
              for u in per for a in [np.load(t2 / "att_ws" / f"{u}.npy")]]
    assert res["systems"]["tacotron2"]["test"]["attention_failure_rate"] == sum(failed) / len(failed)
    # the table's MCD is the decode dir's frame-pooled MCD (mcd_score), not another average
    for name in ("jdit", "gt_mel"):
        d = exp / ("tts_jdit" if name == "jdit" else name) / "decode_test"
        assert res["systems"][name]["test"]["mcd"] == json.loads((d / "mcd.json").read_text())["mcd_db_frame_pooled"]
    assert "duration_mae_aligner" in res["systems"]["jdit"]["test"]
    assert "duration_mae_aligner_viterbi" in res["systems"]["jdit"]["test"]
    assert "duration_mae_aligner_closure" in res["systems"]["jdit"]["test"]  # the closure reference (stage 3)
    assert len(read_table(recipe / "data/test/durations_closure")["kss-1_0011"].split()) == len(tokens)
    md = (recipe / "RESULTS.md").read_text()
    assert "| JDI-T (ours) | 3.77 | 3.52 |" in md and "Duration accuracy" in md and "not run" not in md
    assert "WORLD analysis (dio F0, cheaptrick" in md and m_settings(dec)["f0_method"] == "dio"  # as asked
    assert "| Tacotron2 | test | 1 |" in md  # the attention-failure table
    assert "| GT mel + Griffin-Lim | — | — |" in md and "| GT mel + Parallel WaveGAN | 3.92 | 3.87 |" in md
    assert "Parallel WaveGAN trained by this recipe (stage 4, `exp/vocoder_pwg`): 2 steps" in md
    bench = json.loads((exp / "benchmarks/kss_speed.json").read_text())  # stage 6's speed benchmark, 1 repeat
    assert bench["repeats"] == 1 and set(bench["models"]) == set(SYSTEMS) and bench["models"]["jdit"]["rtf"] > 0
    assert "faster than Transformer at equal length (a timing on this CPU, no interval)" in md  # no verdict word
    # the CPU's load when the timing started, stated beside the table
    assert bench["cores"] >= 1 and f"load average when it started was {bench['load_average_at_start']:.2f}" in md
    assert "All numbers: `exp/results.json`.\n\n## How this JDI-T differs" in md  # a heading after a blank line
    # what was searched on dev (JDI-T's departures) and what was not (the baselines: ESPnet's settings as given)
    assert ("Settings searched: JDI-T's aligner departures only" in md
            and "The baselines (Tacotron2, Transformer, FastSpeech) run the ESPnet settings" in md)
    # the length-penalising MCD beside the DTW one; the sealed set's look; who trained each model (the PWG too)
    m = json.loads((dec / "mcd.json").read_text())
    assert m["per_utt"]["kss-1_0011"]["frames_1to1"] >= m["per_utt"]["kss-1_0011"]["ref_frames"]
    assert res["systems"]["jdit"]["test"]["mcd_1to1"] == m["mcd_1to1_db_frame_pooled"] > 0
    assert res["sealed_looks"]["looks"] == {"test": 1}  # run.sh seals test and ood; ood was not scored here
    assert "Sealed sets scored under this configuration: test 1 time." in md
    assert set(res["environment"]["trained"]) == {*SYSTEMS, "vocoder_pwg"}
    assert all(v.startswith("commit ") for v in res["environment"]["trained"].values())
    assert json.loads((exp / "vocoder_pwg/trained_by.json").read_text())[0]["ngpu"] == 0
    # the dev set (where JDI-T's settings are chosen) aligned by stage 5, its rows beside test's
    assert (exp / "tts_jdit/align_dev/durations_aligner").is_file()
    assert "duration_mae_aligner" in res["systems"]["jdit"]["dev"] and "| dev | engine events |" in md

    # decode + score a data dir that stages 2-3 never saw (wav.scp + text only; 44.1 kHz like KSS's own wavs):
    # stage 5 prepares its features and tokens itself
    fresh = recipe / "data" / "fresh"
    fresh.mkdir()
    y, fs = soundfile.read(read_table(recipe / "data/test/wav.scp")["kss-1_0011"])
    soundfile.write(tmp_path / "u1.wav", librosa.resample(y, orig_sr=fs, target_sr=44100), 44100)
    (fresh / "wav.scp").write_text(f"new-u1 {tmp_path / 'u1.wav'}\n")
    (fresh / "text").write_text("new-u1 " + read_table(recipe / "data/test/text")["kss-1_0011"] + "\n")
    (fresh / "utt2spk").write_text("new-u1 new\n")
    (fresh / "spk2utt").write_text("new new-u1\n")
    run_recipe(recipe, "--stage", "5", "--stop-stage", "6", "--test-sets", "fresh", "--systems", "jdit",
               "--griffin-lim-iters", "4", "--speed-benchmark", "false", "--mcd-f0-method", "dio")
    assert (fresh / "feats.scp").exists() and (fresh / "text_phn").exists()
    res = json.loads((exp / "results.json").read_text())
    for name, d in (("jdit", "tts_jdit"), ("gt_mel", "gt_mel")):
        assert res["systems"][name]["fresh"]["mcd"] == json.loads(
            (exp / d / "decode_fresh" / "mcd.json").read_text())["mcd_db_frame_pooled"]
    # the main tables stay: Table 1 is still `test`, the baselines trained before are not "not run"
    md = (recipe / "RESULTS.md").read_text()
    assert "Test set `test`." in md and "not run" not in md and "| fresh |" in md
    assert headline_of_run(recipe)[0].startswith("`test` MCD (DTW): JDI-T (ours) ")


@needs_venv
@needs_espeak
def test_packed_systems_speak_from_a_copy(recipe, tmp_path, monkeypatch):
    """Stage 7: an archive per system whose card carries its metrics; a copy of JDI-T's, away from the recipe,
    speaks a sentence the recipe never saw through the text-to-speech command; a baseline's through the API."""
    import torch

    from local_models.common.pack import read_card
    from local_models.jdit import frontend
    from local_models.jdit.demo import check_fresh
    from local_models.jdit.inference import Text2Speech, scale_durations

    check_fresh(recipe, FRESH_TEXT)
    res = json.loads((recipe / "exp/results.json").read_text())
    for s in SYSTEMS:
        card = read_card(recipe / f"exp/tts_{s}/packed/model.tar.gz")
        assert card["paper"] == "jdit" and card["system"] == f"tts_{s}" and card["sample_rate"] == 22050
        assert card["metrics"]["test"] == res["systems"][s]["test"] and card["metrics"]["test"]["mcd"] > 0
        assert card["training"]["utterances"] == 10 and card["training"]["steps"] == 3  # ceil(10 / 4) x 1 epoch
        assert card["vocoder"] == "Griffin-Lim, 4 iterations" and card["corpus"] == "espeak-ng Korean mini corpus"
    copy = tmp_path / "copy" / "jdit.tar.gz"
    copy.parent.mkdir()
    shutil.copy(recipe / "exp/tts_jdit/packed/model.tar.gz", copy)
    env = {**os.environ, "SPEECH_RECIPES_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([str(VENV), "-m", "local_models.bin.text_to_speech", "--model", copy.name, "--text",
                           FRESH_TEXT, "-o", "fresh.wav", "--speed", "1.5"], cwd=copy.parent, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    wav, sr = soundfile.read(copy.parent / "fresh.wav", dtype="float32")
    assert sr == 22050 and len(wav) > 0.1 * sr  # a one-epoch model: short, but a sentence's worth of frames
    assert np.sqrt(np.mean(wav ** 2)) > 1e-3 and np.mean(np.abs(wav) >= 0.999) < 0.01  # not silent, not clipped
    # the unpacked model names nothing in the recipe: it is self-contained
    unpacked = [p for p in (tmp_path / "cache").rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml", ".txt")]
    assert unpacked and not any(str(recipe) in p.read_text(encoding="utf-8") for p in unpacked)
    # the same archive in-process: the same wav; durations are the predictor's / 1.5, frames = their sum
    monkeypatch.setenv("SPEECH_RECIPES_CACHE", str(tmp_path / "cache"))
    out = Text2Speech.from_pretrained(copy)(FRESH_TEXT, speed=1.5)
    base = Text2Speech.from_pretrained(recipe / "exp/tts_jdit")(FRESH_TEXT)  # the exp dir loads as well
    taco = Text2Speech.from_pretrained(recipe / "exp/tts_tacotron2/packed/model.tar.gz")(FRESH_TEXT)
    # the command levels the wav (common.longtext.level: one piece, -20 dBFS); the API returns the model's level
    assert np.max(np.abs(level(out["wav"]) - wav)) < 1e-3 and out["tokens"] == frontend.text_to_tokens(FRESH_TEXT, "espeak")
    assert out["durations"].tolist() == scale_durations(torch.from_numpy(base["durations"]), 1.5).tolist()
    assert abs(len(wav) - int(out["durations"].sum()) * 256) <= 1024
    assert taco["tokens"][-1] == "<sos/eos>" and len(taco["durations"]) == len(taco["tokens"])
    assert taco["wav"].size > 0 and np.isfinite(taco["wav"]).all()


def test_table1_says_which_baselines_did_not_align():
    from local_models.jdit.report import alignment_note

    rows = {"transformer": {"test": {"attention": {"failure_rate": 0.8}}},
            "tacotron2": {"test": {"attention": {"failure_rate": 0.5}}}}
    assert alignment_note("transformer", rows, "test") == "NO: attention failed on 80.0 % of utterances"
    assert alignment_note("tacotron2", rows, "test").startswith("yes: ")  # half is not more than half
    assert alignment_note("fastspeech", rows, "test") == ("durations from the Transformer (NO: attention failed on "
                                                           "80.0 % of utterances)")
    assert alignment_note("transformer", rows, "ood") == "" and alignment_note("jdit", rows, None).startswith("no att")


@needs_venv
@needs_espeak
def test_dev_measurement_needs_no_sealed_set(recipe, tmp_path):
    """Issue #49: stage 5's measurement on dev (JDI-T's aligner durations, where its settings are chosen) comes out
    the same with the sealed sets' data, dumps and decodes moved away; --dev-set test stops stage 5 in one line
    before any work. (Runs after the module's other recipe tests: it reruns stage 5.)"""
    exp = recipe / "exp"
    dev = exp / "tts_jdit/align_dev"
    before = {f: (dev / f).read_text() for f in ("durations_aligner", "durations_aligner_viterbi",
                                                  "durations_predictor")}
    sealed = [p for x in ("test", "ood") for p in (recipe / "data" / x, recipe / "dump" / x,
                                                   *exp.glob(f"*/decode_{x}"), *exp.glob(f"*/align_{x}"),
                                                   *exp.glob(f"*/teacher_{x}"))
              if p.exists()]
    assert any("decode_test" in str(p) for p in sealed) and (recipe / "data/test") in sealed
    aside = [(p, tmp_path / "aside" / str(i)) for i, p in enumerate(sealed)]
    (tmp_path / "aside").mkdir()
    try:
        for p, q in aside:
            shutil.move(p, q)
        stamp = (dev / "durations_aligner").stat().st_mtime
        run_recipe(recipe, "--stage", "5", "--stop-stage", "5", "--test-sets", "", "--systems", "jdit")
        assert (dev / "durations_aligner").stat().st_mtime > stamp  # measured again, without the sealed sets
        assert {f: (dev / f).read_text() for f in before} == before
    finally:
        for p, q in aside:
            if q.exists():
                shutil.move(q, p)
    stamps = [p.stat().st_mtime for p in (dev / "durations_aligner", exp / "tts_jdit/decode_test/synth.json")]
    proc = run_recipe(recipe, "--stage", "5", "--stop-stage", "5", "--dev-set", "test", check=False)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: stage 5 (--dev-set, where JDI-T's settings are chosen): test is a sealed set "
                      "(sealed: ood test): choices are made on dev, sealed sets are only scored"], proc.stderr[-2000:]
    # before any work: neither the test set's synthesis nor the dev alignment ran
    assert [p.stat().st_mtime for p in (dev / "durations_aligner", exp / "tts_jdit/decode_test/synth.json")] == stamps
    # stage 4 keeps each training's checkpoint of lowest loss on --valid-set: a sealed one stops it before any work
    ckpt = exp / "tts_jdit/checkpoint.pth"
    stamp = ckpt.stat().st_mtime
    proc = run_recipe(recipe, "--stage", "4", "--stop-stage", "4", "--valid-set", "test", check=False)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: stage 4 (--valid-set, where each training's checkpoint is picked): test is a sealed set "
                      "(sealed: ood test): choices are made on dev, sealed sets are only scored"], proc.stderr[-2000:]
    assert ckpt.stat().st_mtime == stamp
