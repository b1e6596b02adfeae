"""Is pocketsphinx good enough to time the phones of real English for ABX? Measured where the truth is known.

    pip install pocketsphinx==5.1.1        # not a dependency of the collection: only this check needs it
    python benchmarks/forced_aligner_check.py --out benchmarks/results/forced_aligner_check

ZeroSpeech's ABX needs phone times on its test set (triphone items). The real English corpus (Flight of the Amazon
Queen) has each clip's text but no phone times, and the only forced aligner the package registries reach is
pocketsphinx's (its en-us acoustic model and CMU dictionary; PyPI wheel). Real English with hand-labelled phone
times is not reachable here either, so this check times it on espeak-ng English, whose phone times are exact (the
engine's own events, stop closures given to their stops as an aligner gives them: common/synth.closures_to_following):
Harvard-style sentences whose every word is in pocketsphinx's dictionary, each read by two of 8 espeak-ng en-us voices,
optionally band-limited as the game's 11.025 kHz recordings are (--band: nothing above 5.5 kHz).

pocketsphinx aligns in two passes (its word-level grammar, then its state-level alignment), 10 ms frames. A boundary
is a time where one phone ends and the next begins (a pause's edges included). Scores, label-free because the two
phone sets differ (espeak-ng's and ARPAbet): each true boundary is matched one-to-one to the nearest unmatched
aligner boundary; recall / precision = matched within 20 ms (and 50 ms) over true / aligner boundaries; the median
and 90th percentile of each true boundary's distance to the nearest aligner boundary; utterances the aligner fails
on are counted apart.
Good HMM aligners on read speech put about 80-90 % of boundaries within 20 ms (TIMIT-style evaluations).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import numpy as np

SR = 16000
TOLERANCES_S = (0.02, 0.05)
GOOD_RECALL_20MS = 0.8   # the share of boundaries within 20 ms that good HMM aligners reach on read speech
MAX_FAILED_SHARE = 0.1  # of the utterances
SENTENCES = (
    "the birch canoe slid on the smooth planks", "glue the sheet to the dark blue background",
    "it is easy to tell the depth of a well", "these days a chicken leg is a rare dish",
    "rice is often served in round bowls", "the juice of lemons makes fine punch",
    "the box was thrown beside the parked truck", "the hogs were fed chopped corn and garbage",
    "four hours of steady work faced us", "a large size in stockings is hard to sell",
    "the boy was there when the sun rose", "a rod is used to catch pink salmon",
    "the source of the huge river is the clear spring", "kick the ball straight and follow through",
    "help the woman get back to her feet", "a pot of tea helps to pass the evening",
    "smoky fires lack flame and heat", "the soft cushion broke the man's fall",
    "the salt breeze came across from the sea", "the girl at the booth sold fifty bonds",
    "we were giddy with joy", "go away and do not come back", "i have seen the key under the old door",
    "where did you put the red book", "nobody knows what the captain said",
)


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="forced_aligner_check", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--voices", type=int, default=8, help="espeak-ng en-us voices drawn; each sentence is read by two "
                   "of them, in turn (default: %(default)s)")
    p.add_argument("--seed", type=int, default=1, help="voice draw (default: %(default)s)")
    p.add_argument("--out", required=True, help="writes OUT.md and OUT.json (full band and band-limited)")
    return p


def decoder():
    try:
        from pocketsphinx import Decoder
    except ImportError:
        sys.exit("forced_aligner_check: needs pocketsphinx (pip install pocketsphinx==5.1.1): it is not a dependency "
                 "of the collection")
    # wide beams: with the default ones more utterances fail to reach the grammar's end
    return Decoder(samprate=SR, loglevel="FATAL", beam=1e-100, wbeam=1e-80, pbeam=1e-100)


def true_boundaries(text: str, voice, band: bool) -> Tuple[np.ndarray, List[float]]:
    """espeak-ng's wave (float, 16 kHz) and its phone boundaries [s], closures given to their stops."""
    from local_models.common.synth import SIL, closures_to_following, synthesize

    utt = synthesize(text, voice, SR)
    phones = closures_to_following(utt.phones, utt.wave, SR)
    wave = utt.wave.astype(np.float32) / 32768
    if band:  # as the game's recordings: 11.025 kHz brought to 16 kHz
        from scipy.signal import resample_poly

        wave = resample_poly(resample_poly(wave, 441, 640), 640, 441).astype(np.float32)
    cuts = [a[2] / SR for a, b in zip(phones, phones[1:]) if not (a[0] == SIL and b[0] == SIL)]
    return wave, cuts


def align(dec, wave: np.ndarray, text: str) -> Optional[List[float]]:
    """pocketsphinx's phone boundaries [s] (None when it cannot align)."""
    raw = (np.clip(wave, -1, 1) * 32767).astype(np.int16).tobytes()
    try:
        dec.set_align_text(text)
        dec.start_utt()
        dec.process_raw(raw, full_utt=True)
        dec.end_utt()
        if dec.hyp() is None:
            return None
        dec.set_alignment()
        dec.start_utt()
        dec.process_raw(raw, full_utt=True)
        dec.end_utt()
        words = dec.get_alignment()
    except RuntimeError:  # "Alignment failed": the search did not reach the end of the text
        return None
    if words is None:
        return None
    edges = {round(t / 100, 2) for w in words for p in w for t in (p.start, p.start + p.duration)}
    return sorted(edges)


