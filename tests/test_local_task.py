"""LocalTask (local_models/common/espnet_task.py), the base of every local ESPnet2 task: each task's collate pads
with the values it declares (the values the tasks padded with before the base owned the collate), the inherited
`Class(**model_conf)` build_model, and load_trained round-tripping tiny saved models (no training)."""
import argparse
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from local_models.multisoftmax.task import TransducerTask
from local_models.sad.task import SADTask
from local_models.salad.duration_task import DurationModel, DurationTask, load_duration_model
from local_models.salad.task import SaladModel, SaladTask
from local_models.salad.task import load_trained as salad_load_trained
from local_models.vqvae.task import InverterModel, VQVAEModel, VQVAETask
from local_models.vqvae.task import load_trained as vqvae_load_trained

# task: (float pad, int pad, not_sequence keys), as each task's own build_collate_fn had them
PADDING = {
    SADTask: (0.0, -1, ()),
    TransducerTask: (0.0, -1, ("lid",)),
    SaladTask: (0.0, 0, ("pos",)),
    DurationTask: (0.0, 0, ()),
    VQVAETask: (0.0, 0, ("sids",)),
}
TINY_VQ = dict(idim=6, num_speakers=2, encoder_type="transformer", num_codes=8, code_dim=4, enc_dim=16, heads=2,
               ff=32, dec_dim=16, spk_dim=4)


@pytest.mark.parametrize("task", list(PADDING), ids=lambda t: t.__name__)
def test_collate_pads_with_the_declared_values(task):
    float_pad, int_pad, not_sequence = PADDING[task]
    assert (task.float_pad_value, task.int_pad_value, tuple(task.not_sequence)) == PADDING[task]
    collate = task.build_collate_fn(argparse.Namespace(), train=True)

    def sample(n):
        d = {"feats": np.ones((n, 2), np.float32), "ids": np.full(n, 7, np.int64)}
        d.update({k: np.array([n], np.int64) for k in not_sequence})
        return d

    keys, batch = collate([("a", sample(2)), ("b", sample(5))])
    assert keys == ["a", "b"]
    assert batch["feats"].shape == (2, 5, 2) and batch["ids"].shape == (2, 5)
    assert torch.all(batch["feats"][0, 2:] == float_pad) and torch.all(batch["feats"][0, :2] == 1)
    assert torch.all(batch["ids"][0, 2:] == int_pad) and torch.all(batch["ids"][0, :2] == 7)
    assert batch["feats_lengths"].tolist() == [2, 5] and batch["ids_lengths"].tolist() == [2, 5]
    for k in not_sequence:  # stacked as they are, no lengths
        assert batch[k].view(-1).tolist() == [2, 5] and f"{k}_lengths" not in batch
    assert sorted(batch) == sorted(["feats", "feats_lengths", "ids", "ids_lengths", *not_sequence])


@pytest.mark.parametrize("task, name, conf, cls", [
    (DurationTask, "lstm", dict(idim=4, emb=4, hidden=4), DurationModel),
    (SaladTask, "salad", dict(idim=4, emb=16, d_ff=32, num_blocks=1, heads=2), SaladModel),
    (VQVAETask, "vqvae", TINY_VQ, VQVAEModel),
], ids=["duration", "salad", "vqvae"])
def test_inherited_build_model_is_the_chosen_class_with_its_conf(task, name, conf, cls):
    model = task.build_model(argparse.Namespace(model=name, model_conf=dict(conf)))
    assert type(model) is cls
    parsed = task.get_parser().parse_args(["--model", name, "--model_conf", yaml.safe_dump(conf)])
    assert type(task.build_model(parsed)) is cls


def _save(model, exp: Path, name: str, conf: dict, ckpt: str) -> None:
    """config.yaml + <ckpt> as ESPnet leaves them (the checkpoint a link to 1epoch.pth)."""
    exp.mkdir(parents=True)
    (exp / "config.yaml").write_text(yaml.safe_dump({"model": name, "model_conf": conf, "max_epoch": 1}))
    torch.save(model.state_dict(), exp / "1epoch.pth")
    (exp / ckpt).symlink_to("1epoch.pth")


