"""Cut random fixed-length training chunks (features + frame labels) out of whole SAD recordings."""
import argparse
import sys
from pathlib import Path

from local_models.common.datadir import DataDirError
from local_models.sad.chunks import make_chunks


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
    try:
        n, speech = make_chunks(args.feats_scp, args.data_dir, args.out_dir, args.chunk_frames,
                                args.chunks_per_frame_span, args.seed)
    except (DataDirError, OSError, ValueError) as e:
        print(f"sad_make_chunks: {e}", file=sys.stderr)
        return 1
    print(f"sad_make_chunks: {n} chunks of {args.chunk_frames} frames -> {Path(args.out_dir)} (speech {100 * speech:.1f} %)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
