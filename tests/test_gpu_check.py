"""benchmarks/gpu_check.py on the CPU (`--device cpu --steps 1`): two recipes' paper-size configs (SAD: three nets;
ZeroSpeech: a second training on the first's output, and --resume) train through run.sh, decode, and are timed and
compared, so the script is known to work up to the device; every recipe's run.sh calls, on both devices, are
checked to be options its run.sh accepts; and the RESULTS.md section it feeds. (The other three recipes'
paper-size configs train a step in tests/test_paper_configs.py; the whole CPU check of all five took 5.5 min of
the suite's time, three of them 2.5 min.)"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from local_models.common import gpu_report

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").exists(),
                                reason="needs tools/venv (make install)")
sys.path.insert(0, str(ROOT / "benchmarks"))
import gpu_check  # noqa: E402

CPU_RECIPES = ("fearless_steps/sad1", "zerospeech2019/unit1")
CHECKED = [r for r in gpu_check.RECIPES if r.name in CPU_RECIPES]

@pytest.fixture(scope="module")
def check(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gpu_check")
    out = tmp / "gpu_check.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_check.py"), "--device", "cpu", "--steps", "1",
                           "--max-batch", "1", "--nj", "1", "--precisions", "fp32", "--out", str(out), "--workdir", str(tmp / "w"),
                           "--recipes", " ".join(CPU_RECIPES)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:] + proc.stdout[-2000:]
    return json.loads(out.read_text()), tmp / "w", proc.stdout


def test_each_recipe_trains_its_paper_size_configs_and_decodes(check):
    result, work, _ = check
    assert not result["errors"] and len(CHECKED) == len(CPU_RECIPES)
    expected = {(r.name, m) for r in CHECKED for m in (r.cpu_models or r.models)}
    assert {(r["recipe"], r["model"]) for r in result["rows"]} == expected
    for recipe in CHECKED:
        d = work / recipe.name.replace("/", "_")
        # every training's time is on record (what a run cut at its time limit would have said)
        trainings = result["trainings"][recipe.name]
        assert trainings and all(re.fullmatch(r"exp/\S+, start-up \d+ s, ended after \d+ s", t) for t in trainings), trainings
        for name, m in recipe.models.items():
            if recipe.cpu_models and name not in recipe.cpu_models:
                continue
            conf = yaml.safe_load((d / m.exp / "config.yaml").read_text())
            # trained through run.sh with --ngpu 0 on the CPU, for one step...
            assert conf["ngpu"] == 0 and conf["num_iters_per_epoch"] == 1 and conf["max_epoch"] == 1
            # ... from the paper-size config (no _tiny / _smoke suffix)
            used = re.search(r"--config (\S+)", (d / m.exp / "run.sh").read_text()).group(1)
            assert re.fullmatch(r"conf/tuning/train(_[a-z0-9_]+)?\.yaml", used) and "_tiny" not in used \
                and "_smoke" not in used, used
            paper = yaml.safe_load((d / used).read_text())
            for key in ("optim", "scheduler"):
                if key in paper and key in conf:
                    assert conf[key] == paper[key]


@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_every_recipes_run_sh_calls_are_options_its_run_sh_takes(tmp_path, device):
    """Every run.sh call gpu_check makes, of all five recipes (the three trained above and the two that are not),
    parsed by the recipe's own run.sh (a misspelt or renamed option fails there, on the device, otherwise)."""
    for r in gpu_check.RECIPES:
        d = tmp_path / r.name.replace("/", "_")
        shutil.copytree(ROOT / "egs" / r.name, d,
                        ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads", "RESULTS*.md"))
        calls = gpu_check.run_sh_calls(r, device, steps=1, max_batch=2, nj=1)
        assert list(calls) == ["data", "train", *(["train2"] if r.train2 else []), "decode"]
        assert all("--ngpu" in calls[s] for s in ("train", "decode")) and "--ngpu" not in calls["data"]
        for step, opts in calls.items():
            proc = subprocess.run(["bash", "run.sh", *opts, "--stage", "100", "--stop-stage", "0"], cwd=d,
                                  capture_output=True, text=True, env={**os.environ, "MAIN_ROOT": str(ROOT)})
            # on a machine without a GPU the options parse, then the device check refuses --ngpu 1
            no_gpu = device == "cuda" and step != "data" and "nvidia-smi lists 0 GPU(s) here" in proc.stderr
            assert proc.returncode == 0 or no_gpu, (r.name, step, proc.stderr[-2000:])
        bad = subprocess.run(["bash", "run.sh", *calls["train"], "--no-such-option", "1", "--stage", "100"],
                             cwd=d, capture_output=True, text=True, env={**os.environ, "MAIN_ROOT": str(ROOT)})
        assert bad.returncode != 0 and "--no-such-option" in bad.stderr, r.name  # the check can fail


def test_resume_decodes_and_measures_without_retraining(tmp_path, check):
    """--resume on a work dir whose models are trained (a device call cut off after training): no training step,
    the checkpoints untouched, the models decoded and measured again."""
    _, work, _ = check
    zs = next(r for r in gpu_check.RECIPES if r.name == "zerospeech2019/unit1")
    d = work / zs.name.replace("/", "_")
    ckpts = {m.exp: (d / m.exp / m.checkpoint).stat().st_mtime_ns for m in zs.models.values()}
    out = tmp_path / "resumed.json"
    assert gpu_check.main(["--stage", "run", "--device", "cpu", "--steps", "1", "--max-batch", "1", "--nj", "1",
                           "--precisions", "fp32", "--recipes", "unit1", "--workdir", str(work), "--resume",
                           "--out", str(out)]) == 0
    resumed = json.loads(out.read_text())
    assert set(resumed["stage_s"]) == {f"{zs.name}:decode"}
    assert resumed["trainings"][zs.name] == check[0]["trainings"][zs.name]  # the first call's record, kept
    assert {r["model"] for r in resumed["rows"]} == set(zs.models)
    assert {m.exp: (d / m.exp / m.checkpoint).stat().st_mtime_ns for m in zs.models.values()} == ckpts


def test_rows_hold_timings_and_parity(check):
    result, _, stdout = check
    assert result["environment"]["device"] == "cpu" and result["steps"] == 1
    for r in result["rows"]:
        t = r["fp32"]
        assert t["step_s"] > 0 and math.isfinite(t["step_s"]) and t["peak_gib"] is None  # no GPU memory on the CPU
        assert t["samples_per_s"] == pytest.approx(r["batch"] / t["step_s"])
        # the projection scales the capped batch (1) to the paper's
        assert t["projected_h"] == pytest.approx(r["paper_steps"] * t["step_s"] / 3600 * r["paper_batch"] / r["batch"])
        assert r["batch"] == 1 and r["params_m"] > 0
        assert r["parity_max_rel"] == 0.0  # CPU vs CPU: the same numbers
    assert "| fearless_steps/sad1 | cnn1d |" in stdout


def test_results_section_names_what_was_measured(tmp_path, check):
    result, _, _ = check
    missing = gpu_report.section("fearless_steps/sad1", tmp_path / "none.json")
    assert "Not measured on a GPU yet" in "\n".join(missing)
    cpu_file = tmp_path / "cpu.json"
    cpu_file.write_text(json.dumps(result))
    assert "Not measured on a GPU yet" in "\n".join(gpu_report.section("fearless_steps/sad1", cpu_file))  # no GPU run
    gpu = json.loads(json.dumps(result))
    gpu["environment"].update(device="cuda", gpu="NVIDIA H200")
    gpu_file = tmp_path / "gpu.json"
    gpu_file.write_text(json.dumps(gpu))
    lines = gpu_report.section("fearless_steps/sad1", gpu_file)
    text = "\n".join(lines)
    assert "## Paper size on one GPU" in text and "NVIDIA H200" in text
    rows = [l for l in lines if l.startswith("| cnn1d |")]
    assert len(rows) == 1 and "50,000 steps" in rows[0]
    assert "| trf_mfcc_k128 |" not in text and "| inverter |" not in text  # another recipe's rows stay out


def test_committed_gpu_results_give_rows_or_a_reason():
    """The committed runs (benchmarks/results/gpu_check.json, H100 then H200 merged): measured recipes get rows on
    the machine that measured them, a recipe that did not finish its error."""
    result = json.loads(gpu_report.RESULTS_FILE.read_text())
    assert result["environment"]["device"] == "cuda"
    sad = "\n".join(gpu_report.section("fearless_steps/sad1"))
    assert "| cnn1d |" in sad and "| rnn |" in sad and "Not measured" not in sad and "H100" in sad
    tcstar = "\n".join(gpu_report.section("tcstar/tts1"))
    assert "| big_salad_win |" in tcstar and "H200" in tcstar and "Not measured" not in tcstar
    kss = "\n".join(gpu_report.section("kss/tts1"))
    assert "FAILED on the device: kss/tts1" in kss and "--timeout of 140" in kss
    for row in result["rows"]:  # every measured model ran on the GPU as it does on the CPU
        assert row["parity_max_rel"] < 1e-3, row


def _result(gpu, recipes, steps=10):
    env = {"device": "cuda", "gpu": gpu, "torch": "2.11", "cuda": "13.0", "python": "3.12", "date": "2026-11-27"}
    rows = [{"recipe": rec, "model": f"m_{rec.split('/')[0]}", "params_m": 1.0, "batch": 2, "paper_batch": 2,
             "paper_steps": 10, "schedule": "s", "parity_max_rel": 0.0, "fp32": {"step_s": 0.5}} for rec in recipes]
    return {"environment": env, "steps": steps, "rows": rows, "errors": [],
            "stage_s": {f"{rec}:train": 1.0 for rec in recipes}, "not_measured": {}, "runs": [f"run on {gpu}"],
            "trainings": {rec: [f"exp/a: {gpu}"] for rec in recipes}}


def test_merge_keeps_each_recipes_machine(tmp_path):
    old = _result("H100", ["fearless_steps/sad1", "kss/tts1"])
    old["not_measured"] = {"tcstar/tts1": "time ran out"}
    out = tmp_path / "gpu_check.json"
    out.write_text(json.dumps(old))
    new = tmp_path / "new.json"
    new.write_text(json.dumps(_result("H200", ["kss/tts1", "tcstar/tts1"])))
    assert gpu_check.main(["--stage", "merge", "--merge", str(new), "--out", str(out)]) == 0
    merged = json.loads(out.read_text())
    assert sorted((r["recipe"], merged["recipe_environment"][r["recipe"]]["gpu"]) for r in merged["rows"]) == [
        ("fearless_steps/sad1", "H100"), ("kss/tts1", "H200"), ("tcstar/tts1", "H200")]
    assert merged["not_measured"] == {} and merged["runs"] == ["run on H100", "run on H200"]
    # each recipe's training times come from the run that measured it
    assert merged["trainings"] == {"fearless_steps/sad1": ["exp/a: H100"], "kss/tts1": ["exp/a: H200"],
                                   "tcstar/tts1": ["exp/a: H200"]}
    assert "on H100" in "\n".join(gpu_report.section("fearless_steps/sad1", out))
    tcstar = "\n".join(gpu_report.section("tcstar/tts1", out))
    assert "on H200" in tcstar and "| m_tcstar |" in tcstar and "Not measured" not in tcstar
    assert "Measured instead on H100 (torch 2.11, 2026-11-27): fearless_steps/sad1." in gpu_report.table(merged)
    # a run of another length is not folded in: its projections would not compare
    new.write_text(json.dumps(_result("H200", ["kss/tts1"], steps=3)))
    with pytest.raises(SystemExit, match="--steps 3 differs"):
        gpu_check.main(["--stage", "merge", "--merge", str(new), "--out", str(out)])
    with pytest.raises(SystemExit, match="no such file"):
        gpu_check.main(["--stage", "merge", "--merge", str(tmp_path / "missing.json"), "--out", str(out)])


def _train_log(path: Path, lines):
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(["# python -m x", "# Started at Sat Nov 28 04:55:56 UTC 2026", "#", *lines]) + "\n")


