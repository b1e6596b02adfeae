"""Packed VQ-VAE / codebook inverter (local_models/vqvae/{pack,inference,unitsio}.py) and the speech-to-units /
units-to-speech commands, on tiny randomly initialised models in a fake recipe tree: packing, loading from a fresh
directory with the recipe gone, raw audio -> units -> speech, and every bad input a user can give."""
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile
import torch
import yaml

from local_models.common.audio import AudioError
from local_models.common.cli import run_main
from local_models.common.features import FeatConfig, compute
from local_models.common.pack import PackError, pack_model, read_card
from local_models.vqvae.frontend import RECIPE_FEATURES, feat_config
from local_models.vqvae.inference import Speech2Units, Units2Speech, check_units, encode_all, encode_frames
from local_models.vqvae.pack import pack_system
from local_models.vqvae.task import InverterModel, VQVAEModel

ROOT = Path(__file__).resolve().parents[1]
SYSTEM, INV = "trf_mfcc_k8", "inverter_trf_mfcc_k8"
VQ_CONF = dict(idim=39, num_speakers=2, encoder_type="transformer", num_codes=8, code_dim=4, enc_dim=16, heads=2,
               ff=32, dec_dim=16, spk_dim=4)
INV_CONF = dict(n_bins=257, dim=16, heads=2, ff=32, layers=1)


def speech_like(seconds=1.3, sr=22050, seed=0):
    """A voiced, vowel-like signal (harmonics of a gliding f0, syllable-rate envelope) at SR."""
    t = np.arange(int(seconds * sr)) / sr
    f0 = 110 + 30 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / sr
    wave = sum(np.sin(k * phase) / k for k in range(1, 12)) * (0.5 + 0.5 * np.sin(2 * np.pi * 4 * t) ** 2)
    wave += 0.01 * np.random.default_rng(seed).standard_normal(len(t))
    return (0.3 * wave / np.abs(wave).max()).astype(np.float32), sr


def _checkpoint(model, path: Path) -> None:
    """ESPnet's layout: <N>epoch.pth with valid.loss.best.pth linked to it."""
    torch.save(model.state_dict(), path.parent / "1epoch.pth")
    os.symlink("1epoch.pth", path)


