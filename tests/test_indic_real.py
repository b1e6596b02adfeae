"""egs/indic/asr1 on real speech (`run.sh --corpus real`): Czech and Dutch from Fish Fillets NG's dialogue (the large
languages), Spanish, Catalan and French from Tux Paint's readers (the small ones), all Latin script.

The package trees are faked as fillets-ng-data / fillets-ng-data-<lang> 1.0.1-1.1 and tuxpaint-stamps-default
2022.06.04-1 lay them out (local_models/common/realspeech.py's docstring; tones for speech, each clip distinct: the
readers keep one copy of the same audio), so nothing is downloaded: the Debian cache is an empty directory.
"""
import io
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
import soundfile

from local_models.common.datadir import read_table
from local_models.common.realspeech import FILLETS, STAMPS
from local_models.multisoftmax import units
from recipe_runner import ROOT, run_recipe

RECIPE = ROOT / "egs" / "indic" / "asr1"
LANGS = ("cs", "nl", "es", "ca", "fr")
needs_sox = pytest.mark.skipif(shutil.which("sox") is None, reason="needs sox")
needs_venv = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").is_file(), reason="needs tools/venv")

# Fillets: (level, dialog id, font, line) per language; ids start with the speaker's initial as in the package
FILLETS_LINES = {
    "cs": [("city", f"vit-{who[0]}-{i}", f"font_{who}", text) for i, (who, text) in enumerate([
        ("small", "Řekl \"ne\"."), ("big", "Občané, zachovejte klid!"), ("small", "Kde je ryba?"),
        ("big", "Tohle je těžké."), ("small", "Pojď sem."), ("big", "Ne, díky."), ("small", "Čas běží."),
        ("big", "Už to mám."), ("small", "Dobrá práce."), ("big", "Žlutý kůň."), ("small", "..."),
    ])],
    "nl": [("city", f"vit-{who[0]}-{i}", f"font_{who}", text) for i, (who, text) in enumerate([
        ("small", "Hij zei nee."), ("big", "Blijf kalm, burgers!"), ("small", "Waar is de vis?"),
        ("big", "Dit is zwaar."), ("small", "Kom hier."), ("big", "Nee, dank je."), ("small", "Ik zie één vis."),
        ("big", "Ik heb het."), ("small", "Goed gedaan."), ("big", "Een gele zee."),
    ])],
}
# Tux Paint: (category, stem, {lang: text})
STAMP_TEXTS = [
    ("animals/amphibians", "frog", {"es": "Una rana.", "ca": "Una granota.", "fr": "Une grenouille."}),
    ("animals/birds", "duck", {"es": "Un pato.", "ca": "Un ànec.", "fr": "Un canard."}),
    ("animals/birds", "hen", {"es": "Una gallina marrón.", "ca": "Una gallina.", "fr": "Une poule."}),
    ("food/fruit", "apple", {"es": "Una manzana.", "ca": "Una poma.", "fr": "Une pomme."}),
    ("food/fruit", "pear", {"es": "Una pera.", "ca": "Una pera.", "fr": "Une poire."}),
    ("food/vegetables", "carrot", {"es": "Una zanahoria.", "ca": "Una pastanaga.", "fr": "Une carotte."}),
    ("space", "moon", {"es": "La luna.", "ca": "La lluna.", "fr": "La lune."}),
    ("town", "house", {"es": "Una casa pequeña.", "ca": "Una casa petita.", "fr": "Une petite maison."}),
    ("town", "sign", {"es": "¡¿?!", "ca": "Un senyal de trànsit a la cantonada.", "fr": "Un panneau « stop »."}),
]


def ogg(path, seconds, freq, rate, channels):
    t = np.arange(int(rate * seconds)) / rate
    x = 0.3 * np.sin(2 * np.pi * freq * t)
    soundfile.write(path, np.stack([x] * channels, axis=1), rate, format="OGG", subtype="VORBIS")


def make_fillets(root):
    """fillets-ng-data's scripts and every language's recordings in one tree (22.05 kHz mono, as the packages)."""
    base = root / FILLETS
    for k, (lang, lines) in enumerate(FILLETS_LINES.items()):
        for i, (level, did, font, text) in enumerate(lines):
            (base / "script" / level).mkdir(parents=True, exist_ok=True)
            (base / "sound" / level / lang).mkdir(parents=True, exist_ok=True)
            with open(base / "script" / level / f"dialogs_{lang}.lua", "a", encoding="utf-8") as f:
                f.write(f'dialogId("{did}", "{font}", "x")\ndialogStr("{text.replace(chr(34), chr(92) + chr(34))}")\n')
            ogg(base / "sound" / level / lang / f"{did}.ogg", 1.5 + 0.01 * i, 150 + 40 * i + 7 * k, 22050, 1)
    return root


