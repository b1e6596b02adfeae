"""validate_data_dir: a valid dir passes; each defect is reported with the right file and line."""
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile

from local_models.common.validate import validate_data_dir

ROOT = Path(__file__).resolve().parents[1]
UTTS = ["spkA-u1", "spkA-u2", "spkB-u1"]


def write(path: Path, text: str, mode="w"):
    if mode == "wb":
        path.write_bytes(text)
    else:
        path.write_text(text)


@pytest.fixture
def valid_dir(tmp_path):
    """3 utterances, 2 speakers, real 16 kHz wavs, text, durations, feats-free."""
    d = tmp_path / "data"
    d.mkdir()
    for u in UTTS:
        soundfile.write(tmp_path / f"{u}.wav", np.zeros(1600, dtype=np.int16), 16000)
    write(d / "wav.scp", "".join(f"{u} {tmp_path / (u + '.wav')}\n" for u in UTTS))
    write(d / "utt2spk", "".join(f"{u} {u.split('-')[0]}\n" for u in UTTS))
    write(d / "spk2utt", "spkA spkA-u1 spkA-u2\nspkB spkB-u1\n")
    write(d / "text", "spkA-u1 hello world\nspkA-u2 good morning\nspkB-u1 yes\n")
    write(d / "utt2num_frames", "spkA-u1 10\nspkA-u2 10\nspkB-u1 10\n")
    write(d / "durations", "spkA-u1 4 6\nspkA-u2 5 5\nspkB-u1 10\n")
    write(d / "utt2dur", "spkA-u1 0.1\nspkA-u2 0.1\nspkB-u1 0.1\n")
    write(d / "utt2lid", "spkA-u1 en\nspkA-u2 en\nspkB-u1 hi\n")
    return d


@pytest.fixture
def segmented_dir(tmp_path):
    """Two utterances cut out of one recording."""
    d = tmp_path / "seg"
    d.mkdir()
    soundfile.write(tmp_path / "rec1.wav", np.zeros(16000, dtype=np.int16), 16000)
    write(d / "wav.scp", f"rec1 {tmp_path / 'rec1.wav'}\n")
    write(d / "segments", "spkA-s1 rec1 0.00 0.40\nspkA-s2 rec1 0.50 0.90\n")
    write(d / "utt2spk", "spkA-s1 spkA\nspkA-s2 spkA\n")
    write(d / "spk2utt", "spkA spkA-s1 spkA-s2\n")
    write(d / "text", "spkA-s1 a\nspkA-s2 b\n")
    return d


def replace_line(path: Path, lineno: int, new: str):
    lines = path.read_text().splitlines(keepends=True)
    lines[lineno - 1] = new
    path.write_text("".join(lines))


def test_valid_dirs_pass(valid_dir, segmented_dir):
    assert validate_data_dir(valid_dir, sample_rate=16000) == []
    assert validate_data_dir(segmented_dir) == []


# (name, mutate(dir), expected file, expected line or None, words in the reason)
DEFECTS = [
    ("unsorted", lambda d: write(d / "utt2spk", "spkA-u2 spkA\nspkA-u1 spkA\nspkB-u1 spkB\n"), "utt2spk", 2, "not sorted"),
    ("duplicate key", lambda d: replace_line(d / "text", 3, "spkA-u2 again\n"), "text", 3, "duplicate key"),
    ("missing spk2utt", lambda d: (d / "spk2utt").unlink(), "spk2utt", None, "missing"),
    ("missing wav", lambda d: replace_line(d / "wav.scp", 2, "spkA-u2 /nonexistent/x.wav\n"), "wav.scp", 2, "does not exist"),
    ("not prefixed by speaker", lambda d: (replace_line(d / "utt2spk", 3, "spkB-u1 spkC\n"),
                                           write(d / "spk2utt", "spkA spkA-u1 spkA-u2\nspkC spkB-u1\n")),
     "utt2spk", 3, "not prefixed"),
    ("empty transcript", lambda d: replace_line(d / "text", 2, "spkA-u2\n"), "text", 2, "empty transcript"),
    ("text key unknown", lambda d: replace_line(d / "text", 3, "spkB-u9 yes\n"), "text", 3, "not in utt2spk"),
    ("spk2utt disagrees", lambda d: write(d / "spk2utt", "spkA spkA-u1\nspkB spkA-u2 spkB-u1\n"), "spk2utt", 2, "disagrees"),
    ("spk2utt unsorted utts", lambda d: write(d / "spk2utt", "spkA spkA-u2 spkA-u1\nspkB spkB-u1\n"), "spk2utt", 1, "not sorted"),
    ("windows line ending", lambda d: replace_line(d / "text", 1, "spkA-u1 hello world\r\n"), "text", 1, "Windows"),
    ("empty line", lambda d: write(d / "utt2lid", "spkA-u1 en\n\nspkA-u2 en\nspkB-u1 hi\n"), "utt2lid", 2, "empty line"),
    ("bad utf-8", lambda d: write(d / "text", b"spkA-u1 a\nspkA-u2 \xff\xfe\nspkB-u1 c\n", "wb"), "text", 2, "UTF-8"),
    ("two speakers", lambda d: replace_line(d / "utt2spk", 1, "spkA-u1 spkA spkB\n"), "utt2spk", 1, "one speaker"),
    ("utt2dur not a number", lambda d: replace_line(d / "utt2dur", 2, "spkA-u2 abc\n"), "utt2dur", 2, "not a number"),
    ("num_frames not positive", lambda d: replace_line(d / "utt2num_frames", 3, "spkB-u1 0\n"), "utt2num_frames", 3, "non-positive"),
    ("durations sum", lambda d: replace_line(d / "durations", 1, "spkA-u1 4 7\n"), "durations", 1, "sum to 11"),
    ("durations not int", lambda d: replace_line(d / "durations", 2, "spkA-u2 5 x\n"), "durations", 2, "integers"),
    ("two languages", lambda d: replace_line(d / "utt2lid", 3, "spkB-u1 hi en\n"), "utt2lid", 3, "one label"),
    ("feats bad format", lambda d: write(d / "feats.scp", "spkA-u1 x.ark\nspkA-u2 x.ark:1\nspkB-u1 x.ark:2\n"), "feats.scp", 1, "<ark>:<offset>"),
    ("feats ark missing", lambda d: write(d / "feats.scp", "spkA-u1 /no/x.ark:1\nspkA-u2 /no/x.ark:9\nspkB-u1 /no/x.ark:20\n"), "feats.scp", 1, "does not exist"),
    ("pipe command missing", lambda d: replace_line(d / "wav.scp", 3, "spkB-u1 no-such-prog-xyz in.wav |\n"), "wav.scp", 3, "not on PATH"),
    ("wav.scp missing key", lambda d: write(d / "wav.scp", (d / "wav.scp").read_text().splitlines(True)[0]), "wav.scp", None, "missing here"),
]


