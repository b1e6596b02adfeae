"""How long a user waits for `<command> --help` of each inference command (issue #52's goal: <= 0.5 s on one CPU
thread), and its peak memory.

Each run is a fresh process with OMP / MKL / OpenBLAS at one thread; wall time from spawn to exit, best of --runs
(the least disturbed by other work on the machine; the median beside it), peak memory = the process's max RSS
(os.wait4 in a bare timer process that forks it). Two ways to start each command: the installed console script (tools/venv/bin/<command>, whose wrapper
looks its entry point up through importlib.metadata) and `python -m local_models.bin.<module>`; `python -c pass`
gives the interpreter's own start (site-packages' .pth files included) for scale. One more run under
`-X importtime` lists the heavy packages --help loaded (none expected; tests/test_lean_help.py asserts it).

The shipped SAD model (issues #51 / #52: loaded in <= 1 s and <= 300 MB on one CPU thread), each in a fresh process
with the archive already unpacked in a scratch cache: `SpeechSegmenter.from_pretrained()` (start to exit, and inside
the process its imports and its load), and `speech-segments` on a 10 s 16 kHz recording (load + resampling + the
decision, chunked as by default); peak memory as above. One more load in an empty cache adds the archive's unpacking.

  python benchmarks/startup.py                    # every command, 10 runs each; the SAD load, 5 runs
  python benchmarks/startup.py --runs 20 --commands speech-segments
  python benchmarks/startup.py --commands --sad_load_runs 10 --out /tmp/sad_load   # the SAD load alone
Writes benchmarks/results/startup.{json,md} (--out).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
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
SAD_LOAD_GOAL_S, SAD_RSS_GOAL_MB = 1.0, 300.0  # the shipped SAD model's load (issue #52)
SHIPPED_SAD = ROOT / "local_models" / "sad" / "pretrained" / "model.tar.gz"
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


# Loads the shipped SAD model (and segments argv[2] when given); writes its own split of the time and the heavy
# packages it imported to argv[1] (the timer discards the child's output).
SAD_LOAD = f"""import json, sys, time
t0 = time.perf_counter()
from local_models.sad.inference import SpeechSegmenter
t1 = time.perf_counter()
seg = SpeechSegmenter.from_pretrained()
t2 = time.perf_counter()
if len(sys.argv) > 2:
    seg(sys.argv[2])
heavy = sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))
with open(sys.argv[1], "w") as f:
    json.dump({{"import_s": t1 - t0, "load_s": t2 - t1, "heavy": heavy}}, f)
"""


def sad_load(runs: int, env) -> list:
    """Rows of the shipped SAD model's load and of speech-segments on a 10 s recording, each in fresh processes
    (RUNS each, after one unmeasured run that unpacks the archive into a scratch cache), plus one load in an empty
    cache (the archive's unpacking included)."""
    import numpy as np  # the benchmark's own process: not timed
    import soundfile

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        wave = np.random.default_rng(0).standard_normal(160000).astype(np.float32) * 0.05
        soundfile.write(tmp / "rec16k.wav", wave, 16000)
        env = {**env, "SPEECH_RECIPES_CACHE": str(tmp / "cache"), "PYTHONPATH": str(ROOT)}
        inner = tmp / "inner.json"
        load = [sys.executable, "-c", SAD_LOAD, str(inner)]
        cold = {**env, "SPEECH_RECIPES_CACHE": str(tmp / "cold")}
        first_s, first_mib = one_run(load, cold)
        rows.append({"what": "SpeechSegmenter.from_pretrained()", **measure(load, runs, env),
                     **json.loads(inner.read_text()), "cold_s": first_s, "cold_peak_mib": first_mib})
        for way, argv in ways("speech-segments").items():
            cmd = [*argv[:-1], str(tmp / "rec16k.wav")]  # the --help argv with the recording instead
            rows.append({"what": f"speech-segments rec16k.wav (10 s; {way})", **measure(cmd, runs, env)})
    return rows


def sad_table(rows) -> str:
    mb = 2 ** 20 / 1e6
    lines = ["| what | best (s) | median (s) | goal <= 1 s | peak MiB (MB) | goal <= 300 MB | imports (s) | "
             "from_pretrained (s) | heavy packages loaded |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        # the time goal is the load's; a command's row adds 10 s of audio to it (memory: a goal for both)
        met_t = ("met" if r["best_s"] <= SAD_LOAD_GOAL_S else "MISSED") if "import_s" in r else "-"
        met_m = "met" if r["peak_mib"] * mb <= SAD_RSS_GOAL_MB else "MISSED"
        split = (f"{r['import_s']:.3f} | {r['load_s']:.3f} | {', '.join(r['heavy']) or 'none'}" if "import_s" in r
                 else "- | - | -")
        lines.append(f"| {r['what']} | {r['best_s']:.3f} | {r['median_s']:.3f} | {met_t} | {r['peak_mib']:.0f} "
                     f"({r['peak_mib'] * mb:.0f}) | {met_m} | {split} |")
    cold = [r for r in rows if "cold_s" in r]
    if cold:
        lines.append(f"\nIn an empty cache (the archive unpacked and its checksums verified first): "
                     f"{cold[0]['cold_s']:.3f} s, {cold[0]['cold_peak_mib']:.0f} MiB.")
    return "\n".join(lines)


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
    p.add_argument("--sad_load_runs", type=int, default=5,
                   help="measured runs of the shipped SAD model's load and of speech-segments on a 10 s file "
                        "(0: skip them) (default: %(default)s)")
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
    sad_rows = sad_load(args.sad_load_runs, env) if args.sad_load_runs > 0 and SHIPPED_SAD.is_file() else []
    bench.update({"hardware": hardware(), "commit": git_commit(ROOT),
                  "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "python": sys.version.split()[0]})
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"environment": bench, "interpreter": baseline, "rows": rows,
                                                    "sad_load": sad_rows}, indent=1) + "\n")
    what = "`--help` start-up" if rows else "Start-up of the shipped SAD model"
    md = (f"# {what} (one CPU thread; {bench['hardware']}; commit {bench['commit']}, {bench['date']})\n\n"
          f"Best and median of {args.runs} fresh processes each, after one unmeasured run; peak MiB = the "
          f"process's max RSS.{load_text(bench)} {wrapper_cost(rows)}\n\n" + table(rows, baseline) + "\n")
    if sad_rows:
        md += (f"\n## The shipped SAD model ({SHIPPED_SAD.relative_to(ROOT)})\n\nBest and median of "
               f"{args.sad_load_runs} fresh processes each, start to exit, archive already unpacked; imports / "
               "from_pretrained: their share inside the last measured run.\n\n"
               + sad_table(sad_rows) + "\n")
    out.with_suffix(".md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