def make_stamps(root):
    """tuxpaint-stamps-default with es / ca / fr descriptions read aloud (44.1 kHz stereo, as the package)."""
    for i, (cat, stem, texts) in enumerate(STAMP_TEXTS):
        d = root / STAMPS / cat
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{stem}.txt").write_text(f"A {stem}.\n" + "".join(f"{l}.utf8={t}\n" for l, t in texts.items()),
                                       encoding="utf-8")
        for k, lang in enumerate(texts):
            # ca "sign": 0.2 s for 30 letters (the package's partly read descriptions): left out
            seconds = 0.2 if (stem, lang) == ("sign", "ca") else 1.2 + 0.01 * i
            ogg(d / f"{stem}_desc_{lang}.ogg", seconds, 200 + 30 * i + 11 * k, 44100, 2)
    return root


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("indic_real")
    dst = tmp / "asr1"
    shutil.copytree(RECIPE, dst, ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads"))
    make_fillets(tmp / "fillets")
    make_stamps(tmp / "tuxpaint")
    (tmp / "debian_cache").mkdir()  # local_models/common/debian.py's cache: empty, so a fetch would show
    run_recipe(dst, "--corpus", "real", "--stage", "1", "--stop-stage", "3", "--nj", "1",
               "--tuxpaint-root", str(tmp / "tuxpaint"), "--fillets-root", str(tmp / "fillets"),
               "--fillets-voices-root", str(tmp / "fillets"),
               extra_env={"SPEECH_RECIPES_DEBIAN": str(tmp / "debian_cache")})
    assert not any((tmp / "debian_cache").iterdir())
    return dst


@needs_venv
@needs_sox
def test_real_corpus_data_dirs_per_language(recipe):
    work = recipe / "exp" / "real"
    assert not (recipe / "data").exists() and not (recipe / "dump").exists()  # the mini corpus run's places untouched
    d = work / "data"
    sizes = {lang: [len(read_table(d / f"{lang}_{p}" / "utt2spk")) for p in ("train", "dev", "test")] for lang in LANGS}
    # 5 % / 5 % by hash, at least one each; cs's "..." line and es's "¡¿?!" stamp have no word, ca's "sign" is 30
    # letters in 0.2 s: left out
    assert sizes == {"cs": [8, 1, 1], "nl": [8, 1, 1], "es": [6, 1, 1], "ca": [6, 1, 1], "fr": [7, 1, 1]}
    ca = [t for p in ("train", "dev", "test") for t in read_table(d / f"ca_{p}" / "text").values()]
    assert not [t for t in ca if "trànsit" in t]
    for lang in LANGS:
        lids = {u: l for p in ("train", "dev", "test") for u, l in read_table(d / f"{lang}_{p}" / "utt2lid").items()}
        assert set(lids.values()) == {lang}
        spk = {p: set(read_table(d / f"{lang}_{p}" / "utt2spk").values()) for p in ("train", "dev", "test")}
        assert spk["dev"] <= spk["train"] and spk["test"] <= spk["train"]  # 1-2 voices: seen speakers (README)
    assert set(read_table(d / "cs_train" / "utt2spk").values()) == {"fillets_cs_small", "fillets_cs_big"}
    assert set(read_table(d / "es_train" / "utt2spk").values()) == {"tuxpaint_es"}
    texts = {u: t for p in ("train", "dev", "test") for u, t in read_table(d / f"fr_{p}" / "text").items()}
    assert sorted(texts.values()) == sorted(t["fr"] for _, _, t in STAMP_TEXTS)
    assert (d / "sample_rate").read_text().split() == ["16000"]
    info = json.loads((d / "prepared.json").read_text(encoding="utf-8"))
    assert info["rates"] == {"cs": [22050], "nl": [22050], "es": [44100], "ca": [44100], "fr": [44100]}
    # every language read at 16 kHz mono, whatever it was recorded at
    for lang in ("nl", "ca"):
        cmd = next(iter(read_table(d / f"{lang}_test" / "wav.scp").values()))
        wav = subprocess.run(cmd.rstrip("|"), shell=True, capture_output=True, check=True).stdout
        assert (soundfile.info(io.BytesIO(wav)).samplerate, soundfile.info(io.BytesIO(wav)).channels) == (16000, 1)
    assert "--sample-rate 16000" in (work / "dump" / "fbank" / "fbank.conf").read_text()
    for lang in LANGS:
        for p in ("train", "dev", "test"):
            assert (work / "dump" / "fbank" / f"{lang}_{p}" / "feats.scp").is_file()


@needs_venv
@needs_sox
def test_real_corpus_units_are_each_languages_lowercase_letters(recipe):
    d = recipe / "exp" / "real" / "data"
    inv = {lang: units.read_units(d / "lang" / lang / "units.txt") for lang in LANGS}
    for lang in LANGS:  # each language's units: exactly the letters of its own normalised training text
        norm = read_table(d / f"{lang}_train" / "text_norm")
        texts = read_table(d / f"{lang}_train" / "text")
        assert norm == {u: units.normalise(t, lang) for u, t in texts.items()}
        assert all(t == t.lower() and not set(t) & set('".,!?¡¿«»') for t in norm.values()), norm
        graphemes = {u for u in inv[lang] if u not in units.SPECIAL and not u.startswith(units.WORD_START)}
        assert graphemes == set("".join(norm.values()).replace(" ", "")), lang
    cs = set(inv["cs"]) - set(inv["nl"]) - set(inv["es"]) - set(inv["ca"]) - set(inv["fr"])
    # Czech's own letters are units of Czech alone
    assert {u.replace(units.WORD_START, "") for u in cs} & set("čďěňřšťůž"), cs
    union = set(units.read_units(d / "lang" / "union" / "units.txt"))
    assert set().union(*map(set, inv.values())) == union


@needs_venv
def test_unknown_corpus_is_an_error(recipe):
    proc = run_recipe(recipe, "--corpus", "klingon", "--stage", "1", "--stop-stage", "1", check=False)
    assert proc.returncode != 0 and "--corpus klingon: mini, indic (db.sh INDIC) or real" in proc.stderr


def test_prepare_real_refuses_a_language_without_a_source(tmp_path):
    proc = subprocess.run([sys.executable, str(RECIPE / "local" / "prepare_real.py"), "--langs", "en cs",
                           "--fillets-root", str(tmp_path), str(tmp_path / "data")],
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)})
    assert proc.returncode == 1 and not (tmp_path / "data").exists()
    assert "no real-speech source for 'en' (known: cs, nl, es, ca, fr)" in proc.stderr


