"""utils/stage_lib.sh's job pool (pool / train_pool / decode_pool): after a job fails no new one starts, and the
jobs already running finish before the recipe stops, so that a rerun never finds a training still writing its exp
dir (stage 4 trains several systems at a time)."""
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pool(tmp_path, jobs):
    # what the pool's directory holds when the recipe's shell exits (its background jobs may outlive it)
    script = ("set -euo pipefail; trap 'ls \"$OUT\" > \"$OUT.at_exit\"' EXIT; . utils/stage_lib.sh; "
              + "; ".join(f"pool_n 2 bash -c {j!r}" for j in jobs) + "; pool_wait")
    return subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "OUT": str(tmp_path)})


def test_a_failed_job_stops_new_ones_and_lets_running_ones_finish(tmp_path):
    proc = _pool(tmp_path, ['sleep 0.3; exit 3', 'sleep 1.5; touch "$OUT/sibling"', 'touch "$OUT/queued"'])
    assert proc.returncode == 1 and "a background job failed" in proc.stderr
    at_exit = Path(f"{tmp_path}.at_exit").read_text().split()
    assert "sibling" in at_exit  # finished before the pool gave up: no training left writing its exp dir
    assert "queued" not in at_exit and not (tmp_path / "queued").exists()  # not started after the failure


def test_jobs_that_succeed_all_run(tmp_path):
    proc = _pool(tmp_path, [f'touch "$OUT/{i}"' for i in range(5)])
    assert proc.returncode == 0, proc.stderr
    assert sorted(Path(f"{tmp_path}.at_exit").read_text().split()) == [str(i) for i in range(5)]
