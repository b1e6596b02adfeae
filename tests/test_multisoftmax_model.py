"""Multilingual RNN-T models (local_models/multisoftmax/model.py, task.py) and their training inputs."""
import itertools
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from local_models.multisoftmax.model import MultilingualTransducer, balanced_lid_weights, rnnt_loss
from local_models.multisoftmax.units import build_vocab, union_vocab

LANGS = ["en", "hi"]
RECIPE = Path(__file__).resolve().parents[1] / "egs" / "indic" / "asr1"


def token_lists():
    en = build_vocab(["ab ba", "abc"])
    hi = build_vocab(["नम नमक"])
    return {"en": en, "hi": hi, "union": union_vocab([en, hi])}


def small(system="multisoftmax", **kw):
    torch.manual_seed(0)
    conf = dict(enc_layers=1, enc_units=16, pred_layers=1, pred_units=16, embed_dim=8, joint_dim=16, lid_hidden=8)
    conf.update(kw)
    return MultilingualTransducer(LANGS, token_lists(), system=system, **conf).eval()


def union_ids(units):
    index = {u: i for i, u in enumerate(token_lists()["union"])}
    return torch.tensor([[index[u] for u in units]])


# ----------------------------------------------------------------------------- RNN-T loss

def brute_force_nll(logp: torch.Tensor, y) -> float:
    """-log P(y|x) summed over every alignment: T blanks and U labels interleaved, each frame closed by a
    blank (logp (T, U+1, V) log-softmax of the joint at frame t after u labels)."""
    T, U = logp.shape[0], len(y)
    total = []
    # positions of the U labels among the first T+U-1 steps (the last step is the final frame's blank)
    for label_steps in itertools.combinations(range(T + U - 1), U):
        t = u = 0
        score = 0.0
        for step in range(T + U):
            if step in label_steps:
                score += float(logp[t, u, y[u]])
                u += 1
            else:
                score += float(logp[t, u, 0])
                t += 1
        total.append(score)
    return -float(torch.logsumexp(torch.tensor(total, dtype=torch.float64), 0))


def test_rnnt_loss_is_the_sum_over_alignments():
    torch.manual_seed(1)
    T, U, V = 4, 3, 5
    logits = torch.randn(1, T, U + 1, V)
    y = [2, 4, 1]
    got = rnnt_loss(logits, torch.tensor([y]), torch.tensor([T]), torch.tensor([U]))
    want = brute_force_nll(torch.log_softmax(logits[0].double(), -1), y)
    assert got.item() == pytest.approx(want, rel=1e-4)


def test_model_loss_equals_brute_force_of_its_own_joint():
    """head_loss (what training minimises) is the exact RNN-T likelihood of the model's joint outputs."""
    m = small()
    feats, lens = torch.randn(1, 11, 80), torch.tensor([11])  # 11 frames -> 4 encoder frames
    units = ["B_a", "b", "B_b"]
    text = union_ids(units)
    x, xl = m.stack(feats, lens)
    h, _ = m.encode(x, xl)
    with torch.no_grad():
        loss = m.head_loss("en", h, xl, text, torch.tensor([3]))
        ids = m.to_head_ids("en", text)[0]
        start = torch.zeros(1, dtype=torch.long)
        g, _ = m._pred_net("en")(m.heads["en"].embed(torch.cat([start, ids]))[None])
        logp = m.joint_log_probs("en", h[0][:, None, :], g[0][None, :, :])
    assert loss.item() == pytest.approx(brute_force_nll(logp.double(), ids.tolist()), rel=1e-4)


# ----------------------------------------------------------------------------- systems

