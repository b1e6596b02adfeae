"""The SAD recipe's built-in MUSAN-like non-speech set (egs/fearless_steps/sad1/local/make_nonspeech_set.py):
layout and sources.tsv agree, every clip is sane audio, the train and eval makes share nothing, reruns are no-ops,
builds are byte-deterministic, and a missing Debian file gives one clear line."""
import csv
import hashlib
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from recipe_runner import load_nonspeech_set_script, nonspeech_sources_missing

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "egs" / "fearless_steps" / "sad1" / "local" / "make_nonspeech_set.py"
SCALE = "0.2"
APT = ("apt-get install fluidsynth timgm6mb-soundfont sound-theme-freedesktop frozen-bubble-data sound-icons "
       "espeak-ng libespeak-ng1")


ns = load_nonspeech_set_script()
_why = nonspeech_sources_missing(ns)
pytestmark = pytest.mark.skipif(_why is not None, reason=f"{_why}; to run: {APT}")


def _build(out, make, *extra):
    return ns.main(["--make", make, "--scale", SCALE, *extra, str(out)])


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("nonspeech")
    for make in ("train", "eval"):
        assert _build(root / make, make) == 0
    return root


def _rows(out):
    with open(out / "sources.tsv", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _wavs(out):
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.suffix == ".wav")


@pytest.mark.parametrize("make", ["train", "eval"])
def test_layout_and_sources_tsv_match_the_files(built, make):
    out = built / make
    assert (out / "sources.tsv").read_text().splitlines()[0] == "file\tkind\tsource\tlicence\tseconds"
    assert (out / ".done").is_file()
    rows = _rows(out)
    assert [r["file"] for r in rows] == _wavs(out)
    assert {r["kind"] for r in rows} == set(ns.KINDS), "every kind is built"
    for r in rows:
        kind, source_dir, name = r["file"].split("/")
        assert kind == r["kind"] and source_dir == r["source"].replace(":", "-") and name.endswith(".wav")
        assert r["licence"]
        assert r["source"] in {s["source"] for s in ns.sources_of(make)}
        assert abs(sf.info(str(out / r["file"])).duration - float(r["seconds"])) < 1e-3


@pytest.mark.parametrize("make", ["train", "eval"])
def test_every_clip_is_mono_16k_audible_unclipped_and_in_range(built, make):
    for r in _rows(built / make):
        path = built / make / r["file"]
        info = sf.info(str(path))
        assert (info.channels, info.samplerate, info.subtype) == (1, 16000, "PCM_16"), r["file"]
        x, _ = sf.read(str(path), dtype="int16")
        peak = np.abs(x.astype(np.int32)).max()
        assert abs(peak - 16384) <= 1, f"{r['file']}: peak {peak} (not normalised to 0.5)"
        assert np.sqrt(np.mean((x / 32768.0) ** 2)) > 0.01, f"{r['file']} is (nearly) silent"
        assert 0.5 <= len(x) / 16000 <= 30.0, f"{r['file']}: {len(x) / 16000:.2f} s"
        edge = max(1, int(0.005 * 16000))  # trimmed: something above -50 dB within 5 ms of each end
        threshold = 16384 * 10 ** (ns.TRIM_DB / 20)
        assert np.abs(x[:edge]).max() > threshold and np.abs(x[-edge:]).max() > threshold, r["file"]


def test_train_and_eval_makes_share_no_source_and_no_audio(built):
    sources = {make: {r["source"] for r in _rows(built / make)} for make in ("train", "eval")}
    assert not sources["train"] & sources["eval"]
    digests = {}
    for make in ("train", "eval"):
        digests[make] = {hashlib.sha256(sf.read(str(built / make / r["file"]), dtype="int16")[0].tobytes()).hexdigest()
                         for r in _rows(built / make)}
    assert not digests["train"] & digests["eval"]


