"""Synthesis speed of the kss/tts1 acoustic models on the same sentences (paper 002: JDI-T is feed-forward, so
it should be much faster than the autoregressive ESPnet Transformer-TTS; the issue asks for >= 10x).

For every sentence of --sets (text_phn of the recipe's data dirs), each trained model (RECIPE/exp/tts_<system>)
generates the SAME number of mel frames, so that the comparison is not skewed by one model stopping early:
  * feed-forward models (jdit, fastspeech): the true durations (data/<set>/durations, mini corpus) through
    teacher forcing; where a set has none, each model's own predicted durations and the AR models are run
    to that length;
  * autoregressive models (transformer, tacotron2): stop token disabled (threshold > 1) and the maximum length
    set to that frame count.
Times the acoustic model only (no vocoder), best of --repeats per sentence, --threads torch threads, fp32,
after one warm-up sentence. Reports per model: total seconds, seconds per second of speech (RTF; frames
to seconds by the recipe's conf/fbank.conf), and the speed-up of every model over --baseline (default transformer).

Writes RECIPE/exp/benchmarks/kss_speed.json.
  python benchmarks/kss_speed.py [--recipe egs/kss/tts1] [--systems "jdit transformer"] [--threads 2]
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from local_models.jdit.systems import FEED_FORWARD  # noqa: E402  (jdit, fastspeech: the models with durations)


def load_model(exp_dir: Path):
    from local_models.jdit.inference import load_tts_model

    model, args = load_tts_model(exp_dir)
    return model.tts, {t: i for i, t in enumerate(args.token_list)}


def sentences(recipe: Path, sets):
    from local_models.common.datadir import read_table

    out = []
    for x in sets:
        d = recipe / "data" / x
        text = read_table(d / "text_phn")
        durs = read_table(d / "durations") if (d / "durations").is_file() else {}
        for utt in sorted(text):
            dur = np.array(durs[utt].split(), dtype=int) if utt in durs else None
            out.append((f"{x}/{utt}", text[utt].split(), dur))
    return out


def run_once(name, tts, ids, durations, frames):
    """Generate `frames` frames (feed-forward: from `durations`) and return (seconds, frames generated)."""
    import torch

    x = torch.tensor(ids, dtype=torch.long)
    t0 = time.perf_counter()
    with torch.no_grad():
        if name in FEED_FORWARD:
            d = torch.tensor(durations, dtype=torch.long)
            if name == "fastspeech":  # ESPnet's FastSpeech appends <sos/eos> and wants its duration too
                d = torch.cat([d, d.new_zeros(1)])
            out = tts.inference(x, durations=d, use_teacher_forcing=True)
        else:
            n_in = len(ids) + 1  # + <sos/eos>; ESPnet's Tacotron2 and Transformer both stop at n_in x ratio frames
            out = tts.inference(x, threshold=2.0, minlenratio=0.0, maxlenratio=frames / n_in + 1e-6)
    return time.perf_counter() - t0, int(out["feat_gen"].shape[0])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--recipe", default=str(ROOT / "egs/kss/tts1"))
    p.add_argument("--systems", default="jdit fastspeech transformer tacotron2", help="trained systems to time")
    p.add_argument("--baseline", default="transformer")
    p.add_argument("--sets", default="test ood")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--max-sentences", type=int, default=0, help="0: all")
    args = p.parse_args(argv)
    import logging

    import torch

    logging.disable(logging.WARNING)  # ESPnet's make_pad_mask warns on every call
    from local_models.common.results import cpu_load

    load = cpu_load()  # before any timing: whether other work shared the CPU

    torch.set_num_threads(args.threads)
    recipe = Path(args.recipe)
    systems = [s for s in args.systems.split() if (recipe / "exp" / f"tts_{s}" / "config.yaml").is_file()]
    missing = set(args.systems.split()) - set(systems)
    if missing:
        print(f"kss_speed: not trained, skipped: {' '.join(sorted(missing))}", file=sys.stderr)
    if not systems:
        sys.exit(f"kss_speed: no trained system under {recipe}/exp (run the recipe's stage 4)")
    sents = sentences(recipe, args.sets.split())
    if args.max_sentences:
        sents = sents[: args.max_sentences]
    models = {s: load_model(recipe / "exp" / f"tts_{s}") for s in systems}
    from local_models.jdit.inference import read_fbank_conf

    conf = read_fbank_conf(recipe / "conf" / "fbank.conf")
    hop, fs = int(conf["hop_length"]), int(conf["sample_rate"])

    # the frame count of every sentence: its true durations, else JDI-T's (or the first feed-forward model's)
    # predicted ones
    ff = next((s for s in systems if s in FEED_FORWARD), None)
    plan = []
    for key, toks, dur in sents:
        if dur is None:
            if ff is None:
                sys.exit("kss_speed: no true durations and no feed-forward model to set the lengths")
            tts, vocab = models[ff]
            with torch.no_grad():
                dur = tts.inference(torch.tensor([vocab.get(t, vocab.get("<unk>")) for t in toks]))["duration"].numpy()
                dur = dur[: len(toks)]
        plan.append((key, toks, np.asarray(dur), int(np.sum(dur))))

    results = {}
    for s in systems:
        tts, vocab = models[s]
        unk = vocab.get("<unk>")
        run_once(s, tts, [vocab.get(t, unk) for t in plan[0][1]], plan[0][2], plan[0][3])  # warm-up
        total, frames_out = 0.0, 0
        for key, toks, dur, frames in plan:
            ids = [vocab.get(t, unk) for t in toks]
            best = min(run_once(s, tts, ids, dur, frames) for _ in range(args.repeats))
            total += best[0]
            frames_out += best[1]
        speech_s = frames_out * hop / fs
        results[s] = dict(seconds=total, frames=frames_out, speech_seconds=speech_s, rtf=total / speech_s)
        print(f"{s:12s} {total:8.3f} s for {len(plan)} sentences, {frames_out} frames ({speech_s:.1f} s of speech): "
              f"RTF {total / speech_s:.4f}", flush=True)
    base = results.get(args.baseline)
    if base:
        for s, r in results.items():
            r[f"speedup_over_{args.baseline}"] = base["rtf"] / r["rtf"]
        print("speed-up over", args.baseline + ":",
              ", ".join(f"{s} {r[f'speedup_over_{args.baseline}']:.1f}x" for s, r in results.items()))
    out = dict(threads=args.threads, repeats=args.repeats, sets=args.sets.split(), sentences=len(plan), **load,
               precision="fp32", lengths="true durations where known, else the feed-forward model's",
               models=results)
    dst = recipe / "exp" / "benchmarks" / "kss_speed.json"
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(out, indent=1) + "\n")
    print(f"kss_speed: {dst}")


if __name__ == "__main__":
    main()
