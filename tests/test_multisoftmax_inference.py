"""Packed multilingual RNN-T models and one-call inference from raw audio (local_models/multisoftmax/{pack,
frontend,inference}.py, `speech-to-text`), on tiny random models in a recipe laid out as egs/indic/asr1 leaves it:
the archive alone decodes (recipe deleted), the features equal stage 2's, the call equals the data-set decoder
(multisoftmax_decode, LID-free without utt2lid), streaming ends where the call ends and switches decoders off with the
packed setting, the CLI's output, and every bad input as one clear error with nothing written."""
import json
import shutil
from pathlib import Path

import kaldiio
import numpy as np
import pytest
import soundfile
import torch
import yaml

from local_models.bin import multisoftmax_decode, speech_to_text
from local_models.common.audio import AudioError
from local_models.common.cli import run_main
from local_models.common.pack import PackError, pack_model
from local_models.multisoftmax import units as U
from local_models.multisoftmax.decode import lang_by_script
from local_models.multisoftmax.espnet_model import TransducerModel, load_from_files
from local_models.multisoftmax.frontend import audio_features, read_feat_conf
from local_models.multisoftmax.inference import Speech2Text
from local_models.multisoftmax.model import UNION
from local_models.multisoftmax.pack import pack_system

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[1]
LANGS = ["en", "hi"]
TEXTS = {"en": "ab ba abc", "hi": "कख खक कगख"}
TINY = dict(enc_layers=1, enc_units=24, pred_layers=1, pred_units=24, embed_dim=8, joint_dim=24, lid_hidden=8)
SYSTEMS = {"multisoftmax_lid": dict(system="multisoftmax", lid=True, lid_rnn_layers=1),
           "vanilla": dict(system="vanilla"), "multisoftmax": dict(system="multisoftmax"),
           "mono_hi": dict(system="mono", lang="hi")}
RESULTS = {"recipe": "egs/indic/asr1", "corpus": "mini", "systems": {
    "multisoftmax_lid": {"wer_en": 80.0, "cer_en": 40.0, "wer_hi": 70.0, "cer_hi": 30.0, "wer_avg": 75.0,
                         "cer_avg": 35.0, "utts": 4, "words": 12},
    "multisoftmax_lid_lidfree": {"wer_en": 81.0, "wer_hi": 72.0, "lid_acc_en": 100.0, "lid_acc_hi": 50.0,
                                 "wer_avg": 76.5, "lid_acc_avg": 75.0},
    "multisoftmax_lid_oracle": {"wer_en": 80.0, "wer_hi": 70.0, "wer_avg": 75.0},
    "switchoff_tau1_sth0": {"wer_avg": 77.0, "t_avg": 1.2, "lid_acc_avg": 75.0},
    "mono": {"wer_en": 90.0, "wer_hi": 60.0, "wer_avg": 75.0},
    "vanilla": {"wer_en": 95.0, "wer_hi": 85.0, "lid_acc_en": 50.0, "lid_acc_hi": 50.0, "wer_avg": 90.0}}}


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPEECH_RECIPES_CACHE", str(tmp_path / "cache"))


@torch.no_grad()
def liven(model):
    """Sharper joint outputs than a fresh init's near-uniform ones: the search has choices to make."""
    for head in model.net.heads.values():
        for layer, gain in ((head.joint.enc, 4.0), (head.joint.pred, 4.0), (head.joint.out, 6.0)):
            layer.weight.mul_(gain)
    return model


