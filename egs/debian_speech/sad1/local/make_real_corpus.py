"""Build a SAD corpus of real recordings from Debian packages: human speech, real music and sound effects, mixed
into long streams whose speech labels are exact by construction (docs/data.md, "Real-recording SAD corpus").

    python local/make_real_corpus.py --split {train,dev,eval} --minutes M [--seed 0] WAV_DIR DATA_DIR

Each split is its own make: no speaker, language, music or effect of one split is heard in another.

| split | speech (readers / actors)                                   | music                  | effects / noise        |
|-------|-------------------------------------------------------------|------------------------|------------------------|
| train | Fish Fillets NG cs (2 actors + extras); Tux Paint es fr ca ro | sonic-pi loops, half A | sonic-pi hits, Tux Paint effects (not the spoken letters and numbers), half A |
| dev   | Fish Fillets NG nl (2 actors); Tux Paint ru bg               | the same, half B       | the same, half B       |
| eval  | Warzone 2100 voice lines (en); Tux Paint el be               | Hedgewars' music       | Hedgewars' and Warzone 2100's effects |

No split's effects hold a sound with a human voice in it (VOICED_EFFECTS: words, cries, screams).
eval is the sealed set (scored once, by the final stage); dev chooses every threshold and rule; built at its
committed settings it must match conf/eval.sha256 (--expect-sha256): the reference tables byte for byte, the streams
byte for byte or, where another CPU's float arithmetic moved their last bits, within the tolerances of
conf/eval.summary.json (lengths exact, levels a second within TOLERANCE). Debian's asterisk sound packages and
alsa-utils' recorded noise are never used (common/debian.py refuses them).

A stream: speech clips one after another with drawn pauses (each clip cut at its own silences: the regions
librosa.effects.split finds 35 dB below the clip's peak, pauses under 0.3 s bridged, are the reference speech), each
at a drawn level; a coloured-noise floor 10-35 dB below the speech; music and effects at Poisson times over speech and
pauses alike (sad.augment.place_events: each event's time and SNR go to the `events` table); then a channel: in 30 %
of the streams the telephone band (300-3400 Hz), a slow gain drift of +-6 dB, dropouts, in 10 % mild clipping.
16 kHz mono PCM_16 (the SAD features resample to 8 kHz; silero-vad hears 16 kHz). Deterministic per (seed, split).
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from scipy.signal import butter, sosfilt

from local_models.common.audio import AudioError, read_audio
from local_models.common.datadir import atomic_open
from local_models.common.debian import Package, sha256_of, unpacked
from local_models.common.realspeech import FILLETS_DATA, FILLETS_VOICES, TUXPAINT, fillets_clips, tuxpaint_clips
from local_models.common.realspeech import STAMPS
from local_models.sad.augment import NonSpeechSet, coloured_noise, place_events, smooth_walk
from local_models.sad.events import Event, write_events
from local_models.sad.labels import write_recording, write_reference_dir

SR = 16000
SPLITS = ("train", "dev", "eval")
SONIC_PI = Package("sonic-pi-samples", "3.2.2~repack-8",
                   "25f2312d2fae005e6ad0f4726b8ed3084e776006a5a132083506e960224ac79d")
WARZONE = Package("warzone2100-data", "4.3.3-3", "53ad292569e0bf9d16de1642d13629f29ed5dfb68896787e4c65ac60edc07d3d")
HEDGEWARS = Package("hedgewars-data", "1.0.2-6", "722225903a72604403e6e0026e40e9a6953f47a74d94efc5f55504bc05bb4761")
SONIC_PI_DIR = "usr/share/sonic-pi/samples"
WARZONE_WZ = "usr/share/games/warzone2100/base.wz"
HEDGEWARS_DIR = "usr/share/games/hedgewars/Data"
# sonic-pi's sample families: tonal loops and pads are music, single hits and scratches are effects
SONIC_PI_MUSIC = ("ambi", "bass", "guit", "loop", "mehackit", "tabla")
SPOKEN_STAMPS = ("symbols/alphabets", "symbols/math")  # Tux Paint stamp folders whose sounds are spoken words
# Single sounds that carry a human voice: words (Apollo radio talk, the dreidel's letter names, "help!") and wordless
# vocalisations (the faces' and the ghost's cries, Hedgewars' hellish grunts, yoo-hoo and chant, Warzone's screams).
# Found by looking at the spectrograms (harmonics under moving formants) of every effect whose name or silero-vad
# score hinted at a voice, listed by path whatever a detector made of them: labelled non-speech they would teach and
# score a voice as noise, and no reference convention here calls a scream speech, so no split uses them.
VOICED_EFFECTS = {
    "tuxpaint": ("space/apollo_lander.ogg", "seasonal/hanukkah/dreydl-gimmel.ogg", "seasonal/hanukkah/dreydl-hay.ogg",
                 "seasonal/hanukkah/dreydl-nun.ogg", "seasonal/hanukkah/dreydl-shin.ogg",
                 "seasonal/halloween/ghost.ogg", "symbols/faces/excited.ogg", "symbols/faces/happy.ogg",
                 "symbols/faces/mad.ogg", "symbols/faces/sad.ogg"),
    "hedgewars": ("hell_growl.ogg", "hell_ooff.ogg", "hell_ow.ogg", "hell_ugh.ogg", "Yoohoo.ogg", "hogchant3.ogg"),
    "warzone": ("audio/sfx/misc/help.ogg", "audio/sfx/misc/scream.ogg", "audio/sfx/misc/scream2.ogg",
                "audio/sfx/misc/scream3.ogg"),
}
SPEECH_SOURCES = {"train": (("fillets", "cs"), ("tuxpaint", "es"), ("tuxpaint", "fr"), ("tuxpaint", "ca"),
                            ("tuxpaint", "ro")),
                  "dev": (("fillets", "nl"), ("tuxpaint", "ru"), ("tuxpaint", "bg")),
                  "eval": (("warzone", "en"), ("tuxpaint", "el"), ("tuxpaint", "be"))}
# (events per minute, shortest s, longest s, SNR range dB against the speech level): music often and long, under
# speech as much as in the pauses; effects short and frequent
EVENT_RATES = {"music": (2.0, 4.0, 25.0, (-5.0, 15.0)), "noise": (6.0, 0.3, 3.0, (-5.0, 15.0))}
SPEECH_RMS = 0.08
SPLIT_TOP_DB = 35.0  # a clip's speech: louder than its peak minus this
BRIDGE_S = 0.3       # pauses inside a clip shorter than this stay speech (annotators do not mark them)
STREAM_S = 300.0


@dataclass(frozen=True)
class SpeechClip:
    path: Path          # a file, or a zip member as "<zip>::<member>"
    speaker: str


# ----------------------------------------------------------------------------- sources
def half(name: str) -> str:
    """'A' or 'B' by a hash of NAME: train takes the A files of a shared make, dev the B files."""
    return "A" if int(hashlib.sha1(name.encode()).hexdigest(), 16) % 2 == 0 else "B"


def speech_clips(split: str, roots: Dict[str, Path]) -> List[SpeechClip]:
    """SPLIT's speech clips (speaker = reader / actor), from the unpacked packages in ROOTS."""
    out: List[SpeechClip] = []
    for source, lang in SPEECH_SOURCES[split]:
        if source == "tuxpaint":
            out += [SpeechClip(c.path, c.speaker) for c in tuxpaint_clips(roots["tuxpaint"], lang)]
        elif source == "fillets":
            out += [SpeechClip(c.path, c.speaker)
                    for c in fillets_clips(roots["fillets"], roots[f"fillets_{lang}"], lang)]
        else:  # Warzone 2100's spoken messages and taunts, zip members of base.wz; one speaker per folder
            wz = roots["warzone"] / WARZONE_WZ
            with zipfile.ZipFile(wz) as z:
                names = sorted(n for n in z.namelist() if n.endswith(".ogg")
                               and (n.startswith("audio/memressp/") or n.startswith("audio/taunts/")))
            out += [SpeechClip(Path(f"{wz}::{n}"), "warzone_" + n.split("/")[2]) for n in names]
    return out


