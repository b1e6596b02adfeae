"""The ZeroSpeech 2019 submission directory (local_models/vqvae/submission.py, local_models/bin/vqvae_submission.py):
written from synthetic codes and wavs as stage 11 writes it, checked, and broken ones refused with the file named."""
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile
import yaml

from local_models.bin import vqvae_submission
from local_models.vqvae.submission import SubmissionError, synthesis_names, validate_submission

TEST = ["S002_0379088085", "S002_0034198090", "S003_2650563980"]
SYNTHESIS = {"S002_0379088085": "V002", "S003_2650563980": "V001"}
K, D = 8, 3


@pytest.fixture
def run_dir(tmp_path):
    """What stages 5 and 8 leave: data/test/wav.scp, codes_test/{codes/<utt>.npy,codebook.npy}, resynth wavs."""
    rng = np.random.default_rng(0)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "wav.scp").write_text("".join(f"{u} /corpus/test/{u}.wav\n" for u in TEST))
    (tmp_path / "synthesis_list").write_text("".join(f"{u} {v}\n" for u, v in SYNTHESIS.items()))
    codes = tmp_path / "codes_test"
    (codes / "codes").mkdir(parents=True)
    for u in TEST:
        np.save(codes / "codes" / f"{u}.npy", rng.integers(0, K, 12).astype(np.int32))
    np.save(codes / "codebook.npy", rng.standard_normal((K, D)).astype(np.float32))
    (tmp_path / "wav").mkdir()
    scp = []
    for u in SYNTHESIS:
        soundfile.write(tmp_path / "wav" / f"{u}.wav", 0.1 * np.ones(1600), 16000, subtype="PCM_16")
        scp.append(f"{u} {tmp_path / 'wav' / f'{u}.wav'}\n")
    (tmp_path / "wav.scp").write_text("".join(scp))
    code = tmp_path / "run.sh"
    code.write_text("#!/bin/sh\n")
    return tmp_path


def common(d: Path):
    return ["--test-scp", str(d / "data" / "wav.scp"), "--synthesis-list", str(d / "synthesis_list")]


def write(d: Path, *extra) -> int:
    return vqvae_submission.main(["write", *common(d), "--codes-dir", str(d / "codes_test"), "--wav-scp",
                                  str(d / "wav.scp"), "--author", "A. Tester", "--affiliation", "Nowhere",
                                  "--system-description", "a test", "--code", str(d / "run.sh"), *extra,
                                  str(d / "submission")])


def expected():
    return {"english": (TEST, SYNTHESIS)}


def test_written_submission_has_the_published_layout(run_dir):
    assert write(run_dir) == 0
    sub = run_dir / "submission"
    assert sorted(p.name for p in sub.iterdir()) == ["2019", "metadata.yaml"]
    assert yaml.safe_load((sub / "metadata.yaml").read_text()) == {
        "author": "A. Tester", "affiliation": "Nowhere", "open source": True}
    track = yaml.safe_load((sub / "2019" / "metadata.yaml").read_text())
    assert track["abx distance"] == "dtw_cosine" and track["using parallel train"] is False
    test = sub / "2019" / "english" / "test"
    # one .txt per test utterance, one frame a line: the code's embedding
    assert sorted(p.name for p in test.glob("*.txt")) == sorted(f"{u}.txt" for u in TEST)
    codebook = np.load(run_dir / "codes_test" / "codebook.npy")
    codes = np.load(run_dir / "codes_test" / "codes" / f"{TEST[0]}.npy")
    frames = np.loadtxt(test / f"{TEST[0]}.txt")
    np.testing.assert_allclose(frames, codebook[codes], rtol=1e-5)
    # wavs named as the challenge names them: the voice replaces the speaker prefix
    assert sorted(p.name for p in test.glob("*.wav")) == ["V001_2650563980.wav", "V002_0379088085.wav"]
    assert (sub / "2019" / "code" / "run.sh").is_file()
    assert vqvae_submission.main(["validate", *common(run_dir), str(sub)]) == 0


def test_one_hot_units(run_dir):
    assert write(run_dir, "--units", "one-hot") == 0
    frames = np.loadtxt(run_dir / "submission" / "2019" / "english" / "test" / f"{TEST[1]}.txt")
    codes = np.load(run_dir / "codes_test" / "codes" / f"{TEST[1]}.npy")
    assert frames.shape == (12, K) and (frames.argmax(1) == codes).all() and (frames.sum(1) == 1).all()


