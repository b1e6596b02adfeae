"""Run a SAD system over every recording of a data dir; write 10 ms frame scores and the RTF."""
import argparse
import json
import sys
import time
from pathlib import Path

import torch
from tqdm import tqdm

from local_models.common.audio import AudioError, iter_utterances
from local_models.common.datadir import DataDirError, atomic_open, read_table, write_table
from local_models.common.device import add_ngpu_option, device_of
from local_models.common.features import shard_writer
from local_models.sad.detectors import DETECTORS, NEURAL_SYSTEMS, get_detector


def get_parser():
    p = argparse.ArgumentParser(
        prog="sad_decode",
        description="Compute frame scores (10 ms) of SAD system SYSTEM for each recording in DATA_DIR "
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
    p.add_argument("data_dir")
    p.add_argument("out_dir")
    return p


def main(argv=None):
    args = get_parser().parse_args(argv)
    torch.set_num_threads(1)
    try:
        device = device_of(args.ngpu)
    except ValueError as e:
        print(f"sad_decode: {e}", file=sys.stderr)
        return 2
    neural = args.system in NEURAL_SYSTEMS
    if not neural:
        device = torch.device("cpu")  # numpy / webrtcvad / silero on the CPU
    opts = dict(device=str(device), model_file=args.model_file) if neural else {}
    try:
        detector = get_detector(args.system, **opts, **({"model_dir": args.model_dir} if args.model_dir else {}))
    except TypeError:
        print(f"sad_decode: --model-dir applies to the neural systems only, not '{args.system}'", file=sys.stderr)
        return 2
    out = Path(args.out_dir)
    audio_s = proc_s = 0.0
    durations = {}
    try:
        n = len(read_table(Path(args.data_dir) / "wav.scp"))
        with shard_writer(out / "scores") as scores:
            for rec, wave, sr in tqdm(iter_utterances(args.data_dir, args.sample_rate), total=n,
                                      desc=f"sad_decode {args.system}", disable=None, mininterval=5):
                if wave.size == 0:
                    raise AudioError(f"{args.data_dir}/wav.scp: '{rec}' has no samples")
                t0 = time.perf_counter()
                frame_scores = detector.scores(wave, sr)
                # the decision (threshold + HMM Viterbi / median / segment OR) is part of a system's cost:
                # timed here at the default threshold; the tuned one is applied by sad_segments
                detector.decide(frame_scores)
                proc_s += time.perf_counter() - t0
                scores[rec] = frame_scores.reshape(-1, 1)
                audio_s += len(wave) / sr
                durations[rec] = f"{len(wave) / sr:.3f}"
    except (DataDirError, AudioError, ValueError, OSError) as e:
        print(f"sad_decode: {e}", file=sys.stderr)
        return 1
    write_table(out / "reco2dur", durations)
    with atomic_open(out / "rtf.json") as f:
        json.dump({"system": args.system, "audio_s": audio_s, "proc_s": proc_s, "rtf": proc_s / audio_s,
                   "threads": torch.get_num_threads(), "device": str(device)}, f, indent=1)
    where = "1 thread" if device.type == "cpu" else str(device)
    print(f"sad_decode: {args.system}: {audio_s:.0f} s of audio, RTF {proc_s / audio_s:.4f} ({where})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
