"""Paper-size models on one GPU: every recipe trains its paper-size configs and decodes through its own run.sh.

For each recipe this (1) copies the recipe into a work dir and builds its smoke-size mini corpus and features,
(2) trains the paper-size config(s) (`--train_config_suffix ""`) for `--steps` steps through run.sh with
`--ngpu 1` (ESPnet2's trainer; `--train_args` limit the steps), (3) decodes the test set with
`--gpu_inference true`, then (4) measures every trained model outside the recipe, from its exp dir (config.yaml +
checkpoint, built by the recipe's own ESPnet task): training step time at the paper's batch (a real batch of the
recipe's data tiled to that size), samples and frames per second, peak GPU memory, the projected wall-clock time
of the paper's schedule, and the parity of one forward pass on CPU vs the device (same weights, same batch; max
relative difference over the loss and the reported statistics, eval mode).

Writes --out (default benchmarks/results/gpu_check.json: each recipe's scoring stage puts its rows in RESULTS.md as
"Paper size on one GPU") and prints a Markdown table. On a machine without a GPU it runs the same path on the CPU
(`--device cpu --steps 1 --max-batch 2`: what the test suite does, so the script is known to work up to the device).

    python benchmarks/gpu_check.py                                  # on a GPU machine, all recipes
    python benchmarks/gpu_check.py --device cpu --steps 1 --max-batch 2 --recipes sad1 --out /tmp/x.json
    python benchmarks/gpu_check.py --stage merge --merge kss.json   # a partial run's recipes into --out
"""
import argparse
import importlib
import json
import math
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from local_models.common import gpu_report  # noqa: E402
from local_models.common.cli import positive  # noqa: E402
from local_models.common.launcher import log_exit_code, log_started  # noqa: E402
from local_models.jdit.systems import SYSTEMS as JDIT_SYSTEMS  # noqa: E402  (torch-free)
from local_models.salad.systems import SYSTEMS as SALAD_SYSTEMS  # noqa: E402  (torch-free)

DEFAULT_OUT = gpu_report.RESULTS_FILE
# environment a recipe run must not inherit (a real corpus location would replace the mini corpus)
_UNSET = ("VIRTUAL_ENV", "PYTHONPATH", "KSS", "INDIC", "FEARLESS_STEPS", "TCSTAR", "ZEROSPEECH2019")


@dataclass
class Model:
    """One paper-size model: its exp dir in the recipe, its task, and the paper's schedule."""
    exp: str
    task: str                 # "module:Class"
    batch: int                # the paper's batch (utterances / chunks / windows per step)
    steps: int                # the paper's (or the paper-size config's) number of training steps
    schedule: str             # where `steps` comes from, in words
    checkpoint: str = "valid.loss.best.pth"
    crop: int = 0             # frames per sequence in a training batch (0: the utterance's own length)


@dataclass
class Recipe:
    name: str
    data: list                # run.sh options of the data + feature stages (smoke size)
    train: list               # run.sh options of the training stage(s)
    decode: list              # run.sh options of the decoding stage(s)
    models: dict = field(default_factory=dict)
    train2: list = field(default_factory=list)  # a second training call (models trained on the first's output)
    cpu_models: tuple = ()    # --device cpu: measure only these (the others are not trained there: cpu_args)
    capped_batch: str = "--batch_size {n}"  # --train_args that cap the training batch with --max-batch n
    cpu_args: list = field(default_factory=list)  # run.sh options of a --device cpu run: smaller sets, narrower beam


