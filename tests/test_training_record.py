"""local_models/common/training.py reads back how an ESPnet2 run trained (epochs, best checkpoint, device), and the
SAD report's Training section and local_models/sad/gpu_train.sh's prepare / install halves."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import yaml

from local_models.common.training import epoch_results, epochs_run, training_record
from local_models.sad.report import nets_training, training_lines

ROOT = Path(__file__).resolve().parents[1]
GPU_TRAIN = ROOT / "local_models" / "sad" / "gpu_train.sh"


def _epoch_line(n, train_loss, valid_loss):
    return (f"[vm] 2026-11-27 06:22:{10 + n:02d},186 (trainer:394) INFO: {n}epoch results: [train] iter_time=6.252e-04, "
            f"loss={train_loss}, acc=0.853, train_time=0.064, time=6.49 seconds, total_count={100 * n}, "
            f"[valid] loss={valid_loss}, acc=0.9, time=0.16 seconds, total_count={3 * n}, [att_plot] time=1.25 seconds")


def _exp(tmp_path, valid_losses, max_epoch=40, ngpu=1, name="cnn1d", first=1):
    d = tmp_path / name
    d.mkdir(parents=True, exist_ok=True)
    lines = [f"# python -m local_models.bin.sad_train --ngpu {ngpu} --config conf/tuning/train_{name}.yaml --seed 0",
             "[vm] 2026-11-27 06:22:31,025 (abs_task:1455) INFO: pytorch.version=2.11.0"]
    lines += [_epoch_line(first + i, 0.5 / (i + 1), v) for i, v in enumerate(valid_losses)]
    (d / "train.log").write_text("\n".join(lines) + "\n")
    (d / "config.yaml").write_text(yaml.safe_dump({"max_epoch": max_epoch, "num_iters_per_epoch": 100,
                                                   "batch_size": 24, "ngpu": ngpu}))
    return d


def test_epoch_results_parse_train_and_valid_values(tmp_path):
    d = _exp(tmp_path, [0.3, 0.2e-1])
    rows = epoch_results(d / "train.log")
    assert [r["epoch"] for r in rows] == [1, 2]
    assert rows[0]["train"]["loss"] == 0.5 and rows[0]["valid"]["loss"] == 0.3 and rows[1]["valid"]["loss"] == 0.02
    assert rows[0]["valid"]["acc"] == 0.9 and "time" not in rows[0]["valid"]  # "0.16 seconds" is not a value
    assert rows[1]["time"] == "2026-11-27 06:22:12,186"


def test_record_picks_the_epoch_of_lowest_validation_loss(tmp_path):
    d = _exp(tmp_path, [0.25, 0.21, 0.22, 0.3, 0.45])  # overfitting after epoch 2
    r = training_record(d)
    assert r["best_epoch"] == 2 and r["best_iters"] == 200 and r["best_valid"] == 0.21
    assert r["epochs_run"] == 5 and r["iters_run"] == 500 and r["max_epoch"] == 40 and r["ngpu"] == 1
    assert r["config"] == "conf/tuning/train_cnn1d.yaml" and "device" not in r
    (d / "device.txt").write_text("NVIDIA H200\n")
    assert training_record(d)["device"] == "NVIDIA H200"


def test_espnets_saved_choice_wins_a_tie_of_the_rounded_losses(tmp_path):
    d = _exp(tmp_path, [0.3, 0.2, 0.2, 0.4])  # epochs 2 and 3 print the same rounded loss
    assert training_record(d)["best_epoch"] == 2
    (d / "3epoch.pth").write_bytes(b"")
    (d / "valid.loss.best.pth").symlink_to("3epoch.pth")  # ESPnet kept epoch 3
    assert training_record(d)["best_epoch"] == 3 and training_record(d)["best_iters"] == 300
    (d / "valid.loss.best.pth").unlink()
    (d / "best_epoch").write_text("3epoch.pth\n")  # what gpu_train.sh records beside a copied checkpoint
    assert training_record(d)["best_epoch"] == 3


def test_record_keeps_the_epochs_of_an_earlier_invocation(tmp_path):
    """utils/stage_lib.sh keeps the train.log of an interrupted run in train.prev.log before resuming."""
    d = _exp(tmp_path, [0.3, 0.1])
    (d / "train.prev.log").write_text((d / "train.log").read_text())
    _exp(tmp_path, [0.2, 0.25], first=3)  # the resumed run: epochs 3 and 4
    r = training_record(d)
    assert r["epochs_run"] == 4 and r["best_epoch"] == 2 and r["best_valid"] == 0.1


def test_record_is_none_without_a_training(tmp_path):
    assert training_record(tmp_path / "nothing") is None
    d = _exp(tmp_path, [0.3])
    (d / "config.yaml").unlink()
    assert training_record(d) is None


def test_report_says_where_and_how_long_each_net_trained(tmp_path):
    _exp(tmp_path, [0.3, 0.2, 0.4], max_epoch=40, ngpu=1, name="cnn1d")
    (tmp_path / "cnn1d" / "device.txt").write_text("NVIDIA H200\n")
    _exp(tmp_path, [0.5, 0.4], max_epoch=2, ngpu=0, name="rnn")
    _exp(tmp_path / "seg_grid", [0.3], max_epoch=1, ngpu=0, name="L25_S1")
    # what each trained on: gpu_train.sh's note (the chunks stayed on the device), else the config's shape file
    (tmp_path / "cnn1d" / "train_data.txt").write_text("train_aug: 3382 chunks (train + 4 augmented copies)\n")
    rnn_conf = tmp_path / "rnn" / "config.yaml"
    rnn_conf.write_text(rnn_conf.read_text() + "train_shape_file:\n- dump/train_aug/chunks/feats_shape\n")
    shape = tmp_path.parent / "dump" / "train_aug" / "chunks" / "feats_shape"  # relative to the recipe (EXP's parent)
    shape.parent.mkdir(parents=True)
    shape.write_text("c1 400,129\nc2 400,129\n\n")
    training = nets_training(tmp_path)
    assert list(training) == ["cnn1d", "rnn", "seg_grid/L25_S1"]
    rows = {line.split(" | ")[0].strip("| "): line for line in training_lines(training) if line.startswith("| ")}
    assert ("train_aug: 3382 chunks (train + 4 augmented copies) | 300 (3 x 100), stopped before max_epoch 40 | 200 "
            "| 0.2 | NVIDIA H200") in rows["cnn1d"]
    assert "| train_aug: 2 chunks | 200 (2 x 100) | 200 | 0.4 | CPU" in rows["rnn"] and "stopped" not in rows["rnn"]
    assert "| ? | 100 (1 x 100) |" in rows["seg_grid/L25_S1"]  # neither record: said, not guessed
    assert training_lines({}) == []


def _wav(path, seconds, sr=8000):
    sf.write(str(path), (0.1 * np.sin(np.arange(int(seconds * sr)) / 7)).astype(np.float32), sr, subtype="PCM_16")


@pytest.mark.skipif(subprocess.run(["bash", "-c", "command -v sox"], capture_output=True).returncode != 0,
                    reason="needs sox")
def test_gpu_train_packs_flac_with_relative_paths_and_installs_back(tmp_path):
    recipe = tmp_path / "sad1"
    recipe.mkdir()
    for f in ("run.sh", "path.sh"):  # what marks a recipe dir, where the script must run
        (recipe / f).write_text("")
    for x in ("train", "dev"):
        d = recipe / "data" / x
        d.mkdir(parents=True)
        _wav(tmp_path / f"{x}_a.wav", 1.5)
        (d / "wav.scp").write_text(f"{x}_a {tmp_path / f'{x}_a.wav'}\n")
        (d / "utt2spk").write_text(f"{x}_a {x}_a\n")
        (d / "spk2utt").write_text(f"{x}_a {x}_a\n")
        (d / "reco2dur").write_text(f"{x}_a 1.5\n")
        (d / "ref.rttm").write_text(f"SPEAKER {x}_a 1 0.1 0.5 <NA> <NA> speech <NA> <NA>\n")
    sh = ["bash", str(GPU_TRAIN)]
    p = subprocess.run(sh + ["prepare", str(tmp_path / "pack")], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode != 0 and "run it from a SAD recipe's directory" in p.stderr
    # no built-in non-speech set (the real-recording corpus): no augmentation by default, none packed
    subprocess.run(sh + ["prepare", str(tmp_path / "plain")], check=True, capture_output=True, cwd=recipe)
    listing = subprocess.run(["tar", "-tf", str(tmp_path / "plain" / "sad_data.tar")], capture_output=True,
                             text=True).stdout.split()
    assert "downloads/flac/train_a.flac" in listing and not any("nonspeech" in f for f in listing)
    assert {"downloads/aug_copies", "downloads/code_commit"} <= set(listing)
    plain = tmp_path / "plain_out"
    plain.mkdir()
    subprocess.run(["tar", "-C", str(plain), "-xf", str(tmp_path / "plain" / "sad_data.tar")], check=True)
    from local_models.common.results import git_commit

    assert (plain / "downloads" / "code_commit").read_text().strip() == git_commit() != "unknown"
    p = subprocess.run(sh + ["prepare", str(tmp_path / "pack")], capture_output=True, text=True, cwd=recipe,
                       env={**os.environ, "GPU_TRAIN_AUG_COPIES": "4"})
    assert p.returncode != 0 and "downloads/nonspeech/train/sources.tsv missing" in p.stderr
    # the built-in non-speech set (16 kHz, as local/make_nonspeech_set.py writes it): the device augments from it
    nset = recipe / "downloads" / "nonspeech" / "train"
    (nset / "music" / "pkg").mkdir(parents=True)
    _wav(nset / "music" / "pkg" / "m0.wav", 2.0, sr=16000)
    (nset / "sources.tsv").write_text("file\tkind\tsource\tlicence\tseconds\nmusic/pkg/m0.wav\tmusic\tpkg\tGPL-2+\t2.0\n")
    subprocess.run(sh + ["prepare", str(tmp_path / "pack")], check=True, capture_output=True, cwd=recipe)
    out = tmp_path / "unpacked"
    out.mkdir()
    subprocess.run(["tar", "-C", str(out), "-xf", str(tmp_path / "pack" / "sad_data.tar")], check=True)
    assert (out / "data" / "dev" / "wav.scp").read_text() == "dev_a downloads/flac/dev_a.flac\n"
    wave, sr = sf.read(str(out / "downloads" / "flac" / "train_a.flac"), dtype="int16")
    ref, _ = sf.read(str(tmp_path / "train_a.wav"), dtype="int16")
    assert sr == 8000 and np.array_equal(wave, ref)  # lossless
    assert (out / "data" / "train" / "ref.rttm").is_file() and not (out / "data" / "train_aug").exists()
    music, sr = sf.read(str(out / "downloads" / "nonspeech" / "train" / "music" / "pkg" / "m0.flac"))
    assert sr == 8000 and len(music) == 16000  # at the nets' 8 kHz: the augmentation resamples to it anyway
    assert (out / "downloads" / "nonspeech" / "train" / "sources.tsv").read_text().startswith("file\tkind")
    assert (out / "downloads" / "aug_copies").read_text().strip() == "4"  # the set is here: the FS02 default
    p = subprocess.run(sh + ["prepare", str(tmp_path / "pack")], capture_output=True, text=True, cwd=recipe,
                       env={**os.environ, "GPU_TRAIN_AUG_COPIES": "x"})
    assert p.returncode != 0 and "GPU_TRAIN_AUG_COPIES='x' is not a number of copies" in p.stderr

    # install: the device's OUT (exp/<net>/ + gpu.txt) into the recipe's exp/
    src = tmp_path / "device_out"
    for m in ("cnn1d", "rnn", "seg_rnn"):
        _exp(src / "exp", [0.3], name=m)
        (src / "exp" / m / "valid.loss.best.pth").write_bytes(b"weights")
    (src / "gpu.txt").write_text("GPU 0: NVIDIA H200 (UUID: GPU-ab92)\n")
    (recipe / "exp" / "seg_grid" / "L25_S1").mkdir(parents=True)  # an earlier run's grid: stale for the new nets
    subprocess.run(sh + ["install", str(src)], check=True, capture_output=True, cwd=recipe)
    assert not (recipe / "exp" / "seg_grid").exists()
    assert (recipe / "exp" / "rnn" / "valid.loss.best.pth").read_bytes() == b"weights"
    assert (recipe / "exp" / "seg_rnn" / "device.txt").read_text().strip() == "NVIDIA H200"
    # an entry with a config suffix and a seed travels as exp_<net><suffix>_s<seed>/<net>/ in the tar run writes
    _exp(src / "exp_rnn_c3h64_s3", [0.2], name="rnn")
    (src / "exp_rnn_c3h64_s3" / "rnn" / "valid.loss.best.pth").write_bytes(b"seed 3")
    subprocess.run(["tar", "-C", str(src), "-cf", str(tmp_path / "gpu_train.tar"), "."], check=True)
    subprocess.run(sh + ["install", str(tmp_path / "gpu_train.tar"), "rnn:_c3h64:3"], check=True, capture_output=True,
                   cwd=recipe)
    assert (recipe / "exp" / "rnn" / "valid.loss.best.pth").read_bytes() == b"seed 3"
    assert (recipe / "exp" / "cnn1d" / "valid.loss.best.pth").read_bytes() == b"weights"  # not named: kept
    (src / "exp" / "rnn" / "valid.loss.best.pth").unlink()
    p = subprocess.run(sh + ["install", str(src)], capture_output=True, text=True, cwd=recipe)
    assert p.returncode != 0 and "exp/rnn/valid.loss.best.pth missing" in p.stderr


def test_epochs_run_from_the_latest_link_or_the_logs(tmp_path):
    d = _exp(tmp_path, [0.3, 0.1])
    (d / "train.prev.log").write_text((d / "train.log").read_text())
    _exp(tmp_path, [0.2], first=3)  # resumed: epoch 3 in train.log, 1-2 in train.prev.log
    assert epochs_run(d) == 3
    (d / "train.log").write_text("# a resume of a finished run: no epoch line\n")
    assert epochs_run(d) == 2
    (d / "7epoch.pth").write_bytes(b"")
    (d / "latest.pth").symlink_to("7epoch.pth")  # ESPnet's own record wins
    assert epochs_run(d) == 7
    assert epochs_run(tmp_path / "missing") is None


def test_zerospeech_report_states_the_training_budget(tmp_path):
    """RESULTS.md's 'at this training budget' needs the budget: epochs and scored epoch of every model, by config."""
    from local_models.vqvae.report import training_line

    exp = tmp_path / "exp"
    for name, losses in (("trf_a", [0.5, 0.4, 0.45]), ("conv_a", [0.5, 0.4, 0.3]), ("trf_b", [0.5, 0.45])):
        d = _exp(exp, losses, max_epoch=3, ngpu=0, name=name)
        log = d / "train.log"
        log.write_text(log.read_text().replace(f"train_{name}.yaml", "train_vqvae_tiny.yaml"))
    _exp(exp / "inverter_trf_a", [0.9], max_epoch=1, ngpu=0, name="V001")
    assert training_line(exp, ["trf_a", "conv_a", "trf_b", "not_trained"], exp / "inverter_trf_a") == (
        "Training (this run, on the CPU): 3 VQ-VAEs from `conf/tuning/train_vqvae_tiny.yaml`, 2-3 (median 3) epochs, "
        "scored at the best validation loss, epoch 2-3 (median 2); 1 codebook inverter from "
        "`conf/tuning/train_V001.yaml`, 1 epochs, scored at the best validation loss, epoch 1.")
    assert training_line(exp, ["not_trained"], tmp_path / "none") == ""


