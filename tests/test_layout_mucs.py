"""egs/indic/asr1 on MUCS 2021 as distributed (tests/layout_mucs.py): stages 1-2 through run.sh with INDIC at the
tree (data dirs, the dev carve rule, every language read at the lowest rate, the warning naming the rates), and
local/prepare_mucs.py's policy and errors."""
import hashlib
import importlib.util
import math
import shutil
import sys
from pathlib import Path

import kaldiio
import numpy as np
import pytest
from layout_mucs import LANGUAGES, make_mucs
from recipe_runner import run_recipe

from local_models.common.datadir import DataDirError, read_table
from local_models.multisoftmax.frontend import audio_features, read_feat_conf
from local_models.multisoftmax.report import rate_line

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs" / "indic" / "asr1"
LANGS = ("or", "te")  # Odia 8 kHz (its code `or` through the shell stages), Telugu 16 kHz
pytestmark = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").exists(),
                                reason="needs tools/venv (make install)")


def load_prepare_mucs():
    spec = importlib.util.spec_from_file_location("prepare_mucs", RECIPE / "local" / "prepare_mucs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def expected_dev(ids, percent=5.0):
    """The rule as --help states it, written out again: ceil(percent % of N), at least 1, smallest SHA-1."""
    n = max(1, math.ceil(len(ids) * percent / 100))
    return set(sorted(ids, key=lambda u: hashlib.sha1(u.encode()).hexdigest())[:n])


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    base = tmp_path_factory.mktemp("mucs")
    ids = make_mucs(base / "db", languages=LANGS, n_train=3, n_test=1, seconds=0.3)
    dst = base / "asr1"
    shutil.copytree(RECIPE, dst, ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads", "RESULTS.md"))
    proc = run_recipe(dst, "--stage", "1", "--stop-stage", "2", "--nj", "1", "--langs", " ".join(LANGS),
                      extra_env={"INDIC": str(base / "db")})
    return dst, ids, proc.stdout + proc.stderr


def test_data_dirs_and_dev_rule(recipe):
    dst, ids, _ = recipe
    for lang in LANGS:
        dev = expected_dev(ids[lang]["train"])
        want = {"train": set(ids[lang]["train"]) - dev, "dev": dev, "test": set(ids[lang]["test"])}
        for part, utts in want.items():
            d = dst / "data" / f"{lang}_{part}"
            utt2spk = read_table(d / "utt2spk")
            assert set(utt2spk) == {f"{lang}-{u}" for u in utts}, (lang, part)
            assert all(spk == utt for utt, spk in utt2spk.items())  # no speakers in MUCS: utterance = speaker
            assert set(read_table(d / "utt2lid").values()) == {lang}
            folder = next(f for f, v in LANGUAGES.items() if v[0] == lang)
            src = "test" if part == "test" else "train"
            for utt, path in read_table(d / "wav.scp").items():
                assert Path(path) == (dst.parent / "db" / folder / src / "audio" / f"{utt[len(lang) + 1:]}.wav")
        assert (dst / "data" / f"{lang}_dev" / "text").read_text(encoding="utf-8").strip()


def test_every_language_is_read_at_the_lowest_rate(recipe):
    dst, _, log = recipe
    assert (dst / "data" / "sample_rate").read_text().strip() == "8000"
    cfg = read_feat_conf(dst / "dump" / "fbank" / "fbank.conf")
    assert cfg.sample_rate == 8000 and cfg.n_mels == 80 and cfg.fft_size == 512
    at16 = read_feat_conf(RECIPE / "conf" / "fbank.conf")
    assert at16.sample_rate == 16000
    for lang in LANGS:
        d = dst / "dump" / "fbank" / f"{lang}_train"
        frames = {u: int(n) for u, n in read_table(d / "utt2num_frames").items()}
        wavs = read_table(dst / "data" / f"{lang}_train" / "wav.scp")
        for utt, mat in kaldiio.load_scp(str(d / "feats.scp")).items():
            want = audio_features(wavs[utt], cfg)  # the file read at 8 kHz, as a user's audio would be
            assert mat.shape == want.shape and frames[utt] == len(want), (lang, utt)
            np.testing.assert_allclose(mat, want, rtol=1e-4, atol=1e-4)
            if lang == "te":  # recorded at 16 kHz: not what the 16 kHz front end gives
                assert not np.allclose(mat, audio_features(wavs[utt], at16)[:len(mat)], atol=1e-2)
    assert "languages differ in sample rate (or at 8000 Hz; te at 16000 Hz)" in log
    assert "prepared at 8000 Hz" in log and "te downsampled" in log
    assert "Every language is prepared at 8000 Hz" in log


def test_rate_sentence_for_results_md(recipe):
    dst, _, _ = recipe
    line = rate_line(dst / "data")
    assert line.startswith("Every language's audio was read at 8000 Hz") and "te at 16000 Hz" in line
    assert "or at 8000 Hz" in line and "LID cannot tell a language by its bandwidth" in line
    assert "Dev: MUCS has no dev set" in line


def test_forced_rate_warns_of_upsampling(tmp_path):
    pm = load_prepare_mucs()
    make_mucs(tmp_path / "db", languages=("mr", "gu"), n_train=3, n_test=1, seconds=0.1)
    info = pm.prepare(tmp_path / "db", tmp_path / "data", ["mr", "gu"], policy="16000")
    assert info["sample_rate"] == 16000 and info["rates"] == {"mr": [8000], "gu": [16000]}
    assert "mr upsampled" in info["warning"] and "mr at 8000 Hz; gu at 16000 Hz" in info["warning"]
    assert (tmp_path / "data" / "sample_rate").read_text() == "16000\n"
    assert pm.main(["--layout", str(tmp_path / "db")]) == 0 and pm.is_mucs(tmp_path / "db")
    assert not pm.is_mucs(tmp_path / "data")


def test_errors_name_the_file_and_leave_data_alone(tmp_path, capsys):
    pm = load_prepare_mucs()
    make_mucs(tmp_path / "db", languages=("hi", "ta"), n_train=3, n_test=1, seconds=0.1)
    with pytest.raises(DataDirError, match=r"English/train/transcription.txt.*missing.*Hindi hi, Tamil ta"):
        pm.prepare(tmp_path / "db", tmp_path / "data", ["en", "hi"])
    assert not (tmp_path / "data").exists()
    trans = tmp_path / "db" / "Tamil" / "train" / "transcription.txt"
    lines = trans.read_text(encoding="utf-8").splitlines()
    (tmp_path / "db" / "Tamil" / "train" / "audio" / f"{lines[1].split()[0]}.wav").unlink()
    with pytest.raises(DataDirError, match=rf"{trans}:2: .*no audio file"):
        pm.prepare(tmp_path / "db", tmp_path / "data", ["hi", "ta"])
    trans.write_text(lines[0] + "\n", encoding="utf-8")
    with pytest.raises(DataDirError, match="too few to carve a dev set"):
        pm.prepare(tmp_path / "db", tmp_path / "data", ["ta"])
    assert pm.main(["--sample-rate", "fast", "--langs", "hi", str(tmp_path / "db"), str(tmp_path / "data")]) == 1
    assert "--sample-rate 'fast'" in capsys.readouterr().err
    assert not (tmp_path / "data").exists()


def test_help_states_the_dev_rule():
    import subprocess
    out = subprocess.run([sys.executable, str(RECIPE / "local" / "prepare_mucs.py"), "--help"], capture_output=True,
                         text=True, check=True, cwd=RECIPE).stdout
    assert "SHA-1 of the utterance id" in out and "Odia or" in out and "lowest" in out
