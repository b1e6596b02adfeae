"""The recipe demo's two steps (local/demo.sh):

    python local/demo.py input OUT_DIR      a fresh Hindi utterance: a sentence no data/*/text holds, spoken by the
        recipe's synthesiser (espeak-ng, local_models.common.synth) in a voice outside the mini corpus' voice space
        (rate, pitch, pitch range, and an espeak variant no Hindi training voice has), at 22.05 kHz
    python local/demo.py summary OUT_DIR    OUT_DIR/summary.md: what went in, what speech-to-text said, its WER / CER
        and language against the reference, the packed model's card (exp/multisoftmax_lid/packed)
--recipe DIR: the recipe run's dir (default: the current one).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import soundfile

from local_models.common.datadir import atomic_open
from local_models.common.pack import read_card
from local_models.common.synth import VARIANTS, Voice, synthesize
from local_models.multisoftmax.scoring import Counts
from local_models.multisoftmax.units import normalise, read_units

LANG = "hi"
SENTENCE = "आज बारिश के बाद मौसम बहुत सुहाना है"  # "after today's rain the weather is very pleasant"
RATE, PITCH, PITCH_RANGE, SAMPLE_RATE = 130, 78, 85, 22050  # the corpus' voices: 140-200 wpm, pitch 30-70
MODEL = Path("exp/multisoftmax_lid/packed/model.tar.gz")  # in the recipe dir


def training_voices(recipe: Path, lang: str):
    """espeak variants of the training voices of LANG (data/<lang>_train/spk2voice: `<spk> <espeak>+<variant> ...`)."""
    path = recipe / f"data/{lang}_train/spk2voice"
    return {line.split()[1].split("+")[-1] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


def seen_texts(recipe: Path):
    """Every transcript of the recipe's data dirs (train, dev, test of every language), spaces collapsed."""
    out = set()
    for text in (recipe / "data").glob("*/text"):
        for line in text.read_text(encoding="utf-8").splitlines():
            parts = line.split(maxsplit=1)
            if len(parts) == 2:
                out.add(" ".join(parts[1].split()))
    return out