def build_recipe(root: Path, voices=("V001", "V002")) -> Path:
    recipe = root / "recipe"
    exp, dump = recipe / "exp" / SYSTEM, recipe / "dump" / "mfcc"
    for d in (exp, dump / "train", dump / "voice"):
        d.mkdir(parents=True)
    (dump / "train" / "tr.shape").write_text("S01_0001 120,39\nS01_0002 130,39\n")
    (dump / "train" / "utt2dur").write_text("S01_0001 1.200\nS01_0002 1.300\nS01_0003 2.000\n")
    (dump / "voice" / "utt2dur").write_text("V001_0001 1.500\nV002_0001 1.000\n")
    conf = {"model": "vqvae", "model_conf": VQ_CONF, "max_epoch": 1, "seed": 0,
            "train_data_path_and_name_and_type": [["dump/mfcc/train/tr.scp", "feats", "kaldi_ark"],
                                                  ["dump/train_utt2sid", "sids", "text_int"]],
            "train_shape_file": ["dump/mfcc/train/tr.shape"]}
    (exp / "config.yaml").write_text(yaml.safe_dump(conf))
    torch.manual_seed(0)
    _checkpoint(VQVAEModel(**VQ_CONF).eval(), exp / "valid.loss.best.pth")
    for k, v in enumerate(voices):
        d = recipe / "exp" / INV / v
        (d / "lists").mkdir(parents=True)
        (d / "lists" / "mfcc_tr.shape").write_text(f"{v}_0001 150,39\n")
        inv_conf = {"model": "inverter", "max_epoch": 1, "train_shape_file": [f"exp/{INV}/{v}/lists/mfcc_tr.shape"],
                    "model_conf": {"vqvae_config": f"exp/{SYSTEM}/config.yaml",
                                   "vqvae_model": f"exp/{SYSTEM}/valid.loss.best.pth", **INV_CONF}}
        (d / "config.yaml").write_text(yaml.safe_dump(inv_conf))
        torch.manual_seed(1 + k)
        inv = InverterModel(str(exp / "config.yaml"), str(exp / "valid.loss.best.pth"), **INV_CONF)
        _checkpoint(inv.eval(), d / "valid.loss.best.pth")
    res = recipe / "exp" / INV / "resynth_test" / voices[0]
    res.mkdir(parents=True)
    (res / "resynth.json").write_text('{"griffin_lim_iters": 8}')
    (recipe / "exp" / "results.json").write_text(
        '{"corpus": "mini", "systems": {"%s": {"test": {"abx": 31.5, "bitrate": 70.2}}, '
        '"inverter": {"test": {"mcd": 9.1}}}}' % SYSTEM)
    return recipe


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    """The two archives, moved to a fresh directory; the recipe that made them deleted."""
    root = tmp_path_factory.mktemp("vqvae_inference")
    old = os.environ.get("SPEECH_RECIPES_CACHE")
    os.environ["SPEECH_RECIPES_CACHE"] = str(root / "cache")
    recipe = build_recipe(root)
    exp_dirs = root / "exp_copy"  # what from_pretrained(exp dir) is tested on
    shutil.copytree(recipe, exp_dirs, symlinks=True)
    fresh = root / "fresh"
    fresh.mkdir()
    out = {}
    for name in (SYSTEM, INV):
        archive = pack_system(recipe, name, recipe / "exp" / name / "packed" / "model.tar.gz")
        out[name] = Path(shutil.copy(archive, fresh / f"{name}.tar.gz"))
    shutil.rmtree(recipe)
    yield {"vq": out[SYSTEM], "inv": out[INV], "root": root, "exp": exp_dirs}
    if old is None:
        os.environ.pop("SPEECH_RECIPES_CACHE", None)
    else:
        os.environ["SPEECH_RECIPES_CACHE"] = old


# ----------------------------------------------------------------------------- packing and cards
def test_cards_say_what_the_models_are(packed):
    card = read_card(packed["vq"])
    assert card["paper"] == "vqvae" and card["kind"] == "encoder" and card["corpus"] == "mini"
    assert card["codebook_size"] == 8 and card["frame_rate"] == 25.0 and card["sample_rate"] == 16000
    assert card["metrics"] == {"test": {"abx": 31.5, "bitrate": 70.2}} and card["features"]["name"] == "mfcc"
    assert card["training"]["utterances"] == 2 and card["training"]["hours"] == pytest.approx(2.5 / 3600, abs=1e-4)
    assert card["training"]["checkpoint_epoch"] == "1epoch.pth"
    assert card["units_to_speech"] == f"exp/{INV}/packed/model.tar.gz"
    inv = read_card(packed["inv"])
    assert inv["kind"] == "inverter" and inv["voices"] == ["V001", "V002"] and inv["codebook_size"] == 8
    assert inv["resynthesis"]["griffin_lim_iters"] == 8 and inv["metrics"] == {"test": {"mcd": 9.1}}
    assert inv["units_from"].startswith(SYSTEM) and inv["training"]["per_voice"]["V001"]["utterances"] == 1


