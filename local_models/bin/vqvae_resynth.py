"""Resynthesise utterances in the target voice: features -> frozen VQ-VAE codes -> codebook inverter ->
linear magnitude -> Griffin-Lim (torchaudio's, seeded) -> 16 kHz wav (paper 003, Sec. 4).

Writes OUT_DIR/wav/<utt>.wav, OUT_DIR/wav.scp and OUT_DIR/resynth.json (counts, peak levels, RTF).
The STFT settings must be those of the inverter's training targets (recipe: 25 ms Hann window, 10 ms hop,
FFT 512 at 16 kHz).
"""
import argparse
import sys
from pathlib import Path

from local_models.common.datadir import DataDirError
from local_models.common.device import add_ngpu_option, device_of
from local_models.vqvae.featio import load_features, read_utt_list
from local_models.vqvae.inference import resynthesise
from local_models.vqvae.task import InverterModel, load_trained


def get_parser():
    p = argparse.ArgumentParser(prog="vqvae_resynth", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-dir", required=True, help="trained inverter exp dir (config.yaml + valid.loss.best.pth)")
    p.add_argument("--model-file", "--model_file", dest="model_file", default="valid.loss.best.pth",
                   help="checkpoint in --model-dir (default %(default)s)")
    add_ngpu_option(p)
    p.add_argument("--utt-list", help="utterances to synthesise, first column (default: all in FEATS)")
    p.add_argument("--sample-rate", type=int, default=16000)
    p.add_argument("--n-fft", type=int, default=512)
    p.add_argument("--win-ms", type=float, default=25.0)
    p.add_argument("--hop-ms", type=float, default=10.0)
    p.add_argument("--griffin-lim-iters", type=int, default=60)
    p.add_argument("feats", help="VQ-VAE input features (kaldiio .scp) of the utterances")
    p.add_argument("out_dir")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    out = Path(args.out_dir)
    try:
        device = device_of(args.ngpu)
        model = load_trained(args.model_dir, args.model_file, InverterModel, device)
        feats = load_features(args.feats)
        utts = read_utt_list(args.utt_list, feats) if args.utt_list else sorted(feats)
        audio_s = resynthesise(model, feats, utts, out, device, args.sample_rate, args.n_fft, args.win_ms,
                               args.hop_ms, args.griffin_lim_iters)
    except (DataDirError, OSError, ValueError) as e:
        print(f"vqvae_resynth: {e}", file=sys.stderr)
        return 1
    print(f"vqvae_resynth: {len(utts)} utterances, {audio_s:.1f} s -> {out}/wav", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
