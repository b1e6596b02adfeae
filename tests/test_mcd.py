"""Mel-cepstral distortion: DTW against a slow reference, hand examples, behaviour on synthetic vowels, CLI."""
import json
import math

import numpy as np
import pytest
import scipy.signal
import soundfile

from local_models.bin import mcd_score
from local_models.common import mcd

SR = 16000
# (F1, F2, F3) of a few vowels, Hz
FORMANTS = [(730, 1090, 2440), (270, 2290, 3010), (300, 870, 2240), (530, 1840, 2480), (660, 1720, 2410)]


def vowels(seq, seg=0.2, f0=120.0, sr=SR, seed=0):
    """Vowel-like signal: a vibrato pulse train through three formant resonators, one vowel per segment."""
    rng, out = np.random.default_rng(seed), []
    for k, v in enumerate(seq):
        n = int(seg * sr)
        t = np.arange(n) / sr
        phase = np.cumsum(f0 * (1 + 0.05 * np.sin(2 * np.pi * 2 * t + k))) / sr
        y = (np.diff(np.floor(phase), prepend=0) > 0).astype(float) + 0.01 * rng.standard_normal(n)
        for f in FORMANTS[v]:
            r, th = math.exp(-math.pi * 80 / sr), 2 * math.pi * f / sr
            y = scipy.signal.lfilter([1 - r], [1, -2 * r * math.cos(th), r * r], y)
        out.append(y)
    y = np.concatenate(out)
    # -54 dB white floor: without it the all-pole valleys sit ~100 dB down, where any filtering dominates the log
    return (0.5 * y / np.abs(y).max() + 1e-3 * rng.standard_normal(len(y))).astype(np.float32)


FAST = {"f0_method": "dio"}  # harvest is ~50x slower; the spectral envelope barely depends on the choice


@pytest.fixture(scope="module")
def speech():
    return vowels([0, 1, 2, 3, 4, 1, 0, 3])


# --------------------------------------------------------------------------- DTW
def dtw_path_reference(cost) -> np.ndarray:
    """Plain-Python DTW path (the project's former compiled kernel, as loops): ties diagonal, (i-1, j), (i, j-1)."""
    cost = np.asarray(cost, dtype=float).tolist()
    n, m = len(cost), len(cost[0])
    inf = float("inf")
    acc = [[inf] * m for _ in range(n)]
    for i in range(n):
        for j in range(m):
            prev = 0.0 if i == j == 0 else min(acc[i - 1][j - 1] if i and j else inf,
                                               acc[i - 1][j] if i else inf, acc[i][j - 1] if j else inf)
            acc[i][j] = cost[i][j] + prev
    path, i, j = [(n - 1, m - 1)], n - 1, m - 1
    while (i, j) != (0, 0):
        steps = [(i - 1, j - 1), (i - 1, j), (i, j - 1)]  # tie order: diagonal, up, left
        i, j = min((s for s in steps if s[0] >= 0 and s[1] >= 0), key=lambda s: acc[s[0]][s[1]])
        path.append((i, j))
    return np.array(path[::-1], dtype=np.int64)


@pytest.mark.parametrize("shape", [(1, 1), (1, 6), (6, 1), (2, 2), (5, 9), (9, 5), (12, 12), (17, 11)])
def test_dtw_path_matches_reference(shape):
    rng = np.random.default_rng(sum(shape))
    for cost in (rng.random(shape), rng.integers(0, 3, shape).astype(float)):  # integers: many ties
        path = mcd.dtw_path(cost)  # librosa.sequence.dtw (local_models.common.dtw), re-exported by mcd
        np.testing.assert_array_equal(path, dtw_path_reference(cost))
        assert tuple(path[0]) == (0, 0) and tuple(path[-1]) == (shape[0] - 1, shape[1] - 1)
        steps = np.diff(path, axis=0)
        assert ((steps >= 0) & (steps <= 1)).all() and (steps.sum(axis=1) >= 1).all()


def test_dtw_path_is_optimal_on_small_case():
    # brute force over all monotone paths of a 4x5 matrix
    rng = np.random.default_rng(0)
    cost = rng.random((4, 5))

    def best(i, j):
        if (i, j) == (0, 0):
            return cost[0, 0]
        prev = [best(a, b) for a, b in ((i - 1, j - 1), (i - 1, j), (i, j - 1)) if a >= 0 and b >= 0]
        return cost[i, j] + min(prev)

    path = mcd.dtw_path(cost)
    assert cost[path[:, 0], path[:, 1]].sum() == pytest.approx(best(3, 4))


def test_dtw_rejects_empty():
    with pytest.raises(ValueError, match="non-empty"):
        mcd.dtw_path(np.zeros((0, 3)))


