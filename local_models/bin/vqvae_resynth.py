"""Resynthesise utterances in the target voice: features -> frozen VQ-VAE codes -> codebook inverter ->
linear magnitude -> Griffin-Lim (librosa) -> 16 kHz wav (paper 003, Sec. 4).

Writes OUT_DIR/wav/<utt>.wav, OUT_DIR/wav.scp and OUT_DIR/resynth.json (counts, peak levels, RTF).
The STFT settings must be those of the inverter's training targets (recipe: 25 ms Hann window, 10 ms hop,
FFT 512 at 16 kHz).
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import soundfile
import torch
from tqdm import tqdm

from local_models.common.datadir import DataDirError, atomic_open, write_table
from local_models.common.device import add_ngpu_option, device_of
from local_models.vqvae.featio import load_features, read_utt_list
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


def griffin_lim(mag: np.ndarray, args) -> np.ndarray:
    import librosa

    hop, win = int(args.sample_rate * args.hop_ms / 1000), int(args.sample_rate * args.win_ms / 1000)
    return librosa.griffinlim(mag.T, n_iter=args.griffin_lim_iters, hop_length=hop, win_length=win,
                              n_fft=args.n_fft, window="hann", center=True, random_state=0)


def main(argv=None):
    args = get_parser().parse_args(argv)
    out = Path(args.out_dir)
    try:
        device = device_of(args.ngpu)
        model = load_trained(args.model_dir, args.model_file, InverterModel, device)
        feats = load_features(args.feats)
        utts = read_utt_list(args.utt_list, feats) if args.utt_list else sorted(feats)
        (out / "wav").mkdir(parents=True, exist_ok=True)
        wav_scp, peaks, audio_s, proc_s = {}, [], 0.0, 0.0
        for utt in tqdm(utts, desc="vqvae_resynth", mininterval=5, disable=None):
            x = torch.tensor(np.array(feats[utt], dtype=np.float32), device=device)[None]
            t0 = time.perf_counter()
            with torch.no_grad():
                mag, lengths = model.predict(x, torch.tensor([x.shape[1]], device=device))
            wave = griffin_lim(mag[0, : int(lengths[0])].detach().float().cpu().numpy(), args)
            proc_s += time.perf_counter() - t0
            peak = float(np.abs(wave).max()) if wave.size else 0.0
            if peak > 0.99:  # keep the level, avoid clipping
                wave = wave * (0.99 / peak)
            peaks.append(peak)
            path = (out / "wav" / f"{utt}.wav").absolute()
            soundfile.write(path, wave.astype(np.float32), args.sample_rate, subtype="PCM_16")
            wav_scp[utt] = str(path)
            audio_s += len(wave) / args.sample_rate
        write_table(out / "wav.scp", wav_scp)
        with atomic_open(out / "resynth.json") as f:
            json.dump({"utterances": len(utts), "audio_s": audio_s, "rtf": proc_s / max(audio_s, 1e-9),
                       "threads": torch.get_num_threads(), "peak_min": min(peaks, default=0.0),
                       "peak_max": max(peaks, default=0.0), "griffin_lim_iters": args.griffin_lim_iters}, f, indent=1)
    except (DataDirError, OSError, ValueError) as e:
        print(f"vqvae_resynth: {e}", file=sys.stderr)
        return 1
    print(f"vqvae_resynth: {len(utts)} utterances, {audio_s:.1f} s -> {out}/wav", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
