"""Every recipe takes ESPnet's device options (--ngpu, --gpu_inference, --inference_nj, --inference_model,
--train_args, --inference_args) and passes them to ESPnet's trainer and to its decoding tools.

No GPU is needed: the jobs go through cmd.sh's Slurm backend to a fake `sbatch` that records its options and,
instead of running the job, writes the command into the job's log (the launcher then sees a finished job). Each
recipe gets just the files its training / decoding stage checks for, so only the command lines are under test;
the real training and decoding code paths run in the recipe smoke tests and in benchmarks/gpu_check.py.
"""
import os
import re
import shutil
import subprocess
import wave
from pathlib import Path

import pytest
from recipe_runner import run_recipe

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").exists(),
                                reason="needs tools/venv (make install)")

# Fake sbatch: append its options to ${SBATCH_RECORD}, then run the job script with the command echoed, not run.
FAKE_SBATCH = r"""#!/usr/bin/env bash
echo "sbatch $*" >> "${SBATCH_RECORD}"
script=${!#}
array=
for a in "$@"; do case "$a" in --array=*) array=${a#--array=} ;; esac; done
sed 's/bash -c "${cmd}"/echo "${cmd}"/' "${script}" > "${script}.echo"
if [ -z "${array}" ]; then unset SLURM_ARRAY_TASK_ID; bash "${script}.echo"; exit $?; fi
array=${array%%%*}
for ((i = ${array%-*}; i <= ${array#*-}; i++)); do SLURM_ARRAY_TASK_ID=$i SLURM_JOB_ID=42 bash "${script}.echo"; done
"""

TRAIN_ARGS = "--max_epoch 1 --num_iters_per_epoch 3"
INFER_ARGS = "--verbose-marker-xyz"  # not a real option: only its passage is checked


def touch(recipe: Path, *paths, text="x 1\n"):
    for p in paths:
        f = recipe / p
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)


def tiny_wav(path: Path, rate=16000):
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(rate)
        w.writeframes(b"\0\0" * rate)


def data_dir(recipe: Path, name: str, utt="spk1-u1", text=None):
    d = recipe / "data" / name
    tiny_wav(recipe / "wav" / f"{utt}.wav")
    touch(recipe, f"data/{name}/wav.scp", text=f"{utt} {recipe / 'wav' / (utt + '.wav')}\n")
    touch(recipe, f"data/{name}/utt2spk", text=f"{utt} spk1\n")
    touch(recipe, f"data/{name}/spk2utt", text=f"spk1 {utt}\n")
    if text is not None:
        touch(recipe, f"data/{name}/text", text=f"{utt} {text}\n")
    return d


# recipe -> (files its training stage checks, training run.sh options, the trained exp dir)
def sad_train(r):
    touch(r, "dump/train_aug/chunks/feats_shape", "dump/dev/chunks/feats_shape")  # train + its augmented copies
    return ["--stage", "4", "--stop-stage", "4", "--systems", "seg_rnn"], "exp/seg_rnn"


def multisoftmax_train(r):  # stage 5 (finetuning) needs nothing but the seed's checkpoint
    touch(r, "exp/multisoftmax/valid.loss.best.pth")
    opts = ["--stage", "5", "--stop-stage", "5", "--langs", "en", "--finetune", "multisoftmax"]
    return opts, "exp/ft_multisoftmax_en"


def kss_train(r):
    touch(r, "dump/train/text_shape.phn", "dump/dev/text_shape.phn", "data/train/feats.scp", "data/dev/feats.scp")
    return ["--stage", "4", "--stop-stage", "4", "--systems", "jdit", "--train-pwg", "false"], "exp/tts_jdit"


def tcstar_train(r):
    touch(r, "dump/M1/train_windows/pos")
    touch(r, "dump/M1/train/ling_shape", text="u 120,361\n")
    touch(r, "dump/M1/dur_stats.npz")  # stage 4 also trains the speaker's duration model
    touch(r, "dump/M1/train/lingp_shape", text="u 12,362\n")
    return ["--stage", "4", "--stop-stage", "4", "--speakers", "M1", "--systems", "big_salad"], "exp/M1/big_salad"


