"""KSS / JDI-T packed models and one-call synthesis (local_models.jdit.{frontend,pack,inference}, text-to-speech):
tiny randomly initialised systems in a fake recipe, packed, moved away from the recipe (which is deleted) and
spoken from typed Korean; the front end's readings; speed; every bad input named in one clear error."""
import contextlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile
import torch
import yaml

from local_models.bin import text_to_speech
from local_models.common.longtext import level
from local_models.common.cli import run_main
from local_models.common.pack import PackError, pack_model
from local_models.jdit import frontend, g2p
from local_models.jdit.inference import Text2Speech, regulate_frames, scale_durations
from local_models.jdit.pack import exp_files, pack_system

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs" / "kss" / "tts1"
TINY = {
    "jdit": dict(adim=16, aheads=2, elayers=1, eunits=16, dlayers=1, dunits=16, embed_dim=16, eprenet_conv_chans=16,
                 dprenet_units=16, aligner_heads=2, aligner_units=32, duration_predictor_chans=16),
    "tacotron2": dict(embed_dim=16, elayers=1, eunits=16, econv_layers=1, econv_chans=16, dlayers=1, dunits=16,
                      prenet_units=16, postnet_layers=1, postnet_chans=16, adim=16, aconv_chans=4),
    "fastspeech": dict(adim=16, aheads=2, elayers=1, eunits=16, dlayers=1, dunits=16, postnet_layers=0,
                       duration_predictor_chans=16),
}
FRESH = "내일 오후 3시에 도서관 앞에서 만나요, 늦지 마세요!"


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPEECH_RECIPES_CACHE", str(tmp_path / "cache"))


# ----------------------------------------------------------------------------- front end

@pytest.mark.parametrize("digits,spoken", [("0", "영"), ("7", "칠"), ("10", "십"), ("11", "십일"), ("100", "백"),
                                           ("1500", "천오백"), ("2024", "이천이십사"), ("10000", "만"),
                                           ("11000", "만천"), ("20000", "이만"), ("110000", "십일만"),
                                           ("100000000", "일억"), ("300000005", "삼억오")])
def test_sino_korean_numbers(digits, spoken):
    assert frontend.sino_integer(digits) == spoken


def test_normalize_reads_what_people_type():
    n = frontend.normalize
    assert n("3개, 20살, 21명") == "세개, 스무살, 스물한명"  # native numerals before their counters
    assert n("3시간 30분") == "세시간 삼십분" and n("3 개") == "세 개"
    assert n("6월 10일, 10월") == "유월 십일, 시월" and n("100개") == "백개"  # 1-99 only are native
    assert n("1,500원, 3.14") == "천오백원, 삼 점 일사" and n("010-1234") == "공일공-천이백삼십사"
    assert n("KTX, tv 20%") == "케이티엑스, 티브이 이십퍼센트" and n("Ａ３！") == "에이삼!"
    assert n("끝.") == "끝." and n("1.") == "일."  # a sentence-final point is no decimal point
    toks = frontend.text_to_tokens(FRESH, "jamo")
    assert toks == g2p.text_to_tokens("내일 오후 세시에 도서관 앞에서 만나요, 늦지 마세요!")
    assert "<pau>" in toks and toks[-1] == "!" and set(toks) <= set(g2p.INVENTORY)


def test_front_end_errors_name_characters_and_positions():
    with pytest.raises(frontend.UnreadableText) as e:
        frontend.text_to_tokens("漢字 3개 😀", "jamo")
    assert e.value.chars == [("漢", 1), ("字", 2), ("😀", 7)]
    assert "'漢' (U+6F22 CJK UNIFIED IDEOGRAPH-6F22) at position 1" in str(e.value) and "at position 7" in str(e.value)
    for empty in ("", "   \n\t"):
        with pytest.raises(ValueError, match="empty text"):
            frontend.text_to_tokens(empty, "jamo")
    with pytest.raises(ValueError, match="no Korean letter"):
        frontend.text_to_tokens("...!?", "jamo")


