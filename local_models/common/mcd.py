"""Mel-cepstral distortion (MCD), log-F0 RMSE and V/UV error between a reference and a hypothesis.

Front end (both variants, `mel_cepstrum`): WORLD, as in ESPnet's WORLD-based scorers
(`utils/mcd_calculate.py`, `pyscripts/utils/evaluate_f0.py`): F0 by pyworld.harvest (40-800 Hz, ESPnet
evaluate_f0's range; `f0_method="dio"` = dio + stonemask, ~50x faster), spectral envelope by
pyworld.cheaptrick with fft size pyworld.get_cheaptrick_fft_size(sr) (1024 at 16/22.05/24 kHz, ESPnet's
fftl; 2048 at 44.1/48 kHz), mel-cepstrum by pysptk.sp2mc(sp, order, alpha) with
alpha = pysptk.util.mcepalpha(sr) (0.41 @ 16 kHz, 0.455 @ 22.05k, 0.466 @ 24k, 0.554 @ 48k; ESPnet's table
has 0.42/0.45/0.46/0.55). Frames every `shift_ms` (5 ms), the same for ref and hyp. No low-cut filter, no
int16 scaling (neither changes c1..), all frames kept (ESPnet's old mcd_calculate.py kept only frames
voiced in WORLD's F0; evaluate_mcd.py keeps all).

(1) `mcd_dtw`, DTW-aligned (ESPnet `evaluate_mcd` style, for TTS with predicted durations):
    order from ESPnet's per-rate table (23 @ 16 kHz, 34 @ 22.05/24 kHz, 39 @ 44.1/48 kHz; 13 below 16k).
    Frame distortion d_t = (10 / ln 10) * sqrt(2 * sum_{n=1..order} (c_n - c'_n)^2), c0 (gain) dropped by
    default both from the DTW distance and from the score (`include_c0=True` keeps it). The DTW is exact
    (`local_models.common.dtw.dtw_path`: steps (1,0), (0,1), (1,1), weight 1, over Euclidean distance of the
    same coefficients, so the path minimises the summed MCD); MCD = mean of d_t over the path (path length =
    `frames`).
    Differences from ESPnet's evaluate_mcd.py: it uses pysptk.mcep on 1024-point Hamming frames every
    256 samples and fastdtw (approximate, radius 1), and it keeps c0 in both DTW and score.
(2) `mcd_aligned`, duration-aligned (MUSA/SALAD, docs/metrics.md): no DTW; frame t of ref against
    frame t of hyp after truncating both to the shorter length; 40 coefficients c0..c39 (order 39)
    including c0 by default: MCD = (10 sqrt(2) / ln 10) * mean_t sqrt(sum_n (c_n - c'_n)^2).

F0 on the same path (`f0_metrics`): log-F0 RMSE (natural log, over path frames voiced in both, as ESPnet
evaluate_f0.py), F0 RMSE in Hz on those frames, V/UV error = share of path frames whose voicing differs.

Corpus (`pool`, `mcd_corpus`): both the frame-pooled figure (sum of frame distortions / total frames;
docs/metrics.md's "pooled over the test set") and the mean of per-utterance values (what ESPnet prints), under
explicit key names.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Tuple, Union

import numpy as np

from .dtw import dtw_path  # noqa: F401  (also imported from here by local_models.salad.align)

# 10 / ln 10 turns natural-log cepstral differences into dB.
DB = 10.0 / math.log(10.0)
# Peak below -80 dBFS counts as silent: WORLD then analyses its own safeguard noise, not the signal.
SILENCE_PEAK = 1e-4
SALAD_ORDER = 39  # 40 mel-cepstra c0..c39


def default_order(sr: int) -> int:
    """ESPnet's per-rate mel-cepstrum order (evaluate_mcd `_get_best_mcep_params`), by rate band."""
    if sr < 16000:
        return 13
    if sr < 22050:
        return 23
    if sr < 44100:
        return 34
    return 39


def _check_wave(wave, name: str) -> np.ndarray:
    x = np.asarray(wave, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"{name} wave must be 1-D (mono), got shape {x.shape}")
    if x.size == 0:
        raise ValueError(f"{name} wave is empty")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} wave has NaN or inf samples")
    if np.max(np.abs(x)) < SILENCE_PEAK:
        raise ValueError(f"{name} wave is silent (peak below -80 dBFS): no spectrum to compare")
    return np.ascontiguousarray(x)