# ---- vanilla's LID when languages share a script ------------------------------------------------------------------

def test_every_real_language_is_latin_script_and_shares_it():
    from local_models.multisoftmax import report

    assert {lang: units.script_of(lang) for lang in LANGS + ("en", "hi", "mr", "ta")} == {
        "cs": "Latin", "nl": "Latin", "es": "Latin", "ca": "Latin", "fr": "Latin", "en": "Latin",
        "hi": "Devanagari", "mr": "Devanagari", "ta": "Tamil"}
    assert units.shared_script(["en", "hi", "ta", "gu"]) == {}  # the paper's four: one script each
    assert units.shared_script(["hi", "mr", "ta"]) == {"hi": ["mr"], "mr": ["hi"]}
    assert units.shared_script(list(LANGS))["es"] == ["cs", "nl", "ca", "fr"]
    # vanilla's row: LID accuracy kept where scripts are distinct, dropped (with the reason) where they are shared
    row = {"wer_cs": 50.0, "lid_acc_cs": 12.0, "lid_acc_nl": 3.0, "lid_acc_avg": 7.5, "lid_correct": 3, "wer_avg": 40.0}
    assert report.without_script_lid(row, ["en", "hi"]) == row
    got = report.without_script_lid(row, ["cs", "nl"])
    assert got == {"wer_cs": 50.0, "wer_avg": 40.0, "lid_not_applicable": "shared script: cs, nl (Latin)"}
    got = report.without_script_lid({"lid_acc_hi": 90.0, "lid_acc_mr": 80.0, "lid_acc_ta": 99.0, "lid_acc_avg": 89.0},
                                    ["hi", "mr", "ta"])
    assert got == {"lid_acc_ta": 99.0, "lid_not_applicable": "shared script: hi, mr (Devanagari)"}


def test_report_states_the_real_corpus_size_not_the_mini_corpus():
    from local_models.multisoftmax import report

    run_sh = (RECIPE / "run.sh").read_text(encoding="utf-8")
    name = next(line.split('"')[1] for line in run_sh.splitlines() if line.strip().startswith('corpus="real speech'))
    assert "espeak-ng" not in report.corpus_size(name) and "1.5 hours" in report.corpus_size(name)
    assert "espeak-ng" in report.corpus_size("mini")


