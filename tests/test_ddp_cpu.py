"""DDP really runs on CPUs (issue #52): two processes started by torchrun join one gloo group through ESPnet2's
external-launcher path (RANK / WORLD_SIZE / MASTER_ADDR from the environment, --ngpu 0 --dist_backend gloo) and
train the SAD net together; and a recipe's `--ngpu 0 --dist_world_size 2` trains that way.

ESPnet2 shards every mini-batch between the ranks (batch[rank::world_size]), so each rank runs as many iterations
as one process would, on half of each batch, and DDP averages the gradients: the ranks' weights stay identical.
The first test runs this file as torchrun's script: `__main__` below wraps SADTask so that each rank records what
it saw (its group, its batches, a digest of its weights before every forward) in its own file.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").exists(),
                                reason="needs tools/venv (make install)")

WORLD, BATCH, ITERS, N_TRAIN, N_VALID = 2, 4, 3, 12, 4
CONFIG = f"""batch_type: unsorted
batch_size: {BATCH}
max_epoch: 1
num_iters_per_epoch: {ITERS}
optim: adam
optim_conf:
    lr: 0.01
num_workers: 0
use_tensorboard: false
num_att_plot: 0
keep_nbest_models: 1
model: cnn1d
model_conf:
    channels: [4, 8]
    hidden: 8
