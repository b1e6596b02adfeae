"""benchmarks/gpu_check.py on the CPU (`--device cpu --steps 1`): every recipe's paper-size configs train through
run.sh, decode, and are timed and compared, so the script is known to work up to the device; and the RESULTS.md
section it feeds."""
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from local_models.common import gpu_report

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").exists(),
                                reason="needs tools/venv (make install)")
sys.path.insert(0, str(ROOT / "benchmarks"))
import gpu_check  # noqa: E402

@pytest.fixture(scope="module")
def check(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gpu_check")
    out = tmp / "gpu_check.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_check.py"), "--device", "cpu", "--steps", "1",
                           "--max-batch", "1", "--nj", "1", "--precisions", "fp32", "--out", str(out), "--workdir", str(tmp / "w")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:] + proc.stdout[-2000:]
    return json.loads(out.read_text()), tmp / "w", proc.stdout


def test_every_recipe_trains_its_paper_size_configs_and_decodes(check):
    result, work, _ = check
    assert not result["errors"]
    expected = {(r.name, m) for r in gpu_check.RECIPES for m in (r.cpu_models or r.models)}
    assert {(r["recipe"], r["model"]) for r in result["rows"]} == expected
    for recipe in gpu_check.RECIPES:
        d = work / recipe.name.replace("/", "_")
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
    missing = gpu_report.section("kss/tts1", tmp_path / "none.json")
    assert "Not measured on a GPU yet" in "\n".join(missing)
    cpu_file = tmp_path / "cpu.json"
    cpu_file.write_text(json.dumps(result))
    assert "Not measured on a GPU yet" in "\n".join(gpu_report.section("kss/tts1", cpu_file))  # a CPU run is no GPU run
    gpu = json.loads(json.dumps(result))
    gpu["environment"].update(device="cuda", gpu="NVIDIA H200")
    gpu_file = tmp_path / "gpu.json"
    gpu_file.write_text(json.dumps(gpu))
    lines = gpu_report.section("kss/tts1", gpu_file)
    text = "\n".join(lines)
    assert "## Paper size on one GPU" in text and "NVIDIA H200" in text
    rows = [l for l in lines if l.startswith("| jdit |")]
    assert len(rows) == 1 and "300,000 steps" in rows[0]
    assert "| big_salad |" not in text  # another recipe's rows stay out


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
            "stage_s": {f"{rec}:train": 1.0 for rec in recipes}, "not_measured": {}, "runs": [f"run on {gpu}"]}


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
