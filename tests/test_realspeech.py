"""local_models/common/realspeech.py on a Tux Paint stamps tree laid out as the Debian package ships it (tones for
speech; tree, names and .txt format as in tuxpaint-stamps-default 2022.06.04-1)."""
import shutil

import numpy as np
import pytest
import soundfile

from local_models.common import realspeech as rs
from local_models.common.audio import load_audio
from local_models.common.datadir import read_table

needs_sox = pytest.mark.skipif(shutil.which("sox") is None, reason="needs sox")


def ogg(path, seconds, freq=220.0, rate=44100):
    t = np.arange(int(rate * seconds)) / rate
    x = 0.3 * np.sin(2 * np.pi * freq * t)
    soundfile.write(path, np.stack([x, x], axis=1), rate, format="OGG", subtype="VORBIS")


def make_stamps(root):
    birds = root / rs.STAMPS / "animals" / "birds"
    food = root / rs.STAMPS / "food" / "fruit"
    birds.mkdir(parents=True), food.mkdir(parents=True)
    (birds / "blackbird.txt").write_text("A blackbird.\nca.utf8=Una merla.\nes.utf8=Un mirlo.\n\nfr.utf8=Un merle.\n")
    ogg(birds / "blackbird_desc_es.ogg", 0.5)
    ogg(birds / "blackbird_desc.ogg", 0.4)       # English
    ogg(birds / "blackbird.ogg", 0.3, 880)        # the sound effect: not speech
    (birds / "cuckoo.txt").write_text("A cuckoo.\nes.utf8=Un  cuco.|\n")
    ogg(birds / "cuckoo_desc_es.ogg", 0.6, 330)
    (birds / "wren.txt").write_text("A wren.\nfr.utf8=Un troglodyte.\n")  # no Spanish text: its clip is left out
    ogg(birds / "wren_desc_es.ogg", 0.6, 440)
    (food / "apple.txt").write_text("An apple.\nes.utf8=Una manzana.\n")
    ogg(food / "apple_desc_es.ogg", 0.7, 550)
    shutil.copy(food / "apple_desc_es.ogg", birds / "apple-copy_desc_es.ogg")  # the same clip twice: kept once
    (birds / "apple-copy.txt").write_text("An apple.\nes.utf8=Una manzana.\n")
    return root


def test_clips_text_and_ids(tmp_path):
    root = make_stamps(tmp_path)
    clips = rs.tuxpaint_clips(root, "es")
    assert [(c.utt, c.text) for c in clips] == [
        ("tuxpaint_es_animals-birds-apple-copy", "Una manzana."),  # food/fruit/apple: the same audio, left out
        ("tuxpaint_es_animals-birds-blackbird", "Un mirlo."),
        ("tuxpaint_es_animals-birds-cuckoo", "Un cuco."),          # whitespace squeezed, '|' dropped
    ]
    assert {c.speaker for c in clips} == {"tuxpaint_es"}
    assert [c.text for c in rs.tuxpaint_clips(root, "en")] == ["A blackbird."]


def test_errors_name_the_file(tmp_path):
    root = make_stamps(tmp_path)
    with pytest.raises(rs.RealSpeechError, match="no 'de' description clips"):
        rs.tuxpaint_clips(root, "de")
    bad = root / rs.STAMPS / "animals" / "birds" / "cuckoo.txt"
    bad.write_text("A cuckoo.\nes=Un cuco.\n")
    with pytest.raises(rs.RealSpeechError, match=r"cuckoo.txt:2: expected `<lang>.utf8=<text>`"):
        rs.tuxpaint_clips(root, "es")
    with pytest.raises(rs.RealSpeechError, match="not an unpacked tuxpaint-stamps-default"):
        rs.tuxpaint_clips(tmp_path / "elsewhere", "es")


def test_split_is_stable_under_additions():
    clips = [rs.Clip(f"u{i:03d}", None, "t", "s") for i in range(100)]
    sets = rs.split(clips, dev="10%", test="5")
    assert [len(sets[k]) for k in ("train", "dev", "test")] == [85, 10, 5]
    more = rs.split(clips + [rs.Clip("u999", None, "t", "s")], dev="10%", test="5")
    kept = {c.utt for c in more["test"]} & {c.utt for c in sets["test"]}
    assert len(kept) >= 4  # a hash order: one new clip moves at most one old one out of test
    with pytest.raises(ValueError, match="leave no training clips"):
        rs.split(clips, dev="60%", test="40%")
    with pytest.raises(ValueError, match="a count >= 0 or a percentage like '5%', got 'ten'"):
        rs.split(clips, dev="ten")