def tuxpaint_effects(root: Path) -> List[Path]:
    """Tux Paint's stamp sounds that are not speech: not the read descriptions (`*_desc*`), and nothing under
    SPOKEN_STAMPS (the letter and number stamps say their letter or number aloud, most in one language each:
    `math-7_nl.ogg`; labelled non-speech they taught the nets, and scored, spoken words as noise), nor a sound of
    VOICED_EFFECTS."""
    stamps = root / STAMPS
    return [p for p in sorted(stamps.rglob("*.ogg")) if "_desc" not in p.name
            and p.relative_to(stamps).as_posix() not in VOICED_EFFECTS["tuxpaint"]
            and not any(p.relative_to(stamps).as_posix().startswith(d + "/") for d in SPOKEN_STAMPS)]


def nonspeech_files(split: str, roots: Dict[str, Path]) -> Dict[str, List[Path]]:
    """{'music': [...], 'noise': [...]}: SPLIT's non-speech sources (files, or zip members as '<zip>::<member>')."""
    kinds: Dict[str, List[Path]] = {"music": [], "noise": []}
    if split in ("train", "dev"):
        want = "A" if split == "train" else "B"
        for f in sorted((roots["sonic_pi"] / SONIC_PI_DIR).glob("*.flac")):
            if half(f.name) == want:
                kinds["music" if f.name.split("_")[0] in SONIC_PI_MUSIC else "noise"].append(f)
        kinds["noise"] += [p for p in tuxpaint_effects(roots["tuxpaint"]) if half(p.name) == want]
    else:
        data = roots["hedgewars"] / HEDGEWARS_DIR
        kinds["music"] = sorted((data / "Music").glob("*.ogg"))
        kinds["noise"] = sorted(p for p in (data / "Sounds").glob("*.ogg")  # effects only: voices/ is a subfolder
                                if p.name not in VOICED_EFFECTS["hedgewars"])
        wz = roots["warzone"] / WARZONE_WZ
        with zipfile.ZipFile(wz) as z:
            kinds["noise"] += [Path(f"{wz}::{n}") for n in sorted(z.namelist())
                               if n.startswith("audio/sfx/") and n.endswith(".ogg")
                               and n not in VOICED_EFFECTS["warzone"]]
    return kinds


