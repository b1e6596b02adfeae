"""egs/kss/tts1/local/demo.sh's summary (`python -m local_models.bin.jdit_demo`): a fresh Korean sentence spoken by a
packed system through the `text-to-speech` command, checked and described in exp/demo/summary.md.

The sentence must be new: `check_fresh` refuses one that a data dir's text (or the out-of-domain list) holds.
The wav the command wrote is checked (not silent, not clipped: common.audio.check_audio) and compared with an
in-process call of the same archive (the synthesis is deterministic), which also times synthesis alone.
"""
from __future__ import annotations

import time
import unicodedata
from pathlib import Path

import numpy as np

from local_models.common.audio import check_audio, read_audio
from local_models.common.datadir import atomic_open, read_table

SAME_WAV = 1e-3  # largest sample difference of "the same wav" (-60 dB of full scale)


def known_sentences(recipe: Path) -> set:
    """Every text of the recipe's data dirs and of local/ood_ko.txt, NFC, without spaces."""
    key = lambda s: unicodedata.normalize("NFC", s).replace(" ", "")  # noqa: E731
    texts = set()
    for f in sorted((recipe / "data").glob("*/text")):
        texts.update(key(t) for t in read_table(f).values())
    ood = recipe / "local" / "ood_ko.txt"
    if ood.is_file():
        texts.update(key(line) for line in ood.read_text(encoding="utf-8").splitlines() if not line.startswith("#"))
    return texts


def check_fresh(recipe: Path, text: str) -> None:
    key = unicodedata.normalize("NFC", text).replace(" ", "")
    if key in known_sentences(recipe):
        raise ValueError(f"the demo sentence {text!r} is in the recipe's data: pick one it never saw")


def summarise(recipe, model, text: str, wav_path, cli_seconds: float, out_md, speed: float = 1.0) -> str:
    """Check WAV_PATH (what `text-to-speech --model MODEL --text TEXT` wrote in CLI_SECONDS) and write OUT_MD."""
    from local_models.common.longtext import level

    from .inference import Text2Speech

    recipe, wav_path = Path(recipe).resolve(), Path(wav_path)
    check_fresh(recipe, text)
    wave, sr = read_audio(wav_path)  # AudioError if silent, clipped, empty or NaN
    tts = Text2Speech.from_pretrained(model)
    t0 = time.perf_counter()
    out = tts(text, speed=speed)
    seconds = time.perf_counter() - t0
    check_audio(out["wav"], "the in-process synthesis")
    # the same up to 16-bit rounding and BLAS thread counts (Griffin-Lim's products round differently: ~1e-4), once
    # levelled as the command levels a one-piece text (common.longtext.level)
    if sr != out["sample_rate"] or len(wave) != len(out["wav"]) or \
            np.max(np.abs(wave - level(out["wav"]))) > SAME_WAV:
        raise ValueError(f"{wav_path}: differs from an in-process synthesis of the same archive (not deterministic?)")
    dur = len(wave) / sr
    peak, rms = float(np.max(np.abs(wave))), float(np.sqrt(np.mean(wave.astype(np.float64) ** 2)))
    card = tts.card
    words = [t for t in out["tokens"] if t != "<sos/eos>"]
    md = [f"### {recipe.parent.name}/{recipe.name} (JDI-T, Korean text-to-speech)", "",
          f"- Input (typed, new to the recipe: in no data dir's text nor local/ood_ko.txt): \"{text}\"",
          f"- Front end: \"{out['text']}\" -> {len(words)} {tts.token_type} tokens"
          f"{' (+ <sos/eos>)' if len(words) < len(out['tokens']) else ''}, {int(out['durations'].sum())} frames",
          f"- Model: `{Path(model).name}` ({card.get('system', '?')}; {card.get('vocoder', '?')}; trained "
          f"{card.get('training', {}).get('steps', '?')} steps on {card.get('training', {}).get('utterances', '?')} "
          f"utterances, {card.get('corpus', '?')})",
          f"- Output: `{wav_path}`: {dur:.2f} s at {sr} Hz, peak {peak:.3f}, RMS {rms:.4f} (not silent, not clipped"
          + (f"; the vocoder's output passed full scale and was scaled by {out['gain']:.3f})" if out["gain"] < 1
             else ")"),
          f"- Time: `text-to-speech` {cli_seconds:.1f} s wall (imports and model loading included); synthesis "
          f"alone {seconds:.2f} s (acoustic model {out['acoustic_seconds']:.2f} s, vocoder "
          f"{out['vocoder_seconds']:.2f} s), RTF {seconds / dur:.3f} on this CPU",
          f"- Speed {speed:g}; an in-process call of the archive gave the same wav, levelled as the command levels it (within {SAME_WAV:g})", ""]
    with atomic_open(out_md) as f:
        f.write("\n".join(md))
    return "\n".join(md)
