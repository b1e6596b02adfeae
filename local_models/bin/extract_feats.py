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
        "OUT.utt2num_frames, OUT.utt2dur and OUT.shape (ESPnet shape file). Typically run per split through the job launcher.",
    )
    p.add_argument("--kind", default="logmel", choices=["logmel", "mfcc", "stft"])
    p.add_argument("--sample-rate", type=int, default=16000)
    p.add_argument("--win-ms", type=float, default=25.0)
    p.add_argument("--hop-ms", type=float, default=10.0)
    p.add_argument("--n-fft", type=int, default=0, help="0 = next power of two >= window")
    p.add_argument("--n-mels", type=int, default=80)
    p.add_argument("--n-mfcc", type=int, default=13)
    p.add_argument("--deltas", type=int, default=0, choices=[0, 1, 2],
                   help="append delta (1) or delta + delta-delta (2) features, e.g. MFCC 13 -> 39")
    p.add_argument("data_dir")
    p.add_argument("out_prefix")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    cfg = FeatConfig(args.kind, args.sample_rate, args.win_ms, args.hop_ms, args.n_fft, args.n_mels, args.n_mfcc,
                      deltas=args.deltas)
    try:
        total = len(read_table(f"{args.data_dir}/utt2spk"))
        durations = {}
        with shard_writer(args.out_prefix) as feats:
            for utt, wave, _ in tqdm(iter_utterances(args.data_dir, cfg.sample_rate), total=total,
                                     desc="extract_feats", mininterval=5, disable=None):
                if wave.size == 0:
                    raise AudioError(f"{args.data_dir}: '{utt}' has no samples")
                feats[utt] = compute(wave, cfg)
                durations[utt] = f"{len(wave) / cfg.sample_rate:.3f}"
        write_table(f"{args.out_prefix}.utt2num_frames", {u: m.shape[0] for u, m in feats.items()})
        write_table(f"{args.out_prefix}.utt2dur", durations)
        # ESPnet shape file (<utt> frames,dims) for the trainer's batch sampler
        write_table(f"{args.out_prefix}.shape", {u: f"{m.shape[0]},{m.shape[1]}" for u, m in feats.items()})
    except (DataDirError, AudioError, ValueError) as e:
        print(f"extract_feats: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