def _same_state(a, b) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_load_trained_round_trips_tiny_models(tmp_path):
    torch.manual_seed(0)
    # duration: own config reader (build_from_files), default checkpoint valid.loss.best.pth
    dm = DurationModel(idim=4, emb=4, hidden=4)
    with torch.no_grad():
        dm.in_mean.fill_(0.5)  # a buffer, saved with the weights
    _save(dm, tmp_path / "dur", "lstm", dict(idim=4, emb=4, hidden=4), "valid.loss.best.pth")
    for got in (DurationTask.load_trained(tmp_path / "dur"),
                load_duration_model(tmp_path / "dur" / "config.yaml", tmp_path / "dur" / "valid.loss.best.pth")):
        assert type(got) is DurationModel and not got.training and _same_state(got, dm)

    # salad: default checkpoint valid.mcd.best.pth; precision; a packed model's explicit paths
    conf = dict(idim=4, emb=16, d_ff=32, num_blocks=1, heads=2)
    am = SaladModel(**conf)
    _save(am, tmp_path / "am", "salad", conf, "valid.mcd.best.pth")
    got = salad_load_trained(tmp_path / "am")
    assert type(got) is SaladModel and not got.training and got.precision == "fp32" and _same_state(got, am)
    packed = salad_load_trained(None, tmp_path / "am" / "1epoch.pth", "bf16",
                                config_file=tmp_path / "am" / "config.yaml")
    assert packed.precision == "bf16" and _same_state(packed, am)
    with pytest.raises(ValueError, match="CPU only"):
        salad_load_trained(tmp_path / "am", precision="int8", device="cuda")

    # vqvae: ESPnet's build_model_from_file, kind checked, default checkpoint valid.loss.best.pth
    vq = VQVAEModel(**TINY_VQ)
    _save(vq, tmp_path / "vq", "vqvae", TINY_VQ, "valid.loss.best.pth")
    got = vqvae_load_trained(tmp_path / "vq", kind=VQVAEModel)
    assert type(got) is VQVAEModel and not got.training and _same_state(got, vq)
    assert _same_state(VQVAETask.load_trained(tmp_path / "vq", "1epoch.pth"), vq)
    with pytest.raises(ValueError, match=r"config.yaml: holds a VQVAEModel, not a InverterModel"):
        vqvae_load_trained(tmp_path / "vq", kind=InverterModel)


def test_load_trained_names_the_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"config.yaml: missing \(train the model first\)$"):
        VQVAETask.load_trained(tmp_path)
    (tmp_path / "config.yaml").write_text("model: salad\n")
    with pytest.raises(FileNotFoundError, match=r"valid.mcd.best.pth: missing \(train the model first: run.sh stage 4\)"):
        salad_load_trained(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"valid.loss.best.pth: missing \(train the model first: run.sh stage 4\)"):
        TransducerTask.load_trained(tmp_path)


@pytest.mark.parametrize("task", [*PADDING, "jdit"])
def test_every_task_trains_with_subnormal_floats_flushed(task, monkeypatch):
    """ESPnet's worker of every task runs with subnormals flushed to zero (a trained RNN-T's backward was 3.7x slower
    without): 1e-39 reads as 0 inside it, as it does not before."""
    from espnet2.tasks.abs_task import AbsTask

    if task == "jdit":
        from local_models.jdit.task import JDITTask as task
    seen = []
    monkeypatch.setattr(AbsTask, "main_worker", classmethod(
        lambda cls, args: seen.append(float(torch.tensor([1e-39]) * 1.0))))
    try:
        assert float(torch.tensor([1e-39]) * 1.0) != 0.0  # subnormals kept outside training
        task.main_worker(argparse.Namespace())
    finally:
        torch.set_flush_denormal(False)
    assert seen == [0.0]