def zs_train(r):
    touch(r, "dump/train_spk2sid", text="s1 0\ns2 1\n")
    touch(r, "dump/mfcc/train/tr.scp")
    touch(r, "dump/mfcc/train/feats.shape", text="u 100,39\n")
    return ["--stage", "4", "--stop-stage", "4", "--systems", "trf_mfcc_k128",
            "--inverter-system", "trf_mfcc_k128"], "exp/trf_mfcc_k128"


# recipe -> (files its decoding stage checks, decoding run.sh options, the decoding tool's name)
def sad_decode(r):
    data_dir(r, "dev")
    return ["--stage", "5", "--stop-stage", "5", "--systems", "cnn_hmm", "--test-sets", "dev"], "sad_decode"


def multisoftmax_decode(r):
    touch(r, "exp/vanilla/latest.pth", "dump/fbank/en_test/feats.scp", "data/en_test/text_norm")
    touch(r, "data/en_test/utt2lid", text="spk1-u1 en\n")
    return ["--stage", "6", "--stop-stage", "6", "--langs", "en", "--systems", "vanilla", "--finetune", "",
            "--test-sets", "en_test"], "multisoftmax_decode"


def kss_decode(r):
    touch(r, "exp/tts_jdit/config.yaml", "data/test/text_phn", "data/test/text")
    # --dev-set "": no dev alignment (stage 5's other job, tested in test_recipe_kss.py): the decoder's options only
    return ["--stage", "5", "--stop-stage", "5", "--systems", "jdit", "--test-sets", "test", "--dev-set", ""], "jdit_synth"


def tcstar_decode(r):
    touch(r, "data/M1_test/lab.scp", "dump/M1/M1_test/ling.scp")
    # the duration model decodes first, from its own best checkpoint (its criterion is its loss, not MCD)
    touch(r, "exp/M1/duration/valid.loss.best.pth")
    return ["--stage", "5", "--stop-stage", "5", "--speakers", "M1", "--systems", "big_salad"], "salad_decode"


def zs_decode(r):
    data_dir(r, "test")
    touch(r, "dump/mfcc/test/feats.scp", "dump/mfcc/test/utt2dur")
    (r / "dump/mfcc/test/feats.shape").write_text("u 100,39\n")
    os.utime(r / "data/test/wav.scp", (1, 1))  # older than the features: stage 5 does not re-extract
    return ["--stage", "5", "--stop-stage", "5", "--systems", "trf_mfcc_k128", "--inverter-system", "trf_mfcc_k128",
            "--test-sets", "test", "--dev-set", ""], "vqvae_extract"  # no dev set: its encoding would be a 2nd call


RECIPES = {
    "fearless_steps/sad1": (sad_train, sad_decode, "sad_train"),
    "indic/asr1": (multisoftmax_train, multisoftmax_decode, "multisoftmax_train"),
    "kss/tts1": (kss_train, kss_decode, "jdit_train"),
    "tcstar/tts1": (tcstar_train, tcstar_decode, "salad_train"),
    "zerospeech2019/unit1": (zs_train, zs_decode, "vqvae_train"),
}


@pytest.fixture
def slurm(tmp_path):
    """A fake sbatch on PATH; returns (env, record file)."""
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    (bindir / "sbatch").write_text(FAKE_SBATCH)
    (bindir / "sbatch").chmod(0o755)
    record = tmp_path / "sbatch.record"
    env = {"PATH": f"{bindir}:{os.environ['PATH']}", "SBATCH_RECORD": str(record), "cmd_backend": "slurm"}
    return env, record


