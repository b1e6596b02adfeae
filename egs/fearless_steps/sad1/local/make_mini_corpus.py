"""Build an Apollo-11-like SAD mini corpus: long 8 kHz streams of short speech bursts in hard noise.

What makes Fearless Steps hard is reproduced on purpose (docs/data.md):
- speech is short (one or two words per burst) and about 30 % of the time;
- 8 kHz, band-limited to 300-3400 Hz like the radio channel;
- SNR drifts between 0 and 20 dB inside a stream, and the talker level varies burst to burst;
- the noise is non-stationary: coloured noise with a drifting level and colour, mains hum,
  clicks, static bursts, and beeps/tones (Quindar tones and others) that are NOT speech.
Train / dev / eval use disjoint voices (espeak-ng language x variant pairs).
With --nonspeech (a MUSAN-like dir: the recipe's built-in set, or MUSAN itself) every stream also gets music, tones,
noises and babble at Poisson times and realistic levels, and channel effects (gain drift, dropouts, clipping); every
such event and every speech burst with its SNR goes to the data dir's `events` table (local_models/sad/events.py).
--eval-ood-min adds `eval_ood`, a held-out set of a different make: other English accents, non-speech from
--ood-nonspeech (sources no training split uses), another channel band.

Output per split: `<wav_dir>/<rec>.wav` and a data dir with wav.scp, utt2spk/spk2utt (recording =
utterance = speaker), reco2dur, and the reference as `ref.rttm` plus Kaldi-style `ref_segments`.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List, Tuple

import numpy as np
from scipy.signal import butter, sosfilt

from local_models.common.synth import VARIANTS, Voice, synthesize
from local_models.sad.augment import Event, NonSpeechSet, coloured_noise, place_events, smooth_walk
from local_models.sad.events import write_events
from local_models.sad.labels import write_recording, write_reference_dir

SR = 8000
SPEECH_RMS = 0.1  # nominal talker level before the per-burst variation
# Radio-loop words, spoken one or two at a time as in the Apollo loops.
WORDS = (
    "houston eagle columbia apollo roger copy affirmative negative go stand by over out say again "
    "loud and clear read you five by two three four six seven eight niner zero hundred thousand "
    "flight capcom guidance control network retro fido eecom telcom surgeon booster procedures "
    "engine pressure oxygen fuel cabin hatch antenna signal lock acquisition loss gimbal thrust "
    "attitude pitch roll yaw altitude velocity range rate radar landing descent ascent orbit "
    "undock separation burn ignition shutdown nominal good looking green red check verify "
    "confirm standing tranquility base contact light stay no bravo charlie delta echo fox "
    "minutes seconds mark time battery voltage current tank valve open closed switch circuit "
    "breaker panel display keyboard program alarm okay thanks understand wilco go ahead"
).split()


OOD_LANGS = ("en-029", "en-gb-scotland", "en-gb-x-gbcwmd")  # accents no other split speaks (RP is too close to en-gb)
# non-speech events per source kind: (events per minute, shortest s, longest s, SNR range dB against the nominal
# talker level); babble = 3-7 talkers at Kaldi's babble SNRs
EVENT_RATES = {"music": (0.8, 4.0, 20.0, (-5.0, 10.0)), "tones": (2.0, 0.3, 4.0, (-5.0, 10.0)),
               "noise": (1.5, 0.3, 5.0, (0.0, 15.0)), "speech": (0.5, 3.0, 12.0, (13.0, 20.0))}
# the channel of each split: band edges (Hz); eval_ood's is another radio's
BANDS = {"eval_ood": (250, 3800)}
DEFAULT_BAND = (300, 3400)


def split_voices(seed: int) -> dict:
    """Disjoint speaker sets: every (language, variant) voice belongs to exactly one split; eval_ood's accents are
    spoken nowhere else."""
    pool = [(lang, v) for lang in ("en-us", "en-gb") for v in VARIANTS]
    order = np.random.default_rng(seed).permutation(len(pool))
    pool = [pool[i] for i in order]
    ood = [(lang, v) for lang in OOD_LANGS for v in VARIANTS]
    ood = [ood[i] for i in np.random.default_rng([seed, 3]).permutation(len(ood))[:12]]
    return {"train": pool[:12], "dev": pool[12:18], "eval": pool[18:], "eval_ood": ood}


def make_voice(lang_variant: Tuple[str, str], rng: np.random.Generator) -> Voice:
    lang, variant = lang_variant
    return Voice(lang, variant, rate=int(rng.integers(150, 230)), pitch=int(rng.integers(25, 75)),
                 pitch_range=int(rng.integers(30, 90)))


def speech_burst(rng: np.random.Generator, voices: List[Tuple[str, str]]) -> np.ndarray:
    """One or two words, trimmed to the first..last non-silence phone (= the labelled region)."""
    text = " ".join(rng.choice(WORDS, size=int(rng.integers(1, 3))))
    utt = synthesize(text, make_voice(voices[int(rng.integers(len(voices)))], rng), sample_rate=SR)
    spoken = [(s, e) for label, s, e in utt.phones if label != "sil"]
    wave = utt.wave[spoken[0][0]: spoken[-1][1]].astype(np.float32)
    return wave / (np.sqrt(np.mean(wave**2)) + 1e-9)


def events(rng, n: int, rate_per_s: float, min_s: float, max_s: float):
    """Poisson-placed (start, length) pairs in samples."""
    count = rng.poisson(rate_per_s * n / SR)
    for start in np.sort(rng.integers(0, n, size=count)):
        yield int(start), int(rng.uniform(min_s, max_s) * SR)


def add_interference(rng, noise_level: np.ndarray, bursts_and_beeps: bool = True):
    """Hum, clicks, static bursts and tones; levels relative to talker and noise. Returns the signal and the
    bursts and tones as events (hum and clicks are part of the background). Without BURSTS_AND_BEEPS only hum and
    clicks: eval_ood's tones and noises all come from its own make."""
    n = len(noise_level)
    t = np.arange(n) / SR
    x = np.zeros(n)
    mains = rng.choice([50.0, 60.0])  # harmonics inside the 300-3400 Hz band survive the channel
    hum = sum(np.sin(2 * np.pi * mains * k * t + rng.uniform(0, 2 * np.pi)) / k for k in range(5, 14))
    x += hum * noise_level * rng.uniform(0.5, 2.0) * (smooth_walk(rng, n, SR, 5.0, 0, 1, 0.4) > 0.3)
    for start, length in events(rng, n, 0.4, 0.002, 0.006):  # clicks
        seg = slice(start, min(n, start + length))
        decay = np.exp(-np.arange(seg.stop - seg.start) / (0.001 * SR))
        x[seg] += rng.choice([-1, 1]) * SPEECH_RMS * rng.uniform(1, 5) * decay
    added = []
    if not bursts_and_beeps:
        return x, added
    for start, length in events(rng, n, 1 / 20, 0.1, 1.0):  # static bursts
        seg = slice(start, min(n, start + length))
        gain = rng.uniform(0.3, 1.5)
        x[seg] += rng.standard_normal(seg.stop - seg.start) * SPEECH_RMS * gain
        added.append(Event(seg.start / SR, seg.stop / SR, "noise", -20 * np.log10(gain)))
    for start, length in events(rng, n, 1 / 12, 0.1, 0.6):  # beeps: Quindar 2525/2475 Hz or others
        seg = slice(start, min(n, start + length))
        f = rng.choice([2525.0, 2475.0, rng.uniform(400, 3000)])
        ramp = np.minimum(1, np.minimum(np.arange(seg.stop - seg.start), np.arange(seg.stop - seg.start)[::-1]) / 40)
        gain = rng.uniform(0.3, 1.2)
        x[seg] += np.sin(2 * np.pi * f * t[seg]) * ramp * SPEECH_RMS * gain
        added.append(Event(seg.start / SR, seg.stop / SR, "tone", -20 * np.log10(gain / np.sqrt(2))))
    return x, added