def test_speed_scales_durations_in_integers():
    d = torch.tensor([0, 1, 2, 3, 8, 0])
    assert scale_durations(d, 2.0).tolist() == [0, 1, 1, 2, 4, 0]  # a 1-frame token keeps its frame
    assert scale_durations(d, 0.5).tolist() == [0, 2, 4, 6, 16, 0] and scale_durations(d, 1.0).dtype == torch.int64
    mel = torch.arange(6.0)[:, None].repeat(1, 2)  # frames 0..5 of tokens with 1, 0, 3, 2 frames
    out = regulate_frames(mel, torch.tensor([1, 0, 3, 2]), torch.tensor([2, 0, 1, 4]))
    assert out[:, 0].tolist() == [0, 0, 2, 4, 4, 5, 5]  # each token's own frames, nearest, in order
    with pytest.raises(ValueError, match="sum to 5 frames, the mel has 6"):
        regulate_frames(mel, torch.tensor([5]), torch.tensor([2]))


# ----------------------------------------------------------------------------- a fake trained recipe

def write_system(recipe: Path, system: str, vocoder: str = "griffin_lim") -> Path:
    """exp/tts_SYSTEM as ESPnet2 training leaves it (config.yaml, 1epoch.pth + links), random weights, and a
    decode dir whose synth.json names the vocoder."""
    from espnet2.tasks.tts import TTSTask
    from espnet2.utils.yaml_no_alias_safe_dump import yaml_no_alias_safe_dump

    import local_models.jdit.task  # noqa: F401

    exp = recipe / "exp" / f"tts_{system}"
    exp.mkdir(parents=True)
    args = TTSTask.get_parser().parse_args([
        "--output_dir", str(exp), "--token_list", "data/token_list/phn/tokens.txt", "--odim", "80",
        "--token_type", "phn", "--cleaner", "none", "--g2p", "none", "--normalize", "global_mvn",
        "--normalize_conf", "stats_file=dump/train/feats_stats.npz", "--tts", system,
        "--tts_conf", json.dumps(TINY[system]), "--batch_type", "sorted", "--batch_size", "2", "--max_epoch", "3",
        "--train_data_path_and_name_and_type", "data/train/feats.scp,speech,kaldi_ark"])
    with torch.random.fork_rng(), contextlib.chdir(recipe):  # the config's paths are relative to the recipe
        torch.manual_seed(0)
        model = TTSTask.build_model(args)
    if system != "tacotron2":  # about 5 frames a token, not the untrained predictor's ~0
        model.tts.duration_predictor.linear.bias.data.fill_(1.8)
    with open(exp / "config.yaml", "w", encoding="utf-8") as f:
        yaml_no_alias_safe_dump(vars(args), f, indent=4, sort_keys=False)
    torch.save(model.state_dict(), exp / "3epoch.pth")
    for link in ("valid.loss.best.pth", "latest.pth"):
        (exp / link).symlink_to("3epoch.pth")
    (exp / "decode_test").mkdir()
    (exp / "decode_test" / "synth.json").write_text(json.dumps({"vocoder": vocoder, "griffin_lim_iters": 2}))
    return exp


def write_pwg(recipe: Path, name: str = "pwg") -> str:
    """A random tiny Parallel WaveGAN (NAME pwg) or Multi-band MelGAN (mbmelgan) as jdit_pwg_train leaves it:
    exp/vocoder_NAME/{checkpoint.pkl,config.yml}."""
    from local_models.common.compat import import_parallel_wavegan_models

    conf = yaml.safe_load((RECIPE / f"conf/tuning/train_{name}_tiny.yaml").read_text())
    generator = getattr(import_parallel_wavegan_models(), conf["generator_type"])
    d = recipe / "exp" / f"vocoder_{name}"
    d.mkdir(parents=True)
    torch.manual_seed(0)
    gen = generator(**conf["generator_params"])
    torch.save({"model": {"generator": gen.state_dict()}, "steps": 2}, d / "checkpoint.pkl")
    (d / "config.yml").write_text(yaml.dump(conf, Dumper=yaml.Dumper))
    return f"exp/vocoder_{name}/checkpoint.pkl"


def fake_recipe(root: Path, systems=("jdit",), vocoder="griffin_lim") -> Path:
    recipe = root / "recipe"
    (recipe / "conf").mkdir(parents=True)
    shutil.copy(RECIPE / "conf" / "fbank.conf", recipe / "conf" / "fbank.conf")
    (recipe / "data" / "token_list" / "phn").mkdir(parents=True)
    tokens = g2p.token_list([list(g2p.INVENTORY)])
    (recipe / "data" / "token_list" / "phn" / "tokens.txt").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    (recipe / "data" / "train").mkdir()
    (recipe / "data" / "train" / "utt2num_frames").write_text("u1 430\nu2 431\n")
    (recipe / "dump" / "train").mkdir(parents=True)
    rng = np.random.default_rng(0)
    feats = rng.normal(-2.0, 0.7, (500, 80))
    np.savez(recipe / "dump" / "train" / "feats_stats.npz", count=np.array(500), sum=feats.sum(0),
             sum_square=(feats ** 2).sum(0))
    if vocoder in ("pwg", "mbmelgan"):
        vocoder = write_pwg(recipe, vocoder)
    for s in systems:
        write_system(recipe, s, vocoder)
    results = {"corpus": "toy", "systems": {s: {"test": {"mcd": 9.5 + i}} for i, s in enumerate(systems)}}
    (recipe / "exp" / "results.json").write_text(json.dumps(results))
    return recipe


