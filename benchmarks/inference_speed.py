"""Speed a user feels: every inference command's real-time factor, time to first output and peak memory on ONE
CPU thread, on inputs of 10 s, 1 min, 10 min and 30 min (texts of 10, 50 and 200 words), from packed models.

Each measurement runs in a fresh process (OMP/MKL/torch at one thread; peak memory = that process's max RSS,
model and Python included), after one warm-up call on a short input. Inputs are made here, offline:
speech by espeak-ng (a voice of the model's language) with pauses and low noise, tiled to length; texts by
repeating a set of sentences in the model's language to the word count.

  speech-segments  RTF = processing s / audio s; first output = first segment out of iter_segments from a wav file
                   (the nets: blocks of 1 s growing 1.5x until the first segment, then --chunk_s; the statistical
                   SAD the same from 20 s on a file longer than a chunk; a file of at most 15 s: one block)
  speech-to-text   LID-free from a wav file (made by the driver, so that the child's peak memory is the decoder's):
                   streaming with the early switch-off, first output = first partial result (--stt_mode stream),
                   and the call the command makes, every decoder to the end (--stt_mode call); both by default.
                   RTF also as CPU time (time.process_time), which a loaded machine does not inflate
  text-to-speech   sentence by sentence (front end + acoustic model + vocoder); RTF = s / s of audio made;
                   first output = the first sentence's audio
  speech-to-units  Speech2Units.stream from a wav file (pieces of 20 s, each an utterance); first output = the first
                   piece's units

Goals (issue #29): SAD RTF <= 0.005; streaming RNN-T RTF <= 0.2; JDI-T text -> wav RTF <= 0.1 (vocoder
included); VQ-VAE encode RTF <= 0.01; first output within 200 ms. The table marks each goal met or missed.

  python benchmarks/inference_speed.py                       # every packed model found under egs/*/*/exp
  python benchmarks/inference_speed.py --models egs/kss/tts1/exp/tts_jdit/packed/model.tar.gz --words 10 50
  python benchmarks/inference_speed.py --models ARCHIVE --stt_lengths 10 60 --stt_mode call
Writes benchmarks/results/inference_speed.{json,md} (--out).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

COMMAND = {"sad": "speech-segments", "multisoftmax": "speech-to-text", "jdit": "text-to-speech",
           "salad": "text-to-speech", "vqvae": "speech-to-units"}
GOAL_RTF = {"sad": 0.005, "multisoftmax": 0.2, "jdit": 0.1, "salad": 0.1, "vqvae": 0.01}
GOAL_FIRST_S = 0.2
SECONDS = {10: 10, 50: 60, 200: 600}  # words -> the audio length it stands beside in the table
VOICE = {"sad": "en-us", "vqvae": "en-us", "hi": "hi", "bn": "bn", "ta": "ta", "te": "te", "gu": "gu",
         "mr": "mr", "kn": "kn", "ml": "ml", "or": "or", "pa": "pa", "ur": "ur", "ne": "ne", "en": "en-us"}
PASSAGE = {
    "en-us": "The quick brown fox jumps over the lazy dog. Please call me back after the meeting today. "
             "We reached the station just before the train left for the city.",
    "hi": "आज मौसम बहुत अच्छा है। हम शाम को बाज़ार जाएंगे। मेरे भाई ने नई किताब खरीदी है।",
}
TEXTS = {
    "jdit": ["오늘은 날씨가 정말 좋네요.", "저는 3월 1일에 서울로 이사했어요.", "도서관은 아침 아홉 시에 문을 엽니다.",
             "친구와 함께 공원에서 산책을 했습니다."],
    "salad": ["Hoy hace un día muy bonito en la ciudad.", "El tren sale a las 3 de la tarde.",
              "Mi hermana compró dos libros nuevos ayer.", "Nos vemos mañana en la biblioteca central."],
}


# ----------------------------------------------------------------------------- inputs
def espeak(text: str, voice: str, out: Path) -> None:
    subprocess.run(["espeak-ng", "-v", voice, "-s", "150", "-w", str(out), text], check=True, capture_output=True)


def speech_audio(seconds: float, voice: str, sr: int = 16000) -> np.ndarray:
    """SECONDS of espeak-ng speech in VOICE at SR: the passage, a 0.3-1.5 s pause, again; low noise throughout."""
    import soundfile

    from local_models.common.audio import resample

    with tempfile.TemporaryDirectory() as d:
        espeak(PASSAGE.get(voice, PASSAGE["en-us"]), voice, Path(d) / "p.wav")
        wave, rate = soundfile.read(Path(d) / "p.wav", dtype="float32")
    wave = resample(wave, rate, sr)
    rng = np.random.default_rng(0)
    parts, n = [], 0
    while n < seconds * sr:
        pause = np.zeros(int(rng.uniform(0.3, 1.5) * sr), np.float32)
        parts += [wave, pause]
        n += len(wave) + len(pause)
    audio = np.concatenate(parts)[: int(seconds * sr)]
    return (0.5 * audio / max(1e-6, np.max(np.abs(audio))) + 0.003 * rng.standard_normal(len(audio))).astype(np.float32)


def text_of(paper: str, words: int) -> list:
    """Sentences of PAPER's language adding up to about WORDS words."""
    out, n, i = [], 0, 0
    while n < words:
        s = TEXTS[paper][i % len(TEXTS[paper])]
        out.append(s)
        n += len(s.split())
        i += 1
    return out


