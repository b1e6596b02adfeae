"""TC-STAR data prep (real-corpus layout reader) and the synthesis-based aligner for text-only recordings."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile

from local_models.common.datadir import read_table
from local_models.common.synth import Voice, espeak_available, synthesize
from local_models.salad import align, frontend

ROOT = Path(__file__).resolve().parents[1]
PREP = ROOT / "egs" / "tcstar" / "tts1" / "local" / "prepare_tcstar.py"
needs_espeak = pytest.mark.skipif(not espeak_available(), reason="needs espeak-ng")


def prep(*args):
    return subprocess.run([sys.executable, str(PREP), *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT)


def make_corpus(root: Path, n=10, lab_every=2):
    label = frontend.label_text("Sí.").lines[0]  # a full-context label of this recipe's front end
    for spk in ("M1", "F1"):
        for i in range(n):
            stem = f"{spk.lower()}_{i:03d}"
            sub = root / spk / ("a" if i % 2 else "b")
            sub.mkdir(parents=True, exist_ok=True)
            soundfile.write(sub / f"{stem}.wav", np.zeros(1600 * (i + 1), dtype=np.float32), 16000)
            (root / spk / f"{stem}.txt").write_text(f"frase número {i}.\n", encoding="utf-8")
            if i % lab_every == 0:
                (root / spk / f"{stem}.lab").write_text(f"0 1000000 {label}\n")


def test_reads_speaker_dirs_and_splits_by_duration(tmp_path):
    make_corpus(tmp_path / "db")
    proc = prep("--valid-share", "0.2", "--test-share", "0.3", tmp_path / "db", tmp_path / "data")
    assert proc.returncode == 0, proc.stderr
    train, valid, test = (read_table(tmp_path / "data" / f"M1_{x}" / "wav.scp") for x in ("train", "valid", "test"))
    assert sorted(train) + sorted(valid) + sorted(test) == [f"M1_m1_{i:03d}" for i in range(10)]
    assert list(test) == ["M1_m1_008", "M1_m1_009"]  # the last 30 % of the audio (1.9 of 5.5 s)
    text = read_table(tmp_path / "data" / "M1_train" / "text")
    assert text["M1_m1_000"] == "frase número 0."
    labs = read_table(tmp_path / "data" / "M1_train" / "lab.scp")
    assert set(labs) == {u for u in train if int(u[-3:]) % 2 == 0}  # only the utterances that have a .lab
    assert read_table(tmp_path / "data" / "F1_test" / "utt2spk")["F1_f1_009"] == "F1"


@pytest.mark.parametrize("damage,message", [
    (lambda r: (r / "M1" / "m1_003.txt").unlink(), "no transcript m1_003.txt"),
    (lambda r: (r / "M1" / "m1_003.txt").write_text("\n"), "m1_003.txt:1: empty transcript"),
    (lambda r: soundfile.write(r / "M1" / "a" / "m1_003.wav", np.zeros((100, 2)), 16000), "2 channels"),
    (lambda r: (r / "F1" / "b" / "m1_000.txt").write_text("x"), None),  # a stray .txt of another stem is ignored
])
def test_bad_corpora_give_clear_errors(tmp_path, damage, message):
    make_corpus(tmp_path / "db")
    damage(tmp_path / "db")
    proc = prep(tmp_path / "db", tmp_path / "data")
    if message is None:
        assert proc.returncode == 0, proc.stderr
    else:
        assert proc.returncode != 0 and message in proc.stderr


def test_missing_corpus_dir(tmp_path):
    proc = prep(tmp_path / "nowhere", tmp_path / "data")
    assert proc.returncode != 0 and "does not exist" in proc.stderr


def test_warp_events_is_identity_on_the_same_audio():
    rng = np.random.RandomState(0)
    wave = np.concatenate([np.sin(2 * np.pi * f * np.arange(1600) / 16000) for f in (200, 600, 1200, 300)])
    wave = (wave + 0.01 * rng.randn(len(wave))).astype(np.float32)
    events = [("a", 0, 1600), ("b", 1600, 3200), ("c", 3200, 4800), ("d", 4800, 6400)]
    out = align.warp_events(events, wave, wave, 16000)
    assert [s for _, s, _ in out] == [0, 1600, 3200, 4800] and out[-1][2] == len(wave)


@needs_espeak
def test_aligner_recovers_phone_times_of_another_voice():
    """A recording by a different voice at another rate: the espeak-rendition DTW aligner must land the
    front-end phone boundaries near the true ones (known here: this 'recording' is itself synthetic)."""
    text = "El parlamento aprobará la reforma antes del verano."
    rec = synthesize(text, Voice("es", "f3", rate=130, pitch=70), sample_rate=16000)
    truth = frontend.align(frontend.analyse(text), rec.phones, 16000)
    rendition = synthesize(text, Voice("es"), sample_rate=16000)
    events = align.warp_events(rendition.phones, rendition.wave / 32768.0, rec.wave / 32768.0, 16000)
    got = frontend.align(frontend.analyse(text), events, 16000)
    # every front-end phone is in both alignments, in order; only the pauses may differ
    t_true = [s for p, s, _ in truth.segments if p.name not in ("sil", "pau")]
    t_got = [s for p, s, _ in got.segments if p.name not in ("sil", "pau")]
    assert len(t_true) == len(t_got) > 30
    err = np.abs(np.array(t_true) - np.array(t_got))
    assert np.median(err) < 0.03 and np.mean(err) < 0.05, (np.median(err), np.mean(err))
