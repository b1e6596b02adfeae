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
    assert tokens == [p for p, _, _ in synth.synthesize(sentence, phonemes.ESPEAK_VOICE).phones]
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