# ----------------------------------------------------------------------------- one measurement (child process)
def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_audio(paper: str, model, path: str, seconds: float, voice: str, chunk_s: float = 60.0,
                  repeat: int = 1) -> dict:
    """speech-segments / speech-to-units on the wav file PATH (made by the driver: the child's peak memory is the
    command's), streamed as a long recording is read; the fastest of REPEAT runs after a warm-up on 1 s."""
    import soundfile

    def outputs(wav):  # segments, or the units of each piece
        return model.iter_segments(str(wav), chunk_s=chunk_s) if paper == "sad" else model.stream(str(wav))

    with tempfile.TemporaryDirectory() as d:
        warm = Path(d) / "warm.wav"
        soundfile.write(warm, speech_audio(1.0, voice), 16000)
        list(outputs(warm))
        best = None
        for _ in range(max(1, repeat)):
            t0, first, items = time.perf_counter(), None, 0
            for out in outputs(path):
                first = first if first is not None else time.perf_counter() - t0
                items += len(out) if paper == "vqvae" else 1
            total = time.perf_counter() - t0
            if best is None or total < best["seconds"]:
                best = {"rtf": total / seconds, "first_s": first, "seconds": total,
                        ("units" if paper == "vqvae" else "segments"): items}
    return {**best, "repeat": max(1, repeat)}


def measure_stt(model, path: str, seconds: float, voice: str, mode: str) -> dict:
    """speech-to-text on the wav file PATH: `stream` (partial results, switch-off) or `call` (the command's)."""
    warm = speech_audio(1.0, voice)
    if mode == "call":
        model((warm, 16000))
        t0, c0 = time.perf_counter(), time.process_time()
        best = model(path)[0]
        total, cpu = time.perf_counter() - t0, time.process_time() - c0
        return {"rtf": total / seconds, "cpu_rtf": cpu / seconds, "first_s": None, "seconds": total,
                "language": best.language, "units": len(best.units)}
    list(model.stream((warm, 16000)))
    t0, c0, first, last = time.perf_counter(), time.process_time(), None, None
    for last in model.stream(path):
        first = first if first is not None else time.perf_counter() - t0
    total, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"rtf": total / seconds, "cpu_rtf": cpu / seconds, "first_s": first, "seconds": total,
            "language": getattr(last, "language", None)}


