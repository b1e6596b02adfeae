"""Synthesise a data dir's text with a trained ESPnet2 TTS model (JDI-T or ESPnet's own Tacotron2 /
Transformer / FastSpeech) and a vocoder, timing the acoustic model and the vocoder separately.

`--feats FEATS.scp` instead of a model: vocode the given (reference) log-mel features: the paper's "GT mel"
row, the vocoder's upper bound.

Text: a `text_phn` file (`<utt> <token> <token> ...`, the tokens of data/token_list), fed to ESPnet2's
Text2Speech exactly as in training (token_type phn, g2p none). The model dir holds ESPnet's config.yaml and
a model file (default valid.loss.best.pth, else the newest epoch checkpoint).

Vocoder (`--vocoder`): `griffin_lim` (as ESPnet2's Spectrogram2Waveform: log10-mel -> linear by the mel
filterbank's pseudo-inverse, then torchaudio's fast Griffin-Lim, seeded; STFT settings from --fbank-conf, the
recipe's feature config) or the path of a trained parallel-wavegan checkpoint, Parallel WaveGAN or Multi-band MelGAN
(`parallel_wavegan.utils.load_model`; its config.yml beside it), which takes the de-normalised log10-mel exactly as
extracted.

Writes OUT/wav/<utt>.wav (16-bit PCM), OUT/wav.scp, OUT/feats.{ark,scp} (de-normalised log-mel),
OUT/durations (frames per token, when the model gives them), OUT/att_ws/<utt>.npy (attention weights of AR
models, for the robustness check and plots), OUT/synth.json (per-utterance frames, stop reason, peak level;
totals and real-time factors: compute seconds / seconds of audio generated, acoustic model and vocoder apart).
Everything is written under OUT.tmp and renamed to OUT at the end: an interrupted run leaves no partial OUT.

`--ngpu 1` runs the acoustic model and a trained vocoder on the GPU (Griffin-Lim runs on the CPU);
the timings then wait for the GPU's work to finish.
"""
import argparse
import sys

from local_models.common.device import add_ngpu_option
from local_models.jdit.inference import SynthOptions, synthesise


def get_parser():
    p = argparse.ArgumentParser(prog="jdit_synth", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-dir", help="ESPnet2 TTS exp dir with config.yaml")
    p.add_argument("--model-file", "--model_file", dest="model_file", default=None,
                   help="checkpoint in --model-dir (default: valid.loss.best.pth, else the newest N*epoch.pth)")
    add_ngpu_option(p)
    p.add_argument("--text", help="text_phn file: <utt> <tokens ...> (with --model-dir)")
    p.add_argument("--feats", help="instead of --model-dir/--text: vocode these log-mel features (kaldiio scp)")
    p.add_argument("--vocoder", default="griffin_lim", help="griffin_lim or a Parallel WaveGAN checkpoint .pkl")
    p.add_argument("--fbank-conf", required=True, help="the recipe's feature config (conf/fbank.conf)")
    p.add_argument("--griffin-lim-iters", type=int, default=32)
    p.add_argument("--maxlenratio", type=float, default=10.0, help="AR models: max frames = ratio x tokens")
    p.add_argument("--minlenratio", type=float, default=0.0)
    p.add_argument("--threshold", type=float, default=0.5, help="AR models: stop-token threshold")
    p.add_argument("--nthreads", type=int, default=1, help="torch threads (RTF is reported for this many)")
    p.add_argument("--save-att", action="store_true", help="save the attention weights of AR models")
    p.add_argument("out_dir")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        s = synthesise(SynthOptions(
            out_dir=args.out_dir, fbank_conf=args.fbank_conf, model_dir=args.model_dir, model_file=args.model_file,
            text=args.text, feats=args.feats, vocoder=args.vocoder, griffin_lim_iters=args.griffin_lim_iters,
            maxlenratio=args.maxlenratio, minlenratio=args.minlenratio, threshold=args.threshold,
            nthreads=args.nthreads, ngpu=args.ngpu, save_att=args.save_att))
    except (FileNotFoundError, ValueError) as e:
        sys.exit(f"jdit_synth: {e}")
    print(f"jdit_synth: {s['utterances']} utterances, {s['audio_seconds']:.1f} s of audio; RTF acoustic "
          f"{s['acoustic_rtf']:.4f}, vocoder {s['vocoder_rtf']:.4f} ({s['threads']} thread(s)) -> {args.out_dir}")


if __name__ == "__main__":
    main()
