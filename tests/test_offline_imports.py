"""Run time is offline (no model or data download, ever): importing a task must not reach for the network.
espnet2's collate_fn imports g2p_en, which calls nltk.download at import time when its data is missing."""
import os
import subprocess
import sys

import pytest

TASKS = ["local_models.jdit.task", "local_models.multisoftmax.task", "local_models.sad.task",
         "local_models.salad.task", "local_models.vqvae.task"]


@pytest.mark.parametrize("module", TASKS)
def test_task_import_makes_no_download_attempt(module, tmp_path):
    # count calls to the real nltk.download that happen during the import (ours replaces it with a no-op
    # before espnet2 is imported; a call before that replacement is a download attempt)
    code = ("import nltk, sys\n"
            "calls = []\n"
            "nltk.download = lambda *a, **k: calls.append(a) or False\n"
            f"import {module}\n"
            "print('CALLS', len(calls))\n")
    # nltk data in the user's paths would hide the attempt (g2p_en only downloads what it cannot find): point
    # NLTK_DATA and HOME at an empty directory so the test is as strict on a dev machine as on a clean CI one
    env = {**os.environ, "NLTK_DATA": str(tmp_path), "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "CALLS 0" in out.stdout, f"{module} import called nltk.download (a network access)"
    assert "[nltk_data]" not in out.stderr
