"""FS02 as distributed (tests/layout_fs02.py) through the Fearless Steps recipe's stage 1 and the features stage;
the reference and system-output formats of the FS02 scoring toolkit."""
import shutil
from pathlib import Path

import pytest
from layout_fs02 import make_fs02, rec_name
from recipe_runner import run_recipe

from local_models.common.datadir import DataDirError, read_table
from local_models.sad import fs02
from local_models.sad.labels import read_label_list, read_rttm, write_rttm

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs" / "fearless_steps" / "sad1"
needs_venv = pytest.mark.skipif(not (ROOT / "tools" / "venv" / "bin" / "python").exists(),
                                reason="needs tools/venv (make install)")
# no built-in non-speech set, no augmented copies, no eval_ood: stage 1 reads the corpus only
FAST = ("--aug-copies", "0", "--eval-ood-min", "0", "--nj", "1")


def copy_recipe(dst: Path) -> Path:
    shutil.copytree(RECIPE, dst, ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads"))
    return dst


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    """The recipe run through stage 1 (data) and stage 2 (features) on a fake FS02 release."""
    tmp = tmp_path_factory.mktemp("fs02")
    plan = make_fs02(tmp / "FS02")
    d = copy_recipe(tmp / "sad1")
    proc = run_recipe(d, "--stage", "1", "--stop-stage", "2", *FAST, extra_env={"FEARLESS_STEPS": str(tmp / "FS02")})
    return d, plan, proc


@needs_venv
def test_fs02_data_dirs_and_features(recipe):
    d, plan, proc = recipe
    for split in ("train", "dev", "eval"):
        recs = sorted(plan[split.capitalize()])
        assert sorted(read_table(d / "data" / split / "wav.scp")) == recs
        assert read_table(d / "data" / split / "reco2dur") == {r: "6.000" for r in recs}
        assert sorted(read_table(d / "dump" / split / "feats.scp")) == recs, split  # stage 2: eval too
    for split in ("train", "dev"):  # the 12-column references, speech kept exactly
        ref = read_rttm(d / "data" / split / "ref.rttm")
        assert ref == {r: [pytest.approx(iv) for iv in plan[split.capitalize()][r]] for r in ref}
        assert sorted(ref) == sorted(plan[split.capitalize()])
    ev = d / "data" / "eval"
    assert not (ev / "ref.rttm").exists() and not (ev / "ref_segments").exists()  # decode-only
    assert "eval: 2 recordings, decode only (no reference)" in proc.stderr
    assert not (d / "data" / "train_aug").exists() and not (d / "data" / "eval_ood").exists()
    assert not (d / "downloads").exists()  # no built-in non-speech set was built


@needs_venv
def test_fs02_train_recording_without_reference_is_an_error(tmp_path):
    stray = rec_name("Train", 1)
    make_fs02(tmp_path / "FS02", without_ref=(stray,))
    d = copy_recipe(tmp_path / "sad1")
    proc = run_recipe(d, "--stage", "1", "--stop-stage", "1", *FAST, check=False,
                      extra_env={"FEARLESS_STEPS": str(tmp_path / "FS02")})
    assert proc.returncode != 0
    assert f"Data/Audio/Tracks/Train/{stray}.wav" in proc.stderr and "no reference" in proc.stderr
    assert not (d / "data" / "dev").exists()  # nothing written: every split is checked first


def test_reference_formats_and_errors(tmp_path):
    plan = make_fs02(tmp_path / "FS02", per_split=1)
    rec = rec_name("Dev", 0)
    ref = tmp_path / "FS02" / "Data" / "Transcripts" / "SAD" / "Dev" / f"{rec}.txt"
    first = ref.read_text().splitlines()[0].split("\t")
    assert len(first) == 12 and first[:3] == [rec, "0", "0.0"] and first[5:] == ["manual"] + ["X"] * 6
    assert read_label_list(ref, rec) == [pytest.approx(iv) for iv in plan["Dev"][rec]]
    (tmp_path / "three.txt").write_text("0.0 1.5 NS\n1.5 2.5 S\n2.5 4.0 NS\n")
    assert read_label_list(tmp_path / "three.txt") == [(1.5, 2.5)]
    bad = tmp_path / "bad.txt"
    cases = {
        f"{rec}\t0\t0.0\t1.0\tS\tmanual\tX\n": "bad.txt:2: 7 tab-separated columns, expected 12",
        f"{rec}\t0\t1.0\tx\tS\tmanual" + "\tX" * 6 + "\n": "bad.txt:2: start/end '1.0' 'x' are not numbers",
        f"{rec}\t0\t1.0\t2.0\tmaybe\tmanual" + "\tX" * 6 + "\n": "bad.txt:2: unknown label 'maybe'",
        f"other\t0\t1.0\t2.0\tS\tmanual" + "\tX" * 6 + "\n": "bad.txt:2: names file 'other'",
        "1.0 2.0\n": "bad.txt:2: expected 12 tab-separated columns",
    }
    for line, message in cases.items():
        bad.write_text(f"{rec}\t0\t0.0\t1.0\tNS\tmanual" + "\tX" * 6 + "\n" + line)
        with pytest.raises(DataDirError, match=message):
            read_label_list(bad, rec)


def test_system_output_files_are_the_toolkit_format(tmp_path):
    """sad_fs02_output on a decoded set: one file per recording, 9 tab-separated columns, intervals tiling it."""
    from local_models.bin.sad_fs02_output import main

    dec = tmp_path / "exp" / "cnn_hmm" / "decode_eval"
    dec.mkdir(parents=True)
    durations = {"FS02_eval_001": 6.0, "FS02_eval_002": 5.5, "FS02_eval_003": 4.0}
    hyp = {"FS02_eval_001": [(0.0, 1.2), (2.5, 3.0)], "FS02_eval_002": [(1.0, 5.5)], "FS02_eval_003": []}
    (dec / "reco2dur").write_text("".join(f"{r} {v:.3f}\n" for r, v in durations.items()))
    write_rttm(dec / "hyp.rttm", hyp)
    (dec / "fs02").mkdir()
    (dec / "fs02" / "FS02_eval_999.txt").write_text("stale\n")  # of an earlier decode of this set
    assert main([str(dec)]) == 0
    files = sorted(p.name for p in (dec / "fs02").iterdir())
    assert files == [f"{r}.txt" for r in sorted(durations)]
    for rec, dur in durations.items():
        path = dec / "fs02" / f"{rec}.txt"
        for line in path.read_text().splitlines():  # the columns the toolkit's scorer reads (-t 5 -f 6 -u 7)
            f = line.split("\t")
            assert len(f) == 9 and f[:5] == ["X", "X", "X", "SAD", rec] and f[8] == "0.500000"
        rows = fs02.read_system_output(path)
        assert rows[0][0] == 0.0 and rows[-1][1] == pytest.approx(dur)
        assert all(a[2] != b[2] for a, b in zip(rows, rows[1:]))  # speech and non-speech alternate
        assert [(s, e) for s, e, kind in rows if kind == "speech"] == [pytest.approx(iv) for iv in hyp[rec]]
    assert fs02.read_system_output(dec / "fs02" / "FS02_eval_003.txt") == [(0.0, 4.0, "non-speech")]
    (tmp_path / "gap.txt").write_text("X\tX\tX\tSAD\tr\t0.000\t1.000\tspeech\t0.5\nX\tX\tX\tSAD\tr\t1.500\t2.000\tnon-speech\t0.5\n")
    with pytest.raises(DataDirError, match="gap.txt:2: interval 1.5-2.0 does not continue at 1.0"):
        fs02.read_system_output(tmp_path / "gap.txt")
    assert main([str(tmp_path / "nothing")]) == 1