def tts_cli(capsys, *argv):
    rc = run_main(text_to_speech.main, list(map(str, argv)), prog="text-to-speech")
    return rc, capsys.readouterr()


# ----------------------------------------------------------------------------- packed models

def test_packed_jdit_speaks_without_its_recipe(tmp_path, capsys, monkeypatch):
    recipe = fake_recipe(tmp_path)
    archive = pack_system(recipe, "tts_jdit", recipe / "exp/tts_jdit/packed/model.tar.gz")
    moved = tmp_path / "elsewhere" / "jdit.tar.gz"
    moved.parent.mkdir()
    shutil.copy(archive, moved)
    shutil.rmtree(recipe)  # the archive alone must do
    monkeypatch.chdir(moved.parent)

    tts = Text2Speech.from_pretrained(moved)
    card = tts.card
    assert card["paper"] == "jdit" and card["system"] == "tts_jdit" and card["metrics"] == {"test": {"mcd": 9.5}}
    assert card["sample_rate"] == 22050 and card["vocoder"] == "Griffin-Lim, 2 iterations"
    assert card["training"]["utterances"] == 2 and card["training"]["steps"] == 3 and card["corpus"] == "toy"
    assert card["training"]["hours"] == pytest.approx(861 * 256 / 22050 / 3600, abs=1e-4)
    out = tts(FRESH)
    assert out["tokens"] == frontend.text_to_tokens(FRESH, "jamo") and len(out["durations"]) == len(out["tokens"])
    assert out["durations"].dtype == np.int64 and out["wav"].dtype == np.float32 and out["sample_rate"] == 22050
    frames = int(out["durations"].sum())
    assert out["mel"].shape == (frames, 80) and abs(len(out["wav"]) - frames * 256) <= 1024
    assert 1e-4 < np.sqrt(np.mean(out["wav"] ** 2)) and np.abs(out["wav"]).max() <= 1.0
    fast = tts(FRESH, speed=2.0)
    assert fast["durations"].tolist() == scale_durations(torch.from_numpy(out["durations"]), 2.0).tolist()
    np.testing.assert_array_equal(tts(FRESH)["wav"], out["wav"])  # deterministic

    rc, io = tts_cli(capsys, "--model", moved, "--text", FRESH, "-o", "hello.wav", "--speed", "2")
    wav, sr = soundfile.read(moved.parent / "hello.wav", dtype="float32")
    # the command levels its one piece (common.longtext.level); the API returns the model's level
    assert rc == 0 and sr == 22050 and np.max(np.abs(wav - level(fast["wav"]))) < 2 / 32768
    assert "hello.wav" in io.out
    lines = tmp_path / "lines.txt"
    lines.write_text("첫째 줄.\n둘째, 2번째 줄!\n", encoding="utf-8")
    rc, _ = tts_cli(capsys, "-m", moved, "--text_file", lines, "-o", tmp_path / "many")
    assert rc == 0 and sorted(p.name for p in (tmp_path / "many").iterdir()) == ["0001.wav", "0002.wav"]