def test_training_provenance_lists_each_runs_commit_and_device(tmp_path):
    from local_models.common.results import (environment_lines, record_training, trained_by, training_summary)

    model = tmp_path / "exp" / "cnn"
    assert training_summary({"cnn": model}) == {"cnn": "not recorded"}
    first = record_training(model, ngpu=0)
    assert record_training(model, ngpu=0, dist_rank=1) is None  # a DDP worker other than rank 0 writes nothing
    runs = trained_by(model)
    assert runs == [first] and first["ngpu"] == 0 and first["commit"]
    # a resumed training at another commit: both commits are named, in order
    (model / "trained_by.json").write_text(json.dumps(runs + [{**first, "commit": "abc1234"}]))
    summary = training_summary({"cnn": model, "rnn": model})
    assert summary["cnn"] == f"commit {first['commit']}, abc1234 on {first['hardware']}"
    lines = environment_lines({"date": "d", "commit": "c", "trained": summary})
    assert f"- trained: `cnn`, `rnn`: {summary['cnn']}" in lines
    (model / "trained_by.json").write_text("{not json")
    with pytest.raises(ValueError, match="trained_by.json:1"):
        trained_by(model)


def test_a_resume_of_a_finished_training_records_no_training(tmp_path):
    """A recipe rerun resumes every model: one whose checkpoint has reached max_epoch trains nothing and must not
    name the rerun's commit as one that trained it; one with epochs left, or a fresh one, is recorded."""
    import argparse

    import torch

    from local_models.common.espnet_task import nothing_left_to_train, record_run

    def args(max_epoch, resume=True):
        return argparse.Namespace(output_dir=str(tmp_path), resume=resume, max_epoch=max_epoch, ngpu=0,
                                  collect_stats=False, print_config=False, dry_run=False, dist_rank=None)

    assert not nothing_left_to_train(args(3))  # no checkpoint yet
    record_run(args(3))
    assert len(json.loads((tmp_path / "trained_by.json").read_text())) == 1
    torch.save({"reporter": {"epoch": 3, "stats": {}}}, tmp_path / "checkpoint.pth")
    assert nothing_left_to_train(args(3)) and not nothing_left_to_train(args(5))
    assert not nothing_left_to_train(args(3, resume=False))
    record_run(args(3))  # finished: nothing recorded
    assert len(json.loads((tmp_path / "trained_by.json").read_text())) == 1
    record_run(args(5))  # two more epochs to train: recorded
    assert len(json.loads((tmp_path / "trained_by.json").read_text())) == 2
    (tmp_path / "checkpoint.pth").write_bytes(b"not a checkpoint")  # unreadable: ESPnet's resume will say so
    assert not nothing_left_to_train(args(3))


