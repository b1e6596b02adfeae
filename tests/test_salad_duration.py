"""The MUSA duration model of the SALAD recipe: phone-level dumps and statistics, the model and its ESPnet wrapper,
frames from durations, the duration and DTW-aligned scores of two-stage synthesis, the front end's text check."""
import json

import numpy as np
import pytest
import torch

from local_models.common.datadir import read_table
from local_models.common.features import ArkStream
from local_models.salad import acoustic
from local_models.salad import linguistic as li
from local_models.salad.duration import (duration_scores, frames_of, load_duration_stats, pool_duration_scores,
                                         save_duration_stats)
from local_models.salad.frontend import unreadable_characters

torch.set_num_threads(1)  # 2 shared cores: more threads contend and make these tiny models slower


def test_frames_from_durations_is_frame_features_of_the_labelled_durations():
    x = np.random.RandomState(0).rand(4, 3).astype(np.float32)
    starts, ends = np.array([0.0, 0.012, 0.0121, 0.030]), np.array([0.012, 0.0121, 0.030, 0.050])
    durations = li.frame_durations(starts, ends, 0.005)
    assert durations.tolist() == [2, 0, 4, 4]  # a phone shorter than a frame gets none
    np.testing.assert_array_equal(li.frames_from_durations(x, durations, max_dur_frames=4),
                                  li.frame_features(x, starts, ends, 0.005, max_dur_frames=4))
    for bad in (np.array([1.5, 1, 1, 1]), np.array([1, -1, 1, 1]), np.zeros(4, int), np.ones(3, int)):
        with pytest.raises(ValueError, match="durations"):
            li.frames_from_durations(x, bad, max_dur_frames=4)


def test_frames_of_rounds_divides_by_speed_and_keeps_every_phone():
    log1p = torch.log1p(torch.tensor([0.0, 0.4, 7.0, 20.0]))
    assert frames_of(log1p).tolist() == [1, 1, 7, 20]
    assert frames_of(log1p, speed=2.0).tolist() == [1, 1, 4, 10] and frames_of(log1p).dtype == torch.int64
    with pytest.raises(ValueError, match="speed"):
        frames_of(log1p, speed=0)


def test_duration_scores_rmse_ms_and_pearson():
    a = duration_scores([2, 4, 10, 6], [3, 4, 8, 6], ["sil", "a", "b", "pau"])
    b = duration_scores([5, 7], [5, 9])
    s = pool_duration_scores([a, b])
    ref, hyp = np.array([2, 4, 10, 6, 5, 7.0]), np.array([3, 4, 8, 6, 5, 9.0])
    assert s["dur_rmse_frames"] == pytest.approx(np.sqrt(np.mean((ref - hyp) ** 2)))
    assert s["dur_rmse_ms"] == pytest.approx(5 * s["dur_rmse_frames"])
    assert s["dur_pearson"] == pytest.approx(np.corrcoef(ref, hyp)[0, 1])
    speech = np.array([1, 2, 4, 5])  # sil and pau left out
    assert s["dur_rmse_frames_speech"] == pytest.approx(np.sqrt(np.mean((ref[speech] - hyp[speech]) ** 2)))
    assert s["length_ratio"] == pytest.approx(hyp.sum() / ref.sum()) and s["phones"] == 6
    with pytest.raises(ValueError, match="differ in number of phones"):
        duration_scores([1, 2], [1])