def test_bad_inputs_give_one_clear_error_and_no_output(tmp_path, capsys):
    recipe = fake_recipe(tmp_path)
    archive = pack_system(recipe, "tts_jdit", tmp_path / "jdit.tar.gz")
    tts = Text2Speech.from_pretrained(archive)
    for text, msg in (("", "empty text"), ("  \t", "empty text"), ("...", "no Korean letter"),
                      ("좋아요 😀", r"'😀' .* at position 5")):
        with pytest.raises(ValueError, match=msg):
            tts(text)
        rc, io = tts_cli(capsys, "--model", archive, "--text", text, "-o", tmp_path / "x.wav")
        assert rc == 2 and io.err.startswith("text-to-speech: error: --text: ") and not (tmp_path / "x.wav").exists()
    with pytest.raises(ValueError, match="speed must be a positive number"):
        tts("안녕", speed=0)
    lines = tmp_path / "lines.txt"
    lines.write_text("좋은 아침.\n오늘은 ☃ 눈사람\n", encoding="utf-8")  # line 2 is bad: nothing is written
    rc, io = tts_cli(capsys, "--model", archive, "--text_file", lines, "-o", tmp_path / "out")
    assert rc == 2 and "lines.txt:2: " in io.err and "at position 5" in io.err and not (tmp_path / "out").exists()
    corrupt = tmp_path / "corrupt.tar.gz"
    corrupt.write_bytes(archive.read_bytes()[:2000])
    with pytest.raises(PackError, match="corrupt.tar.gz: corrupt archive"):
        Text2Speech.from_pretrained(corrupt)
    rc, io = tts_cli(capsys, "--model", corrupt, "--text", "안녕", "-o", tmp_path / "x.wav")
    assert rc == 2 and "corrupt.tar.gz: corrupt archive" in io.err
    (tmp_path / "sad").mkdir()
    (tmp_path / "sad" / "m.pth").write_bytes(b"x")
    other = pack_model(tmp_path / "sad.tar.gz", paper="sad", system="cnn", recipe_dir=tmp_path / "sad",
                       files={"model_file": tmp_path / "sad" / "m.pth"})
    with pytest.raises(PackError, match="this is a Fearless Steps SAD .* model, not a JDI-T"):
        Text2Speech.from_pretrained(other)
    rc, io = tts_cli(capsys, "--model", other, "--text", "안녕", "-o", tmp_path / "x.wav")
    assert rc == 2 and "does not speak text" in io.err
    with pytest.raises(FileNotFoundError, match="model not found"):
        Text2Speech.from_pretrained(tmp_path / "nothing.tar.gz")


def test_exp_dir_speaks_from_any_directory(tmp_path, capsys, monkeypatch):
    recipe = fake_recipe(tmp_path)
    monkeypatch.chdir(tmp_path)  # the config's paths are relative to the recipe, not to here
    exp = recipe / "exp" / "tts_jdit"
    assert set(exp_files(exp)) == {"config", "fbank_conf", "model_file", "stats_file"}
    out = Text2Speech.from_pretrained("recipe/exp/tts_jdit")("안녕하세요.")  # relative to here
    assert out["wav"].size > 0 and Text2Speech.from_pretrained(exp).card["exp_dir"] == str(exp)
    rc, io = tts_cli(capsys, "--model", exp, "--text", "안녕하세요.", "-o", "a.wav")
    assert rc == 2 and "--paper jdit" in io.err
    rc, _ = tts_cli(capsys, "--model", exp, "--paper", "jdit", "--text", "안녕하세요.", "-o", "a.wav")
    np.testing.assert_allclose(soundfile.read("a.wav", dtype="float32")[0], level(out["wav"]), atol=2 / 32768)
    (exp / "valid.loss.best.pth").unlink()  # then the newest epoch; none: train it first
    assert exp_files(exp)["model_file"] == exp / "3epoch.pth"
    (exp / "3epoch.pth").unlink()
    with pytest.raises(FileNotFoundError, match="no valid.loss.best.pth and no <N>epoch.pth"):
        Text2Speech.from_pretrained(exp)


def test_packed_multiband_melgan_speaks_and_griffin_lim_stays_at_hand(tmp_path, capsys):
    """A JDI-T packed with the recipe's Multi-band MelGAN speaks through it (PQMF: 4 sub-bands back to hop samples
    a frame); --vocoder griffin_lim (from_pretrained(vocoder='griffin_lim')) swaps in Griffin-Lim, on the same mel."""
    recipe = fake_recipe(tmp_path, vocoder="mbmelgan")
    archive = pack_system(recipe, "tts_jdit", tmp_path / "jdit.tar.gz")
    shutil.rmtree(recipe)
    tts = Text2Speech.from_pretrained(archive)
    assert tts.card["vocoder"].startswith("Multi-band MelGAN") and type(tts.vocoder).__name__ == "PWGVocoder"
    assert tts.vocoder.model.pqmf.subbands == 4
    out = tts("안녕, 3번!")
    frames = int(out["durations"].sum())
    assert len(out["wav"]) == frames * 256 and np.abs(out["wav"]).max() > 0
    gl = Text2Speech.from_pretrained(archive, vocoder="griffin_lim")
    assert type(gl.vocoder).__name__ == "GriffinLim" and gl.synthesis["vocoder"]["type"] == "griffin_lim"
    other = gl("안녕, 3번!")
    np.testing.assert_array_equal(other["mel"], out["mel"])
    assert len(other["wav"]) == (frames - 1) * 256 and not np.allclose(other["wav"][:1000], out["wav"][:1000])
    with pytest.raises(ValueError, match="vocoder 'pwg'"):
        Text2Speech.from_pretrained(archive, vocoder="pwg")
    frames = int(tts("안녕")["durations"].sum())  # what both vocoders are given
    for vocoder, lost in (("griffin_lim", 1), ("packed", 0)):  # Griffin-Lim's centred frames: one hop fewer
        wav = tmp_path / f"{vocoder}.wav"
        rc, cap = tts_cli(capsys, "--model", archive, "--text", "안녕", "--vocoder", vocoder, "--raw_level", "-o", wav)
        assert rc == 0 and soundfile.info(str(wav)).frames == (frames - lost) * 256, cap.err