def test_training_logs_say_which_training_held_a_step_up(tmp_path):
    """A step cut at --timeout lands each training's start-up and time in the JSON (the device's logs are lost)."""
    stamp = "[vm] 2026-11-28 {} (trainer:336) INFO: {}"
    _train_log(tmp_path / "exp" / "tts_jdit" / "train.log",
               [stamp.format("04:56:14,100", "1/1epoch started"), stamp.format("04:56:20,000", "1epoch results"),
                "# Accounting: time=28 threads=1", "# Ended (code 0) at Sat Nov 28 04:56:24 UTC 2026"])
    _train_log(tmp_path / "exp" / "tts_tacotron2" / "train.log",
               [stamp.format("04:56:25,000", "1/1epoch started"), "# Accounting: time=9 threads=1",
                "# Ended (code 1) at Sat Nov 28 04:56:05 UTC 2026"])
    _train_log(tmp_path / "exp" / "tts_transformer" / "train.log",
               [stamp.format("04:56:30,000", "1/1epoch started"), stamp.format("04:58:36,000", "valid started")])
    (tmp_path / "exp" / "tts_fastspeech").mkdir()  # not started: no log, no line
    assert gpu_check.training_logs(tmp_path) == [
        "exp/tts_jdit, start-up 18 s, ended after 28 s",
        "exp/tts_tacotron2, start-up 29 s, ended after 9 s, FAILED (code 1)",
        "exp/tts_transformer, start-up 34 s, NOT ended, last line 160 s after its start: "
        + stamp.format("04:58:36,000", "valid started")]


