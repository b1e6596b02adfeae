"""The demo's fresh recording and its summary (local/demo.sh).

  python local/demo.py fresh OUT.wav REF.rttm   a 45 s Apollo-like stream no stage of the recipe saw: the mini-corpus
                                                synthesiser (local/make_mini_corpus.py) with another seed (new words,
                                                noise, SNR drift, tones), eval_ood's accents (no training stream has
                                                them) and with --nonspeech the held-out make's music / tones / noises,
                                                written at 16 kHz (the systems run at 8 kHz)
  python local/demo.py summary ...              exp/demo/summary.md: what went in, the segments each packed system
                                                found beside the true speech, frame accuracy, inference time
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_mini_corpus import BANDS, SR, build_stream, split_voices  # noqa: E402

from local_models.common.datadir import atomic_open  # noqa: E402
from local_models.sad.augment import NonSpeechSet  # noqa: E402
from local_models.sad.labels import read_rttm, to_mask, write_rttm  # noqa: E402

FRESH_SEED = 20240229  # the recipe's streams use np.random.default_rng([seed, split, i]) with seed 0 by default


def fresh(out_wav: Path, ref_rttm: Path, seconds: float, rate: int, nonspeech=None) -> None:
    import soundfile
    from scipy.signal import resample_poly

    rng = np.random.default_rng(FRESH_SEED)
    wave, regions, _ = build_stream(rng, split_voices(0)["eval_ood"], seconds, band=BANDS["eval_ood"],
                                    nonspeech=NonSpeechSet(nonspeech) if nonspeech else None)
    if rate != SR:
        wave = resample_poly(wave, rate, SR).astype(np.float32)
    out_wav.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(out_wav, "wb") as f:
        soundfile.write(f, wave, rate, format="WAV", subtype="PCM_16")
    write_rttm(ref_rttm, {out_wav.stem: regions})


def fmt(segs, limit: int = 12) -> str:
    shown = ", ".join(f"{a:.2f}-{b:.2f}" for a, b in segs[:limit])
    return shown + (f", ... ({len(segs)} in all)" if len(segs) > limit else "")


def summary(args) -> str:
    import soundfile

    from local_models.common.pack import read_card

    info = soundfile.info(args.input)
    rec = Path(args.input).stem
    ref = read_rttm(args.ref).get(rec, [])
    n = int(np.ceil(info.duration * 100))
    truth = to_mask(ref, n, 0.01)
    lines = [f"### fearless_steps/sad1", "",
             f"Recipe at a quick size (mini corpus {args.sizes}) incl. the pack stage: {args.run_seconds:.0f} s. "
             f"Fresh input `{args.input}`: {info.duration:.1f} s at "
             f"{info.samplerate} Hz (the mini-corpus synthesiser with seed {FRESH_SEED}: new words, noise and SNR "
             f"drift, held-out accents no training stream has{args.nonspeech_note}), {len(ref)} speech bursts, "
             f"{100 * truth.mean():.0f} % speech.", "",
             f"True speech (s): {fmt(ref)}", "",
             "| system (`speech-segments --model exp/<system>/packed/model.tar.gz`) | dev DCF (recipe) | threshold "
             "| segments | frame accuracy | speech recall | false alarm | inference s |",
             "|---|---|---|---|---|---|---|---|"]
    found = []
    for item in args.hyp:
        system, rttm, secs = item.split("=", 1)[0], *item.split("=", 1)[1].rsplit(":", 1)
        name, _, point = system.partition("@")  # cnn_hmm@fa_bounded: the system at its FA-bounded operating point
        card = read_card(args.model_pattern.format(system=name))
        threshold = card["threshold_fa_bounded"] if point == "fa_bounded" else card["threshold"]
        segs = read_rttm(rttm).get(rec, [])
        hyp = to_mask(segs, n, 0.01)
        dev = card.get("metrics", {}).get("dev", {}).get("dcf") if not point else None  # the card's DCF is the dcf point's
        lines.append(f"| {system} | {'-' if dev is None else f'{100 * dev:.2f} %'} | {threshold:g} | {len(segs)} "
                     f"| {100 * np.mean(hyp == truth):.1f} % | {100 * hyp[truth].mean() if truth.any() else 0:.1f} % "
                     f"| {100 * hyp[~truth].mean() if (~truth).any() else 0:.1f} % | {float(secs):.2f} |")
        found.append(f"- {system}: {fmt(segs)}")
    lines += ["", "Segments found (s):", *found, "",
              *(["<system>@fa_bounded: the same model with `--operating_point fa_bounded` (the lowest dev DCF that "
                 "calls at most 10 % of dev's music and tone time speech; its stage 6 found one). "]
                if any("@" in item.split("=", 1)[0] for item in args.hyp) else []),
              "Inference s: the whole command (start-up, unpacking the archive once, 8 kHz resampling, detection). "
              "The nets are a minute of training on a minute of audio: the pipeline, not the paper's accuracy "
              "(RESULTS.md); stat_sad needs no training. Inputs and outputs: exp/demo/.", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="local/demo.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fresh")
    f.add_argument("out_wav", type=Path)
    f.add_argument("ref_rttm", type=Path)
    f.add_argument("--seconds", type=float, default=45.0)
    f.add_argument("--rate", type=int, default=16000)
    f.add_argument("--nonspeech", help="MUSAN-like dir of non-speech to mix in (the demo: the held-out make)")
    s = sub.add_parser("summary")
    s.add_argument("--input", required=True)
    s.add_argument("--ref", required=True)
    s.add_argument("--hyp", nargs="+", required=True, help="SYSTEM=RTTM:SECONDS")
    s.add_argument("--model-pattern", default="exp/{system}/packed/model.tar.gz")
    s.add_argument("--sizes", default="")
    s.add_argument("--nonspeech-note", default="", help="what non-speech the fresh input has (a phrase)")
    s.add_argument("--run-seconds", type=float, required=True)
    s.add_argument("--out", required=True)
    args = p.parse_args(argv)
    if args.cmd == "fresh":
        fresh(args.out_wav, args.ref_rttm, args.seconds, args.rate, args.nonspeech)
    else:
        with atomic_open(args.out) as out:
            out.write(summary(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
