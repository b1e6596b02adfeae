"""Training chunks of the neural SAD nets (stage 3, `local_models.bin.sad_make_chunks`). Paper Sec. 3: 'the
30 min streams are divided randomly into 4 s segments': random fixed-length chunks of whole-stream features
with their frame labels, in the layout ESPnet2's trainer reads (kaldi_ark + shape files)."""
from __future__ import annotations

from pathlib import Path

import kaldiio
import numpy as np

from local_models.common.datadir import DataDirError, atomic_open, read_table, write_table
from local_models.common.features import shard_writer

from .detectors import SHIFT
from .labels import check_covered, load_reference, to_mask


def chunk_starts(rng: np.random.Generator, frames: int, chunk_frames: int, chunks_per_frame_span: float):
    """Sorted distinct random chunk starts: about frames / chunk_frames x chunks_per_frame_span of them (>= 1);
    one chunk at 0 when the recording is no longer than a chunk."""
    if frames <= chunk_frames:
        return [0]
    n = max(1, int(round(frames / chunk_frames * chunks_per_frame_span)))
    return sorted(set(int(s) for s in rng.integers(0, frames - chunk_frames + 1, size=n)))


def make_chunks(feats_scp, data_dir, out_dir, chunk_frames: int = 400, chunks_per_frame_span: float = 1.5,
                seed: int = 0):
    """Write OUT_DIR/{feats,labels}.{ark,scp}, utt2num_frames and the shuffled ESPnet shape files
    {feats,labels}_shape; keys <rec>-<start frame, 7 digits>. Returns (chunk count, mean speech fraction).
    Raises DataDirError / OSError / ValueError."""
    out = Path(out_dir)
    rng = np.random.default_rng(seed)
    C = chunk_frames
    shapes = {}
    ref = load_reference(data_dir)
    if not ref:
        raise DataDirError(data_dir, None, "no reference (ref.rttm or ref_segments): cannot label chunks")
    check_covered(ref, read_table(feats_scp), data_dir, "label its chunks")
    with shard_writer(out / "feats") as feats, shard_writer(out / "labels") as labels:
        for rec, mat in kaldiio.load_scp_sequential(feats_scp):
            mat = np.asarray(mat, dtype=np.float32)
            T = mat.shape[0]
            lab = to_mask(ref[rec], T, SHIFT).astype(np.float32)
            for s in chunk_starts(rng, T, C, chunks_per_frame_span):
                key = f"{rec}-{s:07d}"
                feats[key] = mat[s: s + C]
                labels[key] = lab[s: s + C]
                shapes[key] = feats[key].shape
    if not shapes:
        raise DataDirError(feats_scp, None, "no recordings")
    write_table(out / "utt2num_frames", {k: v[0] for k, v in shapes.items()})
    order = list(shapes)
    rng.shuffle(order)  # unsorted batches then mix recordings
    with atomic_open(out / "feats_shape") as f:
        f.writelines(f"{k} {shapes[k][0]},{shapes[k][1]}\n" for k in order)
    with atomic_open(out / "labels_shape") as f:
        f.writelines(f"{k} {shapes[k][0]}\n" for k in order)
    return len(shapes), float(np.mean([labels[k].mean() for k in labels]))
