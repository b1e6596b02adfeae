"""SALAD / MUSA-RNN text-to-speech from raw text (issue #29): a tiny randomly initialised acoustic model and duration
model in a fake recipe, packed with local_models/salad/pack.py, loaded with Text2Speech.from_pretrained from a
fresh directory (the recipe deleted), run on text and through the text-to-speech CLI; the bad inputs."""
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile
import torch
import yaml

from local_models.common.pack import PackError, pack_model, read_card
from local_models.salad import acoustic, linguistic
from local_models.salad.duration import save_duration_stats

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "egs" / "tcstar" / "tts1" / "conf" / "questions_es.hed"
SR = 16000
TEXT = "Hola, son las 3 de la tarde."


@pytest.fixture(scope="module", autouse=True)
def cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SPEECH_RECIPES_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


def vowel(seconds=0.6, f0=120.0):
    t = np.arange(int(seconds * SR)) / SR
    x = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 30))
    return 0.3 * x / np.max(np.abs(x))


def fake_recipe(root: Path, arch="salad") -> Path:
    """<root>/recipe with conf/, dump/M1/{stats,dur_stats}.npz, exp/M1/<arch>_sys and exp/M1/duration (checkpoints
    as ESPnet leaves them: valid.*.best.pth links to <n>epoch.pth) and exp/results.json."""
    from local_models.salad.duration_task import DurationModel
    from local_models.salad.task import RNNModel, SaladModel

    rec = root / "recipe"
    (rec / "conf").mkdir(parents=True)
    shutil.copy(QUESTIONS, rec / "conf" / "questions_es.hed")
    q = linguistic.load_questions(QUESTIONS)
    d = rec / "dump" / "M1"
    (d / "train").mkdir(parents=True)
    frames = acoustic.analyse(vowel(), SR, f0_method="dio")
    mm = acoustic.MinMax(frames.min(0), frames.max(0))
    mask = np.concatenate([linguistic.numeric_dims(q), [True, True]])
    acoustic.save_stats(d / "stats.npz", mm, acoustic.ZNorm(np.zeros(q.dim + 2), np.full(q.dim + 2, 3.0), mask), 40)
    save_duration_stats(d / "dur_stats.npz", np.zeros(q.dim), np.full(q.dim, 3.0), np.log1p(12.0), 0.4)
    (d / "train" / "utt2num_frames").write_text("u1 400\nu2 500\n")
    torch.manual_seed(0)
    conf = dict(emb=16, d_ff=32, num_blocks=1, heads=2) if arch == "salad" else dict(emb=16, hidden=24)
    am = (SaladModel if arch == "salad" else RNNModel)(idim=q.dim + 2, stats_file=str(d / "stats.npz"), **conf)
    if arch == "salad":  # a steady vowel: outputs near one frame of the analysed one, so the wav is sensible
        with torch.no_grad():
            am.net.proj.weight.mul_(0.02)
            am.net.proj.bias.copy_(torch.tensor(mm.normalise(frames[len(frames) // 2][None])[0]))
    dm = DurationModel(idim=q.dim, stats_file=str(d / "dur_stats.npz"), emb=8, hidden=8)
    for name, model, ckpt, cfg in (
            (f"{arch}_sys", am, "valid.mcd.best.pth", {"model": arch, "model_conf": {"idim": q.dim + 2, **conf}}),
            ("duration", dm, "valid.loss.best.pth", {"model": "lstm", "model_conf": {"idim": q.dim, "emb": 8,
                                                                                      "hidden": 8}})):
        e = rec / "exp" / "M1" / name
        e.mkdir(parents=True)
        torch.save(model.state_dict(), e / "3epoch.pth")
        (e / ckpt).symlink_to("3epoch.pth")
        cfg["model_conf"]["stats_file"] = str(d / ("stats.npz" if name != "duration" else "dur_stats.npz"))
        (e / "config.yaml").write_text(yaml.safe_dump({**cfg, "batch_size": 4, "max_epoch": 5}))
    (rec / "exp" / "results.json").write_text(json.dumps({"corpus": "mini", "systems": {
        f"M1_{arch}_sys": {"mcd": 7.1, "mcd_pred": 8.2, "mcd_gt_dtw": 6.5, "f0_rmse": 20.0},
        "M1_duration": {"dur_rmse_frames": 3.0, "dur_rmse_ms": 15.0, "dur_pearson": 0.8}}}))
    return rec


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """An archive copied to a fresh directory, the recipe that made it deleted."""
    from local_models.salad.pack import pack_system

    tmp_path = tmp_path_factory.mktemp("salad")
    rec = fake_recipe(tmp_path / "made")
    out = pack_system(rec, "M1/salad_sys", rec / "exp" / "M1" / "salad_sys" / "packed" / "model.tar.gz")
    fresh = tmp_path / "fresh" / "model.tar.gz"
    fresh.parent.mkdir()
    shutil.copy(out, fresh)
    shutil.rmtree(tmp_path / "made")
    return fresh


def test_packed_model_speaks_text_without_its_recipe(archive):
    from local_models.salad.inference import Text2Speech

    card = read_card(archive)
    assert card["paper"] == "salad" and card["system"] == "M1/salad_sys" and card["sample_rate"] == SR
    assert card["metrics"] == {"mcd": 7.1, "mcd_pred": 8.2, "mcd_gt_dtw": 6.5, "f0_rmse": 20.0,
                               "dur_rmse_frames": 3.0, "dur_rmse_ms": 15.0, "dur_pearson": 0.8}
    assert card["training"]["acoustic"]["epoch"] == 3 and card["training"]["duration"]["steps"] == 3 * 1
    assert card["training_data"] == {"utterances": 2, "hours": round(900 * 0.005 / 3600, 4)}
    tts = Text2Speech.from_pretrained(archive)
    out = tts(TEXT)
    wav, dur = out["wav"], out["durations"]
    assert out["sample_rate"] == SR and wav.dtype == np.float32 and wav.ndim == 1
    assert dur.dtype == np.int64 and dur.min() >= 1 and len(dur) == len(out["labels"]) == len(out["phones"])
    # "3" spelt out, the comma a pause, sil at both ends
    assert out["phones"][0] == out["phones"][-1] == "sil" and "pau" in out["phones"] and "tS" not in out["phones"]
    assert " t r e s " in " ".join(out["phones"])
    assert len(wav) == dur.sum() * 80  # WORLD: 80 samples (5 ms) per predicted frame
    peak, rms = np.max(np.abs(wav)), np.sqrt(np.mean(wav ** 2))
    assert np.all(np.isfinite(wav)) and 0.01 < peak < 1.0 and rms > 1e-3
    fast = tts(TEXT, speed=2.0)["durations"]  # each phone's frames halved, then rounded (at least 1)
    assert fast.min() >= 1 and np.all(np.abs(fast - dur / 2) <= 1) and fast.sum() < 0.6 * dur.sum()


def test_exp_dir_and_archive_give_the_same_speech(tmp_path):
    from local_models.salad.inference import Text2Speech
    from local_models.salad.pack import pack_system

    rec = fake_recipe(tmp_path, arch="rnn")
    a = Text2Speech.from_pretrained(rec / "exp" / "M1" / "rnn_sys")(TEXT)
    archive = pack_system(rec, "M1/rnn_sys", tmp_path / "rnn.zip")
    b = Text2Speech.from_pretrained(archive)(TEXT)
    np.testing.assert_array_equal(a["durations"], b["durations"])
    np.testing.assert_allclose(a["wav"], b["wav"], atol=1e-6)
    with pytest.raises(ValueError, match="duration model alone cannot speak"):
        Text2Speech.from_pretrained(rec / "exp" / "M1" / "duration")


def test_cli_writes_the_wav(archive, tmp_path):
    from local_models.bin.text_to_speech import main

    out = tmp_path / "out" / "hola.wav"
    assert main(["--model", str(archive), "--text", TEXT, "-o", str(out), "--threads", "1"]) == 0
    wav, sr = soundfile.read(out)
    assert sr == SR and len(wav) > SR // 2 and np.max(np.abs(wav)) > 0.01


def test_cli_speaks_long_text_sentence_by_sentence_at_one_level(archive, tmp_path):
    """A text past --max_chars: each sentence synthesised alone (the same wav as the API's for it, levelled), joined
    with 0.25 s pauses; --raw_level keeps the model's level; an unreadable sentence is named by its piece."""
    from local_models.bin.text_to_speech import main
    from local_models.common.longtext import PAUSE_S, level
    from local_models.salad.inference import Text2Speech

    sentences = ["Hola, son las 3 de la tarde.", "Mañana lloverá en Valencia.", "Buenos días."]
    out = tmp_path / "long.wav"
    assert main(["--model", str(archive), "--text", " ".join(sentences), "-o", str(out), "--max_chars", "30"]) == 0
    wav, sr = soundfile.read(out, dtype="float32")
    tts = Text2Speech.from_pretrained(archive)
    parts = [level(tts(t)["wav"]) for t in sentences]
    gap = int(PAUSE_S * sr)
    want = np.concatenate([parts[0], np.zeros(gap), parts[1], np.zeros(gap), parts[2]])
    assert len(wav) == len(want) and np.max(np.abs(wav - want)) < 1e-3  # 16-bit PCM rounding
    # the Python API speaks it the same way, whole or piece by piece
    spoken = tts.speak(" ".join(sentences), max_chars=30)
    assert spoken["pieces"] == 3 and np.allclose(spoken["wav"], want, atol=1e-6)
    pieces = list(tts.iter_speak(" ".join(sentences), max_chars=30))
    assert [len(w) for w, _ in pieces] == [len(parts[0]), gap + len(parts[1]), gap + len(parts[2])]
    assert np.array_equal(np.concatenate([w for w, _ in pieces]), spoken["wav"]) and pieces[0][1] == sr
    raw = tmp_path / "raw.wav"
    assert main(["--model", str(archive), "--text", sentences[0], "-o", str(raw), "--raw_level"]) == 0
    assert np.max(np.abs(soundfile.read(raw, dtype="float32")[0] - tts(sentences[0])["wav"])) < 1e-3
    with pytest.raises(ValueError, match=r"piece 2 of 3 .*cannot read"):
        main(["--model", str(archive), "--text", "Hola, son las 3. Hola 你好 amigo. Adiós.", "-o", str(out),
              "--max_chars", "20"])


@pytest.mark.parametrize("text,message", [
    ("", "empty text"), ("   \n\t ", "empty text"),
    ("Hola 你好, 50% más", r"cannot read 3 character\(s\).*'你', '好', '%'"),
    ("Привет", "cannot read 6 character"), ("a\x00b", r"U\+0000"),
    ("¿?¡!", "no Spanish words"),
])
def test_bad_text_is_a_clear_error(archive, text, message):
    from local_models.salad.inference import Text2Speech

    tts = Text2Speech.from_pretrained(archive)
    with pytest.raises(ValueError, match=message):
        tts(text)


def test_bad_speed_and_cli_leaves_nothing_behind(archive, tmp_path, capsys):
    from local_models.bin.text_to_speech import cli, main
    from local_models.common.cli import run_main
    from local_models.salad.inference import Text2Speech

    with pytest.raises(ValueError, match="speed must be a positive"):
        Text2Speech.from_pretrained(archive)(TEXT, speed=0)
    lines = tmp_path / "lines.txt"
    lines.write_text("Buenos días.\nEl precio sube un 5%.\n", encoding="utf-8")
    out = tmp_path / "wavs"
    rc = run_main(main, ["--model", str(archive), "--text_file", str(lines), "-o", str(out)], prog="text-to-speech")
    assert rc == 2 and "lines.txt:2" in capsys.readouterr().err and not out.exists()
    assert callable(cli)


def test_wrong_corrupt_and_missing_models(archive, tmp_path):
    from local_models.salad.inference import Text2Speech

    corrupt = tmp_path / "corrupt.tar.gz"
    corrupt.write_bytes(archive.read_bytes()[:2000])
    with pytest.raises(PackError, match="corrupt.tar.gz: corrupt archive"):
        Text2Speech.from_pretrained(corrupt)
    with pytest.raises(FileNotFoundError, match="model not found"):
        Text2Speech.from_pretrained(tmp_path / "nothing.tar.gz")
    (tmp_path / "w.pth").write_bytes(b"x")
    other = pack_model(tmp_path / "sad.tar.gz", paper="sad", system="cnn", recipe_dir=tmp_path,
                       files={"model_file": tmp_path / "w.pth"})
    with pytest.raises(PackError, match="this is a Fearless Steps SAD .* model, not a SALAD / MUSA-RNN"):
        Text2Speech.from_pretrained(other)
    with pytest.raises(ValueError, match="expected a recipe's exp/<speaker>/<system> directory"):
        Text2Speech.from_pretrained(tmp_path)


def test_vectorised_mc2sp_equals_pysptk():
    import pysptk

    mc = np.random.RandomState(0).randn(30, 40) * 0.2
    mc[:, 0] -= 4
    alpha = acoustic.mcep_alpha(SR)
    assert alpha == pytest.approx(pysptk.util.mcepalpha(SR))
    np.testing.assert_allclose(acoustic.mc2sp(mc, alpha, 1024), pysptk.mc2sp(mc, alpha, 1024), rtol=1e-9)


def test_text_to_speech_runs_on_the_models_device(archive):
    """Every tensor made on the models' device, nothing turned to numpy before .cpu() (CUDA's rules, on the CPU)."""
    from test_gpu_safety import pretend_cuda, to_pretend_cuda

    from local_models.salad.inference import Text2Speech

    tts = Text2Speech.from_pretrained(archive)
    want = tts(TEXT)
    to_pretend_cuda(tts.acoustic)
    to_pretend_cuda(tts.duration)
    with pretend_cuda():
        got = tts(TEXT, speed=1.0)
    np.testing.assert_array_equal(got["durations"], want["durations"])
    np.testing.assert_allclose(got["wav"], want["wav"], atol=1e-5)
