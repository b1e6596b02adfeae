"""Unsupervised statistical SAD of the paper's Section 2 (Fig. 1), on a 10 ms frame grid.

Pipeline (all in the STFT power domain; the time-domain filters of the paper are linear, so their
effect on band energies is a multiplication by |H(f)|^2, and the 1st-order LPC filter by a1(t)^2):
  1. minimum-statistics noise PSD |V|^2 (Martin-style: smoothed periodogram, running minimum, bias
     compensated), Wiener gain W = max(1 - gamma |V|^2/|X|^2, G_min), iterated `iterations` times;
  2. high-pass, then the first-order LPC predictor a1 = r(1)/r(0) per frame (speech is predictable,
     noise is not: its energy is kept, the noise's is suppressed);
  3. energies of 1 kHz sub-bands, smoothed over 0.48 s, weighted 1/s and summed: CSBE(t);
  4. floor tracking of CSBE by minimum statistics (F-CSBE) and its recording mean (A-CSBE);
  5. noise / speech GMMs on log CSBE, trained on frames below / above thresholds derived from A-CSBE;
  6. Viterbi over an HMM of 5 noise + 5 speech states in two chains (stay 0.9, move 0.1).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from local_models.common.viterbi import viterbi, warm_up

from .detectors import SHIFT, Detector, n_frames


@dataclass
class StatConfig:
    win_s: float = 0.025
    n_fft: int = 256
    # noise tracking + Wiener filter
    alpha: float = 0.85  # periodogram smoothing
    min_window_s: float = 1.5  # minimum-statistics search window
    gamma: float = 25.0  # over-subtraction (paper: > 20)
    g_min: float = 0.03
    iterations: int = 3
    highpass_hz: float = 300.0
    band_hz: float = 1000.0
    smooth_s: float = 0.48
    # adaptive threshold
    floor_window_s: float = 5.0
    noise_margin: float = 2.0  # frames with CSBE < noise_margin * (F + A) train the noise GMM
    speech_margin: float = 6.0  # frames with CSBE > speech_margin * (F + A) train the speech GMM
    gmm_components: int = 2
    gmm_max_frames: int = 5000
    # HMM
    states_per_class: int = 5
    stay: float = 0.9


@lru_cache(maxsize=8)
def min_stat_bias(alpha: float, window: int, trials: int = 64, length: int = 2000) -> float:
    """E[running min of the alpha-smoothed periodogram of unit-PSD noise]^-1, by simulation.

    Exponential(1) periodogram values stand in for |X|^2 of Gaussian noise. The seed is fixed,
    so the compensation factor is deterministic."""
    from scipy.ndimage import minimum_filter1d
    from scipy.signal import lfilter  # scipy here, not at import: the neural systems' inference never loads it

    rng = np.random.default_rng(1234)
    per = rng.exponential(1.0, size=(length, trials))
    smoothed = lfilter([1 - alpha], [1, -alpha], per, axis=0, zi=np.ones((1, trials)) * alpha)[0]
    mins = minimum_filter1d(smoothed, size=window, axis=0, origin=(window - 1) // 2)[window * 2:]
    return float(1.0 / np.mean(mins))


def track_noise_psd(power: np.ndarray, alpha: float, window: int) -> np.ndarray:
    """Minimum statistics over time (axis 0) of a (frames, bins) power spectrogram.

    Causal: the estimate at frame t uses frames t-window+1..t. Bias-compensated so that for
    stationary noise the estimate converges to the true PSD."""
    from scipy.ndimage import minimum_filter1d
    from scipy.signal import lfilter

    init = power[: min(len(power), 10)].mean(axis=0, keepdims=True)
    smoothed = lfilter([1 - alpha], [1, -alpha], power, axis=0, zi=init * alpha)[0]
    minimum = minimum_filter1d(smoothed, size=window, axis=0, origin=(window - 1) // 2, mode="nearest")
    return minimum * min_stat_bias(alpha, window)


def ring_log_trans(n_states: int, stay: float) -> np.ndarray:
    """Log transitions (from, to) of a ring of N_STATES: each state stays (STAY) or moves to the next one."""
    trans = np.zeros((n_states, n_states))
    for i in range(n_states):
        trans[i, i] = stay
        trans[i, (i + 1) % n_states] = 1 - stay
    with np.errstate(divide="ignore"):
        return np.log(trans)


def viterbi_ring(log_emis: np.ndarray, stay: float, log_init: np.ndarray) -> np.ndarray:
    """Viterbi over the ring of `ring_log_trans` (the topology of two_class_hmm), log_emis (T, S)."""
    return viterbi(log_emis, ring_log_trans(log_emis.shape[1], stay), log_init)


def viterbi_forward(log_prob: np.ndarray, log_trans: np.ndarray, value: np.ndarray):
    """The Viterbi recursion of librosa.sequence._viterbi (common/viterbi.py) in numpy, from VALUE (the scores of
    the frame before log_prob[0]): value_t[j] = log_prob[t, j] + max_i (value_{t-1}[i] + log_trans[i, j]), ties to the
    lowest i. Returns the last frame's values and the back pointers (T, S) uint16 of every frame. The same additions
    as librosa's compiled core, so the same values and paths, without loading numba and librosa (0.9 s, 120 MiB)
    for the few states of the SAD HMMs (a frame costs a few microseconds)."""
    log_trans = np.asarray(log_trans, dtype=np.float64)
    value = np.asarray(value, dtype=np.float64)
    n, S = log_prob.shape
    ptr = np.empty((n, S), dtype=np.uint16)
    cols = np.arange(S)
    for t in range(n):
        trans_out = value[:, None] + log_trans  # [from, to]
        best = trans_out.argmax(axis=0)
        ptr[t] = best
        value = log_prob[t] + trans_out[best, cols]
    return value, ptr


def viterbi_numpy(log_emis: np.ndarray, log_trans: np.ndarray, log_init: np.ndarray) -> np.ndarray:
    """common.viterbi.viterbi (librosa's core: the same path, ties alike) in numpy: (T,) int32 states."""
    log_emis = np.asarray(log_emis, dtype=np.float64)
    if len(log_emis) == 0:
        raise ValueError("viterbi: no frames")
    value, ptr = viterbi_forward(log_emis[1:], log_trans, log_emis[0] + np.asarray(log_init, dtype=np.float64))
    path = np.empty(len(log_emis), dtype=np.int32)
    state = path[-1] = int(np.argmax(value))
    for t in range(len(ptr) - 1, -1, -1):  # ptr[t] points from frame t + 1 back to frame t
        state = path[t] = ptr[t, state]
    return path


def two_class_hmm(states: int, stay: float):
    """Noise chain 0..n-1, speech chain n..2n-1; each state stays or moves one on; chains join at ends."""
    S = 2 * states
    log_init = np.full(S, -np.inf)
    log_init[0] = log_init[states] = np.log(0.5)
    return ring_log_trans(S, stay), log_init


class StatisticalSAD(Detector):
    """Scores are the Viterbi decisions (1 = speech); `threshold` 0.5 just reads them."""

    name = "stat_sad"

    def __init__(self, config: StatConfig | None = None, threshold: float = 0.5):
        super().__init__(threshold=threshold, sweep=[0.5])
        self.cfg = config or StatConfig()
        warm_up()  # outside the timed decoding

    # -- stages -------------------------------------------------------------------------
    def spectrogram(self, wave: np.ndarray, sr: int) -> np.ndarray:
        from scipy.signal import stft

        hop, win = int(SHIFT * sr), int(self.cfg.win_s * sr)
        _, _, spec = stft(wave, fs=sr, window="hann", nperseg=win, noverlap=win - hop, nfft=self.cfg.n_fft,
                          boundary="zeros", padded=True)
        power = (np.abs(spec.T) ** 2).astype(np.float32)  # (frames, bins)
        total = n_frames(len(wave), sr)
        if len(power) < total:
            power = np.pad(power, ((0, total - len(power)), (0, 0)), mode="edge")
        return power[:total] + 1e-12

    def denoise(self, power: np.ndarray) -> np.ndarray:
        window = max(2, int(round(self.cfg.min_window_s / SHIFT)))
        for _ in range(self.cfg.iterations):
            noise = track_noise_psd(power, self.cfg.alpha, window)
            gain = np.maximum(1.0 - self.cfg.gamma * noise / power, self.cfg.g_min)
            power = power * gain**2
        return power

    def csbe(self, power: np.ndarray, sr: int) -> np.ndarray:
        from scipy.ndimage import uniform_filter1d

        freqs = np.fft.rfftfreq(self.cfg.n_fft, 1.0 / sr)
        power = power * (freqs >= self.cfg.highpass_hz)[None, :]
        # first-order LPC predictor per frame: autocorrelation from the power spectrum
        acf = np.fft.irfft(power, n=self.cfg.n_fft, axis=1)
        a1 = np.clip(acf[:, 1] / np.maximum(acf[:, 0], 1e-20), 0.0, 1.0)
        power = power * (a1**2)[:, None]
        n_bands = int(np.ceil(freqs[-1] / self.cfg.band_hz))
        band = np.minimum((freqs // self.cfg.band_hz).astype(int), n_bands - 1)
        energies = np.stack([power[:, band == s].sum(axis=1) for s in range(n_bands)], axis=1)
        smooth = max(1, int(round(self.cfg.smooth_s / SHIFT)))
        energies = uniform_filter1d(energies, size=smooth, axis=0, mode="nearest")
        weights = 1.0 / np.arange(1, n_bands + 1)
        return energies @ weights + 1e-12

    def gmm_loglik(self, log_csbe: np.ndarray, csbe: np.ndarray):
        from sklearn.mixture import GaussianMixture

        window = max(2, int(round(self.cfg.floor_window_s / SHIFT)))
        floor = track_noise_psd(csbe[:, None], self.cfg.alpha, window)[:, 0]  # F-CSBE
        level = floor + floor.mean()  # F-CSBE + A-CSBE
        noise_x = log_csbe[csbe < self.cfg.noise_margin * level]
        speech_x = log_csbe[csbe > self.cfg.speech_margin * level]
        out = np.zeros((len(log_csbe), 2))
        for k, x in enumerate((noise_x, speech_x)):
            if len(x) < 10 * self.cfg.gmm_components:
                # no frames of this class: fall back to a single wide Gaussian at the threshold
                centre = np.log(self.cfg.noise_margin if k == 0 else self.cfg.speech_margin) + np.log(level)
                out[:, k] = -0.5 * ((log_csbe - centre) / 2.0) ** 2
                continue
            x = x[:: max(1, len(x) // self.cfg.gmm_max_frames)]  # evenly strided: fit cost bounded
            gmm = GaussianMixture(min(self.cfg.gmm_components, len(np.unique(x))), random_state=0)
            gmm.fit(x[:, None])
            out[:, k] = gmm.score_samples(log_csbe[:, None])
        return out

    def scores(self, wave: np.ndarray, sr: int) -> np.ndarray:
        power = self.denoise(self.spectrogram(wave.astype(np.float32), sr))
        csbe = self.csbe(power, sr)
        loglik = self.gmm_loglik(np.log(csbe), csbe)
        n = self.cfg.states_per_class
        _, log_init = two_class_hmm(n, self.cfg.stay)
        emis = np.repeat(loglik, n, axis=1)  # states of a class share its GMM
        path = viterbi_ring(emis, self.cfg.stay, log_init)
        return (path >= n).astype(np.float32)
