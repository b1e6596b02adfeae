"""SALAD Spanish front end: G2P, syllables, stress, normalisation, labels -> question-file features, frame
features, alignment to espeak-ng phone events, and clear errors on bad input."""
import re
from pathlib import Path

import numpy as np
import pytest

from local_models.common import synth
from local_models.salad import frontend as fe
from local_models.salad import linguistic as li

QUESTIONS = Path(__file__).resolve().parents[1] / "egs/tcstar/tts1/conf/questions_es.hed"
POSITIONS = ("LL", "L", "C", "R", "RR")
needs_espeak = pytest.mark.skipif(not synth.espeak_available(), reason="libespeak-ng.so.1 not installed")


@pytest.fixture(scope="module")
def questions():
    return li.load_questions(QUESTIONS)


def _phones(text):
    return " ".join(p.name for p in fe.analyse(text).phones if p.name not in fe.SILENCES)


def _syllables(word):
    return "|".join(" ".join(s.phones) for s in fe.analyse(word).syllables)


@pytest.mark.parametrize("text, phones", [
    ("chico", "tS i k o"), ("guerra", "g e rr a"), ("queso", "k e s o"), ("llave", "L a B e"),
    ("cielo", "T j e l o"), ("agua", "a G w a"), ("hablar", "a B l a r"), ("gente", "x e n t e"),
    ("yo", "jj o"), ("rey", "rr e j"), ("muy", "m u j"), ("examen", "e k s a m e n"), ("zapato", "T a p a t o"),
    ("vino", "b i n o"), ("niño", "n i J o"), ("pingüino", "p i n g w i n o"), ("honra", "o n rr a"),
    ("ciudad", "T j u D a D"), ("cuidado", "k w i D a D o"), ("país", "p a i s"),
    # across words inside a phrase: spirants after vowels, stops after nasals and (d) laterals
    ("la guerra", "l a G e rr a"), ("un gato", "u n g a t o"), ("el dedo", "e l d e D o"),
    ("un beso", "u m b e s o"), ("¿Y tú?", "i t u"),
])
def test_g2p(text, phones):
    assert _phones(text) == phones


@pytest.mark.parametrize("word, syllables", [
    ("camión", "k a|m j o n"), ("isla", "i s|l a"), ("padre", "p a|D r e"), ("ahora", "a|o|r a"),
    ("aire", "a j|r e"), ("atlántico", "a t|l a n|t i|k o"), ("construir", "k o n s|t r w i r"),
])
def test_syllabification(word, syllables):
    assert _syllables(word) == syllables


@pytest.mark.parametrize("word, stressed", [
    ("camión", 1), ("árbol", 0), ("pájaro", 0),  # written accent
    ("casa", 0), ("examen", 1), ("lunes", 0),  # ends in vowel, n, s: penultimate
    ("reloj", 1), ("papel", 1), ("estoy", 1),  # other endings: last
    ("sol", 0), ("el", None), ("de", None), ("para", None),  # unstressed function words
])
def test_stress(word, stressed):
    marks = [s.stressed for s in fe.analyse(word).syllables]
    assert marks == [k == stressed for k in range(len(marks))]


@pytest.mark.parametrize("n, words", [
    (0, "cero"), (16, "dieciséis"), (21, "veintiuno"), (45, "cuarenta y cinco"), (100, "cien"),
    (101, "ciento uno"), (555, "quinientos cincuenta y cinco"), (1000, "mil"),
    (1995, "mil novecientos noventa y cinco"), (2024, "dos mil veinticuatro"),
    (9999, "nueve mil novecientos noventa y nueve"), (21000, "veintiún mil"), (1_000_000, "un millón"),
    (3_200_000, "tres millones doscientos mil"), (31_000, "treinta y un mil"),
])
def test_number_words(n, words):
    assert fe.number_words(n) == words


def test_normalise():
    assert fe.normalise("  Tengo 25 AÑOS (y 1.500 €) ") == "tengo veinticinco años y mil quinientos"
    assert fe.normalise("Crème brûlée, 3,5") == "creme brulée, tres coma cinco"  # é is Spanish, è and û are not


def test_sentence_structure():
    s = fe.analyse("El señor presidente, ¿quién llegó ayer?")
    assert s.type == "int"
    assert [p.punct for p in s.phrases] == ["com", "que"]
    assert [w.pos for w in s.words] == ["det", "content", "content", "wh", "verb", "adv"]
    names = [p.name for p in s.phones]
    assert names[0] == names[-1] == "sil" and names.count("pau") == 1 and names.count("sil") == 2
    speech = [p for p in s.phones if p.name not in fe.SILENCES]
    assert all(p.syllable is not None and p.word is not None and p.phrase is not None for p in speech)
    assert [p.phrase for p in speech] == sorted(p.phrase for p in speech)
    assert fe.analyse("¡Qué bien!").type == "exc" and fe.analyse("Vamos.").type == "dec"


