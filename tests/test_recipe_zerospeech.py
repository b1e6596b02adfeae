"""Smoke run of egs/zerospeech2019/unit1 on a tiny mini corpus, then encoding an unseen data dir."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile
from local_models.common.results import git_commit
from local_models.common.sealed import clean_commit
from recipe_runner import headline_of_run, run_recipe as run

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs" / "zerospeech2019" / "unit1"
SYSTEMS = "trf_mfcc_k128 conv_mfcc_k256 trf_mfcc_k64_s5e-3_j0.05 conv_mfcc_k256_seed1"
pytestmark = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").exists(),
                                reason="needs tools/venv (make install)")


SMALL = ("--nj", "1", "--unit-min", "0.6", "--voice-min", "0.4", "--test-min", "0.4", "--dev-min", "0.4",
         "--train-config-suffix", "_smoke",
         "--systems", SYSTEMS, "--inverter-system", "trf_mfcc_k128", "--griffin-lim-iters", "4",
         "--mcd-f0-method", "dio")  # the MCD's WORLD F0: dio (~50x faster than the default harvest; 25 s a call here)


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    dst = tmp_path_factory.mktemp("zs") / "unit1"
    shutil.copytree(RECIPE, dst, ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads", "RESULTS.md"))
    run(dst, *SMALL)
    return dst


def _bitrate_by_hand(codes_dir, utt2dur, keep=None):
    """(N / D) x H of the codes in CODES_DIR/codes/<utt>.npy over KEEP (default all), and the distinct codes: the
    ZeroSpeech 2019 definition, computed here apart from local_models.vqvae.bitrate."""
    codes = {f.stem: np.load(f) for f in Path(codes_dir, "codes").glob("*.npy")}
    keep = sorted(codes) if keep is None else keep
    durs = dict((u, float(d)) for u, d in (l.split() for l in Path(utt2dur).read_text().splitlines()))
    allc = np.concatenate([codes[u] for u in keep])
    p = np.bincount(allc) / len(allc)
    p = p[p > 0]
    return len(allc) / sum(durs[u] for u in keep) * float(-(p * np.log2(p)).sum()), len(p)


def _results(recipe):
    return json.loads((recipe / "exp" / "results.json").read_text())


def test_full_run_writes_results(recipe):
    results = _results(recipe)
    assert results["corpus"] == "mini" and results["recipe"] == "zerospeech2019/unit1"
    systems = results["systems"]
    blist = recipe / "data" / "test" / "bitrate_list"
    keep = blist.read_text().split() if blist.is_file() else None
    for name in SYSTEMS.split():
        m = systems[name]["test"]
        if m["codes_used"] == 1:  # a collapsed 1-epoch model: every distance 0, every triplet a tie (half an error)
            assert m["abx"] == 50.0, (name, m)
        else:  # our ABX and zerospeech-libriabx2's, on the same features with the same frame rule
            assert abs(m["abx_libri_rule"] - m["abx_libriabx2"]) <= 1.0, (name, m)
        rate, used = _bitrate_by_hand(recipe / "exp" / name / "codes_test",
                                      recipe / "dump" / "mfcc" / "test" / "utt2dur", keep)
        assert m["bitrate"] == pytest.approx(rate, rel=1e-9) and m["codes_used"] == used, (name, m, rate, used)
        assert m["num_codes"] == int(name.split("_k")[1].split("_")[0])  # K of the name: 128, 256, 64
        assert (recipe / "exp" / name / "valid.loss.best.pth").exists()
    # (a one-epoch conv model may still send every frame to one code: its BatchNorm statistics are not settled)
    assert systems["trf_mfcc_k128"]["test"]["codes_used"] > 1
    conf = (recipe / "exp" / "trf_mfcc_k64_s5e-3_j0.05" / "config.yaml").read_text()
    assert "smooth_weight: 0.005" in conf and "jitter_p: 0.05" in conf and "encoder_type: transformer" in conf
    assert "encoder_type: conv" in (recipe / "exp" / "conv_mfcc_k256" / "config.yaml").read_text()
    # a replicate trains with its own seed; the base row carries the mean and sd over both
    assert "\nseed: 1\n" in (recipe / "exp" / "conv_mfcc_k256_seed1" / "config.yaml").read_text()
    assert "\nseed: 0\n" in (recipe / "exp" / "conv_mfcc_k256" / "config.yaml").read_text()
    conv, rep = systems["conv_mfcc_k256"]["test"], systems["conv_mfcc_k256_seed1"]["test"]
    assert conv["seeds"] == 2 and conv["abx_seed_mean"] == pytest.approx((conv["abx"] + rep["abx"]) / 2)
    # raw MFCC reference row (10 ms frames): our ABX agrees with libriabx2's on the same frames, and 39 MFCCs a frame
    # tell triphones apart better than any code sequence a 1-epoch model emits
    base = systems["mfcc_baseline"]["test"]
    assert abs(base["abx"] - base["abx_libriabx2"]) <= 1.0, base
    assert base["abx"] < min(systems[n]["test"]["abx"] for n in SYSTEMS.split()), base
    # the environment block names the commit and device that trained every scored model (trained_by.json)
    trained = results["environment"]["trained"]
    assert set(trained) == {*SYSTEMS.split(), "inverter_trf_mfcc_k128/V001"}, trained
    assert all(v.startswith("commit ") and " on " in v for v in trained.values()), trained
    # one look at the sealed test set, said near the top of RESULTS.md; the check's candidates are declared
    assert results["sealed_looks"]["looks"] == {"test": 1} and results["ordering_candidates"] == ["trf_mfcc_k128"]
    # the dev set (unseen speakers D*), encoded by the candidates only: ABX (ours only: libriabx2 checks ours on
    # test), never a look
    pick = results["ordering_pick"]
    assert pick["dev_set"] == "dev" and pick["dev_abx"]["trf_mfcc_k128"] == systems["trf_mfcc_k128"]["dev"]["abx"]
    assert "abx_libriabx2" not in systems["trf_mfcc_k128"]["dev"] and "D01_0001" in (
        recipe / "data" / "dev" / "utt2spk").read_text()
    assert [n for n in SYSTEMS.split() if "dev" in systems[n]] == ["trf_mfcc_k128"]
    assert "## Dev (`dev`)" in (recipe / "RESULTS.md").read_text()
    md = (recipe / "RESULTS.md").read_text()
    assert "Sealed sets scored under this configuration: test 1 time." in md.split("## Environment")[0]
    claims = headline_of_run(recipe)
    assert any("zerospeech-libriabx2" in c for c in claims) and claims[-1].startswith("resynthesis in the target")
    for title in ("Table 1 shape", "Table 2 shape", "Table 3 shape", "Reference row: raw MFCC", "mean ± sd over seeds"):
        assert title in md
    assert "| 21.91 | 170.42 |" in md  # the paper's numbers stand beside ours
    assert (recipe / "exp" / "images" / "abx_vs_bitrate.png").stat().st_size > 5000
    assert "![ABX vs bitrate](images/RESULTS/abx_vs_bitrate.png)" in md
    assert (recipe / "images" / "RESULTS" / "abx_vs_bitrate.png").is_file()


def test_resynthesis_in_target_voice(recipe):
    assert (recipe / "exp" / "inverter_trf_mfcc_k128" / "V001" / "valid.loss.best.pth").is_file()  # one per voice
    inv = recipe / "exp" / "inverter_trf_mfcc_k128" / "resynth_test"
    scp = dict(l.split(maxsplit=1) for l in (inv / "wav.scp").read_text().splitlines())
    assert set(scp) == {l.split()[0] for l in (recipe / "data" / "test" / "synthesis_list").read_text().splitlines()}
    wave, sr = soundfile.read(next(iter(scp.values())).strip())
    assert sr == 16000 and 0.0 < np.abs(wave).max() < 1.0 and np.std(wave) > 1e-4  # not silent, not clipped
    inverter = json.loads((recipe / "exp" / "results.json").read_text())["systems"]["inverter"]["test"]
    assert inverter["resynth_utts"] == len(scp)
    # the headline MCD is pooled over the DTW path's frames of every resynthesised utterance
    per = json.loads((inv / "mcd.json").read_text())["per_utt"]
    assert set(per) == set(scp)
    pooled = sum(m["mcd_db"] * m["frames"] for m in per.values()) / sum(m["frames"] for m in per.values())
    assert inverter["mcd"] == pytest.approx(pooled, rel=1e-9)
    # its gap to the unconverted source recordings comes with a paired bootstrap over the utterances both scored
    assert len(scp) >= 2 and inverter["mcd_source_gap"]["method"] == f"bootstrap over {len(scp)} utterances"
    # the F0 analysis asked for (--mcd_f0_method), on record and named in RESULTS.md
    assert json.loads((inv / "mcd.json").read_text())["settings"]["f0_method"] == "dio" == inverter["mcd_f0_method"]
    assert "mel-cepstra of WORLD analysis with dio F0" in (recipe / "RESULTS.md").read_text(encoding="utf-8")


def test_stage_11_writes_a_valid_zerospeech_2019_submission(recipe):
    from local_models.common.datadir import read_table
    from local_models.vqvae.submission import synthesis_names, validate_submission

    sub = recipe / "exp" / "submission_test"
    utts = list(read_table(recipe / "data" / "test" / "wav.scp"))
    synthesis = read_table(recipe / "exp" / "inverter_trf_mfcc_k128" / "resynth_test" / "synthesis_list")
    validate_submission(sub, {"english": (utts, synthesis)})
    test = sub / "2019" / "english" / "test"
    assert sorted(p.stem for p in test.glob("*.txt")) == sorted(utts)
    assert sorted(p.name for p in test.glob("*.wav")) == sorted(synthesis_names(synthesis).values())
    # one frame a line: the inverter system's codes (stage 5) as codebook embeddings
    codes = recipe / "exp" / "trf_mfcc_k128" / "codes_test"
    frames = np.loadtxt(test / f"{utts[0]}.txt", ndmin=2)
    want = np.load(codes / "codebook.npy")[np.load(codes / "codes" / f"{utts[0]}.npy")]
    np.testing.assert_allclose(frames, want, rtol=1e-5, atol=1e-6)
    assert (sub / "2019" / "code" / "model.py").is_file() and (sub / "2019" / "code" / "stages.sh").is_file()


def test_malformed_system_fails_before_any_work(recipe):
    proc = run(recipe, "--systems", "trf_mfcc_k128 lstm_k3", check=False)
    assert proc.returncode != 0 and "'lstm_k3' is not" in proc.stderr and "Stage 1" not in proc.stderr


def test_rescoring_is_idempotent_and_no_second_look_from_a_clean_commit(recipe):
    """A rescoring reproduces every number; from a clean commit the same outputs scored again are a rescoring, from a
    modified checkout another look at the sealed test set, said in RESULTS.md. (The scoring commit and date may
    differ: the checkout can move between two runs.)"""
    def state():
        results = _results(recipe)
        looks = results.pop("sealed_looks")
        for key in ("commit", "environment", "hardware"):
            results.pop(key)
        md = [l for l in (recipe / "RESULTS.md").read_text().splitlines()
              if not l.startswith("Sealed sets scored") and "commit" not in l.lower()]
        return results, md, (recipe / "exp/trf_mfcc_k128/abx_test.json").read_bytes(), looks

    *before, looks = state()
    run(recipe, "--stage", "6", "--stop-stage", "6", *SMALL)
    run(recipe, "--stage", "9", "--stop-stage", "9", *SMALL)
    *after, again = state()
    assert before == after
    if clean_commit(git_commit()):
        assert looks["looks"] == {"test": 1} and again == {**looks, "rescored": {"test": 1}}
    else:
        assert looks["looks"] == {"test": 1} and again == {"config": looks["config"], "looks": {"test": 2}}
        assert "test 2 times (test scored more than once under this configuration" in (recipe / "RESULTS.md").read_text()
    # a changed output (one system's bitrate record) is another look at the set
    bitrate = recipe / "exp/trf_mfcc_k128/codes_test/bitrate.json"
    keep = bitrate.read_bytes()
    try:
        bitrate.write_bytes(keep + b"\n")
        run(recipe, "--stage", "9", "--stop-stage", "9", *SMALL)
        assert _results(recipe)["sealed_looks"]["looks"] == {"test": again["looks"]["test"] + 1}
    finally:
        bitrate.write_bytes(keep)
    # another configuration (a Griffin-Lim iteration count that changes the resynthesis) starts a new count
    run(recipe, "--stage", "9", "--stop-stage", "9", *SMALL, "--griffin-lim-iters", "5")
    other = _results(recipe)["sealed_looks"]
    assert other["config"] != looks["config"] and other["looks"] == {"test": 1}
    run(recipe, "--stage", "9", "--stop-stage", "9", *SMALL)  # back to the module's configuration


def test_encode_unseen_data_dir(recipe):
    """An unseen 22.05 kHz recording with only wav.scp, straight to the encoding stage (stage 2 never saw it):
    features (resampled to 16 kHz), codes and bitrate."""
    wave, sr = soundfile.read(next((recipe / "downloads").rglob("T*.wav")))
    path = recipe / "new.wav"
    soundfile.write(path, np.interp(np.arange(0, len(wave), sr / 22050), np.arange(len(wave)), wave), 22050)
    d = recipe / "data" / "new"
    d.mkdir()
    (d / "wav.scp").write_text(f"X9_0001 {path}\n")
    (d / "utt2spk").write_text("X9_0001 X9\n")
    (d / "spk2utt").write_text("X9 X9_0001\n")
    run(recipe, "--stage", "5", "--stop-stage", "5", *SMALL, "--test-sets", "new", "--dev-set", "")
    assert (recipe / "dump" / "mfcc" / "new" / "feats.scp").exists()
    codes = np.load(recipe / "exp" / "trf_mfcc_k128" / "codes_new" / "codes" / "X9_0001.npy")
    assert codes.ndim == 1 and abs(len(codes) - len(wave) / sr / 0.04) <= 2
    got = json.loads((recipe / "exp" / "trf_mfcc_k128" / "codes_new" / "bitrate.json").read_text())
    # the duration is the audio's as read (22.05 kHz, resampled): the same seconds as the file's
    rate, used = _bitrate_by_hand(recipe / "exp" / "trf_mfcc_k128" / "codes_new",
                                  recipe / "dump" / "mfcc" / "new" / "utt2dur")
    assert got["bitrate"] == pytest.approx(rate, rel=1e-9) and got["codes_used"] == used
    assert float((recipe / "dump" / "mfcc" / "new" / "utt2dur").read_text().split()[1]) == pytest.approx(
        len(wave) / sr, abs=0.01)


def test_every_trained_system_is_packed_with_its_metrics(recipe):
    from local_models.common.pack import read_card

    results = json.loads((recipe / "exp" / "results.json").read_text())["systems"]
    for name in SYSTEMS.split():
        card = read_card(recipe / "exp" / name / "packed" / "model.tar.gz")
        assert card["kind"] == "encoder" and card["system"] == name and card["corpus"] == "mini"
        assert card["metrics"]["test"]["abx"] == results[name]["test"]["abx"]
        assert card["metrics"]["test"]["bitrate"] == results[name]["test"]["bitrate"]
        assert card["codebook_size"] == results[name]["test"]["num_codes"] and card["frame_rate"] == 25.0
        assert card["sample_rate"] == 16000 and card["training"]["utterances"] > 10
    card = read_card(recipe / "exp" / "inverter_trf_mfcc_k128" / "packed" / "model.tar.gz")
    assert card["kind"] == "inverter" and card["voices"] == ["V001"] and card["codebook_size"] == 128
    assert card["metrics"]["test"]["mcd"] == results["inverter"]["test"]["mcd"]
    assert card["resynthesis"]["griffin_lim_iters"] == 4


def _cli(module, *args, cwd):
    """A console command from a directory outside the recipe, on the archive copies alone."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "SPEECH_RECIPES_CACHE": str(cwd / "cache")}
    return subprocess.run([str(ROOT / "tools" / "venv" / "bin" / "python"), "-m", f"local_models.bin.{module}",
                           *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True)


def test_packed_models_alone_turn_new_speech_into_units_and_back(recipe, tmp_path):
    """The VQ-VAE and inverter archives copied elsewhere: a voice and sentence no set of the run has (espeak-ng's
    British English voice; the corpus is en-us), at 22.05 kHz -> units at 25/s with their bitrate -> speech in V001;
    a test utterance gives exactly the recipe's own codes (stage 5)."""
    from local_models.common import synth

    vq = shutil.copy(recipe / "exp" / "trf_mfcc_k128" / "packed" / "model.tar.gz", tmp_path / "vq.tar.gz")
    inv = shutil.copy(recipe / "exp" / "inverter_trf_mfcc_k128" / "packed" / "model.tar.gz", tmp_path / "inv.tar.gz")
    utt = synth.synthesize("The orange kettle whistled twice in the quiet kitchen.", synth.Voice("en-gb", "f2"))
    soundfile.write(tmp_path / "fresh.wav", utt.wave, utt.sample_rate)
    test_utt, test_wav = (recipe / "data" / "test" / "wav.scp").read_text().splitlines()[0].split()
    proc = _cli("speech_to_units", "fresh.wav", test_wav, "--model", vq, "-o", "units.txt", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = {l.split()[0]: np.array(l.split()[1:], dtype=int) for l in (tmp_path / "units.txt").read_text().splitlines()}
    fresh = rows["fresh"]
    duration = len(utt.wave) / utt.sample_rate
    assert utt.sample_rate == 22050 and abs(len(fresh) - duration * 25) <= 1 and fresh.max() < 128
    p = np.bincount(fresh) / len(fresh)
    want = len(fresh) / duration * -sum(x * np.log2(x) for x in p if x > 0)
    got = float(proc.stderr.split("fresh: ")[1].split("bitrate ")[1].split()[0])
    assert got == pytest.approx(want, abs=0.01) and 0 < got <= 25 * 7
    assert "(codebook 128, 25 units/s)" in proc.stderr
    recipe_codes = np.load(recipe / "exp" / "trf_mfcc_k128" / "codes_test" / "codes" / f"{test_utt}.npy")
    assert rows[Path(test_wav).stem].tolist() == recipe_codes.tolist()
    (tmp_path / "fresh.units").write_text(f"fresh {' '.join(map(str, fresh))}\n")
    proc = _cli("units_to_speech", "fresh.units", "--model", inv, "--speaker", "V001", "-o", "out.wav", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    wave, sr = soundfile.read(tmp_path / "out.wav")
    assert sr == 16000 and abs(len(wave) / sr - len(fresh) * 0.04) < 0.02
    assert np.sqrt(np.mean(wave ** 2)) > 1e-3 and np.abs(wave).max() < 0.999  # not silent, not clipped
    (tmp_path / "bad.units").write_text("fresh 1 2 3\nother 4 128 5\n")
    proc = _cli("units_to_speech", "bad.units", "--model", inv, "-o", "outdir", cwd=tmp_path)
    assert proc.returncode == 2 and "bad.units:2: 'other': unit 128 at position 1" in proc.stderr
    assert not (tmp_path / "outdir").exists()


def test_sealed_test_set_decides_nothing(recipe, tmp_path):
    """The sealed test set (and all made from it: features, codes, ABX, resynthesis, submission) moved aside, the
    scoring stage declares the same ordering-check candidates (the only choice stage 9 makes: no candidate is picked
    on test) and counts no look, having scored nothing sealed. Everything is put back."""
    keep = {p: p.read_bytes() for p in (recipe / "exp" / "results.json", recipe / "RESULTS.md",
                                        recipe / "exp" / "sealed_looks.tsv")}
    before = _results(recipe)
    sealed = [recipe / "data" / "test", *recipe.glob("dump/*/test"), *recipe.glob("exp/*/codes_test"),
              *recipe.glob("exp/*/abx_test.json"), *recipe.glob("exp/inverter_*/resynth_test"),
              recipe / "exp" / "submission_test",
              recipe / "exp" / "results.json"]  # its merged systems hold the test ABX: a pick must not need them
    moved = []
    try:
        for i, p in enumerate(sealed):
            moved.append((p, shutil.move(p, tmp_path / str(i))))
        run(recipe, "--stage", "9", "--stop-stage", "9", *SMALL)
        after = _results(recipe)
        assert after["ordering_candidates"] == before["ordering_candidates"] == ["trf_mfcc_k128"]
        # the candidate is picked on dev, which is still there: the same pick, from the same dev ABX
        assert after["ordering_pick"] == before["ordering_pick"]
        assert before["ordering_pick"]["dev_set"] == "dev" and before["ordering_pick"]["picked"] == "trf_mfcc_k128"
        assert after["sealed_looks"]["looks"] == {}  # nothing of the test set was scored: no look
        assert "No sealed set was scored." in (recipe / "RESULTS.md").read_text()
    finally:
        for p, aside in moved:
            shutil.move(aside, p)
        for p, data in keep.items():
            p.write_bytes(data)