SAD_SCHED = "paper: 50,000 iterations of 24 chunks of 4 s"
KSS_SYSTEMS = " ".join(JDIT_SYSTEMS)
TCSTAR_SYSTEMS = " ".join(SALAD_SYSTEMS)
RECIPES = [
    Recipe("fearless_steps/sad1",
           ["--stop-stage", "3", "--train-min", "0.5", "--dev-min", "0.3", "--eval-min", "0.3", "--eval-ood-min", "0",
            "--aug-copies", "0", "--data-args", "--events false",  # the device has no Debian sound packages
            "--systems", "cnn_hmm rnn_hmm seg_rnn"],
           ["--stage", "4", "--stop-stage", "4", "--systems", "cnn_hmm rnn_hmm seg_rnn", "--aug-copies", "0"],
           ["--stage", "5", "--stop-stage", "5", "--systems", "cnn_hmm rnn_hmm seg_rnn", "--test-sets", "eval"],
           {m: Model(f"exp/{m}", "local_models.sad.task:SADTask", 24, 50_000, SAD_SCHED)
            for m in ("cnn1d", "rnn", "seg_rnn")}),
    Recipe("indic/asr1",
           ["--stop-stage", "3", "--langs", "en hi", "--mini-train-min", "en=0.3 hi=0.2", "--mini-dev-min", "0.1",
            "--mini-test-min", "0.1", "--mini-train-spk", "4", "--mini-dev-spk", "2"],
           ["--stage", "4", "--stop-stage", "4", "--langs", "en hi", "--systems", "multisoftmax_lid", "--finetune", ""],
           ["--stage", "6", "--stop-stage", "6", "--langs", "en hi", "--systems", "multisoftmax_lid", "--finetune", "",
            "--switch-off-grid", "inf:inf"],
           {"multisoftmax_lid": Model("exp/multisoftmax_lid", "local_models.multisoftmax.task:TransducerTask", 64,
                                      60 * 256_478, "the paper states none; conf max_epoch 60 over its 22,798 h "
                                      "(Table 1) in batches of 64 utterances of ~5 s (assumed): 256k steps an "
                                      "epoch")},
           # the paper-size RNN-T's beam search is slow on 2 CPU cores: beam 1, one language's test set
           cpu_args=["--beam", "1", "--test-sets", "en_test"]),
    Recipe("kss/tts1",
           ["--stop-stage", "3", "--mini-utts", "20", "--test-sets", "test"],
           ["--stage", "4", "--stop-stage", "4", "--systems", KSS_SYSTEMS, "--train-pwg", "false"],
           ["--stage", "5", "--stop-stage", "5", "--systems", KSS_SYSTEMS, "--test-sets", "test",
            "--griffin-lim-iters", "4"],
           {"jdit": Model("exp/tts_jdit", "local_models.jdit.task:JDITTask", 64, 300_000,
                          "paper: about 300k steps at batch 64"),
            **{s: Model(f"exp/tts_{s}", "local_models.jdit.task:JDITTask", 32, steps, sched)
               for s, steps, sched in (
                   ("tacotron2", 200 * 400, "conf max_epoch 200; KSS 12.6k utterances in batches of ~32: ~400 "
                                            "steps an epoch"),
                   ("transformer", 1000 * 400, "conf max_epoch 1000, ~400 steps an epoch (as Tacotron2)"),
                   ("fastspeech", 1000 * 500, "conf max_epoch 1000 x num_iters_per_epoch 500"))}},
           cpu_args=["--systems", "jdit"], cpu_models=("jdit",)),
    Recipe("tcstar/tts1",
           ["--stop-stage", "3", "--mini-utts", "12", "--speakers", "M1", "--streams", "8", "--window", "40"],
           ["--stage", "4", "--stop-stage", "4", "--speakers", "M1", "--systems", TCSTAR_SYSTEMS,
            "--streams", "8", "--window", "40"],
           ["--stage", "5", "--stop-stage", "5", "--speakers", "M1", "--systems", TCSTAR_SYSTEMS,
            "--num-wavs", "0"],  # no WORLD synthesis: pyworld / pysptk do not travel to the GPU machine
           {s: Model(f"exp/M1/{s}", "local_models.salad.task:SaladTask", 32, 300 * 313,
                     "paper: at most 300 epochs of 32 x 120-frame windows; ~100 min of training speech per speaker "
                     "at 200 frames/s = 313 steps an epoch", "valid.mcd.best.pth", crop=120)
            for s in TCSTAR_SYSTEMS.split()},
           capped_batch="",  # stateful training: the batch is --streams (8 here), set by the data stage
           cpu_args=["--systems", "small_rnn big_salad_win"], cpu_models=("small_rnn", "big_salad_win")),
    Recipe("zerospeech2019/unit1",
           ["--stop-stage", "3", "--unit-min", "0.3", "--voice-min", "0.3", "--test-min", "0.3", "--dev-min", "0.3",
            "--systems", "trf_mfcc_k128", "--inverter-system", "trf_mfcc_k128"],
           ["--stage", "4", "--stop-stage", "4", "--systems", "trf_mfcc_k128", "--inverter-system", "trf_mfcc_k128"],
           ["--stage", "5", "--stop-stage", "5", "--systems", "trf_mfcc_k128", "--inverter-system", "trf_mfcc_k128"],
           {"trf_mfcc_k128": Model("exp/trf_mfcc_k128", "local_models.vqvae.task:VQVAETask", 100, 200 * 132,
                                   "the paper states none; conf max_epoch 200, batch_bins 1.6M = ~100 utterances "
                                   "of 4 s; the 15 h unit set = 132 steps an epoch"),
            "inverter": Model("exp/inverter_trf_mfcc_k128/V001", "local_models.vqvae.task:VQVAETask", 100,
                              200 * 20, "the paper states none; conf max_epoch 200, batch_bins 4M over the 2 h "
                                        "voice set: ~20 steps an epoch")},
           capped_batch="--batch_type unsorted --batch_size {n}",
           # the inverter over the VQ-VAE's codes (stage 7; stage 8's MCD needs pyworld, not on the GPU machine)
           train2=["--stage", "7", "--stop-stage", "7", "--systems", "trf_mfcc_k128",
                   "--inverter-system", "trf_mfcc_k128"]),
]