@needs_sox
def test_data_dirs_read_back_at_the_rate(tmp_path):
    root = make_stamps(tmp_path / "pkg")
    sets = rs.split(rs.tuxpaint_clips(root, "es"), dev="1", test="1")
    dirs = rs.write_sets(sets, tmp_path / "data", prefix="real_", sample_rate=22050)
    assert sorted(d.name for d in dirs) == ["real_dev", "real_test", "real_train"]
    wav = read_table(tmp_path / "data" / "real_train" / "wav.scp")
    x, sr = load_audio(next(iter(wav.values())))
    assert sr == 22050 and x.ndim == 1 and 0.2 < np.abs(x).max() < 0.4
    assert read_table(tmp_path / "data" / "real_dev" / "spk2utt") == {"tuxpaint_es": next(iter(
        read_table(tmp_path / "data" / "real_dev" / "utt2spk")))}
    # a rerun with other sets swaps the dirs in whole
    (tmp_path / "data" / "real_train" / "feats.scp").write_text("stale\n")
    rs.write_sets(sets, tmp_path / "data", prefix="real_", sample_rate=22050)
    assert not (tmp_path / "data" / "real_train" / "feats.scp").exists()
    assert not [p for p in (tmp_path / "data").iterdir() if p.name.startswith(".")]


def make_fillets(root):
    """fillets-ng-data's scripts and fillets-ng-data-cs's recordings, as the packages lay them out (1.0.1-1.1)."""
    base = root / rs.FILLETS
    (base / "script" / "city").mkdir(parents=True), (base / "sound" / "city" / "cs").mkdir(parents=True)
    (base / "script" / "city" / "dialogs_cs.lua").write_text(
        '\ndialogId("vit-hs-klid1", "font_statue", "Citizens, please remain calm.")\n'
        'dialogStr("Občané.  Zachovejte klid a rozvahu.")\n\n'
        'dialogId("vit-m-uz", "font_small", "He said \\"no\\".")\ndialogStr("Řekl \\"ne\\".")\n\n'
        '-- Lasersound\ndialogId("laser", "", "")\n\n'
        'dialogId("vit-v-ticho", "font_big", "Quiet.")\ndialogStr("")\n', encoding="utf-8")
    (base / "script" / "city" / "dialogs_nl.lua").write_text(  # another language's line: not read for cs
        'dialogId("vit-m-uz", "font_small", "x")\ndialogStr("Hij zei nee.")\n', encoding="utf-8")
    for stem, freq in (("vit-hs-klid1", 220), ("vit-m-uz", 330), ("laser", 440), ("vit-v-ticho", 550),
                       ("vit-m-nic", 660)):  # laser: an effect; ticho: empty line; nic: no line at all
        ogg(base / "sound" / "city" / "cs" / f"{stem}.ogg", 0.3, freq, rate=22050)
    return root


def test_fillets_clips_take_each_recordings_line_and_character(tmp_path):
    root = make_fillets(tmp_path)
    clips = rs.fillets_clips(root, root, "cs")
    assert [(c.utt, c.text, c.speaker) for c in clips] == [
        ("fillets_cs_small-city-vit-m-uz", 'Řekl "ne".', "fillets_cs_small"),
        ("fillets_cs_statue-city-vit-hs-klid1", "Občané. Zachovejte klid a rozvahu.", "fillets_cs_statue"),
    ]
    with pytest.raises(rs.RealSpeechError, match="not an unpacked fillets-ng-data-nl"):
        rs.fillets_clips(root, tmp_path / "nowhere", "nl")
    with pytest.raises(rs.RealSpeechError, match="no recordings in 'fr'"):
        rs.source_clips("fillets", "fr", str(root), str(root))


@needs_sox
def test_fillets_command_writes_data_dirs(tmp_path):
    root = make_fillets(tmp_path / "tree")
    assert rs.main(["--source", "fillets", "--lang", "cs", "--root", str(root), "--voices-root", str(root),
                    "--dev", "0", "--test", "1", "--prefix", "cs_", str(tmp_path / "data")]) == 0
    texts = {**read_table(tmp_path / "data" / "cs_train" / "text"), **read_table(tmp_path / "data" / "cs_test" / "text")}
    assert sorted(texts) == ["fillets_cs_small-city-vit-m-uz", "fillets_cs_statue-city-vit-hs-klid1"]
