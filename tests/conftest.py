"""Test tiers: `make test-fast` runs what is not marked slow (unit tests, for the edit loop); `make test` runs all.

A test is slow when it runs a recipe or trains through ESPnet: it uses a module's recipe-run fixture (`recipe`,
`check`), or its module is one whole-pipeline check, or it is named below (each measured over 10 s on 2 cores).
"""
import os

import pytest

# One thread per process (inherited by every run.sh, ESPnet and benchmark subprocess): the two xdist workers share
# 2 cores, and OpenMP / BLAS / numba threads of two processes contending for them spun more than they computed.
# Measured on the full suite (2 cores): 30:28 -> 22:25 wall, 51 -> 39 CPU-minutes.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

SLOW_FIXTURES = {"recipe", "check"}  # module-scoped: a whole run.sh / gpu_check.py run, shared by the module's tests
SLOW_MODULES = {"test_paper_configs.py", "test_recipe_devices.py"}
# The longest modules first (measured, 2 cores): with `--dist loadfile` each file goes whole to the next free worker,
# so a long module started last is a tail that one worker runs alone while the other idles. The real-corpus smoke
# runs (about a minute each) are left in file order among the unit tests. (An order listing them too, re-measured,
# took 16:14 and 16:29 against 15:18 and 15:58 for this one on 2026-11-29: within this shared machine's noise.)
LONGEST_FIRST = ("test_gpu_check.py", "test_recipe_sad.py", "test_recipe_tcstar.py", "test_recipe_indic.py",
                 "test_recipe_kss.py", "test_recipe_zerospeech.py", "test_offline_imports.py", "test_kss_data.py",
                 "test_jdit_model.py", "test_sad_neural.py", "test_paper_configs.py", "test_recipe_template.py")
SLOW_TESTS = {
    "test_recipe_kss.py::test_smoke_whole_recipe_one_epoch",
    "test_recipe_kss.py::test_pwg_trains_resumes_and_vocodes",
    "test_recipe_kss.py::test_gt_mel_griffin_lim_round_trip",
    "test_sad_neural.py::test_espnet_training_resume_and_detector",
    "test_jdit_model.py::test_train_resume_and_text2speech_round_trip",
    "test_recipe_template.py::test_run_twice_gives_identical_outputs",
    "test_kss_data.py::test_smoke_stages_1_to_3_on_a_tiny_mini_corpus",
    "test_kss_data.py::test_real_corpus_layout_through_the_recipe",
    "test_offline_imports.py::test_task_import_makes_no_download_attempt",
    "test_zs2019_data.py::test_mini_corpus",
    "test_gpu_safety.py::test_salad_synthesis_runs_on_the_models_device",
    "test_sad_systems.py::test_sad_decode_names_missing_audio",
}


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: runs a recipe or trains a model (left out by `make test-fast`)")


def pytest_collection_modifyitems(config, items):
    collected, modules = set(), set()
    for item in items:
        module = item.nodeid.split("::")[0].rsplit("/", 1)[-1]
        name = f"{module}::{item.originalname}"
        collected.add(name), modules.add(module)
        if module in SLOW_MODULES or name in SLOW_TESTS or SLOW_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.slow)
    rank = {m: i for i, m in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda it: rank.get(it.nodeid.split("::")[0].rsplit("/", 1)[-1], len(rank)))  # stable
    # a renamed test would silently leave the list: every name of a collected module must still exist
    missing = {n for n in SLOW_TESTS if n.split("::")[0] in modules} - collected
    if missing and not config.getoption("keyword"):
        raise pytest.UsageError(f"tests/conftest.py SLOW_TESTS names tests that do not exist: {sorted(missing)}")