F0_METHODS = ("harvest", "dio")


def add_f0_method_arg(parser) -> None:
    """The --f0-method option of every MCD command (mcd_score, jdit_mcd): one definition, one help."""
    parser.add_argument("--f0-method", choices=F0_METHODS, default="harvest",
                        help="WORLD F0 of the analysis: harvest (default, ESPnet's evaluate_mcd) or dio + stonemask "
                             "(about 50x faster, less robust)")


def world_f0(x: np.ndarray, sr: int, shift_ms: float = 5.0, f0_method: str = "harvest",
             f0_floor: float = 40.0, f0_ceil: float = 800.0) -> Tuple[np.ndarray, np.ndarray]:
    """(f0 (T,), frame times (T,)) of a float64 wave; 0 = unvoiced."""
    import pyworld

    if f0_method == "harvest":
        return pyworld.harvest(x, sr, f0_floor=f0_floor, f0_ceil=f0_ceil, frame_period=shift_ms)
    if f0_method == "dio":
        f0, t = pyworld.dio(x, sr, f0_floor=f0_floor, f0_ceil=f0_ceil, frame_period=shift_ms)
        return pyworld.stonemask(x, f0, t, sr), t
    raise ValueError(f"unknown f0_method {f0_method!r} ({', '.join(F0_METHODS)})")


def mel_cepstrum(wave, sr: int, order: Optional[int] = None, shift_ms: float = 5.0,
                 alpha: Optional[float] = None, fft_size: Optional[int] = None, f0_method: str = "harvest",
                 f0_floor: float = 40.0, f0_ceil: float = 800.0, return_f0: bool = False,
                 name: str = "input"):
    """(T, order+1) mel-cepstrum c0..c_order of `wave` (WORLD envelope -> sp2mc); with return_f0 also f0 (T,)."""
    import pysptk
    import pyworld

    x = _check_wave(wave, name)
    order = default_order(sr) if order is None else int(order)
    alpha = pysptk.util.mcepalpha(sr) if alpha is None else float(alpha)
    fft_size = pyworld.get_cheaptrick_fft_size(sr) if fft_size is None else int(fft_size)
    f0, t = world_f0(x, sr, shift_ms, f0_method, f0_floor, f0_ceil)
    sp = pyworld.cheaptrick(x, f0, t, sr, fft_size=fft_size)
    mc = pysptk.sp2mc(sp, order, alpha)
    return (mc, f0) if return_f0 else mc


# ----------------------------------------------------------------------------- MCD
def _coeffs(mc, name: str) -> np.ndarray:
    a = np.asarray(mc, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] == 0:
        raise ValueError(f"{name} mel-cepstrum must be (T > 0, order+1), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} mel-cepstrum has NaN or inf")
    return a


def _select(ref_mc, hyp_mc, include_c0: bool, order: Optional[int]) -> Tuple[np.ndarray, np.ndarray]:
    r, h = _coeffs(ref_mc, "ref"), _coeffs(hyp_mc, "hyp")
    if r.shape[1] != h.shape[1]:
        raise ValueError(f"ref has {r.shape[1]} coefficients, hyp {h.shape[1]}: extract both with one order")
    hi = r.shape[1] if order is None else int(order) + 1
    if hi > r.shape[1]:
        raise ValueError(f"order {order} asked for but the mel-cepstra have order {r.shape[1] - 1}")
    lo = 0 if include_c0 else 1
    if hi <= lo:
        raise ValueError("no coefficients left to compare")
    return r[:, lo:hi], h[:, lo:hi]


def _summary(frame_db: np.ndarray, ref_frames: int, hyp_frames: int, dims: int) -> Dict[str, float]:
    return {"mcd_db": float(frame_db.mean()), "mcd_sum_db": float(frame_db.sum()), "frames": int(len(frame_db)),
            "ref_frames": int(ref_frames), "hyp_frames": int(hyp_frames), "dims": int(dims)}


