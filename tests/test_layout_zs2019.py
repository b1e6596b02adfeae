"""egs/zerospeech2019/unit1 on the published ZeroSpeech 2019 layout (tests/layout_zs2019.py): run.sh stages 1-2 with
the evaluation package's item file and bitrate list, the 2020 release's nesting, and ABX from an item file in the
official format on features whose answer is known."""
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from layout_zs2019 import ITEM_HEADER, make_zs2019
from recipe_runner import run_recipe

from local_models.bin import vqvae_abx
from local_models.common.datadir import read_table
from local_models.vqvae.abx import abx_error
from local_models.vqvae.featio import write_npy_dir
from local_models.vqvae.items import read_item_file

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "egs" / "zerospeech2019" / "unit1"


def copy_recipe(dst: Path) -> Path:
    shutil.copytree(RECIPE, dst, ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads", "RESULTS.md"))
    return dst


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    base = tmp_path_factory.mktemp("zs2019layout")
    corpus = make_zs2019(base / "corpus", bitrate_filelist=True, item_file=True)
    dst = copy_recipe(base / "unit1")
    run_recipe(dst, "--stage", "1", "--stop-stage", "2", "--nj", "1", "--abx-item", str(corpus["item"]),
               "--bitrate-filelist", str(corpus["bitrate_filelist"]),
               extra_env={"ZEROSPEECH2019": str(corpus["corpus"])})
    return dst, corpus


def test_stages_1_2_read_the_published_layout(recipe):
    dst, corpus = recipe
    ids = corpus["ids"]
    assert sorted(read_table(dst / "data" / "train" / "wav.scp")) == sorted(ids["unit"] + ids["voice"])
    assert sorted(read_table(dst / "data" / "voice" / "wav.scp")) == sorted(ids["voice"])
    assert set(read_table(dst / "data" / "voice" / "utt2spk").values()) == {"V001", "V002"}
    assert sorted(read_table(dst / "data" / "test" / "wav.scp")) == sorted(ids["test"])
    # the official bitrate list picks the bitrate's files; synthesis.txt gives each test file its voice
    assert (dst / "data" / "test" / "bitrate_list").read_text().split() == sorted(ids["test"][::2])
    assert read_table(dst / "data" / "test" / "synthesis_list") == dict(
        line.removeprefix("test/").split() for line in corpus["synthesis"])
    items = read_item_file(dst / "data" / "test" / "abx.item")
    assert len(items) == 3 * len(ids["test"]) and {it.file for it in items} == set(ids["test"])
    for feat in ("mfcc", "logmel"):
        for x in ("train", "voice", "test"):
            assert len((dst / "dump" / feat / x / "feats.scp").read_text().splitlines()) == len(
                read_table(dst / "data" / x / "wav.scp"))
    assert (dst / "dump" / "spec" / "voice" / "feats.scp").exists() and (dst / "dump" / "train_utt2sid").exists()


def test_a_2020_release_root_is_pointed_at_its_2019_dir(recipe, tmp_path):
    dst, _ = recipe
    corpus = make_zs2019(tmp_path / "zr2020", per_speaker=1, style="2020")
    proc = run_recipe(dst, "--stage", "1", "--stop-stage", "1", check=False,
                      extra_env={"ZEROSPEECH2019": str(tmp_path / "zr2020")})
    assert proc.returncode != 0
    assert f"point ZEROSPEECH2019 at {corpus['corpus']}" in proc.stderr + proc.stdout


def test_an_item_of_an_unknown_file_names_its_line(recipe, tmp_path):
    dst, corpus = recipe
    bad = tmp_path / "bad.item"
    lines = corpus["item"].read_text().splitlines()
    lines[3] = "S999_0000000001" + lines[3][lines[3].index(" "):]
    bad.write_text("\n".join(lines) + "\n")
    proc = run_recipe(dst, "--stage", "1", "--stop-stage", "1", "--abx-item", str(bad), check=False,
                      extra_env={"ZEROSPEECH2019": str(corpus["corpus"])})
    assert proc.returncode != 0
    assert f"{bad}:4" in proc.stderr and "S999_0000000001" in proc.stderr
    # the failed run left the data dirs of the good one
    assert read_item_file(dst / "data" / "test" / "abx.item")[0].file in corpus["ids"]["test"]


def test_an_abxpy_task_file_is_refused_with_the_way_out(recipe, tmp_path):
    dst, corpus = recipe
    task = tmp_path / "byCtxt_acSpkr.abx"
    task.write_bytes(b"\x89HDF\r\n\x1a\n")
    proc = run_recipe(dst, "--stage", "1", "--stop-stage", "1", "--abx-item", str(task), check=False,
                      extra_env={"ZEROSPEECH2019": str(corpus["corpus"])})
    assert proc.returncode != 0 and ".item file" in proc.stderr


# ----------------------------------------------------------------------------- ABX from an official item file
def item_file_and_features(path: Path, separated: bool, seed: int = 0):
    """An item file in the official format over 4 speakers x 6 files (phones 'a' / 'i' in context b_b, 0.1 s
    each), and 10 ms features: class-specific frames (separated) or the same frames shuffled across classes."""
    rng = np.random.default_rng(seed)
    centre = {"a": np.array([1.0, 0.0, 0.0, 0.0]), "i": np.array([0.0, 1.0, 0.0, 0.0])}
    rows, feats = [ITEM_HEADER], {}
    for spk in ("S101", "S102", "S103", "S104"):
        for n in range(6):
            utt, phone = f"{spk}_{n:010d}", "ai"[n % 2]
            frames = centre[phone] + 0.05 * rng.standard_normal((30, 4))
            feats[utt] = frames
            rows.append(f"{utt} 0.0000 0.3000 {phone} b b {spk}")
    if not separated:  # the same frames under random labels: nothing tells a from i
        keys = list(feats)
        values = [feats[k] for k in rng.permutation(keys)]
        feats = dict(zip(keys, values))
    path.write_text("\n".join(rows) + "\n")
    return read_item_file(path), feats


@pytest.mark.parametrize("separated, low, high", [(True, 0.0, 1.0), (False, 25.0, 75.0)])
def test_abx_from_an_official_item_file(tmp_path, separated, low, high):
    """The recipe's scorer (stage 6's vqvae_abx) on the item file: ~0 % for separated classes, ~50 % shuffled."""
    item = tmp_path / "by-context-across-speakers.item"
    items, feats = item_file_and_features(item, separated)
    write_npy_dir(feats, tmp_path / "feats")
    assert vqvae_abx.main(["--feats", str(tmp_path / "feats"), "--items", str(item), "--frame-shift", "0.01",
                           "--json", str(tmp_path / "abx.json")]) == 0
    result = json.loads((tmp_path / "abx.json").read_text())
    assert low <= result["abx_error"] <= high, result["abx_error"]
    assert result["n_items_used"] == len(items) == 24 and result["n_speakers"] == 4
    assert result["abx_error"] == pytest.approx(abx_error(feats, items, frame_shift=0.01).error)
