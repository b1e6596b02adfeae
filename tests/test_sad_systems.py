"""Statistical SAD parts against references, detectors on synthetic signals, the FS02 reader."""
import importlib.util
import itertools
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile

from local_models.sad.detectors import SHIFT, get_detector, hold_to_frames, n_frames
from local_models.sad.statistical import (
    track_noise_psd,
    two_class_hmm,
    viterbi,
    viterbi_ring,
)

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs" / "fearless_steps" / "sad1"


def load_local(name):
    spec = importlib.util.spec_from_file_location(name, RECIPE / "local" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("psd", [0.01, 1.0, 50.0])
def test_minimum_statistics_converges_to_stationary_noise_psd(psd):
    rng = np.random.default_rng(0)
    # periodogram of complex Gaussian noise with PSD `psd`: exponential with mean psd, 3 bins
    power = rng.exponential(psd, size=(3000, 3))
    est = track_noise_psd(power, alpha=0.85, window=150)[500:]
    ratio_db = 10 * np.log10(est.mean() / psd)
    assert abs(ratio_db) < 1.0, ratio_db
    # and it follows a step down in the noise level within one search window (+ smoothing)
    step = np.concatenate([rng.exponential(10 * psd, (1000, 3)), rng.exponential(psd, (1000, 3))])
    est = track_noise_psd(step, alpha=0.85, window=150)
    assert abs(10 * np.log10(est[1000 + 200:].mean() / psd)) < 1.0


def brute_force_best_path(log_emis, log_trans, log_init):
    T, S = log_emis.shape
    best, best_path = -np.inf, None
    for path in itertools.product(range(S), repeat=T):
        score = log_init[path[0]] + log_emis[0, path[0]]
        score += sum(log_trans[path[t - 1], path[t]] + log_emis[t, path[t]] for t in range(1, T))
        if score > best:
            best, best_path = score, path
    return np.array(best_path)


@pytest.mark.parametrize("seed", range(5))
def test_viterbi_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    S, T = 3, 6
    trans = rng.dirichlet(np.ones(S), size=S)
    log_emis = np.log(rng.dirichlet(np.ones(S), size=T))
    log_init = np.log(rng.dirichlet(np.ones(S)))
    assert np.array_equal(viterbi(log_emis, np.log(trans), log_init),
                          brute_force_best_path(log_emis, np.log(trans), log_init))


@pytest.mark.parametrize("seed", range(3))
def test_ring_viterbi_equals_dense_viterbi(seed):
    rng = np.random.default_rng(seed)
    log_trans, log_init = two_class_hmm(5, 0.9)
    loglik = rng.normal(size=(400, 2)) * 3
    emis = np.repeat(loglik, 5, axis=1)
    assert np.array_equal(viterbi_ring(emis, 0.9, log_init), viterbi(emis, log_trans, log_init))


def test_hmm_chains_enforce_minimum_duration():
    log_trans, log_init = two_class_hmm(5, 0.9)
    # emissions favour speech for only 2 frames: too short for a 5-state chain to enter and leave
    loglik = np.zeros((40, 2))
    loglik[:, 1] = -2.0
    loglik[20:22, 1] = 2.0
    path = viterbi(np.repeat(loglik, 5, axis=1), log_trans, log_init)
    assert not (path >= 5).any()


def bursts_in_noise(sr=8000, seconds=30, seed=0):
    """Harmonic 'voiced' bursts (0.4 s) every 2 s in stationary noise, + reference mask."""
    rng = np.random.default_rng(seed)
    t = np.arange(seconds * sr) / sr
    speech = np.zeros_like(t)
    ref = np.zeros(n_frames(len(t), sr), bool)
    for start in np.arange(1.0, seconds - 1, 2.0):
        seg = (t >= start) & (t < start + 0.4)
        f0 = rng.uniform(100, 200)
        speech[seg] = sum(np.sin(2 * np.pi * f0 * k * t[seg]) / k for k in range(1, 15))
        ref[int(start / SHIFT): int((start + 0.4) / SHIFT)] = True
    wave = 0.1 * speech / np.abs(speech).max() + 0.01 * rng.standard_normal(len(t))
    return wave.astype(np.float32), ref


@pytest.mark.parametrize("name", ["energy", "stat_sad", "webrtcvad", "silero_vad"])
def test_detectors_frame_count_and_sanity(name):
    wave, ref = bursts_in_noise()
    det = get_detector(name)
    scores = det.scores(wave, 8000)
    assert scores.shape == (len(ref),) and np.isfinite(scores).all()
    if name in ("energy", "stat_sad"):  # clean harmonic bursts at 20 dB: both must find them
        from local_models.sad.labels import to_intervals
        from local_models.sad.metrics import score

        hyp = det.decide(scores)
        rates = score({"r": to_intervals(ref, SHIFT)}, {"r": to_intervals(hyp, SHIFT)}, {"r": 30.0}, collar=0.5)
        # the statistical SAD smooths over 0.48 s, so its decisions overhang by ~0.24 s: the collar forgives that
        assert rates["pooled"]["p_miss"] < 0.05 and rates["pooled"]["p_fa"] < 0.1, rates["pooled"]


def test_hold_to_frames():
    v = np.array([0.1, 0.9, 0.2])  # 32 ms chunks
    out = hold_to_frames(v, 0.032, 10)
    assert out.tolist() == [0.1, 0.1, 0.1, 0.9, 0.9, 0.9, 0.2, 0.2, 0.2, 0.2]  # by frame centre


def test_stat_sad_beats_energy_on_nonstationary_stream():
    """On an Apollo-like stream (drifting SNR, tones, clicks) the statistical SAD must beat the energy
    threshold at its best threshold, as the paper's Table 2 ordering says."""
    from local_models.sad.metrics import score
    from local_models.sad.labels import to_intervals

    mini = load_local("make_mini_corpus")
    voices = mini.split_voices(0)["dev"]
    wave, regions = mini.build_stream(np.random.default_rng([7, 1]), voices, 120.0)
    dur = {"r": len(wave) / 8000}
    ref = {"r": regions}
    stat = get_detector("stat_sad")
    dcf_stat = score(ref, {"r": to_intervals(stat.decide(stat.scores(wave, 8000)), SHIFT)}, dur, 0.5)["pooled"]["dcf"]
    energy = get_detector("energy")
    s = energy.scores(wave, 8000)
    dcf_energy = min(score(ref, {"r": to_intervals(energy.decide(s, th), SHIFT)}, dur, 0.5)["pooled"]["dcf"]
                     for th in energy.sweep)
    assert dcf_stat < dcf_energy, (dcf_stat, dcf_energy)


def test_fs02_reader_fixture(tmp_path):
    prep = load_local("prepare_fs02")
    root = tmp_path / "FS02"
    for split, rec in (("Train", "fs02_train_001"), ("Dev", "fs02_dev_001"), ("Eval", "fs02_eval_001")):
        d = root / "Data" / "Audio" / "Tracks" / split
        d.mkdir(parents=True)
        soundfile.write(d / f"{rec}.wav", np.zeros(8000 * 5, np.int16), 8000)
    labels = root / "Data" / "Transcripts" / "SAD"
    (labels / "Train").mkdir(parents=True)
    (labels / "Dev").mkdir(parents=True)
    (labels / "Train" / "fs02_train_001.txt").write_text("0.00 1.20 NS\n1.20 2.50 S\n2.50 5.00 NS\n")
    (labels / "Dev" / "fs02_dev_001.rttm").write_text(
        "SPEAKER fs02_dev_001 1 0.50 1.00 <NA> <NA> speech <NA> <NA>\n")
    prep.prepare(root, tmp_path / "data")
    data = tmp_path / "data"
    assert (data / "train" / "ref_segments").read_text() == "fs02_train_001-0000120-0000250 fs02_train_001 1.200 2.500\n"
    assert "fs02_dev_001 1 0.500 1.000" in (data / "dev" / "ref.rttm").read_text()
    assert not (data / "eval" / "ref.rttm").exists()
    assert (data / "eval" / "reco2dur").read_text() == "fs02_eval_001 5.000\n"
    from local_models.common.validate import validate_data_dir
    for s in ("train", "dev", "eval"):
        assert validate_data_dir(data / s, check_text=False) == []


def test_fs02_reader_names_bad_label_line(tmp_path):
    prep = load_local("prepare_fs02")
    d = tmp_path / "c" / "dev"
    d.mkdir(parents=True)
    soundfile.write(d / "a.wav", np.zeros(800, np.int16), 8000)
    (d / "a.txt").write_text("0.0 0.05 S\n0.05 0.02 NS\n")
    with pytest.raises(Exception, match=r"a.txt:2: end 0.02 is not after start 0.05"):
        prep.prepare(tmp_path / "c", tmp_path / "data")


def test_sad_decode_names_missing_audio(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "wav.scp").write_text("rec1 /nonexistent/rec1.wav\n")
    proc = subprocess.run([ROOT / "utils" / "sad_decode", "--system", "energy", str(d), str(tmp_path / "out")],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "/nonexistent/rec1.wav" in proc.stderr and "wav.scp" in proc.stderr
    assert not (tmp_path / "out" / "scores.scp").exists()