@pytest.mark.parametrize("text", ["", "   ", "¿?!", "(), 'h'"])
def test_nothing_to_speak(text):
    with pytest.raises(ValueError, match=re.escape(repr(text))):
        fe.analyse(text)


def test_labels_give_question_features(questions):
    lines = fe.label_text("Señorías, ¿cómo piensa financiar la reforma laboral?").lines
    starts, ends, x = li.phone_features(lines, questions)
    assert x.shape == (len(lines), questions.dim) and x.dtype == np.float32
    assert 330 <= questions.dim <= 370 and np.isnan(starts).all() and np.isnan(ends).all()
    names = questions.names
    for k, line in enumerate(lines):
        on = {names[d] for d in np.flatnonzero(x[k, :len(questions.binary)])}
        for pos in POSITIONS:  # exactly one phone identity per context position
            identities = {f"{pos}-{p}" for p in list(fe.PHONES) + [fe.UNDEFINED]}
            assert len(on & identities) == 1, (pos, line)
    mask = li.numeric_dims(questions)
    assert mask.sum() == len(questions.numeric) == 33 and not mask[:len(questions.binary)].any()


def test_phone_features_equal_nnmnkwii_merlin_features(questions, tmp_path):
    """The substring matcher gives nnmnkwii's linguistic_features exactly (our question file and one with regex
    wildcards inside a pattern, which must fall back to re.search)."""
    import sys

    from nnmnkwii.frontend import merlin
    from nnmnkwii.io import hts

    sys.path.insert(0, str(QUESTIONS.parents[1] / "local"))
    from sentences_es import sentences

    odd = tmp_path / "odd.hed"
    odd.write_text('QS "mid" {*^a-*+e=*}\nQS "LL-s" {s^*}\nQS "end" {*sil}\nQS "has-a" {*a*,*?*}\n'
                   'CQS "syl" {/J:(\\d+)+}\n')  # inner * and a trailing anchor are regexes; ? is literal
    for q in (questions, li.load_questions(odd)):
        for text in sentences(12, seed=7) + ["Hola, son las 3 de la tarde.", "¿Qué? ¡No!"]:
            lines = fe.label_text(text).lines
            ref = merlin.linguistic_features(hts.HTSLabelFile().load(lines=lines), q.binary, q.numeric,
                                             add_frame_features=False, subphone_features=None)
            np.testing.assert_array_equal(li.phone_features(lines, q)[2], ref.astype(np.float32))
    assert {kind for m in li.load_questions(odd).matchers for kind, _ in m} == {"re", "start", "in"}


def test_question_file_covers_the_front_end(questions):
    names = set(questions.names)
    for pos in POSITIONS:
        assert {f"{pos}-{p}" for p in fe.PHONES} | {f"{pos}-{c.capitalize()}" for c in fe.PHONE_CLASSES} <= names
    for side in ("L", "C", "R"):
        assert {f"{side}-Word_POS={t}" for t in fe.POS_TAGS} <= names
    assert {f"{side}-Phrase_Punct={t}" for side in ("L", "C") for t in fe.PUNCTUATION_TYPES} <= names
    assert {f"Utt_Type={t}" for t in fe.SENTENCE_TYPES} <= names


def test_every_numeric_field_is_unambiguous(questions):
    """A CQS pattern with its number group widened to any value matches its own field only, on every label."""
    lines = fe.label_text("Hoy, el gobierno ha aprobado 25 leyes. ¡Bien!").lines
    for name, regex in questions.numeric.values():
        widened = re.compile(regex.pattern.replace(r"(\d+)", r"([A-Za-z0-9]+)"))
        for line in lines:
            assert len(widened.findall(line)) == 1, (name, line)


def test_pause_fields_are_undefined():
    lines = fe.label_text("Uno, dos").lines
    pau = next(line for line in lines if "-pau+" in line)
    assert "/B:xx-xx@xx-xx&xx-xx#xx-xx$xx-xx|xx/" in pau and "/E:xx+xx@xx+xx&xx#xx+xx/" in pau
    assert "/H:xx=xx^xx=xx|xx/" in pau and "/G:2_1|com/" in pau


def _events(labels, step=1000):
    return [(label, k * step, (k + 1) * step) for k, label in enumerate(labels)]


def _check_tiling(segments, wave_end_s):
    assert segments[0][1] == 0.0 and segments[-1][2] == pytest.approx(wave_end_s, abs=1e-12)
    assert all(a[2] == b[1] for a, b in zip(segments, segments[1:]))
    assert all(start < end for _, start, end in segments)


def _names(result):
    return " ".join(p.name for p, _, _ in result.segments)