def test_pack_refuses_a_model_whose_input_is_not_the_recipes_features(tmp_path, monkeypatch):
    monkeypatch.setenv("SPEECH_RECIPES_CACHE", str(tmp_path / "cache"))
    recipe = build_recipe(tmp_path, voices=("V001",))
    conf = yaml.safe_load((recipe / "exp" / SYSTEM / "config.yaml").read_text())
    conf["model_conf"]["idim"] = 80
    (recipe / "exp" / SYSTEM / "config.yaml").write_text(yaml.safe_dump(conf))
    with pytest.raises(ValueError, match="idim 80 but the recipe's mfcc features have 39"):
        pack_system(recipe, SYSTEM, tmp_path / "m.tar.gz")
    with pytest.raises(FileNotFoundError, match="exp/nothing: no such system"):
        pack_system(recipe, "nothing", tmp_path / "m.tar.gz")
    shutil.rmtree(recipe / "exp" / INV / "V001")
    with pytest.raises(FileNotFoundError, match="no trained target voice"):
        pack_system(recipe, INV, tmp_path / "m.tar.gz")
    assert not (tmp_path / "m.tar.gz").exists()


def test_frontend_is_what_the_stages_ask_extract_feats_for():
    """local_models/vqvae/stages.sh's `extract` options and frontend.RECIPE_FEATURES must not drift apart."""
    lib = (ROOT / "local_models/vqvae/stages.sh").read_text()
    cases = dict(re.findall(r'^\s+(\w+)\) opts="([^"]+)" ;;', lib, re.M))
    assert set(cases) == set(RECIPE_FEATURES)
    common = re.search(r"make_feats .*? \$\{opts\} ([^\n]*)", lib).group(1).split()
    for name, opts in cases.items():
        words = opts.split() + common
        got = {w[2:].replace("-", "_"): v for w, v in zip(words[::2], words[1::2])}
        want = FeatConfig(kind=got.pop("kind"), **{k: type(getattr(FeatConfig(), k))(v) for k, v in got.items()})
        assert feat_config(name) == want, name


# ----------------------------------------------------------------------------- speech -> units
def test_speech_to_units_from_a_fresh_directory(packed, tmp_path):
    s2u = Speech2Units.from_pretrained(packed["vq"])
    wave, sr = speech_like()
    path = tmp_path / "utt.wav"
    soundfile.write(path, wave, sr)
    r = s2u(str(path))
    feats, duration = s2u.features(str(path))
    assert r["units"].dtype == np.int64 and len(r["units"]) == feats.shape[0] // 4 and r["frame_rate"] == 25.0
    assert abs(len(r["units"]) - duration * 25) <= 1 and duration == pytest.approx(1.3, abs=1e-3)
    assert r["units"].min() >= 0 and r["units"].max() < 8
    # the recipe's way: features at 16 kHz, the whole utterance through the model's own encode
    want = encode_all(s2u.model, {"u": feats})["u"]
    assert r["units"].tolist() == want.tolist()
    counts = np.bincount(r["units"], minlength=8) / len(r["units"])
    h = -sum(p * np.log2(p) for p in counts if p > 0)
    assert r["bitrate"] == pytest.approx(len(r["units"]) / duration * h)
    # the same audio as an (array, rate) pair, as a bare array with its rate, and in stereo
    assert s2u((wave, sr))["units"].tolist() == want.tolist()
    assert s2u(wave, sample_rate=sr)["units"].tolist() == want.tolist()
    assert s2u((np.stack([wave, wave], 1), sr))["units"].tolist() == want.tolist()


