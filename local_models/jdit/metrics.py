"""What egs/kss/tts1's scoring stage measures (paper 002, JDI-T): duration accuracy against true durations and
attention failures of the autoregressive models. `report` collects these into results.json and RESULTS.md.

Attention failures, per utterance, from the attention saved at synthesis (for the Transformer the
encoder-decoder head with the highest focus rate, as ESPnet's DurationCalculator picks it), with p_t the argmax
input token of output frame t:
  skip:       p_t - p_{t-1} > SKIP_TOKENS (it jumps over more than a syllable: phoneme and jamo tokens come 2-3
              per syllable, and a silent initial or a <space> (jamo) may legitimately take no frame),
  repeat:     p_t < max_{s<t} p_s - SKIP_TOKENS (it goes back over a syllable it had passed),
  incomplete: the last frame's p_T is not among the last SKIP_TOKENS input tokens (stopped early), or the
              decoder ran to its maximum length (never stopped).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import numpy as np

from local_models.common.datadir import read_table

from .durations import SIL, phone_class
from .g2p import PUNCT_TOKENS, SPACE, VOWELS

SKIP_TOKENS = 3  # attention-failure thresholds, in input tokens (see the module docstring)
ESPEAK_CLASSES = {"vowel": "V", "glide": "V", "cons": "C", "mod": "C"}  # mod: ';', the glottal onset
# the bases of espeak-ng's Korean phones (phonemes.inventory() without the tense / palatal marks)
ESPEAK_PHONES = frozenset("a e i o u u- @ E j w b d g k p q t s h m n N l L r * tS dZ kh ph th tSh ;".split())

def read_durations(path: Path) -> dict:
    return {k: np.array(v.split(), dtype=int) for k, v in read_table(path).items()}


def duration_accuracy(hyp: dict, ref: dict, where: str, tokens: Optional[dict] = None) -> dict:
    """Over all tokens of the utterances in both: MAE in frames, share within +-1 frame, share of zero durations;
    and over the internal token boundaries (cumulative sums, the last one is the utterance length): boundary MAE
    in frames and share within +-1 frame (11.6 ms at hop 256 / 22.05 kHz: the usual 20 ms tolerance); `per_utt`:
    {utt: [sum of |error|, tokens]}, what a bootstrap over utterances resamples.

    The boundary error separates two things the duration MAE mixes: where the aligner puts the acoustic
    segment boundaries, and how it shares a segment between a sounding token and a silent neighbour (the
    syllable-onset placeholder and <space> have 0 true frames): frames moved onto such a token cost twice in the
    duration MAE but shift only the one boundary between them.

    With `tokens` ({utt: [token, ...]}, e.g. text_phn) also `bias`: {token: [mean signed error (hyp - true),
    count]}, where an aligner is systematically long or short, and `boundary_bias`: {"C>V" etc.: [mean signed
    boundary error, count]} by the classes of the two tokens a boundary separates (token_class): an aligner
    that is late at consonant-to-vowel boundaries only makes consonants long and vowels short."""
    utts = sorted(set(hyp) & set(ref))
    if not utts:
        raise ValueError(f"{where}: no utterance in common with the true durations")
    err, bnd, zeros, per_token, per_pair, per_utt = [], [], 0, {}, {}, {}
    for u in utts:
        if len(hyp[u]) != len(ref[u]):
            raise ValueError(f"{where}: utterance {u}: {len(hyp[u])} durations for {len(ref[u])} tokens")
        diff = hyp[u] - ref[u]
        err.append(np.abs(diff))
        per_utt[u] = [int(err[-1].sum()), len(diff)]
        bnd.append(np.cumsum(hyp[u])[:-1] - np.cumsum(ref[u])[:-1])
        zeros += int((hyp[u] == 0).sum())
        if tokens is not None and u in tokens:
            if len(tokens[u]) != len(diff):
                raise ValueError(f"{where}: utterance {u}: {len(diff)} durations for {len(tokens[u])} tokens "
                                 f"in its text")
            for t, d in zip(tokens[u], diff):
                per_token.setdefault(t, []).append(int(d))
            classes = [token_class(t) for t in tokens[u]]
            for a, c, d in zip(classes, classes[1:], bnd[-1]):
                per_pair.setdefault(f"{a}>{c}", []).append(int(d))
    e, b = np.concatenate(err), np.concatenate(bnd)
    out = dict(mae_frames=float(e.mean()), within1=float((e <= 1).mean()), zero_share=zeros / len(e),
               boundary_mae_frames=float(np.abs(b).mean()) if len(b) else 0.0,
               boundary_within1=float((np.abs(b) <= 1).mean()) if len(b) else 1.0,
               boundary_signed_mean=float(b.mean()) if len(b) else 0.0,
               tokens=int(len(e)), utterances=len(utts), per_utt=per_utt)
    if tokens is not None:
        out["bias"] = {t: [float(np.mean(v)), len(v)] for t, v in per_token.items()}
        out["boundary_bias"] = {k: [float(np.mean(v)), len(v)] for k, v in per_pair.items()}
    return out


def token_class(tok: str) -> str:
    """V vowel, C consonant, _ word boundary (<space>), P pause / punctuation / silence, ? anything else; of jamo
    tokens or espeak-ng phonemes (vowels and the glides j, w are V, as the jamo vowels hold the glides)."""
    if tok in VOWELS:
        return "V"
    if tok == SPACE:
        return "_"
    if tok in PUNCT_TOKENS or tok == SIL:
        return "P"
    if len(tok) == 1 and 0x1100 <= ord(tok) <= 0x11FF:
        return "C"
    return ESPEAK_CLASSES.get(phone_class(tok), "?") if (tok.rstrip(":-;") or tok) in ESPEAK_PHONES else "?"


def uniform_durations(ref: dict) -> dict:
    """Each utterance's frame count spread evenly over its tokens (rounded boundaries)."""
    out = {}
    for u, d in ref.items():
        n, total = len(d), int(d.sum())
        out[u] = np.diff(np.round(np.arange(n + 1) * total / n).astype(int))
    return out


