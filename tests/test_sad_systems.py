"""Statistical SAD parts against references, detectors on synthetic signals, the FS02 reader."""
import importlib.util
import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

from local_models.common.viterbi import viterbi
from local_models.sad.detectors import SHIFT, hold_to_frames, n_frames
from local_models.sad.neural import hmm_smooth
from local_models.sad.registry import get_detector
from local_models.sad.statistical import track_noise_psd, two_class_hmm, viterbi_ring

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


# The hand-written Viterbis that librosa's core replaced (local_models/common/viterbi.py): slow references.
def reference_viterbi(log_emis, log_trans, log_init):
    T, S = log_emis.shape
    back = np.zeros((T, S), dtype=np.int32)
    delta = log_init + log_emis[0]
    for t in range(1, T):
        cand = delta[:, None] + log_trans
        back[t] = np.argmax(cand, axis=0)
        delta = cand[back[t], np.arange(S)] + log_emis[t]
    path = np.empty(T, dtype=np.int32)
    path[-1] = int(np.argmax(delta))
    for t in range(T - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path


def reference_viterbi_ring(log_emis, stay, log_init):
    """Two predecessors per state (stay, or move on from the previous state of the ring), ties as argmax."""
    T, S = log_emis.shape
    ls, lm = float(np.log(stay)), float(np.log(1 - stay))
    emis = log_emis.tolist()
    delta = (log_init + log_emis[0]).tolist()
    back = bytearray(T * S)  # 1: came from the previous state of the ring
    for t in range(1, T):
        row, new, base = emis[t], [0.0] * S, t * S
        for i in range(S):
            stayed, moved = delta[i] + ls, delta[i - 1] + lm
            if moved > stayed or (i > 0 and moved == stayed):
                new[i] = moved + row[i]
                back[base + i] = 1
            else:
                new[i] = stayed + row[i]
        delta = new
    path = np.empty(T, dtype=np.int32)
    state = int(np.argmax(delta))
    for t in range(T - 1, -1, -1):
        path[t] = state
        if back[t * S + state]:
            state = (state - 1) % S
    return path


def random_emissions(rng, T, S, kind):
    if kind == "ties":  # few distinct values: many exact ties between paths
        return rng.integers(-3, 1, size=(T, S)).astype(np.float64)
    if kind == "wide":  # scores far apart (GMM log-likelihoods of long streams): > 708 nats between states
        return rng.normal(size=(T, S)) * 400
    if kind == "float32":
        return (rng.normal(size=(T, S)) * 3).astype(np.float32)
    return rng.normal(size=(T, S)) * 3


@pytest.mark.parametrize("kind", ["normal", "ties", "wide", "float32"])
@pytest.mark.parametrize("seed", range(4))
def test_viterbi_equals_the_hand_written_one(seed, kind):
    rng = np.random.default_rng(seed)
    for _ in range(10):
        S, T = int(rng.integers(1, 7)), int(rng.integers(1, 120))
        trans = rng.dirichlet(np.ones(S), size=S) * (rng.random((S, S)) < 0.6)  # some forbidden transitions
        trans[np.arange(S), rng.integers(0, S, size=S)] += 0.1
        with np.errstate(divide="ignore"):
            log_trans = np.log(trans / trans.sum(1, keepdims=True))
            log_init = np.log(rng.dirichlet(np.ones(S)) * (rng.random(S) < 0.7))
        log_init[rng.integers(0, S)] = np.log(0.5)
        log_emis = random_emissions(rng, T, S, kind)
        assert np.array_equal(viterbi(log_emis, log_trans, log_init), reference_viterbi(log_emis, log_trans, log_init))


@pytest.mark.parametrize("kind", ["normal", "ties", "wide", "float32"])
@pytest.mark.parametrize("seed", range(4))
def test_ring_viterbi_equals_the_hand_written_ones(seed, kind):
    rng = np.random.default_rng(seed)
    for states, stay, T in ((5, 0.9, 400), (1, 0.9, 50), (3, float(rng.uniform(0.5, 0.99)), 300)):
        log_trans, log_init = two_class_hmm(states, stay)
        emis = np.repeat(random_emissions(rng, T, 2, kind), states, axis=1)  # states of a class share emissions
        got = viterbi_ring(emis, stay, log_init)
        assert got.dtype == np.int32
        assert np.array_equal(got, reference_viterbi_ring(emis, stay, log_init))
        assert np.array_equal(got, reference_viterbi(emis, log_trans, log_init))


@pytest.mark.parametrize("seed", range(3))
def test_hmm_smoothing_of_posteriors_is_unchanged(seed):
    rng = np.random.default_rng(seed)
    post = np.clip(rng.beta(0.5, 0.5, size=3000) + rng.normal(0, 0.1, 3000), 0, 1).astype(np.float32)
    for th in (0.02, 0.5, 0.9):
        p = np.clip(post.astype(np.float64), 1e-6, 1 - 1e-6)
        bias = np.log(th) - np.log1p(-th)  # as hmm_smooth computes it
        emis = np.repeat(np.stack([np.log1p(-p), np.log(p) - bias], 1), 5, axis=1)
        _, log_init = two_class_hmm(5, 0.9)
        assert np.array_equal(hmm_smooth(post, th), reference_viterbi_ring(emis, 0.9, log_init) >= 5)


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
    # every detector's frame scores rank the bursts above the noise between them (ROC AUC; 0.5 = a detector that
    # ignores its input; silero-vad, a speech model, ranks these synthetic harmonics least well), and none calls
    # digital silence speech
    from sklearn.metrics import roc_auc_score

    assert roc_auc_score(ref, scores) > (0.65 if name == "silero_vad" else 0.85)
    assert not det.decide(det.scores(np.zeros_like(wave), 8000)).any()
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
    wave, regions, _ = mini.build_stream(np.random.default_rng([7, 1]), voices, 120.0)
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
    """The release's tree and reference form (tests/layout_fs02.py has the sources): 12 tab-separated columns for
    Train, an RTTM for Dev (still read), no Eval reference (decode-only)."""
    prep = load_local("prepare_fs02")
    root = tmp_path / "FS02"
    for split, rec in (("Train", "FS02_train_001"), ("Dev", "FS02_dev_001"), ("Eval", "FS02_eval_001")):
        d = root / "Data" / "Audio" / "Tracks" / split
        d.mkdir(parents=True)
        soundfile.write(d / f"{rec}.wav", np.zeros(8000 * 5, np.int16), 8000)
    labels = root / "Data" / "Transcripts" / "SAD"
    (labels / "Train").mkdir(parents=True)
    (labels / "Dev").mkdir(parents=True)
    (labels / "Train" / "FS02_train_001.txt").write_text("".join(
        f"FS02_train_001\t0\t{s}\t{e}\t{k}\tmanual" + "\tX" * 6 + "\n"
        for s, e, k in (("0.0", "1.2", "NS"), ("1.2", "2.5", "S"), ("2.5", "5.0", "NS"))))
    (labels / "Dev" / "FS02_dev_001.rttm").write_text(
        "SPEAKER FS02_dev_001 1 0.50 1.00 <NA> <NA> speech <NA> <NA>\n")
    prep.prepare(root, tmp_path / "data")
    data = tmp_path / "data"
    assert (data / "train" / "ref_segments").read_text() == "FS02_train_001-0000120-0000250 FS02_train_001 1.200 2.500\n"
    assert "FS02_dev_001 1 0.500 1.000" in (data / "dev" / "ref.rttm").read_text()
    assert not (data / "eval" / "ref.rttm").exists()
    assert (data / "eval" / "reco2dur").read_text() == "FS02_eval_001 5.000\n"
    from local_models.common.validate import validate_data_dir
    for s in ("train", "dev", "eval"):
        assert validate_data_dir(data / s, check_text=False) == []


def test_fs02_reader_prefers_sad_references_and_keeps_quiet_recordings(tmp_path):
    """Another task's transcript of the same stem is not the SAD reference; a recording with no speech stays listed."""
    prep = load_local("prepare_fs02")
    root = tmp_path / "FS02"
    d = root / "Data" / "Audio" / "Tracks" / "Dev"
    d.mkdir(parents=True)
    soundfile.write(d / "FS02_dev_001.wav", np.zeros(8000 * 3, np.int16), 8000)
    for task in ("ASR", "SAD"):
        (root / "Data" / "Transcripts" / task / "Dev").mkdir(parents=True)
    (root / "Data" / "Transcripts" / "ASR" / "Dev" / "FS02_dev_001.txt").write_text("hello houston\n")
    (root / "Data" / "Transcripts" / "SAD" / "Dev" / "FS02_dev_001.txt").write_text(
        "FS02_dev_001\t0\t0.0\t3.0\tNS\tmanual" + "\tX" * 6 + "\n")
    prep.prepare(root, tmp_path / "data")
    assert (tmp_path / "data" / "dev" / "ref.rttm").read_text().startswith("NON-SPEECH FS02_dev_001 1 0.000 3.000")


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
    proc = subprocess.run([sys.executable, "-m", "local_models.bin.sad_decode", "--system", "energy", str(d),
                           str(tmp_path / "out")], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 1 and "/nonexistent/rec1.wav" in proc.stderr and "wav.scp" in proc.stderr
    assert not (tmp_path / "out" / "scores.scp").exists()


# ----------------------------------------------------------------------------- the names (local_models/sad/systems.py)
def test_systems_module_is_torch_free():
    code = ("import sys, local_models.sad.systems; "
            "print(' '.join(m for m in ('torch', 'espnet', 'espnet2', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_consumers_use_the_systems_names():
    from local_models.sad import inference, neural, nets, pack, registry, report, systems, task
    from local_models.bin import sad_decode, sad_segments

    assert tuple(nets.NETS) == systems.NETS == report.NET_NAMES
    assert set(task.model_choices.classes) == set(nets.NETS)
    for name in systems.DETECTORS:
        cls = registry.detector_class(name)
        assert cls.name == name
        spec = systems.SYSTEMS[name]
        if spec.kind == "neural":
            assert (cls.model_name, cls.smoothing) == (spec.net, spec.smoothing)
            assert cls in neural.NEURAL
    assert set(systems.PAPER_TABLE2) == set(systems.SYSTEMS) | {systems.DEVBEST}  # a label for every system
    assert report.PAPER_TABLE2 is systems.PAPER_TABLE2 and set(systems.BASELINES) <= set(systems.SYSTEMS)
    assert set(systems.SEPARABILITY_ROWS) <= set(systems.PAPER_TABLE2)
    assert pack.PACKABLE == ("stat_sad", "cnn_hmm", "cnn_median", "rnn_hmm", "rnn_median", "seg_rnn",
                             "seg_rnn_devbest", "majority_vote")
    assert inference.NEURAL_SYSTEMS == systems.NEURAL_SYSTEMS
    for tool in (sad_decode, sad_segments):
        action = next(a for a in tool.get_parser()._actions if a.dest == "system")
        assert sorted(action.choices) == sorted(systems.DETECTORS)
    stages = (ROOT / "local_models" / "sad" / "stages.sh").read_text()
    # stages.sh asks systems.py (sad_systems): no case statement over system names, no list of them
    assert "cnn_*)" not in stages and "packable=\" stat_sad" not in stages and "exp/cnn_hmm/threshold exp/rnn_hmm" not in stages
    for query in ("nets_of", "neural", "packable", "vote_members", "check"):
        assert f"sad_systems {query}" in stages
    # the default --systems is a literal of every name (tests/test_recipe_layout.py checks it against DETECTORS)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "local_models.sad.systems", *args], capture_output=True, text=True,
                          cwd=ROOT)


def test_systems_cli(tmp_path):
    assert _cli("names").stdout.split() == ["energy", "webrtcvad", "silero_vad", "stat_sad", "cnn_hmm", "cnn_median",
                                            "rnn_hmm", "rnn_median", "seg_rnn", "majority_vote"]
    assert _cli("nets_of", "cnn_hmm rnn_median", "stat_sad").stdout.split() == ["cnn1d", "rnn"]
    assert _cli("nets_of", "majority_vote").stdout.split() == ["cnn1d", "rnn", "seg_rnn"]
    assert _cli("nets_of", "energy stat_sad").stdout.strip() == ""
    assert _cli("neural").stdout.split() == ["cnn_hmm", "cnn_median", "rnn_hmm", "rnn_median", "seg_rnn",
                                             "majority_vote"]
    assert "seg_rnn_devbest" in _cli("packable").stdout.split() and "energy" not in _cli("packable").stdout.split()
    assert _cli("vote_members", "--exp", str(tmp_path)).stdout.split() == ["cnn_hmm", "rnn_hmm", "seg_rnn"]
    (tmp_path / "seg_rnn_devbest").mkdir()
    (tmp_path / "seg_rnn_devbest" / "model_dir").write_text("exp/seg_grid/L25_S1\n")
    assert _cli("vote_members", "--exp", str(tmp_path)).stdout.split() == ["cnn_hmm", "rnn_hmm", "seg_rnn_devbest"]
    assert _cli("check", "cnn_hmm stat_sad").returncode == 0
    for query in (("check", "cnn_hmm", "cnn_hmmm"), ("nets_of", "cnn_hmmm")):
        r = _cli(*query)
        assert r.returncode == 1 and r.stdout == ""
        assert "unknown SAD system 'cnn_hmmm'; known: energy" in r.stderr
    assert _cli("--help").returncode == 0
