"""utils/launch (local_models.common.launcher): Kaldi run.pl / slurm.pl equivalent."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from local_models.common import launcher

ROOT = Path(__file__).resolve().parents[1]
LAUNCH = ROOT / "utils" / "launch"

FAKE_SBATCH = r"""#!/usr/bin/env bash
# Fake sbatch: record the arguments, then run the job script locally for each array index.
printf '%s\n' "$@" > "${SBATCH_RECORD}"
array=
for a in "$@"; do
    case "$a" in --array=*) array=${a#--array=} ;; esac
done
script=${!#}
if [ -z "${array}" ]; then
    unset SLURM_ARRAY_TASK_ID
    bash "${script}"
    exit $?
fi
array=${array%%%*}
worst=0
for ((i = ${array%-*}; i <= ${array#*-}; i++)); do
    SLURM_ARRAY_TASK_ID=$i SLURM_JOB_ID=42 bash "${script}"
    rc=$?
    [ "${rc}" -gt "${worst}" ] && worst=${rc}
done
exit ${worst}
"""


def launch(*args, cwd, path_prefix=None, env_extra=None):
    path = os.environ.get("PATH", "")
    if path_prefix:
        path = f"{path_prefix}{os.pathsep}{path}"
    env = dict(os.environ, PATH=path, **(env_extra or {}))
    return subprocess.run([str(LAUNCH), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=60)


def body(log):
    """The log's lines without the launcher's '#' header/footer."""
    return [line for line in Path(log).read_text().splitlines() if not line.startswith("#")]


# ------------------------------------------------------------------ parsing


def test_parse_range_and_substitution():
    spec = launcher.parse_args(["--backend", "local", "--mem=4G", "JOB=2:5", "exp/log/f.JOB.log",
                                "python", "-m", "x", "--part", "JOB", "data/split4/JOB", "a b"])
    assert (spec.var, spec.start, spec.end, spec.mem) == ("JOB", 2, 5, "4G")
    assert spec.indices == [2, 3, 4, 5]
    assert spec.log_for(3) == "exp/log/f.3.log"
    assert spec.command_for(3) == "python -m x --part 3 data/split4/3 'a b'"
    single = launcher.parse_args(["exp/log/train.log", "echo hi | cat"])
    assert single.var is None and single.indices == [1] and single.command == "echo hi | cat"
    assert launcher.parse_args(["N=7", "l.N.log", "true"]).indices == [7]


@pytest.mark.parametrize("argv, needle", [
    (["JOB=3:1", "l.JOB.log", "true"], "end 1 < start 3"),
    (["JOB=a:b", "l.JOB.log", "true"], "bad job range"),
    (["JOB=1:x", "l.JOB.log", "true"], "bad job range"),
    (["JOB=1:2", "l.JOB.log"], "missing COMMAND"),
    (["JOB=1:2"], "missing LOGFILE"),
    ([], "missing LOGFILE"),
    (["--bogus", "1", "l.log", "true"], "unknown option --bogus"),
    (["--backend", "pbs", "l.log", "true"], "--backend"),
    (["--max-jobs-run", "0", "l.log", "true"], "--max-jobs-run"),
    (["JOB=1:2", "same.log", "true"], "does not contain JOB"),
])
def test_usage_errors(tmp_path, argv, needle):
    r = launch(*argv, cwd=tmp_path)
    assert r.returncode == 1
    assert needle in r.stderr, r.stderr
    assert r.stderr.startswith("launch: ")


def test_help(tmp_path):
    r = launch("--help", cwd=tmp_path)
    assert r.returncode == 0
    assert "JOB=a:b" in r.stdout and "--backend" in r.stdout and "--max-jobs-run" in r.stdout


# ------------------------------------------------------------------ local backend


def test_local_array_logs(tmp_path):
    r = launch("--backend", "local", "JOB=1:4", "exp/log/feats.JOB.log",
               "echo", "part", "JOB", "data/split4/JOB", "two words", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for i in range(1, 5):
        log = tmp_path / f"exp/log/feats.{i}.log"
        text = log.read_text()
        lines = text.splitlines()
        assert lines[0] == f"# echo part {i} data/split4/{i} 'two words'"
        assert lines[1].startswith("# Started at ")
        assert re.match(r"# Accounting: time=\d+ threads=1$", lines[-2])
        assert re.match(r"# Ended \(code 0\) at ", lines[-1])
        assert body(log) == [f"part {i} data/split4/{i} two words"]
    assert not (tmp_path / "exp/log/feats.JOB.log").exists()
    assert not (tmp_path / "exp/log/feats.5.log").exists()


def test_local_single_job_with_pipe_and_stderr(tmp_path):
    r = launch("exp/log/train.log", "seq 5 | sort -r | head -2; echo oops >&2; echo \"q'd\"", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    log = tmp_path / "exp/log/train.log"
    assert body(log) == ["5", "4", "oops", "q'd"]


def test_local_other_variable_name(tmp_path):
    r = launch("N=1:2", "log/out.N.txt", "echo N-N", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert body(tmp_path / "log/out.2.txt") == ["2-2"]


def _intervals(stamp_dir, n):
    out = []
    for i in range(1, n + 1):
        start, end = (float(x) for x in (stamp_dir / f"{i}.stamp").read_text().split())
        out.append((start, end))
    return out


def _max_overlap(intervals):
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals], key=lambda x: (x[0], x[1]))
    cur = best = 0
    for _, d in events:
        cur += d
        best = max(best, cur)
    return best


SLEEP_JOB = "s=$(date +%s.%N); sleep 0.4; e=$(date +%s.%N); echo \"$s $e\" > stamps/JOB.stamp"


def test_local_parallel_limited_by_max_jobs_run(tmp_path):
    (tmp_path / "stamps").mkdir()
    r = launch("--max-jobs-run", "2", "JOB=1:6", "log/s.JOB.log", SLEEP_JOB, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    iv = _intervals(tmp_path / "stamps", 6)
    assert _max_overlap(iv) == 2  # jobs overlap, but never more than 2 at once


def test_local_runs_serially_with_one_slot(tmp_path):
    (tmp_path / "stamps").mkdir()
    r = launch("--max-jobs-run=1", "JOB=1:3", "log/s.JOB.log", SLEEP_JOB, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert _max_overlap(_intervals(tmp_path / "stamps", 3)) == 1


def test_local_failure_reported(tmp_path):
    r = launch("JOB=1:4", "exp/log/feats.JOB.log", "echo JOB; [ JOB -ne 3 ] || exit 7", cwd=tmp_path)
    assert r.returncode == 1
    assert "1 / 4 failed" in r.stderr
    assert "exp/log/feats.3.log" in r.stderr
    assert "feats.2.log" not in r.stderr
    assert "# Ended (code 7)" in (tmp_path / "exp/log/feats.3.log").read_text()
    for i in (1, 2, 4):  # the other jobs still ran to completion
        assert "# Ended (code 0)" in (tmp_path / f"exp/log/feats.{i}.log").read_text()


def test_local_single_job_failure(tmp_path):
    r = launch("exp/log/train.log", "false", cwd=tmp_path)
    assert r.returncode == 1
    assert "1 / 1 failed" in r.stderr and "exp/log/train.log" in r.stderr


def test_main_in_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert launcher.main(["JOB=1:2", "l/x.JOB.log", "echo", "JOB"]) == 0
    assert body(tmp_path / "l/x.2.log") == ["2"]
    from local_models.bin import launch as launch_bin
    assert launch_bin.main(["l/y.log", "exit 3"]) == 1


# ------------------------------------------------------------------ slurm backend


@pytest.fixture
def fake_sbatch(tmp_path):
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    sb = bindir / "sbatch"
    sb.write_text(FAKE_SBATCH)
    sb.chmod(0o755)
    record = tmp_path / "sbatch_args.txt"
    return bindir, record


def test_slurm_array_submission(tmp_path, fake_sbatch):
    bindir, record = fake_sbatch
    r = launch("--backend", "slurm", "--mem", "4G", "--gpu", "1", "--time", "24:00:00", "--num-threads", "2",
               "--partition", "gpu", "--sbatch-opts", "--qos=high --account proj",
               "JOB=1:3", "exp/log/feats.JOB.log", "echo", "part", "JOB", "|", "tr", "a-z", "A-Z",
               cwd=tmp_path, path_prefix=bindir, env_extra={"SBATCH_RECORD": str(record)})
    assert r.returncode == 0, r.stderr
    args = record.read_text().splitlines()
    assert args[0] == "--wait"
    assert "--array=1-3" in args
    i = args.index("--mem")
    assert args[i + 1] == "4G"
    assert "--gres=gpu:1" in args
    assert args[args.index("--time") + 1] == "24:00:00"
    assert args[args.index("--cpus-per-task") + 1] == "2"
    assert args[args.index("--partition") + 1] == "gpu"
    assert args[args.index("--job-name") + 1] == "feats"
    assert args[args.index("--output") + 1] == "exp/log/q/feats-%a.out"
    assert "--qos=high" in args and args[args.index("--account") + 1] == "proj"
    assert args[-1] == "exp/log/q/feats.sh"
    assert (tmp_path / "exp/log/q/feats.sh").is_file()
    for i in range(1, 4):
        log = tmp_path / f"exp/log/feats.{i}.log"
        lines = log.read_text().splitlines()
        assert lines[0] == f"# echo part {i} | tr a-z A-Z"
        assert lines[1].startswith("# Started at ")
        assert re.match(r"# Accounting: time=\d+ threads=2$", lines[-2])
        assert lines[-1].startswith("# Ended (code 0) at ")
        assert body(log) == [f"PART {i}"]


def test_slurm_single_job_and_throttle(tmp_path, fake_sbatch):
    bindir, record = fake_sbatch
    env = {"SBATCH_RECORD": str(record)}
    r = launch("--backend", "slurm", "exp/log/train.log", "echo trained", cwd=tmp_path, path_prefix=bindir,
               env_extra=env)
    assert r.returncode == 0, r.stderr
    args = record.read_text().splitlines()
    assert not any(a.startswith("--array") for a in args)
    assert "--gres=gpu:0" not in args and "--mem" not in args
    assert body(tmp_path / "exp/log/train.log") == ["trained"]
    r = launch("--backend", "slurm", "--max-jobs-run", "2", "N=2:4", "l/x.N.log", "echo N", cwd=tmp_path,
               path_prefix=bindir, env_extra=env)
    assert r.returncode == 0, r.stderr
    assert "--array=2-4%2" in record.read_text().splitlines()
    assert body(tmp_path / "l/x.3.log") == ["3"]


def test_slurm_failure_propagates(tmp_path, fake_sbatch):
    bindir, record = fake_sbatch
    r = launch("--backend", "slurm", "--mem=4G", "JOB=1:3", "exp/log/f.JOB.log", "[ JOB -ne 2 ] || exit 5",
               cwd=tmp_path, path_prefix=bindir, env_extra={"SBATCH_RECORD": str(record)})
    assert r.returncode != 0
    assert "1 / 3 failed" in r.stderr and "exp/log/f.2.log" in r.stderr
    assert "# Ended (code 5)" in (tmp_path / "exp/log/f.2.log").read_text()


def test_slurm_without_sbatch(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    # a PATH with bash and python but certainly no sbatch
    for tool in ("bash", "dirname", Path(sys.executable).name):
        src = subprocess.run(["bash", "-c", f"command -v {tool}"], capture_output=True, text=True).stdout.strip()
        if src:
            (bindir / tool).symlink_to(src)
    (bindir / "python").unlink(missing_ok=True)
    (bindir / "python").symlink_to(sys.executable)
    env = dict(os.environ, PATH=str(bindir))
    r = subprocess.run(["bash", str(LAUNCH), "--backend", "slurm", "l.log", "true"], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=60)
    assert r.returncode == 1
    assert "sbatch" in r.stderr and "not on PATH" in r.stderr
    assert not (tmp_path / "l.log").exists()
