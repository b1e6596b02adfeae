"""egs/kss/tts1 on a real single speaker (`run.sh --corpus real`: Tux Paint's Spanish reader) and the Spanish
espeak-ng front end of local_models/jdit (phonemes, frontend, jdit_text --lang, the config's g2p_lang).

The stamps tree is built as tuxpaint-stamps-default 2022.06.04-1 ships it (tones for speech): the layout, names and
`.txt` format are those local_models/common/realspeech.py reads (its docstring; the package's file list:
https://packages.debian.org/bookworm/all/tuxpaint-stamps-default/filelist), each description read aloud as
`<stem>_desc_es.ogg`, 44.1 kHz stereo Ogg Vorbis.
"""
import io
import json
import shutil
import subprocess
import types

import numpy as np
import pytest
import soundfile

from local_models.bin import jdit_text
from local_models.common.datadir import read_table
from local_models.common.realspeech import STAMPS
from local_models.common.synth import espeak_available
from local_models.jdit import frontend, phonemes, report
from local_models.jdit.inference import Text2Speech
from recipe_runner import ROOT, run_recipe

RECIPE = ROOT / "egs" / "kss" / "tts1"
needs_espeak = pytest.mark.skipif(not espeak_available(), reason="needs espeak-ng")
needs_sox = pytest.mark.skipif(shutil.which("sox") is None, reason="needs sox")
needs_venv = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").is_file(), reason="needs tools/venv")

# (category, stem, Spanish text): a dozen stamps, as in the package (`es.utf8=` lines of the stamps' .txt)
STAMP_TEXTS = [
    ("animals/amphibians", "frog", "Una rana."), ("animals/birds", "blackbird", "Un mirlo."),
    ("animals/birds", "crow", "Un cuervo."), ("animals/birds", "duck", "Un pato."),
    ("animals/birds", "hen", "Una gallina marrón."), ("animals/birds", "tux", "Tux, ¡la mascota de Linux!"),
    ("food/fruit", "apple", "Una manzana."), ("food/fruit", "pear", "Una pera."),
    ("food/vegetables", "carrot", "Una zanahoria."), ("money/euro", "euro-1", "Una moneda europea de 1 euro (1 €)."),
    ("space", "moon", "La luna."), ("town", "house", "Una casa pequeña."),
]

UNA_RANA = ["u", "n", "a", "R2", "a", "n", "a", "sil"]  # espeak-ng 1.51 es: the trill of word-initial r


def ogg(path, seconds, freq, rate=44100):
    t = np.arange(int(rate * seconds)) / rate
    x = 0.3 * np.sin(2 * np.pi * freq * t)
    soundfile.write(path, np.stack([x, x], axis=1), rate, format="OGG", subtype="VORBIS")


def make_stamps(root):
    """A tuxpaint-stamps-default tree with STAMP_TEXTS read aloud (distinct tones: the reader keeps a clip once)."""
    for i, (cat, stem, text) in enumerate(STAMP_TEXTS):
        d = root / STAMPS / cat
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{stem}.txt").write_text(f"A {stem}.\nca.utf8=?\nes.utf8={text}\n", encoding="utf-8")
        ogg(d / f"{stem}_desc_es.ogg", 0.4 + 0.02 * i, 200.0 + 30 * i)
        ogg(d / f"{stem}_desc.ogg", 0.3, 900.0)  # the English reader: not this corpus
    return root


# ---- the Spanish front end --------------------------------------------------------------------------------------

@needs_espeak
def test_spanish_phonemes_of_known_words():
    assert phonemes.text_to_phonemes("Una rana.", lang="es") == UNA_RANA
    # tap and trill are different phonemes; the fricative d between vowels; Korean is unchanged by default
    assert "**" in phonemes.text_to_phonemes("pero", lang="es") and "R2" in phonemes.text_to_phonemes("perro", lang="es")
    assert "D" in phonemes.text_to_phonemes("nada", lang="es")
    assert phonemes.text_to_phonemes("나다") == phonemes.text_to_phonemes("나다", lang="ko")
    # opening marks, quotes and brackets change no phone; ; : ( ) become pauses
    assert phonemes.speakable("¡Hola! «Sí»; (no) y…", lang="es") == "Hola! Sí, ,no, y."
    inv = set(phonemes.inventory("es"))
    assert {"R2", "**", "T", "x", "n^", "l^", "tS", "sil"} <= inv and not inv & set("ㄱ가")
    for text in ("El perro come pan con queso.", "¿Dónde está la llave?", "Mañana jugaremos al fútbol."):
        assert set(phonemes.text_to_phonemes(text, lang="es")) <= inv, text