def fetch_roots() -> Dict[str, Path]:
    """Every package the corpus reads, fetched (pinned, sha256-checked) and unpacked once into the Debian cache."""
    return {"tuxpaint": unpacked(TUXPAINT), "fillets": unpacked(FILLETS_DATA),
            **{f"fillets_{lang}": unpacked(pkg) for lang, pkg in FILLETS_VOICES.items()},
            "sonic_pi": unpacked(SONIC_PI), "warzone": unpacked(WARZONE), "hedgewars": unpacked(HEDGEWARS)}


def read_clip(path: Path) -> np.ndarray:
    """A file or a '<zip>::<member>' at SR, mono float64."""
    text = str(path)
    source = path
    if "::" in text:  # a zip member: decoded here, mixed down and resampled by read_audio as a file would be
        import soundfile

        zip_path, member = text.split("::", 1)
        with zipfile.ZipFile(zip_path) as z:
            wave, sr = soundfile.read(io.BytesIO(z.read(member)), dtype="float32", always_2d=True)
        source = (wave.mean(axis=1), sr)
    try:
        wave, _ = read_audio(source, SR, allow_silent=True, max_clipped=1.0)
    except AudioError:  # the packages hold a few empty recordings (fillets-ng-data-nl: gems/nl/zav-v-sto.ogg)
        return np.zeros(0)
    return wave.astype(np.float64)


def speech_regions(wave: np.ndarray) -> List[Tuple[int, int]]:
    """The clip's speech as sample regions: above peak - SPLIT_TOP_DB, pauses under BRIDGE_S bridged."""
    import librosa

    regions: List[List[int]] = []
    if len(wave) < 400 or not np.any(wave):
        return []
    for start, end in librosa.effects.split(wave, top_db=SPLIT_TOP_DB, frame_length=400, hop_length=160):
        if regions and start - regions[-1][1] < BRIDGE_S * SR:
            regions[-1][1] = int(end)
        else:
            regions.append([int(start), int(end)])
    return [(s, e) for s, e in regions if e - s >= int(0.1 * SR)]


# ----------------------------------------------------------------------------- one stream
def channel(rng, x: np.ndarray) -> Tuple[np.ndarray, str]:
    """The recording channel: telephone band (30 %), gain drift, dropouts, mild clipping (10 %); returns its name."""
    name = []
    if rng.uniform() < 0.3:
        x = sosfilt(butter(4, [300, 3400], btype="band", fs=SR, output="sos"), x)
        name.append("telephone")
    x = x * 10 ** (smooth_walk(rng, len(x), SR, 3.0, -6.0, 6.0, 1.5) / 20)
    for start in rng.integers(0, len(x), size=rng.poisson(len(x) / SR / 60)):
        x[int(start):int(start) + int(rng.uniform(0.05, 0.3) * SR)] = 0.0
    if rng.uniform() < 0.1:
        limit = rng.uniform(0.6, 0.9) * np.max(np.abs(x))
        x = np.clip(x, -limit, limit)
        name.append("clipped")
    return x, "+".join(name) or "wideband"