def measure_text(paper: str, model, words: int) -> dict:
    sentences = text_of(paper, words)
    model(sentences[0])  # warm-up
    t0, first, made = time.perf_counter(), None, 0.0
    for s in sentences:
        out = model(s)
        made += len(out["wav"]) / out["sample_rate"]
        first = first if first is not None else time.perf_counter() - t0
    total = time.perf_counter() - t0
    return {"rtf": total / made, "first_s": first, "seconds": total, "audio_s": made, "words": words}


def child(spec: dict) -> dict:
    import importlib

    import torch

    torch.set_num_threads(1)
    from local_models.common.pack import read_card

    paper = read_card(spec["model"])["paper"]
    inference = importlib.import_module(f"local_models.{paper}.inference")
    cls = {"sad": "SpeechSegmenter", "multisoftmax": "Speech2Text", "jdit": "Text2Speech", "salad": "Text2Speech",
           "vqvae": "Speech2Units"}[paper]
    t0 = time.perf_counter()
    model = getattr(inference, cls).from_pretrained(spec["model"], device="cpu")
    load_s = time.perf_counter() - t0
    if paper in TEXTS:
        res = measure_text(paper, model, spec["length"])
    elif paper == "multisoftmax":
        res = measure_stt(model, spec["wav"], spec["length"], VOICE.get(model.languages[0], "en-us"), spec["mode"])
    else:
        langs = getattr(model, "languages", None) or ["en"]
        voice = VOICE.get(paper) or VOICE.get(langs[0], "en-us")
        res = measure_audio(paper, model, spec["wav"], spec["length"], voice, spec.get("chunk_s", 60.0),
                            spec.get("repeat", 1))
    return {**res, "load_s": load_s, "peak_mib": peak_mib(), "threads": torch.get_num_threads()}


# ----------------------------------------------------------------------------- driver
def find_models():
    """One packed model per paper: the SAD model shipped in the package, else the first system found under
    egs/*/*/exp (make demo's, or a full recipe's)."""
    from local_models.common.pack import read_card
    from local_models.sad.inference import SHIPPED

    found = {"sad": SHIPPED} if SHIPPED.is_file() else {}
    for archive in sorted(ROOT.glob("egs/*/*/exp/*/packed/model.tar.gz")):
        card = read_card(archive)
        if card.get("paper") in COMMAND and card.get("kind", "") != "inverter":
            found.setdefault(card["paper"], archive)  # one per paper (the first system in sorted order)
    return list(found.values())


def audio_input(seconds: int, voice: str, d: str) -> str:
    """A wav of SECONDS of speech in VOICE in D (16 kHz, 16-bit: what a user gives the command)."""
    import soundfile

    path = Path(d) / f"{voice}_{seconds}s.wav"
    if not path.exists():
        soundfile.write(path, speech_audio(seconds, voice), 16000, subtype="PCM_16")
    return str(path)


def shown_path(model: str) -> str:
    """MODEL relative to the repository when it lies inside it."""
    p = Path(model).resolve()
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else model


