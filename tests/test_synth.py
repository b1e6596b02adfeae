"""espeak-ng mini-corpus synthesis: phone times tile the audio and line up with it, corpora are
deterministic Kaldi data dirs with a consistent CTM, and bad input fails with clear errors."""
import filecmp

import numpy as np
import pytest

from local_models.bin import synth_corpus
from local_models.common import synth, texts
from local_models.common.datadir import read_table
from local_models.common.validate import validate_data_dir

LANGS = sorted(synth.SUPPORTED_LANGS)
needs_espeak = pytest.mark.skipif(
    not synth.espeak_available(), reason="libespeak-ng.so.1 not installed (apt-get install espeak-ng libespeak-ng1)"
)
# First letters of espeak vowel mnemonics across these languages (a, A:, @, 3:, E, I, i:, 0, O:, U, V, u-, ...).
VOWEL_START = set("aeiouAEIOUV03@")


def _text(lang, seed=0):
    """Two generated sentences joined by a comma, so the utterance has an inner pause."""
    first, second = texts.sentences(lang, 2, seed, min_words=3, max_words=5)
    return f"{first}, {second}"


def _check_tiling(utt):
    phones = utt.phones
    assert phones and phones[0][1] == 0 and phones[-1][2] == len(utt.wave)
    for (_, _, end), (_, start, _) in zip(phones, phones[1:]):
        assert end == start
    assert all(start < end for _, start, end in phones)
    assert all(label and not any(c.isspace() for c in label) for label, _, _ in phones)


def _rms(x):
    return float(np.sqrt(np.mean(x.astype(np.float64) ** 2))) if len(x) else 0.0


@needs_espeak
@pytest.mark.parametrize("lang", LANGS)
def test_phones_tile_audio_is_sane(lang):
    for voice in synth.sample_voices(lang, 2, seed=3):
        utt = synth.synthesize(_text(lang), voice)
        assert utt.sample_rate == 22050 and utt.wave.dtype == np.int16
        _check_tiling(utt)
        assert sum(label != synth.SIL for label, _, _ in utt.phones) >= 5
        assert not any(label.startswith("_") for label, _, _ in utt.phones), "pause phones must become sil"
        assert _rms(utt.wave) > 300, "audio is (nearly) silent"
        assert np.mean(np.abs(utt.wave.astype(np.int32)) >= 32767) < 1e-4, "audio is clipped"


@needs_espeak
@pytest.mark.parametrize("lang", LANGS)
def test_pause_phones_are_quiet_and_vowels_loud(lang):
    utt = synth.synthesize(_text(lang, seed=5), synth.Voice(lang, "m3"))
    w = utt.wave
    inner_sil = [_rms(w[s:e]) for label, s, e in utt.phones[1:-1] if label == synth.SIL]
    vowels = [_rms(w[s:e]) for label, s, e in utt.phones if label[0] in VOWEL_START]
    assert inner_sil, f"no pause inside the utterance: {utt.phones}"
    assert len(vowels) >= 3
    assert np.mean(inner_sil) < 0.1 * np.mean(vowels)


@needs_espeak
@pytest.mark.parametrize("variant", [None, "f2", "m7"])
def test_output_does_not_depend_on_history(variant):
    # espeak keeps static state between utterances and f-variants use rand(): the engine must
    # reset both, or corpora would depend on job order.
    voice = synth.Voice("ko", variant)
    first = synth.synthesize(_text("ko"), voice)
    synth.synthesize(_text("en-us", seed=4), synth.Voice("en-us", "f5", rate=250, pitch=90))
    again = synth.synthesize(_text("ko"), voice)
    assert first.wave.tobytes() == again.wave.tobytes() and first.phones == again.phones


@needs_espeak
@pytest.mark.parametrize("rate", [8000, 16000, 44100])
def test_resampling_keeps_phones_tiling(rate):
    utt = synth.synthesize(_text("hi"), synth.Voice("hi", "f2"))
    res = synth.synthesize(_text("hi"), synth.Voice("hi", "f2"), sample_rate=rate)
    assert res.sample_rate == rate
    assert abs(len(res.wave) - len(utt.wave) * rate / utt.sample_rate) <= 1
    _check_tiling(res)
    assert abs(res.duration - utt.duration) < 1e-3
    # Boundaries move by at most a sample's rounding.
    assert abs(res.phones[1][1] / rate - utt.phones[1][1] / utt.sample_rate) < 2 / rate