def build_stream(rng, clips: Sequence[SpeechClip], nonspeech: NonSpeechSet, seconds: float):
    """(wave float32, speech regions in s, events): speech clips with pauses, noise floor, music / effects, channel."""
    n = int(seconds * SR)
    speech, regions, events = np.zeros(n), [], []
    pos = int(rng.uniform(0.5, 3.0) * SR)
    while True:
        clip = clips[int(rng.integers(len(clips)))]
        wave = read_clip(clip.path)
        parts = speech_regions(wave)
        if not parts:
            continue
        wave = wave[parts[0][0]:parts[-1][1]]
        if pos + len(wave) > n:
            break
        rms = np.sqrt(np.mean(np.concatenate([wave[s - parts[0][0]:e - parts[0][0]] for s, e in parts]) ** 2))
        gain_db = rng.uniform(-8.0, 4.0)
        speech[pos:pos + len(wave)] = wave / (rms + 1e-12) * SPEECH_RMS * 10 ** (gain_db / 20)
        for s, e in parts:
            start, end = (pos + s - parts[0][0]) / SR, (pos + e - parts[0][0]) / SR
            regions.append((start, end))
            events.append(Event(start, end, "speech", 0.0))  # SNR filled in below, once the floor is known
        pos += len(wave) + int(min(8.0, max(0.2, rng.exponential(2.0))) * SR)
    floor_db = rng.uniform(10.0, 35.0)
    mix = speech + coloured_noise(rng, n, SR) * SPEECH_RMS * 10 ** (-floor_db / 20)
    added, more = place_events(n, SR, nonspeech, EVENT_RATES, SPEECH_RMS, rng)
    mix, channel_name = channel(rng, mix + added)
    peak = np.max(np.abs(mix)) + 1e-12
    mix = mix / peak * rng.uniform(0.3, 0.9)
    events = [Event(e.start, e.end, e.kind, floor_db) if e.kind == "speech" else e for e in events]
    return mix.astype(np.float32), regions, sorted(events + more, key=lambda e: e.start), channel_name


# ----------------------------------------------------------------------------- a split
def nonspeech_dir(split: str, roots: Dict[str, Path], out: Path) -> Path:
    """OUT in MUSAN's layout (music/, noise/) for sad.augment.NonSpeechSet: zip members extracted, files linked;
    an entry left by an earlier build that the lists no longer hold (a sound since found to be voiced) is removed,
    as NonSpeechSet reads every file of the folder."""
    for kind, files in nonspeech_files(split, roots).items():
        d = out / kind
        d.mkdir(parents=True, exist_ok=True)
        wanted = set()
        for f in files:
            text = str(f)
            if "::" in text:
                zip_path, member = text.split("::", 1)
                dst = d / member.replace("/", "-")
                if not dst.is_file():
                    with zipfile.ZipFile(zip_path) as z, atomic_open(dst, "wb") as w:
                        w.write(z.read(member))
            else:
                dst = d / f"{f.parent.name}-{f.name}"
                if not dst.exists():
                    dst.symlink_to(f)
            wanted.add(dst.name)
        for stale in sorted(set(os.listdir(d)) - wanted):
            (d / stale).unlink()
    return out


def write_split(split: str, minutes: float, seed: int, roots: Dict[str, Path], wav_dir: Path, data_dir: Path,
                work: Path) -> None:
    clips = speech_clips(split, roots)
    nonspeech = NonSpeechSet(nonspeech_dir(split, roots, work / f"nonspeech_{split}"))
    n_streams = max(1, round(minutes * 60 / STREAM_S))
    seconds = minutes * 60 / n_streams
    wav_dir.mkdir(parents=True, exist_ok=True)
    wavs, durations, speech, table, channels = {}, {}, {}, {}, {}
    for i in range(n_streams):
        rec = f"real_{split}_{i:03d}"
        rng = np.random.default_rng([seed, SPLITS.index(split), i])
        wave, speech[rec], table[rec], channels[rec] = build_stream(rng, clips, nonspeech, seconds)
        wavs[rec] = (wav_dir / f"{rec}.wav").resolve()
        write_recording(wavs[rec], wave, SR)
        durations[rec] = len(wave) / SR
        print(f"make_real_corpus: {rec}: {seconds:.0f} s, {sum(e - s for s, e in speech[rec]) / seconds:.0%} speech, "
              f"{channels[rec]}", file=sys.stderr)
    write_reference_dir(data_dir, wavs, durations, speech, extra={"reco2channel": channels})
    write_events(data_dir / "events", table)