def test_prepare_real_leaves_out_clips_whose_text_cannot_fit_their_audio(tmp_path):
    make_stamps(tmp_path / "tuxpaint")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}

    def prepare(out, *opts):
        return subprocess.run([sys.executable, str(RECIPE / "local" / "prepare_real.py"), "--langs", "ca es", *opts,
                               "--tuxpaint-root", str(tmp_path / "tuxpaint"), str(out)],
                              capture_output=True, text=True, env=env, check=True)

    def texts(out, lang):
        return [t for p in ("train", "dev", "test") for t in read_table(out / f"{lang}_{p}" / "text").values()]

    proc = prepare(tmp_path / "data")
    assert "ca: 1 clip(s) left out" in proc.stderr and "es: 1 clip(s) left out" in proc.stderr
    assert len(texts(tmp_path / "data", "ca")) == 8 and "Un senyal de trànsit a la cantonada." not in texts(
        tmp_path / "data", "ca")
    info = json.loads((tmp_path / "data" / "prepared.json").read_text(encoding="utf-8"))
    assert info["left_out"]["ca"].startswith("1 clip(s)") and info["sources"] == {"ca": "tuxpaint", "es": "tuxpaint"}
    # a looser rate keeps the partly read clip (30 letters in 0.2 s); punctuation-only text is never kept
    prepare(tmp_path / "loose", "--max-chars-per-s", "200")
    assert "Un senyal de trànsit a la cantonada." in texts(tmp_path / "loose", "ca")
    assert "¡¿?!" not in texts(tmp_path / "loose", "es")


def test_results_table_5_prints_vanilla_lid_as_not_applicable_between_latin_languages(tmp_path):
    from local_models.multisoftmax import report

    vanilla = {"wer_cs": 50.0, "wer_nl": 40.0, "wer_avg": 45.0,
               "lid_acc_cs": 10.0, "lid_acc_nl": 5.0, "lid_acc_avg": 7.0}
    lid = {"wer_cs": 30.0, "wer_nl": 30.0, "wer_avg": 30.0, "lid_acc_cs": 90.0, "lid_acc_nl": 80.0, "lid_acc_avg": 85.0}
    rows = {"vanilla": report.without_script_lid(vanilla, ["cs", "nl"]), "multisoftmax_lid_lidfree": lid}
    report.write_md(tmp_path / "RESULTS_real.md", rows, [], {}, ["cs", "nl"], ["cs_test", "nl_test"], [],
                    corpus="real speech from Debian packages", note="", exp=tmp_path,
                    systems=["vanilla", "multisoftmax_lid"], finetune=[], paper_config=tmp_path / "none.yaml")
    md = (tmp_path / "RESULTS_real.md").read_text(encoding="utf-8")
    table5 = md[md.index("## Table 5"):md.index("## Table 6")]
    assert "| Multilingual Vanilla | n/a | n/a | n/a |" in table5
    assert "| Multi-softmax LID | 90.00 | 80.00 | 85.00 |" in table5
    assert "Vanilla n/a: shared script: cs, nl (Latin)." in table5
    assert "espeak-ng" not in md and "1.5 hours of recorded speech" in md


@needs_venv
@needs_sox
def test_real_path_trains_decodes_and_scores_at_smoke_size(recipe):
    """Stages 4-7 on the real corpus at smoke size: trained, decoded LID-free with the switch-off grid, scored into
    RESULTS_real.md beside run.sh (the mini corpus's RESULTS.md untouched), each sealed <lang>_test looked at once."""
    mini_md = (recipe / "RESULTS.md").read_bytes()
    run_recipe(recipe, "--corpus", "real", "--stage", "4", "--stop-stage", "7", "--nj", "1", "--systems",
               "vanilla multisoftmax_lid", "--finetune", "", "--train-config-suffix", "_smoke",
               "--switch-off-grid", "inf:inf 3:0.5")
    work = recipe / "exp" / "real"
    assert (recipe / "RESULTS.md").read_bytes() == mini_md and not (work / "RESULTS_real.md").exists()
    res = json.loads((work / "exp" / "results.json").read_text(encoding="utf-8"))
    assert res["sealed_looks"]["looks"] == {f"{lang}_test": 1 for lang in LANGS}
    assert set(res["environment"]["trained"]) == {"vanilla", "multisoftmax_lid"}
    md = (recipe / "RESULTS_real.md").read_text(encoding="utf-8")
    assert "dev/test speakers are training speakers" in md
    assert "shared script: cs, nl, es, ca, fr (Latin)" in md  # vanilla's script LID: not applicable
    assert "5 = every decoder all the time, 5 languages" in md  # T_avg's top is the run's language count
    table7 = md[md.index("## Table 7"):md.index("The paper's Table 7")]
    assert "| tau [frames] | s_th | dev WER [%] | dev T_avg | WER [%] | T_avg |" in table7  # no Hindi: no Hi-IN column
    assert "WER Hi-IN" not in table7 and all(r.count("|") == 9 for r in table7.splitlines() if r.startswith("|"))
    # every language's test utterance decoded LID-free, with a language chosen among the five
    chosen = {}
    for lang in LANGS:
        chosen.update(read_table(work / "exp" / "multisoftmax_lid" / f"decode_{lang}_test" / "lidfree" / "hyp_lang"))
    assert len(chosen) == 5 and set(chosen.values()) <= set(LANGS)
    assert (work / "exp" / "switch_off_choice.json").is_file()