def mcd_dtw(ref_mc, hyp_mc, include_c0: bool = False, order: Optional[int] = None) -> Dict:
    """DTW-aligned MCD (dB): mean frame distortion over the path. Keys: mcd_db, mcd_sum_db, frames (path
    length), ref_frames, hyp_frames, dims, path ((L, 2) ref/hyp frame indices)."""
    from scipy.spatial.distance import cdist

    r, h = _select(ref_mc, hyp_mc, include_c0, order)
    dist = cdist(r, h)  # Euclidean; MCD is a monotone function of it, so the path minimises the total MCD
    path = dtw_path(dist)
    frame_db = DB * math.sqrt(2.0) * dist[path[:, 0], path[:, 1]]
    return {**_summary(frame_db, len(r), len(h), r.shape[1]), "path": path}


def mcd_aligned(ref_mc, hyp_mc, include_c0: bool = True, order: Optional[int] = None) -> Dict:
    """Duration-aligned MCD (dB, MUSA/SALAD): frames paired 1:1 after truncating to the shorter.
    `order` keeps c0..c_order (None: all given). Keys as `mcd_dtw` without path."""
    r, h = _select(ref_mc, hyp_mc, include_c0, order)
    t = min(len(r), len(h))
    frame_db = DB * np.sqrt(2.0 * np.sum((r[:t] - h[:t]) ** 2, axis=1))
    return _summary(frame_db, len(r), len(h), r.shape[1])


def f0_metrics(ref_f0, hyp_f0, path: Optional[np.ndarray] = None) -> Dict:
    """log-F0 RMSE / F0 RMSE (Hz) over frames voiced in both, V/UV error over all frames, on `path`
    (None: 1:1 after truncation). Also the sums `pool` needs."""
    ref_f0, hyp_f0 = np.asarray(ref_f0, dtype=float), np.asarray(hyp_f0, dtype=float)
    if path is None:
        t = min(len(ref_f0), len(hyp_f0))
        r, h = ref_f0[:t], hyp_f0[:t]
    else:
        r, h = ref_f0[path[:, 0]], hyp_f0[path[:, 1]]
    vr, vh = r > 0, h > 0
    both = vr & vh
    n = int(both.sum())
    lf0_sq = float(np.sum((np.log(h[both]) - np.log(r[both])) ** 2))
    hz_sq = float(np.sum((h[both] - r[both]) ** 2))
    errs = int(np.sum(vr != vh))
    nan = float("nan")  # no frame voiced in both: undefined, left out of the per-utterance mean
    return {"lf0_rmse": math.sqrt(lf0_sq / n) if n else nan, "f0_rmse_hz": math.sqrt(hz_sq / n) if n else nan,
            "vuv_error": errs / len(r), "voiced_frames": n, "lf0_sq_sum": lf0_sq, "f0_sq_sum_hz": hz_sq,
            "vuv_errors": errs}


def mcd_wavs(ref_wave, hyp_wave, sr: int, hyp_sr: Optional[int] = None, dtw: bool = True,
             order: Optional[int] = None, include_c0: Optional[bool] = None, f0: bool = True, **analysis) -> Dict:
    """MCD of two waves (hyp resampled to `sr` when `hyp_sr` differs). dtw=True: `mcd_dtw` conventions
    (order default_order(sr), c0 dropped); dtw=False: `mcd_aligned` (order 39, c0 kept). `analysis` goes
    to `mel_cepstrum` (shift_ms, alpha, fft_size, f0_method, f0_floor, f0_ceil). Scalars only (no path)."""
    from .audio import resample

    if hyp_sr is not None and hyp_sr != sr:
        hyp_wave = resample(_check_wave(hyp_wave, "hyp"), hyp_sr, sr)
    if order is None:
        order = default_order(sr) if dtw else SALAD_ORDER
    if include_c0 is None:
        include_c0 = not dtw
    ref_mc, ref_f0 = mel_cepstrum(ref_wave, sr, order, return_f0=True, name="ref", **analysis)
    hyp_mc, hyp_f0 = mel_cepstrum(hyp_wave, sr, order, return_f0=True, name="hyp", **analysis)
    if dtw:
        out = mcd_dtw(ref_mc, hyp_mc, include_c0)
        path = out.pop("path")
    else:
        out, path = mcd_aligned(ref_mc, hyp_mc, include_c0), None
    if f0:
        out.update(f0_metrics(ref_f0, hyp_f0, path))
    return out


