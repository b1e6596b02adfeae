#!/usr/bin/env python3
"""CPU inference latency vs generated length of the SALAD recipe's models (paper Table 3, Fig. 3).

For every system: the model at the size of conf/tuning/train_<system><suffix>.yaml (default: the paper's sizes;
weights random unless --trained, since speed does not depend on them), batch 1, synthesising every test file of
a speaker's dump plus long inputs (test files concatenated) up to --max-seconds of speech. Each dot = one
synthesis (best of --repeats). A RANSAC linear fit (scikit-learn) of latency on length gives the latency at
--max-seconds (Table 3's "max. latency"); the speed-up over Big RNN is taken from the measured latency of the longest input
(full attention is quadratic in length, so a line fitted through all lengths understates it). Precisions: fp32,
bf16 autocast (AVX512-BF16 / AMX where the CPU has them), int8 dynamic quantisation of every Linear and LSTM
(VNNI / AMX int8); both models of a comparison always run in the same precision. Thread count stated. Each
precision also times a plain 1024 x 1024 matrix-matrix and matrix-vector product on the same threads: the CPU's
ceilings, against which each model's achieved GFLOP/s is stated (the speed-up is a property of the CPU).
With --mcd, every precision also synthesises the speaker's test set with the trained models (exp/<spk>/<system>)
and scores it (MCD against the reference), so the speed of a precision comes with its distortion.
Writes <recipe>/exp/latency.json (--out) and images/latency_<precision>.png beside it.

  python benchmarks/salad_latency.py [--recipe egs/tcstar/tts1] [--precision fp32 bf16 int8] [--threads 2] [--mcd]
"""
import argparse
import json
import time
from pathlib import Path

import numpy as np

from local_models.salad.systems import SYSTEMS  # torch-free

ROOT = Path(__file__).resolve().parents[1]
SHIFT_S = 0.005


def get_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--recipe", default=str(ROOT / "egs/tcstar/tts1"))
    p.add_argument("--speaker", default="M1", help="whose test dump supplies the inputs")
    p.add_argument("--systems", default=" ".join(SYSTEMS))
    p.add_argument("--config-suffix", default="", help="'' paper sizes, _tiny the mini-corpus sizes")
    p.add_argument("--trained", action="store_true", help="time exp/<speaker>/<system> (trained weights)")
    p.add_argument("--precision", nargs="+", default=["fp32", "bf16", "int8"], choices=["fp32", "bf16", "int8"])
    p.add_argument("--mcd", action="store_true",
                   help="score each precision's synthesis of the test set with the trained models (MCD, dB)")
    p.add_argument("--threads", type=int, default=2, help="torch threads (say in your report whether the CPU was idle)")
    p.add_argument("--max-seconds", type=float, default=35.0)
    p.add_argument("--long-steps", type=int, default=7, help="long inputs, evenly spaced up to --max-seconds")
    p.add_argument("--max-files", type=int, default=20, help="test files timed per system")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", help="default <recipe>/exp/latency.json")
    return p


def inputs(recipe: Path, speaker: str, max_files: int, max_s: float, steps: int):
    """[(name, (T, D) linguistic frames)]: test files + concatenations up to max_s."""
    import kaldiio

    from local_models.common.datadir import read_table

    scp = recipe / "dump" / speaker / f"{speaker}_test" / "ling.scp"
    if not scp.is_file():
        raise SystemExit(f"salad_latency: {scp} missing: run the recipe up to stage 3 first")
    mats = [np.asarray(kaldiio.load_mat(p), dtype=np.float32) for p in read_table(scp).values()]
    out = [(f"test{i}", m) for i, m in enumerate(mats[:max_files])]
    pool = np.concatenate(mats)
    while len(pool) * SHIFT_S < max_s:
        pool = np.concatenate([pool, pool])
    for k in range(1, steps + 1):
        n = int(round(max_s * k / steps / SHIFT_S))
        out.append((f"long{n}", pool[:n]))
    return out


def build(recipe: Path, system: str, suffix: str, idim: int, trained: bool, speaker: str, precision: str):
    import torch
    import yaml

    from local_models.salad.model import build as build_net, for_precision
    from local_models.salad.task import load_trained

    if trained:
        return load_trained(recipe / "exp" / speaker / system, precision=precision).net
    conf = yaml.safe_load((recipe / "conf" / "tuning" / f"train_{system}{suffix}.yaml").read_text())
    torch.manual_seed(0)
    return for_precision(build_net(conf["model"], idim, **conf["model_conf"]).eval(), precision)


