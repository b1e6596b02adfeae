"""Packed models (local_models/common/pack.py) and a user's audio (common/audio.py read_audio): the failure
modes a user meets get one clear error naming the input, and nothing half-written."""
import io
import tarfile
from pathlib import Path

import numpy as np
import pytest
import soundfile
import yaml

from local_models.common.audio import AudioError, iter_audio_blocks, read_audio
from local_models.common.cli import run_main, write_wav
from local_models.common.pack import PackError, load_model, pack_model, read_card


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SPEECH_RECIPES_CACHE", str(tmp_path / "cache"))


def fake_recipe(root: Path) -> Path:
    exp = root / "recipe" / "exp" / "sys1"
    exp.mkdir(parents=True)
    (root / "recipe" / "data").mkdir()
    (root / "recipe" / "data" / "tokens.txt").write_text("a\nb\n")
    (exp / "model.pth").write_bytes(b"\0weights")
    conf = {"token_list": "data/tokens.txt", "normalize_conf": {"stats_file": "exp/sys1/model.pth"}, "x": 3}
    (exp / "config.yaml").write_text(yaml.safe_dump(conf))
    (root / "question.hed").write_text("QS 'x'\n")  # a resource outside the recipe
    return root / "recipe"


def make_archive(tmp_path, name="model.tar.gz", paper="sad"):
    recipe = fake_recipe(tmp_path)
    return pack_model(recipe / "exp" / "sys1" / "packed" / name, paper=paper, system="sys1", recipe_dir=recipe,
                      files={"model_file": recipe / "exp/sys1/model.pth", "token_list": recipe / "data/tokens.txt",
                             "questions": tmp_path / "question.hed"},
                      yaml_files={"config": recipe / "exp/sys1/config.yaml"}, card={"metrics": {"dcf": 0.05}})


@pytest.mark.parametrize("name", ["model.tar.gz", "model.zip"])
def test_pack_unpack_elsewhere(tmp_path, name):
    archive = make_archive(tmp_path, name)
    moved = tmp_path / "elsewhere" / name  # the recipe is gone: the archive alone must do
    moved.parent.mkdir()
    archive.rename(moved)
    import shutil
    shutil.rmtree(tmp_path / "recipe")
    m = load_model(moved, paper="sad")
    assert m.card["paper"] == "sad" and m.card["system"] == "sys1" and m.card["metrics"] == {"dcf": 0.05}
    assert m.file("model_file").read_bytes() == b"\0weights" and m.file("questions").read_text() == "QS 'x'\n"
    conf = yaml.safe_load(m.file("config").read_text())
    # the config's recipe-relative paths now point into the unpacked model
    assert Path(conf["token_list"]).read_text() == "a\nb\n" and Path(conf["token_list"]).is_absolute()
    assert Path(conf["normalize_conf"]["stats_file"]) == m.file("model_file") and conf["x"] == 3
    assert load_model(moved, paper="sad").root == m.root  # unpacked once
    assert read_card(m.root)["system"] == "sys1"
    with pytest.raises(PackError, match="no 'vocoder'"):
        m.file("vocoder")


