"""Non-speech augmentation (local_models/sad/augment.py), the events table and the robustness metrics
(local_models/sad/events.py), on tiny fake MUSAN / RIRS_NOISES layouts."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from local_models.common.datadir import DataDirError, read_table
from local_models.sad import augment
from local_models.sad.augment import Event, NonSpeechSet
from local_models.sad.events import read_events, robustness, separability, write_events
from local_models.sad.labels import read_rttm

ROOT = Path(__file__).resolve().parents[1]
SR = 8000


def _tone(f, seconds, sr=16000, amp=0.3):
    t = np.arange(int(seconds * sr)) / sr
    return amp * np.sin(2 * np.pi * f * t)


@pytest.fixture(scope="module")
def musan(tmp_path_factory):
    """A MUSAN-like dir: music/ noise/ speech/ tones/ at any depth (16 kHz, as MUSAN is)."""
    root = tmp_path_factory.mktemp("musan")
    rng = np.random.default_rng(0)
    files = {"music/fma/a/m1.wav": _tone(440, 6) * np.sin(np.linspace(0, 20, 96000)),
             "noise/free-sound/n1.wav": 0.1 * rng.standard_normal(16000 * 2),
             "tones/gen/t1.wav": _tone(2525, 0.25),
             "speech/us-gov/s1.wav": _tone(150, 4) * (rng.random(64000) > 0.3)}
    for name, x in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        sf.write(root / name, x, 16000)
    return root


@pytest.fixture(scope="module")
def rirs(tmp_path_factory):
    """A RIRS_NOISES-like dir: one simulated and one real response, one real noise (not a response)."""
    root = tmp_path_factory.mktemp("RIRS_NOISES")
    rng = np.random.default_rng(1)
    for name in ("simulated_rirs/smallroom/Room001/Room001-00001.wav",
                 "real_rirs_isotropic_noises/air_type1_air_binaural_rir_0.wav",
                 "real_rirs_isotropic_noises/RVB2014_type1_noise_largeroom1_1.wav"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        sf.write(root / name, augment.synthetic_rir(rng, 16000, 0.3), 16000)
    return root


def _speech_wave(seconds=20.0, speech=((2.0, 5.0), (9.0, 12.0))):
    """Low-level noise with two 'speech' regions of RMS 0.05: small enough that no mix reaches the peak limiter."""
    rng = np.random.default_rng(2)
    x = 0.001 * rng.standard_normal(int(seconds * SR))
    for s, e in speech:
        x[int(s * SR):int(e * SR)] += 0.05 * np.sqrt(2) * np.sin(2 * np.pi * 200 * np.arange(int((e - s) * SR)) / SR)
    return x, list(speech)


def test_background_music_is_added_at_a_kaldi_snr_against_the_speech_level(musan):
    wave, speech = _speech_wave()
    nset = NonSpeechSet(musan)
    out, events = augment.augment_recording(wave, SR, speech, "music", np.random.default_rng(3), nset)
    added = out.astype(np.float64) - wave
    snr = 20 * np.log10(augment.speech_rms(wave, speech, SR) / np.sqrt(np.mean(added ** 2)))
    assert len(events) == 1 and events[0].kind == "music" and events[0].start == 0 and events[0].end == len(wave) / SR
    assert events[0].snr_db in augment.MUSIC_SNRS and abs(snr - events[0].snr_db) < 0.3


def test_foreground_noises_follow_one_another_one_second_apart(musan):
    wave, speech = _speech_wave()
    _, events = augment.augment_recording(wave, SR, speech, "noise", np.random.default_rng(4), NonSpeechSet(musan))
    assert len(events) >= 5 and {e.kind for e in events} == {"noise"}
    assert all(min(abs(e.snr_db - s) for s in augment.NOISE_SNRS) < 0.5 for e in events)
    gaps = [b.start - a.end for a, b in zip(events, events[1:])]
    assert np.allclose(gaps, augment.FG_INTERVAL_S, atol=1e-3) and events[-1].end <= len(wave) / SR


def test_babble_mixes_several_talkers_and_needs_speech(musan, tmp_path):
    wave, speech = _speech_wave()
    _, events = augment.augment_recording(wave, SR, speech, "babble", np.random.default_rng(5), NonSpeechSet(musan))
    assert len(events) in augment.BABBLE_TALKERS and {e.kind for e in events} == {"babble"}
    (tmp_path / "music").mkdir()
    sf.write(tmp_path / "music" / "m.wav", _tone(300, 1), 16000)
    assert augment.usable_types(augment.AUG_TYPES, NonSpeechSet(tmp_path)) == ["music", "reverb"]


def test_reverberation_with_a_decaying_response_keeps_length_and_level(rirs):
    rng = np.random.default_rng(6)
    h = augment.synthetic_rir(rng, SR, 0.5)
    energy = np.cumsum(h[1:] ** 2)  # the tail after the direct path decays by 60 dB in RT60
    assert energy[len(energy) // 10] > 0.3 * energy[-1] and np.sum(h[-len(h) // 10:] ** 2) < 1e-3 * np.sum(h ** 2)
    wave, speech = _speech_wave()
    out, events = augment.augment_recording(wave, SR, speech, "reverb", rng, None, augment.find_rirs(rirs))
    assert events == [] and len(out) == len(wave)
    assert abs(np.sqrt(np.mean(out.astype(float) ** 2)) / np.sqrt(np.mean(wave ** 2)) - 1) < 0.01
    assert not np.allclose(out, wave, atol=1e-3)


def test_rirs_noises_layout_takes_the_responses_not_the_noises(rirs, tmp_path):
    names = [p.name for p in augment.find_rirs(rirs)]
    assert names == ["Room001-00001.wav", "air_type1_air_binaural_rir_0.wav"]
    # with Kaldi's rir_list files, exactly the responses they name (real ones need not be named *rir*)
    lst = tmp_path / "RIRS_NOISES" / "real_rirs_isotropic_noises"
    lst.mkdir(parents=True)
    sf.write(lst / "air_type1_air_binaural_lecture_0_1.wav", augment.synthetic_rir(np.random.default_rng(0), 16000, 0.2),
             16000)
    (lst / "rir_list").write_text("--rir-id air_lecture --room-id air_lecture "
                                  "RIRS_NOISES/real_rirs_isotropic_noises/air_type1_air_binaural_lecture_0_1.wav\n")
    assert [p.name for p in augment.find_rirs(tmp_path / "RIRS_NOISES")] == ["air_type1_air_binaural_lecture_0_1.wav"]
    (lst / "rir_list").write_text("--rir-id x RIRS_NOISES/real_rirs_isotropic_noises/gone.wav\n")
    with pytest.raises(FileNotFoundError, match=r"rir_list:1: no such room response"):
        augment.find_rirs(tmp_path / "RIRS_NOISES")
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "none")):
        augment.find_rirs(tmp_path / "none")
    with pytest.raises(FileNotFoundError, match="MUSAN layout"):
        NonSpeechSet(tmp_path)


def _data_dir(tmp_path):
    d = tmp_path / "train"
    d.mkdir()
    lines = []
    for rec in ("rec_a", "rec_b"):
        wave, _ = _speech_wave()
        sf.write(tmp_path / f"{rec}.wav", wave, SR, subtype="PCM_16")
        lines.append(f"{rec} {tmp_path / f'{rec}.wav'}")
    (d / "wav.scp").write_text("\n".join(lines) + "\n")
    (d / "utt2spk").write_text("rec_a rec_a\nrec_b rec_b\n")
    (d / "spk2utt").write_text("rec_a rec_a\nrec_b rec_b\n")
    (d / "ref.rttm").write_text("".join(f"SPEAKER {r} 1 2.000 3.000 <NA> <NA> speech <NA> <NA>\n"
                                        f"SPEAKER {r} 1 9.000 3.000 <NA> <NA> speech <NA> <NA>\n" for r in ("rec_a", "rec_b")))
    return d


def test_augment_data_dir_adds_labelled_copies_deterministically(musan, tmp_path):
    src = _data_dir(tmp_path)
    made = augment.augment_data_dir(src, tmp_path / "aug", tmp_path / "wav", augment.AUG_TYPES, 2, 0, NonSpeechSet(musan))
    scp = read_table(tmp_path / "aug" / "wav.scp")
    assert sum(made.values()) == 4 and len(scp) == 6
    copies = [r for r in scp if "-" in r]
    assert {r.split("-")[0] for r in copies} == {"rec_a", "rec_b"} and all(r.split("-")[1] in augment.AUG_TYPES for r in copies)
    ref = read_rttm(tmp_path / "aug" / "ref.rttm")
    assert all(ref[r] == [(2.0, 5.0), (9.0, 12.0)] for r in scp)  # labels unchanged: what is added is non-speech
    events = read_events(tmp_path / "aug" / "events")
    assert set(events) == {r for r in copies if not r.endswith("reverb")}
    first = {r: Path(p).read_bytes() for r, p in scp.items()}
    augment.augment_data_dir(src, tmp_path / "aug2", tmp_path / "wav2", augment.AUG_TYPES, 2, 0, NonSpeechSet(musan))
    second = read_table(tmp_path / "aug2" / "wav.scp")
    assert {r: Path(p).read_bytes() for r, p in second.items()} == first
    (src / "ref.rttm").unlink()
    with pytest.raises(DataDirError, match="no reference"):
        augment.augment_data_dir(src, tmp_path / "aug3", tmp_path / "wav3", augment.AUG_TYPES, 1, 0, NonSpeechSet(musan))
    assert not (tmp_path / "aug3").exists()


def test_sad_augment_cli_copies_only_and_clear_errors(musan, tmp_path):
    src = _data_dir(tmp_path)
    cmd = [sys.executable, "-m", "local_models.bin.sad_augment"]
    ok = subprocess.run(cmd + ["--nonspeech", str(musan), "--types", "tones", "--copies-only", str(src),
                               str(tmp_path / "ood"), str(tmp_path / "w")], capture_output=True, text=True, cwd=ROOT)
    assert ok.returncode == 0, ok.stderr
    assert sorted(read_table(tmp_path / "ood" / "wav.scp")) == ["rec_a-tones", "rec_b-tones"]
    bad = subprocess.run(cmd + ["--nonspeech", str(tmp_path / "nowhere"), str(src), str(tmp_path / "x"), str(tmp_path / "y")],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "nowhere" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "x").exists()


def test_events_table_round_trip_and_errors_name_the_line(tmp_path):
    table = {"b": [Event(1.0, 2.5, "music", 5.0)], "a": [Event(0.5, 0.75, "speech", 12.25), Event(0.0, 1.0, "tone", -3.0)]}
    write_events(tmp_path / "events", table)
    assert (tmp_path / "events").read_text().splitlines()[0] == "a 0.000 1.000 tone -3.0"
    back = read_events(tmp_path / "events")
    assert back["b"] == table["b"] and back["a"][0] == Event(0.0, 1.0, "tone", -3.0)
    (tmp_path / "bad").write_text("a 0.0 1.0 tone 1\na 2.0 1.0 music 3\n")
    with pytest.raises(DataDirError, match=r"bad:2"):
        read_events(tmp_path / "bad")
    (tmp_path / "bad").write_text("a 0.0 1.0 whistle 1\n")
    with pytest.raises(DataDirError, match="unknown kind 'whistle'"):
        read_events(tmp_path / "bad")


def test_robustness_shares_against_a_hand_count():
    # 10 s: speech 1-3 (SNR 2 dB) and 6-7 (SNR 12 dB); music 3-6 (reference non-speech); tone 7.5-8.5
    ref = {"r": [(1.0, 3.0), (6.0, 7.0)]}
    events = {"r": [Event(1.0, 3.0, "speech", 2.0), Event(6.0, 7.0, "speech", 12.0), Event(2.0, 6.0, "music", 0.0),
                    Event(7.5, 8.5, "tone", 5.0)]}
    # the system: speech 2-4 (misses 1-2, calls music 3-4 speech) and 6.5-8 (misses 6-6.5, calls tone 7.5-8 speech)
    hyp = {"r": [(2.0, 4.0), (6.5, 8.0)]}
    r = robustness(ref, hyp, {"r": 10.0}, events)
    assert r["fa"]["music"] == pytest.approx(1 / 3)  # music over non-speech: 3-6; called speech 3-4
    assert r["fa"]["tone"] == pytest.approx(0.5)
    # background: non-speech without events = 0-1, 7-7.5, 8.5-10 (3 s); called speech: 7-7.5
    assert r["fa"]["background"] == pytest.approx(0.5 / 3)
    assert r["miss_by_snr"]["< 5 dB"] == pytest.approx(0.5) and r["miss_by_snr"]["10-15 dB"] == pytest.approx(0.5)
    assert "noise" not in r["fa"] and ">= 15 dB" not in r["miss_by_snr"]


def test_separability_is_the_pairwise_ordering_of_speech_and_each_kind():
    # 1 s at 10 ms: speech 0.0-0.4, music 0.3-0.7 (its part under speech is speech time), background 0.7-1.0
    ref = {"r": [(0.0, 0.4)]}
    events = {"r": [Event(0.0, 0.4, "speech", 10.0), Event(0.3, 0.7, "music", 5.0)], "no_events": []}
    s = np.r_[np.linspace(0.5, 0.9, 40), np.linspace(0.3, 0.7, 30), np.full(30, 0.1)]
    auc = separability(ref, {"r": s, "other": np.ones(100)}, events)  # a recording without events is not scored
    speech, music = s[:40], s[40:70]
    pairs = (speech[:, None] > music[None, :]).mean() + 0.5 * (speech[:, None] == music[None, :]).mean()
    assert auc["music"] == pytest.approx(pairs) and 0.6 < auc["music"] < 0.95
    assert auc["background"] == 1.0 and "tone" not in auc
    # the same music scored as speech and a tone scored below everything: 0.5 (chance), and 1
    events["r"].append(Event(0.7, 0.8, "tone", 0.0))
    s2 = np.r_[np.full(40, 0.6), np.full(30, 0.6), np.full(30, 0.0)]
    auc2 = separability(ref, {"r": s2}, events)
    assert auc2["music"] == 0.5 and auc2["tone"] == 1.0


def test_mini_corpus_events_and_the_held_out_make(musan, tmp_path):
    # by path, under its own name: other recipes have a local/make_mini_corpus.py too
    spec = importlib.util.spec_from_file_location("sad_make_mini_corpus",
                                                  ROOT / "egs" / "fearless_steps" / "sad1" / "local" / "make_mini_corpus.py")
    mini = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mini)

    voices = mini.split_voices(0)
    assert not {l for l, _ in voices["eval_ood"]} & {l for s in ("train", "dev", "eval") for l, _ in voices[s]}
    plain, ref, ev = mini.build_stream(np.random.default_rng(9), voices["train"][:2], 60.0)
    mixed, ref2, ev2 = mini.build_stream(np.random.default_rng(9), voices["train"][:2], 60.0, nonspeech=NonSpeechSet(musan))
    assert ref2 == ref  # the events come after the speech: same bursts, same labels
    assert {e.kind for e in ev} <= {"speech", "tone", "noise"} and {"music", "tone", "speech"} <= {e.kind for e in ev2}
    assert len([e for e in ev2 if e.kind == "speech"]) == len(ref2) and not np.allclose(plain, mixed)
    assert np.max(np.abs(mixed)) <= 0.9 + 1e-6


def test_event_rows_cover_where_the_sound_sounds_at_the_snr_mixed():
    """A ring-back-like piece (1 s on, 2 s off): only the ringing is tone time, each stretch at its true SNR."""
    sr, level = 8000, 0.1
    on = 0.02 * np.sin(2 * np.pi * 425 * np.arange(sr) / sr)
    piece = np.concatenate([on, np.zeros(2 * sr), on * 0.5, np.zeros(2 * sr)])
    events = augment.sounding(piece, 4 * sr, sr, "tone", level)
    assert [(e.start, e.end) for e in events] == [(4.0, 5.0), (7.0, 8.0)]
    rms = 0.02 / np.sqrt(2)
    assert events[0].snr_db == pytest.approx(20 * np.log10(level / rms), abs=0.05)
    assert events[1].snr_db == pytest.approx(events[0].snr_db + 6.02, abs=0.05)


def test_placed_events_are_logged_at_the_level_mixed(musan):
    rates = {"tones": (3.0, 0.2, 0.2, (0.0, 10.0)), "music": (1.0, 2.0, 4.0, (-5.0, 5.0))}
    x, events = augment.place_events(8000 * 120, 8000, NonSpeechSet(musan), rates, 0.1, np.random.default_rng(11))
    assert {e.kind for e in events} == {"tone", "music"}
    spans = [(e.start, e.end) for e in events]
    alone = [e for e in events if sum(s < e.end and e.start < t for s, t in spans) == 1]
    assert len(alone) >= 3
    for e in alone:
        seg = x[int(e.start * 8000):int(e.end * 8000)]
        assert 20 * np.log10(0.1 / np.sqrt(np.mean(seg ** 2))) == pytest.approx(e.snr_db, abs=0.5)


def test_held_out_streams_carry_no_beeps_of_the_training_make():
    spec = importlib.util.spec_from_file_location("sad_make_mini_corpus",
                                                  ROOT / "egs" / "fearless_steps" / "sad1" / "local" / "make_mini_corpus.py")
    mini = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mini)
    voices = mini.split_voices(0)["eval_ood"][:2]
    _, _, own = mini.build_stream(np.random.default_rng(5), voices, 120.0)
    _, _, held_out = mini.build_stream(np.random.default_rng(5), voices, 120.0, own_beeps=False)
    assert {"tone", "noise"} <= {e.kind for e in own} and {e.kind for e in held_out} == {"speech"}