def mcd_on_test_set(recipe: Path, speaker: str, system: str, precision: str) -> tuple:
    """(pooled MCD (dB) of the trained model's synthesis of <speaker>_test in `precision` (as salad_decode scores),
    the trained model's parameter count (fp32 only: int8 packs its weights out of parameters()). Its size is the
    recipe run's, which need not be the timed one's."""
    import kaldiio

    from local_models.common.datadir import read_table
    from local_models.salad import acoustic
    from local_models.salad.task import load_trained

    model = load_trained(recipe / "exp" / speaker / system, precision=precision)
    dump = recipe / "dump" / speaker / f"{speaker}_test"
    ling, ref = read_table(dump / "ling.scp"), read_table(dump / "acou.scp")
    per_utt = [acoustic.scores(np.asarray(kaldiio.load_mat(ref[u])), model.synthesise_frames(kaldiio.load_mat(ling[u])))
               for u in sorted(ling)]
    params = sum(p.numel() for p in model.net.parameters()) if precision == "fp32" else None
    return float(acoustic.pool_scores(per_utt)["mcd_db"]), params


def time_one(net, x: np.ndarray, precision: str, repeats: int) -> float:
    import torch

    from local_models.salad.model import precision_context

    t = torch.tensor(x)[None]
    lengths = torch.tensor([len(x)])
    best = float("inf")
    with torch.inference_mode(), precision_context(precision):
        for _ in range(repeats):
            start = time.perf_counter()
            net(t, lengths)
            best = min(best, time.perf_counter() - start)
    return best


def ransac(seconds, latency, at: float) -> dict:
    from sklearn.linear_model import LinearRegression, RANSACRegressor

    x, y = np.asarray(seconds)[:, None], np.asarray(latency)
    fit = RANSACRegressor(LinearRegression(), random_state=0).fit(x, y)
    est = fit.estimator_
    return {"slope": float(est.coef_[0]), "intercept": float(est.intercept_),
            "latency_at_max_s": float(est.predict([[at]])[0]), "inliers": int(fit.inlier_mask_.sum())}