# ----------------------------------------------------------------------------- the sealed set's fingerprint
TABLES = ("events", "ref.rttm", "ref_segments", "reco2dur", "reco2channel")


def digests(wav_dir: Path, data_dir: Path) -> Dict[str, str]:
    """{'wav/<rec>.wav' or 'data/<table>': sha256} for a split's streams and reference tables."""
    files = {f"wav/{w.name}": w for w in sorted(wav_dir.glob("*.wav"))}
    files.update({f"data/{t}": data_dir / t for t in TABLES})
    return {name: sha256_of(path) for name, path in files.items()}


def settings_line(split: str, minutes: float, seed: int) -> str:
    return f"# split {split}, minutes {minutes:g}, seed {seed}"


def write_manifest(path: Path, settings: str, got: Dict[str, str]) -> None:
    with atomic_open(path, "w") as f:
        f.write(f"{settings}\n" + "".join(f"{h}  {name}\n" for name, h in got.items()))


def manifest_mismatch(path: Path, settings: str, got: Dict[str, str]) -> Optional[List[str]]:
    """None when PATH fingerprints another make (other settings: nothing to check); else the names whose sha256
    differ from PATH's, missing or extra ones included ([] = the committed set, byte for byte)."""
    lines = path.read_text().splitlines()
    if not lines or lines[0] != settings:
        return None
    want = {}
    for i, line in enumerate(lines[1:], 2):
        h, sep, name = line.partition("  ")
        if not sep or len(h) != 64:
            raise SystemExit(f"make_real_corpus: {path}:{i}: not a '<sha256>  <name>' line: {line!r}")
        want[name] = h
    return sorted(n for n in set(want) | set(got) if want.get(n) != got.get(n))


# How far a stream rebuilt on another CPU may stray from the recorded summary (float arithmetic: resampling,
# filtering, mixing): its RMS level a second (dB; seconds under the floor count as the floor: a sample's last bit is
# a large share of a near-silent second). Its length must be equal, and the reference tables byte for byte: a
# changed pool, script or package moves them, the last bits of a sample do not.
TOLERANCE = {"rms_db": 0.05, "floor_db": -60.0}


def summary_path(manifest: Path) -> Path:
    """conf/eval.sha256 -> conf/eval.summary.json: the tolerant description beside the byte fingerprint."""
    return manifest.with_suffix(".summary.json")


