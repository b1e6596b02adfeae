"""egs/indic/asr1 stages 1-3: B_ grapheme units (round trips in Latin, Devanagari, Tamil, Gujarati),
normalisation, vocabularies and unknown units, 8-frame stacking at a 30 ms rate, the real-corpus reader on
per-language Kaldi dirs (and its errors), the stage-3 unit tool, and the espeak-ng mini corpus."""
import hashlib
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest
import soundfile

from local_models.bin import multisoftmax_units
from local_models.common import synth
from local_models.common.datadir import DataDirError, read_table
from local_models.common.validate import validate_data_dir
from local_models.multisoftmax import units as U

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs" / "indic" / "asr1"
needs_espeak = pytest.mark.skipif(
    not synth.espeak_available(), reason="libespeak-ng.so.1 not installed (apt-get install espeak-ng libespeak-ng1)"
)

# (language, normalised text): matras, virama (Devanagari ्, Tamil pulli ், Gujarati ્), nukta, anusvara,
# visarga, candrabindu, Tamil aytham, an English apostrophe
TEXTS = [
    ("en", "hello world don't stop"),
    ("hi", "क्षत्रिय हिंदी में फ़िल्म दुःख चाँद"),
    ("ta", "வணக்கம் தமிழ்நாடு கொண்டு ஃபின்னிஷ்"),
    ("gu", "ગુજરાતી ભાષા સ્વાગત છે કૃપા"),
]


# ----------------------------------------------------------------------------- units

@pytest.mark.parametrize("lang,text", TEXTS)
def test_round_trip(lang, text):
    assert U.normalise(text, lang) == text
    units = U.text_to_units(text)
    assert U.units_to_text(units) == text
    assert sum(u.startswith("B_") for u in units) == len(text.split())
    assert all(len(u) == 1 for u in units if not u.startswith("B_"))
    assert "".join(u[2:] if u.startswith("B_") else u for u in units) == text.replace(" ", "")


def test_word_units_keep_marks_as_units():
    assert U.word_units("क्ष") == ["B_क", "\u094d", "ष"]  # virama between the consonants
    assert U.word_units("की") == ["B_क", "ी"]  # vowel sign (matra) is its own unit
    assert U.word_units("கொ") == ["B_க", "\u0bca"]  # Tamil two-part vowel sign: one code point after NFC
    assert U.word_units("ગુ") == ["B_ગ", "ુ"]
    assert U.word_units("a") == ["B_a"]
    for bad in ("", "a b", " "):
        with pytest.raises(ValueError):
            U.word_units(bad)


def test_units_to_text_edge_cases():
    assert U.units_to_text(["a", "b", "B_c", "d"]) == "ab cd"  # a hypothesis need not start with B_
    assert U.units_to_text([]) == ""
    assert U.units_to_text(["<blank>", "B_a", "<blank>", "b"]) == "ab"
    assert U.units_to_text(["B_a", "<unk>", "B_b"]) == "a<unk> b"
    with pytest.raises(ValueError):
        U.units_to_text(["B_"])
    with pytest.raises(ValueError):
        U.units_to_text(["B_a", "b c"])


def test_normalise():
    assert U.normalise("  Hello,   World!! “Don’t” stop.  ", "en") == "hello world don't stop"
    assert U.normalise("rock-n-roll 'quoted' 2 cats", "en") == "rock n roll quoted 2 cats"
    assert U.normalise("नमस्ते। दुनिया॥ डॉ॰ राम", "hi") == "नमस्ते दुनिया डॉ राम"
    # precomposed nukta letters are NFC composition exclusions: both spellings -> letter + nukta
    assert U.normalise("\u095b", "hi") == U.normalise("\u091c\u093c", "hi") == "\u091c\u093c"
    # Tamil vowel sign written as two parts composes to one code point
    assert U.normalise("\u0b95\u0bc6\u0bbe", "ta") == "\u0b95\u0bca"
    assert U.normalise("क्\u200dष", "hi") == "क्ष"  # ZWJ (format character) dropped
    assert U.normalise("hindi words in देवनागरी", "hi") == "hindi words in देवनागरी"  # code-mixed text kept
    assert unicodedata.is_normalized("NFC", U.normalise("e\u0301te", "en"))
    for empty in ("", "  ", "?!...", "।"):
        with pytest.raises(ValueError, match="nothing is left"):
            U.normalise(empty, "hi")
    with pytest.raises(ValueError, match="unknown language code 'de'"):
        U.normalise("hallo", "de")


