"""Compute log-mel / MFCC / STFT-magnitude features of a data dir into a kaldiio ark/scp shard."""
import argparse
import sys

from tqdm import tqdm

from local_models.common.audio import AudioError, iter_utterances
from local_models.common.datadir import DataDirError, read_table, write_table
from local_models.common.features import FeatConfig, compute, shard_writer


def get_parser():
    p = argparse.ArgumentParser(
        prog="extract_feats",
        description="Read DATA_DIR (wav.scp [+ segments]), resample to --sample-rate, write OUT.ark/OUT.scp "
        "OUT.utt2num_frames, OUT.utt2dur and OUT.shape (ESPnet shape file); several DATA_DIR OUT pairs (or --pairs "
        "FILE) in one process. Typically run per split through the job launcher (utils/make_feats).",
    )
    p.add_argument("--kind", default="logmel", choices=["logmel", "mfcc", "stft", "fbank"],
                   help="logmel: ln mel power; fbank: ESPnet2 TTS fbank, log10 mel magnitude, reflect padding")
    p.add_argument("--sample-rate", type=int, default=16000)
    p.add_argument("--win-ms", type=float, default=25.0)
    p.add_argument("--hop-ms", type=float, default=10.0)
    p.add_argument("--win-length", type=int, default=0, help="window in samples (overrides --win-ms)")
    p.add_argument("--hop-length", type=int, default=0, help="hop in samples (overrides --hop-ms)")
    p.add_argument("--n-fft", type=int, default=0, help="0 = next power of two >= window")
    p.add_argument("--n-mels", type=int, default=80)
    p.add_argument("--fmin", type=float, default=0.0, help="lowest mel filter edge in Hz")
    p.add_argument("--fmax", type=float, default=0.0, help="highest mel filter edge in Hz (0 = Nyquist)")
    p.add_argument("--n-mfcc", type=int, default=13)
    p.add_argument("--deltas", type=int, default=0, choices=[0, 1, 2],
                   help="append delta (1) or delta + delta-delta (2) features, e.g. MFCC 13 -> 39")
    p.add_argument("--pairs", metavar="FILE",
                   help="lines `DATA_DIR OUT_PREFIX`: each extracted in turn, in this one process (make_feats' jobs)")
    p.add_argument("dirs", nargs="*", metavar="DATA_DIR OUT_PREFIX",
                   help="one or more pairs: DATA_DIR's features are written to OUT_PREFIX.{ark,scp,...}")
    return p


def read_pairs(path: str) -> list:
    """[(data_dir, out_prefix)] of a --pairs file; ValueError naming file:line for a line that is not two paths."""
    pairs = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if len(parts) != 2:
                raise ValueError(f"{path}:{n}: expected `DATA_DIR OUT_PREFIX`, got {line.strip()!r}")
            pairs.append(tuple(parts))
    if not pairs:
        raise ValueError(f"{path}: no `DATA_DIR OUT_PREFIX` lines")
    return pairs


def extract(data_dir: str, out_prefix: str, cfg: FeatConfig) -> None:
    """DATA_DIR's features -> OUT_PREFIX.{ark,scp}, .utt2num_frames, .utt2dur and .shape (ESPnet shape file)."""
    total = len(read_table(f"{data_dir}/utt2spk"))
    durations = {}
    with shard_writer(out_prefix) as feats:
        for utt, wave, _ in tqdm(iter_utterances(data_dir, cfg.sample_rate), total=total,
                                 desc="extract_feats", mininterval=5, disable=None):
            if wave.size == 0:
                raise AudioError(f"{data_dir}: '{utt}' has no samples")
            feats[utt] = compute(wave, cfg)
            durations[utt] = f"{len(wave) / cfg.sample_rate:.3f}"
    write_table(f"{out_prefix}.utt2num_frames", {u: m.shape[0] for u, m in feats.items()})
    write_table(f"{out_prefix}.utt2dur", durations)
    # ESPnet shape file (<utt> frames,dims) for the trainer's batch sampler
    write_table(f"{out_prefix}.shape", {u: f"{m.shape[0]},{m.shape[1]}" for u, m in feats.items()})


def main(argv=None):
    parser = get_parser()
    args = parser.parse_args(argv)
    if len(args.dirs) % 2 or not (args.dirs or args.pairs):
        parser.error(f"DATA_DIR OUT_PREFIX come in pairs (or --pairs FILE); got {len(args.dirs)} paths")
    pairs = list(zip(args.dirs[::2], args.dirs[1::2]))
    # window / hop in samples become ms that round back to exactly those samples
    win_ms = args.win_length * 1000 / args.sample_rate if args.win_length else args.win_ms
    hop_ms = args.hop_length * 1000 / args.sample_rate if args.hop_length else args.hop_ms
    cfg = FeatConfig(args.kind, args.sample_rate, win_ms, hop_ms, args.n_fft, args.n_mels, args.n_mfcc,
                     fmin=args.fmin, fmax=args.fmax, deltas=args.deltas)
    if args.hop_length and cfg.hop_length != args.hop_length or args.win_length and cfg.win_length != args.win_length:
        print("extract_feats: --hop-length/--win-length do not survive the ms round trip", file=sys.stderr)
        return 1
    try:
        for data_dir, out_prefix in (read_pairs(args.pairs) if args.pairs else []) + pairs:
            extract(data_dir, out_prefix, cfg)
    except (DataDirError, AudioError, ValueError, OSError) as e:
        print(f"extract_feats: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
