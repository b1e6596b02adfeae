"""Mel-cepstral distortion (and log-F0 RMSE, V/UV error) of hypothesis audio against reference audio.

REF and HYP are each a Kaldi wav.scp (`<utt> <path or command |>`) or a directory of <utt>.wav / .flac.
Utterances in both are scored; HYP keys missing from REF are an error, REF keys without HYP are skipped
(and counted). Definitions and analysis conventions: local_models/common/mcd.py.
  --dtw (default): DTW-aligned MCD, ESPnet evaluate_mcd style (order by rate, c1.. only).
  --no-dtw:        duration-aligned MCD, MUSA/SALAD (frames 1:1, c0..c39).
  --sample-rate HZ: resample both sides to HZ first (e.g. 16000 for TTS whose mel stops at 7.6 kHz: above
                   the model's band neither vocoder has information, and that empty band otherwise dominates).
Prints the frame-pooled and per-utterance-mean figures; --json / --per-utt write them (atomically).
"""
import argparse
import json
import math
import sys
from pathlib import Path

from local_models.common.audio import AudioError, load_audio
from local_models.common.datadir import DataDirError, atomic_open, read_table
from local_models.common.mcd import SALAD_ORDER, default_order, mcd_wavs, pool

AUDIO_EXTS = (".wav", ".flac")
PER_UTT_COLUMNS = ("mcd_db", "frames", "ref_frames", "hyp_frames", "lf0_rmse", "f0_rmse_hz", "vuv_error",
                   "voiced_frames")


def read_source(src: str) -> dict:
    """{utt: wav.scp entry} from a wav.scp or a directory of audio files."""
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


def get_parser():
    p = argparse.ArgumentParser(prog="mcd_score", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ref", required=True, help="reference: wav.scp or directory of <utt>.wav")
    p.add_argument("--hyp", required=True, help="hypothesis: wav.scp or directory of <utt>.wav")
    p.add_argument("--dtw", action=argparse.BooleanOptionalAction, default=True,
                   help="DTW-aligned (default) or duration-aligned (--no-dtw) MCD")
    p.add_argument("--order", type=int, default=None,
                   help="mel-cepstrum order (default: by rate for --dtw, 23 at 16 kHz; 39 for --no-dtw)")
    p.add_argument("--include-c0", action=argparse.BooleanOptionalAction, default=None,
                   help="score c0 too (default: no for --dtw, yes for --no-dtw)")
    p.add_argument("--alpha", type=float, default=None, help="all-pass constant (default pysptk mcepalpha(sr))")
    p.add_argument("--shift-ms", type=float, default=5.0, help="frame shift in ms (default 5)")
    p.add_argument("--f0-method", choices=("harvest", "dio"), default="harvest",
                   help="WORLD F0 estimator (dio is much faster, less robust)")
    p.add_argument("--f0-floor", type=float, default=40.0)
    p.add_argument("--f0-ceil", type=float, default=800.0)
    p.add_argument("--sample-rate", type=int, default=None,
                   help="resample reference and hypothesis to this rate before the analysis (default: as read)")
    p.add_argument("--json", help="write corpus figures, settings and per-utterance values here")
    p.add_argument("--per-utt", help="write a per-utterance TSV here")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    from pysptk.util import mcepalpha
    from tqdm import tqdm

    try:
        ref, hyp = read_source(args.ref), read_source(args.hyp)
        extra = set(hyp) - set(ref)
        if extra:
            raise ValueError(f"{len(extra)} hypothesis utterance(s) not in the reference {args.ref}: {_names(extra)}")
        utts = [u for u in ref if u in hyp]
        skipped = len(ref) - len(utts)
        if not utts:
            raise ValueError("no utterance in both reference and hypothesis")
        if skipped:
            print(f"mcd_score: skipping {skipped} of {len(ref)} reference utterance(s) with no hypothesis",
                  file=sys.stderr)
        analysis = {"shift_ms": args.shift_ms, "alpha": args.alpha, "f0_method": args.f0_method,
                    "f0_floor": args.f0_floor, "f0_ceil": args.f0_ceil}
        per_utt, rates = {}, set()
        for utt in tqdm(utts, desc="mcd", unit="utt", file=sys.stderr, disable=None):
            try:
                rw, rsr = load_audio(ref[utt], args.sample_rate)
                hw, hsr = load_audio(hyp[utt], args.sample_rate)
                per_utt[utt] = mcd_wavs(rw, hw, rsr, hsr, dtw=args.dtw, order=args.order,
                                        include_c0=args.include_c0, **analysis)
            except (AudioError, ValueError) as e:
                raise ValueError(f"utterance '{utt}': {e}") from None
            rates.add(rsr)
        corpus = pool(per_utt)
        # Record the settings actually used (the per-rate defaults resolved), so RESULTS.md can quote them.
        settings = {"variant": "dtw" if args.dtw else "duration-aligned",
                    "include_c0": (not args.dtw) if args.include_c0 is None else args.include_c0,
                    "sample_rates": sorted(rates), **analysis,
                    "order": sorted({args.order or (default_order(sr) if args.dtw else SALAD_ORDER) for sr in rates}),
                    "alpha": sorted({round(args.alpha or mcepalpha(sr), 4) for sr in rates}),
                    "dims_scored": sorted({r["dims"] for r in per_utt.values()})}
        out = {"ref": args.ref, "hyp": args.hyp, "utterances_scored": len(utts),
               "ref_utterances_skipped": skipped, "settings": settings, **corpus, "per_utt": per_utt}
        print(f"MCD ({settings['variant']}): {corpus['mcd_db_frame_pooled']:.3f} dB frame-pooled, "
              f"{corpus['mcd_db_utt_mean']:.3f} dB utterance mean  ({len(utts)} utts, {corpus['frames']} frames"
              f"{f', {skipped} skipped' if skipped else ''})")
        print(f"log-F0 RMSE {corpus['lf0_rmse_frame_pooled']:.4f} (frame-pooled), V/UV error "
              f"{100 * corpus['vuv_error_frame_pooled']:.2f} %")
        if args.json:
            with atomic_open(args.json) as f:
                # NaN (no voiced overlap) is not JSON: write null.
                json.dump(_nan_to_none(out), f, indent=1)
                f.write("\n")
        if args.per_utt:
            with atomic_open(args.per_utt) as f:
                f.write("utt\t" + "\t".join(PER_UTT_COLUMNS) + "\n")
                for utt, r in per_utt.items():
                    f.write(utt + "\t" + "\t".join(_fmt(r[c]) for c in PER_UTT_COLUMNS) + "\n")
    except (DataDirError, ValueError, OSError) as e:
        print(f"mcd_score: error: {e}", file=sys.stderr)
        return 1
    return 0


def _fmt(v):
    return str(v) if isinstance(v, int) else f"{v:.4f}"


def _nan_to_none(o):
    if isinstance(o, dict):
        return {k: _nan_to_none(v) for k, v in o.items()}
    if isinstance(o, float) and math.isnan(o):
        return None
    return o


if __name__ == "__main__":
    sys.exit(main())
