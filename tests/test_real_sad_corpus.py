"""egs/debian_speech/sad1/local/make_real_corpus.py: the real-recording SAD corpus's labels are exact by construction,
and its three splits are disjoint makes (tones stand in for the packages' speech and music here)."""
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

from local_models.sad.augment import NonSpeechSet

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def mrc():
    path = ROOT / "egs" / "debian_speech" / "sad1" / "local" / "make_real_corpus.py"
    spec = importlib.util.spec_from_file_location("make_real_corpus", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def bursts(sr, pattern):
    """A clip of (tone seconds, pause seconds) pairs; returns the wave and the tone regions in samples."""
    out, regions, pos = [], [], 0
    for on, off in pattern:
        n_on, n_off = int(on * sr), int(off * sr)
        out += [0.3 * np.sin(2 * np.pi * 300 * np.arange(n_on) / sr), np.zeros(n_off)]
        regions.append((pos, pos + n_on))
        pos += n_on + n_off
    return np.concatenate(out), regions


def test_speech_regions_bridge_short_pauses_only(mrc):
    wave, tones = bursts(mrc.SR, [(0.5, 0.1), (0.6, 0.8), (0.4, 0.2)])
    wave = np.concatenate([np.zeros(mrc.SR // 2), wave])  # leading silence: not speech
    got = mrc.speech_regions(wave)
    assert len(got) == 2  # the 0.1 s pause is bridged, the 0.8 s one is not
    off = mrc.SR // 2
    tol = int(0.02 * mrc.SR)  # the analysis frames' hop
    assert abs(got[0][0] - (off + tones[0][0])) <= tol and abs(got[0][1] - (off + tones[1][1])) <= tol
    assert abs(got[1][0] - (off + tones[2][0])) <= tol and abs(got[1][1] - (off + tones[2][1])) <= tol


def test_stream_reference_is_where_the_speech_is(mrc, tmp_path):
    sr = mrc.SR
    clips = []
    for i, pattern in enumerate(([(0.6, 0.1), (0.5, 0.0)], [(1.0, 0.0)], [(0.3, 0.7), (0.4, 0.0)])):
        wave, _ = bursts(sr, pattern)
        path = tmp_path / f"clip{i}.wav"
        soundfile.write(path, np.concatenate([np.zeros(sr // 4), wave, np.zeros(sr // 4)]), sr)
        clips.append(mrc.SpeechClip(path, f"spk{i}"))
    (tmp_path / "ns" / "music").mkdir(parents=True)
    soundfile.write(tmp_path / "ns" / "music" / "m.wav", 0.2 * np.sin(2 * np.pi * 1500 * np.arange(3 * sr) / sr), sr)
    rng = np.random.default_rng(0)
    wave, regions, events, channel = mrc.build_stream(rng, clips, NonSpeechSet(tmp_path / "ns"), 60.0)
    assert wave.dtype == np.float32 and len(wave) == 60 * sr and np.abs(wave).max() <= 0.9 + 1e-6
    assert len(regions) >= 10 and all(0 < s < e <= 60 for s, e in regions)
    assert all(b[0] - a[1] >= 0.2 - 1e-3 or b[0] - a[1] > 0.25 for a, b in zip(regions, regions[1:]))
    speech_events = [(e.start, e.end) for e in events if e.kind == "speech"]
    assert speech_events == regions  # the events table holds every reference segment
    # rebuilt with the same draws but no noise, music or channel: the signal is the speech alone, and it is there
    # exactly inside the reference (within the 10 ms analysis hop)
    rng = np.random.default_rng(0)
    orig = (mrc.coloured_noise, mrc.place_events, mrc.channel)
    try:
        mrc.coloured_noise = lambda rng, n, sr_: np.zeros(n)
        mrc.place_events = lambda n, sr_, nset, rates, level, rng: (np.zeros(n), [])
        mrc.channel = lambda rng, x: (x, "none")
        clean, regions2, _, _ = mrc.build_stream(rng, clips, NonSpeechSet(tmp_path / "ns"), 60.0)
    finally:
        mrc.coloured_noise, mrc.place_events, mrc.channel = orig
    assert regions2 == regions
    mask = np.zeros(len(clean), bool)
    for s, e in regions:
        mask[int(s * sr):int(e * sr)] = True
    loud = np.abs(clean) > 1e-3
    assert not (loud & ~mask).any() or (loud & ~mask).sum() < 0.01 * sr  # no speech outside the reference
    loud_frames = loud.reshape(-1, sr // 100).any(axis=1)  # 10 ms frames
    for s, e in regions:  # a region starts and ends in tone; its silences are only the bridged pauses (< 0.3 s)
        inside = loud_frames[int(round(s * 100)):int(round(e * 100))]
        assert inside[:3].any() and inside[-3:].any(), (s, e)
        quiet = np.diff(np.flatnonzero(np.concatenate([[True], inside, [True]]))) - 1
        assert quiet.max() < mrc.BRIDGE_S * 100 + 3, (s, e, quiet.max())


def test_splits_are_disjoint_makes(mrc):
    speech = {split: set(mrc.SPEECH_SOURCES[split]) for split in mrc.SPLITS}
    langs = {split: {lang for _, lang in s} for split, s in speech.items()}
    for a in mrc.SPLITS:
        for b in mrc.SPLITS:
            if a < b:
                assert not langs[a] & langs[b], (a, b)  # no reader, actor or language in two splits
    names = [f"file{i}.flac" for i in range(200)]
    halves = {n: mrc.half(n) for n in names}
    assert set(halves.values()) == {"A", "B"} and 60 < sum(v == "A" for v in halves.values()) < 140
    assert all(mrc.half(n) == halves[n] for n in names)  # stable: a rerun splits the same way


def test_an_empty_or_silent_clip_has_no_speech(mrc, tmp_path):
    soundfile.write(tmp_path / "empty.wav", np.zeros(0), mrc.SR)
    assert mrc.read_clip(tmp_path / "empty.wav").size == 0  # the packages hold a few (fillets nl)
    assert mrc.speech_regions(np.zeros(0)) == [] and mrc.speech_regions(np.zeros(mrc.SR)) == []


def test_spoken_stamp_sounds_are_not_noise(mrc, tmp_path):
    """Tux Paint's letter and number stamps say their letter / number aloud, and a few single sounds carry a voice
    (the faces' cries, the dreidel's letter names): never in the non-speech pool (the letters were, as 161 of the
    263 train 'effects'); the animals' sounds are, the read descriptions are not."""
    stamps = tmp_path / mrc.STAMPS
    for rel in ("symbols/math/7_nl.ogg", "symbols/alphabets/lowercase/a_filled.ogg", "animals/birds/crow.ogg",
                "animals/birds/crow_desc_es.ogg", "household/kettle.ogg", "symbols/faces/happy.ogg",
                "symbols/faces/happy_face.ogg", "seasonal/hanukkah/dreydl-nun.ogg", "space/apollo_lander.ogg"):
        (stamps / rel).parent.mkdir(parents=True, exist_ok=True)
        (stamps / rel).write_bytes(b"")
    got = sorted(p.relative_to(stamps).as_posix() for p in mrc.tuxpaint_effects(tmp_path))
    assert got == ["animals/birds/crow.ogg", "household/kettle.ogg", "symbols/faces/happy_face.ogg"]


def test_voiced_game_sounds_leave_every_pool_even_from_an_earlier_build(mrc, tmp_path):
    """Eval's effects (Hedgewars' Sounds/, Warzone's audio/sfx/) without the screams, grunts and 'help!', and a
    pool folder built before a sound was found voiced loses it on the next build (NonSpeechSet reads the folder)."""
    import zipfile

    roots = {k: tmp_path / k for k in ("hedgewars", "warzone")}
    data = roots["hedgewars"] / mrc.HEDGEWARS_DIR
    for rel in ("Music/theme.ogg", "Sounds/explosion.ogg", "Sounds/hell_ow.ogg", "Sounds/voices/Default/Boom.ogg"):
        (data / rel).parent.mkdir(parents=True, exist_ok=True)
        (data / rel).write_bytes(b"x")
    wz = roots["warzone"] / mrc.WARZONE_WZ
    wz.parent.mkdir(parents=True)
    with zipfile.ZipFile(wz, "w") as z:
        for n in ("audio/sfx/weapons/gun.ogg", "audio/sfx/misc/scream2.ogg", "audio/sfx/misc/help.ogg",
                  "audio/memressp/msg.ogg"):
            z.writestr(n, b"x")
    out = tmp_path / "pool"
    (out / "noise").mkdir(parents=True)
    (out / "noise" / "misc-scream.ogg").write_bytes(b"x")  # left by a build before the voiced list
    mrc.nonspeech_dir("eval", roots, out)
    assert sorted(os.listdir(out / "noise")) == ["Sounds-explosion.ogg", "audio-sfx-weapons-gun.ogg"]
    assert os.listdir(out / "music") == ["Music-theme.ogg"]


def test_the_sealed_eval_is_checked_against_its_committed_fingerprint(mrc, tmp_path, capsys):
    """A split built at the fingerprint's settings must match it byte for byte, or nothing of it is kept; built
    with other settings it is not checked (and said so). The committed fingerprint names the sealed eval's two
    streams and every reference table."""
    wav, data = tmp_path / "wav", tmp_path / "data"
    wav.mkdir(), data.mkdir()
    for name in ("real_eval_000.wav", "real_eval_001.wav"):
        (wav / name).write_bytes(name.encode())
    for t in mrc.TABLES:
        (data / t).write_text(f"{t}\n")
    manifest = tmp_path / "eval.sha256"
    mrc.write_manifest(manifest, mrc.settings_line("eval", 10.0, 0), mrc.digests(wav, data))
    mrc.check_sealed(manifest, "eval", 10.0, 0, wav, data)
    assert "byte for byte" in capsys.readouterr().err
    mrc.check_sealed(manifest, "eval", 2.0, 0, wav, data)  # another make: left alone
    assert "not checked" in capsys.readouterr().err and (data / "events").is_file()
    (data / "events").write_text("events, one more line\n")
    with pytest.raises(SystemExit, match=r"not the sealed one .* \(differs: data/events\)"):
        mrc.check_sealed(manifest, "eval", 10.0, 0, wav, data)
    assert not data.exists() and not list(wav.glob("*.wav"))
    committed = (ROOT / "egs" / "debian_speech" / "sad1" / "conf" / "eval.sha256").read_text().splitlines()
    assert committed[0] == mrc.settings_line("eval", 10, 0)
    assert sorted(line.split("  ")[1] for line in committed[1:]) == sorted(
        [f"data/{t}" for t in mrc.TABLES] + ["wav/real_eval_000.wav", "wav/real_eval_001.wav"])


def _tiny_split(mrc, tmp_path):
    """Two 3-second streams and valid reference tables, as a split writes them."""
    wav, data = tmp_path / "wav", tmp_path / "data"
    wav.mkdir(), data.mkdir()
    rng = np.random.default_rng(0)
    for i in range(2):
        soundfile.write(wav / f"real_eval_00{i}.wav", 0.1 * rng.standard_normal(3 * mrc.SR), mrc.SR, subtype="PCM_16")
    (data / "events").write_text("real_eval_000 0.500 1.500 speech 20.0\nreal_eval_000 1.000 2.000 music 5.0\n"
                                 "real_eval_001 0.200 2.200 speech 25.0\n")
    (data / "ref_segments").write_text("real_eval_000-0000050-0000150 real_eval_000 0.500 1.500\n"
                                       "real_eval_001-0000020-0000220 real_eval_001 0.200 2.200\n")
    (data / "ref.rttm").write_text("SPEAKER real_eval_000 1 0.500 1.000 <NA> <NA> speech <NA> <NA>\n")
    (data / "reco2dur").write_text("real_eval_000 3.000\nreal_eval_001 3.000\n")
    (data / "reco2channel").write_text("real_eval_000 telephone\nreal_eval_001 wideband\n")
    return wav, data


def test_a_rebuild_off_in_its_last_bits_is_the_sealed_set_a_changed_one_is_not(mrc, tmp_path, capsys):
    """Another CPU's float arithmetic may move a sample's last bit: the stream's bytes differ, its summary (length,
    level a second) stays within its tolerances, and the set is kept, said so. A set 1 dB louder, or whose reference
    tables differ at all (an event more, labels moved), is another set: refused, nothing kept; likewise when the
    summary cannot be read (named)."""
    import shutil

    wav, data = _tiny_split(mrc, tmp_path)
    manifest, settings = tmp_path / "eval.sha256", mrc.settings_line("eval", 10.0, 0)
    mrc.write_manifest(manifest, settings, mrc.digests(wav, data))
    mrc.write_summary(mrc.summary_path(manifest), settings, mrc.summary(wav))
    assert mrc.summary_path(manifest).name == "eval.summary.json"
    keep = tmp_path / "keep"
    shutil.copytree(tmp_path / "wav", keep / "wav"), shutil.copytree(tmp_path / "data", keep / "data")

    def rebuild(scale=1.0, lsb=0, events=None):
        for d in ("wav", "data"):
            shutil.rmtree(tmp_path / d, ignore_errors=True)
            shutil.copytree(keep / d, tmp_path / d)
        x, sr = soundfile.read(wav / "real_eval_001.wav", dtype="int16")
        x = (x.astype(np.int64) * scale).astype(np.int64)
        x[::97] += lsb  # a last-bit difference in 1 % of the samples
        soundfile.write(wav / "real_eval_001.wav", x.astype(np.int16), sr, subtype="PCM_16")
        if events:
            with open(data / "events", "a") as f:
                f.write(events)

    rebuild(lsb=1)
    mrc.check_sealed(manifest, "eval", 10.0, 0, wav, data)
    err = capsys.readouterr().err
    assert "differs from" in err and "wav/real_eval_001.wav" in err and "byte for byte and its streams match" in err
    assert (data / "events").is_file() and (wav / "real_eval_001.wav").is_file()
    rebuild(scale=10 ** (1 / 20))  # 1 dB louder: another set
    with pytest.raises(SystemExit, match=r"real_eval_001.wav: level off by (0\.99|1\.0)"):
        mrc.check_sealed(manifest, "eval", 10.0, 0, wav, data)
    assert not data.exists() and not list(wav.glob("*.wav"))
    rebuild(lsb=1, events="real_eval_001 2.500 2.900 noise 3.0\n")  # an effect more: the tables must be exact
    with pytest.raises(SystemExit, match=r"differs: data/events, wav/real_eval_001.wav\)"):
        mrc.check_sealed(manifest, "eval", 10.0, 0, wav, data)
    assert not data.exists()
    rebuild(lsb=1)
    mrc.summary_path(manifest).write_text('{"settings": "%s", "streams": []}' % settings)  # not a summary
    with pytest.raises(SystemExit, match=r"eval.summary.json: not a summary of streams"):
        mrc.check_sealed(manifest, "eval", 10.0, 0, wav, data)
    assert not data.exists() and not list(wav.glob("*.wav"))
    rebuild(lsb=1)  # without a summary of this make: bytes only, as before
    mrc.summary_path(manifest).unlink()
    with pytest.raises(SystemExit, match=r"not the sealed one .*\(differs: wav/real_eval_001.wav\)"):
        mrc.check_sealed(manifest, "eval", 10.0, 0, wav, data)


def test_the_committed_summary_describes_the_fingerprinted_eval(mrc):
    import json

    conf = ROOT / "egs" / "debian_speech" / "sad1" / "conf"
    got = json.loads((conf / "eval.summary.json").read_text())
    assert got["settings"] == mrc.settings_line("eval", 10, 0) == (conf / "eval.sha256").read_text().splitlines()[0]
    assert sorted(got["wav"]) == ["real_eval_000.wav", "real_eval_001.wav"]
    assert all(w["samples"] == 5 * 60 * mrc.SR and len(w["rms_db"]) == 300 for w in got["wav"].values())
    assert set(got) == {"settings", "wav"}  # the streams only: the reference tables are checked byte for byte


def test_near_silent_seconds_count_as_the_floor(mrc):
    """A sample's last bit is a large share of a near-silent second: levels under the floor are not compared, those
    above are, to TOLERANCE; a length differs never."""
    want = {"wav": {"a.wav": {"samples": 32000, "rms_db": [-95.0, -20.0]}}}
    assert mrc.summary_differences(want, {"wav": {"a.wav": {"samples": 32000, "rms_db": [-70.0, -20.04]}}}) == []
    assert mrc.summary_differences(want, {"wav": {"a.wav": {"samples": 32000, "rms_db": [-50.0, -20.0]}}}) == [
        "wav/a.wav: level off by 10.000 dB"]
    assert mrc.summary_differences(want, {"wav": {"a.wav": {"samples": 32001, "rms_db": [-95.0, -20.0]}}}) == [
        "wav/a.wav: length"]