def test_systems_have_the_papers_parts():
    tl = token_lists()
    van, one, ms = small("vanilla"), small("onehot"), small("multisoftmax")
    lsp, lid = small("multisoftmax", lsp=True), small("multisoftmax", lid=True)
    assert van.heads_names == ["union"] and ms.heads_names == LANGS
    assert van.heads["union"].vocab_size == len(tl["union"])
    assert ms.heads["hi"].vocab_size == len(tl["hi"])
    assert one.encoder.input_size == van.encoder.input_size + len(LANGS)  # language one-hot at the input
    assert len(ms.pred_nets) == 1 and len(lsp.pred_nets) == 2  # shared vs language-specific prediction nets
    assert lid.has_lid and not ms.has_lid
    # the LID head adds parameters on the encoder side only
    assert lid.num_params() - ms.num_params() == sum(p.numel() for p in lid.lid_head.parameters())
    mono = MultilingualTransducer(LANGS, tl, system="mono", lang="hi", enc_layers=1, enc_units=16,
                                  pred_layers=1, pred_units=16, embed_dim=8, joint_dim=16)
    assert mono.heads_names == ["hi"]


def test_onehot_needs_the_language_and_mono_rejects_others():
    one = small("onehot")
    x = torch.randn(1, 4, 640)
    with pytest.raises(ValueError, match="needs the input language"):
        one.encode(x, torch.tensor([4]))
    mono = MultilingualTransducer(LANGS, token_lists(), system="mono", lang="en", enc_layers=1, enc_units=8,
                                  pred_layers=1, pred_units=8, embed_dim=4, joint_dim=8)
    feats = torch.randn(1, 9, 80)
    with pytest.raises(ValueError, match="no head"):
        mono(feats, torch.tensor([9]), union_ids(["B_न", "म"]), torch.tensor([2]), torch.tensor([1]))
    with pytest.raises(ValueError, match="mono system"):
        MultilingualTransducer(LANGS, token_lists(), system="mono")


def test_target_of_another_language_is_an_error():
    m = small()
    feats = torch.randn(1, 9, 80)
    with pytest.raises(ValueError, match="not a unit of head 'en'"):
        m(feats, torch.tensor([9]), union_ids(["B_न", "म"]), torch.tensor([2]), torch.tensor([0]))


def test_mixed_language_batch_equals_separate_batches():
    m = small(lid=True)
    torch.manual_seed(3)
    f1, f2 = torch.randn(1, 12, 80), torch.randn(1, 9, 80)
    t1, t2 = union_ids(["B_a", "b", "B_c"]), union_ids(["B_न", "म"])
    with torch.no_grad():
        a = m(f1, torch.tensor([12]), t1, torch.tensor([3]), torch.tensor([0]))
        b = m(f2, torch.tensor([9]), t2, torch.tensor([2]), torch.tensor([1]))
        feats = torch.zeros(2, 12, 80)
        feats[0], feats[1, :9] = f1[0], f2[0]
        text = torch.full((2, 3), -1)
        text[0], text[1, :2] = t1[0], t2[0]
        both = m(feats, torch.tensor([12, 9]), text, torch.tensor([3, 2]), torch.tensor([0, 1]))
    assert both["loss_rnnt"].item() == pytest.approx((a["loss_rnnt"] + b["loss_rnnt"]).item() / 2, rel=1e-5)
    assert both["loss_lid"].item() == pytest.approx((a["loss_lid"] + b["loss_lid"]).item() / 2, rel=1e-5)


@pytest.mark.parametrize("lid_rnn_layers", [0, 1])
def test_lid_loss_updates_only_encoder_and_lid_branch(lid_rnn_layers):
    m = small(lid=True, lid_rnn_layers=lid_rnn_layers).train()
    feats = torch.randn(1, 12, 80)
    out = m(feats, torch.tensor([12]), union_ids(["B_a", "b"]), torch.tensor([2]), torch.tensor([0]))
    out["loss_lid"].backward()
    for name, p in m.named_parameters():
        touched = p.grad is not None and p.grad.abs().sum() > 0
        assert touched == name.startswith(("encoder", "lid_head", "lid_rnn")), name
    assert any(n.startswith("lid_rnn") for n, _ in m.named_parameters()) == bool(lid_rnn_layers)