def _items(langs=("hi", "en-gb"), n_spk=2, n_utt=3, seed=0):
    items = []
    for lang in langs:
        sents = texts.sentences(lang, n_spk * n_utt, seed)
        for s, voice in enumerate(synth.sample_voices(lang, n_spk, seed)):
            spk = f"{lang}_spk{s:02d}"
            items += [(f"{spk}-{k:04d}", spk, sents[s * n_utt + k], voice) for k in range(n_utt)]
    return items


def _read_ctm(path):
    rows = []
    for line in open(path, encoding="utf-8"):
        utt, channel, start, dur, phone = line.split()
        assert channel == "1" and len(start.split(".")[1]) == 3 and len(dur.split(".")[1]) == 3
        rows.append((utt, float(start), float(dur), phone))
    return rows


@needs_espeak
def test_corpus_is_deterministic_and_consistent(tmp_path):
    items = _items()
    synth.synthesize_corpus(items, tmp_path / "w1", tmp_path / "d1", nj=2)
    synth.synthesize_corpus(items, tmp_path / "w2", tmp_path / "d2", nj=1)
    for utt, _, _, _ in items:
        assert filecmp.cmp(tmp_path / "w1" / f"{utt}.wav", tmp_path / "w2" / f"{utt}.wav", shallow=False)
    for name in ("text", "utt2spk", "spk2utt", "utt2dur", "utt2num_samples", "phones.ctm"):
        assert (tmp_path / "d1" / name).read_bytes() == (tmp_path / "d2" / name).read_bytes(), name

    d = tmp_path / "d1"
    assert validate_data_dir(d) == []
    wav_scp = read_table(d / "wav.scp")
    assert all(p.startswith("/") and p.endswith(f"{u}.wav") for u, p in wav_scp.items())
    utt2dur = {u: float(v) for u, v in read_table(d / "utt2dur").items()}
    assert set(utt2dur) == {it[0] for it in items}

    rows = _read_ctm(d / "phones.ctm")
    assert [r[0] for r in rows] == sorted((r[0] for r in rows), key=lambda u: u.encode())
    sums, ends = {}, {}
    for utt, start, dur, _ in rows:
        assert dur > 0 and abs(start - ends.get(utt, 0.0)) < 1e-6, "CTM phones must be contiguous"
        ends[utt] = start + dur
        sums[utt] = sums.get(utt, 0.0) + dur
    for utt, dur in utt2dur.items():
        assert abs(sums[utt] - dur) < 1e-6


@needs_espeak
def test_corpus_resampled_sample_counts(tmp_path):
    synth.synthesize_corpus(_items(("ko",), 1, 2), tmp_path / "w", tmp_path / "d", sample_rate=16000)
    import soundfile as sf

    for utt, n in read_table(tmp_path / "d" / "utt2num_samples").items():
        info = sf.info(str(tmp_path / "w" / f"{utt}.wav"))
        assert info.samplerate == 16000 and info.frames == int(n) and info.subtype == "PCM_16"


def test_voices_are_distinct_and_deterministic():
    voices = synth.sample_voices("ta", 20, seed=7)
    assert len(set(voices)) == 20
    assert voices == synth.sample_voices("ta", 20, seed=7)
    assert voices != synth.sample_voices("ta", 20, seed=8)
    assert {v.variant for v in voices} == set(synth.VARIANTS)


@pytest.mark.parametrize("lang", LANGS)
def test_sentences_deterministic_and_clean(lang):
    sents = texts.sentences(lang, 30, seed=1, min_words=2, max_words=6)
    assert sents == texts.sentences(lang, 30, seed=1, min_words=2, max_words=6)
    assert sents != texts.sentences(lang, 30, seed=2, min_words=2, max_words=6)
    for s in sents:
        assert 2 <= len(s.split()) <= 6
        assert texts.clean_text(s) == s and not any(c.isdigit() for c in s)


def test_clean_text():
    assert texts.clean_text(" Hello (world) 42, [x]  it's!\n") == "Hello world, x it's!"
    assert texts.clean_text("12 (3)") == ""


def test_unknown_language_errors(capsys):
    for call in (lambda: synth.Voice("xx"), lambda: synth.sample_voices("xx", 2),
                 lambda: texts.sentences("xx", 2)):
        with pytest.raises(ValueError, match="unsupported language 'xx'.*hi"):
            call()
    assert synth_corpus.main(["--lang", "zu", "/tmp/unused_w", "/tmp/unused_d"]) == 1
    err = capsys.readouterr().err
    assert "unsupported language 'zu'" in err and "en-gb-x-rp, en-us, es, fr, gu, hi, it, ko" in err