@needs_espeak
def test_spanish_language_switch_and_unreadable_characters_are_errors_naming_the_text():
    with pytest.raises(ValueError, match=r"switched language \(\(en\).*'ß'"):  # espeak-ng reads ß as English
        phonemes.text_to_phonemes("ß", lang="es")
    with pytest.raises(phonemes.UnreadableText, match=r"'안' .* at position 6.* in 'Hola 안녕'"):
        phonemes.text_to_phonemes("Hola 안녕", lang="es")
    dropped = []
    assert phonemes.tokens_of("Una 안 rana.", "espeak", unknown="drop", dropped=dropped, lang="es") == UNA_RANA
    assert dropped == ["안"]
    with pytest.raises(ValueError, match="jamo reads Korean only"):
        phonemes.tokens_of("Una rana.", "jamo", lang="es")
    with pytest.raises(ValueError, match="front end language 'fr'"):
        phonemes.text_to_phonemes("une grenouille", lang="fr")


@needs_espeak
def test_typed_spanish_is_not_spelled_in_hangul_and_the_config_language_drives_synthesis():
    assert frontend.text_to_tokens("Una rana.", "espeak", "es") == UNA_RANA
    with pytest.raises(ValueError, match="empty text"):
        frontend.text_to_tokens("  ", "espeak", "es")
    # Text2Speech takes its front end from the model's config (g2p_lang, as JDITTask writes it)
    tokens = ["<blank>", "<unk>", *phonemes.inventory("es"), "<sos/eos>"]
    model = types.SimpleNamespace(tts=object(), normalize=None)
    tts = Text2Speech(model, {"token_list": tokens, "g2p_lang": "es"}, {}, {"sample_rate": 22050}, None, None)
    assert tts.lang == "es" and tts.tokens("Una rana.") == UNA_RANA
    korean = Text2Speech(model, {"token_list": tokens}, {}, {"sample_rate": 22050}, None, None)
    assert korean.lang == "ko"
    with pytest.raises(ValueError, match="not in the model's token list"):
        korean.tokens("Una rana.")  # Latin letters spelled in Hangul: Korean phonemes


def test_jdit_train_writes_the_front_end_language_into_its_config():
    from local_models.jdit.task import JDITTask

    args = JDITTask.get_parser().parse_args(["--g2p_lang", "es", "--output_dir", "x"])
    assert args.g2p_lang == "es"
    assert JDITTask.get_parser().parse_args(["--output_dir", "x"]).g2p_lang == "ko"


@needs_espeak
def test_jdit_text_g2p_lang_es_names_file_and_line(tmp_path):
    d = tmp_path / "set"
    d.mkdir()
    (d / "text").write_text("a Una rana.\nb Un Ωmega.\n", encoding="utf-8")
    assert jdit_text.main(["g2p", "--lang", "es", str(d)]) == 1 and not (d / "text_phn").exists()
    assert jdit_text.main(["g2p", "--lang", "es", "--unknown", "drop", str(d)]) == 0
    assert read_table(d / "text_phn")["a"].split() == UNA_RANA


def test_report_without_reference_durations_says_so(tmp_path):
    lines = "\n".join(report._duration_lines(tmp_path / "exp", tmp_path / "data", ["jdit"], {}))
    assert "No reference durations" in lines
    d = tmp_path / "data" / "test"
    d.mkdir(parents=True)
    (d / "text").write_text("u1 Una rana.\nu2 Un pato.\n", encoding="utf-8")
    (d / "utt2spk").write_text("u1 tuxpaint_es\nu2 tuxpaint_es\n", encoding="utf-8")
    (d / "utt2num_frames").write_text("u1 5168\nu2 5168\n", encoding="utf-8")  # 60 s each at hop 256 / 22.05 kHz
    lines = report.data_lines(tmp_path / "exp", tmp_path / "data", ["jdit"], ["test"])
    assert lines[0] == "## Data (this run)" and "2 clips, 2.0 min, 1 speaker(s)" in lines[2]


