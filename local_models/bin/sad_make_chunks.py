"""Cut random fixed-length training chunks (features + frame labels) out of whole SAD recordings."""
import argparse
import sys
from pathlib import Path

import kaldiio
import numpy as np

from local_models.common.datadir import DataDirError, atomic_open, write_table
from local_models.common.features import shard_writer
from local_models.sad.detectors import SHIFT
from local_models.sad.labels import load_reference, to_mask


def get_parser():
    p = argparse.ArgumentParser(
        prog="sad_make_chunks",
        description="Paper Sec. 3: 'the 30 min streams are divided randomly into 4 s segments'. For every recording "
        "of FEATS_SCP (whole-stream STFT features from stage 2) draw about (frames / --chunk-frames) x "
        "--chunks-per-frame-span random chunk starts (seeded), and write OUT_DIR/feats.{ark,scp} (chunk, 257), "
        "OUT_DIR/labels.{ark,scp} (float32 0/1 per frame, from DATA_DIR's ref.rttm or ref_segments), "
        "OUT_DIR/utt2num_frames and the ESPnet shape files OUT_DIR/{feats,labels}_shape ('<key> <frames>,<dim>', "
        "keys in shuffled order so that unsorted batches mix recordings). Keys: <rec>-<start frame, 7 digits>. "
        "Frame t of the labels covers [t*10 ms, (t+1)*10 ms) as in sad_decode's score grid.",
    )
    p.add_argument("--chunk-frames", type=int, default=400, help="chunk length in 10 ms frames (default 400 = 4 s)")
    p.add_argument("--chunks-per-frame-span", type=float, default=1.5,
                   help="chunks per recording = round(frames / chunk-frames x this), at least 1 (default 1.5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("feats_scp")
    p.add_argument("data_dir", help="data dir with the reference (ref.rttm or ref_segments)")
    p.add_argument("out_dir")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    out = Path(args.out_dir)
    rng = np.random.default_rng(args.seed)
    C = args.chunk_frames
    shapes = {}
    try:
        ref = load_reference(args.data_dir)
        if not ref:
            raise DataDirError(args.data_dir, None, "no reference (ref.rttm or ref_segments): cannot label chunks")
        with shard_writer(out / "feats") as feats, shard_writer(out / "labels") as labels:
            for rec, mat in kaldiio.load_scp_sequential(args.feats_scp):
                mat = np.asarray(mat, dtype=np.float32)
                T = mat.shape[0]
                lab = to_mask(ref.get(rec, []), T, SHIFT).astype(np.float32)
                if T <= C:
                    starts = [0]
                else:
                    n = max(1, int(round(T / C * args.chunks_per_frame_span)))
                    starts = sorted(set(int(s) for s in rng.integers(0, T - C + 1, size=n)))
                for s in starts:
                    key = f"{rec}-{s:07d}"
                    feats[key] = mat[s: s + C]
                    labels[key] = lab[s: s + C]
                    shapes[key] = feats[key].shape
        if not shapes:
            raise DataDirError(args.feats_scp, None, "no recordings")
        write_table(out / "utt2num_frames", {k: v[0] for k, v in shapes.items()})
        order = list(shapes)
        rng.shuffle(order)
        with atomic_open(out / "feats_shape") as f:
            f.writelines(f"{k} {shapes[k][0]},{shapes[k][1]}\n" for k in order)
        with atomic_open(out / "labels_shape") as f:
            f.writelines(f"{k} {shapes[k][0]}\n" for k in order)
    except (DataDirError, OSError, ValueError) as e:
        print(f"sad_make_chunks: {e}", file=sys.stderr)
        return 1
    speech = np.mean([labels[k].mean() for k in labels]) if shapes else 0
    print(f"sad_make_chunks: {len(shapes)} chunks of {C} frames -> {out} (speech {100 * speech:.1f} %)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