def test_resume_skips_training_only_when_every_measured_model_is_there(tmp_path):
    kss = next(r for r in gpu_check.RECIPES if r.name == "kss/tts1")
    for name, m in kss.models.items():
        if name == "fastspeech":  # the last one trained: a call cut off before it ends
            continue
        (tmp_path / m.exp).mkdir(parents=True)
        for f in ("config.yaml", m.checkpoint):
            (tmp_path / m.exp / f).write_text("x")
    assert not gpu_check.trained(tmp_path, kss, "cuda")
    assert gpu_check.trained(tmp_path, kss, "cpu")  # the CPU run measures JDI-T only (cpu_models)
    fs = kss.models["fastspeech"]
    (tmp_path / fs.exp).mkdir(parents=True)
    (tmp_path / fs.exp / "config.yaml").write_text("x")
    assert not gpu_check.trained(tmp_path, kss, "cuda")  # a config without its checkpoint: not trained
    (tmp_path / fs.exp / fs.checkpoint).write_text("x")
    assert gpu_check.trained(tmp_path, kss, "cuda")


def test_terminating_gpu_check_kills_the_running_recipe(monkeypatch):
    """A device call's time limit stops gpu_check with SIGTERM: the run.sh it waits for (its own session, with the
    trainings under it) must die too, or it would run on beside a later --resume call."""
    import signal
    import subprocess as sp

    proc = sp.Popen(["bash", "-c", "sleep 60 & wait"], start_new_session=True)
    monkeypatch.setattr(gpu_check, "_RUNNING", [proc])
    with pytest.raises(SystemExit) as stop:
        gpu_check._terminate(signal.SIGTERM, None)
    assert stop.value.code == 128 + signal.SIGTERM
    assert proc.wait(timeout=10) == -signal.SIGKILL
    # the child in the same group (a training) is gone as well: nothing of the group left running (a killed child
    # may stay a zombie until its new parent reaps it)
    for _ in range(50):
        states = sp.run(["ps", "-o", "stat=", "-g", str(proc.pid)], capture_output=True, text=True).stdout.split()
        if all(st.startswith("Z") for st in states):
            break
        time.sleep(0.1)
    assert all(st.startswith("Z") for st in states), states
