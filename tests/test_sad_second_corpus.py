"""A second corpus through the SAD model's shared stages (local_models/sad/stages.sh), with no copied stage shell.

The fixture recipe is what a new corpus writes: path.sh and cmd.sh (as egs/fearless_steps/sad1's), a run.sh of
settings that sources the stages, and a local/data.sh (toy corpus: harmonic bursts in noise, 8 kHz). Stages 1-8 run
there with two cheap systems: the statistical SAD and the smoke-size 1-D CNN + HMM.
"""
import json
import shutil
from pathlib import Path

import pytest
from recipe_runner import run_recipe

from local_models.common.datadir import read_table
from local_models.sad.fs02 import read_system_output

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs" / "fearless_steps" / "sad1"
STAGES = ROOT / "local_models" / "sad" / "stages.sh"
pytestmark = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").exists(),
                                reason="needs tools/venv (make install)")

RUN_SH = """#!/usr/bin/env bash
# Bursts SAD (a test's second corpus): harmonic bursts in noise through the shared SAD stages.
set -euo pipefail
cd "$(dirname "$0")"
. ./path.sh
. ./cmd.sh
. "${MAIN_ROOT}/local_models/sad/stages.sh"
test_sets="dev eval"
systems="stat_sad cnn_hmm"
train_config_suffix=_smoke
seg_grid=""
corpus=bursts
nj=1
. parse_options.sh
run_stages
"""

DATA_SH = """#!/usr/bin/env bash
# Toy corpus: harmonic bursts ("speech", with their reference) in white noise, 8 kHz -> data/{train,dev,eval}
set -euo pipefail
. ./path.sh
seed=0
. parse_options.sh
python - "${seed}" <<'PY'
import sys
from pathlib import Path

import numpy as np
import soundfile

from local_models.common.datadir import write_data_dir
from local_models.sad.labels import write_rttm

rng, sr, seconds = np.random.default_rng(int(sys.argv[1])), 8000, 20
t = np.arange(seconds * sr) / sr
for split, n in (("train", 3), ("dev", 2), ("eval", 2)):
    wavs, ref = {}, {}
    for i in range(n):
        rec, x, iv, start = f"{split}_{i}", np.zeros_like(t), [], rng.uniform(0.5, 1.5)
        while start < seconds - 2:
            end = start + rng.uniform(0.4, 1.5)
            seg = (t >= start) & (t < end)
            f0 = rng.uniform(100, 200)
            x[seg] = sum(np.sin(2 * np.pi * f0 * k * t[seg]) / k for k in range(1, 15))
            iv.append((round(start, 2), round(end, 2)))
            start = end + rng.uniform(0.5, 2.0)
        wave = 0.1 * x / np.abs(x).max() + 0.01 * rng.standard_normal(len(t))
        path = Path("downloads/wav").resolve() / f"{rec}.wav"
        path.parent.mkdir(parents=True, exist_ok=True)
        soundfile.write(str(path), wave, sr, subtype="PCM_16")
        wavs[rec], ref[rec] = str(path), iv
    write_data_dir(f"data/{split}", wavs, {r: r for r in wavs}, extra={"reco2dur": {r: f"{seconds:.3f}" for r in wavs}})
    write_rttm(f"data/{split}/ref.rttm", ref)
PY
"""


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    """The fixture recipe, run through stages 1-8 (a `recipe` fixture: tests/conftest.py marks its tests slow)."""
    d = tmp_path_factory.mktemp("second_corpus") / "bursts_sad"
    (d / "local").mkdir(parents=True)
    (d / "conf" / "tuning").mkdir(parents=True)
    shutil.copy(RECIPE / "path.sh", d / "path.sh")
    cmd = [x for x in (RECIPE / "cmd.sh").read_text().splitlines() if x.startswith("cmd_setup ")]
    (d / "cmd.sh").write_text("# local jobs (cmd_backend=slurm: sbatch arrays with these resources)\n" + cmd[0] + "\n")
    shutil.copy(RECIPE / "conf" / "tuning" / "train_cnn1d_smoke.yaml", d / "conf" / "tuning")
    (d / "run.sh").write_text(RUN_SH)
    (d / "local" / "data.sh").write_text(DATA_SH)
    (d / "local" / "data.sh").chmod(0o755)
    proc = run_recipe(d, "--stop-stage", "8")
    return d, proc


