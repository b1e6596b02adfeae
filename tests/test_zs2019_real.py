"""egs/zerospeech2019/unit1 on real English (`run.sh --corpus real`: Flight of the Amazon Queen's dialogue,
local/prepare_real.py) from a small queen.1c (tests/fotaq_fixture.py): the data sets, and the real path through
stages 1-9 at smoke size, in exp/real/ with RESULTS_real.md (ABX n/a), leaving the mini corpus's RESULTS.md alone."""
import json
import shutil
from importlib.util import module_from_spec, spec_from_file_location

import pytest
import soundfile
from fotaq_fixture import build, cutaway, mp3
from recipe_runner import ROOT, run_recipe

from local_models.common import fotaq as fq
from local_models.common.datadir import read_table

RECIPE = ROOT / "egs" / "zerospeech2019" / "unit1"
needs_venv = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").is_file(), reason="needs tools/venv")
PRINCESS = "fotaq_princess_azura"
# the cutaway's last record: the princess says Joe's first line ("Look!", C1A__011) again
CUT = cutaway(sentences=("Look!", "Welcome*02to my palace", "*", "Look."))


def prepare_real():
    spec = spec_from_file_location("prepare_real", RECIPE / "local" / "prepare_real.py")
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def speech():
    """The fixture's speech entries and a few more of Joe's stock responses (JOE00n1: 'Nope'): enough clips a set
    for the trainer's held-out validation utterances."""
    tones = {"020001P1.SB": mp3(0.6), "020001P2.SB": mp3(0.5, 330), "020006J1.SB": mp3(0.6, 550),
             "02SSSSJ2.SB": mp3(0.5, 250), "02XXXXJ1.SB": mp3(0.5, 280), "JOE00411.SB": mp3(0.6, 300),
             "C1A__011.SB": mp3(0.5, 350), "C1A__022.SB": mp3(0.6, 370), "C1A__041.SB": mp3(0.5, 390)}
    tones.update({f"JOE00{n:02d}1.SB": mp3(0.5, 400 + 20 * n) for n in range(1, 7)})
    return tones


def test_prepare_real_sets_and_references(tmp_path):
    """Joe is the voice, the test speakers are held out of train, and the test clips whose line Joe also says are
    resynthesised in Joe's voice against his recording of it, which no training set holds."""
    prep = prepare_real()
    path = build(tmp_path / "queen.1c", speech(), cut=CUT)
    counts = prep.prepare(path, tmp_path / "data", tmp_path / "audio", [PRINCESS])
    assert counts == {"train": 12, "voice": 10, "test": 2, "ref": 1}
    d = tmp_path / "data"
    test = read_table(d / "test" / "utt2spk")
    assert set(test) == {f"{PRINCESS}-C1A__022", f"{PRINCESS}-C1A__041"}
    assert read_table(d / "test" / "synthesis_list") == {f"{PRINCESS}-C1A__041": "fotaq_joe"}  # "Look." = "Look!"
    ref = read_table(d / "test" / "voice_ref.scp")
    assert list(ref) == [f"{PRINCESS}-C1A__041"] and ref[f"{PRINCESS}-C1A__041"].endswith("/fotaq_joe-C1A__011.wav")
    assert (d / "test" / "bitrate_list").read_text().split() == sorted(test)
    train, voice = read_table(d / "train" / "utt2spk"), read_table(d / "voice" / "utt2spk")
    assert not set(train) & set(test) and "fotaq_joe-C1A__011" not in {**train, **voice}
    assert set(voice.values()) == {"fotaq_joe"} and set(voice) <= set(train)
    na = (d / "test" / "abx_na").read_text()
    assert "forced aligner the registries reach (pocketsphinx) was measured too coarse" in na
    wav = read_table(d / "voice" / "wav.scp")["fotaq_joe-JOE00011"]
    assert soundfile.info(wav).samplerate == 16000
    assert prep.words("Oh, alright!") == prep.words("oh alright.") == "oh alright"


def test_prepare_real_errors(tmp_path, capsys):
    prep = prepare_real()
    path = build(tmp_path / "queen.1c", speech(), cut=CUT)
    assert prep.main(["--container", str(path), "--test-speakers", "fotaq_nobody", str(tmp_path / "d1")]) == 1
    assert "test speaker(s) fotaq_nobody not in flight-of-the-amazon-queen" in capsys.readouterr().err
    plain = build(tmp_path / "plain.1c", speech())  # the princess says nothing Joe says
    assert prep.main(["--container", str(plain), "--test-speakers", PRINCESS, str(tmp_path / "d2")]) == 1
    assert "fotaq_joe says none of the test speakers' lines" in capsys.readouterr().err
    assert not (tmp_path / "d2" / "test").exists()


def test_abx_na_only_while_no_row_has_an_abx(tmp_path):
    """The report reads data/<set>/abx_na only while no row has an ABX on the set: an item file put there later
    (stages 6 and 9) brings the ABX tables back."""
    from local_models.vqvae.report import no_abx_reason

    (tmp_path / "abx_na").write_text("No phone\ntimes.\n")
    assert no_abx_reason(tmp_path, {"trf_mfcc_k128": {"test": {"bitrate": 90.0}}}, "test") == "No phone times."
    assert no_abx_reason(tmp_path, {"trf_mfcc_k128": {"test": {"bitrate": 90.0, "abx": 30.0}}}, "test") == ""
    assert no_abx_reason(tmp_path / "elsewhere", {"trf_mfcc_k128": {"test": {"bitrate": 90.0}}}, "test") == ""


