"""Job launcher: the Kaldi run.pl / slurm.pl equivalent used through cmd.sh.

    launch [options] [JOB=a:b] LOGFILE COMMAND [ARGS...]

* ``JOB=a:b`` (any identifier, e.g. ``N=1:8``; ``JOB=3`` means ``JOB=3:3``) makes an
  array job: every occurrence of the name in LOGFILE and in the command (plain
  substring replacement, as Kaldi does: ``split4/JOB``, ``feats.JOB.log``) is
  replaced by the index.
* The command runs through ``bash -c``. A single COMMAND argument is used verbatim
  (so ``"a | b > c"`` works); several arguments are joined Kaldi-style: an argument
  without whitespace or quote characters is passed raw, any other is shell-quoted.
* Output (stdout+stderr) goes to the per-job log, which starts with ``# <command>``
  / ``# Started at <date>`` and ends with ``# Accounting: time=<s> threads=<n>`` /
  ``# Ended (code N) at <date>``.
* ``--backend local`` runs the jobs here, at most ``--max-jobs-run`` at once (default:
  number of CPUs), and exits 0 if all succeed, else 1 naming the failed logs.
* ``--backend slurm`` writes ``<logdir>/q/<name>.sh`` and submits it with
  ``sbatch --wait`` (an array job for ``JOB=a:b``; a single job is submitted
  without ``--array``); it exits with sbatch's status (the highest job status).
  Resource options (``--mem``, ``--gpu``, ...) are accepted and ignored by the local
  backend, so the same cmd.sh line works for both.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

PROG = "launch"

USAGE = f"""\
usage: {PROG} [options] [JOB=a:b] LOGFILE COMMAND [ARGS...]

Run COMMAND (through bash -c) with its stdout+stderr in LOGFILE, Kaldi run.pl/slurm.pl style.
With JOB=a:b (any variable name, e.g. N=1:8; JOB=3 means 3:3) it runs one job per index
a..b, replacing every occurrence of the name in LOGFILE and COMMAND by the index.
A single COMMAND argument is used verbatim, so pipes work: {PROG} log "a | b > out".

examples:
  {PROG} --backend local JOB=1:4 exp/log/feats.JOB.log python -m x --part JOB data/split4/JOB
  {PROG} --backend slurm --mem 8G --gpu 1 --time 24:00:00 exp/log/train.log python -m y

options (must come before JOB=a:b / LOGFILE; later ones override earlier ones):
  --backend {{local,slurm}}  where to run (default: local)
  --max-jobs-run N         local: most jobs at once (default: number of CPUs);
                           slurm: array throttle (--array=a-b%N), unset by default
  --num-threads N          threads per job (slurm: --cpus-per-task N; both: accounting line)
  --mem M                  slurm: --mem M (e.g. 4G)                  [ignored by local]
  --gpu G                  slurm: --gres=gpu:G when G > 0            [ignored by local]
  --partition P            slurm: --partition P                     [ignored by local]
  --time T                 slurm: --time T (e.g. 24:00:00)          [ignored by local]
  --sbatch-opts "..."      slurm: extra sbatch arguments (shell-split) [ignored by local]
  --job-name NAME          slurm: job name (default: from LOGFILE, e.g. feats for feats.JOB.log)
  -h, --help               show this message