def test_bad_items_error(tmp_path):
    voice = synth.Voice("es")
    with pytest.raises(ValueError, match="empty text"):
        synth.synthesize("  ", voice)
    with pytest.raises(ValueError, match="'es_spk00-0001' has empty text"):
        synth.synthesize_corpus([("es_spk00-0001", "es_spk00", "", voice)], tmp_path / "w", tmp_path / "d")
    with pytest.raises(ValueError, match="'utt1' must start with its speaker id"):
        synth.synthesize_corpus([("utt1", "es_spk00", "hola", voice)], tmp_path / "w", tmp_path / "d")
    with pytest.raises(ValueError, match="duplicate"):
        synth.synthesize_corpus([("a-1", "a", "hola", voice)] * 2, tmp_path / "w", tmp_path / "d")
    assert not (tmp_path / "d").exists(), "validation must happen before anything is written"


def test_cli_help(capsys):
    with pytest.raises(SystemExit) as e:
        synth_corpus.main(["--help"])
    assert e.value.code == 0 and "--text-file" in capsys.readouterr().out


@needs_espeak
def test_cli_with_text_file(tmp_path):
    text_file = tmp_path / "sents.txt"
    text_file.write_text("Hola mundo (1).\n\nBuenos días, amigo.\nUna frase más\n", encoding="utf-8")
    rc = synth_corpus.main(["--lang", "es", "--num-spk", "2", "--utts-per-spk", "2", "--nj", "2",
                            "--text-file", str(text_file), "--sample-rate", "16000",
                            str(tmp_path / "wav"), str(tmp_path / "data")])
    assert rc == 0
    text = read_table(tmp_path / "data" / "text")
    assert text == {"es_spk00-0000": "Hola mundo.", "es_spk00-0001": "Buenos días, amigo.",
                    "es_spk01-0000": "Una frase más", "es_spk01-0001": "Hola mundo."}
    assert read_table(tmp_path / "data" / "utt2spk")["es_spk01-0001"] == "es_spk01"
    assert len((tmp_path / "data" / "phones.ctm").read_text().splitlines()) > 20


def test_closures_move_to_the_following_phone():
    """A quiet run just before a phone's start (a stop closure) moves to that phone; a short dip, a quiet run
    after a pause, and a loud boundary stay put."""
    sr, rng = 16000, np.random.default_rng(0)
    tone = lambda ms: 0.5 * np.sin(2 * np.pi * 200 * np.arange(int(sr * ms / 1000)) / sr)  # noqa: E731
    quiet = lambda ms: 1e-3 * rng.standard_normal(int(sr * ms / 1000))  # noqa: E731
    burst = lambda ms: 0.3 * rng.standard_normal(int(sr * ms / 1000))  # noqa: E731
    # a (100 ms) | closure (40 ms, given to "a" by the events) | k burst (30 ms) | a (50 ms) 4 ms dip | t (50 ms)
    wave = np.concatenate([tone(100), quiet(40), burst(30), tone(46), quiet(4), burst(50)])
    ms = lambda t: int(sr * t / 1000)  # noqa: E731
    phones = [("a", 0, ms(140)), ("k", ms(140), ms(170)), ("a", ms(170), ms(220)), ("t", ms(220), ms(270))]
    out = synth.closures_to_following(phones, wave, sr)
    assert out[0] == ("a", 0, ms(100)) and out[1] == ("k", ms(100), ms(170))  # 40 ms closure, whole 5 ms windows
    assert out[2:] == phones[2:]  # 4 ms dip < 10 ms: left alone
    # after a pause the silence stays the pause's
    sil = [("sil", 0, ms(140)), ("k", ms(140), ms(170))]
    assert synth.closures_to_following(sil, wave[:ms(170)], sr) == sil


@needs_espeak
def test_espeak_stop_closures_come_before_the_stop_event():
    """espeak-ng emits a voiceless stop's phoneme event after its closure: the closures move back 20-70 ms for
    the stops, never for vowels."""
    utt = synth.synthesize("바다 위에 커다란 배가 떠 있습니다", synth.Voice("ko", "m1"))
    out = synth.closures_to_following(utt.phones, utt.wave, utt.sample_rate)
    moved = {}
    for (label, a, _), (_, b, _) in zip(utt.phones, out):
        moved.setdefault(label, []).append((a - b) * 1000 / utt.sample_rate)
    assert 20 <= max(moved["kh"]) <= 70
    assert all(v == 0 for label in ("a", "e", "i", "@", "n", "m") for v in moved.get(label, []))
    assert sum(e - s for _, s, e in out) == len(utt.wave)  # still tiles the wave