def test_quindar_file_peaks_at_2525_and_2475_hz(built):
    rows = [r for r in _rows(built / "train") if r["source"] == "generated:quindar"]
    assert rows
    x, sr = sf.read(str(built / "train" / rows[0]["file"]))
    spec = np.abs(np.fft.rfft(x, 4 * len(x)))
    freqs = np.fft.rfftfreq(4 * len(x), 1 / sr)
    assert abs(freqs[np.argmax(spec)] - 2500) < 30
    for f in (2525, 2475):
        near = (freqs > f - 15) & (freqs < f + 15)
        assert abs(freqs[near][np.argmax(spec[near])] - f) < 3
        assert spec[near].max() > 100 * np.median(spec), "the tone must stand far above the rest of the spectrum"


def test_rerun_is_a_no_op_and_a_fresh_build_gives_identical_bytes(built, tmp_path, capsys):
    before = {p: p.stat().st_mtime_ns for p in (built / "train").rglob("*")}
    assert _build(built / "train", "train") == 0
    assert "nothing to do" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in (built / "train").rglob("*")} == before
    for make in ("train", "eval"):
        assert _build(tmp_path / make, make) == 0
        files = sorted(p.relative_to(built / make) for p in (built / make).rglob("*") if p.is_file())
        assert files == sorted(p.relative_to(tmp_path / make) for p in (tmp_path / make).rglob("*") if p.is_file())
        for rel in files:
            assert (built / make / rel).read_bytes() == (tmp_path / make / rel).read_bytes(), rel


def test_other_options_rebuild_and_leave_no_stale_files(built, tmp_path, capsys):
    out = tmp_path / "eval"
    shutil.copytree(built / "eval", out)
    assert _build(out, "eval", "--scale", "0.1") == 0  # the last --scale wins
    assert "rebuilding" in capsys.readouterr().out
    rows = _rows(out)
    assert [r["file"] for r in rows] == _wavs(out) and len(rows) < len(_rows(built / "eval"))


def test_a_changed_source_list_rebuilds(built, tmp_path, capsys, monkeypatch):
    out = tmp_path / "eval"
    shutil.copytree(built / "eval", out)
    src = next(s for s in ns.SOURCES if s["make"] == "eval" and s["source"] == "sound-icons" and s["kind"] == "noise")
    monkeypatch.setitem(src, "files", src["files"][:-1])  # a source dropped one file
    assert _build(out, "eval") == 0
    assert "rebuilding" in capsys.readouterr().out
    assert len(_rows(out)) == len(_rows(built / "eval")) - 1 and [r["file"] for r in _rows(out)] == _wavs(out)


@pytest.mark.parametrize("constant,make,package", [
    ("SOUND_ICONS", "eval", "sound-icons"),
    ("FREEDESKTOP", "train", "sound-theme-freedesktop"),
    ("SF2", "train", "timgm6mb-soundfont"),
    ("MU_CADE", "train", "mu-cade-data"),
])
def test_missing_debian_file_gives_one_line_with_the_apt_get_command(tmp_path, monkeypatch, capsys,
                                                                      constant, make, package):
    gone = tmp_path / "not-installed"
    monkeypatch.setattr(ns, constant, gone / "TimGM6mb.sf2" if constant == "SF2" else gone)
    assert _build(tmp_path / "out", make) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert str(gone) in err and f"apt-get install {package}" in err
    assert not (tmp_path / "out" / ".done").exists()


def test_fluidsynth_missing_is_named(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(ns.shutil, "which", lambda name: None)
    assert _build(tmp_path / "out", "train") == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "apt-get install fluidsynth" in err


def test_docs_list_every_source():
    docs = (ROOT / "docs" / "data.md").read_text(encoding="utf-8")
    table = ns.source_table_markdown()
    for s in ns.SOURCES:
        assert s["source"] in table and s["source"] in docs, s["source"]
    assert "asterisk" in docs and "alsa-utils" in docs


def test_cli_help_lists_the_options():
    import subprocess

    out = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, check=True).stdout
    for option in ("--make", "--seed", "--sample-rate", "--scale", "--list-sources", "OUT_DIR", "frozen-bubble-data",
                   "asterisk"):
        assert option in out