# ---- the recipe ------------------------------------------------------------------------------------------------

SMOKE = ("--nj", "1", "--train-config-suffix", "_smoke", "--systems", "trf_mfcc_k64 trf_mfcc_k128",
         "--inverter-system", "trf_mfcc_k128", "--griffin-lim-iters", "4", "--mcd-f0-method", "dio")


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("zs_real")
    dst = tmp / "unit1"
    shutil.copytree(RECIPE, dst, ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads", "RESULTS_real.md"))
    root = tmp / "fotaq"
    (root / fq.CONTAINER).parent.mkdir(parents=True)
    build(root / fq.CONTAINER, speech(), cut=CUT)
    # the cache of local_models/common/debian.py: empty, so a fetch would show (--fotaq-root must not fetch)
    run_recipe(dst, "--corpus", "real", "--fotaq-root", str(root), "--real-test-speakers", PRINCESS,
               "--stop-stage", "9", *SMOKE, extra_env={"SPEECH_RECIPES_DEBIAN": str(tmp / "debian_cache")})
    assert not (tmp / "debian_cache").exists() or not any((tmp / "debian_cache").iterdir())
    return dst


@needs_venv
def test_real_corpus_runs_apart_from_the_mini_corpus(recipe):
    assert (recipe / "RESULTS.md").read_bytes() == (RECIPE / "RESULTS.md").read_bytes()
    assert not any((recipe / x).exists() for x in ("data", "dump", "downloads")) and not list(recipe.glob("exp/trf_*"))
    work = recipe / "exp" / "real"
    assert {x: len(read_table(work / "data" / x / "utt2spk")) for x in ("train", "voice", "test")} == {
        "train": 12, "voice": 10, "test": 2}
    assert (work / "downloads" / "fotaq" / "clips.tsv").is_file()
    results = json.loads((work / "exp" / "results.json").read_text())
    assert results["corpus"].startswith("Flight of the Amazon Queen") and "fotaq_joe" not in results["corpus"]
    systems = results["systems"]
    assert "abx" not in systems["trf_mfcc_k128"]["test"] and not systems.get("mfcc_baseline")
    assert systems["trf_mfcc_k128"]["test"]["bitrate"] > 0 and systems["trf_mfcc_k64"]["test"]["num_codes"] == 64
    # one inverter (Joe), the test line Joe also says resynthesised in his voice and scored against his recording
    assert (work / "exp" / "inverter_trf_mfcc_k128" / "fotaq_joe" / "valid.loss.best.pth").is_file()
    inv = systems["inverter"]["test"]
    assert inv["resynth_utts"] == 1 and inv["mcd"] > 0 and inv["mcd_source"] > 0
    assert results["headline"][0].startswith("ABX: n/a. ABX needs phone times")


@needs_venv
def test_results_real_says_abx_na_and_the_data_used(recipe):
    md = (recipe / "RESULTS_real.md").read_text()
    assert "## Environment" in md and "Corpus: **Flight of the Amazon Queen" in md
    assert "ABX error (every row, the raw-MFCC reference too): **n/a**. ABX needs phone times" in md
    assert "## Table 1 shape" not in md and "Reference row" not in md
    data = md.split("## Data (this run)")[1].split("##")[0]
    assert "- train (VQ-VAE: unit discovery) (`data/train`): 12 clips, 0.1 min, 2 speaker(s)" in data
    assert "- voice (the inverter's target voice) (`data/voice`): 10 clips, 0.1 min, 1 speaker(s): `fotaq_joe`" in data
    assert "(`data/test`): 2 clips, 0.0 min, 1 speaker(s): `fotaq_princess_azura`; 1 of its clips have" in data
    results = json.loads((recipe / "exp" / "real" / "exp" / "results.json").read_text())["systems"]
    k64, k128 = (results[n]["test"]["bitrate"] for n in ("trf_mfcc_k64", "trf_mfcc_k128"))
    assert f"| TrfVQVAE with MFCC (K = 128) (`trf_mfcc_k128`) | {k128:.2f} |" in md
    assert "| TrfVQVAE (stride 4, K = 512) (`trf_mfcc_k512`) | not run here |" in md
    grows = "holds" if k64 < k128 else "does NOT hold"
    assert f"- Bitrate grows with the codebook size K (paper Table 2): **{grows}** (K 64: {k64:.2f}" in md
    assert "- MCD against the same text spoken by the target voice" in md


@needs_venv
def test_unknown_corpus_is_an_error(recipe):
    proc = run_recipe(recipe, "--corpus", "klingon", "--stage", "1", "--stop-stage", "1", check=False)
    assert proc.returncode != 0 and "--corpus klingon: mini, zs2019 (db.sh ZEROSPEECH2019) or real" in proc.stderr