def strip_eos(hyp: dict, ref: dict) -> dict:
    """ESPnet's durations carry one more entry than our tokens (<sos/eos>): drop it where that is the case."""
    return {u: (d[:-1] if u in ref and len(d) == len(ref[u]) + 1 else d) for u, d in hyp.items()}


def attention_path(att: np.ndarray) -> np.ndarray:
    """Argmax input token per output frame of a (T_out, T_in) or (layers, heads, T_out, T_in) attention: for the
    4-D case the head with the highest focus rate (mean over frames of the largest weight)."""
    if att.ndim == 4:
        heads = att.reshape(-1, *att.shape[-2:])
        att = heads[int(np.argmax(heads.max(axis=-1).mean(axis=-1)))]
    if att.ndim != 2:
        raise ValueError(f"attention of shape {att.shape}: expected 2 or 4 dimensions")
    return att.argmax(axis=-1)


def attention_failures(path: np.ndarray, n_in: int, hit_maxlen: bool, k: int = SKIP_TOKENS) -> dict:
    """Which failures (skip / repeat / incomplete, see the module docstring) an argmax path shows."""
    steps = np.diff(path)
    running_max = np.maximum.accumulate(path)
    return dict(skip=bool((steps > k).any()), repeat=bool((path[1:] < running_max[:-1] - k).any()),
                incomplete=bool(hit_maxlen or len(path) == 0 or path[-1] < n_in - k))


# mcd_score's defaults (local_models/bin/mcd_score.py): the same analysis, the same mcd.json
MCD_ANALYSIS = dict(shift_ms=5.0, alpha=None, f0_method="harvest", f0_floor=40.0, f0_ceil=800.0)


def mcd_one_to_one(ref_mc, hyp_mc, order: Optional[int] = None) -> dict:
    """MCD (dB) of frame t against frame t over the LONGER of the two, the shorter one held at its last frame (a
    synthesis ends in silence: missing speech is scored as that silence, babbling past the end against the
    reference's). Unlike the DTW MCD it penalises a wrong length: an utterance said in 17 % of its time matches
    frame by frame under DTW but not here. Coefficients c1..c_order as the DTW MCD (c0, the gain, dropped), the
    same frame distortion (10 / ln 10) * sqrt(2 * sum_n (c_n - c'_n)^2). Keys: mcd_1to1_db, mcd_1to1_sum_db,
    frames_1to1."""
    r, h = np.asarray(ref_mc, dtype=np.float64), np.asarray(hyp_mc, dtype=np.float64)
    if r.ndim != 2 or h.ndim != 2 or r.shape[1] != h.shape[1] or not len(r) or not len(h):
        raise ValueError(f"mel-cepstra of shapes {r.shape} and {h.shape}: need (T > 0, order+1) each, one order")
    hi = r.shape[1] if order is None else int(order) + 1
    n = max(len(r), len(h))
    r = np.pad(r[:, 1:hi], ((0, n - len(r)), (0, 0)), mode="edge")
    h = np.pad(h[:, 1:hi], ((0, n - len(h)), (0, 0)), mode="edge")
    frame_db = 10.0 / np.log(10.0) * np.sqrt(2.0 * np.sum((r - h) ** 2, axis=1))
    return {"mcd_1to1_db": float(frame_db.mean()), "mcd_1to1_sum_db": float(frame_db.sum()), "frames_1to1": n}


class _RefAnalysis:
    """The reference side of every decode dir of one set, analysed once: {utt: (mel-cepstrum, f0, rate)}."""

    def __init__(self, table: dict, sample_rate: Optional[int], f0_method: str = "harvest"):
        self.table, self.sample_rate, self.done = table, sample_rate, {}
        self.analysis = {**MCD_ANALYSIS, "f0_method": f0_method}

    def get(self, utt: str):
        from local_models.common.audio import load_audio
        from local_models.common.mcd import default_order, mel_cepstrum

        if utt not in self.done:
            wave, sr = load_audio(self.table[utt], self.sample_rate)
            mc, f0 = mel_cepstrum(wave, sr, default_order(sr), return_f0=True, name="ref", **self.analysis)
            self.done[utt] = (mc, f0, sr)
        return self.done[utt]


