"""fix / subset / split round trips, spk2utt conversions, audio loading and feature shards."""
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile

from local_models.common.audio import AudioError, iter_utterances, load_audio
from local_models.common.datadir import DataDir, DataDirError, read_table, write_data_dir
from local_models.common.dirops import (
    check_built_dirs,
    fix_data_dir,
    replace_dirs,
    select_utts,
    split_data_dir,
    split_utts,
    write_subset,
)
from local_models.common.features import FeatConfig, compute, shard_writer
from local_models.common.validate import validate_data_dir

ROOT = Path(__file__).resolve().parents[1]
UTILS = ROOT / "utils"


def make_dir(tmp_path, n_spk=4, per_spk=(1, 2, 3, 6)):
    """Speakers with different utterance counts (so splits are not trivially even)."""
    wav, utt2spk, text = {}, {}, {}
    for s in range(n_spk):
        for i in range(per_spk[s]):
            utt = f"s{s}-u{i:02d}"
            path = tmp_path / "wav" / f"{utt}.wav"
            path.parent.mkdir(exist_ok=True)
            soundfile.write(path, (np.sin(np.arange(1600) * (0.01 + s)) * 8000).astype(np.int16), 16000)
            wav[utt], utt2spk[utt], text[utt] = str(path), f"s{s}", f"word{i} word{s}"
    d = tmp_path / "data"
    write_data_dir(d, wav, utt2spk, text=text, extra={"utt2lid": {u: "en" for u in utt2spk}})
    return d


def test_written_dir_is_valid_and_sorted(tmp_path):
    d = make_dir(tmp_path)
    assert validate_data_dir(d) == []
    keys = [line.split()[0] for line in (d / "utt2spk").read_text().splitlines()]
    assert keys == sorted(keys, key=str.encode)


def test_fix_keeps_intersection_and_backs_up(tmp_path):
    d = make_dir(tmp_path)
    original_text = (d / "text").read_text()
    lines = original_text.splitlines(True)
    (d / "text").write_text("".join(reversed(lines[1:])) + "zz-extra orphan\n")  # unsorted, one missing, one extra
    (d / "utt2spk").write_text((d / "utt2spk").read_text() + "s3-u05 s3\n")  # duplicate line
    assert validate_data_dir(d)
    report = fix_data_dir(d)
    assert any("duplicate" in r for r in report)
    assert validate_data_dir(d) == []
    kept = read_table(d / "utt2spk")
    assert "s0-u00" not in kept and "zz-extra" not in kept and len(kept) == 11
    assert (d / ".backup" / "text").read_text().endswith("zz-extra orphan\n")
    assert read_table(d / "spk2utt")["s3"].split() == [f"s3-u{i:02d}" for i in range(6)]
    before = {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()}
    fix_data_dir(d)  # idempotent
    assert before == {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()}


def test_fix_with_segments_restricts_wav(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "wav.scp").write_text("r1 /a.wav\nr2 /b.wav\n")
    (d / "segments").write_text("s-1 r1 0 1\ns-2 r2 2 1\n")  # s-2 bad segment
    (d / "utt2spk").write_text("s-1 s\ns-2 s\n")
    fix_data_dir(d)
    assert read_table(d / "wav.scp") == {"r1": "/a.wav"}
    assert list(read_table(d / "utt2spk")) == ["s-1"]


@pytest.mark.parametrize("kw,expected", [
    (dict(first=2), ["s0-u00", "s1-u00"]),
    (dict(last=2), ["s3-u04", "s3-u05"]),
    (dict(utt_list=["s2-u01", "s1-u00"]), ["s1-u00", "s2-u01"]),
    (dict(spk_list=["s1"]), ["s1-u00", "s1-u01"]),
    (dict(per_spk=1), ["s0-u00", "s1-u00", "s2-u00", "s3-u00"]),
])
def test_subset_selection(tmp_path, kw, expected):
    d = make_dir(tmp_path)
    utts = select_utts(d, **kw)
    assert utts == expected
    write_subset(d, tmp_path / "sub", utts)
    assert validate_data_dir(tmp_path / "sub") == []
    assert list(read_table(tmp_path / "sub" / "text")) == expected
    assert list(read_table(tmp_path / "sub" / "wav.scp")) == expected


