"""ZeroSpeech run.sh --systems presets (local_models/vqvae/stages.sh expand_systems): every paper row, the seed
replicates."""
import subprocess
from pathlib import Path

from local_models.vqvae.report import PAPER

ROOT = Path(__file__).resolve().parents[1]
STAGES = ROOT / "local_models" / "vqvae" / "stages.sh"


def expand(words: str) -> list:
    script = f'. "{ROOT}/utils/stage_lib.sh"; . "{STAGES}"; expand_systems {words}'
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    return out.split()


def test_tables_preset_is_every_row_of_the_papers_tables():
    assert sorted(expand("tables")) == sorted(PAPER)


def test_default_and_seeds15_presets():
    default = expand("default")
    assert default[:len(PAPER)] == expand("tables")
    for base in ("trf_mfcc_k128", "conv_mfcc_k256", "trf_mfcc_k256"):
        assert [n for n in default if n.startswith(base + "_seed")] == [f"{base}_seed{i}" for i in range(1, 5)]
    seeds15 = expand("seeds15")
    assert seeds15[:len(default)] == default
    for base in ("trf_mfcc_k256", "conv_mfcc_k256"):
        assert sum(n == base or n.startswith(base + "_seed") for n in seeds15) == 15
    assert sum(n.startswith("trf_mfcc_k128_seed") for n in seeds15) == 4


def test_names_mix_with_presets_once_each_in_order():
    assert expand("trf_mfcc_k64 tables trf_mfcc_k64_seed3")[:2] == ["trf_mfcc_k64", "trf_mfcc_k128"]
    got = expand("trf_mfcc_k64 tables trf_mfcc_k64_seed3")
    assert len(got) == len(set(got)) == len(PAPER) + 1 and got[-1] == "trf_mfcc_k64_seed3"


def _run_sh(tmp_path, *args, stages=("--stage", "1", "--stop-stage", "0")):
    """The recipe's run.sh in a copy of its dir (no data; by default stopping before stage 1: the checks run_stages
    makes)."""
    import os
    import shutil

    dst = tmp_path / "unit1"
    if not dst.is_dir():
        shutil.copytree(ROOT / "egs" / "zerospeech2019" / "unit1", dst,
                        ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads", "RESULTS*.md"))
    return subprocess.run(["bash", "run.sh", *stages, *args], cwd=dst, capture_output=True, text=True,
                          env={**os.environ, "MAIN_ROOT": str(ROOT)})


def test_the_candidate_is_never_picked_on_a_sealed_or_test_set(tmp_path):
    """--dev_set naming the sealed test set, or one of --test_sets, stops before any work; a missing dev set stops
    the stages that read it with the file named (it is never silently dropped for a Bonferroni comparison)."""
    for args in (("--dev-set", "test"), ("--dev-set", "other", "--test-sets", "test other"),
                 ("--sealed-sets", "test dev")):
        proc = _run_sh(tmp_path, *args)
        assert proc.returncode == 1 and "is a sealed set" in proc.stderr and "--dev_set" in proc.stderr, proc.stderr
    assert _run_sh(tmp_path).returncode == 0 and _run_sh(tmp_path, "--dev-set", "").returncode == 0
    proc = _run_sh(tmp_path, "--systems", "trf_mfcc_k128", "--inverter-system", "trf_mfcc_k128",
                   stages=("--stage", "9", "--stop-stage", "9"))
    assert proc.returncode != 0 and "data/dev/wav.scp" in proc.stderr, proc.stderr