def matched_errors(ref: Sequence[float], hyp: Sequence[float], tol: float) -> List[float]:
    """One-to-one: each true boundary takes the nearest aligner boundary within tol not yet taken."""
    taken, errors = set(), []
    for r in ref:
        best = min(((abs(h - r), j) for j, h in enumerate(hyp) if j not in taken and abs(h - r) <= tol), default=None)
        if best is not None:
            taken.add(best[1])
            errors.append(best[0])
    return errors


def measure(dec, voices, band: bool) -> dict:
    n_ref = n_hyp = failed = utts = 0
    hits = {tol: 0 for tol in TOLERANCES_S}
    errors: List[float] = []
    for i, text in enumerate(SENTENCES):
        for k in range(min(2, len(voices))):
            voice = voices[(i + k) % len(voices)]
            wave, ref = true_boundaries(text, voice, band)
            utts += 1
            hyp = align(dec, wave, text)
            if not hyp:
                failed += 1
                continue
            end = len(wave) / SR
            ref = [r for r in ref if 0.01 < r < end - 0.01]  # the file's own edges are not boundaries
            hyp = [h for h in hyp if 0.01 < h < end - 0.01]
            n_ref, n_hyp = n_ref + len(ref), n_hyp + len(hyp)
            for tol in TOLERANCES_S:
                hits[tol] += len(matched_errors(ref, hyp, tol))
            errors += [min(abs(h - r) for h in hyp) for r in ref]
    e = np.array(errors) * 1000
    return {"band_limited": band, "utterances": utts, "failed": failed, "true_boundaries": n_ref,
            "aligner_boundaries": n_hyp,
            "recall": {f"{tol * 1000:.0f}ms": hits[tol] / max(n_ref, 1) for tol in TOLERANCES_S},
            "precision": {f"{tol * 1000:.0f}ms": hits[tol] / max(n_hyp, 1) for tol in TOLERANCES_S},
            "median_error_ms": float(np.median(e)) if len(e) else None,
            "p90_error_ms": float(np.percentile(e, 90)) if len(e) else None}


def markdown(rows: Sequence[dict], env: dict) -> str:
    lines = ["# pocketsphinx as a phone aligner, against espeak-ng's true phone times", "",
             f"pocketsphinx {env['pocketsphinx']}, {env['sentences']} sentences, each read by 2 of {env['voices']} espeak-ng en-us voices; "
             f"commit `{env['commit']}`. Written by `benchmarks/forced_aligner_check.py` (its --help: the method).", "",
             "| audio | utterances | not aligned | within 20 ms: recall / precision | within 50 ms: recall / precision "
             "| median error | 90th pct |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {'band-limited (5.5 kHz)' if r['band_limited'] else 'full band'} | {r['utterances']} | "
                     f"{r['failed']} | {100 * r['recall']['20ms']:.1f} / {100 * r['precision']['20ms']:.1f} % | "
                     f"{100 * r['recall']['50ms']:.1f} / {100 * r['precision']['50ms']:.1f} % | "
                     f"{r['median_error_ms']:.1f} ms | {r['p90_error_ms']:.1f} ms |")
    full = rows[0]
    good = full["recall"]["20ms"] >= GOOD_RECALL_20MS and full["failed"] <= MAX_FAILED_SHARE * full["utterances"]
    lines += ["", f"Reading: an ABX triphone item spans about 250 ms and a phone about 80 ms; good HMM aligners put "
              f"80-90 % of read speech's boundaries within 20 ms. Here (full band) {100 * full['recall']['20ms']:.0f} % "
              f"are, one in ten is {full['p90_error_ms']:.0f} ms or more away, and {full['failed']} of "
              f"{full['utterances']} utterances do not align at all: "
              + ("good enough to time ABX items." if good else
                 "not good enough to build an ABX item file from, so the real English corpus has none.")
              + " espeak-ng is not human speech, on which pocketsphinx's model was trained: on the real clips it may "
              "do better or worse, and nothing here can show which.", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    args = get_parser().parse_args(argv)
    from importlib.metadata import version

    from local_models.common.results import git_commit
    from local_models.common.synth import sample_voices

    dec = decoder()
    voices = sample_voices("en-us", max(args.voices, 1), seed=args.seed)
    rows = [measure(dec, voices, band) for band in (False, True)]
    env = {"pocketsphinx": version("pocketsphinx"), "sentences": len(SENTENCES),
           "voices": len(voices), "commit": git_commit()}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"env": env, "rows": rows}, indent=1) + "\n")
    out.with_suffix(".md").write_text(markdown(rows, env))
    print(out.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