@pytest.mark.parametrize("name,mutate,fname,line,words", DEFECTS, ids=[d[0] for d in DEFECTS])
def test_each_defect_named_with_file_and_line(valid_dir, name, mutate, fname, line, words):
    mutate(valid_dir)
    defects = validate_data_dir(valid_dir)
    hits = [d for d in defects if d.file == str(valid_dir / fname) and d.line == line and words in d.reason]
    assert hits, f"expected {fname}:{line} '{words}', got: {[str(d) for d in defects]}"


def test_wrong_sample_rate(valid_dir, tmp_path):
    soundfile.write(tmp_path / "spkA-u2.wav", np.zeros(800, dtype=np.int16), 8000)
    defects = validate_data_dir(valid_dir, sample_rate=16000)
    assert [str(d) for d in defects] == [f"{valid_dir / 'wav.scp'}:2: sample rate of 'spkA-u2' is 8000 Hz, expected 16000 Hz"]


SEG_DEFECTS = [
    ("end before start", lambda d: replace_line(d / "segments", 2, "spkA-s2 rec1 0.90 0.50\n"), "segments", 2, "not after start"),
    ("three fields", lambda d: replace_line(d / "segments", 1, "spkA-s1 rec1 0.40\n"), "segments", 1, "expected 4 fields"),
    ("not numeric", lambda d: replace_line(d / "segments", 1, "spkA-s1 rec1 zero 0.40\n"), "segments", 1, "not numbers"),
    ("unknown recording", lambda d: replace_line(d / "segments", 2, "spkA-s2 rec9 0.50 0.90\n"), "segments", 2, "not in wav.scp"),
    ("unused recording", lambda d: write(d / "wav.scp", (d / "wav.scp").read_text() + "rec2 /x.wav\n"), "wav.scp", 2, "used by no segment"),
]


@pytest.mark.parametrize("name,mutate,fname,line,words", SEG_DEFECTS, ids=[d[0] for d in SEG_DEFECTS])
def test_segment_defects(segmented_dir, name, mutate, fname, line, words):
    mutate(segmented_dir)
    defects = validate_data_dir(segmented_dir)
    assert any(d.file == str(segmented_dir / fname) and d.line == line and words in d.reason for d in defects), \
        [str(d) for d in defects]


def test_skip_options(valid_dir):
    (valid_dir / "text").unlink()
    replace_line(valid_dir / "wav.scp", 1, "spkA-u1 /nonexistent.wav\n")
    assert validate_data_dir(valid_dir)  # text missing + wav missing
    assert validate_data_dir(valid_dir, check_text=False, check_wav=False) == []


def test_cli_reports_all_acceptance_defects(tmp_path):
    """The acceptance case: unsorted, duplicate, no spk2utt, end < start, missing wav -> each named."""
    d = tmp_path / "bad"
    d.mkdir()
    write(d / "wav.scp", "recB /nope/b.wav\nrecA /nope/a.wav\n")
    write(d / "segments", "s1-a recA 0.0 1.0\ns1-b recB 2.0 1.5\ns1-b recB 3.0 4.0\n")
    write(d / "utt2spk", "s1-a s1\ns1-b s1\n")
    write(d / "text", "s1-a x\ns1-b y\n")
    proc = subprocess.run([str(ROOT / "utils" / "validate_data_dir"), str(d)], capture_output=True, text=True)
    assert proc.returncode == 1
    err = proc.stderr
    for expected in (f"{d}/wav.scp:2: not sorted", f"{d}/segments:3: duplicate key 's1-b'", f"{d}/spk2utt: required file is missing",
                     f"{d}/segments:2: end time 1.5 is not after start time 2.0", f"{d}/wav.scp:1: audio file of 'recB' does not exist"):
        assert expected in err, err


def test_cli_help():
    proc = subprocess.run([str(ROOT / "utils" / "validate_data_dir"), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "--no-text" in proc.stdout and "--no-feats" in proc.stdout
