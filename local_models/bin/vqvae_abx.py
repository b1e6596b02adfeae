"""ZeroSpeech 2019 ABX error (across speaker, within context) of frame features or discrete codes.

Definition: local_models/vqvae/abx.py (DTW over arccos(cos)/pi frame distances, path-length normalised;
cells (context, A, B, speaker of A/B, speaker of X) averaged over contexts, then speakers, then phone
pairs; error = (1 - score) * 100). Prints the error and optionally writes everything to --json.
"""
import argparse
import json
import sys

import numpy as np

from local_models.common.datadir import DataDirError, atomic_open
from local_models.vqvae.abx import FRAME_RULES, CodeFeatures, abx_error
from local_models.vqvae.featio import load_features
from local_models.vqvae.items import item_summary, read_item_file


def get_parser():
    p = argparse.ArgumentParser(
        prog="vqvae_abx",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Frame times: frame t is centred at FRAME_OFFSET + t * FRAME_SHIFT. The default offset "
        "(FRAME_SHIFT / 2) is the ZeroSpeech convention (frame t covers [t*shift, (t+1)*shift)); librosa "
        "'centred' features (local_models.common.features) are centred at t * hop: give --frame-offset 0. "
        "A stride-4 encoder over 10 ms centred frames: --frame-shift 0.04 --frame-offset 0.015.",
    )
    p.add_argument("--feats", required=True,
                   help="features: kaldiio .scp or .ark, or a directory of <file>.npy; keys are the item "
                        "file's first column; (T, D) float frames, or (T,) integer codes with "
                        "--codebook/--one-hot")
    p.add_argument("--items", required=True,
                   help="ABX item file (#file onset offset #phone prev-phone next-phone speaker)")
    p.add_argument("--frame-shift", type=float, required=True,
                   help="seconds between frames (e.g. 0.01; 0.04 for a 4x stride)")
    p.add_argument("--frame-offset", type=float, default=None,
                   help="centre of frame 0 in seconds (default: FRAME_SHIFT / 2)")
    p.add_argument("--rule", choices=FRAME_RULES, default="center",
                   help="frames of an item: 'center' = centre in [onset, offset] (ABXpy, ZeroSpeech 2019; "
                        "default), 'libri-light' = zerospeech-libriabx2's index rule")
    codes = p.add_mutually_exclusive_group()
    codes.add_argument("--codebook",
                       help=".npy (K, D) codebook: --feats holds integer codes, evaluated as embeddings")
    codes.add_argument("--one-hot", type=int, metavar="K",
                       help="--feats holds integer codes in [0, K), evaluated one-hot")
    p.add_argument("--missing", choices=["error", "skip"], default="error",
                   help="item-file files without features: stop (default) or leave their items out")
    p.add_argument("--reference", action="store_true",
                   help="also compute zerospeech-libriabx2's across/within error (exact: no subsampling)")
    p.add_argument("--json", help="write the result (error, counts, per-phone-pair errors, settings) here")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        items = read_item_file(args.items)
        feats = load_features(args.feats)
        if args.codebook or args.one_hot:
            codebook = np.load(args.codebook) if args.codebook else None
            feats = CodeFeatures(feats, codebook, args.one_hot)
        result = abx_error(feats, items, args.frame_shift, args.frame_offset, args.rule, args.missing)
        out = {"abx_error": result.error, "condition": "across-speaker within-context",
               "frame_shift": args.frame_shift,
               "frame_offset": args.frame_shift / 2 if args.frame_offset is None else args.frame_offset,
               "rule": args.rule, "feats": args.feats, "items": args.items,
               "units": "codebook" if args.codebook else "one-hot" if args.one_hot else "features",
               "item_summary": item_summary(items), **result.to_dict()}
        print(f"ABX error (across speaker, within context): {result.error:.2f} %  "
              f"({result.n_items_used}/{result.n_items} items, {result.n_cells} cells, "
              f"{result.n_phone_pairs} phone pairs, {result.n_items_empty} items without frames)")
        if args.reference:
            from local_models.vqvae.abx_ref import libriabx2_version, reference_abx_error

            if args.frame_offset is not None:
                print("vqvae_abx: note: zerospeech-libriabx2 has no frame offset (it assumes FRAME_SHIFT / 2)",
                      file=sys.stderr)
            full = {u: feats[u] for u in {it.file for it in items} if u in feats}
            ref = reference_abx_error(full, args.items, args.frame_shift)
            # ours on exactly libriabx2's terms (its frame rule, frame 0 centred at FRAME_SHIFT / 2): like for like
            same = abx_error(feats, items, args.frame_shift, None, "libri-light", args.missing)
            out["reference"] = {"package": f"zerospeech-libriabx2=={libriabx2_version()}", "abx_error": ref,
                                "ours_same_rule": same.error}
            print(f"zerospeech-libriabx2 ABX error (across/within, no subsampling): {ref:.2f} %; ours with its frame "
                  f"rule and offset (--rule libri-light): {same.error:.2f} %")
        if args.json:
            with atomic_open(args.json) as f:
                json.dump(out, f, indent=1, sort_keys=True)
                f.write("\n")
    except (DataDirError, ValueError, KeyError, OSError, RuntimeError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"vqvae_abx: {msg}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