def test_lid_rnn_streams_over_chunks():
    """The LID LSTM's posteriors over consecutive chunks (state carried) equal one pass over the utterance."""
    from local_models.multisoftmax.decode import encode_chunks

    m = small(lid=True, lid_rnn_layers=1)
    x = torch.randn(40, 80)
    with torch.no_grad():
        full = torch.cat([lp for _, lp in encode_chunks(m, x, chunk=1000, with_lid=True)])
        chunked = torch.cat([lp for _, lp in encode_chunks(m, x, chunk=3, with_lid=True)])
    assert full.shape == (14, 2) and torch.allclose(full, chunked, atol=1e-5)
    assert torch.allclose(full.exp().sum(-1), torch.ones(14), atol=1e-5)
    with pytest.raises(ValueError, match="needs lid: true"):
        small(lid_rnn_layers=1)


def test_balanced_lid_weights_give_every_language_the_same_total():
    hours = {"en": 3.0, "hi": 1.0, "ta": 0.5}
    w = balanced_lid_weights(hours, ["ta", "en", "hi"])
    assert w == pytest.approx([4.5 / 1.5, 4.5 / 9, 4.5 / 3])  # total / (L hours_l), in the order asked
    assert sum(w_l * hours[lang] for w_l, lang in zip(w, ["ta", "en", "hi"])) == pytest.approx(4.5)
    with pytest.raises(ValueError, match="no training hours for gu"):
        balanced_lid_weights(hours, ["en", "gu"])


def test_lid_class_weights_scale_each_languages_cross_entropy():
    feats, text = torch.randn(1, 12, 80), union_ids(["B_a", "b"])
    plain = small(lid=True)(feats, torch.tensor([12]), text, torch.tensor([2]), torch.tensor([0]))
    weighted = small(lid=True, lid_class_weights=[2.5, 0.5])(feats, torch.tensor([12]), text, torch.tensor([2]),
                                                            torch.tensor([0]))
    assert weighted["loss_lid"].item() == pytest.approx(2.5 * plain["loss_lid"].item(), rel=1e-5)
    assert weighted["loss_rnnt"].item() == pytest.approx(plain["loss_rnnt"].item(), rel=1e-5)
    with pytest.raises(ValueError, match="one weight > 0 per language"):
        small(lid=True, lid_class_weights=[1.0])
    with pytest.raises(ValueError, match="needs lid: true"):
        small(lid_class_weights=[1.0, 1.0])


def test_task_stores_the_lid_weights_not_the_hours_file(tmp_path):
    import argparse
    import json

    from local_models.multisoftmax.task import TransducerTask
    from local_models.multisoftmax.units import write_units

    for name, units in token_lists().items():
        write_units(tmp_path / name / "units.txt", units)
    (tmp_path / "hours.json").write_text(json.dumps({"en": 0.3, "hi": 0.1}))
    conf = dict(langs=LANGS, units_dir=str(tmp_path), lid_hours_file=str(tmp_path / "hours.json"), system="multisoftmax",
                lid=True, enc_layers=1, enc_units=8, pred_layers=1, pred_units=8, embed_dim=4, joint_dim=8, lid_hidden=4)
    args = argparse.Namespace(model="transducer", model_conf=conf)
    model = TransducerTask.build_model(args)
    assert model.net.lid_class_weights.tolist() == pytest.approx([0.4 / 0.6, 0.4 / 0.2])
    assert "lid_hours_file" not in args.model_conf and "units_dir" not in args.model_conf
    assert args.model_conf["lid_class_weights"] == pytest.approx([0.4 / 0.6, 0.4 / 0.2])  # config.yaml rebuilds it
    rebuilt = TransducerTask.build_model(argparse.Namespace(model="transducer", model_conf=dict(args.model_conf)))
    assert rebuilt.net.lid_class_weights.tolist() == model.net.lid_class_weights.tolist()
    (tmp_path / "hours.json").write_text("{not json")
    with pytest.raises(ValueError, match="hours.json"):
        TransducerTask.build_model(argparse.Namespace(model="transducer", model_conf=dict(conf)))


