"""Indic scoring (local_models/multisoftmax/scoring.py): WER / CER / WERR arithmetic, the word alignment behind
ESPnet's Corr / Sub / Del / Ins table (checked against editdistance, the slow reference for its total), the
sclite-style score_wer/result.txt, and the report's per-decode-dir table."""
import random

import editdistance
import pytest

from local_models.common.datadir import DataDirError
from local_models.multisoftmax.report import Scorer, espnet_lines
from local_models.multisoftmax.scoring import Counts, align_words, espnet_row, pooled, score, werr


def test_counts_of_one_utterance():
    c = Counts()
    a = c.add("a b c d", "a x c d e")
    assert (a.corr, a.sub, a.dels, a.ins) == (3, 1, 0, 1)
    assert (c.corr, c.sub, c.dels, c.ins, c.words, c.utts, c.sent_err) == (3, 1, 0, 1, 4, 1, 1)
    assert c.wer == 50.0  # (1 sub + 1 ins) / 4 reference words
    assert c.cer == pytest.approx(100 * 2 / 4)  # "abcd" vs "axcde": one substitution, one insertion
    assert a.eval.split() == ["S", "I"] and a.hyp.split()[-1] == "e" and a.ref.split()[-1] == "***"


def test_alignment_total_is_the_edit_distance():
    rng = random.Random(0)
    vocab = ["अ", "ब", "क", "த", "ம", "x", "y"]
    for _ in range(300):
        r = [rng.choice(vocab) for _ in range(rng.randint(0, 8))]
        h = [rng.choice(vocab) for _ in range(rng.randint(0, 8))]
        a = align_words(" ".join(r), " ".join(h))
        assert a.sub + a.dels + a.ins == editdistance.eval(r, h)
        assert a.corr + a.sub + a.dels == len(r) and a.corr + a.sub + a.ins == len(h)


def test_empty_sides():
    assert (lambda a: (a.dels, a.ins))(align_words("a b", "")) == (2, 0)
    assert (lambda a: (a.dels, a.ins, a.corr))(align_words("", "x")) == (0, 1, 0)
    c = Counts()
    c.add("", "")
    assert c.sent_err == 0 and c.wer is None


def test_werr_and_word_weighted_pooling():
    assert werr(20.0, 25.0) == pytest.approx(20.0) and werr(30.0, 25.0) == pytest.approx(-20.0)
    assert werr(None, 25.0) is None and werr(20.0, None) is None
    per = score({"u1": "a b c d", "u2": "e"}, {"u1": "a b c d", "u2": "f"}, {"u1": "hi", "u2": "ta"})
    assert per["hi"].wer == 0.0 and per["ta"].wer == 100.0
    assert pooled(per).wer == pytest.approx(100 / 5)  # word-weighted (1 error / 5 words), not (0 + 100) / 2


def test_missing_hypothesis_is_an_error():
    with pytest.raises(DataDirError, match="no hypothesis"):
        score({"u1": "a", "u2": "b"}, {"u1": "a"}, {"u1": "hi", "u2": "hi"}, hyp_path="exp/x/hyp")


def test_espnet_row():
    c = Counts()
    c.add("a b c d", "a x c d e")
    c.add("f g", "f g")
    assert espnet_row("x/decode_test", c) == "|x/decode_test|2|6|83.3|16.7|0.0|16.7|33.3|50.0|"


def test_scorer_writes_sclite_result_and_the_espnet_table(tmp_path):
    data, exp = tmp_path / "data", tmp_path / "exp"
    (data / "test").mkdir(parents=True)
    (data / "test" / "text_norm").write_text("u1 a b c d\nu2 e f\n", encoding="utf-8")
    (data / "test" / "utt2lid").write_text("u1 hi\nu2 ta\n")
    d = exp / "multisoftmax" / "decode_test" / "known"
    d.mkdir(parents=True)
    (d / "hyp").write_text("u1 a x c d e\nu2 e f\n", encoding="utf-8")
    scorer = Scorer(data, exp)
    per = scorer.counts(d, "test")
    assert per["hi"].wer == 50.0 and per["ta"].wer == 0.0
    text = (d / "score_wer" / "result.txt").read_text(encoding="utf-8")
    assert "|Sum/Avg|2|6|83.3|16.7|0.0|16.7|33.3|50.0|" in text
    assert "id: (u1)\nScores: (#C #S #D #I) 3 1 0 1\n" in text and "id: (u2)\nScores: (#C #S #D #I) 2 0 0 0" in text
    table = espnet_lines(scorer.dirs)
    assert "|multisoftmax/decode_test/known/hyp|2|6|83.3|16.7|0.0|16.7|33.3|50.0|" in table
    assert espnet_lines({}) == []


def test_bootstrap_interval_tells_a_clear_difference_from_noise():
    from local_models.multisoftmax.scoring import wer_diff_interval

    rng = random.Random(1)
    base = {f"u{i}": (rng.randint(0, 3), 10) for i in range(91)}
    worse = {u: (e + 3, w) for u, (e, w) in base.items()}  # 3 more errors on every utterance: +30 points
    d = wer_diff_interval(worse, base)
    assert d["diff"] == pytest.approx(30.0) and d["apart"] and d["low"] > 0 and d["utts"] == 91
    # one extra error on one utterance of 91: not told apart
    near = dict(base, u0=(base["u0"][0] + 1, 10))
    d = wer_diff_interval(near, base)
    assert d["diff"] == pytest.approx(100 / 910) and not d["apart"] and d["low"] <= 0 <= d["high"]
    assert wer_diff_interval({"u1": (1, 5)}, {"u1": (0, 5)}) is None  # one utterance: no interval
    # only the utterances both decoded count
    assert wer_diff_interval({**worse, "extra": (50, 10)}, base)["utts"] == 91


def test_acceptance_states_the_interval():
    from local_models.multisoftmax.report import acceptance

    utts = {f"u{i}": (2, 10) for i in range(20)}
    rows = {"multisoftmax": {"wer_avg": 19.5}, "vanilla": {"wer_avg": 20.0}}
    row_utts = {"multisoftmax": dict(utts, u0=(1, 10)), "vanilla": utts}
    line = next(x for x in acceptance(rows, [], row_utts) if "beats vanilla" in x)
    assert line.startswith("- HOLDS") and "**not told apart**" in line and "over 20 utterances" in line


def test_other_whitespace_splits_words_as_the_word_count_does():
    a = align_words("a\tb  c", "a b\u00a0c")  # tab, double space, no-break space: three words each
    assert (a.corr, a.sub, a.dels, a.ins) == (3, 0, 0, 0)