def channel_effects(rng, mix: np.ndarray) -> np.ndarray:
    """What a radio loop does to everything: a slow gain drift (+-6 dB), dropouts (50-300 ms of nothing, about one a
    minute) and, in a third of the streams, clipping at 50-80 % of the peak."""
    n = len(mix)
    mix = mix * 10 ** (smooth_walk(rng, n, SR, 3.0, -6.0, 6.0, 1.5) / 20)
    for start, length in events(rng, n, 1 / 60, 0.05, 0.3):
        mix[start:start + length] = 0.0
    if rng.uniform() < 1 / 3:
        limit = rng.uniform(0.5, 0.8) * np.max(np.abs(mix))
        mix = np.clip(mix, -limit, limit)
    return mix


def build_stream(rng, voices, seconds: float, speech_ratio: float = 0.3, nonspeech: NonSpeechSet = None,
                 band=DEFAULT_BAND, own_beeps: bool = True):
    """Return (wave float32 in [-1, 1], [(start_s, end_s), ...] reference speech, [Event] incl. speech bursts)."""
    n = int(seconds * SR)
    speech = np.zeros(n)
    regions: List[Tuple[int, int]] = []
    gains_db: List[float] = []
    pos = int(rng.uniform(0.5, 3.0) * SR)
    spoken = 0
    while True:
        burst = speech_burst(rng, voices)
        if pos + len(burst) > n:
            break
        gains_db.append(rng.uniform(-10, 4))
        speech[pos: pos + len(burst)] = burst * SPEECH_RMS * 10 ** (gains_db[-1] / 20)
        regions.append((pos, pos + len(burst)))
        spoken += len(burst)
        # Gaps keep the running speech share near `speech_ratio`; at least 0.3 s between bursts.
        mean_gap = spoken / len(regions) * (1 - speech_ratio) / speech_ratio
        pos += len(burst) + int(SR * 0.3 + rng.exponential(max(mean_gap - SR * 0.3, SR * 0.1)))
    snr_db = smooth_walk(rng, n, SR, 2.0, 0.0, 20.0, 2.5)
    noise_level = SPEECH_RMS * 10 ** (-snr_db / 20)
    interference, added = add_interference(rng, noise_level, own_beeps)
    noise = coloured_noise(rng, n, SR) * noise_level + interference
    if nonspeech is not None:  # rng draws after the noise: a corpus without --nonspeech is unchanged
        extra, more = place_events(n, SR, nonspeech, EVENT_RATES, SPEECH_RMS, rng)
        noise, added = noise + extra, added + more
    sos = butter(6, list(band), btype="bandpass", fs=SR, output="sos")
    mix = sosfilt(sos, speech + noise)
    if nonspeech is not None:
        mix = channel_effects(rng, mix)
    mix *= 0.9 / max(np.max(np.abs(mix)), 1e-9)
    # a burst's SNR: its talker level against the stationary noise level at the burst (mean over it)
    added += [Event(s / SR, e / SR, "speech", float(g + np.mean(snr_db[s:e]))) for (s, e), g in zip(regions, gains_db)]
    return mix.astype(np.float32), [(s / SR, e / SR) for s, e in regions], added