def make_recipe(root: Path, systems=SYSTEMS) -> Path:
    """egs/indic/asr1 as stages 2-7 leave it: conf/fbank.conf, data/lang, train_all stats, exp/<system>
    (config.yaml + checkpoint as ESPnet's trainer writes them), exp/results.json; the pack stage's decode_conf."""
    recipe = root / "asr1"
    (recipe / "conf").mkdir(parents=True)
    shutil.copy(ROOT / "egs/indic/asr1/conf/fbank.conf", recipe / "conf/fbank.conf")
    vocabs = {lang: U.build_vocab([t]) for lang, t in TEXTS.items()}
    for lang, vocab in vocabs.items():
        U.write_units(recipe / "data/lang" / lang / "units.txt", vocab)
    U.write_units(recipe / "data/lang" / UNION / "units.txt", U.union_vocab(vocabs.values()))
    token_lists = {name: U.read_units(recipe / "data/lang" / name / "units.txt") for name in LANGS + [UNION]}
    train = recipe / "dump/fbank/train_mixed"
    train.mkdir(parents=True)
    (train / "feats.shape").write_text("en-s01-0001 300,80\nhi-s01-0001 500,80\nhi-s01-0002 200,80\n")
    (train / "lid_int").write_text("en-s01-0001 0\nhi-s01-0001 1\nhi-s01-0002 1\n")
    stats = recipe / "dump/fbank/train_all/stats.npz"
    stats.parent.mkdir(parents=True)
    rng = np.random.default_rng(0)
    np.savez(stats, mean=rng.normal(-8, 1, 80).astype(np.float32), std=rng.uniform(1, 3, 80).astype(np.float32),
             frames=np.array(1000))
    for name, sys_conf in systems.items():
        conf = dict(langs=LANGS, token_lists=token_lists, **TINY, **sys_conf)
        torch.manual_seed(0)
        model = liven(TransducerModel(stats_file=str(stats), **conf))
        exp = recipe / "exp" / name
        exp.mkdir(parents=True)
        config = dict(model="transducer", model_conf=conf, max_epoch=2,
                      train_data_path_and_name_and_type=[["dump/fbank/train_mixed/feats.scp", "feats", "kaldi_ark"]])
        (exp / "config.yaml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
        torch.save(model.state_dict(), exp / "2epoch.pth")
        (exp / "valid.loss.best.pth").symlink_to("2epoch.pth")
        (exp / "train.log").write_text("".join(  # ESPnet's trainer lines, as common/training.py reads them
            f"[h] 2026-11-27 10:0{n}:00,000 (trainer:394) INFO: {n}epoch results: [train] loss=1.0, "
            f"[valid] loss=0.{n}\n" for n in (1, 2)))
        (exp / "decode_conf.yaml").write_text("beam: 3\nchunk: 4\ntau: 1\ns_th: 0\n")
    (recipe / "exp/results.json").write_text(json.dumps(RESULTS))
    return recipe


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    return make_recipe(tmp_path_factory.mktemp("indic"))


@pytest.fixture(scope="module")
def archives(recipe):
    return {s: pack_system(recipe, s, recipe / "exp" / s / "packed" / "model.tar.gz") for s in SYSTEMS}


def speech(path: Path, sr=22050, seconds=1.2, seed=0, channels=1) -> Path:
    """A voiced-sounding signal (harmonics + noise); any rate: the front end resamples."""
    t = np.arange(int(sr * seconds)) / sr
    rng = np.random.default_rng(seed)
    wave = sum(0.1 / k * np.sin(2 * np.pi * 140 * k * t) for k in range(1, 8)) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))
    wave = (wave + 0.01 * rng.standard_normal(len(t))).astype(np.float32)
    soundfile.write(path, np.stack([wave] * channels, 1) if channels > 1 else wave, sr)
    return path


# ----------------------------------------------------------------------------- the archive alone