def test_align_synthetic_events():
    # espeak-like: no leading silence and no pause at the comma -> the front end's pau is dropped, its sil
    # takes a short share of the first espeak phone
    result = fe.align(fe.analyse("Casa, sol"), _events(["k", "a", "s", "a", "s", "o", "l", "sil"]), 16000)
    assert _names(result) == "sil k a s a s o l sil"
    assert (result.matched, result.total) == (8, 10)
    assert result.segments[0][2] < 0.5 * 1000 / 16000
    _check_tiling(result.segments, 8000 / 16000)
    # a silence the front end did not predict becomes a pau
    result = fe.align(fe.analyse("casa sol"), _events(["sil", "k", "a", "s", "a", "sil", "s", "o", "l", "sil"]), 16000)
    assert _names(result) == "sil k a s a pau s o l sil" and (result.matched, result.total) == (9, 9)
    # diphthongs split into vowel + glide; ";" (no counterpart) lends its time to a neighbour
    result = fe.align(fe.analyse("deuda tía"), _events(["d", "eU", "D", "a", "t", "i", ";", "a", "sil"]), 16000)
    assert _names(result) == "sil d e w D a t i a sil" and result.matched == 9
    _check_tiling(result.segments, 9000 / 16000)


def test_align_rejects_gapped_events():
    with pytest.raises(ValueError, match="tile"):
        fe.align(fe.analyse("sol"), [("s", 0, 10), ("o", 20, 30)], 16000)


@needs_espeak
def test_align_espeak(questions):
    voice = synth.Voice("es", "m1")
    for text in ("El señor presidente, ¿quién llegó ayer?", "La comisión presentará un informe detallado.",
                 "¡Los ciudadanos quieren reducir los impuestos!"):
        utt = synth.synthesize(text, voice)
        result = fe.align(fe.analyse(text), utt.phones, utt.sample_rate)
        _check_tiling(result.segments, len(utt.wave) / utt.sample_rate)
        assert result.match_rate >= 0.8, text
        lines, matched, total = fe.label_text(text, utt.phones, utt.sample_rate)
        starts, ends, x = li.phone_features(lines, questions)
        assert (matched, total) == (result.matched, result.total) and len(x) == len(result.segments)
        assert np.all(np.diff(starts) > 0) and ends[-1] == pytest.approx(len(utt.wave) / utt.sample_rate, abs=1e-6)


def test_frame_features():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    starts, ends = np.array([0.0, 0.012, 0.030]), np.array([0.012, 0.030, 0.050])
    feats = li.frame_features(x, starts, ends, 0.005, max_dur_frames=4)
    durations = li.frame_durations(starts, ends, 0.005)
    assert feats.shape == (10, 4) and feats.dtype == np.float32
    assert durations.tolist() == [2, 4, 4] and durations.sum() == 10
    np.testing.assert_array_equal(feats[:, :2], np.repeat(x, durations, axis=0))
    np.testing.assert_allclose(feats[:, 2], np.repeat([0.5, 1.0, 1.0], durations))
    np.testing.assert_allclose(feats[:2, 3], [0.25, 0.75])
    np.testing.assert_allclose(feats[2:6, 3], [0.125, 0.375, 0.625, 0.875])
    longer = li.frame_features(x, starts, ends, 0.005, num_frames=12, max_dur_frames=100)
    assert len(longer) == 12 and li.frame_durations(starts, ends, 0.005, num_frames=12).sum() == 12
    with pytest.raises(ValueError, match="timed"):
        li.frame_features(x, starts, np.full(3, np.nan), max_dur_frames=4)


def test_lab_round_trip_and_errors(tmp_path):
    events = _events(["b", "w", "e", "n", "o", "s", "D", "i", "a", "s", "sil"])
    lines = fe.label_text("Buenos días.", events, 16000).lines
    path = tmp_path / "a.lab"
    fe.write_lab(path, lines)
    parsed = fe.read_lab(path)
    assert [f"{l.start} {l.end} {l.label}" for l in parsed] == lines
    assert parsed[0].start == 0 and parsed[-1].end == round(11000 / 16000 * 1e7)
    untimed = fe.label_text("Buenos días.").lines
    assert [l.label for l in fe.parse_lab(untimed)] == untimed
    for content, reason in (("0 100 a\n100 x b\n", "integers"), ("0 100 a\n100 200 b c d\n", "fields"),
                            ("0 100 a\n50 200 b\n", "before the previous end"), ("0 100 a\nb\n", "mixes"),
                            ("100 100 a\n", "start < end"), ("", "no labels")):
        path.write_text(content)
        line = "" if reason == "no labels" else ":" + str(content.count("\n"))
        with pytest.raises(ValueError, match=re.escape(f"{path}{line}") + ".*" + reason):
            fe.read_lab(path)


def test_question_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        li.load_questions(tmp_path / "missing.hed")
    bad = tmp_path / "bad.hed"
    for content, reason in (('QS "C-a" {*-a+*}\nQS C-b *-b+*\n', ":2: expected"),
                            ('QS "C-a" {*-a+*}\nQS "C-a" {*-b+*}\n', ":2: question 'C-a' already defined"),
                            ('CQS "n" {*-x+*}\n', ":1: CQS 'n' needs"), ("# nothing\n", "no QS")):
        bad.write_text(content)
        with pytest.raises(ValueError, match=re.escape(reason)):
            li.load_questions(bad)
