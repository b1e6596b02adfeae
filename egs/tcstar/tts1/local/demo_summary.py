#!/usr/bin/env python3
"""exp/demo/summary.md of local/demo.sh: what went in (the text) and what came out of each packed model (the wav
the text-to-speech command wrote: duration, peak, RMS, clipping), the command's wall time (start-up and model
loading included) and the synthesis alone timed in-process on one thread (warm: the second call) with its
real-time factor."""
import argparse
import sys
import time
from pathlib import Path

import numpy as np
import soundfile


def get_parser():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--text", required=True)
    p.add_argument("--run-seconds", type=float, required=True, help="wall time of run.sh")
    p.add_argument("--system", nargs=4, action="append", required=True, metavar=("NAME", "ARCHIVE", "WAV", "CLI_MS"))
    p.add_argument("out")
    return p


def synthesis_time(archive: str, text: str):
    """(seconds of the warm call, seconds of audio) of Text2Speech on one thread."""
    import torch

    from local_models.salad.inference import Text2Speech

    torch.set_num_threads(1)
    tts = Text2Speech.from_pretrained(archive)
    tts(text)
    t0 = time.perf_counter()
    out = tts(text)
    return time.perf_counter() - t0, len(out["wav"]) / out["sample_rate"]


def main(argv=None):
    args = get_parser().parse_args(argv)
    lines = ["### tcstar/tts1 (SALAD / MUSA-RNN, Spanish text-to-speech)", "",
             f"Quick run of the recipe in exp/demo/recipe (espeak-ng mini corpus, speaker M1, smoke-size models, "
             f"10 epochs, pack stage included): {args.run_seconds:.0f} s. Fresh input, a sentence no training text contains, "
             "through each packed model with `python -m local_models.bin.text_to_speech --model "
             "exp/demo/recipe/exp/M1/<system>/packed/model.tar.gz --text ... -o exp/demo/<system>.wav --threads 1`:",
             "", f"> {args.text}", "",
             "| system | wav | duration [s] | peak | RMS [dBFS] | clipped samples | command wall time [s] | "
             "synthesis, 1 thread [s] | RTF |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, archive, wav, cli_ms in args.system:
        x, sr = soundfile.read(wav, dtype="float32")
        peak, rms = float(np.max(np.abs(x))), float(np.sqrt(np.mean(x ** 2)))
        secs, audio = synthesis_time(archive, args.text)
        lines.append(f"| {name} | `{wav}` | {len(x) / sr:.2f} | {peak:.3f} | {20 * np.log10(max(rms, 1e-12)):.1f} | "
                     f"{100 * np.mean(np.abs(x) >= 0.999):.2f} % | {int(cli_ms) / 1000:.1f} | {secs:.3f} | "
                     f"{secs / audio:.3f} |")
    lines += ["", "Smoke-size models (10 epochs of very narrow nets on 24 utterances) show that the pipeline runs "
              "end to end, text to wav from the archive alone; they are not trained to speak intelligibly. "
              "`bash local/demo.sh --train_config_suffix _tiny --mini_utts 160` trains the recipe's tiny models "
              "(much longer). RTF: synthesis seconds / audio seconds (text -> front end -> durations -> acoustic "
              "model -> WORLD), model loading excluded.", ""]
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