def _best_seconds(fn, repeats: int = 3, min_s: float = 0.1) -> float:
    """Best per-call time of FN over REPEATS rounds of at least MIN_S seconds each (after a warm-up call)."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        n, t0 = 0, time.perf_counter()
        while True:
            fn()
            n += 1
            elapsed = time.perf_counter() - t0
            if elapsed >= min_s:
                break
        best = min(best, elapsed / n)
    return best


def matmul_peaks(precision: str, n: int = 1024) -> dict:
    """GFLOP/s of a plain N x N matrix-matrix and matrix-vector product in PRECISION on this CPU, with the threads
    set: the ceilings the models' achieved rates are compared with (measured here, not taken from a data sheet).
    int8: None (dynamic quantisation has no plain-matmul counterpart in torch)."""
    import torch

    if precision == "int8":
        return {"mm_gflops": None, "mv_gflops": None, "n": n}
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    a, b, v = (torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype), torch.randn(n).to(dtype))
    with torch.inference_mode():
        mm = _best_seconds(lambda: torch.mm(a, b))
        mv = _best_seconds(lambda: torch.mv(a, v))
    return {"mm_gflops": 2 * n ** 3 / mm / 1e9, "mv_gflops": 2 * n ** 2 / mv / 1e9, "n": n}


def plot(points: dict, fits: dict, path: Path, title: str) -> None:
    from local_models.common.plots import pyplot, save_figure

    fig, ax = pyplot().subplots(figsize=(6.5, 4))
    for s, pts in points.items():
        sec, lat = zip(*pts)
        line = ax.plot(sec, lat, "o", ms=3, label=s)[0]
        xs = np.array([0, max(sec)])
        ax.plot(xs, fits[s]["intercept"] + fits[s]["slope"] * xs, "-", color=line.get_color())
    ax.set_xlabel("generated speech [s]")
    ax.set_ylabel("inference time [s]")
    ax.set_title(title)
    ax.legend(fontsize=8)
    save_figure(fig, path)


def main(argv=None):
    args = get_parser().parse_args(argv)
    import torch

    from local_models.common.results import cpu_flags, cpu_load, cpu_model, hardware
    from local_models.salad.model import dense_macs_per_frame

    torch.set_num_threads(args.threads)
    recipe = Path(args.recipe).resolve()
    data = inputs(recipe, args.speaker, args.max_files, args.max_seconds, args.long_steps)
    idim = data[0][1].shape[1]
    flags = cpu_flags()
    if "bf16" in args.precision and not any("bf16" in f for f in flags):
        print(f"salad_latency: this CPU has no native bf16 ({' '.join(flags) or 'no flags read'}): bf16 autocast "
              "is emulated and says nothing about AMX machines", flush=True)
    if args.mcd:
        missing = [s for s in args.systems.split() if not (recipe / "exp" / args.speaker / s / "config.yaml").is_file()]
        if missing:
            raise SystemExit(f"salad_latency: --mcd needs trained models: exp/{args.speaker}/{{{','.join(missing)}}} "
                             "missing (run.sh stage 4)")
    report = {"threads": args.threads, "hardware": hardware(), "cpu_model": cpu_model(), "cpu_flags": flags,
              **cpu_load(),
              "max_seconds": args.max_seconds,
              "config_suffix": args.config_suffix, "trained": args.trained, "by_precision": {}}
    out = Path(args.out) if args.out else recipe / "exp" / "latency.json"
    for prec in args.precision:
        points, fits, params, mcd, macs, mcd_params = {}, {}, {}, {}, {}, {}
        for s in args.systems.split():
            net = build(recipe, s, args.config_suffix, idim, args.trained, args.speaker, prec)
            # int8 packs its weights out of parameters(): count them on the fp32 network
            fp32 = net if prec != "int8" else build(recipe, s, args.config_suffix, idim, args.trained, args.speaker,
                                                    "fp32")
            params[s] = sum(p.numel() for p in fp32.parameters())
            macs[s] = dense_macs_per_frame(fp32)
            time_one(net, data[0][1], prec, 1)  # warm-up (allocator, oneDNN kernels)
            points[s] = [(len(x) * SHIFT_S, time_one(net, x, prec, args.repeats)) for _, x in data]
            fits[s] = ransac(*zip(*points[s]), at=args.max_seconds)
            # the longest input as measured: full attention is quadratic, and RANSAC's line can call the
            # long points outliers, so speed-ups are taken from this, not from the fit
            fits[s]["measured_at_max_s"] = max(points[s])[1]
            if args.mcd:
                mcd[s], n = mcd_on_test_set(recipe, args.speaker, s, prec)
                if n is not None:
                    mcd_params[s] = n
            print(f"{prec} {s}: {params[s] / 1e6:.2f} M params, latency at {args.max_seconds:.0f} s "
                  f"{fits[s]['latency_at_max_s']:.3f} s (measured {fits[s]['measured_at_max_s']:.3f} s, slope "
                  f"{fits[s]['slope']:.4f})" + (f", test MCD {mcd[s]:.2f} dB" if s in mcd else ""), flush=True)
        base = fits.get("big_rnn", {}).get("measured_at_max_s")
        for s, f in fits.items():
            f["speedup_vs_big_rnn"] = base / f["measured_at_max_s"] if base else None
            f["params"] = params[s]
            # achieved throughput on the dense work: SALAD's is matrix-matrix (all frames at once), the LSTM's
            # recurrent part matrix-vector (frame by frame), so their ratio bounds the speed-up
            f["dense_macs_per_frame"] = macs[s]
            f["dense_gflops_at_max_s"] = 2 * macs[s] * args.max_seconds / SHIFT_S / f["measured_at_max_s"] / 1e9
        peaks = matmul_peaks(prec)
        for f in fits.values():
            if peaks["mm_gflops"]:
                f["dense_share_of_mm_peak"] = f["dense_gflops_at_max_s"] / peaks["mm_gflops"]
        if peaks["mm_gflops"]:
            print(f"{prec}: plain matmul on this CPU, {args.threads} thread(s): matrix-matrix "
                  f"{peaks['mm_gflops']:.0f} GFLOP/s, matrix-vector {peaks['mv_gflops']:.1f} GFLOP/s "
                  f"(n = {peaks['n']})", flush=True)
        report["by_precision"][prec] = {"fits": fits, "points": points, "matmul_peaks": peaks}
        if mcd:
            report["by_precision"][prec]["test_mcd_db"] = mcd
            if mcd_params:  # the trained models scored (timed ones: fits[s]["params"])
                report["mcd_model_params"] = mcd_params
            report["mcd_speaker"] = args.speaker
        plot(points, fits, out.parent / "images" / f"latency_{prec}.png",  # beside the json the report reads
             f"CPU inference time, {prec}, {args.threads} thread(s) (paper Fig. 3)")
    # the headline (RESULTS.md Table 3): fp32 when measured, as the paper
    head = "fp32" if "fp32" in report["by_precision"] else args.precision[0]
    report.update(precision=head, fits=report["by_precision"][head]["fits"],
                  matmul_peaks=report["by_precision"][head]["matmul_peaks"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    print(f"salad_latency: {out}")


if __name__ == "__main__":
    main()