def test_subset_errors(tmp_path):
    d = make_dir(tmp_path)
    with pytest.raises(ValueError, match="exactly one"):
        select_utts(d, first=1, last=1)
    with pytest.raises(ValueError, match="not in"):
        select_utts(d, utt_list=["nobody-u1"])
    proc = subprocess.run([UTILS / "subset_data_dir", "--spk-list", "/nonexistent", str(d), str(tmp_path / "x")],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "/nonexistent" in proc.stderr


@pytest.mark.parametrize("per_spk", [False, True])
@pytest.mark.parametrize("nj", [1, 2, 3, 4])
def test_split_round_trip(tmp_path, nj, per_spk):
    d = make_dir(tmp_path)
    parts = split_data_dir(d, nj, per_spk=per_spk)
    assert [p.name for p in parts] == [str(i) for i in range(1, nj + 1)]
    union = {}
    for p in parts:
        assert validate_data_dir(p) == []
        part = read_table(p / "utt2spk")
        assert part and not set(part) & set(union)
        union.update(part)
    assert union == read_table(d / "utt2spk")  # round trip: parts recombine to the whole
    if per_spk:  # no speaker in two parts
        spks = [set(read_table(p / "spk2utt")) for p in parts]
        assert sum(len(s) for s in spks) == len(set.union(*spks))
    else:  # near-equal sizes
        sizes = [len(read_table(p / "utt2spk")) for p in parts]
        assert max(sizes) - min(sizes) <= 1


def test_split_balance_and_errors():
    utt2spk = {f"s{s:02d}-u{i}": f"s{s:02d}" for s in range(10) for i in range(5)}
    sizes = [len(p) for p in split_utts(utt2spk, 5, per_spk=True)]
    assert sizes == [10] * 5
    with pytest.raises(ValueError, match="cannot split"):
        split_utts(utt2spk, 11, per_spk=True)
    with pytest.raises(ValueError, match="cannot split"):
        split_utts({"a-1": "a"}, 2)


def test_split_cli_rewrites_without_stale_parts(tmp_path):
    d = make_dir(tmp_path)
    subprocess.run([UTILS / "split_data", str(d), "3"], check=True, capture_output=True)
    (d / "split3" / "1" / "stale").write_text("x")
    subprocess.run([UTILS / "split_data", str(d), "3"], check=True, capture_output=True)
    assert not (d / "split3" / "1" / "stale").exists()


def test_spk2utt_conversions_round_trip(tmp_path):
    d = make_dir(tmp_path)
    s2u = subprocess.run([UTILS / "utt2spk_to_spk2utt", str(d / "utt2spk")], capture_output=True, text=True, check=True)
    assert s2u.stdout == (d / "spk2utt").read_text()
    u2s = subprocess.run([UTILS / "spk2utt_to_utt2spk"], input=s2u.stdout, capture_output=True, text=True, check=True)
    assert u2s.stdout == (d / "utt2spk").read_text()


@pytest.mark.parametrize("tool", ["validate_data_dir", "fix_data_dir", "subset_data_dir", "split_data",
                                  "utt2spk_to_spk2utt", "spk2utt_to_utt2spk", "extract_feats"])
def test_every_tool_has_help(tool):
    proc = subprocess.run([UTILS / tool, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "usage:" in proc.stdout


def test_datadir_load_save_round_trip(tmp_path):
    d = make_dir(tmp_path)
    dd = DataDir.load(d)
    dd.save(tmp_path / "copy")
    for name in ("wav.scp", "text", "utt2spk", "spk2utt", "utt2lid"):
        assert (tmp_path / "copy" / name).read_bytes() == (d / name).read_bytes()
    with pytest.raises(DataDirError, match="does not exist"):
        DataDir.load(tmp_path / "missing")


def test_load_audio_path_pipe_and_resample(tmp_path):
    sr = 16000
    t = np.arange(sr) / sr
    wave = (0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    path = tmp_path / "a.wav"
    soundfile.write(path, wave, sr, subtype="PCM_16")
    x, rate = load_audio(str(path))
    assert rate == sr and np.allclose(x, wave, atol=1e-4)
    y, rate = load_audio(f"cat {path} |")
    assert rate == sr and np.array_equal(x, y)
    z, rate = load_audio(str(path), sample_rate=8000)
    assert rate == 8000 and len(z) == 8000
    spectrum = np.abs(np.fft.rfft(z))  # 440 Hz survives resampling: peak at bin 440 (1 Hz bins)
    assert abs(int(np.argmax(spectrum)) - 440) <= 1
    with pytest.raises(AudioError, match="does not exist"):
        load_audio(str(tmp_path / "none.wav"))
    with pytest.raises(AudioError, match="failed with code"):
        load_audio("false |")


def test_iter_utterances_cuts_segments(tmp_path):
    sr = 8000
    soundfile.write(tmp_path / "r.wav", np.linspace(-0.5, 0.5, sr * 2).astype(np.float32), sr, subtype="FLOAT")
    d = tmp_path / "d"
    write_data_dir(d, {"r": str(tmp_path / "r.wav")}, {"s-1": "s", "s-2": "s"},
                   segments={"s-1": ("r", 0.0, 0.5), "s-2": ("r", 1.0, 1.25)})
    got = {u: w for u, w, _ in iter_utterances(d)}
    assert len(got["s-1"]) == 4000 and len(got["s-2"]) == 2000
    assert got["s-2"][0] == pytest.approx(np.linspace(-0.5, 0.5, sr * 2)[8000], abs=1e-6)


def test_feature_shard_round_trip(tmp_path):
    import kaldiio

    cfg = FeatConfig(kind="logmel", sample_rate=16000, n_mels=40)
    wave = np.random.default_rng(0).standard_normal(16000).astype(np.float32) * 0.1
    feats = compute(wave, cfg)
    assert feats.shape == (1 + 16000 // 160, 40)
    with shard_writer(tmp_path / "f") as items:
        items["b-2"] = feats
        items["a-1"] = feats[:10]
    scp = kaldiio.load_scp(str(tmp_path / "f.scp"))
    assert list(scp) == ["a-1", "b-2"]
    assert np.array_equal(scp["b-2"], feats) and np.array_equal(scp["a-1"], feats[:10])
    assert not list(tmp_path.glob("*.tmp"))


def test_shard_writer_leaves_nothing_on_error(tmp_path):
    with pytest.raises(RuntimeError):
        with shard_writer(tmp_path / "f") as items:
            items["a"] = np.zeros((2, 2), np.float32)
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_parallel_wavegan_imports_with_shim():
    from local_models.common.compat import import_parallel_wavegan_models

    models = import_parallel_wavegan_models()
    assert hasattr(models, "ParallelWaveGANGenerator")


def test_subset_carries_phone_alignments(tmp_path):
    d = make_dir(tmp_path)
    (d / "phones.ctm").write_text("s0-u00 1 0.000 0.100 a\ns1-u00 1 0.000 0.050 b\ns1-u00 1 0.050 0.100 c\n")
    write_subset(d, tmp_path / "sub", ["s1-u00"])
    assert (tmp_path / "sub" / "phones.ctm").read_text() == "s1-u00 1 0.000 0.050 b\ns1-u00 1 0.050 0.100 c\n"


def test_replace_dirs_swaps_whole_sets_and_keeps_no_backup(tmp_path):
    dest = tmp_path / "data"
    (dest / "train").mkdir(parents=True)
    (dest / "train" / "stale").write_text("old")
    (dest / "keep").mkdir()
    built = {}
    for name in ("train", "test"):
        built[name] = tmp_path / "build" / name
        built[name].mkdir(parents=True)
        (built[name] / "text").write_text(name)
    replace_dirs(built, dest)
    assert sorted(p.name for p in dest.iterdir()) == ["keep", "test", "train"]  # no .train.old left
    assert not (dest / "train" / "stale").exists() and (dest / "train" / "text").read_text() == "train"
    assert not (tmp_path / "build" / "train").exists()


def test_check_built_dirs_names_the_bad_dir(tmp_path):
    d = make_dir(tmp_path)
    check_built_dirs({"ok": d})
    (d / "utt2spk").write_text("only-one s0\n")  # text and wav.scp now list utterances utt2spk lacks
    with pytest.raises(DataDirError, match="built an invalid data dir") as e:
        check_built_dirs({"bad": d})
    assert str(d) in str(e.value)


def test_build_and_swap_is_all_or_nothing(tmp_path):
    from local_models.common.datadir import DataDirError, read_table, write_data_dir
    from local_models.common.dirops import build_and_swap

    def good(utt):
        return lambda path: write_data_dir(path, {utt: "/a.wav"}, {utt: utt}, text={utt: "x"})

    build_and_swap(tmp_path, {"a": good("u1"), "b": good("u2")}, "t")
    assert read_table(tmp_path / "a" / "text") == {"u1": "x"}
    with pytest.raises(DataDirError, match="built an invalid data dir"):  # b's text is empty: neither set moves
        build_and_swap(tmp_path, {"a": good("u3"), "b": lambda p: write_data_dir(p, {"v": "/b.wav"}, {"v": "v"},
                                                                                  text={"v": ""})}, "t")
    assert read_table(tmp_path / "a" / "text") == {"u1": "x"} and not (tmp_path / ".t.building").exists()
