"""egs/zerospeech2019/unit1 data stage: the real-corpus reader on a fake ZeroSpeech 2019 layout (data dirs,
speakers, lists, errors) and the espeak-ng mini corpus (disjoint speakers, phone CTM, voice references,
byte-identical reruns)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

from local_models.common import synth
from local_models.common.datadir import read_table
from local_models.common.validate import validate_data_dir

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs" / "zerospeech2019" / "unit1"
needs_espeak = pytest.mark.skipif(
    not synth.espeak_available(), reason="libespeak-ng.so.1 not installed (apt-get install espeak-ng libespeak-ng1)"
)
FAKE = {
    "train/unit": ["S015_0361841101", "S015_0000000002", "S020_0000000003"],
    "train/voice": ["V001_0793403914", "V002_0000000005"],
    "test": ["S002_0379088085", "S002_0034198090", "S003_2650563980"],
}
SYNTHESIS = "test/S002_0379088085 V002\ntest/S003_2650563980 V001\n\nS002_0034198090.wav\n"


def env():
    e = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "ZEROSPEECH2019")}
    e["PYTHONPATH"] = str(ROOT)
    return e


def run_local(script, *args):
    return subprocess.run([sys.executable, str(RECIPE / "local" / script), *map(str, args)],
                          env=env(), capture_output=True, text=True)


def write_wav(path, sr=16000, seconds=0.2):
    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(path, np.random.default_rng(0).uniform(-0.1, 0.1, int(sr * seconds)), sr, subtype="PCM_16")


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "zs2019"
    for sub, names in FAKE.items():
        for name in names:
            write_wav(root / "english" / sub / f"{name}.wav")
    (root / "english" / "synthesis.txt").write_text(SYNTHESIS)
    return root


def lines(path):
    return Path(path).read_text().splitlines()


def speakers(data_dir):
    return set(read_table(data_dir / "spk2utt"))


def check_sorted_valid(data_dir, text=True):
    assert validate_data_dir(data_dir, check_text=text, sample_rate=16000) == []
    for name in ("wav.scp", "utt2spk", "spk2utt", "utt2dur"):
        keys = [line.split()[0] for line in lines(data_dir / name)]
        assert keys == sorted(keys, key=lambda k: k.encode()), name


def test_prepare_real_layout(corpus, tmp_path):
    data = tmp_path / "data"
    (data / "test_voice_ref").mkdir(parents=True)  # left over from a mini-corpus run
    (data / "dev").mkdir(parents=True)
    proc = run_local("prepare_zs2019.py", corpus, data)
    assert proc.returncode == 0, proc.stderr
    for name in ("train", "voice", "test"):
        check_sorted_valid(data / name, text=False)
    assert speakers(data / "train") == {"S015", "S020", "V001", "V002"}
    assert speakers(data / "voice") == {"V001", "V002"}
    assert speakers(data / "test") == {"S002", "S003"}
    assert read_table(data / "train" / "utt2spk")["S015_0361841101"] == "S015"
    assert set(read_table(data / "train" / "utt2dur").values()) == {"0.200"}
    assert read_table(data / "test" / "wav.scp")["S002_0379088085"] == str(corpus / "english/test/S002_0379088085.wav")
    assert lines(data / "test" / "bitrate_list") == ["S002_0034198090", "S002_0379088085", "S003_2650563980"]
    assert lines(data / "test" / "synthesis_list") == [  # an id without a voice gets the first voice speaker
        "S002_0034198090 V001", "S002_0379088085 V002", "S003_2650563980 V001"]
    assert not (data / "test_voice_ref").exists() and not (data / "dev").exists()

    bitrate = corpus / "english" / "bitrate_filelist.txt"
    bitrate.write_text("S003_2650563980.txt 0.200000\nS002_0379088085.txt 0.200000\n")
    assert run_local("prepare_zs2019.py", corpus, data).returncode == 0
    assert lines(data / "test" / "bitrate_list") == ["S002_0379088085", "S003_2650563980"]
    assert not list(data.glob(".*")), "temporary directories left behind"


def test_data_sh_reads_real_corpus(corpus, tmp_path):
    recipe = tmp_path / "unit1"
    shutil.copytree(RECIPE, recipe, ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads"))
    e = {**env(), "MAIN_ROOT": str(ROOT), "ZEROSPEECH2019": str(corpus)}
    proc = subprocess.run(["bash", "local/data.sh"], cwd=recipe, env=e, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert speakers(recipe / "data" / "voice") == {"V001", "V002"}


def test_missing_test_dir_is_named(corpus, tmp_path):
    shutil.rmtree(corpus / "english" / "test")
    proc = run_local("prepare_zs2019.py", corpus, tmp_path / "data")
    assert proc.returncode != 0
    assert str(corpus / "english" / "test") in proc.stderr
    assert not (tmp_path / "data" / "train").exists()


def test_wrong_sample_rate_names_file(corpus, tmp_path):
    bad = corpus / "english" / "train" / "unit" / "S020_0000000003.wav"
    write_wav(bad, sr=8000)
    proc = run_local("prepare_zs2019.py", corpus, tmp_path / "data")
    assert proc.returncode != 0
    assert str(bad) in proc.stderr and "8000" in proc.stderr


def test_unknown_synthesis_id_names_line(corpus, tmp_path):
    (corpus / "english" / "synthesis.txt").write_text("test/S002_0379088085 V001\ntest/S999_0000000000 V001\n")
    proc = run_local("prepare_zs2019.py", corpus, tmp_path / "data")
    assert proc.returncode != 0
    assert "synthesis.txt:2" in proc.stderr and "S999_0000000000" in proc.stderr


def test_test_voices_disjoint_from_training(monkeypatch):
    monkeypatch.syspath_prepend(str(RECIPE / "local"))
    from make_mini_corpus import split_voices

    unit, target, test, dev = split_voices(8, 4, seed=0, n_dev=4)
    assert len(unit) == 8 and len(test) == 4 and len(dev) == 4 and len(set(unit + [target] + test + dev)) == 17
    assert not {v.variant for v in test + dev} & {v.variant for v in unit + [target]}
    # a dev set changes no training or test voice (the corpus of a run without one stays the same)
    assert split_voices(8, 4, seed=0)[:3] == (unit, target, test) and split_voices(8, 4, seed=0)[3] == []


@needs_espeak
def test_mini_corpus(tmp_path):
    wav_root, data = tmp_path / "mini", tmp_path / "data"
    args = ["--unit-min", 0.3, "--voice-min", 0.2, "--test-min", 0.2, "--dev-min", 0.2, "--nj", 2, wav_root, data]
    proc = run_local("make_mini_corpus.py", *args)
    assert proc.returncode == 0, proc.stderr
    for name in ("train", "voice", "dev", "test", "test_voice_ref"):
        check_sorted_valid(data / name)
    train_spk, test_spk = speakers(data / "train"), speakers(data / "test")
    assert train_spk == {f"S0{i}" for i in range(1, 9)} | {"V001"}
    assert test_spk == {"T01", "T02", "T03", "T04"} and speakers(data / "dev") == {"D01", "D02", "D03", "D04"}
    dev_utts = set(read_table(data / "dev" / "utt2spk"))
    assert {line.split()[0] for line in lines(data / "dev" / "phones.ctm")} == dev_utts
    assert not set(read_table(data / "dev" / "text").values()) & set(read_table(data / "test" / "text").values())
    assert speakers(data / "voice") == {"V001"} and speakers(data / "test_voice_ref") == {"V001"}
    test_utts = list(read_table(data / "test" / "utt2spk"))
    assert all(u.startswith(read_table(data / "test" / "utt2spk")[u] + "_") for u in test_utts)
    assert {line.split()[0] for line in lines(data / "test" / "phones.ctm")} == set(test_utts)
    assert lines(data / "test" / "bitrate_list") == test_utts
    assert lines(data / "test" / "synthesis_list") == [f"{u} V001" for u in test_utts]
    ref = read_table(data / "test" / "voice_ref.scp")
    assert list(ref) == test_utts
    ref_wav, ref_text = read_table(data / "test_voice_ref" / "wav.scp"), read_table(data / "test_voice_ref" / "text")
    test_text = read_table(data / "test" / "text")
    for utt in test_utts:
        assert ref[utt] == ref_wav[f"V001_{utt}"] and Path(ref[utt]).is_file()
        assert ref_text[f"V001_{utt}"] == test_text[utt]
    assert not set(test_text.values()) & set(read_table(data / "voice" / "text").values())

    files = ["train/wav.scp", "train/text", "train/phones.ctm", "dev/wav.scp", "dev/phones.ctm", "test/wav.scp",
             "test/text", "test/phones.ctm",
             "test/voice_ref.scp", "voice/utt2dur"]
    before = {f: (data / f).read_bytes() for f in files}
    wav_before = Path(ref["T01_0001"]).read_bytes()
    assert run_local("make_mini_corpus.py", *args).returncode == 0
    assert {f: (data / f).read_bytes() for f in files} == before
    assert Path(ref["T01_0001"]).read_bytes() == wav_before
    assert not list(data.glob(".*")) and not list(wav_root.glob(".*")), "temporary directories left behind"