def test_archive_alone_decodes_lid_free_known_and_streaming(tmp_path):
    recipe = make_recipe(tmp_path / "build", {"multisoftmax_lid": SYSTEMS["multisoftmax_lid"]})
    archive = pack_system(recipe, "multisoftmax_lid", recipe / "exp/multisoftmax_lid/packed/model.tar.gz")
    fresh = tmp_path / "fresh" / "model.tar.gz"
    fresh.parent.mkdir()
    shutil.copy(archive, fresh)
    shutil.rmtree(tmp_path / "build")  # nothing of the recipe is left
    s2t = Speech2Text.from_pretrained(fresh)
    card = s2t.card
    assert card["paper"] == "multisoftmax" and card["system"] == "multisoftmax_lid" and card["corpus"] == "mini"
    assert card["metrics"]["lidfree"]["hi"] == {"wer": 72.0, "lid_acc": 50.0}
    assert card["metrics"]["known_language"]["avg"] == {"wer": 75.0, "cer": 35.0, "utts": 4, "words": 12}
    assert card["metrics"]["lidfree_oracle"]["en"] == {"wer": 80.0}
    assert card["metrics"]["switch_off"]["t_avg"] == 1.2 and card["decoding"]["tau"] == "1"
    assert card["training"]["utterances"] == 3 and card["training"]["hours_per_language"]["hi"] == pytest.approx(
        700 * 0.01 / 3600, abs=1e-4) and card["training"]["epochs_trained"] == 2
    assert card["sample_rate"] == 16000 and card["languages"]["hi"].startswith("Hindi")
    assert card["language_input"].startswith("not needed: LID-free")
    assert s2t.decoding == {"beam": 3, "chunk": 4, "max_sym_per_frame": 3, "tau": 1.0, "s_th": 0.0}
    assert s2t.languages == LANGS

    wav = speech(tmp_path / "in.wav")
    hyps = s2t(wav, nbest=3)
    assert 1 <= len(hyps) <= 3 and [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)
    assert all(h.language == hyps[0].language in LANGS for h in hyps)
    assert hyps[0].text == U.units_to_text(hyps[0].units)
    assert set(hyps[0].units) <= set(U.build_vocab([TEXTS[hyps[0].language]]))  # the chosen language's head
    known = s2t(wav, language="hi")
    assert known[0].language == "hi" and set(known[0].units) <= set(U.build_vocab([TEXTS["hi"]]))

    # streaming with every decoder on ends with the call's 1-best; partials advance chunk by chunk (4 x 30 ms)
    parts = list(s2t.stream(wav, switch_off=(float("inf"), float("inf"))))
    assert [p.final for p in parts] == [False] * (len(parts) - 1) + [True]
    assert len(parts) - 1 == 11  # 1.2 s: 121 frames of 10 ms -> 41 encoder frames of 30 ms -> 11 chunks of 4
    assert [round(p.seconds, 2) for p in parts[:2]] == [0.12, 0.24] and parts[-1].seconds == pytest.approx(1.21)
    assert (parts[-1].text, parts[-1].language) == (hyps[0].text, hyps[0].language)
    assert parts[-1].running == LANGS and abs(sum(parts[-1].lid_posteriors.values()) - 1) < 1e-3
    # by default the packed switch-off (tau 1, s_th 0): after frame 1 only the leader runs, and the result is
    # the call's with the same setting
    default = list(s2t.stream(wav))
    assert len(default[-1].running) == 1 and len(default[2].running) == 1
    assert default[-1].text == s2t(wav, switch_off=(1, 0))[0].text
    known_parts = list(s2t.stream(wav, language="hi"))
    assert known_parts[-1].text == known[0].text and {p.language for p in known_parts} == {"hi"}


def test_features_are_stage_2s_at_any_rate_and_layout(tmp_path):
    """The front end on raw audio equals extract_feats (stage 2) on a wav.scp entry of the same file."""
    from local_models.bin import extract_feats

    wav = speech(tmp_path / "in.wav", sr=44100, channels=2)
    d = tmp_path / "data"
    d.mkdir()
    (d / "wav.scp").write_text(f"u1 {wav}\n")
    (d / "utt2spk").write_text("u1 s1\n")
    conf = [t for line in (ROOT / "egs/indic/asr1/conf/fbank.conf").read_text().splitlines()
            if not line.startswith("#") for t in line.split()]
    assert extract_feats.main(conf + [str(d), str(tmp_path / "feats")]) == 0
    ref = kaldiio.load_scp(str(tmp_path / "feats.scp"))["u1"]
    cfg = read_feat_conf(ROOT / "egs/indic/asr1/conf/fbank.conf")
    got = audio_features(wav, cfg)
    assert got.shape == ref.shape and np.array_equal(got, ref)
    stereo, sr = soundfile.read(wav, dtype="float32")
    assert np.array_equal(audio_features((stereo, sr), cfg), ref)
    assert np.array_equal(audio_features(stereo, cfg, sample_rate=sr), ref)


