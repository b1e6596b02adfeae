"""egs/tcstar/tts1 on TC-STAR as distributed (tests/layout_tcstar.py: numbered speaker directories, T6B72... stems,
Latin-1 transcripts): run.sh stages 1-3 with --speaker_map, the message without one, and prepare_tcstar's checks of
transcript encodings and of label files of another format."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from layout_tcstar import SENTENCES, make_tcstar, stem
from recipe_runner import run_recipe

from local_models.common.datadir import read_table

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs" / "tcstar" / "tts1"
PREP = RECIPE / "local" / "prepare_tcstar.py"
pytestmark = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").exists(),
                                reason="needs tools/venv (make install)")
SMALL = ("--nj", "1", "--streams", "4", "--window", "20", "--f0-method", "dio")


def copy_recipe(dst: Path) -> Path:
    shutil.copytree(RECIPE, dst, ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads", "RESULTS.md"))
    return dst


def prep(*args):
    return subprocess.run([sys.executable, str(PREP), *map(str, args)], capture_output=True, text=True, cwd=ROOT)


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    base = tmp_path_factory.mktemp("tcstar_layout")
    stems = make_tcstar(base / "TCSTAR", speakers=("72", "73", "75"), n=3)
    dst = copy_recipe(base / "tts1")
    # one speaker through stages 2-3 (labelling and WORLD analysis take seconds per utterance on 2 busy cores),
    # chosen by its mapped name: the map, not the directories' order, picks corpus speaker 73
    proc = run_recipe(dst, "--stage", "1", "--stop-stage", "3", "--speaker-map", "72:M1 73:F1", "--speakers", "F1",
                      *SMALL, extra_env={"TCSTAR": str(base / "TCSTAR")})
    return dst, base / "TCSTAR", stems, proc


def test_stages_1_3_read_numbered_speakers_through_the_map(recipe):
    dst, db, stems, proc = recipe
    data = dst / "data"
    assert sorted(p.name for p in data.iterdir()) == ["F1_test", "F1_train", "F1_valid"]
    for name, corpus in (("F1", "73"),):
        wavs = {}
        for x in ("train", "valid", "test"):
            wavs.update(read_table(data / f"{name}_{x}" / "wav.scp"))
            assert set(read_table(data / f"{name}_{x}" / "utt2spk").values()) == {name}
        # every utterance of the mapped directory, ids <name>_<stem>, audio read from the corpus speaker's folder
        assert sorted(wavs) == [f"{name}_{s}" for s in stems[corpus]]
        assert all(Path(w).parent == (db / corpus).resolve() for w in wavs.values())
        assert f"speaker {name} = corpus speaker directory {db / corpus}" in proc.stdout + proc.stderr
    # Latin-1 transcripts, decoded and logged, written as UTF-8
    text = read_table(data / "F1_train" / "text")
    assert text[f"F1_{stem('73', 0)}"] == SENTENCES[0] and "aprobó" in SENTENCES[0]
    assert "read as Latin-1 / cp1252" in proc.stdout + proc.stderr
    # stage 2 labelled every utterance (the corpus has no labels of ours), stage 3 made the features
    for x in ("train", "valid", "test"):
        assert set(read_table(data / f"F1_{x}" / "lab.scp")) == set(read_table(data / f"F1_{x}" / "wav.scp"))
    dump = dst / "dump" / "F1"
    assert list(read_table(dump / "train" / "acou.scp")) == [f"F1_{stem('73', 0)}"]
    assert (dump / "stats.npz").is_file() and (dump / "train_windows" / "pos").is_file()
    assert list(read_table(dump / "F1_test" / "ling.scp")) == [f"F1_{stem('73', 2)}"]
    assert not (dst / "dump" / "M1").exists()


def test_numbered_speakers_without_a_map_are_named_clearly(recipe, tmp_path):
    _, db, _, _ = recipe
    dst = copy_recipe(tmp_path / "tts1")
    proc = run_recipe(dst, "--stage", "1", "--stop-stage", "1", *SMALL, check=False, extra_env={"TCSTAR": str(db)})
    assert proc.returncode != 0
    assert "no speaker M1, F1 (its speaker directories: 72, 73, 75)" in proc.stderr
    assert '--speaker_map "72:M1 73:F1"' in proc.stderr
    assert not (dst / "data").exists()
    # corpus speakers by their own numbers: accepted, with a word that the paper has no column for them
    proc = run_recipe(dst, "--stage", "1", "--stop-stage", "1", "--speakers", "72 75", *SMALL,
                      extra_env={"TCSTAR": str(db)})
    assert sorted(p.name for p in (dst / "data").iterdir()) == sorted(f"{s}_{x}" for s in ("72", "75")
                                                                      for x in ("train", "valid", "test"))
    assert "no column in the paper (its M1, F1): 72 75" in proc.stderr


def test_bad_speaker_maps(tmp_path):
    make_tcstar(tmp_path / "db")
    for spec, message in (("72:M1 74:F1", "--speaker-map names no speaker directory 74"),
                          ("72:M1 73:M1", "two corpus speakers are mapped to 'M1'"), ("72=M1", "not CORPUS_SPEAKER:NAME"),
                          ("72:73", "already another speaker directory's")):
        proc = prep("--speaker-map", spec, tmp_path / "db", tmp_path / "data")
        assert proc.returncode != 0 and message in proc.stderr, (spec, proc.stderr)
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("raw,found", [
    ("Señorías, votarán mañana.".encode("utf-8"), None),  # UTF-8: read silently
    ("Señorías, votarán mañana.".encode("latin-1"), "read as Latin-1 / cp1252"),
    ("“Señorías” – votarán.".encode("cp1252"), "read as Latin-1 / cp1252"),  # cp1252's quotes and dash
    ("«Café», dijo.".encode("latin-1"), "read as Latin-1 / cp1252"),  # é» is not a UTF-8 character
])
def test_transcript_encodings_are_detected(tmp_path, raw, found):
    make_tcstar(tmp_path / "db", speakers=("72",), encoding="utf-8")
    (tmp_path / "db" / "72" / f"{stem('72', 1)}.txt").write_bytes(raw)
    proc = prep(tmp_path / "db", tmp_path / "data")
    assert proc.returncode == 0, proc.stderr
    text = read_table(tmp_path / "data" / "72_train" / "text")
    assert text[f"72_{stem('72', 1)}"] == raw.decode("utf-8" if found is None else "cp1252")
    assert (found in proc.stdout) if found else ("Latin-1" not in proc.stdout)


@pytest.mark.parametrize("raw,message", [
    # UTF-8 characters beside a Latin-1 byte on line 2: mixed encodings, not guessed
    ("El Parlamento aprobó\nla reforma de Señorías".encode("utf-8")[:-8] + "ñ".encode("latin-1") + b"orias",
     ":2: invalid UTF-8 (byte 0xf1) in a file that also holds UTF-8 characters"),
    (b"El Parlamento\naprob\x81 la reforma", ":2: neither UTF-8 nor Latin-1 / cp1252 text (byte 0x81)"),
    (b"El Parlamento aprob\x03 la reforma", ":1: control character U+0003"),
])
def test_undecodable_transcripts_name_file_and_line(tmp_path, raw, message):
    make_tcstar(tmp_path / "db", speakers=("72",))
    bad = tmp_path / "db" / "72" / f"{stem('72', 2)}.txt"
    bad.write_bytes(raw)
    proc = prep(tmp_path / "db", tmp_path / "data")
    assert proc.returncode != 0 and f"{bad}{message}" in proc.stderr, proc.stderr
    assert not (tmp_path / "data").exists()


def test_label_files_of_another_format_are_refused(tmp_path):
    make_tcstar(tmp_path / "db", foreign_labs=True)
    proc = prep("--speaker-map", "72:M1 73:F1", tmp_path / "db", tmp_path / "data")
    lab = tmp_path / "db" / "72" / f"{stem('72', 0)}.lab"
    assert proc.returncode != 0 and f"{lab}:1: not a full-context label of this recipe's front end" in proc.stderr
    assert not (tmp_path / "data").exists()  # nothing half-written: every speaker is checked first