# --------------------------------------------------------------------------- MCD on mel-cepstra
def test_mcd_aligned_hand_example():
    ref = np.array([[5.0, 1, 0], [0, 3, 4], [1, 1, 1]])
    hyp = np.array([[2.0, 1, 0], [0, 0, 0], [1, 1, 1], [9, 9, 9]])  # 4th frame: beyond ref, dropped
    k = 10 * math.sqrt(2) / math.log(10)  # 6.14185...
    # with c0: frame distances 3, 5, 0 -> mean 8/3
    r = mcd.mcd_aligned(ref, hyp)
    assert r["mcd_db"] == pytest.approx(16.378269, abs=1e-5) == pytest.approx(k * 8 / 3)
    assert (r["frames"], r["ref_frames"], r["hyp_frames"], r["dims"]) == (3, 3, 4, 3)
    assert r["mcd_sum_db"] == pytest.approx(3 * r["mcd_db"])
    # without c0: 0, 5, 0 -> 5/3
    assert mcd.mcd_aligned(ref, hyp, include_c0=False)["mcd_db"] == pytest.approx(10.236418, abs=1e-5)
    # order=1 keeps c0, c1: 3, 3, 0 -> 2
    assert mcd.mcd_aligned(ref, hyp, order=1)["mcd_db"] == pytest.approx(k * 2)
    with pytest.raises(ValueError, match="order 5"):
        mcd.mcd_aligned(ref, hyp, order=5)


def test_mcd_dtw_absorbs_repeated_frames():
    a, b = [0.0, 1, 2], [7.0, -1, 3]
    ref = np.array([a, b])
    hyp = np.array([a, a, [99.0, -1, 3], b])  # c0 differs in frame 2: ignored by default
    r = mcd.mcd_dtw(ref, hyp)
    assert r["mcd_db"] == 0.0 and r["frames"] == 4
    np.testing.assert_array_equal(r["path"], [[0, 0], [0, 1], [1, 2], [1, 3]])
    assert mcd.mcd_dtw(ref, hyp, include_c0=True)["mcd_db"] > 0


def test_mcd_dtw_symmetric():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((40, 24)), rng.standard_normal((31, 24))
    xy, yx = mcd.mcd_dtw(x, y), mcd.mcd_dtw(y, x)
    # same optimal total; same path transposed unless ties (none with random floats)
    assert xy["mcd_sum_db"] == pytest.approx(yx["mcd_sum_db"], rel=1e-12)
    np.testing.assert_array_equal(xy["path"], yx["path"][:, ::-1])
    assert xy["mcd_db"] == pytest.approx(yx["mcd_db"], rel=1e-12)


def test_mcd_corpus_pools_frames_and_utterances():
    ref = np.zeros((2, 2))
    pairs = {"short": (ref[:1], np.array([[0.0, 1.0]])), "long": (np.zeros((3, 2)), np.zeros((3, 2)))}
    r = mcd.mcd_corpus(pairs, dtw=False, include_c0=False)
    k = 10 * math.sqrt(2) / math.log(10)
    assert r["mcd_db_utt_mean"] == pytest.approx(k / 2)  # (k + 0) / 2 utterances
    assert r["mcd_db_frame_pooled"] == pytest.approx(k / 4)  # k over 1 + 3 frames
    assert (r["utterances"], r["frames"]) == (2, 4) and "pooling" in r


def test_pooled_difference_is_the_gap_of_frame_pooled_corpus_mcds():
    # the reports bootstrap pooled_difference over per-utterance sums: on the whole set it must equal the gap between
    # the two corpus MCDs pool() computes, utterances of any length (a per-utterance mean would weigh them equally)
    rng = np.random.default_rng(0)
    ref = {u: rng.normal(size=(n, 4)) for u, n in (("a", 3), ("b", 11), ("c", 40))}
    per = [{u: mcd.mcd_aligned(r, r + rng.normal(scale=sd, size=r.shape), True) for u, r in ref.items()}
           for sd in (0.5, 1.5)]
    sys_a, sys_b = (mcd.pool(p) for p in per)
    cols = [[p[u][k] for u in ref] for p in per for k in ("mcd_sum_db", "frames")]
    want = sys_a["mcd_db_frame_pooled"] - sys_b["mcd_db_frame_pooled"]
    assert mcd.pooled_difference(*cols) == pytest.approx(want)
    assert want != pytest.approx(sys_a["mcd_db_utt_mean"] - sys_b["mcd_db_utt_mean"])  # the weighting matters here
    assert mcd.pooled_mean(cols[0], cols[1]) == pytest.approx(sys_a["mcd_db_frame_pooled"])


# --------------------------------------------------------------------------- waves
def test_identity_is_zero(speech):
    for dtw in (True, False):
        r = mcd.mcd_wavs(speech, speech, SR, dtw=dtw, **FAST)
        assert r["mcd_db"] == 0.0 and r["lf0_rmse"] == 0.0 and r["vuv_error"] == 0.0
    r = mcd.mcd_wavs(speech, speech, SR, dtw=False, **FAST)
    assert r["dims"] == 40  # SALAD: c0..c39


def test_time_stretch_dtw_much_smaller_than_aligned(speech):
    import librosa

    stretched = librosa.effects.time_stretch(speech, rate=0.9)
    d = mcd.mcd_wavs(speech, stretched, SR, **FAST)
    a = mcd.mcd_wavs(speech, stretched, SR, dtw=False, include_c0=False, order=mcd.default_order(SR), **FAST)
    # the phase vocoder itself costs ~4 dB (3.6 with harvest); misalignment costs much more
    assert d["mcd_db"] < 5 and a["mcd_db"] > 1.5 * d["mcd_db"]
    assert d["frames"] >= max(d["ref_frames"], d["hyp_frames"]) > d["ref_frames"]