def test_call_equals_the_data_set_decoder_without_utt2lid(tmp_path, recipe, archives):
    """Speech2Text on a wav = multisoftmax_decode --mode lidfree on the stage-2 features of that wav, with no utt2lid
    (the LID-free data-dir decoding needs none; no oracle then, LID accuracy not scored)."""
    from local_models.bin import extract_feats

    wavs = {f"u{i}": speech(tmp_path / f"u{i}.wav", sr=16000 + 8000 * i, seconds=0.8 + 0.3 * i, seed=i)
            for i in range(3)}
    d = tmp_path / "data"
    d.mkdir()
    (d / "wav.scp").write_text("".join(f"{u} {p}\n" for u, p in wavs.items()))
    (d / "utt2spk").write_text("".join(f"{u} {u}\n" for u in wavs))
    conf = [t for line in (recipe / "conf/fbank.conf").read_text().splitlines()
            if not line.startswith("#") for t in line.split()]
    assert extract_feats.main(conf + [str(d), str(tmp_path / "feats")]) == 0
    s2t = Speech2Text.from_pretrained(archives["multisoftmax_lid"])
    out = tmp_path / "dec"
    assert multisoftmax_decode.main(["--model_dir", str(recipe / "exp/multisoftmax_lid"), "--feats",
                              str(tmp_path / "feats.scp"), "--mode", "lidfree", "--beam", "3", "--chunk", "4",
                              str(out)]) == 0
    hyp = dict(line.split(" ", 1) if " " in line else (line, "") for line in (out / "hyp").read_text().splitlines())
    lang = dict(line.split() for line in (out / "hyp_lang").read_text().splitlines())
    for utt, wav in wavs.items():
        best = s2t(wav)[0]
        assert (best.text, best.language) == (hyp[utt], lang[utt]), utt
    stats = json.loads((out / "decode_stats.json").read_text())
    assert stats["lid_accuracy"] is None and stats["utt2lid"] is None and not (out / "hyp_oracle").exists()
    assert multisoftmax_decode.main(["--model_dir", str(recipe / "exp/multisoftmax_lid"), "--feats",
                              str(tmp_path / "feats.scp"), str(tmp_path / "known")]) == 1  # known needs utt2lid
    assert not (tmp_path / "known").exists()


def test_exp_dir_equals_archive_and_other_systems(tmp_path, recipe, archives):
    wav = speech(tmp_path / "in.wav", seed=3)
    from_exp = Speech2Text.from_pretrained(recipe / "exp/multisoftmax_lid")
    from_archive = Speech2Text.from_pretrained(archives["multisoftmax_lid"])
    assert from_exp.decoding == from_archive.decoding  # decode_conf.yaml of the exp dir = the card's
    assert [(h.text, h.score) for h in from_exp(wav, nbest=2)] == \
        [(h.text, h.score) for h in from_archive(wav, nbest=2)]
    vanilla = Speech2Text.from_pretrained(archives["vanilla"])
    hyp = vanilla(wav)[0]
    lists = {lang: U.build_vocab([TEXTS[lang]]) for lang in LANGS}
    assert hyp.language == lang_by_script(hyp.units, lists)
    assert vanilla.card["metrics"]["lidfree"]["en"]["lid_acc"] == 50
    mono = Speech2Text.from_pretrained(archives["mono_hi"])
    assert mono.languages == ["hi"] and mono(wav)[0].language == "hi"
    assert mono.card["metrics"] == {"known_language": {"hi": {"wer": 60.0}}}
    with pytest.raises(ValueError, match="2epoch.pth: not a checkpoint of the model in .*vanilla/config.yaml"):
        load_from_files(recipe / "exp/vanilla/config.yaml", recipe / "exp/mono_hi/2epoch.pth")


# ----------------------------------------------------------------------------- the command

def test_cli_one_best_n_best_and_output_file(tmp_path, archives):
    a, b = speech(tmp_path / "a.wav", seed=1), speech(tmp_path / "b.flac", sr=8000, seed=2)
    out = tmp_path / "out.txt"
    assert speech_to_text.main([str(a), str(b), "--model", str(archives["multisoftmax_lid"]), "-o", str(out)]) == 0
    s2t = Speech2Text.from_pretrained(archives["multisoftmax_lid"])
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines == [f"{p}\t{s2t(p)[0].language}\t{s2t(p)[0].text}" for p in (a, b)]
    assert speech_to_text.main([str(a), "-m", str(archives["multisoftmax_lid"]), "--language", "en", "--nbest",
                                "2", "-o", str(out)]) == 0
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    hyps = s2t(a, language="en", nbest=2)
    assert rows == [[str(a), str(i), "en", f"{h.score:.3f}", h.text] for i, h in enumerate(hyps, 1)]


def cli_error(argv, capsys) -> str:
    """The error line (after the progress lines of the inputs decoded before it)."""
    capsys.readouterr()
    assert run_main(speech_to_text.main, argv, prog="speech-to-text") == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert all(line.startswith("[") for line in lines[:-1]) and lines[-1].startswith("speech-to-text: error: "), err
    return lines[-1]