def run_child(model: Path, length: int, timeout: float, chunk_s: float = 60.0, **extra) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    spec = {"model": str(model), "length": length, "chunk_s": chunk_s, **extra}
    try:
        proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)],
                              capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"not finished in {timeout} s"}
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def table(rows) -> str:
    lines = ["| command | paper | system | input | RTF | goal | first output (s) | load (s) | peak MiB |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['command']} | {r['paper']} | {r['system']} | {r['input']} | FAILED: {r['error']} |||||")
            continue
        goal = GOAL_RTF[r["paper"]]
        met = "met" if r["rtf"] <= goal else "MISSED"
        first = f"{r['first_s']:.3f} ({'met' if r['first_s'] <= GOAL_FIRST_S else 'MISSED'})" \
            if r.get("first_s") is not None else "-"
        rtf = f"{r['rtf']:.4f}" + (f" (CPU {r['cpu_rtf']:.4f})" if "cpu_rtf" in r else "")  # CPU: without contention
        lines.append(f"| {r['command']} | {r['paper']} | {r['system']} | {r['input']} | {rtf} | "
                     f"<= {goal} {met} | {first} | {r['load_s']:.2f} | {r['peak_mib']:.0f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="*", help="packed archives (default: one per paper found under egs/*/*/exp)")
    p.add_argument("--lengths", nargs="*", type=int, default=[10, 60, 600, 1800],
                   help="audio seconds (default: %(default)s)")
    p.add_argument("--words", nargs="*", type=int, default=[10, 50, 200], help="text words (default: %(default)s)")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "inference_speed"),
                   help="writes OUT.json and OUT.md (default: %(default)s)")
    p.add_argument("--chunk_s", type=float, default=60.0, help="speech-segments' chunk (default: %(default)s)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per measurement (default: %(default)s)")
    p.add_argument("--stt_lengths", nargs="*", type=int, default=[10, 60, 600, 1800],
                   help="speech-to-text's audio seconds (default: %(default)s; issue #52: any length)")
    p.add_argument("--stt_mode", nargs="+", choices=["stream", "call"], default=["stream", "call"],
                   help="speech-to-text: streaming with switch-off, and/or the command's call (default: %(default)s)")
    p.add_argument("--repeat", type=int, default=3,
                   help="speech-segments and speech-to-units: the fastest of this many runs (default: %(default)s; "
                        "the others run once)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return 0
    from local_models.common.pack import read_card
    from local_models.common.results import git_commit, hardware

    models = [Path(m) for m in args.models] if args.models else find_models()
    if not models:
        print("inference_speed: no packed models (run make demo or a recipe's pack stage first)", file=sys.stderr)
        return 1
    from local_models.common.results import cpu_load, load_text

    load0 = cpu_load()  # whether other work shared the CPU: the times are upper bounds when it did
    rows = []
    tmp = tempfile.TemporaryDirectory()
    for model in models:
        card = read_card(model)
        paper = card["paper"]
        lengths = args.words if paper in TEXTS else args.stt_lengths if paper == "multisoftmax" else args.lengths
        for length in lengths:
            label = f"{length} words" if paper in TEXTS else f"{length} s"
            runs = [(card.get("system"), {})]
            if paper == "multisoftmax":
                voice = VOICE.get(next(iter(card.get("languages") or ["en"])), "en-us")  # as the child picks it
                wav = audio_input(length, voice, tmp.name)
                runs = [(f"{card.get('system')} ({mode})", {"wav": wav, "mode": mode}) for mode in args.stt_mode]
            elif paper not in TEXTS:
                runs = [(card.get("system"), {"wav": audio_input(length, VOICE[paper], tmp.name),
                                              "repeat": args.repeat})]
            for system, extra in runs:
                r = run_child(model, length, args.timeout, args.chunk_s, **extra)
                rows.append({"command": COMMAND[paper], "paper": paper, "system": system, "input": label,
                             "model": str(model), **r})
                print(table(rows[-1:]).splitlines()[-1], flush=True)
    tmp.cleanup()
    import platform

    env = {"cpu": platform.processor() or platform.machine(), "hardware": hardware(), "threads": 1,
           "commit": git_commit(ROOT), "date": time.strftime("%Y-%m-%d"), "load_start": load0, "load_end": cpu_load()}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"environment": env, "rows": rows}, indent=1))
    md = (f"# Inference speed (one CPU thread; {env['hardware']}; commit {env['commit']}, {env['date']})\n\n"
          f"Models: {', '.join(sorted({shown_path(r['model']) for r in rows}))}."
          f"{load_text({**load0, 'threads': 1})} At the end the 1-minute load average was "
          f"{env['load_end']['load_average_at_start']:.2f}. speech-segments and speech-to-units: the fastest of "
          f"{args.repeat} runs; the others: one run. Inputs are written by the driver, so peak MiB is the command's "
          "process (torch included: the child imports it).\n\n" + table(rows) + "\n")
    out.with_suffix(".md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