def test_duration_model_learns_and_predicts_integer_frames(tmp_path):
    from local_models.salad.duration_task import DurationModel

    torch.manual_seed(0)
    save_duration_stats(tmp_path / "d.npz", np.zeros(5), np.ones(5), np.log1p(6.0), 0.6)
    assert load_duration_stats(tmp_path / "d.npz")[2:] == pytest.approx((np.log1p(6.0), 0.6))
    m = DurationModel(idim=5, stats_file=str(tmp_path / "d.npz"), emb=16, hidden=16, dropout=0.0)
    x = torch.randn(8, 12, 5)
    dur = torch.where(x[..., 0] > 0, 12, 3)  # long phones where dim 0 is positive
    lengths = torch.tensor([12] * 4 + [7] * 4)
    opt = torch.optim.Adam(m.parameters(), lr=0.03)
    first = None
    for _ in range(80):
        loss, stats, weight = m(x, lengths, dur, lengths)
        first = first if first is not None else float(loss.detach())
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert float(loss.detach()) < 0.1 * first and float(weight) == lengths.sum()
    assert float(stats["rmse"]) < 1.0
    m.eval()
    pred = m.predict(x[0].numpy())
    assert pred.dtype == np.int64 and pred.min() >= 1 and np.abs(pred - dur[0].numpy()).max() <= 1
    assert np.all(m.predict(x[0].numpy(), speed=3.0) <= np.maximum(np.round(pred / 3) + 1, 1))
    # the padding after a short utterance does not change its phones' predictions (unidirectional)
    z = m.net((x[4:5, :7] - m.in_mean) / m.in_std)
    assert torch.allclose(z, m.net((x[4:5] - m.in_mean) / m.in_std)[:, :7], atol=1e-6)


def _dump(d, utts, rng, dim=5):
    """A fake stage-3 dump: phone vectors, durations, phones, linguistic and acoustic frames."""
    d.mkdir(parents=True)
    durs = {}
    with ArkStream(d / "lingp") as lp, ArkStream(d / "ling") as lg, ArkStream(d / "acou") as ac:
        for u in utts:
            n = int(rng.randint(4, 8))
            x = rng.rand(n, dim).astype(np.float32)
            durs[u] = rng.randint(1, 9, size=n)
            lp.write(u, x)
            lg.write(u, li.frames_from_durations(x, durs[u], max_dur_frames=10))
            a = rng.randn(int(durs[u].sum()), acoustic.DIM).astype(np.float32)
            a[:, acoustic.UV] = 1.0
            a[:, acoustic.LF0] = np.log(120.0)
            ac.write(u, a)
    (d / "dur").write_text("".join(f"{u} {' '.join(map(str, v))}\n" for u, v in durs.items()))
    (d / "phones").write_text("".join(f"{u} sil{' a' * (len(v) - 2)} sil\n" for u, v in durs.items()))
    (d / "max_dur_frames").write_text("10\n")
    return durs


class _Echo:
    """An 'acoustic model' that returns frames determined by the linguistic frames (for the decode plumbing)."""

    precision = "fp32"
    net = torch.nn.Linear(1, 1)

    def synthesise_frames(self, ling):
        y = np.zeros((len(ling), acoustic.DIM), np.float32)
        y[:, : ling.shape[1]] = ling
        y[:, acoustic.UV], y[:, acoustic.LF0] = 1.0, np.log(120.0)
        return y