def make_input(out: Path, recipe: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    if " ".join(SENTENCE.split()) in seen_texts(recipe):
        sys.exit(f"demo: the sentence {SENTENCE!r} is in the recipe's data: pick another")
    used = training_voices(recipe, LANG)
    variant = next(v for v in reversed(VARIANTS) if v not in used)  # a timbre no Hindi training voice has
    voice = Voice(LANG, variant, rate=RATE, pitch=PITCH, pitch_range=PITCH_RANGE)
    audio = synthesize(SENTENCE, voice, sample_rate=SAMPLE_RATE)
    soundfile.write(out / "input_hi.wav", audio.wave, audio.sample_rate)
    train_words = {w for line in (recipe / f"data/{LANG}_train/text").read_text(encoding="utf-8").splitlines()
                   for w in line.split()[1:]}
    words = normalise(SENTENCE, LANG).split()
    units = {u[2:] if u.startswith("B_") else u for u in read_units(recipe / f"data/lang/{LANG}/units.txt")}
    meta = {"language": LANG, "reference": SENTENCE, "voice": f"espeak-ng {voice.espeak_name} rate={RATE} "
            f"pitch={PITCH} range={PITCH_RANGE}", "training_variants": sorted(used),
            "sample_rate": audio.sample_rate, "seconds": round(len(audio.wave) / audio.sample_rate, 2),
            "words_seen_in_training": sum(w in train_words for w in words), "words": len(words),
            "graphemes_outside_unit_list": sorted({c for w in words for c in w} - units)}
    (out / "input.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"demo: {out / 'input_hi.wav'}: {meta['seconds']} s, {meta['voice']}")


def short(text: str, n: int = 160) -> str:
    """TEXT, cut to N characters for the summary (the whole is in output.txt)."""
    return text if len(text) <= n else f"{text[:n]}... ({len(text)} characters in all)"


def summary(out: Path, recipe: Path) -> None:
    meta = json.loads((out / "input.json").read_text(encoding="utf-8"))
    name, lang, text = (out / "output.txt").read_text(encoding="utf-8").rstrip("\n").split("\t")
    nbest = [line.split("\t") for line in (out / "output_nbest.txt").read_text(encoding="utf-8").splitlines()]
    ref = normalise(meta["reference"], LANG)
    c = Counts()
    c.add(ref, text)
    card = read_card(recipe / MODEL)
    lidfree = card.get("metrics", {}).get("lidfree", {}).get("avg", {})
    seconds, run_s = float((out / "time_s").read_text()), int((out / "run_s").read_text())
    ok = lang == LANG and c.word_errors == 0
    lines = [
        "### egs/indic/asr1: speech-to-text (multi-softmax RNN-T with LID, LID-free)", "",
        f"- **In**: `{name}` ({meta['seconds']} s at {meta['sample_rate']} Hz), a Hindi sentence no data dir of "
        f"the run holds, spoken by the recipe's synthesiser in a voice outside the mini corpus' voices "
        f"({meta['voice']}; training voices: 140-200 wpm, pitch 30-70, Hindi training variants "
        f"{', '.join(meta['training_variants'])}). {meta['words_seen_in_training']} of its {meta['words']} words "
        f"occur in the Hindi training text; graphemes outside the Hindi unit list: "
        f"{' '.join(meta['graphemes_outside_unit_list']) or 'none'}.",
        f"- **Reference**: {meta['reference']} (normalised: {ref})",
        f"- **Out** (no language given): language **{lang}** ({'right' if lang == LANG else 'wrong: it is ' + LANG}), "
        f"transcript: {short(text) or '(empty)'}",
        f"- **This utterance**: WER {c.wer:.1f} % ({c.word_errors} errors / {c.words} words), CER {c.cer:.1f} % "
        f"({c.char_errors} / {c.chars} characters).",
        "- **3-best** (rank, language, log-probability, text): " + "; ".join(
            f"{r[1]}. {r[2]} {r[3]} `{short(r[4], 60)}`" for r in nbest),
        f"- **Model**: `{recipe / MODEL}`, made by `run.sh` at the demo's quick size in {run_s} s "
        f"({card.get('params', 0) / 1e3:.0f} k parameters, "
        f"{card.get('training', {}).get('hours', 0) * 60:.1f} min of training speech, "
        f"{card.get('training', {}).get('epochs_trained', '?')} epochs); on the run's test sets LID-free WER "
        f"{lidfree.get('wer', float('nan')):.1f} %, CER {lidfree.get('cer', float('nan')):.1f} %, LID accuracy "
        f"{lidfree.get('lid_acc', float('nan')):.1f} %.",
        f"- **Time**: {seconds:.1f} s wall for `python -m local_models.bin.speech_to_text` (start-up, unpacking and "
        "model load included; 2 CPU cores).",
        "", ("The transcript is right." if ok else
             "The transcript is wrong, as expected of a model this small (the Model line: the demo trains the smoke "
             "size, conf/tuning/train_smoke.yaml, to stay within minutes): the demo shows the pipeline (pack, load, "
             "LID-free decoding of fresh audio), not accuracy. The recipe's default size is "
             "conf/tuning/train_tiny.yaml (RESULTS.md), the paper's conf/tuning/train.yaml."), ""]
    with atomic_open(out / "summary.md") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("step", choices=("input", "summary"))
    p.add_argument("out_dir", type=Path)
    p.add_argument("--recipe", type=Path, default=Path("."), help="the recipe run's dir (data/, exp/)")
    args = p.parse_args(argv)
    (make_input if args.step == "input" else summary)(args.out_dir, args.recipe)
    return 0


if __name__ == "__main__":
    sys.exit(main())