def score_decode_dir(refs: _RefAnalysis, ref_src: str, hyp_src: str) -> dict:
    """What local_models.common.mcd.score_sources (DTW, its defaults) returns for REF_SRC against HYP_SRC, the
    reference analysed once per set (REFS), plus per utterance and pooled the 1:1 MCD (mcd_one_to_one) and the
    frame-count ratio hyp / ref."""
    from pysptk.util import mcepalpha

    from local_models.common.audio import AudioError, load_audio, resample
    from local_models.common.mcd import default_order, f0_metrics, mcd_dtw, mel_cepstrum, pool, read_source

    hyp = read_source(hyp_src)
    extra = sorted(set(hyp) - set(refs.table))
    if extra:
        raise ValueError(f"{len(extra)} hypothesis utterance(s) not in the reference {ref_src}: "
                         f"{', '.join(extra[:10])}")
    utts = [u for u in refs.table if u in hyp]
    if not utts:
        raise ValueError("no utterance in both reference and hypothesis")
    per_utt, rates = {}, set()
    for utt in utts:
        try:
            ref_mc, ref_f0, sr = refs.get(utt)
            hw, hsr = load_audio(hyp[utt], refs.sample_rate)
            hw = resample(np.asarray(hw, dtype=np.float64), hsr, sr) if hsr != sr else hw
            hyp_mc, hyp_f0 = mel_cepstrum(hw, sr, default_order(sr), return_f0=True, name="hyp", **refs.analysis)
            out = mcd_dtw(ref_mc, hyp_mc, include_c0=False)
            out.update(f0_metrics(ref_f0, hyp_f0, out.pop("path")), **mcd_one_to_one(ref_mc, hyp_mc),
                       length_ratio=len(hyp_mc) / len(ref_mc))
        except (AudioError, ValueError) as e:
            raise ValueError(f"utterance '{utt}': {e}") from None
        per_utt[utt] = out
        rates.add(sr)
    settings = {"variant": "dtw", "include_c0": False, "sample_rates": sorted(rates), **refs.analysis,
                "order": sorted({default_order(sr) for sr in rates}),
                "alpha": sorted({round(mcepalpha(sr), 4) for sr in rates}),
                "dims_scored": sorted({r["dims"] for r in per_utt.values()})}
    one = list(per_utt.values())
    return {"ref": ref_src, "hyp": hyp_src, "utterances_scored": len(utts),
            "ref_utterances_skipped": len(refs.table) - len(utts), "settings": settings, **pool(per_utt),
            "mcd_1to1_db_frame_pooled": sum(r["mcd_1to1_sum_db"] for r in one) / sum(r["frames_1to1"] for r in one),
            "length_ratio_utt_mean": float(np.mean([r["length_ratio"] for r in one])), "per_utt": per_utt}


def mcd_json_is_current(d: str, sample_rate: Optional[int], f0_method: str) -> bool:
    """D/mcd.json is newer than D/wav.scp and was analysed at SAMPLE_RATE with F0_METHOD (a re-run with another
    analysis scores again)."""
    js, scp = Path(d) / "mcd.json", Path(d) / "wav.scp"
    if not js.is_file() or js.stat().st_mtime <= scp.stat().st_mtime:
        return False
    try:
        settings = json.loads(js.read_text()).get("settings", {})
    except ValueError:  # half-written or hand-edited: score again
        return False
    return settings.get("f0_method") == f0_method and (sample_rate is None or settings.get("sample_rates") == [sample_rate])


def score_decode_dirs(ref: str, decode_dirs, sample_rate: Optional[int] = None, f0_method: str = "harvest",
                      skip_current: bool = False) -> None:
    """`mcd_score --ref REF --hyp D/wav.scp --sample-rate SR --f0-method F0_METHOD --json D/mcd.json --per-utt
    D/mcd_per_utt.tsv` for every decode dir D in one process, the reference analysed once (score_decode_dir), with
    the 1:1 MCD and the length ratio added to D/mcd.json. SKIP_CURRENT: leave the dirs whose mcd.json is current
    (mcd_json_is_current); the reference is not analysed when all are."""
    from local_models.common.mcd import read_source, summary_lines, write_reports

    if skip_current:
        current = [d for d in decode_dirs if mcd_json_is_current(d, sample_rate, f0_method)]
        for d in current:
            rate = f"{sample_rate} Hz" if sample_rate else "the files' rate"
            print(f"{d}/mcd.json is up to date ({f0_method} F0 at {rate})")
        decode_dirs = [d for d in decode_dirs if d not in current]
        if not decode_dirs:
            return
    refs = _RefAnalysis(read_source(ref), sample_rate, f0_method)
    for d in decode_dirs:
        out = score_decode_dir(refs, ref, f"{d}/wav.scp")
        print(f"{d}: " + "; ".join(summary_lines(out)) + f"; MCD 1:1 {out['mcd_1to1_db_frame_pooled']:.3f} dB, "
              f"length ratio {out['length_ratio_utt_mean']:.2f}")
        write_reports(out, f"{d}/mcd.json", f"{d}/mcd_per_utt.tsv")
