"""Encode features with a trained VQ-VAE: discrete codes per utterance, the codebook, and the bitrate.

Writes OUT_DIR/codes/<utt>.npy ((T',) int codes, one per 40 ms), OUT_DIR/codes.txt (`<utt> c1 c2 ...`, the
ZeroSpeech-style symbolic transcription), OUT_DIR/codebook.npy ((K, D) code embeddings, what ABX is computed on)
and, with --utt2dur, OUT_DIR/bitrate.json: ZeroSpeech 2019 bitrate (N / D) * H over --bitrate-list's utterances.
"""
import argparse
import sys
from pathlib import Path

from local_models.common.datadir import DataDirError
from local_models.common.device import add_ngpu_option, device_of
from local_models.vqvae.featio import load_features
from local_models.vqvae.inference import encode_all, write_bitrate, write_codes
from local_models.vqvae.task import VQVAEModel, load_trained


def get_parser():
    p = argparse.ArgumentParser(prog="vqvae_extract", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-dir", required=True, help="trained VQ-VAE exp dir (config.yaml + valid.loss.best.pth)")
    p.add_argument("--model-file", "--model_file", dest="model_file", default="valid.loss.best.pth",
                   help="checkpoint in --model-dir (default %(default)s)")
    add_ngpu_option(p)
    p.add_argument("--utt2dur", help="durations for the bitrate (data/<set>/utt2dur)")
    p.add_argument("--bitrate-list", help="utterances the bitrate is computed over (default: all)")
    p.add_argument("feats", help="features (kaldiio .scp) of the set to encode")
    p.add_argument("out_dir")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    out = Path(args.out_dir)
    try:
        device = device_of(args.ngpu)
        model = load_trained(args.model_dir, args.model_file, VQVAEModel, device)
        codes = encode_all(model, load_features(args.feats), device)
        codebook = model.vqvae.codebook.embed.detach().float().cpu().numpy().copy()
        write_codes(out, codes, codebook)
        if args.utt2dur:
            br, used, n = write_bitrate(out, codes, codebook.shape[0], args.utt2dur, args.bitrate_list)
            print(f"vqvae_extract: bitrate {br.bitrate:.2f} bits/s over {n} utterances "
                  f"({used}/{codebook.shape[0]} codes used)", file=sys.stderr)
    except (DataDirError, OSError, ValueError, KeyError) as e:
        print(f"vqvae_extract: {e}", file=sys.stderr)
        return 1
    print(f"vqvae_extract: {len(codes)} utterances -> {out}/codes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