def summary(wav_dir: Path) -> dict:
    """A split's streams in numbers that another CPU's float arithmetic leaves within TOLERANCE: each one's length
    in samples and RMS level (dB) a second."""
    import soundfile

    out = {"wav": {}}
    for w in sorted(wav_dir.glob("*.wav")):
        x, _ = soundfile.read(w, dtype="float64")
        sec = x[:len(x) // SR * SR].reshape(-1, SR)
        out["wav"][w.name] = {"samples": len(x),
                              "rms_db": [round(float(v), 3) for v in 10 * np.log10((sec ** 2).mean(axis=1) + 1e-12)]}
    return out


def summary_differences(want: dict, got: dict) -> List[str]:
    """Where GOT's streams stray from WANT's beyond TOLERANCE ([]: the same streams, up to float arithmetic)."""
    bad = []
    for name in sorted(set(want["wav"]) | set(got["wav"])):
        a, b = want["wav"].get(name), got["wav"].get(name)
        if a is None or b is None or a["samples"] != b["samples"]:
            bad.append(f"wav/{name}: length")
            continue
        floor = TOLERANCE["floor_db"]
        worst = max((abs(max(x, floor) - max(y, floor)) for x, y in zip(a["rms_db"], b["rms_db"])), default=0.0)
        if worst > TOLERANCE["rms_db"]:
            bad.append(f"wav/{name}: level off by {worst:.3f} dB")
    return bad


def write_summary(path: Path, settings: str, got: dict) -> None:
    with atomic_open(path, "w") as f:
        json.dump({"settings": settings, **got}, f)
        f.write("\n")


def within_tolerance(manifest: Path, settings: str, wav_dir: Path) -> Optional[List[str]]:
    """None when there is no summary of this make beside MANIFEST; else summary_differences ([]: within). An
    unreadable summary is an error naming it (SystemExit)."""
    path = summary_path(manifest)
    if not path.is_file():
        return None
    try:
        want = json.loads(path.read_text())
        if want.get("settings") != settings:
            return None
        return summary_differences(want, summary(wav_dir))
    except (ValueError, KeyError, TypeError, OSError, AttributeError) as e:
        raise SystemExit(f"make_real_corpus: {path}: not a summary of streams ({type(e).__name__}: {e})") from None


def remove_split(wav_dir: Path, data_dir: Path) -> None:
    shutil.rmtree(data_dir, ignore_errors=True)
    for w in wav_dir.glob("*.wav"):
        w.unlink()


def check_sealed(path: Path, split: str, minutes: float, seed: int, wav_dir: Path, data_dir: Path) -> None:
    """The split just built against its committed fingerprint: a sealed set must be the one that was fixed before
    any system was scored on it: byte for byte, or (another CPU's float arithmetic) within the tolerances of its
    summary (the streams only; the reference tables byte for byte). On a mismatch, or an unreadable summary, nothing
    of the split is left (no stage can score another set)."""
    settings = settings_line(split, minutes, seed)
    bad = manifest_mismatch(path, settings, digests(wav_dir, data_dir))
    if bad is None:
        print(f"make_real_corpus: {split} built with other settings than {path} ({settings[2:]}): not the "
              "committed sealed set, not checked", file=sys.stderr)
        return
    if not bad:
        print(f"make_real_corpus: {split} is the sealed set of {path}, byte for byte", file=sys.stderr)
        return
    try:
        stray = within_tolerance(path, settings, wav_dir) if all(n.startswith("wav/") for n in bad) else None
    except SystemExit:
        remove_split(wav_dir, data_dir)
        raise
    if stray == []:
        print(f"make_real_corpus: {split} differs from {path} in the bytes of {', '.join(bad)} but its reference "
              f"tables are byte for byte and its streams match {summary_path(path)} within "
              f"{TOLERANCE['rms_db']} dB a second, every length equal: the sealed set, up to this CPU's float "
              "arithmetic", file=sys.stderr)
        return
    remove_split(wav_dir, data_dir)
    why = f"; beyond {summary_path(path)}'s tolerances: {'; '.join(stray[:3])}" if stray else ""
    raise SystemExit(f"make_real_corpus: the {split} set built here is not the sealed one fingerprinted in "
                     f"{path} (differs: {', '.join(bad[:4])}{' ...' if len(bad) > 4 else ''}{why}): the packages, "
                     "this script or the machine's arithmetic changed. Nothing of it was kept; a set built "
                     "with other --minutes / --seed is not checked, and is not the committed one.")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="make_real_corpus", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--split", choices=SPLITS, required=True)
    p.add_argument("--minutes", type=float, required=True, help="minutes of streams (5-minute streams)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--work-dir", default="downloads/real", help="the non-speech sets in MUSAN layout (default: %(default)s)")
    p.add_argument("--expect-sha256", default="", help="check the split built against this fingerprint "
                   "(conf/eval.sha256: the sealed set) when it was built with the same settings; remove it if not")
    p.add_argument("--record-sha256", default="", help="write the split's fingerprint here, and its summary "
                   "beside it (<name>.summary.json; done once, when the sealed set is fixed)")
    p.add_argument("wav_dir")
    p.add_argument("data_dir")
    a = p.parse_args(argv)
    if a.minutes <= 0:
        p.error(f"--minutes {a.minutes}: must be positive")
    if a.expect_sha256 and not Path(a.expect_sha256).is_file():
        p.error(f"--expect-sha256 {a.expect_sha256}: no such file")
    wav_dir, data_dir = Path(a.wav_dir), Path(a.data_dir)
    write_split(a.split, a.minutes, a.seed, fetch_roots(), wav_dir, data_dir, Path(a.work_dir))
    if a.record_sha256:
        settings = settings_line(a.split, a.minutes, a.seed)
        write_manifest(Path(a.record_sha256), settings, digests(wav_dir, data_dir))
        write_summary(summary_path(Path(a.record_sha256)), settings, summary(wav_dir))
    if a.expect_sha256:
        check_sealed(Path(a.expect_sha256), a.split, a.minutes, a.seed, wav_dir, data_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