# ----------------------------------------------------------------------------- corpus
def pooled_mean(total, n) -> float:
    """Frame-pooled MCD from per-item sums: sum of frame distortions / frames."""
    return float(np.sum(total) / np.sum(n))


def pooled_difference(sum_a, n_a, sum_b, n_b) -> float:
    """Frame-pooled MCD of A minus that of B, from per-item sums (the statistic the reports bootstrap over
    utterances; A and B may be scored on different frames, e.g. a resynthesis and its unconverted source)."""
    return pooled_mean(sum_a, n_a) - pooled_mean(sum_b, n_b)


def pool(results: Union[Mapping[str, Mapping], Iterable[Mapping]]) -> Dict:
    """Corpus figures from per-utterance result dicts: `*_frame_pooled` (sums over all frames / total
    frames) and `*_utt_mean` / `*_utt_std` (over utterances, each counted once)."""
    rs = list(results.values()) if isinstance(results, Mapping) else list(results)
    if not rs:
        raise ValueError("no utterances to pool")
    frames = sum(r["frames"] for r in rs)
    utt = np.array([r["mcd_db"] for r in rs])
    out = {"pooling": "frame_pooled = sum over all frames / total frames; utt_mean = mean of per-utterance values",
           "utterances": len(rs), "frames": frames,
           "mcd_db_frame_pooled": sum(r["mcd_sum_db"] for r in rs) / frames,
           "mcd_db_utt_mean": float(utt.mean()), "mcd_db_utt_std": float(utt.std())}
    if all("vuv_errors" in r for r in rs):
        voiced = sum(r["voiced_frames"] for r in rs)
        lf0 = np.array([r["lf0_rmse"] for r in rs])
        nan = float("nan")
        out.update({
            "voiced_frames": voiced,
            "lf0_rmse_frame_pooled": math.sqrt(sum(r["lf0_sq_sum"] for r in rs) / voiced) if voiced else nan,
            "lf0_rmse_utt_mean": float(np.nanmean(lf0)) if np.isfinite(lf0).any() else nan,
            "lf0_rmse_utts_without_voiced_overlap": int(np.isnan(lf0).sum()),
            "f0_rmse_hz_frame_pooled": math.sqrt(sum(r["f0_sq_sum_hz"] for r in rs) / voiced) if voiced else nan,
            "vuv_error_frame_pooled": sum(r["vuv_errors"] for r in rs) / frames,
            "vuv_error_utt_mean": float(np.mean([r["vuv_error"] for r in rs])),
        })
    return out


def mcd_corpus(pairs: Union[Mapping[str, Tuple], Iterable[Tuple]], dtw: bool = True,
               include_c0: Optional[bool] = None, order: Optional[int] = None) -> Dict:
    """Pooled MCD over (ref_mc, hyp_mc) pairs (a list, or a {utt: pair} dict): `pool` of `mcd_dtw`
    (c0 dropped by default) or `mcd_aligned` (c0 kept by default) results."""
    items = pairs.values() if isinstance(pairs, Mapping) else pairs
    if include_c0 is None:
        include_c0 = not dtw
    fn = mcd_dtw if dtw else mcd_aligned
    return pool([fn(r, h, include_c0, order) for r, h in items])


# ----------------------------------------------------------------------------- audio files (mcd_score)
AUDIO_EXTS = (".wav", ".flac")
PER_UTT_COLUMNS = ("mcd_db", "frames", "ref_frames", "hyp_frames", "lf0_rmse", "f0_rmse_hz", "vuv_error",
                   "voiced_frames")


def read_source(src: str) -> dict:
    """{utt: wav.scp entry} from a wav.scp or a directory of audio files."""
    from .datadir import read_table

    p = Path(src)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.suffix.lower() in AUDIO_EXTS and f.is_file())
        out = {}
        for f in files:
            if f.stem in out:
                raise ValueError(f"{src}: two audio files for utterance '{f.stem}'")
            out[f.stem] = str(f)
        if not out:
            raise ValueError(f"{src}: no {'/'.join(AUDIO_EXTS)} files")
        return out
    return read_table(p)


def _names(keys, limit=10):
    keys = sorted(keys)
    return ", ".join(keys[:limit]) + (f" ... (+{len(keys) - limit} more)" if len(keys) > limit else "")