exit status: 0 if every job succeeded; local: 1 otherwise (failed logs named on stderr);
slurm: sbatch's status (the highest job exit status). Slurm job scripts are written to
<logdir>/q/<name>.sh, Slurm's own output to <logdir>/q/<name>[-<index>].out; the job
inherits the submitting environment (sbatch's default --export=ALL) and working directory.
"""

_OPTS = {
    "--backend": "backend",
    "--max-jobs-run": "max_jobs_run",
    "--num-threads": "num_threads",
    "--mem": "mem",
    "--gpu": "gpu",
    "--partition": "partition",
    "--time": "time",
    "--sbatch-opts": "sbatch_opts",
    "--job-name": "job_name",
}

_RANGE_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


class LaunchError(Exception):
    """A usage error: reported as `launch: <message>` with exit status 1."""


@dataclass
class Spec:
    backend: str = "local"
    max_jobs_run: int | None = None
    num_threads: int = 1
    mem: str | None = None
    gpu: int = 0
    partition: str | None = None
    time: str | None = None
    sbatch_opts: list = field(default_factory=list)
    job_name: str | None = None
    var: str | None = None
    start: int = 1
    end: int = 1
    log: str = ""
    command: str = ""

    @property
    def indices(self):
        return list(range(self.start, self.end + 1))

    def subst(self, text, idx):
        return text.replace(self.var, str(idx)) if self.var else text

    def log_for(self, idx):
        return self.subst(self.log, idx)

    def command_for(self, idx):
        return self.subst(self.command, idx)


def _positive_int(opt, value, minimum=1):
    try:
        n = int(value)
    except ValueError:
        raise LaunchError(f"{opt} expects an integer, got {value!r}") from None
    if n < minimum:
        raise LaunchError(f"{opt} must be >= {minimum}, got {n}")
    return n


def join_command(args):
    """One argument: verbatim shell text. Several: Kaldi-style join (raw unless it needs quoting)."""
    if len(args) == 1:
        return args[0]
    out = []
    for a in args:
        if a and not re.search(r"[\s'\"\\]", a):
            out.append(a)
        else:
            out.append(shlex.quote(a))
    return " ".join(out)


def parse_args(argv):
    """Parse the launcher's command line into a Spec; raises LaunchError, or SystemExit(0) for --help."""
    spec = Spec()
    args = list(argv)
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-h", "--help"):
            print(USAGE, end="")
            raise SystemExit(0)
        if a == "--":
            i += 1
            break
        if not a.startswith("--"):
            break
        if "=" in a:
            opt, value = a.split("=", 1)
            i += 1
        else:
            opt = a
            if opt in _OPTS:
                if i + 1 >= len(args):
                    raise LaunchError(f"option {opt} requires a value")
                value = args[i + 1]
            i += 2
        if opt not in _OPTS:
            raise LaunchError(f"unknown option {opt} (see '{PROG} --help')")
        name = _OPTS[opt]
        if name == "backend":
            if value not in ("local", "slurm"):
                raise LaunchError(f"--backend must be local or slurm, got {value!r}")
            spec.backend = value
        elif name in ("max_jobs_run", "num_threads"):
            setattr(spec, name, _positive_int(opt, value))
        elif name == "gpu":
            spec.gpu = _positive_int(opt, value, minimum=0)
        elif name == "sbatch_opts":
            spec.sbatch_opts = shlex.split(value)
        else:
            if value == "":
                raise LaunchError(f"option {opt} requires a non-empty value")
            setattr(spec, name, value)
    rest = args[i:]
    if rest:
        m = _RANGE_RE.match(rest[0])
        if m and "/" not in rest[0]:
            var, rng = m.group(1), m.group(2)
            m2 = re.fullmatch(r"(\d+)(?::(\d+))?", rng)
            if not m2:
                raise LaunchError(
                    f"bad job range {rest[0]!r}: expected {var}=a:b with integers 0 <= a <= b (e.g. JOB=1:4)"
                )
            start = int(m2.group(1))
            end = int(m2.group(2)) if m2.group(2) is not None else start
            if end < start:
                raise LaunchError(f"bad job range {rest[0]!r}: end {end} < start {start}")
            spec.var, spec.start, spec.end = var, start, end
            rest = rest[1:]
    if not rest:
        raise LaunchError(f"missing LOGFILE and COMMAND (usage: {PROG} [options] [JOB=a:b] LOGFILE COMMAND...)")
    spec.log = rest[0]
    if len(rest) < 2:
        raise LaunchError(f"missing COMMAND after log file {spec.log!r}")
    spec.command = join_command(rest[1:])
    if spec.var and spec.end > spec.start and spec.var not in spec.log:
        raise LaunchError(
            f"log file {spec.log!r} does not contain {spec.var}: all {spec.end - spec.start + 1} jobs "
            "would write the same log"
        )
    return spec


HEADER_TIME = "%a %b %d %H:%M:%S %Z %Y"  # the logs' `# Started at` / `# Ended (code N) at` (date(1) under LC_ALL=C)


def _now():
    return time.strftime(HEADER_TIME)


# ---------------------------------------------------------------- local backend

def run_one_local(spec, idx, procs, lock):
    """Run job `idx`; return its exit status. The log gets Kaldi's header/footer."""
    log = Path(spec.log_for(idx))
    cmd = spec.command_for(idx)
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with open(log, "w", encoding="utf-8") as f:
        f.write(f"# {cmd}\n# Started at {_now()}\n#\n")
        f.flush()
        try:
            p = subprocess.Popen(["bash", "-c", cmd], stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT)
        except OSError as e:
            f.write(f"{PROG}: cannot start bash: {e}\n")
            rc = 127
        else:
            with lock:
                procs.add(p)
            rc = p.wait()
            with lock:
                procs.discard(p)
        elapsed = int(round(time.time() - t0))
        f.write(f"# Accounting: time={elapsed} threads={spec.num_threads}\n")
        f.write(f"# Ended (code {rc}) at {_now()}\n")
    return rc


def run_local(spec):
    indices = spec.indices
    max_jobs = spec.max_jobs_run or os.cpu_count() or 1
    procs, lock = set(), threading.Lock()
    try:
        with ThreadPoolExecutor(max_workers=min(max_jobs, len(indices))) as ex:
            codes = list(ex.map(lambda i: run_one_local(spec, i, procs, lock), indices))
    except KeyboardInterrupt:
        with lock:
            for p in procs:
                p.terminate()
        raise
    failed = [(i, c) for i, c in zip(indices, codes) if c != 0]
    if failed:
        _report_failures(len(failed), len(indices), [(spec.log_for(i), c) for i, c in failed])
        return 1
    return 0


def _report_failures(n_failed, n_total, logs_codes, extra=""):
    shown = logs_codes[:5]
    logs = " ".join(log for log, _ in shown)
    codes = sorted({c for _, c in logs_codes if c is not None})
    more = f" (and {len(logs_codes) - len(shown)} more)" if len(logs_codes) > len(shown) else ""
    code_txt = f" (exit code{'s' if len(codes) > 1 else ''} {','.join(map(str, codes))})" if codes else ""
    msg = f"{PROG}: {n_failed} / {n_total} failed{code_txt}"
    if logs:
        msg += f", see {logs}{more}"
    print(msg + extra, file=sys.stderr)


# ---------------------------------------------------------------- slurm backend

def job_name(spec):
    if spec.job_name:
        return spec.job_name
    base = os.path.basename(spec.log)
    if spec.var:
        base = base.replace(spec.var, "")
    base = re.sub(r"\.log$", "", base)
    base = re.sub(r"[^A-Za-z0-9_.+-]+", "_", base)
    base = re.sub(r"\.{2,}", ".", base).strip("._")
    return base or "job"


def slurm_script(spec):
    q = shlex.quote
    var = spec.var or ""
    lines = [
        "#!/usr/bin/env bash",
        f"# Written by {PROG} (--backend slurm); submitted with sbatch --wait.",
        f"cd {q(os.getcwd())} || exit 1",
        f"log_template={q(spec.log)}",
        f"cmd_template={q(spec.command)}",
    ]
    if var:
        lines += [
            'idx=${SLURM_ARRAY_TASK_ID:?"not running as a Slurm array task"}',
            f'log=${{log_template//"{var}"/${{idx}}}}',
            f'cmd=${{cmd_template//"{var}"/${{idx}}}}',
        ]
    else:
        lines += ['log=${log_template}', 'cmd=${cmd_template}']
    lines += [
        'mkdir -p "$(dirname "${log}")" || exit 1',
        '{ echo "# ${cmd}"; echo "# Started at $(date)"; '
        'echo "# Running on $(hostname) as Slurm job ${SLURM_JOB_ID:-?}${SLURM_ARRAY_TASK_ID:+_${SLURM_ARRAY_TASK_ID}}"; '
        'echo "#"; } > "${log}" || exit 1',
        "start=$(date +%s)",
        'bash -c "${cmd}" < /dev/null >> "${log}" 2>&1',
        "rc=$?",
        "end=$(date +%s)",
        f'echo "# Accounting: time=$((end - start)) threads={spec.num_threads}" >> "${{log}}"',
        'echo "# Ended (code ${rc}) at $(date)" >> "${log}"',
        "exit ${rc}",
        "",
    ]
    return "\n".join(lines)


def sbatch_command(spec, script, name, qdir):
    cmd = ["sbatch", "--wait", "--job-name", name]
    if spec.var:
        cmd += ["--output", str(qdir / f"{name}-%a.out")]
        arr = f"--array={spec.start}-{spec.end}"
        if spec.max_jobs_run:
            arr += f"%{spec.max_jobs_run}"
        cmd.append(arr)
    else:
        cmd += ["--output", str(qdir / f"{name}.out")]
    if spec.num_threads > 1:
        cmd += ["--cpus-per-task", str(spec.num_threads)]
    if spec.mem:
        cmd += ["--mem", spec.mem]
    if spec.gpu > 0:
        cmd.append(f"--gres=gpu:{spec.gpu}")
    if spec.partition:
        cmd += ["--partition", spec.partition]
    if spec.time:
        cmd += ["--time", spec.time]
    cmd += spec.sbatch_opts
    cmd.append(str(script))
    return cmd


def log_started(path):
    """Seconds since the epoch in the log's `# Started at <date>` header, or None when absent or unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = [next(f, "") for _ in range(3)]
        stamp = next(x for x in head if x.startswith("# Started at ")).split("Started at ", 1)[1].strip()
        return time.mktime(time.strptime(stamp, HEADER_TIME))
    except (OSError, StopIteration, ValueError):
        return None


def log_exit_code(path):
    """The code in the log's `# Ended (code N)` footer, or None when absent."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 4096))
            tail = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    m = re.findall(r"^# Ended \(code (-?\d+)\)", tail, re.M)
    return int(m[-1]) if m else None


def run_slurm(spec):
    if shutil.which("sbatch") is None:
        raise LaunchError(
            "--backend slurm needs 'sbatch', which is not on PATH (not a Slurm login node?); "
            "use --backend local (cmd_backend=local in cmd.sh) to run here"
        )
    logdir = Path(spec.log).parent
    qdir = logdir / "q"
    qdir.mkdir(parents=True, exist_ok=True)
    name = job_name(spec)
    script = qdir / f"{name}.sh"
    script.write_text(slurm_script(spec), encoding="utf-8")
    script.chmod(0o755)
    cmd = sbatch_command(spec, script, name, qdir)
    # sbatch's "Submitted batch job N" goes to stderr, keeping the launcher's stdout clean.
    rc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno()).returncode
    indices = spec.indices
    failed = []
    for i in indices:
        code = log_exit_code(spec.log_for(i))
        if code != 0:
            failed.append((spec.log_for(i), code))
    if rc == 0 and not failed:
        return 0
    if failed:
        extra = "" if all(c is not None for _, c in failed) else f" (no exit code in some logs; see also {qdir}/)"
        _report_failures(len(failed), len(indices), failed, extra)
    else:
        print(f"{PROG}: sbatch exited with status {rc}; see {qdir}/{name}*.out", file=sys.stderr)
    return rc if 0 < rc < 256 else 1


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        spec = parse_args(argv)
        if spec.backend == "slurm":
            return run_slurm(spec)
        return run_local(spec)
    except LaunchError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
