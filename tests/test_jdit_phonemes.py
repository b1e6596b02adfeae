"""espeak-ng phoneme tokens of the KSS recipe: the tokens are the mini corpus' phone events, one to one."""
import numpy as np
import pytest

from local_models.common import synth
from local_models.common.datadir import DataDirError, read_table
from local_models.jdit import durations, g2p, phonemes, text

needs_espeak = pytest.mark.skipif(not synth.espeak_available(), reason="needs espeak-ng")


@needs_espeak
def test_tokens_are_the_phone_events_of_the_corpus_voice():
    sentence = "오늘은 날씨가 좋네요, 밖에 나갈까요?"
    tokens = phonemes.text_to_phonemes(sentence)
    utt = synth.synthesize(sentence, phonemes.ESPEAK_VOICE)  # as the mini corpus writes its phones.ctm
    ctm = synth.format_ctm([("u", len(utt.wave), utt.sample_rate, utt.phones)])
    assert tokens == [line.split()[4] for line in ctm]
    assert tokens[-1] == "sil" and "sil" in tokens[1:-1]  # the comma's pause and the final silence
    assert not set(tokens) & set(g2p.INVENTORY)  # phones, not jamo: no silent initial ㅇ token
    assert phonemes.token_type_of(["<blank>", *tokens]) == "espeak"
    assert phonemes.token_type_of(["<blank>", *g2p.text_to_tokens(sentence)]) == "jamo"


@needs_espeak
def test_unknown_characters_as_the_jamo_front_end():
    with pytest.raises(g2p.G2PError, match="'A'.*column 4"):
        phonemes.text_to_phonemes("안녕 A 세상")
    dropped = []
    assert phonemes.tokens_of("안녕 A 세상", "espeak", unknown="drop", dropped=dropped) == \
        phonemes.text_to_phonemes("안녕  세상")
    assert dropped == ["A"]
    with pytest.raises(ValueError, match="token type"):
        phonemes.tokens_of("안녕", "ipa")


@needs_espeak
@pytest.mark.parametrize("char", sorted(set(g2p._PUNCT) | g2p.SILENT))
def test_punctuation_and_silent_characters_are_not_read_as_words(char):
    """espeak-ng reads '~' as English "tilde" and '*' as "asterisk": the g2p's punctuation reaches it as , . ! ?"""
    tokens = phonemes.text_to_phonemes(f"가{char}나")
    assert not any(t.startswith("(") for t in tokens) and set(tokens) <= set(phonemes.inventory()), tokens
    assert len([t for t in tokens if t != "sil"]) == len([t for t in phonemes.text_to_phonemes("가 나") if t != "sil"])


@needs_espeak
def test_inventory_covers_sentences_it_was_not_built_from():
    inv = set(phonemes.inventory())
    assert "sil" in inv and len(inv) >= 35
    for sentence in ("빨리 뛰어! 꽃잎이 떨어져요.", "읽고 싶은 책이 없어서 밟았다.", "넓은 바다와 짧은 여름"):
        assert set(phonemes.text_to_phonemes(sentence)) <= inv, sentence


def test_event_frames_one_to_one_and_refuses_other_tokens():
    ctm = [(0.0, 0.1, "sil"), (0.1, 0.05, "a"), (0.15, 0.2, "n"), (0.35, 0.1, "sil")]
    frames = durations.event_frames(["sil", "a", "n", "sil"], ctm, num_frames=45, sample_rate=1000, hop=10)
    assert frames == [10, 5, 20, 10] and sum(frames) == 45
    # rounding at 22.05 kHz / 256: each boundary to its nearest frame, the last frame count wins
    frames = durations.event_frames(["sil", "a"], [(0.0, 0.013, "sil"), (0.013, 0.5, "a")], 44, 22050, 256)
    assert frames == [1, 43]
    with pytest.raises(ValueError, match=r"first difference at 2 \(o n sil vs a n sil\)"):
        durations.event_frames(["sil", "o", "n", "sil"], ctm, 45, 1000, 10)
    with pytest.raises(ValueError, match="3 tokens, 4 phones"):
        durations.event_frames(["sil", "a", "n"], ctm, 45, 1000, 10)


def test_write_durations_names_the_line_of_a_mismatch(tmp_path):
    (tmp_path / "text_phn").write_text("u1 sil a sil\nu2 sil o sil\n")
    (tmp_path / "utt2num_frames").write_text("u1 30\nu2 30\n")
    (tmp_path / "phones.ctm").write_text("".join(f"{u} 1 {s} 0.1 {p}\n" for u in ("u1", "u2")
                                                 for s, p in ((0.0, "sil"), (0.1, "a"), (0.2, "sil"))))
    with pytest.raises(DataDirError, match=r"text_phn:2: utterance u2: the tokens are not the phone events"):
        text.write_durations(tmp_path, 1000, 10)
    assert not (tmp_path / "durations").exists()
    (tmp_path / "text_phn").write_text("u1 sil a sil\nu2 sil a sil\n")
    text.write_durations(tmp_path, 1000, 10)
    assert read_table(tmp_path / "durations") == {"u1": "10 10 10", "u2": "10 10 10"}


@needs_espeak
def test_a_language_switch_of_espeak_is_an_error(monkeypatch):
    monkeypatch.setattr(phonemes, "speakable", lambda text, *a: text)  # '~' reaches espeak-ng as it is
    with pytest.raises(ValueError, match=r"switched language \(\(en\) \(ko\)\)"):
        phonemes.text_to_phonemes("가~나")


def test_durations_and_token_list_refuse_the_other_token_type(tmp_path):
    (tmp_path / "text_phn").write_text("u1 ᄀ ᅡ\n", encoding="utf-8")
    (tmp_path / "utt2num_frames").write_text("u1 20\n")
    (tmp_path / "phones.ctm").write_text("u1 1 0.0 0.1 g\nu1 1 0.1 0.1 a\n")
    with pytest.raises(DataDirError, match="holds jamo tokens, not espeak ones"):
        text.write_durations(tmp_path, 1000, 10)
    with pytest.raises(DataDirError, match="holds jamo tokens, not espeak ones"):
        text.write_token_list(tmp_path / "text_phn", tmp_path / "tokens.txt")
    assert not (tmp_path / "durations").exists() and not (tmp_path / "tokens.txt").exists()
    (tmp_path / "text_phn").write_text("u1 sil a sil\nu2 sil a sil\n")  # u2 has no phone times
    (tmp_path / "phones.ctm").write_text("u1 1 0.0 0.1 sil\nu1 1 0.1 0.05 a\nu1 1 0.15 0.05 sil\n")
    with pytest.raises(DataDirError, match=r"text_phn:2: utterance u2 has no entry in .*phones.ctm"):
        text.write_durations(tmp_path, 1000, 10)


def test_ms_phones_is_the_ctm_rounding():
    """Phone times as phones.ctm holds them (tokens and the CTM share the rule): ms boundaries, shorter ones out."""
    phones = [("sil", 0, 10), ("a", 10, 30), ("n", 30, 22050)]  # 0.45 ms, then 1.36 ms -> [0, 1) ms, [1, 1000) ms
    assert synth.ms_phones(phones, 22050) == [("a", 0, 1), ("n", 1, 1000)]
    assert synth.format_ctm([("u", 22050, 22050, phones)]) == ["u 1 0.000 0.001 a\n", "u 1 0.001 0.999 n\n"]