def test_cli_keep_going_progress_and_results_as_they_come(tmp_path, archives, capsys):
    model = ["--model", str(archives["multisoftmax_lid"])]
    a, b = speech(tmp_path / "a.wav", seed=1), speech(tmp_path / "b.wav", seed=2)
    (tmp_path / "bad.wav").write_text("not audio")
    out = tmp_path / "out.txt"
    capsys.readouterr()
    argv = [str(a), str(tmp_path / "bad.wav"), str(b), *model, "--keep_going"]
    assert run_main(speech_to_text.main, [*argv, "-o", str(out)], prog="speech-to-text") == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"[1/3] {a}: 1.2 s in ") and "RTF" in err[0]
    assert err[1].startswith("speech-to-text: error: ") and "bad.wav: cannot read audio" in err[1]
    assert err[2].startswith(f"[3/3] {b}: ") and len(err) == 3
    s2t = Speech2Text.from_pretrained(archives["multisoftmax_lid"])
    expect = [f"{p}\t{s2t(p)[0].language}\t{s2t(p)[0].text}" for p in (a, b)]
    assert out.read_text(encoding="utf-8").splitlines() == expect
    assert run_main(speech_to_text.main, argv, prog="speech-to-text") == 2  # stdout: each input as it is done
    assert capsys.readouterr().out.splitlines() == expect
    cli_error([str(a), str(tmp_path / "bad.wav"), *model, "-o", str(tmp_path / "none.txt")], capsys)
    assert not (tmp_path / "none.txt").exists()  # without --keep_going: the first bad input stops, nothing written


def test_long_input_decodes_by_blocks_like_whole(tmp_path, archives, monkeypatch):
    """An input over LONG_S (60 s; 4 s here) is read, featurised, encoded and searched in BLOCK_S blocks (10 s;
    1.5 s here): the features agree with the one-pass ones to float rounding, the hypotheses are the same, and the
    stream ends where the call ends."""
    from local_models.multisoftmax import inference

    monkeypatch.setattr(inference, "LONG_S", 4.0)
    monkeypatch.setattr(inference, "BLOCK_S", 1.5)
    s2t = Speech2Text.from_pretrained(archives["multisoftmax_lid"])
    path = speech(tmp_path / "long.wav", sr=16000, seconds=7.5, seed=3)
    wave, _ = soundfile.read(path, dtype="float32")
    blocks = list(s2t.feature_blocks(str(path)))
    assert len(blocks) == 5 and max(len(b) for b in blocks) <= 160
    torch.testing.assert_close(torch.cat(blocks), s2t.features(str(path)), atol=1e-4, rtol=0)
    assert len(list(s2t.feature_blocks((wave, 16000)))) == 5  # an array too (resampled whole, then blocks)
    assert len(list(s2t.feature_blocks((wave[:16000 * 4], 16000)))) == 1  # up to LONG_S: whole, as stage 2
    got = s2t(str(path), nbest=2)
    monkeypatch.setattr(inference, "LONG_S", 1e9)
    ref = s2t(str(path), nbest=2)
    assert [(h.text, h.language) for h in got] == [(h.text, h.language) for h in ref]
    monkeypatch.setattr(inference, "LONG_S", 4.0)
    last = list(s2t.stream(str(path)))[-1]
    assert last.final and last.seconds == pytest.approx(7.5, abs=0.011)