def test_two_stage_decode_scores_durations_and_dtw_mcd(tmp_path):
    from local_models.salad.data import fit_duration_stats
    from local_models.salad.duration_task import DurationModel
    from local_models.salad.predicted import decode_durations, decode_predicted, dtw_scores

    durs = _dump(tmp_path / "dump", ["u1", "u2", "u3"], np.random.RandomState(0))
    (tmp_path / "q.hed").write_text('QS "C-a" {*-a+*}\nQS "C-b" {*-b+*}\nQS "C-c" {*-c+*}\nQS "C-d" {*-d+*}\n'
                                    'CQS "n" {/J:(\\d+)+}\n')
    fit_duration_stats(tmp_path / "dump", str(tmp_path / "q.hed"), tmp_path / "dur_stats.npz")
    mean, std, dmean, dstd = load_duration_stats(tmp_path / "dur_stats.npz")
    assert np.all(mean[:4] == 0) and np.all(std[:4] == 1) and mean[4] > 0  # binary dims pass through
    logd = np.log1p(np.concatenate(list(durs.values())))
    assert dmean == pytest.approx(logd.mean()) and dstd == pytest.approx(logd.std())
    model = DurationModel(idim=5, stats_file=str(tmp_path / "dur_stats.npz"), emb=4, hidden=4).eval()
    s = decode_durations(model, tmp_path / "dump", tmp_path / "out_dur")
    pred = read_table(tmp_path / "out_dur" / "durations")
    assert set(pred) == set(durs) and s["utterances"] == 3 and s["phones"] == sum(map(len, durs.values()))
    assert json.loads((tmp_path / "out_dur" / "scores.json").read_text())["dur_rmse_ms"] == s["dur_rmse_ms"]
    # labelled durations as the 'prediction': DTW pairs the same frames, the scores equal the forced ones
    (tmp_path / "labelled").write_text((tmp_path / "dump" / "dur").read_text())
    p = decode_predicted(_Echo(), tmp_path / "dump", tmp_path / "labelled", tmp_path / "out", num_wavs=1)
    assert p["mcd_db"] == pytest.approx(p["mcd_gt_dtw_db"]) and p["length_ratio"] == 1.0
    assert len(list((tmp_path / "out" / "wav").glob("*.wav"))) == 1 and not (tmp_path / "out.tmp").exists()
    # a missing utterance: nothing half-written replaces the previous output
    (tmp_path / "short").write_text("u1 1 2 3 4\n")
    with pytest.raises(ValueError, match="no entry for 'u2'"):
        decode_predicted(_Echo(), tmp_path / "dump", tmp_path / "short", tmp_path / "out", num_wavs=0)
    assert (tmp_path / "out" / "scores.json").is_file()
    # DTW: a copy played at half speed has zero distortion along the path, not frame by frame
    ref = np.random.RandomState(1).randn(20, acoustic.DIM)
    ref[:, acoustic.UV] = 1.0
    slow = np.repeat(ref, 2, axis=0)
    assert dtw_scores(ref, slow)["mcd_sum_db"] == pytest.approx(0.0, abs=1e-9)
    assert dtw_scores(ref, slow)["frames"] == 40 and acoustic.scores(ref, slow[:20])["mcd_sum_db"] > 1


@pytest.mark.parametrize("text,bad", [
    ("Hola, son las 3 de la tarde.", []), ("¿Qué tal? ¡Bien! «Sí» (no) - vale", []),
    ("Çà ö l'hôpital, ÁÉÍÓÚÑ Ü", []), ("Hola 你好 50% € &", ["你", "好", "%", "€", "&"]),
    ("tab\tand\nnewline", []), ("a\x00b\u200bc", ["\x00", "\u200b"]),
])
def test_unreadable_characters(text, bad):
    assert unreadable_characters(text) == bad


def test_forced_decode_leaves_the_references_silence_out_of_its_mcd_without_silence(tmp_path):
    """The labels' sil frames (first and last phone of the fake dump) are left out of mcd_speech_db: making the
    reference's silences 100 dB-ish worse moves the MCD with silence and not the one without."""
    import kaldiio

    from local_models.salad.inference import PER_UTT_SUMS, decode

    durs = _dump(tmp_path / "dump", ["u1", "u2"], np.random.RandomState(3))
    before = decode(_Echo(), tmp_path / "dump", tmp_path / "out", num_wavs=0)
    sums = json.loads((tmp_path / "out" / PER_UTT_SUMS).read_text())
    assert {u: v["speech_frames"] for u, v in sums.items()} == {u: int(d[1:-1].sum()) for u, d in durs.items()}
    assert before["speech_frames"] == sum(int(d[1:-1].sum()) for d in durs.values())
    assert sum(v["mcd_speech_sum_db"] for v in sums.values()) / before["speech_frames"] == before["mcd_speech_db"]
    acou = {u: np.array(m) for u, m in kaldiio.load_scp(str(tmp_path / "dump" / "acou.scp")).items()}
    with ArkStream(tmp_path / "dump" / "acou") as ac:
        for u, a in acou.items():
            a[: durs[u][0], 1] += 100.0  # the leading sil
            a[len(a) - durs[u][-1]:, 1] += 100.0  # the trailing sil
            ac.write(u, a)
    after = decode(_Echo(), tmp_path / "dump", tmp_path / "out", num_wavs=0)
    assert after["mcd_speech_db"] == pytest.approx(before["mcd_speech_db"], rel=1e-12)
    assert after["mcd_db"] > before["mcd_db"] + 50
    (tmp_path / "dump" / "phones").unlink()
    with pytest.raises(ValueError, match="phones: missing"):
        decode(_Echo(), tmp_path / "dump", tmp_path / "out", num_wavs=0)
