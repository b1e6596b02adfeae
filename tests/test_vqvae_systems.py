"""local_models/vqvae/systems.py: the ZeroSpeech recipe's names in one torch-free place, read by report.py and (through
its CLI) by stages.sh."""
import subprocess
import sys
from pathlib import Path

import pytest

from local_models.vqvae import report, systems

ROOT = Path(__file__).resolve().parents[1]


def cli(*args):
    return subprocess.run([sys.executable, "-m", "local_models.vqvae.systems", *args], cwd=ROOT,
                          capture_output=True, text=True)


def test_import_is_torch_free():
    code = ("import sys, local_models.vqvae.systems; "
            "print(sorted(m for m in ('torch', 'espnet', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_consumers_share_the_names():
    assert report.PAPER is systems.PAPER
    assert sorted(systems.TABLE_SYSTEMS) == sorted(systems.PAPER)
    for name in [*systems.PAPER, systems.INVERTER_SYSTEM, *systems.expand(["seeds15"])]:
        systems.parse(name)
    assert systems.INVERTER_SYSTEM in systems.PAPER
    stages = (ROOT / "local_models" / "vqvae" / "stages.sh").read_text()
    assert f"inverter_system={systems.INVERTER_SYSTEM}" in stages


@pytest.mark.parametrize("name, want", [
    ("trf_mfcc_k128", "mfcc --model_conf encoder_type=transformer --model_conf num_codes=128"),
    ("conv_logmel_k64_s5e-3_j0.05_seed2", "logmel --model_conf encoder_type=conv --model_conf num_codes=64 "
     "--model_conf smooth_weight=0.005 --model_conf jitter_p=0.05 --seed 2"),
])
def test_conf_query(name, want):
    proc = cli("conf", name)
    assert proc.returncode == 0 and proc.stdout.strip() == want


def test_expand_and_check_queries():
    tables = [s for s in systems.TABLE_SYSTEMS if s != "trf_mfcc_k64"]
    assert cli("expand", "trf_mfcc_k64 tables").stdout.split() == ["trf_mfcc_k64", *tables]  # each name once
    assert cli("check", "trf_mfcc_k128", "trf_mfcc_k128 conv_mfcc_k256").returncode == 0
    bad = cli("check", "trf_mfcc_k128", "trf_mfcc_k128 lstm_k3")
    assert bad.returncode == 1 and "'lstm_k3' is not (trf|conv)" in bad.stderr
    missing = cli("check", "trf_mfcc_k64", "trf_mfcc_k128")
    assert missing.returncode == 1 and "--inverter-system 'trf_mfcc_k64' is not in --systems" in missing.stderr
    assert cli("--help").returncode == 0


def test_dev_set_is_encoded_by_the_candidates_and_their_replicates_only():
    from local_models.vqvae.systems import CANDIDATES, on_dev

    assert CANDIDATES == ("trf_mfcc_k128", "trf_mfcc_k256")
    names = ["trf_mfcc_k128", "conv_mfcc_k256", "trf_mfcc_k256_seed3", "trf_mfcc_k64", "trf_mfcc_k128_s5e-3_j0.05",
             "trf_logmel_k128", "conv_mfcc_k256_seed1"]
    assert on_dev(names) == ["trf_mfcc_k128", "trf_mfcc_k256_seed3"]
    assert cli("dev", " ".join(names)).stdout.split() == ["trf_mfcc_k128", "trf_mfcc_k256_seed3"]