def test_cli_bad_inputs_are_one_clear_error_and_write_nothing(tmp_path, archives, capsys):
    model = ["--model", str(archives["multisoftmax_lid"])]
    good, out = speech(tmp_path / "good.wav"), tmp_path / "out.txt"
    soundfile.write(tmp_path / "silent.wav", np.zeros(16000, np.float32), 16000)
    soundfile.write(tmp_path / "empty.wav", np.zeros(0, np.float32), 16000)
    soundfile.write(tmp_path / "clipped.wav", np.sign(np.sin(np.arange(16000) / 5)).astype(np.float32), 16000)
    (tmp_path / "text.wav").write_text("not audio")
    for name, what in (("silent.wav", "silent"), ("empty.wav", "zero-length"), ("clipped.wav", "clipped"),
                       ("text.wav", "cannot read audio"), ("missing.wav", "no such audio file")):
        err = cli_error([str(good), str(tmp_path / name), *model, "-o", str(out)], capsys)
        assert name in err and what in err, err
        assert not out.exists()
    err = cli_error([str(good), *model, "--language", "xx"], capsys)
    assert "unknown language 'xx'" in err and "en, hi" in err
    err = cli_error([str(good), "--model", str(archives["multisoftmax"])], capsys)  # no LID head, no language
    assert "needs the language" in err and "en, hi" in err
    err = cli_error([str(good), "--model", str(archives["mono_hi"]), "--language", "en"], capsys)
    assert "decodes hi" in err
    assert "--nbest" in cli_error([str(good), *model, "--nbest", "0"], capsys)
    corrupt = tmp_path / "corrupt.tar.gz"
    corrupt.write_bytes(archives["vanilla"].read_bytes()[:2000])
    assert "corrupt.tar.gz: corrupt archive" in cli_error([str(good), "--model", str(corrupt)], capsys)
    assert "model not found" in cli_error([str(good), "--model", str(tmp_path / "none.tar.gz")], capsys)
    other = tmp_path / "sad"
    (other / "exp/x").mkdir(parents=True)
    (other / "exp/x/model.pth").write_bytes(b"\0")
    sad = pack_model(other / "sad.tar.gz", paper="sad", system="x", recipe_dir=other,
                     files={"model_file": other / "exp/x/model.pth"})
    err = cli_error([str(good), "--model", str(sad)], capsys)
    assert "this is a Fearless Steps SAD" in err and "not a multi-softmax RNN-T" in err


def test_api_bad_audio_arrays(archives):
    s2t = Speech2Text.from_pretrained(archives["multisoftmax_lid"])
    wave = np.random.default_rng(0).normal(0, 0.1, 16000).astype(np.float32)
    nan = wave.copy()
    nan[100] = np.nan
    with pytest.raises(AudioError, match="NaN"):
        s2t((nan, 16000))
    with pytest.raises(ValueError, match="needs its sample_rate"):
        s2t(wave)
    with pytest.raises(AudioError, match="sample rate must be a positive integer"):
        s2t((wave, 0))
    with pytest.raises(ValueError, match="nbest"):
        s2t((wave, 16000), nbest=0)
    assert s2t(wave, sample_rate=16000)[0].text == s2t((wave, 16000))[0].text


def test_pack_refuses_stale_unit_lists_and_stats(tmp_path):
    recipe = make_recipe(tmp_path, {"vanilla": SYSTEMS["vanilla"]})
    out = recipe / "exp/vanilla/packed/model.tar.gz"
    U.write_units(recipe / "data/lang/hi/units.txt", U.build_vocab(["कखगघ"]))
    with pytest.raises(ValueError, match="hi/units.txt: differs from the unit list 'hi'"):
        pack_system(recipe, "vanilla", out)
    U.write_units(recipe / "data/lang/hi/units.txt", U.build_vocab([TEXTS["hi"]]))
    np.savez(recipe / "dump/fbank/train_all/stats.npz", mean=np.zeros(80), std=np.ones(80))
    with pytest.raises(ValueError, match="stats.npz: not the normalisation statistics"):
        pack_system(recipe, "vanilla", out)
    with pytest.raises(FileNotFoundError, match="train the system first"):
        pack_system(recipe, "onehot", out)
    assert not out.parent.exists()
    with pytest.raises(PackError, match="missing model_file"):
        Speech2Text.from_pretrained(recipe / "exp/vanilla", inference_model="nope.pth")


def test_vanilla_streaming_language_is_the_script_of_the_text_so_far(tmp_path, archives):
    """vanilla's partial results tell the language by the script of their units, kept up to date unit by unit."""
    s2t = Speech2Text.from_pretrained(archives["vanilla"])
    path = speech(tmp_path / "a.wav", seconds=2.0, seed=4)
    parts = list(s2t.stream(path))
    best = s2t(path)[0]
    assert parts[-1].final and (parts[-1].text, parts[-1].language) == (best.text, best.language)
    letters = {lang: {u.replace(U.WORD_START, "") for u in us} for lang, us in s2t.lang_lists.items()}
    for p in parts:
        counts = {lang: sum(ch in s for ch in p.text.replace(" ", "")) for lang, s in letters.items()}
        top = max(counts.values())
        expect = [lang for lang, n in counts.items() if n == top]
        assert p.language == (expect[0] if top and len(expect) == 1 else None), (p.text, counts)
    assert any(p.language for p in parts)  # the check above was not vacuous