def test_wrong_paper_and_bad_archives(tmp_path):
    archive = make_archive(tmp_path)
    with pytest.raises(PackError, match=r"model.tar.gz: this is a Fearless Steps SAD .* not a JDI-T"):
        load_model(archive, paper="jdit")
    corrupt = tmp_path / "corrupt.tar.gz"
    corrupt.write_bytes(archive.read_bytes()[: len(archive.read_bytes()) // 2])
    with pytest.raises(PackError, match="corrupt.tar.gz: corrupt archive"):
        load_model(corrupt, paper="sad")
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(PackError, match="notes.txt: not a model archive"):
        load_model(text, paper="sad")
    with pytest.raises(FileNotFoundError, match="model not found: .*nothing.tar.gz"):
        load_model(tmp_path / "nothing.tar.gz", paper="sad")
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as t:
        info = tarfile.TarInfo("../../escape.txt")
        info.size = 2
        t.addfile(info, io.BytesIO(b"hi"))
    with pytest.raises(PackError, match="outside its directory"):
        load_model(evil, paper="sad")
    assert not (tmp_path / "escape.txt").exists()
    no_meta = tmp_path / "plain.tar.gz"
    with tarfile.open(no_meta, "w:gz") as t:
        t.add(text, arcname="notes.txt")
    with pytest.raises(PackError, match="plain.tar.gz: corrupt archive .*meta.yaml"):
        load_model(no_meta, paper="sad")
    # nothing half-unpacked left in the cache
    assert all(not p.name.startswith(".") for p in (tmp_path / "cache").iterdir())


def test_pack_missing_file_writes_nothing(tmp_path):
    recipe = fake_recipe(tmp_path)
    out = recipe / "exp" / "sys1" / "packed" / "model.tar.gz"
    with pytest.raises(FileNotFoundError, match="'stats' file .*nope.npz does not exist"):
        pack_model(out, paper="sad", system="sys1", recipe_dir=recipe,
                   files={"model_file": recipe / "exp/sys1/model.pth", "stats": recipe / "nope.npz"})
    assert not out.exists() and not out.parent.exists()


def test_exp_dir_resolver(tmp_path):
    recipe = fake_recipe(tmp_path)
    exp = recipe / "exp" / "sys1"
    m = load_model(exp, paper="sad", exp_resolver=lambda d: {"model_file": d / "model.pth"})
    assert m.file("model_file") == exp / "model.pth" and m.card["paper"] == "sad"
    with pytest.raises(PackError, match="not a trained .* exp dir, missing stats"):
        load_model(exp, paper="sad", exp_resolver=lambda d: {"stats": d / "stats.npz"})
    with pytest.raises(PackError, match="no meta.yaml"):
        load_model(exp, paper="sad")


def test_read_audio_checks(tmp_path):
    sr = 22050
    t = np.arange(sr) / sr
    stereo = np.stack([0.5 * np.sin(2 * np.pi * 300 * t), 0.5 * np.sin(2 * np.pi * 300 * t)], axis=1)
    for ext in ("wav", "flac", "ogg"):
        soundfile.write(tmp_path / f"a.{ext}", stereo, sr)
        wave, rate = read_audio(tmp_path / f"a.{ext}", 16000)
        assert rate == 16000 and abs(len(wave) - 16000) <= 1 and 0.4 < np.max(np.abs(wave)) < 0.6
    wave, rate = read_audio((stereo.astype(np.float32), sr))
    assert rate == sr and wave.shape == (sr,)
    cases = {"no samples": np.zeros(0), "NaN": np.full(100, np.nan), "silent": np.zeros(1000),
             "clipped": np.sign(np.sin(np.arange(1000))) * 1.0}
    for match, bad in cases.items():
        with pytest.raises(AudioError, match=f"<array>: .*{match}"):
            read_audio((bad.astype(np.float32), 16000))
    assert read_audio((np.zeros(1000, np.float32), 16000), allow_silent=True)[0].shape == (1000,)
    (tmp_path / "junk.wav").write_bytes(b"RIFF0000WAVEjunk")
    with pytest.raises(AudioError, match="junk.wav: cannot read audio"):
        read_audio(tmp_path / "junk.wav")
    with pytest.raises(AudioError, match="missing.wav: no such audio file"):
        read_audio(tmp_path / "missing.wav")
    with pytest.raises(AudioError, match="sample rate must be a positive integer"):
        read_audio((np.ones(10, np.float32) * 0.1, 0))


def test_a_recording_that_clips_now_and_then_is_used_with_a_warning(caplog):
    """2 % of samples at full scale (a real recording's peaks): used, with a warning naming it; a square wave
    (more than half at full scale) is refused."""
    t = np.arange(16000) / 16000
    wave = 0.5 * np.sin(2 * np.pi * 200 * t)
    wave[::50] = 1.0  # 2 %
    with caplog.at_level("WARNING"):
        got, _ = read_audio((wave.astype(np.float32), 16000))
    assert got.shape == (16000,)
    assert "<array>: clipped (2.0 % of samples at full scale)" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):
        read_audio(((0.5 * wave).astype(np.float32), 16000))
    assert "clipped" not in caplog.text
    with pytest.raises(AudioError, match=r"clipped \(77\.5 % of samples at full scale; at most 50 % accepted\)"):
        read_audio((np.clip(3 * np.sin(2 * np.pi * 200 * t), -1, 1).astype(np.float32), 16000))


def test_audio_blocks_equal_one_shot(tmp_path):
    """Block-by-block reading and resampling joins to what a one-shot read and the recipes' resampling (scipy's
    resample_poly) give; growing blocks too."""
    from local_models.common.audio import resample

    sr = 44100
    x = (0.3 * np.random.default_rng(0).standard_normal(sr * 5)).astype(np.float32)
    soundfile.write(tmp_path / "long.wav", x, sr, subtype="FLOAT")
    whole = resample(x, sr, 16000)
    for kw in ({"block_s": 1.3}, {"block_s": 2.0, "first_s": 0.1}):
        blocks = list(iter_audio_blocks(tmp_path / "long.wav", 16000, **kw))
        assert len(blocks) >= 4
        joined = np.concatenate(blocks)
        assert len(joined) == len(whole) and np.max(np.abs(joined - whole)) < 1e-5
    sizes = [len(b) for b in iter_audio_blocks(tmp_path / "long.wav", sr, block_s=2.0, first_s=0.25)]
    want = [int(0.25 * sr)]  # 1.5x each, up to 2 s
    while sum(want) < 5 * sr:
        want.append(min(2 * sr, int(1.5 * want[-1]), 5 * sr - sum(want)))
    assert sizes == want and sizes[:3] == [11025, 16537, 24805] and sum(sizes) == 5 * sr


@pytest.mark.parametrize("rates", [(16000, 8000), (44100, 8000), (22050, 16000), (8000, 16000), (48000, 8000),
                                   (11025, 16000), (44100, 24000)])
def test_polyphase_resampler_equals_resample_poly(rates):
    """The numpy resampler against scipy.signal.resample_poly (the slow reference the recipes' data use), whole and
    fed in blocks of random sizes (one sample, and blocks shorter than its filter, included)."""
    from scipy.signal import resample_poly

    from local_models.common.audio import PolyphaseResampler, polyphase

    a, b = rates
    rng = np.random.default_rng(a + b)
    x = (0.3 * rng.standard_normal(a * 2 + 37)).astype(np.float32)
    g = np.gcd(a, b)
    want = resample_poly(x, b // g, a // g).astype(np.float32)
    assert np.max(np.abs(polyphase(x, a, b) - want)) < 2e-6 and len(polyphase(x, a, b)) == len(want)
    r, parts, i = PolyphaseResampler(a, b), [], 0
    for size in [1, 3] + list(rng.integers(1, a // 3, 200)):
        if i + size >= len(x):
            break
        parts.append(r.push(x[i: i + size]))
        i += size
    parts.append(r.push(x[i:], last=True))
    got = np.concatenate(parts)
    assert len(got) == len(want) and np.max(np.abs(got - want)) < 2e-6
    assert len(polyphase(x[:5], a, b)) == len(resample_poly(x[:5], b // g, a // g))  # shorter than the filter


def test_cli_errors_are_one_line(tmp_path, capsys):
    def main(argv):
        read_audio(tmp_path / "missing.wav")
    assert run_main(main, [], prog="tool") == 2
    assert capsys.readouterr().err.strip() == f"tool: error: {tmp_path / 'missing.wav'}: no such audio file"
    with pytest.raises(ValueError, match="must end in .wav"):
        write_wav(tmp_path / "x.mp4", np.zeros(10), 16000)
    assert not (tmp_path / "x.mp4").exists()


def _rewrite_tar(src: Path, dst: Path, change) -> None:
    """DST = SRC's members with CHANGE(name, data) -> data (None drops the member)."""
    with tarfile.open(src) as t_in, tarfile.open(dst, "w:gz") as t_out:
        for m in t_in:
            data = t_in.extractfile(m).read() if m.isfile() else None
            if m.isfile():
                data = change(m.name, data)
                if data is None:
                    continue
                m.size = len(data)
            t_out.addfile(m, io.BytesIO(data) if data is not None else None)


def test_member_checksums_refuse_a_changed_member(tmp_path):
    archive = make_archive(tmp_path)
    with tarfile.open(archive) as t:
        sums = t.extractfile("checksums.sha256").read().decode().splitlines()
    # every member but ESPnet's meta.yaml (written by ESPnet's pack after the list) is listed
    assert sorted(line.split("  ")[1] for line in sums) == sorted(
        ["exp/sys1/model.pth", "data/tokens.txt", "resources/question.hed", "exp/sys1/config.yaml", "model_card.yaml"])
    # a member whose bytes changed inside a well-formed archive (no gzip / tar error to catch it)
    tampered = tmp_path / "tampered.tar.gz"
    _rewrite_tar(archive, tampered, lambda n, d: b"\0weightz" if n == "exp/sys1/model.pth" else d)
    with pytest.raises(PackError, match=r"tampered.tar.gz: member exp/sys1/model.pth is corrupt \(sha256"):
        load_model(tampered, paper="sad")
    dropped = tmp_path / "dropped.tar.gz"
    _rewrite_tar(archive, dropped, lambda n, d: None if n == "checksums.sha256" else d)
    with pytest.raises(PackError, match="dropped.tar.gz: no checksums.sha256: .*repack"):
        load_model(dropped, paper="sad")
    garbled = tmp_path / "garbled.tar.gz"
    _rewrite_tar(archive, garbled, lambda n, d: b"xyz model.pth\n" if n == "checksums.sha256" else d)
    with pytest.raises(PackError, match="garbled.tar.gz:checksums.sha256:1: not a"):
        load_model(garbled, paper="sad")
    assert not (tmp_path / "cache").exists() or all(not p.name.startswith(".") for p in (tmp_path / "cache").iterdir())
    assert load_model(archive, paper="sad").file("model_file").read_bytes() == b"\0weights"


@pytest.mark.parametrize("name", ["model.tar.gz", "model.zip"])
def test_a_flipped_bit_never_loads(tmp_path, name):
    """A bit flipped anywhere past the container's header: a one-line PackError, never a silent load."""
    archive = make_archive(tmp_path, name=name)
    raw = archive.read_bytes()
    good = {k: f.read_bytes() for k, f in load_model(archive, paper="sad").files.items() if k != "config"}
    loaded = 0
    for pos in range(16, len(raw), max(1, len(raw) // 40)):
        flipped = tmp_path / f"flip{pos}{''.join(archive.suffixes)}"
        flipped.write_bytes(raw[:pos] + bytes([raw[pos] ^ 0x10]) + raw[pos + 1:])
        try:
            m = load_model(flipped, paper="sad")
        except PackError as e:
            assert "\n" not in str(e) and flipped.name in str(e)
            continue
        # the flip hit bytes no member's content depends on (zip directory comments, tar padding): same model
        assert {k: f.read_bytes() for k, f in m.files.items() if k != "config"} == good
        assert yaml.safe_load(m.file("config").read_text())["x"] == 3
        loaded += 1
    assert loaded < 10


def test_a_zip_member_of_an_unknown_compression_method_is_a_pack_error(tmp_path):
    """A flipped bit in a zip's compression-method field makes zipfile raise NotImplementedError: a one-line PackError
    like any other damage (the flip test above hits that field only now and then: meta.yaml's timestamp moves it)."""
    archive = make_archive(tmp_path, name="model.zip")
    raw = bytearray(archive.read_bytes())
    central = raw.index(b"PK\x01\x02")  # the first central-directory entry; its method is at +10
    raw[central + 10: central + 12] = (99).to_bytes(2, "little")
    bad = tmp_path / "method.zip"
    bad.write_bytes(bytes(raw))
    with pytest.raises(PackError, match=r"method.zip: corrupt archive \(.*compression"):
        load_model(bad, paper="sad")


def test_a_second_load_reads_the_archive_once_unless_it_changed(tmp_path, monkeypatch):
    """The cache dir is found by the archive's sha256, remembered by path, size and mtime: a settled archive is not
    hashed again; one rewritten (even at the same size, within the clock tick) is, and a flipped bit is refused."""
    import os

    from local_models.common import pack

    archive = make_archive(tmp_path)
    old = archive.stat().st_mtime - 60  # settled: written a minute before its memo
    os.utime(archive, (old, old))
    hashed = []
    monkeypatch.setattr(pack, "_digest", lambda p, real=pack._digest: hashed.append(p) or real(p))
    root = load_model(archive, paper="sad").root
    assert load_model(archive, paper="sad").root == root and len(hashed) == 1
    raw = bytearray(archive.read_bytes())
    raw[len(raw) // 2] ^= 0x10  # same size; its fresh mtime is within MEMO_TRUST_S of nothing remembered
    archive.write_bytes(bytes(raw))
    with pytest.raises(PackError, match=archive.name):
        load_model(archive, paper="sad")
    assert len(hashed) == 2


def test_pack_model_packs_several_systems_in_one_call(monkeypatch, capsys):
    """`pack_model --system A --system B`: each to RECIPE_DIR/exp/<system>/packed/model.tar.gz in one process (the
    recipes' pack stages); --out names one archive, so it refuses two systems before any work."""
    from local_models.bin import pack_model as cli
    from local_models.sad import pack as sad_pack

    calls = []
    monkeypatch.setattr(sad_pack, "pack_system", lambda recipe, system, out, inference_model: calls.append(
        (recipe, system, str(out), inference_model)) or out)
    assert cli.main(["--paper", "sad", "--system", "a", "--system", "b/c", "--recipe_dir", "r"]) == 0
    assert calls == [("r", "a", "r/exp/a/packed/model.tar.gz", "valid.loss.best.pth"),
                     ("r", "b/c", "r/exp/b/c/packed/model.tar.gz", "valid.loss.best.pth")]
    assert capsys.readouterr().out.splitlines() == ["packed sad/a: r/exp/a/packed/model.tar.gz",
                                                    "packed sad/b/c: r/exp/b/c/packed/model.tar.gz"]
    calls.clear()
    with pytest.raises(SystemExit):
        cli.main(["--paper", "sad", "--system", "a", "--system", "b", "--out", "x.tar.gz"])
    assert calls == [] and "--out names one archive, but 2 systems were given" in capsys.readouterr().err
