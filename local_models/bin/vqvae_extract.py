"""Encode features with a trained VQ-VAE: discrete codes per utterance, the codebook, and the bitrate.

Writes OUT_DIR/codes/<utt>.npy ((T',) int codes, one per 40 ms), OUT_DIR/codes.txt (`<utt> c1 c2 ...`, the
ZeroSpeech-style symbolic transcription), OUT_DIR/codebook.npy ((K, D) code embeddings, what ABX is computed on)
and, with --utt2dur, OUT_DIR/bitrate.json: ZeroSpeech 2019 bitrate (N / D) * H over --bitrate-list's utterances.
"""
import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from local_models.common.datadir import DataDirError, atomic_open, read_table
from local_models.common.device import add_ngpu_option, device_of
from local_models.vqvae.bitrate import bitrate
from local_models.vqvae.featio import load_features, read_utt_list
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


def encode_all(model, feats, device="cpu") -> dict:
    codes = {}
    for utt in tqdm(sorted(feats), desc="vqvae_extract", mininterval=5, disable=None):
        x = torch.tensor(np.array(feats[utt], dtype=np.float32), device=device)[None]
        if x.shape[1] < 4:
            raise ValueError(f"'{utt}': {x.shape[1]} frames, fewer than the encoder's stride 4")
        _, c, clen = model.encode(x, torch.tensor([x.shape[1]], device=device))
        codes[utt] = c[0, : int(clen[0])].cpu().numpy().astype(np.int32)
    return codes


def write_codes(out: Path, codes: dict, codebook: np.ndarray) -> None:
    tmp = out / "codes.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for utt, c in codes.items():
        np.save(tmp / f"{utt}.npy", c)
    shutil.rmtree(out / "codes", ignore_errors=True)
    tmp.rename(out / "codes")
    np.save(out / "codebook.npy", codebook)
    with atomic_open(out / "codes.txt") as f:
        f.writelines(f"{u} {' '.join(map(str, c.tolist()))}\n" for u, c in codes.items())


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
            durs = read_table(args.utt2dur)
            keep = read_utt_list(args.bitrate_list, codes) if args.bitrate_list else list(codes)
            br = bitrate({u: codes[u] for u in keep}, durs)
            used = len(np.unique(np.concatenate([codes[u] for u in keep])))
            with atomic_open(out / "bitrate.json") as f:
                json.dump({**br.to_dict(), "codes_used": int(used), "num_codes": int(codebook.shape[0])}, f, indent=1)
            print(f"vqvae_extract: bitrate {br.bitrate:.2f} bits/s over {len(keep)} utterances "
                  f"({used}/{codebook.shape[0]} codes used)", file=sys.stderr)
    except (DataDirError, OSError, ValueError, KeyError) as e:
        print(f"vqvae_extract: {e}", file=sys.stderr)
        return 1
    print(f"vqvae_extract: {len(codes)} utterances -> {out}/codes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