# ---- the recipe ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kss_real")
    dst = tmp / "tts1"
    shutil.copytree(RECIPE, dst, ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads"))
    make_stamps(tmp / "tuxpaint")
    # the cache of local_models/common/debian.py: empty, so a fetch would show (--tuxpaint-root must not fetch)
    run_recipe(dst, "--corpus", "real", "--stage", "1", "--stop-stage", "3", "--tuxpaint-root", str(tmp / "tuxpaint"),
               extra_env={"SPEECH_RECIPES_DEBIAN": str(tmp / "debian_cache")})
    assert not (tmp / "debian_cache").exists() or not any((tmp / "debian_cache").iterdir())
    return dst


@needs_venv
@needs_sox
@needs_espeak
def test_real_corpus_stages_1_to_3(recipe):
    work = recipe / "exp" / "real"
    assert not (recipe / "data").exists() and not (recipe / "dump").exists()  # the Korean run's places untouched
    d = work / "data"
    utts = {x: read_table(d / x / "utt2spk") for x in ("train", "dev", "test", "ood")}
    assert [len(utts[x]) for x in ("train", "dev", "test", "ood")] == [10, 1, 1, 12]
    assert set(utts["train"].values()) == {"tuxpaint_es"}
    texts = {**read_table(d / "train" / "text"), **read_table(d / "dev" / "text"), **read_table(d / "test" / "text")}
    assert sorted(texts.values()) == sorted(t for _, _, t in STAMP_TEXTS)
    # wav.scp: sox pipes from the 44.1 kHz stereo Ogg to 22.05 kHz mono
    utt, cmd = next(iter(read_table(d / "test" / "wav.scp").items()))
    wav = subprocess.run(cmd.rstrip("|"), shell=True, capture_output=True, check=True).stdout
    info = soundfile.info(io.BytesIO(wav))
    assert (info.samplerate, info.channels) == (22050, 1)
    assert not list(d.glob("*/phones.ctm")) and not list(d.glob("*/durations"))  # recorded speech: no true times
    # Spanish espeak-ng phonemes, a token list of them, features at the recipe's rate
    phn = {u: v.split() for x in ("train", "dev", "test") for u, v in read_table(d / x / "text_phn").items()}
    assert phn[next(u for u, t in texts.items() if t == "Una rana.")] == UNA_RANA
    train = {t for u in read_table(d / "train" / "text_phn").values() for t in u.split()}
    tokens = (d / "token_list" / "phn" / "tokens.txt").read_text(encoding="utf-8").split()
    assert set(tokens[1:-1]) == set(phonemes.inventory("es")) | train | {"<unk>"}
    assert {"R2", "sil"} <= set(tokens) and not any("\uac00" <= t[0] <= "\ud7a3" or "\u1100" <= t[0] <= "\u11ff"
                                                    for t in tokens)
    frames = read_table(d / "test" / "utt2num_frames")
    seconds = soundfile.info(cmd.split()[1]).duration  # `sox <ogg> -t wav ... |`
    assert abs(int(frames[utt]) - seconds * 22050 / 256) <= 3
    assert (work / "dump" / "train" / "text_shape.phn").is_file() and (work / "dump" / "train" / "feats_stats.npz").is_file()
    ood = {u: v.split() for u, v in read_table(d / "ood" / "text_phn").items()}
    assert len(ood) == 12 and not (d / "ood" / "wav.scp").exists()


@needs_venv
def test_unknown_corpus_is_an_error(recipe):
    proc = run_recipe(recipe, "--corpus", "klingon", "--stage", "1", "--stop-stage", "1", check=False)
    assert proc.returncode != 0 and "--corpus klingon: kss or real" in proc.stderr


@pytest.fixture(scope="module")
def smoked(recipe):
    """The same recipe copy through stages 4-6 at smoke size: one epoch of every system, 2 PWG steps."""
    run_recipe(recipe, "--corpus", "real", "--stage", "4", "--stop-stage", "6", "--nj", "1", "--ngpu", "0",
               "--train-args", "--max_epoch 1 --batch_size 4 --use_matplotlib false", "--griffin-lim-iters", "4",
               "--pwg-max-steps", "2", "--bench-repeats", "1", "--bench-threads", "1", "--mcd-f0-method", "dio")
    return recipe


@needs_venv
@needs_sox
@needs_espeak
def test_real_corpus_trains_decodes_and_scores_at_smoke_size(smoked):
    work = smoked / "exp" / "real"
    results = json.loads((work / "exp" / "results.json").read_text())
    assert "ONE real reader" in results["corpus"]
    for s in ("jdit", "tacotron2", "transformer", "fastspeech"):
        test = results["systems"][s]["test"]
        wavs = read_table(work / "exp" / f"tts_{s}" / "decode_test" / "wav.scp")
        assert len(wavs) == 1 and test["mcd"] > 0, s  # the one test clip, spoken and scored against its recording
        ood = read_table(work / "exp" / f"tts_{s}" / "decode_ood" / "wav.scp")
        assert len(ood) == 12, s  # text-only: synthesised, no reference
    assert "duration_mae" not in results["systems"]["jdit"]["test"]  # recorded speech: no true phone times
    # the report beside run.sh, never the Korean run's RESULTS.md
    md = (smoked / "RESULTS_real.md").read_text(encoding="utf-8")
    assert (smoked / "RESULTS.md").read_bytes() == (RECIPE / "RESULTS.md").read_bytes()
    assert "ONE real reader" in md and "No reference durations" in md
    # ood is text only, but its attention failures are measured and shown: a look as much as test's
    assert results["sealed_looks"]["looks"] == {"test": 1, "ood": 1}