def get_parser():
    p = argparse.ArgumentParser(prog="gpu_check", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="where to train, decode and time")
    p.add_argument("--nj", type=positive(int), default=2,
                   help="run.sh's parallel jobs (feature extraction, trainings, decodings; default 2). At smoke size "
                        "each job is mostly Python start-up: 1 where the CPU is shared, as by the tests' two workers")
    p.add_argument("--steps", type=int, default=10, help="training steps through run.sh, and timed steps (default 10)")
    p.add_argument("--max-batch", type=int, default=0, help="cap on the timed batch (0: the paper's batch)")
    p.add_argument("--precisions", default="fp32 bf16", help="timed precisions (bf16: autocast)")
    p.add_argument("--recipes", default="", help="a subset, e.g. 'sad1 tts1' (names or their last part)")
    p.add_argument("--workdir", default="", help="where the recipe copies run (default: a fresh temp dir)")
    p.add_argument("--merge", action="append", default=[], metavar="JSON",
                   help="with --stage merge: results of a partial run (--recipes) to fold into --out; its recipes "
                        "replace theirs, the others keep their rows and the machine that measured them (repeatable)")
    p.add_argument("--stage", default="all", choices=["all", "prepare", "run", "merge"],
                   help="prepare: copy the recipes into --workdir and build their mini corpora and features (CPU "
                        "work that needs espeak-ng: do it on a machine with `make install`); run: train, decode "
                        "and measure in a prepared --workdir (the GPU machine, which has no espeak-ng); all: both; "
                        "merge: fold the --merge files into --out, nothing run")
    p.add_argument("--timeout", type=float, default=0,
                   help="seconds per run.sh call (0: none); a training past it fails its recipe, a decode past it "
                        "is reported and the trained models are still timed, and the JSON is written either way")
    p.add_argument("--resume", action="store_true",
                   help="with --stage run: skip the training of a recipe whose models all have their checkpoint in "
                        "--workdir (a device call cut off after training; the machine keeps the workdir while warm: "
                        "do not carry .gpu_check again), then decode and measure")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="results JSON (default %(default)s)")
    return p