def test_build_vocab():
    texts = ["ab ba", "c", "abc"]
    vocab = U.build_vocab(texts)
    assert vocab == ["<blank>", "a", "b", "c", "B_a", "B_b", "B_c", "<unk>"]
    assert U.build_vocab(reversed(texts)) == vocab  # order-independent
    hi = U.build_vocab([TEXTS[1][1]])
    assert hi[0] == U.BLANK and hi[-1] == U.UNK
    graphemes = U.graphemes_of(hi)
    assert len(hi) == 2 * len(graphemes) + 2 and "\u094d" in graphemes and "B_\u094d" in hi
    assert U.graphemes_of(vocab) == ["a", "b", "c"]
    with pytest.raises(ValueError):
        U.build_vocab(["", " "])


def test_union_vocab():
    en, hi = U.build_vocab(["ab"]), U.build_vocab(["कि"])
    union = U.union_vocab([en, hi])
    assert union == ["<blank>", "a", "b", "क", "ि", "B_a", "B_b", "B_क", "B_ि", "<unk>"]
    assert U.union_vocab([hi, en]) == union
    assert set(en) | set(hi) == set(union)


def test_units_file_round_trip(tmp_path):
    vocab = U.build_vocab([t for _, t in TEXTS])
    U.write_units(tmp_path / "units.txt", vocab)
    assert U.read_units(tmp_path / "units.txt") == vocab
    assert (tmp_path / "units.txt").read_text(encoding="utf-8").splitlines() == vocab
    (tmp_path / "bad.txt").write_text("<blank>\na\n\nb\n", encoding="utf-8")
    with pytest.raises(DataDirError, match=r"bad.txt:3"):
        U.read_units(tmp_path / "bad.txt")
    (tmp_path / "dup.txt").write_text("<blank>\na\nb\na\n", encoding="utf-8")
    with pytest.raises(DataDirError, match=r"dup.txt:4: duplicate unit 'a' \(first on line 2\)"):
        U.read_units(tmp_path / "dup.txt")
    with pytest.raises(ValueError):
        U.write_units(tmp_path / "x.txt", ["a", "a"])


def test_encode_unknown_units():
    vocab = U.build_vocab(["ab"])
    assert vocab == ["<blank>", "a", "b", "B_a", "B_b", "<unk>"]
    assert U.encode(["B_a", "b"], vocab) == [3, 2]
    assert U.decode([3, 2], vocab) == ["B_a", "b"]
    with pytest.raises(U.UnknownUnitError, match=r"unit 'z' \(position 1\)") as err:
        U.encode(["B_a", "z"], vocab)
    assert err.value.unit == "z" and err.value.position == 1
    assert U.encode(["B_a", "z", "B_z"], vocab, unk=U.UNK) == [3, 5, 5]
    index = {u: i for i, u in enumerate(vocab)}
    assert U.encode(["b"], index) == [2]
    with pytest.raises(ValueError, match="unk unit"):
        U.encode(["a"], ["<blank>", "a"], unk=U.UNK)
    assert U.map_unknown(["B_a", "z", "b", "B_y"], set(vocab)) == (["B_a", "<unk>", "b", "<unk>"], ["z", "B_y"])
    with pytest.raises(ValueError):
        U.decode([len(vocab)], vocab)


# ----------------------------------------------------------------------------- framing