def copy_recipe(name, tmp_path):
    dst = tmp_path / name.replace("/", "_")
    shutil.copytree(ROOT / "egs" / name, dst, ignore=shutil.ignore_patterns("data", "dump", "exp", "RESULTS.md"))
    return dst


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_ngpu_and_train_args_reach_the_trainer(name, tmp_path, slurm):
    env, record = slurm
    recipe = copy_recipe(name, tmp_path)
    prepare, _, tool = RECIPES[name]
    opts, exp = prepare(recipe)
    proc = run_recipe(recipe, *opts, "--ngpu", "2", "--train_args", TRAIN_ARGS, extra_env=env)
    assert "devices: training --ngpu 2 (DDP)" in proc.stderr
    sbatch = record.read_text()
    assert "--gres=gpu:2" in sbatch, sbatch
    cmd = (recipe / exp / "run.sh").read_text()
    assert f"local_models.bin.{tool}" in cmd and "--ngpu 2 --multiprocessing_distributed true" in cmd
    # --train_args come last (they win over the recipe's own options), word by word as ESPnet's recipes pass them
    assert cmd.rstrip().endswith(TRAIN_ARGS), cmd
    assert f"--ngpu 2 --multiprocessing_distributed true" in (recipe / exp / "train.log").read_text()


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_gpu_inference_inference_model_and_args_reach_the_decoder(name, tmp_path, slurm):
    env, record = slurm
    recipe = copy_recipe(name, tmp_path)
    _, prepare, _ = RECIPES[name]
    opts, tool = prepare(recipe)
    run_recipe(recipe, *opts, "--ngpu", "0", "--gpu_inference", "true", "--inference_args", INFER_ARGS,
               "--inference_nj", "2", "--inference_model", "latest.pth", extra_env=env)
    sbatch = record.read_text()
    assert "--gres=gpu:1" in sbatch, sbatch
    logs = [p for p in recipe.rglob("*.log") if tool in p.read_text(errors="replace")]
    assert logs, f"no job log ran {tool}"
    text = logs[0].read_text()
    assert "--ngpu 1" in text and INFER_ARGS in text
    # the checkpoint that decodes is --inference_model's, in every recipe (none hard-codes its own)
    assert re.search(r"--model[-_]file \S*latest\.pth", text), text
    assert "valid.loss.best.pth" not in text and "valid.mcd.best.pth" not in text


def fake_nvidia_smi(bindir: Path, gpus: int) -> dict:
    """An nvidia-smi on PATH that lists GPUS GPUs (0: none, whatever this machine has)."""
    bindir.mkdir(exist_ok=True)
    lines = "".join(f"echo 'GPU {i}: NVIDIA H200 (UUID: GPU-{i})'\n" for i in range(gpus))
    (bindir / "nvidia-smi").write_text("#!/usr/bin/env bash\n" + lines)
    (bindir / "nvidia-smi").chmod(0o755)
    return {"PATH": f"{bindir}:{os.environ['PATH']}"}


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_gpu_asked_for_on_a_machine_without_one_is_a_clear_error(name, tmp_path):
    recipe = copy_recipe(name, tmp_path)
    proc = run_recipe(recipe, "--stage", "99", "--ngpu", "1", check=False,
                      extra_env=fake_nvidia_smi(tmp_path / "bin", 0))
    assert proc.returncode != 0
    assert "--ngpu 1 --gpu_inference false, but nvidia-smi lists 0 GPU(s) here" in proc.stderr


def test_ngpu_default_follows_nvidia_smi(tmp_path):
    """With no --ngpu, a machine whose nvidia-smi lists a GPU trains on it; help shows the option."""
    recipe = copy_recipe("fearless_steps/sad1", tmp_path)
    proc = run_recipe(recipe, "--stage", "99", extra_env=fake_nvidia_smi(tmp_path / "bin", 2))
    assert "devices: training --ngpu 1," in proc.stderr
    assert "devices: training --ngpu 0," in run_recipe(recipe, "--stage", "99",
                                                      extra_env=fake_nvidia_smi(tmp_path / "none", 0)).stderr
    helptext = run_recipe(recipe, "--help").stdout
    for opt in ("--ngpu", "--gpu-inference", "--inference-nj", "--inference-model", "--train-args", "--inference-args"):
        assert opt in helptext
    bad = run_recipe(recipe, "--ngpu", "two", check=False)
    assert bad.returncode != 0 and "--ngpu 'two'" in bad.stderr