def write_split(name: str, n_streams: int, stream_s: float, voices, seed: int, wav_dir: Path, data_dir: Path,
                nonspeech: NonSpeechSet = None):
    wavs, durations, speech, table = {}, {}, {}, {}
    for i in range(n_streams):
        rec = f"{name}_{i:03d}"
        rng = np.random.default_rng([seed, {"train": 0, "dev": 1, "eval": 2, "eval_ood": 4}[name], i])
        wave, speech[rec], table[rec] = build_stream(rng, voices, stream_s, nonspeech=nonspeech,
                                                     band=BANDS.get(name, DEFAULT_BAND), own_beeps=name != "eval_ood")
        wavs[rec] = (wav_dir / f"{rec}.wav").resolve()
        write_recording(wavs[rec], wave, SR)
        durations[rec] = len(wave) / SR
    write_reference_dir(data_dir, wavs, durations, speech)
    write_events(data_dir / "events", table)


def main(argv=None):
    p = argparse.ArgumentParser(prog="make_mini_corpus", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train-min", type=float, default=30.0, help="minutes of training streams")
    p.add_argument("--dev-min", type=float, default=10.0)
    p.add_argument("--eval-min", type=float, default=10.0)
    p.add_argument("--stream-min", type=float, default=5.0, help="length of one stream (real ones: 30)")
    p.add_argument("--eval-ood-min", type=float, default=0.0,
                   help="minutes of eval_ood, the held-out set of a different make (0: none; needs --ood-nonspeech)")
    p.add_argument("--nonspeech", help="MUSAN-like dir whose music / tones / noises / babble train, dev and eval get")
    p.add_argument("--ood-nonspeech", help="MUSAN-like dir of other sources, for eval_ood only")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("wav_dir")
    p.add_argument("data_root", help="writes <data_root>/{train,dev,eval}")
    args = p.parse_args(argv)
    if args.eval_ood_min > 0 and not args.ood_nonspeech:
        p.error("--eval-ood-min needs --ood-nonspeech (the held-out set's non-speech sources)")
    voices = split_voices(args.seed)
    sets = {"train": args.nonspeech, "dev": args.nonspeech, "eval": args.nonspeech, "eval_ood": args.ood_nonspeech}
    sets = {k: NonSpeechSet(v) if v else None for k, v in sets.items()}
    splits = [("train", args.train_min), ("dev", args.dev_min), ("eval", args.eval_min)]
    for name, minutes in splits + ([("eval_ood", args.eval_ood_min)] if args.eval_ood_min > 0 else []):
        n_streams = max(1, round(minutes / args.stream_min))
        stream_s = minutes * 60 / n_streams
        print(f"make_mini_corpus: {name}: {n_streams} streams x {stream_s:.0f} s, voices "
              + " ".join(f"{l}+{v}" for l, v in voices[name]), file=sys.stderr)
        write_split(name, n_streams, stream_s, voices[name], args.seed, Path(args.wav_dir), Path(args.data_root) / name,
                    sets[name])


if __name__ == "__main__":
    main()
