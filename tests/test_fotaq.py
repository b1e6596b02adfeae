"""local_models/common/fotaq.py on a small queen.1c built here as compress_queen lays it out (QTBL table, bare MP3
speech entries) with dialogue, cutaway and object data laid out as the engine reads them (tests/fotaq_fixture.py);
tones for speech."""
import numpy as np
import pytest
import soundfile
from fotaq_fixture import build, cutaway, mp3

from local_models.common import fotaq as fq


def test_speakers_kinds_and_text(tmp_path):
    clips = fq.fotaq_clips(path=build(tmp_path / "queen.1c"))
    got = [(c.utt, c.kind, c.text) for c in clips]
    assert got == [
        ("fotaq_and-020001P1", "talk", "Go away"),
        ("fotaq_and-020001P2", "talk", "Now!"),
        ("fotaq_joe-020006J1", "talk", "I want a boat."),
        ("fotaq_joe-02SSSSJ2", "talk", "Bye"),
        ("fotaq_joe-02XXXXJ1", "talk", "Yes, me."),
        ("fotaq_joe-C1A__011", "cutaway", "Look!"),
        ("fotaq_joe-JOE00011", "joe", "Nope"),
        ("fotaq_joe-JOE00411", "joe", "A fine crate"),
        ("fotaq_princess_azura-C1A__022", "cutaway", "to my palace"),
        ("fotaq_princess_azura-C1A__041", "cutaway", "Goodbye"),   # found only when record 3's frames are skipped
    ]
    assert all(c.utt.startswith(c.speaker + "-") for c in clips)


def test_dialogue_person_named_by_the_cutaway_that_opens_it(tmp_path):
    path = build(tmp_path / "queen.1c", cut=cutaway("AND1.DOG", 3))
    speakers = {c.name: c.speaker for c in fq.fotaq_clips(path=path)}
    assert speakers["020001P1.SB"] == "fotaq_princess_azura"   # object 3's name, not the file's stem
    assert speakers["020006J1.SB"] == "fotaq_joe"


def test_read_and_extract(tmp_path):
    path = build(tmp_path / "queen.1c")
    clips = fq.fotaq_clips(path=path)
    wave, rate = fq.read_clip(path, clips[0])
    assert rate == fq.SAMPLE_RATE and wave.dtype == np.float32
    assert abs(len(wave) / rate - 0.5) < 0.1                     # MP3 frames pad a little
    seconds = fq.extract(path, clips[:3], tmp_path / "wav")
    assert sorted(p.name for p in (tmp_path / "wav").iterdir()) == [
        "clips.tsv", "fotaq_and-020001P1.wav", "fotaq_and-020001P2.wav", "fotaq_joe-020006J1.wav"]
    info = soundfile.info(str(tmp_path / "wav" / "fotaq_joe-020006J1.wav"))
    assert (info.samplerate, info.subtype) == (11025, "PCM_16")
    fq.extract(path, clips[:1], tmp_path / "wav16", sample_rate=16000)
    assert soundfile.info(str(tmp_path / "wav16" / "fotaq_and-020001P1.wav")).samplerate == 16000
    rows = (tmp_path / "wav" / "clips.tsv").read_text().splitlines()
    assert rows[2].split("\t")[:3] == ["fotaq_and-020001P2", "fotaq_and", "talk"]
    assert abs(seconds["fotaq_joe-020006J1"] - 0.4) < 0.1


def test_cli_lists_counts(tmp_path, capsys):
    path = build(tmp_path / "queen.1c")
    assert fq.main(["--container", str(path), "list", "--durations"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("clips 10  speakers 3  talk 5  joe 2  cutaway 3  minutes 0.1")
    assert out[1].startswith("fotaq_joe\t6 clips")


def test_segments():
    assert fq.segments("Hello*03World *FLthere") == ["Hello", "World", "there"]
    assert fq.segments("Walk*XY00(237,112)on") == ["Walk", "on"]
    assert fq.segments("Done*01") == ["Done"]


def test_errors_name_the_file(tmp_path):
    path = build(tmp_path / "queen.1c")
    data = path.read_bytes()
    cut = tmp_path / "cut.1c"
    cut.write_bytes(data[:100])
    with pytest.raises(fq.FotaqError, match=r"cut\.1c: the table of 16 entries is cut off at byte 100"):
        fq.read_table(cut)
    cut.write_bytes(data[:-10])
    with pytest.raises(fq.FotaqError, match=r"cut\.1c: entry 15 \(QUEEN2\.JAS\) ends at byte \d+, past the file's"):
        fq.read_table(cut)
    bad = tmp_path / "bad.1c"
    bad.write_bytes(b"QUEEN" + data[5:])
    with pytest.raises(fq.FotaqError, match=r"bad\.1c: magic b'QUEE', expected b'QTBL'"):
        fq.read_table(bad)
    noise = build(tmp_path / "noise.1c", {"JOE00011.SB": b"\x01\x02" * 50})
    clip = fq.fotaq_clips(path=noise)[0]
    with pytest.raises(fq.FotaqError, match=r"noise\.1c:JOE00011\.SB: cannot decode"):
        fq.read_clip(noise, clip)
    missing = build(tmp_path / "missing.1c", {"C1A__091.SB": mp3(0.2)})
    with pytest.raises(fq.FotaqError, match=r"missing\.1c:C1A__091\.SB: C1A\.CUT has no record 9"):
        fq.fotaq_clips(path=missing)
    plain = build(tmp_path / "plain.1c", compression=0)
    with pytest.raises(fq.FotaqError, match=r"plain\.1c: uncompressed"):
        fq.fotaq_clips(path=plain)
    with pytest.raises(fq.FotaqError, match="not an unpacked flight-of-the-amazon-queen"):
        fq.container(tmp_path / "elsewhere")
    assert fq.main(["--container", str(bad), "list"]) == 1
    # another package version's game data: one line naming the entry, not a KeyError / IndexError
    no_jas2 = build(tmp_path / "nojas2.1c", replace={"QUEEN2.JAS": None})
    with pytest.raises(fq.FotaqError, match=r"nojas2\.1c: no entry QUEEN2\.JAS"):
        fq.fotaq_clips(path=no_jas2)
    short = build(tmp_path / "short.1c", replace={"QUEEN2.JAS": b"one line only"})
    with pytest.raises(fq.FotaqError, match=r"short\.1c:QUEEN2\.JAS: no line \d+ for "):
        fq.fotaq_clips(path=short)