"""


def digest(model) -> str:
    """The exact bytes of a model's weights, as one short string (equal iff every weight is bitwise equal)."""
    h = hashlib.sha1()
    for p in model.parameters():
        h.update(p.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def write_chunks(d: Path, n: int, seed: int, T=100):
    """SAD chunks as stage 3 leaves them (feats (T, 257), 0/1 labels (T,), feats_shape); returns their ids."""
    import kaldiio
    import numpy as np

    rng = np.random.default_rng(seed)
    d.mkdir(parents=True)
    feats, labels = {}, {}
    for i in range(n):
        lab = np.zeros(T, np.float32)
        s = rng.integers(0, T - 40)
        lab[s: s + 30] = 1.0
        feats[f"c{seed}_{i:02d}"] = (rng.random((T, 257)) * 0.01 + lab[:, None] * 3.0).astype(np.float32)
        labels[f"c{seed}_{i:02d}"] = lab
    kaldiio.save_ark(str(d / "feats.ark"), feats, scp=str(d / "feats.scp"))
    kaldiio.save_ark(str(d / "labels.ark"), labels, scp=str(d / "labels.scp"))
    (d / "feats_shape").write_text("".join(f"{k} {T},257\n" for k in feats))
    return sorted(feats)


def data_args(train: Path, valid: Path) -> list:
    args = []
    for mode, d in (("train", train), ("valid", valid)):
        args += [f"--{mode}_data_path_and_name_and_type", f"{d}/feats.scp,feats,kaldi_ark",
                 f"--{mode}_data_path_and_name_and_type", f"{d}/labels.scp,labels,kaldi_ark",
                 f"--{mode}_shape_file", f"{d}/feats_shape"]
    return args


def read_probe(probe: Path, rank: int) -> list:
    return [json.loads(line) for line in (probe / f"rank{rank}.jsonl").read_text().splitlines()]


def test_two_cpu_processes_train_one_model_through_gloo(tmp_path):
    train_ids = write_chunks(tmp_path / "train", N_TRAIN, seed=1)
    write_chunks(tmp_path / "valid", N_VALID, seed=2)
    (tmp_path / "train.yaml").write_text(CONFIG)
    probe, exp = tmp_path / "probe", tmp_path / "exp" / "cnn1d"
    probe.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(k, None)  # the launcher's, not this shell's
    # ESPnet2 maps ranks onto CUDA_VISIBLE_DEVICES even with --ngpu 0; another test may have hidden the GPUs with ""
    env.pop("CUDA_VISIBLE_DEVICES", None)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes", "1",
           "--nproc_per_node", str(WORLD), __file__, str(probe),
           "--config", str(tmp_path / "train.yaml"), "--ngpu", "0", "--dist_backend", "gloo", "--seed", "0",
           "--output_dir", str(exp), *data_args(tmp_path / "train", tmp_path / "valid")]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]

    ranks = {r: read_probe(probe, r) for r in range(WORLD)}
    for r, rec in ranks.items():  # both processes joined one gloo group, each as its own rank
        assert rec[0]["group"] == {"rank": r, "world_size": WORLD, "backend": "gloo"}, rec[0]
    # ESPnet2's own log names the rank in the group: the process it logs from is rank 0 of 2
    assert re.search(rf"\[[^\]]*:0/{WORLD}\] .*INFO", proc.stderr), proc.stderr[-3000:]

    # each rank got every mini-batch's share batch[rank::2]: disjoint halves that together are the whole batch
    shards = {r: next(x["batches"] for x in rec if x.get("mode") == "train") for r, rec in ranks.items()}
    assert len(shards[0]) == len(shards[1]) == N_TRAIN // BATCH
    for b0, b1 in zip(shards[0], shards[1]):
        assert len(b0) == len(b1) == BATCH // WORLD and not set(b0) & set(b1)
    assert sorted(u for r in shards for b in shards[r] for u in b) == train_ids

    # as many training steps per rank as one process would run, each on half a batch
    steps = {r: [x for x in rec if x.get("forward") == "train"] for r, rec in ranks.items()}
    assert [len(s) for s in steps.values()] == [ITERS] * WORLD
    assert all(x["batch"] == BATCH // WORLD for s in steps.values() for x in s)
    # the gradients were averaged: different data, yet bitwise the same weights before every step, and they moved
    before = [[x["weights"] for x in steps[r]] for r in range(WORLD)]
    assert before[0] == before[1]
    assert len(set(before[0])) == ITERS, "the weights did not change between steps"

    # rank 0 wrote the checkpoint: it loads, and it holds the weights rank 1 ended with
    from local_models.sad.task import SADTask

    model = SADTask.load_trained(exp, "valid.loss.best.pth")
    final = {r: next(x["final"] for x in ranks[r] if "final" in x) for r in range(WORLD)}
    assert digest(model) == final[1] == final[0]
    assert final[0] not in before[0]
    # provenance from rank 0 only
    assert len(json.loads((exp / "trained_by.json").read_text())) == 1


def test_recipe_trains_with_two_cpu_processes(tmp_path):
    """`run.sh --ngpu 0 --dist_world_size 2`: the SAD recipe's stage 4 trains its net with torchrun + gloo."""
    import shutil

    from recipe_runner import run_recipe

    recipe = tmp_path / "sad1"
    shutil.copytree(ROOT / "egs" / "fearless_steps" / "sad1", recipe,
                    ignore=shutil.ignore_patterns("data", "dump", "exp", "RESULTS.md"))
    write_chunks(recipe / "dump" / "train" / "chunks", N_TRAIN, seed=1)
    write_chunks(recipe / "dump" / "dev" / "chunks", N_VALID, seed=2)
    opts = ["--stage", "4", "--stop-stage", "4", "--systems", "cnn_hmm", "--aug-copies", "0",
            "--train-config-suffix", "_smoke", "--ngpu", "0", "--nj", "2"]
    proc = run_recipe(recipe, *opts, "--dist_world_size", str(WORLD))
    assert f"devices: training --ngpu 0 (DDP: {WORLD} CPU processes, gloo)" in proc.stderr
    exp = recipe / "exp" / "cnn1d"
    cmd = (exp / "run.sh").read_text()
    assert f"torch.distributed.run --standalone --nnodes 1 --nproc_per_node {WORLD} -m local_models.bin.sad_train" \
        " --ngpu 0 --dist_backend gloo" in cmd, cmd
    log = (exp / "train.log").read_text()
    assert re.search(rf"\[[^\]]*:0/{WORLD}\] .*INFO", log), log[-3000:]  # ESPnet2 ran as rank 0 of 2
    assert "1epoch results" in log, log[-3000:]
    assert len(json.loads((exp / "trained_by.json").read_text())) == 1

    from local_models.sad.task import SADTask

    SADTask.load_trained(exp, "valid.loss.best.pth")
    bad = run_recipe(recipe, "--stage", "99", "--ngpu", "1", "--dist_world_size", "2", check=False)
    assert bad.returncode != 0 and "--dist_world_size 2 is DDP on CPUs (--ngpu 0)" in bad.stderr


def test_recipe_asks_slurm_for_one_job_with_a_core_per_process(tmp_path):
    """On Slurm the N processes are one job on one node: --cpus-per-task N, no GPU; only the command is checked."""
    from recipe_runner import run_recipe
    from test_recipe_devices import FAKE_SBATCH, copy_recipe, sad_train

    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "sbatch").write_text(FAKE_SBATCH)
    (tmp_path / "bin" / "sbatch").chmod(0o755)
    record = tmp_path / "sbatch.record"
    env = {"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "SBATCH_RECORD": str(record), "cmd_backend": "slurm"}
    recipe = copy_recipe("fearless_steps/sad1", tmp_path)
    opts, exp = sad_train(recipe)
    run_recipe(recipe, *opts, "--ngpu", "0", "--dist_world_size", "3", extra_env=env)
    sbatch = record.read_text()
    assert "--cpus-per-task 3" in sbatch and "--gres" not in sbatch, sbatch
    cmd = (recipe / exp / "run.sh").read_text()
    assert "--nproc_per_node 3 -m local_models.bin.sad_train --ngpu 0 --dist_backend gloo" in cmd, cmd
    bad = run_recipe(recipe, "--stage", "99", "--dist_world_size", "two", check=False)
    assert bad.returncode != 0 and "--dist_world_size 'two'" in bad.stderr


# ---- torchrun's script in the first test: SADTask's training, each rank recording what it saw --------------------

def _probed_main(probe: Path, argv: list) -> None:
    import atexit

    import torch.distributed as dist

    from local_models.sad.task import SADTask

    rank = int(os.environ["RANK"])
    out = open(probe / f"rank{rank}.jsonl", "a")

    def record(**kw):
        out.write(json.dumps(kw) + "\n")
        out.flush()

    build_model = SADTask.build_model.__func__
    build_iter = SADTask.build_sequence_iter_factory.__func__

    def probed_model(cls, args):
        model = build_model(cls, args)

        def before_forward(module, args_, kwargs):
            record(forward="train" if module.training else "valid", batch=int(kwargs["feats"].shape[0]),
                   weights=digest(module))

        model.register_forward_pre_hook(before_forward, with_kwargs=True)
        atexit.register(lambda: record(final=digest(model)))
        return model

    def probed_iter(cls, args, iter_options, mode):
        factory = build_iter(cls, args, iter_options, mode)
        if mode == "train":
            group = {"rank": dist.get_rank(), "world_size": dist.get_world_size(), "backend": dist.get_backend()} \
                if dist.is_initialized() else None
            record(group=group)
        record(mode=mode, batches=[list(b) for b in factory.sampler])
        return factory

    SADTask.build_model = classmethod(probed_model)
    SADTask.build_sequence_iter_factory = classmethod(probed_iter)
    SADTask.main(cmd=argv)


if __name__ == "__main__":
    _probed_main(Path(sys.argv[1]), sys.argv[2:])