def test_baselines_with_parallel_wavegan(tmp_path):
    """FastSpeech (predicted durations, <sos/eos> appended) and Tacotron2 (autoregressive: attention durations,
    frames resampled for the speed), vocoded by a packed Parallel WaveGAN."""
    recipe = fake_recipe(tmp_path, ("fastspeech", "tacotron2"), vocoder="pwg")
    archives = {s: pack_system(recipe, f"tts_{s}", tmp_path / f"{s}.zip") for s in ("fastspeech", "tacotron2")}
    shutil.rmtree(recipe)
    for system, archive in archives.items():
        tts = Text2Speech.from_pretrained(archive)
        assert tts.card["vocoder"].startswith("Parallel WaveGAN") and tts.card["metrics"]["test"]["mcd"] > 9
        out = tts("안녕, 3번!")
        assert out["tokens"][-1] == "<sos/eos>" and len(out["durations"]) == len(out["tokens"])
        frames = int(out["durations"].sum())
        assert out["mel"].shape == (frames, 80) and len(out["wav"]) == frames * 256  # PWG: hop samples a frame
        slow = tts("안녕, 3번!", speed=0.5)
        assert slow["durations"].tolist() == scale_durations(torch.from_numpy(out["durations"]), 0.5).tolist()
        assert slow["mel"].shape[0] == 2 * frames
    # Tacotron2's frames at speed 0.5: every frame of each token twice
    tts = Text2Speech.from_pretrained(archives["tacotron2"])
    np.testing.assert_allclose(tts("안녕", speed=0.5)["mel"][::2], tts("안녕")["mel"], atol=1e-5)


def test_demo_summary_checks_the_wav_and_the_sentence(tmp_path, capsys):
    from local_models.bin import jdit_demo

    recipe = fake_recipe(tmp_path)
    archive = pack_system(recipe, "tts_jdit", recipe / "exp/tts_jdit/packed/model.tar.gz")
    (recipe / "data" / "test").mkdir()
    (recipe / "data" / "test" / "text").write_text("u1 안녕하세요.\n", encoding="utf-8")
    wav = tmp_path / "demo" / "jdit.wav"
    assert tts_cli(capsys, "--model", archive, "--text", FRESH, "-o", wav)[0] == 0
    md = tmp_path / "demo" / "summary.md"
    args = ["--recipe", recipe, "--model", archive, "--wav", wav, "--cli-seconds", "3.5", "--out", md]
    assert run_main(jdit_demo.main, list(map(str, ["--text", FRESH, *args])), prog="jdit_demo") == 0
    text = md.read_text(encoding="utf-8")
    n = len(frontend.text_to_tokens(FRESH, "jamo"))
    assert text.startswith(f"### {tmp_path.name}/recipe (JDI-T") and FRESH in text and f"-> {n} jamo tokens" in text
    assert "`text-to-speech` 3.5 s wall" in text and "RTF" in text and "peak" in text and "RMS" in text
    # a sentence the recipe has seen, or a wav that is not what the archive says: an error, no summary
    md.unlink()
    assert run_main(jdit_demo.main, list(map(str, ["--text", "안녕 하세요.", *args])), prog="jdit_demo") == 2
    assert "is in the recipe's data" in capsys.readouterr().err and not md.exists()
    soundfile.write(wav, np.zeros(22050, np.float32), 22050)
    assert run_main(jdit_demo.main, list(map(str, ["--text", FRESH, *args])), prog="jdit_demo") == 2
    assert "jdit.wav: silent" in capsys.readouterr().err and not md.exists()