def reference_stack(feats, n=8, stride=3):
    """Loop version of the paper's framing: output j = frames a-7..a, a = 3j + 2, edges repeated."""
    t = len(feats)
    out = []
    for j in range(-(-t // stride)):
        a = stride * j + stride - 1
        out.append(np.concatenate([feats[min(max(i, 0), t - 1)] for i in range(a - n + 1, a + 1)]))
    return np.stack(out)


@pytest.mark.parametrize("num_frames", [1, 2, 3, 4, 7, 8, 9, 10, 31])
def test_stack_frames_shapes_and_content(num_frames):
    feats = np.random.default_rng(num_frames).standard_normal((num_frames, 80)).astype(np.float32)
    out = U.stack_frames(feats)
    assert out.shape == (-(-num_frames // 3), 640) == (U.stacked_length(num_frames), 640)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, reference_stack(feats))


def test_stack_frames_layout():
    feats = np.arange(10, dtype=np.float32)[:, None] * np.ones((1, 2), np.float32)  # frame i = [i, i]
    out = U.stack_frames(feats)
    firsts = out[:, ::2]  # first dim of each stacked frame: the frame index, oldest first
    np.testing.assert_array_equal(firsts, [[0, 0, 0, 0, 0, 0, 1, 2],     # no past yet: frame 0 repeated
                                           [0, 0, 0, 1, 2, 3, 4, 5],
                                           [1, 2, 3, 4, 5, 6, 7, 8],
                                           [4, 5, 6, 7, 8, 9, 9, 9]])  # partial last block: frame 9 repeated
    assert U.stack_frames(feats, n=1, stride=1).shape == (10, 2)
    with pytest.raises(ValueError):
        U.stack_frames(np.zeros((0, 80)))
    with pytest.raises(ValueError):
        U.stack_frames(feats, n=0)


def test_stack_frames_torch_and_batch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    lens = [10, 4, 7]
    feats = [rng.standard_normal((n, 80)).astype(np.float32) for n in lens]
    np.testing.assert_array_equal(U.stack_frames(torch.from_numpy(feats[0])).numpy(), U.stack_frames(feats[0]))
    batch = np.zeros((3, 10, 80), np.float32)
    for b, f in enumerate(feats):
        batch[b, :len(f)] = f
    for xs, ls in ((batch, np.array(lens)), (torch.from_numpy(batch), torch.tensor(lens))):
        out, out_lens = U.stack_frames_batch(xs, ls)
        out, out_lens = np.asarray(out), np.asarray(out_lens)
        assert out.shape == (3, 4, 640) and out_lens.tolist() == [4, 2, 3]
        for b, f in enumerate(feats):  # every utterance exactly as stacked on its own (no batch padding inside)
            np.testing.assert_array_equal(out[b, :out_lens[b]], U.stack_frames(f))
    with pytest.raises(ValueError):
        U.stack_frames_batch(batch, [10, 0, 7])


# ----------------------------------------------------------------------------- real corpus reader

def write_wav(path, seconds=0.3, sr=16000):
    path.parent.mkdir(parents=True, exist_ok=True)
    soundfile.write(path, np.random.default_rng(0).uniform(-0.1, 0.1, int(sr * seconds)), sr, subtype="PCM_16")


def write_lines(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


FIXTURE_TEXT = {
    "en": {"train": ["Hello World.", "good morning"], "dev": ["hello"], "test": ["quiz me"]},  # q, u, z unseen
    "hi": {"train": ["नमस्ते दुनिया", "हिंदी"], "dev": ["दुनिया।"], "test": ["ॐ नमः"]},  # ॐ unseen
}


@pytest.fixture
def corpus(tmp_path):
    """Per-language Kaldi dirs: en with plain wav.scp (relative paths), hi_train with segments."""
    db = tmp_path / "db"
    for lang, parts in FIXTURE_TEXT.items():
        for part, texts in parts.items():
            d = db / f"{lang}_{part}"
            utts = [f"spk{k % 2}_{part}{k}" for k in range(len(texts))]
            write_lines(d / "text", [f"{u} {t}" for u, t in sorted(zip(utts, texts))])
            write_lines(d / "utt2spk", [f"{u} {u.split('_')[0]}" for u in sorted(utts)])
            if lang == "hi" and part == "train":
                write_wav(db / "audio" / "long.wav", seconds=1.0)
                write_lines(d / "wav.scp", [f"rec1 {db / 'audio' / 'long.wav'}"])
                write_lines(d / "segments",
                            [f"{u} rec1 {0.4 * k:.1f} {0.4 * k + 0.3:.1f}" for k, u in enumerate(sorted(utts))])
            else:
                for u in utts:
                    write_wav(db / "audio" / f"{lang}_{u}.wav")
                write_lines(d / "wav.scp", [f"{u} audio/{lang}_{u}.wav" for u in sorted(utts)])
    return db


def run_prepare(db, data, *extra):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(RECIPE / "local" / "prepare_indic.py"), "--langs", "en hi", *extra,
                           str(db), str(data)], env=env, capture_output=True, text=True)


def test_prepare_indic(corpus, tmp_path):
    data = tmp_path / "data"
    proc = run_prepare(corpus, data)
    assert proc.returncode == 0, proc.stderr
    for name in ("en_train", "en_dev", "en_test", "hi_train", "hi_dev", "hi_test"):
        assert validate_data_dir(data / name, sample_rate=16000) == [], name
        lid = read_table(data / name / "utt2lid")
        assert set(lid.values()) == {name[:2]} and set(lid) == set(read_table(data / name / "utt2spk"))
    utt2spk = read_table(data / "en_train" / "utt2spk")
    assert utt2spk == {"en-spk0_train0": "en-spk0", "en-spk1_train1": "en-spk1"}
    assert read_table(data / "en_train" / "text")["en-spk0_train0"] == "Hello World."  # normalised in stage 3
    assert read_table(data / "en_train" / "wav.scp")["en-spk0_train0"] == str(corpus / "audio" / "en_spk0_train0.wav")
    assert read_table(data / "hi_train" / "segments")["hi-spk1_train1"] == "hi-rec1 0.400 0.700"
    assert list(read_table(data / "hi_train" / "wav.scp")) == ["hi-rec1"]
    assert not list(data.glob(".*")), "temporary directories left behind"
    before = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    assert run_prepare(corpus, data).returncode == 0
    assert {p: p.read_bytes() for p in data.rglob("*") if p.is_file()} == before  # rerun: same bytes


def test_prepare_indic_errors(corpus, tmp_path):
    data = tmp_path / "data"
    assert run_prepare(corpus, data).returncode == 0
    snapshot = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}

    proc = run_prepare(corpus, data, "--langs", "en de")
    assert proc.returncode == 1 and "unknown language code 'de'" in proc.stderr

    text = corpus / "hi_dev" / "text"
    good = text.read_text(encoding="utf-8")
    text.write_text(good + "spk1_dev9\n", encoding="utf-8")
    proc = run_prepare(corpus, data)
    assert proc.returncode == 1 and f"{text}:2: empty transcript for 'spk1_dev9'" in proc.stderr
    text.write_text(good.replace("दुनिया।", "।।"), encoding="utf-8")
    proc = run_prepare(corpus, data)
    assert proc.returncode == 1 and f"{text}:1" in proc.stderr and "nothing is left" in proc.stderr
    text.write_text(good, encoding="utf-8")

    write_lines(corpus / "hi_test" / "utt2lid", ["spk0_test0 ta"])
    proc = run_prepare(corpus, data)
    assert proc.returncode == 1 and f"{corpus / 'hi_test' / 'utt2lid'}:1" in proc.stderr and "'ta'" in proc.stderr
    (corpus / "hi_test" / "utt2lid").unlink()

    (corpus / "en_test" / "wav.scp").unlink()
    proc = run_prepare(corpus, data)
    assert proc.returncode == 1 and f"{corpus / 'en_test' / 'wav.scp'}: file does not exist" in proc.stderr

    write_lines(corpus / "en_test" / "wav.scp", ["spk0_test0 audio/en_spk0_test0.wav"])
    write_lines(corpus / "en_test" / "utt2spk", ["spk0_test0 bob"])
    proc = run_prepare(corpus, data)
    assert proc.returncode == 1 and f"{corpus / 'en_test' / 'utt2spk'}:1" in proc.stderr and "speaker id" in proc.stderr
    assert {p: p.read_bytes() for p in data.rglob("*") if p.is_file()} == snapshot  # failures change nothing


def test_indic_units_tool(corpus, tmp_path, capsys):
    data = tmp_path / "data"
    assert run_prepare(corpus, data).returncode == 0
    assert multisoftmax_units.main(["--langs", "en hi", str(data), str(data / "lang")]) == 0
    err = capsys.readouterr().err
    en = U.read_units(data / "lang" / "en" / "units.txt")
    assert U.graphemes_of(en) == sorted(set("helloworldgoodmorning"))  # train text only
    hi = U.read_units(data / "lang" / "hi" / "units.txt")
    assert "ॐ" not in U.graphemes_of(hi) and "\u094d" in hi
    assert U.read_units(data / "lang" / "union" / "units.txt") == U.union_vocab([en, hi])
    assert read_table(data / "en_train" / "text_norm")["en-spk0_train0"] == "hello world"
    assert read_table(data / "en_train" / "text_units")["en-spk0_train0"] == "B_h e l l o B_w o r l d"
    assert read_table(data / "hi_dev" / "text_units")["hi-spk0_dev0"] == "B_द ु न ि य ा"
    # unseen graphemes in test: <unk>, counted and reported
    assert read_table(data / "en_test" / "text_units")["en-spk0_test0"] == "<unk> <unk> i <unk> B_m e"
    assert read_table(data / "hi_test" / "text_units")["hi-spk0_test0"] == "<unk> B_न म <unk>"
    assert "en_test: 6 units, 3 unknown -> <unk>" in err and "hi_test: 4 units, 2 unknown" in err
    assert "hi_train: 17 units, 0 unknown" in err
    assert (data / "lang" / "unknown_units").read_text(encoding="utf-8").splitlines() == [
        "en_test B_q 1", "en_test u 1", "en_test z 1", "hi_test B_ॐ 1", "hi_test ः 1"]
    for name in ("en_train", "hi_train"):  # train sets round trip exactly
        norm, units = read_table(data / name / "text_norm"), read_table(data / name / "text_units")
        assert {u: U.units_to_text(v.split()) for u, v in units.items()} == norm
    before = {p: p.read_bytes() for p in (data / "lang").rglob("*") if p.is_file()}
    assert multisoftmax_units.main(["--langs", "en hi", str(data), str(data / "lang")]) == 0
    assert {p: p.read_bytes() for p in (data / "lang").rglob("*") if p.is_file()} == before

    (data / "hi_dev" / "utt2lid").unlink()
    assert multisoftmax_units.main(["--langs", "en hi", str(data), str(data / "lang")]) == 1
    assert f"{data / 'hi_dev' / 'utt2lid'}: missing" in capsys.readouterr().err


# ----------------------------------------------------------------------------- mini corpus

def md5s(root):
    return {str(p.relative_to(root)): hashlib.md5(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@needs_espeak
def test_mini_corpus(tmp_path):
    wav_root, data = tmp_path / "mini", tmp_path / "data"
    cmd = [sys.executable, str(RECIPE / "local" / "make_mini_corpus.py"), "--train-min", "en=0.5,hi=0.5,ta=0.1,gu=0.1",
           "--dev-min", "0.06", "--test-min", "0.06", "--train-spk", "3", "--dev-spk", "1", "--test-spk", "2",
           "--nj", "2", str(wav_root), str(data)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    minutes, seen_variants, test_variants = {}, set(), set()
    for lang in ("en", "hi", "ta", "gu"):
        variants, texts = {}, {}
        for part in ("train", "dev", "test"):
            d = data / f"{lang}_{part}"
            assert validate_data_dir(d, sample_rate=16000) == [], d
            assert set(read_table(d / "utt2lid").values()) == {lang}
            spk2voice = read_table(d / "spk2voice")
            assert set(spk2voice) == set(read_table(d / "spk2utt"))
            variants[part] = {v.split()[0].split("+")[1] for v in spk2voice.values()}
            texts[part] = set(read_table(d / "text").values())
            minutes[(lang, part)] = sum(float(x) for x in read_table(d / "utt2dur").values()) / 60
        assert len(read_table(data / f"{lang}_train" / "spk2utt")) == 3
        assert len(variants["test"]) == 2  # one timbre per test voice
        seen_variants |= variants["train"] | variants["dev"]
        test_variants |= variants["test"]
        assert not (texts["train"] & texts["test"] or texts["train"] & texts["dev"] or texts["dev"] & texts["test"])
    # the same held-out timbres in every language's test set, in no language's train / dev set: timbre
    # must not tell the language apart
    assert len(test_variants) == 2 and not test_variants & seen_variants
    for large in ("en", "hi"):
        for small in ("ta", "gu"):
            assert minutes[(large, "train")] > 1.5 * minutes[(small, "train")], minutes
    hi_text = next(iter(read_table(data / "hi_train" / "text").values()))
    assert any(0x0900 <= ord(c) <= 0x097F for c in hi_text)  # native script
    first = md5s(tmp_path)
    assert subprocess.run(cmd, env=env, capture_output=True, text=True).returncode == 0
    assert md5s(tmp_path) == first  # deterministic rerun: byte-identical audio and tables