def score_sources(ref_src: str, hyp_src: str, dtw: bool = True, order: Optional[int] = None,
                  include_c0: Optional[bool] = None, sample_rate: Optional[int] = None, **analysis) -> Dict:
    """`mcd_wavs` of every utterance in both sources (wav.scp or audio directory), `pool`ed, with the settings
    actually used (per-rate defaults resolved, so RESULTS.md can quote them) and the per-utterance values.
    Hypothesis keys missing from the reference are an error; reference keys without hypothesis are skipped."""
    from pysptk.util import mcepalpha
    from tqdm import tqdm

    from .audio import AudioError, load_audio

    ref, hyp = read_source(ref_src), read_source(hyp_src)
    extra = set(hyp) - set(ref)
    if extra:
        raise ValueError(f"{len(extra)} hypothesis utterance(s) not in the reference {ref_src}: {_names(extra)}")
    utts = [u for u in ref if u in hyp]
    skipped = len(ref) - len(utts)
    if not utts:
        raise ValueError("no utterance in both reference and hypothesis")
    if skipped:
        print(f"mcd_score: skipping {skipped} of {len(ref)} reference utterance(s) with no hypothesis",
              file=sys.stderr)
    per_utt, rates = {}, set()
    for utt in tqdm(utts, desc="mcd", unit="utt", file=sys.stderr, disable=None):
        try:
            rw, rsr = load_audio(ref[utt], sample_rate)
            hw, hsr = load_audio(hyp[utt], sample_rate)
            per_utt[utt] = mcd_wavs(rw, hw, rsr, hsr, dtw=dtw, order=order, include_c0=include_c0, **analysis)
        except (AudioError, ValueError) as e:
            raise ValueError(f"utterance '{utt}': {e}") from None
        rates.add(rsr)
    corpus = pool(per_utt)
    alpha = analysis.get("alpha")
    settings = {"variant": "dtw" if dtw else "duration-aligned",
                "include_c0": (not dtw) if include_c0 is None else include_c0,
                "sample_rates": sorted(rates), **analysis,
                "order": sorted({order or (default_order(sr) if dtw else SALAD_ORDER) for sr in rates}),
                "alpha": sorted({round(alpha or mcepalpha(sr), 4) for sr in rates}),
                "dims_scored": sorted({r["dims"] for r in per_utt.values()})}
    return {"ref": ref_src, "hyp": hyp_src, "utterances_scored": len(utts), "ref_utterances_skipped": skipped,
            "settings": settings, **corpus, "per_utt": per_utt}


def summary_lines(out: Mapping) -> List[str]:
    """The two lines mcd_score prints: MCD (frame-pooled, utterance mean), log-F0 RMSE and V/UV error."""
    skipped = out["ref_utterances_skipped"]
    return [f"MCD ({out['settings']['variant']}): {out['mcd_db_frame_pooled']:.3f} dB frame-pooled, "
            f"{out['mcd_db_utt_mean']:.3f} dB utterance mean  ({out['utterances_scored']} utts, {out['frames']} "
            f"frames{f', {skipped} skipped' if skipped else ''})",
            f"log-F0 RMSE {out['lf0_rmse_frame_pooled']:.4f} (frame-pooled), V/UV error "
            f"{100 * out['vuv_error_frame_pooled']:.2f} %"]


def write_reports(out: Mapping, json_path: Optional[str] = None, per_utt_path: Optional[str] = None) -> None:
    """`score_sources`' result as JSON (NaN as null) and as a per-utterance TSV, each written atomically."""
    import json

    from .datadir import atomic_open

    if json_path:
        with atomic_open(json_path) as f:
            json.dump(_nan_to_none(out), f, indent=1)  # NaN (no voiced overlap) is not JSON
            f.write("\n")
    if per_utt_path:
        with atomic_open(per_utt_path) as f:
            f.write("utt\t" + "\t".join(PER_UTT_COLUMNS) + "\n")
            for utt, r in out["per_utt"].items():
                f.write(utt + "\t" + "\t".join(_fmt(r[c]) for c in PER_UTT_COLUMNS) + "\n")


def _fmt(v):
    return str(v) if isinstance(v, int) else f"{v:.4f}"


def _nan_to_none(o):
    if isinstance(o, dict):
        return {k: _nan_to_none(v) for k, v in o.items()}
    if isinstance(o, float) and math.isnan(o):
        return None
    return o
