"""How long a user waits for `<command> --help` of each inference command (issue #52's goal: <= 0.5 s on one CPU
thread), and its peak memory.

Each run is a fresh process with OMP / MKL / OpenBLAS at one thread; wall time from spawn to exit, best of --runs
(the least disturbed by other work on the machine; the median beside it), peak memory = the process's max RSS
(os.wait4 in a bare timer process that forks it). Two ways to start each command: the installed console script (tools/venv/bin/<command>, whose wrapper
looks its entry point up through importlib.metadata) and `python -m local_models.bin.<module>`; `python -c pass`
gives the interpreter's own start (site-packages' .pth files included) for scale. One more run under
`-X importtime` lists the heavy packages --help loaded (none expected; tests/test_lean_help.py asserts it).

  python benchmarks/startup.py                    # every command, 10 runs each
  python benchmarks/startup.py --runs 20 --commands speech-segments
Writes benchmarks/results/startup.{json,md} (--out).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from local_models.common.results import cpu_load, git_commit, hardware, load_text  # noqa: E402

COMMANDS = {
    "speech-segments": "local_models.bin.speech_segments",
    "speech-to-text": "local_models.bin.speech_to_text",
    "speech-to-units": "local_models.bin.speech_to_units",
    "text-to-speech": "local_models.bin.text_to_speech",
    "units-to-speech": "local_models.bin.units_to_speech",
}
GOAL_S = 0.5
HEAVY = ("numpy", "torch", "torchaudio", "soundfile", "yaml", "scipy", "espnet", "espnet2", "kaldiio", "librosa")
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1"}


# Times and reaps one command from a bare interpreter (-S -I: about 8 MiB). The command is forked from it, not from
# this process: on Linux a child's max RSS counts what it shared before exec, so a fork of this larger process would
# put a floor of this process's size under every peak.
TIMER = """import os, sys, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(time.perf_counter() - t0, usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def one_run(argv, env) -> tuple:
    """(wall s, peak RSS MiB) of ARGV, its output discarded; a failure stops the benchmark with its error."""
    out = subprocess.run([sys.executable, "-S", "-I", "-c", TIMER, *argv], capture_output=True, text=True,
                         env=env, cwd=ROOT, check=True)
    wall, peak_kib, rc = out.stdout.split()
    if int(rc) != 0:
        err = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT).stderr
        raise SystemExit(f"startup: {' '.join(argv)} exited {rc}: {err[-500:]}")
    return float(wall), int(peak_kib) / 1024  # Linux: KiB


def measure(argv, runs: int, env) -> dict:
    """Best and median wall time of RUNS runs of ARGV, after one unmeasured run (file cache warm)."""
    one_run(argv, env)
    walls, peaks = zip(*(one_run(argv, env) for _ in range(runs)))
    return {"best_s": min(walls), "median_s": statistics.median(walls), "peak_mib": max(peaks), "runs": runs}


def heavy_imports(argv, env) -> list:
    """The HEAVY top-level packages ARGV (a python command line) imports, from one `-X importtime` run."""
    out = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], capture_output=True, text=True, env=env, cwd=ROOT)
    loaded = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in out.stderr.splitlines()
              if line.startswith("import time:")}
    return sorted(loaded & set(HEAVY))


def ways(command: str) -> dict:
    """{'console script' | 'python -m': argv} for COMMAND; the script only where it is installed."""
    found = {}
    script = Path(sys.executable).parent / command
    if script.is_file():
        found["console script"] = [sys.executable, str(script), "--help"]  # as the shebang runs it
    found["python -m"] = [sys.executable, "-m", COMMANDS[command], "--help"]
    return found


def table(rows, baseline: dict) -> str:
    lines = ["| command | started as | best (s) | median (s) | goal <= 0.5 s | peak MiB | heavy imports |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        met = "met" if r["best_s"] <= GOAL_S else "MISSED"
        lines.append(f"| {r['command']} | {r['way']} | {r['best_s']:.3f} | {r['median_s']:.3f} | {met} | "
                     f"{r['peak_mib']:.0f} | {', '.join(r['heavy']) or 'none'} |")
    lines.append(f"| (interpreter alone) | python -c pass | {baseline['best_s']:.3f} | {baseline['median_s']:.3f} | "
                 f"- | {baseline['peak_mib']:.0f} | - |")
    return "\n".join(lines)


def wrapper_cost(rows) -> str:
    """A sentence on what the console script's importlib.metadata look-up adds to `python -m` (best vs best)."""
    best = {(r["command"], r["way"]): r["best_s"] for r in rows}
    extra = [best[c, "console script"] - best[c, "python -m"] for c, w in best if w == "console script"]
    if not extra:
        return ""
    return (f"The console script's wrapper (it finds its entry point through importlib.metadata) adds "
            f"{min(extra):.3f}-{max(extra):.3f} s to `python -m` (best against best).")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--commands", nargs="*", choices=sorted(COMMANDS), default=sorted(COMMANDS),
                   help="which commands (default: all five)")
    p.add_argument("--runs", type=int, default=10, help="measured runs per command and way (default: %(default)s)")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "startup"),
                   help="writes OUT.json and OUT.md (default: %(default)s)")
    args = p.parse_args(argv)
    bench = {**cpu_load(), "threads": 1}  # before any timing: did other work share the CPU?
    env = {**os.environ, **ONE_THREAD}
    baseline = measure([sys.executable, "-c", "pass"], args.runs, env)
    rows = []
    for command in args.commands:
        for way, cmd in ways(command).items():
            rows.append({"command": command, "way": way, **measure(cmd, args.runs, env),
                         "heavy": heavy_imports(cmd, env)})
            print(table(rows[-1:], baseline).splitlines()[2], flush=True)
    bench.update({"hardware": hardware(), "commit": git_commit(ROOT),
                  "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "python": sys.version.split()[0]})
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"environment": bench, "interpreter": baseline, "rows": rows},
                                                   indent=1) + "\n")
    md = (f"# `--help` start-up (one CPU thread; {bench['hardware']}; commit {bench['commit']}, {bench['date']})\n\n"
          f"Best and median of {args.runs} fresh processes each, after one unmeasured run; peak MiB = the "
          f"process's max RSS.{load_text(bench)} {wrapper_cost(rows)}\n\n" + table(rows, baseline) + "\n")
    out.with_suffix(".md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