def test_chunked_encoder_equals_full_pass():
    m = small()
    x = torch.randn(1, 10, 640)
    full, _ = m.encode(x, torch.tensor([10]))
    state, parts = None, []
    for a, b in ((0, 3), (3, 4), (4, 10)):
        h, state = m.encode(x[:, a:b], torch.tensor([b - a]), state=state)
        parts.append(h)
    assert torch.allclose(torch.cat(parts, 1), full, atol=1e-6)


# ----------------------------------------------------------------------------- language-sampled batches

def write_prepared(tmp_path: Path, frames_per_lang):
    """A dump dir as multisoftmax_prepare writes it: feats.shape + utt2category."""
    d = tmp_path / "train_all"
    d.mkdir()
    rng = np.random.default_rng(0)
    shape, cat = [], []
    for lang, (n, mean) in frames_per_lang.items():
        for i in range(n):
            utt = f"{lang}-s01-{i:04d}"
            shape.append(f"{utt} {int(rng.integers(mean // 2, mean * 3 // 2))},80")
            cat.append(f"{utt} {lang}")
    (d / "feats.shape").write_text("\n".join(sorted(shape)) + "\n")
    (d / "utt2category").write_text("\n".join(sorted(cat)) + "\n")
    return d


def test_language_batches_follow_the_hours(tmp_path):
    """With the recipe's training config, ESPnet's folded sampler + utt2category makes single-language
    batches, and since batches are shuffled as a whole, a batch's language is drawn in proportion to that
    language's share of the training frames (paper Section 4)."""
    from espnet2.iterators.sequence_iter_factory import SequenceIterFactory
    from espnet2.samplers.build_batch_sampler import build_batch_sampler

    conf = yaml.safe_load((RECIPE / "conf" / "tuning" / "train_tiny.yaml").read_text())
    d = write_prepared(tmp_path, {"en": (600, 300), "hi": (600, 300), "ta": (150, 300), "gu": (60, 600)})
    sampler = build_batch_sampler(type=conf["batch_type"], batch_size=conf["batch_size"], batch_bins=0,
                                  shape_files=[str(d / "feats.shape")], fold_lengths=conf["fold_length"],
                                  sort_in_batch=conf["sort_in_batch"], sort_batch=conf["sort_batch"],
                                  utt2category_file=str(d / "utt2category"))
    batches = list(sampler)
    lang = {l.split()[0]: l.split()[1] for l in (d / "utt2category").read_text().splitlines()}
    frames = {l.split()[0]: int(l.split()[1].split(",")[0]) for l in (d / "feats.shape").read_text().splitlines()}
    assert all(len({lang[u] for u in b}) == 1 for b in batches)  # one language per batch
    total = sum(frames.values())
    share_frames = {l: sum(f for u, f in frames.items() if lang[u] == l) / total for l in ("en", "hi", "ta", "gu")}
    # batches are shuffled as a whole each epoch: draws over 40 epochs
    factory = SequenceIterFactory(dataset=None, batches=batches, seed=0, shuffle=True)
    counts = {l: 0 for l in share_frames}
    first = []
    for epoch in range(1, 41):
        order = list(factory.build_iter(epoch).batch_sampler)  # what the trainer iterates
        first.append(lang[order[0][0]])
        for b in order:
            counts[lang[b[0]]] += 1
    n = sum(counts.values())
    for l, share in share_frames.items():
        assert counts[l] / n == pytest.approx(share, abs=0.05), (l, counts, share_frames)
    assert len(set(first)) > 1  # the order really changes between epochs