def test_long_recordings_are_encoded_in_chunks(packed):
    s2u = Speech2Units.from_pretrained(packed["vq"])
    feats = compute(speech_like(3.0, 16000)[0], s2u.feat_conf)
    whole = encode_frames(s2u.model.vqvae, feats, "cpu", 10_000)
    chunked = encode_frames(s2u.model.vqvae, feats, "cpu", 101)  # rounded down to 100 frames = 25 units
    assert len(chunked) == len(whole) == feats.shape[0] // 4 and chunked.max() < 8
    # every chunk sees the whole utterance's normalisation and only its own frames
    from local_models.vqvae.model import utterance_mvn

    x = utterance_mvn(torch.from_numpy(feats)[None], torch.ones(1, feats.shape[0], dtype=torch.bool))
    for start in (0, 100):
        z, _ = s2u.model.vqvae.encoder(x[:, start:start + 100], torch.tensor([100]))
        assert chunked[start // 4:start // 4 + 25].tolist() == s2u.model.vqvae.codebook.nearest(z)[0].tolist()


def test_a_long_recording_streams_in_pieces_each_an_utterance(packed, tmp_path):
    """Beyond max_chunk_s + its tail, an input is cut into max_chunk_s pieces, each encoded as the recipe encodes an
    utterance; stream() yields them one by one from a file read in blocks, and __call__ joins the same units."""
    from local_models.vqvae.inference import cut_pieces

    s2u = Speech2Units.from_pretrained(packed["vq"], max_chunk_s=1.0)  # pieces of 1 s, a tail of 0.5 s
    wave = speech_like(3.7, 16000)[0]
    soundfile.write(tmp_path / "long.wav", wave, 16000, subtype="FLOAT")
    pieces = [wave[:16000], wave[16000:32000], wave[32000:48000], wave[48000:]]
    want = [encode_all(s2u.model, {"u": compute(p, s2u.feat_conf)})["u"] for p in pieces]
    streamed = list(s2u.stream(str(tmp_path / "long.wav")))
    assert [u.tolist() for u in streamed] == [u.tolist() for u in want]
    r = s2u((wave, 16000))
    assert r["units"].tolist() == np.concatenate(want).tolist() and r["duration"] == pytest.approx(3.7)
    assert s2u(str(tmp_path / "long.wav"))["units"].tolist() == r["units"].tolist()
    # a remainder under the tail joins the last piece; blocks of any size cut the same
    assert [len(p) for p in cut_pieces([np.zeros(1200)], 500, 250)] == [500, 700]
    assert [len(p) for p in cut_pieces(np.array_split(np.zeros(1200), 7), 500, 250)] == [500, 700]
    assert [len(p) for p in cut_pieces([np.zeros(1300)], 500, 250)] == [500, 500, 300]
    assert [len(p) for p in cut_pieces([np.zeros(700)], 500, 250)] == [700]
    # every frame of a piece goes into the encoder (101 frames a piece here: none of the last T mod 4 left out)
    seen = []
    hook = s2u.model.vqvae.encoder.register_forward_pre_hook(lambda m, args: seen.append(args[0].shape[1]))
    list(s2u.stream((wave, 16000)))
    hook.remove()
    assert seen == [len(compute(p, s2u.feat_conf)) for p in pieces] and seen[0] % 4 != 0
    # silence and clipping are judged on the whole of a long file, as on a short one
    soundfile.write(tmp_path / "quiet.wav", np.zeros(16000 * 4, np.float32), 16000)
    with pytest.raises(AudioError, match="quiet.wav: silent"):
        list(s2u.stream(str(tmp_path / "quiet.wav")))
    with pytest.raises(ValueError, match="at least 1 s"):
        Speech2Units.from_pretrained(packed["vq"], max_chunk_s=0.02)
    # up to max_chunk_s + the tail: one utterance, as before
    assert len(list(s2u.stream((wave[:23000], 16000)))) == 1 and len(list(s2u.stream((wave[:24000], 16000)))) == 2


def test_from_an_exp_dir(packed, tmp_path):
    s2u = Speech2Units.from_pretrained(packed["exp"] / "exp" / SYSTEM)
    wave, sr = speech_like()
    assert s2u((wave, sr))["units"].tolist() == Speech2Units.from_pretrained(packed["vq"])((wave, sr))["units"].tolist()
    u2s = Units2Speech.from_pretrained(packed["exp"] / "exp" / INV)  # its VQ-VAE paths: recipe-relative
    assert u2s.files["vqvae_model"] == packed["exp"] / "exp" / SYSTEM / "valid.loss.best.pth"
    assert u2s.speakers == ["V001", "V002"] and u2s.resynth["griffin_lim_iters"] == 8


@pytest.mark.parametrize("case, match", [
    ("missing", "no such audio file"), ("empty", "zero-length"), ("silent", "silent"), ("clipped", "clipped"),
    ("text", "cannot read audio"), ("short", "too short for one unit"), ("nan", "NaN")])
def test_bad_audio_is_named(packed, tmp_path, case, match):
    s2u = Speech2Units.from_pretrained(packed["vq"])
    path = tmp_path / f"{case}.wav"
    if case == "empty":
        soundfile.write(path, np.zeros(0, np.float32), 16000)
    elif case == "silent":
        soundfile.write(path, np.zeros(16000, np.float32), 16000)
    elif case == "clipped":
        soundfile.write(path, np.sign(speech_like(1.0, 16000)[0]), 16000)
    elif case == "text":
        path.write_text("not audio")
    elif case == "short":
        soundfile.write(path, speech_like(0.02, 16000)[0], 16000)
    elif case == "nan":
        with pytest.raises(AudioError, match=match):
            s2u((np.full(1600, np.nan, np.float32), 16000))
        return
    with pytest.raises(AudioError, match=f"{re.escape(str(path))}: .*{match}"):
        s2u(str(path))


def test_bad_archives(packed, tmp_path):
    corrupt = tmp_path / "corrupt.tar.gz"
    data = packed["vq"].read_bytes()
    corrupt.write_bytes(data[: len(data) // 2])
    with pytest.raises(PackError, match="corrupt"):
        Speech2Units.from_pretrained(corrupt)
    with pytest.raises(PackError, match="holds a codebook inverter, not a VQ-VAE encoder: use .*with units-to-speech"):
        Speech2Units.from_pretrained(packed["inv"])
    with pytest.raises(PackError, match="holds a VQ-VAE encoder, not a codebook inverter"):
        Units2Speech.from_pretrained(packed["vq"])
    (tmp_path / "r" / "exp" / "s").mkdir(parents=True)
    (tmp_path / "r" / "exp" / "s" / "m.pth").write_bytes(b"x")
    sad = pack_model(tmp_path / "sad.tar.gz", paper="sad", system="s", recipe_dir=tmp_path / "r",
                     files={"model_file": tmp_path / "r" / "exp" / "s" / "m.pth"})
    with pytest.raises(PackError, match="this is a Fearless Steps SAD .* not a Transformer VQ-VAE"):
        Speech2Units.from_pretrained(sad)
    with pytest.raises(FileNotFoundError):
        Units2Speech.from_pretrained(tmp_path / "none.tar.gz")


# ----------------------------------------------------------------------------- units -> speech
def test_units_to_speech_in_each_voice(packed):
    u2s = Units2Speech.from_pretrained(packed["inv"])
    assert u2s.speakers == ["V001", "V002"] and u2s.num_codes == 8
    units = np.array([0, 1, 1, 2, 3, 3, 3, 4, 5, 6, 7, 7] * 3)
    a, b = u2s(units), u2s(units.tolist(), speaker="V002")
    assert a["speaker"] == "V001" and b["speaker"] == "V002" and a["sample_rate"] == 16000
    for r in (a, b):  # 4 spectrum frames of 10 ms per unit; not silent, not clipped
        assert r["wav"].dtype == np.float32 and len(r["wav"]) == (4 * len(units) - 1) * 160
        assert np.isfinite(r["wav"]).all() and 1e-4 < np.abs(r["wav"]).max() <= 0.99 and r["wav"].std() > 1e-5
    assert not np.allclose(a["wav"], b["wav"])  # two voices, two models
    np.testing.assert_array_equal(u2s(units)["wav"], a["wav"])  # deterministic


def test_long_unit_sequences_are_inverted_in_chunks(packed):
    u2s = Units2Speech.from_pretrained(packed["inv"], max_chunk_units=10)
    units = np.arange(25) % 8
    mag = u2s.magnitude(units, "V001")
    assert mag.shape == (100, 257) and np.allclose(mag[:40], u2s.magnitude(units[:10], "V001"))


@pytest.mark.parametrize("units, match", [
    ([1, 2, 8, 9], "unit 8 at position 2 is not a code of this codebook \\(0..7\\)"),
    ([-1], "unit -1 at position 0"), ([1.0, 2.5], "unit 2.5 at position 1"), ([], "non-empty"),
    ([[1, 2]], "1-D"), (["a"], "integers")])
def test_bad_units(units, match):
    with pytest.raises(ValueError, match=match):
        check_units(units, 8)


def test_unknown_speaker_lists_the_voices(packed):
    with pytest.raises(ValueError, match="unknown speaker 'V009': this inverter speaks V001, V002"):
        Units2Speech.from_pretrained(packed["inv"])([1, 2, 3], speaker="V009")


# ----------------------------------------------------------------------------- the commands
def test_cli_round_trip(packed, tmp_path, capsys):
    from local_models.bin import speech_to_units, units_to_speech

    for name, seed in (("one", 0), ("two", 1)):
        soundfile.write(tmp_path / f"{name}.wav", *speech_like(seed=seed))
    units = tmp_path / "out" / "units.txt"
    assert speech_to_units.main([str(tmp_path / "one.wav"), str(tmp_path / "two.wav"), "--model",
                                 str(packed["vq"]), "-o", str(units), "--threads", "1"]) == 0
    err = capsys.readouterr().err
    assert "one: " in err and re.search(r"bitrate \d+\.\d\d bits/s over 2 file\(s\)", err)
    lines = units.read_text().splitlines()
    assert [l.split()[0] for l in lines] == ["one", "two"] and all(len(l.split()) > 20 for l in lines)
    s2u = Speech2Units.from_pretrained(packed["vq"])
    assert lines[0].split()[1:] == [str(u) for u in s2u(str(tmp_path / "one.wav"))["units"]]
    wav_dir = tmp_path / "wavs"
    assert units_to_speech.main([str(units), "--model", str(packed["inv"]), "--speaker", "V002",
                                 "-o", str(wav_dir)]) == 0
    for name in ("one", "two"):
        wave, sr = soundfile.read(wav_dir / f"{name}.wav")
        assert sr == 16000 and np.abs(wave).max() > 1e-3
    one = tmp_path / "one.units"
    one.write_text(lines[0] + "\n")
    assert units_to_speech.main([str(one), "--model", str(packed["inv"]), "-o", str(tmp_path / "one.flac")]) == 0
    assert soundfile.info(tmp_path / "one.flac").samplerate == 16000
    with pytest.raises(SystemExit) as e:
        speech_to_units.main(["--help"])
    assert e.value.code == 0 and "speech-to-units hello.wav --model" in capsys.readouterr().out


def test_cli_errors_name_the_input_and_write_nothing(packed, tmp_path, capsys):
    from local_models.bin import speech_to_units, units_to_speech

    soundfile.write(tmp_path / "good.wav", *speech_like())
    soundfile.write(tmp_path / "quiet.wav", np.zeros(8000, np.float32), 16000)
    out = tmp_path / "units.txt"
    argv = [str(tmp_path / "good.wav"), str(tmp_path / "quiet.wav"), "--model", str(packed["vq"]), "-o", str(out)]
    assert run_main(speech_to_units.main, argv, prog="speech-to-units") == 2
    assert "speech-to-units: error: " in capsys.readouterr().err and not out.exists()
    units = tmp_path / "bad.units"
    units.write_text("a 1 2 3\n\nb 1 2 99 4\n")
    wav_dir = tmp_path / "wavs"
    assert run_main(units_to_speech.main, [str(units), "--model", str(packed["inv"]), "-o", str(wav_dir)],
                    prog="units-to-speech") == 2
    err = capsys.readouterr().err
    assert f"units-to-speech: error: {units}:3: 'b': unit 99 at position 2" in err and not wav_dir.exists()
    for text, match in (("a 1 x\n", ":1: unit 1 of 'a' is 'x'"), ("a\n", ":1: 'a' has no units"),
                        ("a 1\na 2\n", ":2: 'a' again"), ("\n", "no units lines")):
        units.write_text(text)
        assert run_main(units_to_speech.main, [str(units), "-m", str(packed["inv"]), "-o", str(wav_dir)]) == 2
        assert match in capsys.readouterr().err
    units.write_text("a 1\nb 2\n")
    assert run_main(units_to_speech.main, [str(units), "-m", str(packed["inv"]), "-o", str(tmp_path / "x.wav")]) == 2
    assert "has 2 lines: give a directory" in capsys.readouterr().err
    assert run_main(units_to_speech.main, [str(units), "-m", str(packed["inv"]), "--speaker", "Z", "-o",
                                           str(wav_dir)]) == 2
    assert "this inverter speaks V001, V002" in capsys.readouterr().err and not wav_dir.exists()
    assert run_main(units_to_speech.main, [str(units), "-m", str(packed["vq"]), "-o", str(wav_dir)]) == 2
    assert "not a codebook inverter" in capsys.readouterr().err


def test_inference_keeps_tensors_on_the_models_device(packed, tmp_path):
    """GPU-safe (simulated cuda: tests/test_gpu_safety.py's pretend_cuda): inputs made on the model's device,
    nothing turned into numpy without .cpu(); same units and magnitudes as on the CPU."""
    from test_gpu_safety import CUDA, pretend_cuda, to_pretend_cuda

    soundfile.write(tmp_path / "a.wav", *speech_like())
    s2u, u2s = Speech2Units.from_pretrained(packed["vq"]), Units2Speech.from_pretrained(packed["inv"])
    want_units = s2u(str(tmp_path / "a.wav"))["units"]
    want_mag = u2s.magnitude(want_units, "V002")
    to_pretend_cuda(s2u.model)
    to_pretend_cuda(u2s._model("V002"))
    s2u.device = u2s.device = CUDA
    with pretend_cuda():
        units = s2u(str(tmp_path / "a.wav"))["units"]
        mag = u2s.magnitude(units, "V002")
    assert units.tolist() == want_units.tolist()
    np.testing.assert_allclose(mag, want_mag, rtol=1e-5, atol=1e-6)


def test_demo_fresh_input_and_summary(packed, tmp_path):
    from local_models.bin import speech_to_units, units_to_speech
    from local_models.vqvae.demo import make_fresh, summary

    what = make_fresh(tmp_path / "fresh.wav")
    info = soundfile.info(tmp_path / "fresh.wav")
    assert "British English voice en+m3" in what and info.samplerate == 22050 and info.duration > 1.5
    assert speech_to_units.main([str(tmp_path / "fresh.wav"), "-m", str(packed["vq"]), "-o",
                                 str(tmp_path / "fresh.units")]) == 0
    assert units_to_speech.main([str(tmp_path / "fresh.units"), "-m", str(packed["inv"]), "-o",
                                 str(tmp_path / "out.wav")]) == 0
    md = summary(tmp_path / "fresh.wav", tmp_path / "fresh.units", tmp_path / "out.wav", str(packed["vq"]),
                 str(packed["inv"]), 1.0, 2.0, 60.0, tmp_path / "summary.md", voice=what)
    n = len((tmp_path / "fresh.units").read_text().split()) - 1
    assert md.startswith("### zerospeech2019/unit1") and (tmp_path / "summary.md").read_text() == md
    assert f"{n} units at 25 units/s" in md and "not silent, not clipped" in md and "voice V001" in md
    assert re.search(r"bitrate \d+\.\d bits/s", md) and re.search(r"RTF \d\.\d{4}", md)