def test_second_corpus_runs_the_shared_stages(recipe):
    d, proc = recipe
    assert len((d / "path.sh").read_text().splitlines()) <= 3 and len((d / "cmd.sh").read_text().splitlines()) <= 2
    run_sh = (d / "run.sh").read_text()
    assert len(run_sh.splitlines()) <= 20 and "stage_enabled" not in run_sh and "python" not in run_sh
    assert sorted(p.name for p in (d / "local").iterdir()) == ["data.sh"]  # no stage shell copied
    # every stage ran from the fixture's dir, into its own data/, dump/ and exp/
    for n in range(1, 9):
        assert f"Stage {n}:" in proc.stderr or n == 7, n  # stage 7 (the seg RNN grid): --seg-grid ""
    assert "Stage 9" not in proc.stderr and "(corpus: bursts)" in proc.stderr
    assert (d / "dump" / "train" / "feats.scp").is_file() and not (d / "dump" / "train_aug").exists()
    n_chunks = len((d / "dump" / "train" / "chunks" / "feats_shape").read_text().splitlines())
    assert (d / "exp" / "cnn1d" / "train_data.txt").read_text() == f"train: {n_chunks} chunks (no augmented copies)\n"
    assert "train_cnn1d_smoke.yaml" in (d / "exp" / "cnn1d" / "run.sh").read_text()
    assert (d / "exp" / "cnn1d" / "valid.loss.best.pth").exists()
    assert not (d / "exp" / "rnn").exists() and not (d / "exp" / "seg_grid").exists()
    results = json.loads((d / "exp" / "results.json").read_text())
    assert results["corpus"] == "bursts" and set(results["systems"]) == {"stat_sad", "cnn_hmm"}
    for system, m in results["systems"].items():
        # the threshold was tuned on dev: the best of its dev sweep, which the dev score is
        sweep = json.loads((d / "exp" / system / "threshold.sweep.json").read_text())["rows"]
        best = min(sweep, key=lambda r: (r["dcf"], r["threshold"]))
        assert float((d / "exp" / system / "threshold").read_text()) == best["threshold"]
        assert m["dev"]["dcf"] == pytest.approx(best["dcf"])
        for subset in ("dev", "eval"):
            dec = d / "exp" / system / f"decode_{subset}"
            assert (dec / "hyp.rttm").read_text().startswith(f"SPEAKER {subset}_")
            assert 0 <= m[subset]["dcf"] <= 1 and 0 <= m[subset]["f1"] <= 1
            # stage 8's FS02 system-output files: one per recording, tiling it (tests/test_layout_fs02.py: the format)
            durations = {r: float(v) for r, v in read_table(dec / "reco2dur").items()}
            assert sorted(p.stem for p in (dec / "fs02").iterdir()) == sorted(durations)
            for rec, dur in durations.items():
                rows = read_system_output(dec / "fs02" / f"{rec}.txt")
                assert rows[0][0] == 0 and rows[-1][1] == pytest.approx(dur)
    # clean bursts at ~20 dB: the statistical SAD finds them (no speech: DCF 0.75; all speech: 0.25)
    assert results["systems"]["stat_sad"]["eval"]["dcf"] < 0.1, results["systems"]["stat_sad"]["eval"]
    assert (d / "RESULTS.md").is_file()


def test_second_corpus_help_lists_the_stages_and_their_options(recipe):
    d, _ = recipe
    out = run_recipe(d, "--help").stdout
    assert "Bursts SAD (a test's second corpus)" in out and "Stages of the SAD model (local_models/sad" in out
    for opt in ("--systems", "--seg-grid", "--dev-set", "--ngpu", "--train-args", "--local-data-opts"):
        assert opt in out, opt
    assert "--train-config-suffix      # default: _smoke" in out  # the corpus's value, listed once
    assert out.count("--train-config-suffix") == 1


def test_fearless_steps_run_sh_is_settings_only():
    """The Fearless Steps recipe keeps no stage logic: its run.sh sources the shared stages; local/lib.sh is gone."""
    text = (RECIPE / "run.sh").read_text()
    assert len(text.splitlines()) <= 60
    assert '. "${MAIN_ROOT}/local_models/sad/stages.sh"' in text and text.rstrip().endswith("run_stages")
    assert "stage_enabled" not in text and not (RECIPE / "local" / "lib.sh").exists()
    assert STAGES.read_text().startswith("#!/usr/bin/env bash\n# ")