def test_speech_vs_white_noise_is_large(speech):
    noise = 0.1 * np.random.default_rng(1).standard_normal(len(speech))
    assert mcd.mcd_wavs(speech, noise, SR, f0=False, **FAST)["mcd_db"] > 10


def test_gain_only_affects_c0(speech):
    assert mcd.mcd_wavs(speech, 0.3 * speech, SR, **FAST)["mcd_db"] < 0.1
    with_c0 = mcd.mcd_wavs(speech, 0.3 * speech, SR, dtw=False, **FAST)["mcd_db"]
    # c0 is log amplitude: |ln 0.3| * 10 sqrt(2) / ln 10 = 7.39 dB
    assert with_c0 == pytest.approx(abs(math.log(0.3)) * 10 * math.sqrt(2) / math.log(10), abs=0.1)


def test_other_rate_is_resampled(speech):
    from local_models.common.audio import resample

    hyp = resample(speech, SR, 22050)
    resampled = mcd.mcd_wavs(speech, hyp, SR, hyp_sr=22050, f0=False, **FAST)["mcd_db"]
    as_if_16k = mcd.mcd_wavs(speech, hyp, SR, f0=False, **FAST)["mcd_db"]  # rate ignored: formants shift
    # not 0: the resampling filter's edge near 8 kHz shows in the top mel-cepstral band
    assert resampled < 2.0 and as_if_16k > 3 * resampled


@pytest.mark.parametrize("bad, match", [(np.zeros(0), "empty"), (np.zeros(SR), "silent"),
                                        (np.full(100, np.nan), "NaN"), (np.zeros((2, 100)), "1-D")])
def test_bad_input_is_a_clear_error(speech, bad, match):
    with pytest.raises(ValueError, match=f"hyp wave .*{match}"):
        mcd.mcd_wavs(speech, bad, SR, **FAST)


# --------------------------------------------------------------------------- CLI
def _write(d, utts):
    d.mkdir()
    for name, y in utts.items():
        soundfile.write(d / f"{name}.wav", y, SR)


def test_cli_dirs_json_and_tsv(tmp_path, capsys):
    a, b, c = vowels([0, 1, 2], seg=0.15), vowels([3, 4, 1], seg=0.15, f0=150), vowels([2, 0], seg=0.15)
    _write(tmp_path / "ref", {"u1": a, "u2": b, "u3": c})
    _write(tmp_path / "hyp", {"u1": a, "u2": vowels([3, 4, 0], seg=0.15, f0=150)})
    scp = tmp_path / "hyp.scp"  # hyp as wav.scp with a pipe entry for u2
    scp.write_text(f"u1 {tmp_path / 'hyp' / 'u1.wav'}\nu2 cat {tmp_path / 'hyp' / 'u2.wav'} |\n")
    out, tsv = tmp_path / "res" / "mcd.json", tmp_path / "res" / "mcd.tsv"
    rc = mcd_score.main(["--ref", str(tmp_path / "ref"), "--hyp", str(scp), "--json", str(out),
                         "--per-utt", str(tsv)])
    assert rc == 0
    assert "skipping 1 of 3" in capsys.readouterr().err
    res = json.loads(out.read_text())
    assert res["utterances_scored"] == 2 and res["ref_utterances_skipped"] == 1
    assert res["per_utt"]["u1"]["mcd_db"] == 0.0 and res["per_utt"]["u2"]["mcd_db"] > 1
    assert res["mcd_db_utt_mean"] == pytest.approx(res["per_utt"]["u2"]["mcd_db"] / 2)
    frames = [res["per_utt"][u]["frames"] for u in ("u1", "u2")]
    assert res["mcd_db_frame_pooled"] == pytest.approx(res["per_utt"]["u2"]["mcd_sum_db"] / sum(frames))
    assert res["settings"]["variant"] == "dtw" and res["settings"]["include_c0"] is False
    rows = tsv.read_text().splitlines()
    assert rows[0].startswith("utt\tmcd_db") and [r.split("\t")[0] for r in rows[1:]] == ["u1", "u2"]


def test_cli_hyp_key_missing_from_ref_is_named(tmp_path, capsys):
    y = vowels([0, 1], seg=0.1)
    _write(tmp_path / "ref", {"u1": y})
    _write(tmp_path / "hyp", {"u1": y, "stray_utt": y})
    rc = mcd_score.main(["--ref", str(tmp_path / "ref"), "--hyp", str(tmp_path / "hyp"), "--no-dtw"])
    assert rc == 1
    assert "stray_utt" in capsys.readouterr().err


def test_cli_help(capsys):
    with pytest.raises(SystemExit) as e:
        mcd_score.main(["--help"])
    assert e.value.code == 0 and "--no-dtw" in capsys.readouterr().out
