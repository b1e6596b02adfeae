"""The recipe demo's two pieces (egs/zerospeech2019/unit1/local/demo.sh, `python -m local_models.bin.vqvae_demo`):
a fresh utterance no training set holds, and the summary of what the packed models made of it."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from local_models.common.datadir import atomic_open

from .bitrate import bitrate
from .unitsio import read_units

# The mini corpus speaks generated CLDR word strings in espeak-ng's American English voices (en-us + variants); the
# demo input is a written sentence in the British voice ("en", another phone set and prosody), at espeak's own
# 22.05 kHz so that the command's resampling is exercised too.
FRESH_TEXT = "Please leave the parcel by the green door before six o'clock tomorrow."
FRESH_VOICE = dict(lang="en-gb", variant="m3", rate=160, pitch=45)


def make_fresh(out: Path, text: str = FRESH_TEXT) -> str:
    """Synthesise TEXT with FRESH_VOICE to OUT (espeak's native rate); returns a description of the input."""
    from local_models.common import synth
    from local_models.common.cli import write_wav

    voice = synth.Voice(**FRESH_VOICE)
    utt = synth.synthesize(text, voice)
    wave = np.asarray(utt.wave)
    if np.issubdtype(wave.dtype, np.integer):  # espeak's 16-bit samples
        wave = wave.astype(np.float32) / 32768.0
    write_wav(out, wave, utt.sample_rate)
    return (f"espeak-ng's British English voice {voice.espeak_name}, rate {voice.rate}, pitch {voice.pitch}, "
            f"{utt.sample_rate} Hz")


def audio_stats(path: Path) -> dict:
    import soundfile

    wave, sr = soundfile.read(str(path), dtype="float32")
    wave = wave if wave.ndim == 1 else wave.mean(axis=1)
    peak, rms = float(np.abs(wave).max()), float(np.sqrt(np.mean(wave.astype(np.float64) ** 2)))
    return {"sample_rate": sr, "duration": len(wave) / sr, "peak": peak, "rms": rms,
            "ok": rms > 1e-3 and peak < 0.999}


def call_times(vqvae_model: str, inverter_model: str, input_wav: Path, codes: np.ndarray, speaker: str) -> dict:
    """Seconds of one in-process call of each model on one thread (loading and start-up excluded; second call)."""
    import time

    import torch

    from .inference import Speech2Units, Units2Speech

    torch.set_num_threads(1)
    s2u, u2s = Speech2Units.from_pretrained(vqvae_model), Units2Speech.from_pretrained(inverter_model)
    out = {}
    for name, call in (("s2u", lambda: s2u(str(input_wav))), ("u2s", lambda: u2s(codes, speaker=speaker))):
        call()
        t0 = time.perf_counter()
        call()
        out[name] = time.perf_counter() - t0
    return out


def summary(input_wav: Path, units: Path, out_wav: Path, vqvae_model: str, inverter_model: str,
            s2u_seconds: float, u2s_seconds: float, run_seconds: Optional[float], out: Path, text: str = FRESH_TEXT,
            voice: str = "", speaker: Optional[str] = None) -> str:
    """exp/demo/summary.md: what went in, the units and their bitrate, the speech that came back; returns it."""
    from local_models.common.pack import read_card

    card, inv_card = read_card(vqvae_model), read_card(inverter_model)
    (where, stem, codes), = read_units(units)
    src, back = audio_stats(input_wav), audio_stats(out_wav)
    br = bitrate({stem: codes}, src["duration"])
    rate = card["frame_rate"]
    speaker = speaker or inv_card["default_voice"]
    calls = call_times(vqvae_model, inverter_model, input_wav, codes, speaker)
    lines = [
        "### zerospeech2019/unit1", "",
        f"Quick run (mini corpus, smoke-size models, pack stage) in {run_seconds:.0f} s; the VQ-VAE "
        f"`{card['system']}` and its codebook inverter were then used from their archives alone. Smoke-size models "
        "(one epoch) give noise-like speech: the point is the path from any recording to units and back." if
        run_seconds is not None else "", "",
        f"- **in**: `{input_wav}`: \"{text}\" ({voice or 'fresh input'}; no training set holds this voice or "
        f"sentence), {src['duration']:.2f} s at {src['sample_rate']} Hz",
        f"- **speech-to-units** (`{vqvae_model}`, codebook {card['codebook_size']}): `{units}`: {len(codes)} units "
        f"at {rate:g} units/s ({len(np.unique(codes))} distinct), bitrate {br.bitrate:.1f} bits/s "
        f"(ZeroSpeech 2019: {len(codes)} symbols / {src['duration']:.2f} s x {br.entropy:.2f} bits; at most "
        f"{rate * np.log2(card['codebook_size']):.0f}); command {s2u_seconds:.1f} s incl. start-up, the call "
        f"{1000 * calls['s2u']:.0f} ms on one thread (RTF {calls['s2u'] / src['duration']:.4f})",
        f"- **units-to-speech** (`{inverter_model}`, voice {speaker}, Griffin-Lim "
        f"{inv_card['resynthesis']['griffin_lim_iters']} iterations): `{out_wav}`: {back['duration']:.2f} s at "
        f"{back['sample_rate']} Hz, peak {back['peak']:.3f}, RMS {back['rms']:.4f} "
        f"({'not silent, not clipped' if back['ok'] else 'SILENT OR CLIPPED'}); command {u2s_seconds:.1f} s incl. "
        f"start-up, the call {1000 * calls['u2s']:.0f} ms on one thread (RTF {calls['u2s'] / back['duration']:.4f})",
        f"- first units: `{' '.join(map(str, codes[:25].tolist()))} ...`", "",
    ]
    text_out = "\n".join(lines)
    with atomic_open(out) as f:
        f.write(text_out)
    if not back["ok"] or not len(codes):
        raise ValueError(f"{out_wav}: the resynthesised speech is silent or clipped (peak {back['peak']:.3f}, "
                         f"RMS {back['rms']:.4f})")
    return text_out