# a recipe's run.sh as gpu_train.sh's `run` calls it: records its arguments; stage 4 leaves what ESPnet would
STUB_RUN = """#!/usr/bin/env bash
echo "$PWD $*" >> "$CALLS"
case " $* " in *" --stage 4 "*)
    sys=$(echo " $* " | sed 's/.* --systems \\([a-z_]*\\) .*/\\1/')
    case $sys in cnn_hmm) net=cnn1d ;; rnn_hmm) net=rnn ;; *) net=$sys ;; esac
    mkdir -p exp/$net
    echo "$*" > exp/$net/valid.loss.best.pth
    for f in config.yaml train.log train_data.txt; do echo $f > exp/$net/$f; done
    echo "[{\\"commit\\": \\"$SPEECH_RECIPES_COMMIT\\"}]" > exp/$net/trained_by.json ;;
esac
"""


def test_gpu_train_run_trains_each_entry_in_its_own_copy_and_packs_one_tar(tmp_path):
    recipe = tmp_path / "egs" / "real" / "sad1"
    (recipe / "data" / "train").mkdir(parents=True)
    (recipe / "run.sh").write_text(STUB_RUN)
    (recipe / "run.sh").chmod(0o755)
    (recipe / "path.sh").write_text("")
    src = tmp_path / "src"
    (src / "downloads").mkdir(parents=True)
    (src / "downloads" / "aug_copies").write_text("0\n")
    (src / "downloads" / "code_commit").write_text("abc1234\n")
    subprocess.run(["tar", "-C", str(src), "-cf", str(src / "sad_data.tar"), "downloads"], check=True)
    out = tmp_path / "out"
    env = {**os.environ, "CALLS": str(tmp_path / "calls.txt"), "PYTHONPATH": str(ROOT), "GPU_TRAIN_NGPU": "0",
           "GPU_TRAIN_NETS": "rnn:_c3h64:3 rnn:_tiny cnn1d", "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    p = subprocess.run(["bash", str(GPU_TRAIN), "run", str(src), str(out), "60"], cwd=recipe, env=env,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    stage4 = {c.split()[0]: c for c in calls if " --stage 4 " in c}
    seeded = stage4[str(recipe.parent / "sad1_gpu_rnn_c3h64_s3")]  # a sibling copy per entry with a suffix
    assert "--systems rnn_hmm" in seeded and "--train_config_suffix _c3h64" in seeded and "--seed 3" in seeded
    assert "--seed" not in stage4[str(recipe.parent / "sad1_gpu_rnn_tiny")]  # the recipe's own seed
    assert "--systems cnn_hmm" in stage4[str(recipe)] and "--aug-copies 0" in stage4[str(recipe)]
    assert (recipe.parent / "sad1_gpu_rnn_tiny" / "data").is_symlink()  # data/ and dump/ shared, exp/ its own
    got = tmp_path / "got"
    got.mkdir()
    subprocess.run(["tar", "-C", str(got), "-xf", str(out / "gpu_train.tar")], check=True)
    assert "--seed 3" in (got / "exp_rnn_c3h64_s3" / "rnn" / "valid.loss.best.pth").read_text()
    assert (got / "exp" / "cnn1d" / "trained_by.json").read_text().strip() == '[{"commit": "abc1234"}]'
    assert {"prep.log", "train_rnn_c3h64_s3.log", "train_cnn1d.log"} <= {f.name for f in got.iterdir()}
    # a failing step still brings its logs back
    (recipe / "run.sh").write_text("#!/usr/bin/env bash\necho stage failed; exit 1\n")
    (out / "gpu_train.tar").unlink()
    p = subprocess.run(["bash", str(GPU_TRAIN), "run", str(src), str(out), "60"], cwd=recipe, env=env,
                       capture_output=True, text=True)
    assert p.returncode != 0 and "stages 2-3 failed" in p.stderr
    listing = subprocess.run(["tar", "-tf", str(out / "gpu_train.tar")], capture_output=True, text=True).stdout
    assert "./prep.log" in listing.split()
    # install refuses two entries of one net at once (exp/<net> holds one)
    p = subprocess.run(["bash", str(GPU_TRAIN), "install", str(got), "rnn:_c3h64:3 rnn:_tiny"], cwd=recipe,
                       capture_output=True, text=True)
    assert p.returncode != 0 and "two entries train 'rnn'" in p.stderr