_RUNNING = []  # the run.sh process being waited for: killed with its group if gpu_check is terminated


def _terminate(signum, _frame):
    """SIGTERM / SIGINT (a device call's own time limit): kill the running run.sh's process group too, which lives
    in its own session, so that no training or decode outlives gpu_check into a later --resume call."""
    for proc in _RUNNING:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    sys.exit(128 + signum)


def run_sh(recipe_dir: Path, *args, timeout=None):
    """run.sh ARGS in RECIPE_DIR; past TIMEOUT seconds its whole process group (the training jobs too) is killed."""
    env = {k: v for k, v in os.environ.items() if k not in _UNSET}
    env["MAIN_ROOT"] = str(ROOT)
    t0 = time.perf_counter()
    proc = subprocess.Popen(["bash", "run.sh", *args], cwd=recipe_dir, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    _RUNNING[:] = [proc]
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise RuntimeError(f"{recipe_dir.name}: run.sh {' '.join(args)} stopped at the --timeout of {timeout} s")
    finally:
        _RUNNING.clear()
    if proc.returncode != 0:
        raise RuntimeError(f"{recipe_dir.name}: run.sh {' '.join(args)} failed:\n{err[-3000:]}")
    return time.perf_counter() - t0


_STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")  # ESPnet's log lines


def _stamp(line: str):
    """Seconds since the epoch of an ESPnet log line's time stamp, else None."""
    m = _STAMP.search(line)
    return time.mktime(time.strptime(m.group(0), "%Y-%m-%d %H:%M:%S")) if m else None


def training_logs(recipe_dir: Path) -> list:
    """Where each training of a recipe spent its time, from every exp/**/train.log (the launcher's header and
    footer, ESPnet's time-stamped lines): start-up to the first epoch, seconds in all, ended or not. Put in a
    failed step's error, so a run cut at a time limit says which training held it up (the logs stay there)."""
    out = []
    for log in sorted((recipe_dir / "exp").rglob("train.log")):  # TC-STAR: exp/<speaker>/<system>/
        lines = log.read_text(errors="replace").splitlines()
        start, code = log_started(log), log_exit_code(log)
        first_epoch = next((_stamp(x) for x in lines if "epoch started" in x), None)
        last = next((t for t in map(_stamp, reversed(lines)) if t is not None), None)
        elapsed = next((x.split("time=")[1].split()[0] for x in lines if x.startswith("# Accounting: time=")), None)
        parts = [str(log.parent.relative_to(recipe_dir))]
        if start is not None and first_epoch is not None:
            parts.append(f"start-up {first_epoch - start:.0f} s")
        if code is not None:
            parts.append(f"ended after {elapsed} s" + ("" if code == 0 else f", FAILED (code {code})"))
        elif start is not None and last is not None:
            parts.append(f"NOT ended, last line {last - start:.0f} s after its start: {lines[-1][-120:]}")
        else:
            parts.append("NOT ended")
        out.append(", ".join(parts))
    return out


def measured_models(r: "Recipe", device: str) -> dict:
    """The models of recipe R that a run on DEVICE trains and times (on the CPU: its cpu_models, if it names some)."""
    return {n: m for n, m in r.models.items() if not (device == "cpu" and r.cpu_models and n not in r.cpu_models)}


def trained(recipe_dir: Path, r: "Recipe", device: str) -> bool:
    """Whether every model of recipe R that this run measures has its config and checkpoint in RECIPE_DIR."""
    return all((recipe_dir / m.exp / f).is_file() for m in measured_models(r, device).values()
               for f in ("config.yaml", m.checkpoint))


def device_options(device: str, steps: int, batch_args: str = ""):
    gpu = device == "cuda"
    return ["--ngpu", "1" if gpu else "0", "--gpu_inference", "true" if gpu else "false", "--train_config_suffix", "",
            "--train_args",
            f"--max_epoch 1 --num_iters_per_epoch {steps} --num_workers 0 --use_matplotlib false {batch_args}".strip()]


def run_sh_calls(r: "Recipe", device: str, steps: int, max_batch: int, nj: int) -> dict:
    """{step: run.sh options} of recipe R's calls (data, train, train2 if any, decode): the job count everywhere,
    on the CPU the smaller sets of cpu_args, the device's training and decoding options on the training and decoding
    calls."""
    capped = r.capped_batch.format(n=max_batch) if max_batch else ""
    dev = device_options(device, steps, capped)
    extra = ["--nj", str(nj)] + (r.cpu_args if device == "cpu" else [])
    calls = {"data": r.data + extra, "train": r.train + dev + extra}
    if r.train2:
        calls["train2"] = r.train2 + dev + extra
    calls["decode"] = r.decode + dev + extra
    return calls


def load_task(spec: str):
    module, cls = spec.split(":")
    return getattr(importlib.import_module(module), cls)


def first_batch(task, args):
    """One collated batch (size 1) of the model's validation data, as the trainer's valid loop feeds it: the first
    key of the first data file (map-style dataset: the other files may hold more keys, in any order)."""
    from espnet2.train.dataset import ESPnetDataset

    data = args.valid_data_path_and_name_and_type
    dataset = ESPnetDataset(data, preprocess=task.build_preprocess_fn(args, False), float_dtype="float32")
    with open(data[0][0], encoding="utf-8") as f:
        key = f.readline().split(maxsplit=1)[0]
    return task.build_collate_fn(args, False)([dataset[key]])[1]


def tile(batch: dict, n: int) -> dict:
    """The batch repeated to n entries along the batch axis."""
    import torch

    b = next(iter(batch.values())).shape[0]
    reps = math.ceil(n / b)
    return {k: torch.cat([v] * reps)[:n] for k, v in batch.items()}


def to(batch: dict, device):
    return {k: v.to(device) for k, v in batch.items()}


def scalar_stats(out) -> dict:
    loss, stats = out[0], out[1]
    vals = {"loss": float(loss.detach().float().cpu())}
    for k, v in stats.items():
        if v is not None and hasattr(v, "numel") and v.numel() == 1:
            vals[k] = float(v.detach().float().cpu())
        elif isinstance(v, (int, float)):
            vals[k] = float(v)
    return vals


def parity(task, conf, ckpt, batch, device) -> float:
    """Max relative difference of the loss and statistics of one eval-mode forward: CPU vs DEVICE."""
    import torch

    res = {}
    for dev in ("cpu", device):
        model, _ = task.build_model_from_file(str(conf), str(ckpt), dev)
        model.eval()
        torch.manual_seed(0)
        with torch.no_grad():
            res[dev] = scalar_stats(model(**to(batch, dev)))
    a, b = res["cpu"], res[device]
    # relative to the value, or to 1e-3 for statistics near 0 (rates, clip counts), where a ratio means nothing
    return max((abs(a[k] - b[k]) / max(abs(a[k]), 1e-3) for k in a if k in b and math.isfinite(a[k])), default=0.0)


def time_steps(task, conf, ckpt, batch, device, steps, precision) -> dict:
    """Seconds per training step (forward, backward, clip, optimiser) at the batch given, and peak memory."""
    import torch

    model, args = task.build_model_from_file(str(conf), str(ckpt), device)
    model.train()
    optimizers = task.build_optimizers(args, model)
    batch = to(batch, device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()

    def step():
        with torch.autocast(device, dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss = model(**batch)[0]
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), getattr(args, "grad_clip", 1.0) or 1.0)
        for opt in optimizers:
            opt.step()
            opt.zero_grad()

    if device == "cuda":
        step()  # warm-up (cuDNN / kernel selection, allocator)
        sync()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    sec = (time.perf_counter() - t0) / steps
    peak = torch.cuda.max_memory_allocated() / 2**30 if device == "cuda" else None
    return {"step_s": sec, "peak_gib": peak}


def measure(recipe_dir: Path, name: str, m: Model, device: str, steps: int, max_batch: int, precisions) -> dict:
    import torch

    task = load_task(m.task)
    exp = recipe_dir / m.exp
    conf, ckpt = exp / "config.yaml", exp / m.checkpoint
    if not ckpt.exists():
        ckpt = exp / "latest.pth"
    cwd = os.getcwd()
    os.chdir(recipe_dir)  # the config's data paths are relative to the recipe
    try:
        _, args = task.build_model_from_file(str(conf), str(ckpt), "cpu")
        small = first_batch(task, args)
        if m.crop:  # frame-aligned streams (SALAD's windows): the training step's sequence length
            small = {k: (v[:, : m.crop] if f"{k}_lengths" in small else v.clamp(max=m.crop) if k.endswith("_lengths")
                         else v) for k, v in small.items()}
        bsz = min(m.batch, max_batch) if max_batch else m.batch
        big = tile(small, bsz)
        lens = [k for k in big if k.endswith("_lengths")]
        frames = float(big[lens[0]].sum()) if lens else float(bsz * next(iter(big.values())).shape[1])
        row = {"recipe": recipe_dir.name, "model": name, "params_m": None, "batch": bsz, "paper_batch": m.batch,
               "paper_steps": m.steps, "schedule": m.schedule, "frames_per_batch": frames,
               "parity_max_rel": parity(task, conf, ckpt, small, device)}
        model, _ = task.build_model_from_file(str(conf), str(ckpt), "cpu")
        row["params_m"] = sum(p.numel() for p in model.parameters()) / 1e6
        del model
        for prec in precisions:
            if prec == "bf16" and device == "cpu" and not torch.backends.mkldnn.is_available():
                continue
            t = time_steps(task, conf, ckpt, big, device, steps, prec)
            row[prec] = {**t, "samples_per_s": bsz / t["step_s"], "frames_per_s": frames / t["step_s"],
                         "projected_h": m.steps * t["step_s"] / 3600 * (m.batch / bsz)}
    finally:
        os.chdir(cwd)
    return row


def environment(device: str) -> dict:
    import torch

    env = {"device": device, "torch": torch.__version__, "cuda": torch.version.cuda,
           "python": platform.python_version(), "host": platform.node(), "date": time.strftime("%Y-%m-%d")}
    env["gpu"] = torch.cuda.get_device_name(0) if device == "cuda" else platform.processor() or platform.machine()
    return env


def write_result(out, result):
    """Atomically (re)write the results JSON."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=1))
    tmp.replace(out)


def merge_files(out: Path, files) -> int:
    """--stage merge: each file's recipes replace theirs in OUT (a missing OUT starts from the first file)."""
    if not files:
        sys.exit("gpu_check: --stage merge needs --merge FILE")
    for f in files:
        if not Path(f).is_file():
            sys.exit(f"gpu_check: --merge {f}: no such file")
    result = json.loads(out.read_text()) if out.is_file() else None
    for f in files:
        new = json.loads(Path(f).read_text())
        try:
            result = new if result is None else gpu_report.merge(result, new)
        except ValueError as e:
            sys.exit(f"{e} ({f})")
    write_result(out, result)
    print("\n".join(gpu_report.table(result)))
    return 0


def main(argv=None):
    args = get_parser().parse_args(argv)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _terminate)
    if args.stage == "merge":
        return merge_files(Path(args.out), args.merge)
    import torch

    if args.stage != "prepare" and args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("gpu_check: --device cuda, but torch.cuda.is_available() is False (use --device cpu)")
    wanted = args.recipes.split()
    recipes = [r for r in RECIPES if not wanted or r.name in wanted or r.name.split("/")[-1] in wanted
               or r.name.split("/")[0] in wanted]
    if not recipes:
        sys.exit(f"gpu_check: --recipes '{args.recipes}' names none of {[r.name for r in RECIPES]}")
    if args.stage == "run" and not args.workdir:
        sys.exit("gpu_check: --stage run needs the --workdir that --stage prepare filled")
    work = Path(args.workdir) if args.workdir else Path(os.environ.get("TMPDIR", "/tmp")) / f"gpu_check_{os.getpid()}"
    work = work.resolve()  # measure() changes into each recipe
    precisions = args.precisions.split()
    env = environment(args.device if args.stage != "prepare" else "cpu")  # prepare needs no GPU
    result = {"environment": env, "steps": args.steps, "rows": [], "errors": [], "stage_s": {},
              "runs": [" ".join(["gpu_check.py", *(argv if argv is not None else sys.argv[1:])])]}
    for r in recipes:
        dst = work / r.name.replace("/", "_")
        calls = run_sh_calls(r, args.device, args.steps, args.max_batch, args.nj)
        steps = []
        if args.stage in ("all", "prepare"):
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(ROOT / "egs" / r.name, dst,
                            ignore=shutil.ignore_patterns("data", "dump", "exp", "downloads", "RESULTS.md"))
            steps.append(("data", calls["data"]))
        if args.stage in ("all", "run"):
            if args.stage == "run" and not (dst / "data").is_dir():
                result["errors"].append({"recipe": r.name, "step": "run", "error": f"{dst}: not prepared"})
                continue
            if args.resume and trained(dst, r, args.device):
                print(f"gpu_check: {r.name}: every model has its checkpoint in {dst}: training skipped (--resume)",
                      file=sys.stderr)
                result.setdefault("trainings", {})[r.name] = training_logs(dst)  # the earlier call's, still there
            else:
                steps += [(step, calls[step]) for step in ("train", "train2") if step in calls]
            steps.append(("decode", calls["decode"]))
        try:
            for step, opts in steps:
                try:
                    result["stage_s"][f"{r.name}:{step}"] = run_sh(dst, *opts, timeout=args.timeout or None)
                except Exception as e:
                    if step != "decode":
                        raise
                    # the trained models can still be timed: a failed decode is reported, not fatal
                    result["errors"].append({"recipe": r.name, "step": step, "error": f"{type(e).__name__}: {e}"})
                    print(f"gpu_check: {r.name} decode FAILED: {e}", file=sys.stderr)
                    continue
                print(f"gpu_check: {r.name} {step} done ({result['stage_s'][f'{r.name}:{step}']:.0f} s)",
                      file=sys.stderr)
                if step.startswith("train"):  # each training's share, and a record if a later step is cut off
                    result.setdefault("trainings", {})[r.name] = training_logs(dst)
                    write_result(Path(args.out), result)
            if args.stage == "prepare":
                continue
        except Exception as e:  # one recipe's failure is reported; the others are still run
            result["errors"].append({"recipe": r.name, "step": "run", "error": f"{type(e).__name__}: {e}",
                                     "trainings": training_logs(dst)})
            print(f"gpu_check: {r.name} FAILED: {e}", file=sys.stderr)
            if args.stage != "prepare":
                write_result(Path(args.out), result)
            continue
        for name, m in measured_models(r, args.device).items():
            try:
                row = measure(dst, name, m, args.device, args.steps, args.max_batch, precisions)
                row["recipe"] = r.name
                result["rows"].append(row)
            except Exception as e:  # one model's failure is reported; the others are still measured
                result["errors"].append({"recipe": r.name, "step": name, "error": f"{type(e).__name__}: {e}"})
                print(f"gpu_check: {r.name} {name} FAILED: {e}", file=sys.stderr)
        if args.stage != "prepare":  # after every recipe: a run cut short by a time limit keeps what it measured
            write_result(Path(args.out), result)
    if args.stage == "prepare":
        print(f"gpu_check: prepared {', '.join(r.name for r in recipes)} in {work}", file=sys.stderr)
        return 1 if result["errors"] else 0
    write_result(Path(args.out), result)
    print("\n".join(gpu_report.table(result)))
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
