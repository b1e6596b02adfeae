"""Run a SAD system over every recording of a data dir; write 10 ms frame scores and the RTF."""
import argparse
import sys

from local_models.common.audio import AudioError
from local_models.common.datadir import DataDirError
from local_models.common.device import add_ngpu_option, device_of
from local_models.sad.inference import decode_data_dir, make_detector
from local_models.sad.systems import DETECTORS, NEURAL_SYSTEMS

NEEDS_TORCH = ("silero_vad",)  # the only detector whose CPU scoring runs in torch


def get_parser():
    p = argparse.ArgumentParser(
        prog="sad_decode",
        description="Compute frame scores (10 ms) of SAD system SYSTEM for each recording in each DATA_DIR "
        "(wav.scp alone is enough; audio is resampled to --sample-rate). Writes OUT_DIR/scores.{ark,scp}, "
        "OUT_DIR/reco2dur and OUT_DIR/rtf.json (processing s / audio s, scoring plus the decision at the default threshold, "
        "with the thread count).",
    )
    p.add_argument("--system", required=True, choices=sorted(DETECTORS))
    p.add_argument("--sample-rate", type=int, default=8000, help="the systems are 8 kHz systems (default 8000)")
    p.add_argument("--model-dir", default="",
                   help="neural systems: the trained model's exp dir (default: $SAD_EXP_DIR/<model>, e.g. exp/seg_rnn)")
    p.add_argument("--model-file", "--model_file", dest="model_file", default="",
                   help="neural systems: checkpoint in the model dir (majority_vote: in each member's; default: "
                        "valid.loss.best.pth, else valid.loss.ave.pth, latest.pth, the newest <N>epoch.pth)")
    add_ngpu_option(p)  # the neural systems' nets run there; the others are numpy / CPU-only and ignore it
    p.add_argument("dirs", nargs="+", metavar="DATA_DIR OUT_DIR",
                   help="one or more pairs: each data dir is decoded into its out dir (the model loads once)")
    return p


def cpu_or_gpu(system: str, ngpu: int) -> str:
    """The device SYSTEM decodes on: "cpu" (numpy; torch is imported only by a system that needs it, silero-vad, and
    then runs one thread) unless a neural system is given --ngpu >= 1. A GPU asked for and absent is a ValueError
    for every system (the recipe passes one --ngpu to all)."""
    if ngpu == 0 and system not in NEEDS_TORCH:
        return "cpu"
    import torch

    torch.set_num_threads(1)
    device = device_of(ngpu)  # ValueError: --ngpu < 0, or CUDA asked for and absent
    return str(device) if system in NEURAL_SYSTEMS else "cpu"  # numpy / webrtcvad / silero on the CPU


def main(argv=None):
    parser = get_parser()
    args = parser.parse_args(argv)
    if len(args.dirs) % 2:
        parser.error(f"DATA_DIR OUT_DIR come in pairs; got {len(args.dirs)} paths")
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # numpy's BLAS (the nets' CPU forward): the RTFs are one-thread RTFs
    try:
        device = cpu_or_gpu(args.system, args.ngpu)
    except ValueError as e:
        print(f"sad_decode: {e}", file=sys.stderr)
        return 2
    try:
        detector = make_detector(args.system, device, args.model_dir, args.model_file)
    except TypeError:
        print(f"sad_decode: --model-dir applies to the neural systems only, not '{args.system}'", file=sys.stderr)
        return 2
    where = "1 thread" if device == "cpu" else device
    for data_dir, out_dir in zip(args.dirs[::2], args.dirs[1::2]):
        try:
            audio_s, proc_s = decode_data_dir(detector, args.system, data_dir, out_dir, args.sample_rate, device)
        except (DataDirError, AudioError, ValueError, OSError) as e:
            print(f"sad_decode: {e}", file=sys.stderr)
            return 1
        print(f"sad_decode: {args.system} {data_dir}: {audio_s:.0f} s of audio, RTF {proc_s / audio_s:.4f} ({where})",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