def test_ids_unique_only_within_a_speaker_keep_the_whole_id():
    assert synthesis_names({"S002_0379088085": "V002"}) == {"S002_0379088085": "V002_0379088085.wav"}
    # the mini corpus's T01_0001 and T02_0001 would both be V001_0001.wav
    assert synthesis_names({"T01_0001": "V001", "T02_0001": "V001"}) == {
        "T01_0001": "V001_T01_0001.wav", "T02_0001": "V001_T02_0001.wav"}


def breakages(sub: Path):
    """(what is broken, how, the text the error must hold)"""
    test = sub / "2019" / "english" / "test"
    return [
        ("a missing unit file", lambda: (test / f"{TEST[2]}.txt").unlink(), f"{TEST[2]}.txt: missing"),
        ("a ragged line", lambda: (test / f"{TEST[0]}.txt").write_text("0.1 0.2 0.3\n0.1 0.2\n"),
         f"{TEST[0]}.txt:2: 2 numbers"),
        ("a word among the numbers", lambda: (test / f"{TEST[0]}.txt").write_text("0.1 x 0.3\n"),
         f"{TEST[0]}.txt:1: not space-separated numbers"),
        ("another dimension", lambda: (test / f"{TEST[1]}.txt").write_text("1 2\n"), "2 numbers a line"),
        ("a missing wav", lambda: (test / "V002_0379088085.wav").unlink(), "V002_0379088085.wav: missing"),
        ("a wav that is not one", lambda: (test / "V001_2650563980.wav").write_text("RIFF"), "not a readable wav"),
        ("a bad distance", lambda: (sub / "2019" / "metadata.yaml").write_text(
            "abx distance: euclid\nsystem description: x\nusing parallel train: false\nusing external data: false\n"),
         "'abx distance' is 'euclid'"),
        ("a string for a bool", lambda: (sub / "metadata.yaml").write_text(
            "author: a\naffiliation: b\nopen source: 'yes'\n"), "entry 'open source' must be a bool"),
        ("an extra entry", lambda: (sub / "notes.txt").write_text("x"), "notes.txt: not allowed in the top level"),
        ("open source without code", lambda: shutil.rmtree(sub / "2019" / "code"),
         "code directory is missing or empty"),
        ("aux2 without aux1", lambda: (sub / "2019" / "english" / "auxiliary_embedding2").mkdir(),
         "auxiliary_embedding2 without auxiliary_embedding1"),
    ]


@pytest.mark.parametrize("case", range(len(breakages(Path("x")))),
                         ids=[b[0] for b in breakages(Path("x"))])
def test_a_broken_submission_fails_with_the_file_named(run_dir, case, capsys):
    assert write(run_dir) == 0
    sub = run_dir / "submission"
    _, breaks, message = breakages(sub)[case]
    breaks()
    with pytest.raises(SubmissionError) as e:
        validate_submission(sub, expected())
    assert message in str(e.value), str(e.value)
    assert vqvae_submission.main(["validate", *common(run_dir), str(sub)]) == 1
    assert message in capsys.readouterr().err


def test_surprise_is_checked_when_asked_for(run_dir):
    assert write(run_dir) == 0
    with pytest.raises(SubmissionError, match="surprise: missing"):
        validate_submission(run_dir / "submission", {**expected(), "surprise": ([], {})})


def test_a_failed_write_leaves_the_previous_submission(run_dir):
    assert write(run_dir) == 0
    before = sorted(p.name for p in (run_dir / "submission" / "2019" / "english" / "test").iterdir())
    (run_dir / "codes_test" / "codes" / f"{TEST[0]}.npy").unlink()
    assert write(run_dir) == 1
    assert sorted(p.name for p in (run_dir / "submission" / "2019" / "english" / "test").iterdir()) == before
    assert not (run_dir / "submission.building").exists()


def test_a_write_that_fails_validation_leaves_nothing_behind(run_dir):
    (run_dir / "wav" / f"{TEST[0]}.wav").write_text("not audio")
    assert write(run_dir) == 1
    assert not (run_dir / "submission").exists() and not (run_dir / "submission.building").exists()
