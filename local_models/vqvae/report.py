"""ZeroSpeech recipe report (paper 003): collect ABX, bitrate and resynthesis numbers into exp/results.json and
RESULTS.md (Tables 1-3 shapes, the paper's numbers beside ours), the acceptance checks with seed statistics, and
the ABX-vs-bitrate plot. Entry point: `local_models.bin.vqvae_score`."""
import json
import math
import re
import statistics
from pathlib import Path

from local_models.common import gpu_report
from local_models.common.datadir import atomic_open
from local_models.common.plots import pyplot, save_figure
from local_models.common.results import environment_lines, headline_lines, update_results
from local_models.common.training import training_record

from .systems import PAPER  # paper 003 (English test set): system -> (table, label, ABX %, bitrate bits/s)

TABLE_TITLES = {1: "Table 1 shape: MFCC vs log-mel input (Transformer VQ-VAE, K = 128, stride 4)",
                2: "Table 2 shape: conv VQ-VAE (2019) vs Transformer VQ-VAE over codebook size K",
                3: "Table 3 shape: temporal smoothing (lambda) and jitter (p), Transformer VQ-VAE K = 128"}
# Table 2 and 3 repeat the K = 128 MFCC row
TABLE_EXTRA = {2: ["trf_mfcc_k128"], 3: ["trf_mfcc_k128"]}


SEED_RE = re.compile(r"^(?P<base>.+)_seed(?P<seed>[0-9]+)$")


def _load(path: Path):
    return json.loads(path.read_text()) if path.is_file() else None


def collect_system(exp: Path, name: str, sets) -> dict:
    out = {}
    for s in sets:
        m = {}
        abx = _load(exp / name / f"abx_{s}.json")
        if abx:
            m["abx"] = abx["abx_error"]
            if "reference" in abx:
                m["abx_libriabx2"] = abx["reference"]["abx_error"]
                if "ours_same_rule" in abx["reference"]:
                    m["abx_libri_rule"] = abx["reference"]["ours_same_rule"]
        br = _load(exp / name / f"codes_{s}" / "bitrate.json")
        if br:
            m.update(bitrate=br["bitrate"], entropy=br["entropy"], codes_used=br["codes_used"],
                     num_codes=br["num_codes"])
        if m:
            out[s] = m
    return out


def collect_inverter(inv: Path, sets) -> dict:
    out = {}
    for s in sets:
        m = {}
        # one resynth_<set>/<voice>/resynth.json per target voice
        parts = [json.loads(f.read_text()) for f in sorted((inv / f"resynth_{s}").glob("*/resynth.json"))]
        if parts:
            audio = sum(r["audio_s"] for r in parts)
            m.update(resynth_utts=sum(r["utterances"] for r in parts),
                     resynth_rtf=sum(r["rtf"] * r["audio_s"] for r in parts) / max(audio, 1e-9),
                     peak_max=max(r["peak_max"] for r in parts), peak_min=min(r["peak_min"] for r in parts))
        mcd = _load(inv / f"resynth_{s}" / "mcd.json")
        if mcd:  # local_models.common.mcd corpus summary: pooled over frames is the headline
            pooled = mcd.get("mcd_db_frame_pooled", mcd.get("mcd_db"))
            if pooled is not None:
                m["mcd"] = pooled
            m.update({k: v for k, v in mcd.items() if k.startswith(("mcd_db", "lf0", "f0_", "vuv"))
                      and isinstance(v, (int, float)) and not isinstance(v, bool)})
        src = _load(inv / f"resynth_{s}" / "mcd_source.json")
        if src and src.get("mcd_db_frame_pooled") is not None:
            m["mcd_source"] = src["mcd_db_frame_pooled"]
            if src.get("lf0_rmse_frame_pooled") is not None:
                m["lf0_rmse_source"] = src["lf0_rmse_frame_pooled"]
        if m:
            out[s] = m
    return out


def seed_groups(names) -> dict:
    """{base system: [base, base_seed1, ...]} for every base with replicates (`<system>_seed<N>`) in names."""
    groups = {}
    for n in names:
        m = SEED_RE.match(n)
        if m:
            groups.setdefault(m["base"], [m["base"]] if m["base"] in names else []).append(n)
    return groups


def replicated(m: dict) -> bool:
    return (m.get("seeds") or 0) > 1


# ABX under each frame rule: ours (frame centres inside the item) and zerospeech-libriabx2's; the seed statistics
# and the ordering check are given under both, since the rule alone can flip one seed's ordering
ABX_RULES = {"abx": "our frame rule", "abx_libri_rule": "libriabx2's frame rule"}


def add_seed_stats(scored: dict, sets) -> None:
    """Mean and sample sd over training seeds into the base system's metrics (<key>_seed_mean, <key>_seed_sd for
    each ABX_RULES key the seeds all have, bitrate_seed_mean, seeds): at the tiny budget one seed's ABX can move by
    several points. A system scored without replicates gets seeds = 1 (sd null), so a rescoring never keeps an
    earlier run's statistics."""
    for n, by_set in scored.items():
        for m in by_set.values():
            if "abx" in m and not SEED_RE.match(n):
                m.update(bitrate_seed_mean=m.get("bitrate"), seeds=1)
                for key in ABX_RULES:
                    if key in m:
                        m.update({f"{key}_seed_mean": m[key], f"{key}_seed_sd": None})
    for base, members in seed_groups(list(scored)).items():
        for s in sets:
            ms = [scored[n][s] for n in members if s in scored.get(n, {}) and "abx" in scored[n][s]]
            if len(ms) < 2 or s not in scored.get(base, {}):
                continue
            scored[base][s].update(bitrate_seed_mean=statistics.mean(m["bitrate"] for m in ms), seeds=len(ms))
            for key in ABX_RULES:
                vals = [m[key] for m in ms if key in m]
                if len(vals) == len(ms):
                    scored[base][s].update({f"{key}_seed_mean": statistics.mean(vals),
                                            f"{key}_seed_sd": statistics.stdev(vals)})
                else:  # a seed without this rule: no mean over the seeds under it (None: a rescoring clears it)
                    scored[base][s].update({f"{key}_seed_mean": None, f"{key}_seed_sd": None})


def fmt(x, nd=2):
    return "–" if x is None else f"{x:.{nd}f}"


def table_lines(table: int, systems: dict, sets) -> list:
    names = TABLE_EXTRA.get(table, []) + [n for n, v in PAPER.items() if v[0] == table]
    s = sets[0]
    lines = ["", f"## {TABLE_TITLES[table]}", "",
             f"| system | ABX {s} (ours) | mean ± sd over seeds | ours, libriabx2's frame rule | zerospeech-libriabx2 | "
             "bitrate | codes used | paper ABX | paper bitrate |",
             "|---|---|---|---|---|---|---|---|---|"]
    for n in names:
        _, label, pabx, pbr = PAPER[n]
        m = systems.get(n, {}).get(s)
        if m is None:
            lines.append(f"| {label} (`{n}`) | not run here | – | – | – | – | – | {pabx} | {pbr} |")
        else:
            used = f"{m['codes_used']}/{m['num_codes']}" if "codes_used" in m else "–"
            seeds = (f"{fmt(m['abx_seed_mean'])} ± {fmt(m['abx_seed_sd'])} ({m['seeds']})" if replicated(m) else "–")
            libri = fmt(m.get("abx_libri_rule"))
            if replicated(m) and m.get("abx_libri_rule_seed_sd") is not None:
                libri += f"; {fmt(m['abx_libri_rule_seed_mean'])} ± {fmt(m['abx_libri_rule_seed_sd'])} over seeds"
            lines.append(f"| {label} (`{n}`) | {fmt(m.get('abx'))} | {seeds} | {libri} | "
                         f"{fmt(m.get('abx_libriabx2'))} | "
                         f"{fmt(m.get('bitrate'))} | {used} | {pabx} | {pbr} |")
    return lines


def _abx_bitrate(m: dict, key: str = "abx"):
    """(ABX under the frame rule KEY, bitrate, how many seeds): the mean over seeds when replicates were trained."""
    if replicated(m):
        return m[f"{key}_seed_mean"], m["bitrate_seed_mean"], m["seeds"]
    return m[key], m["bitrate"], 1


def welch(mean1, sd1, n1, mean2, sd2, n2, level=0.95):
    """Welch's unequal-variance t-test of mean1 - mean2 from per-seed summaries (sample sds): (difference,
    its `level` confidence interval (lo, hi), t, degrees of freedom, two-sided p). Zero spread on both sides
    (identical seeds) gives a point interval and p 0 (or 1 for no difference)."""
    from scipy import stats

    diff = mean1 - mean2
    v1, v2 = sd1 ** 2 / n1, sd2 ** 2 / n2
    se = (v1 + v2) ** 0.5
    if se == 0:
        return diff, (diff, diff), math.copysign(math.inf, diff) if diff else 0.0, math.inf, 0.0 if diff else 1.0
    df = (v1 + v2) ** 2 / (v1 ** 2 / (n1 - 1) + v2 ** 2 / (n2 - 1))
    t = diff / se
    half = stats.t.ppf(0.5 + level / 2, df) * se
    return diff, (diff - half, diff + half), t, df, float(2 * stats.t.sf(abs(t), df))


def compare_seed_means(trf: dict, conv: dict, paper_trf=None, paper_conv=None, candidates: int = 1,
                       key: str = "abx"):
    """Whether the Transformer-vs-conv ABX difference (frame rule KEY) is told apart from seed-to-seed noise, and
    the line that says so: (clear or None without replicates, line). Both sides replicated: Welch's t-test at 5 %
    with the 95 % interval of the difference, and whether the paper's own difference (paper rows (table, label,
    ABX, bitrate)) lies inside it; when the Transformer was the lowest of `candidates` systems, p is
    Bonferroni-adjusted for that pick. One side replicated: the difference against that side's sd."""
    t_abx, _, t_n = _abx_bitrate(trf, key)
    c_abx, _, c_n = _abx_bitrate(conv, key)
    if replicated(trf) and replicated(conv):
        diff, (lo, hi), t, df, p = welch(t_abx, trf[f"{key}_seed_sd"], t_n, c_abx, conv[f"{key}_seed_sd"], c_n)
        p_adj = min(1.0, p * candidates)
        clear = p_adj < 0.05
        adj = f", {p_adj:.3f} adjusted for picking the lowest of {candidates}" if candidates > 1 else ""
        line = (f"- Difference (Transformer - conv) {diff:+.2f} points, 95 % interval [{lo:+.2f}, {hi:+.2f}] (Welch's "
                f"t = {t:.2f}, df = {df:.1f}, p = {p:.3f}{adj}; {t_n} vs {c_n} seeds): "
                + ("told apart from the seed-to-seed noise." if clear
                   else "not told apart from the seed-to-seed noise at this training budget."))
        if paper_trf and paper_conv:
            pd = paper_trf[2] - paper_conv[2]
            inside = lo <= pd <= hi
            line += (f" The paper's difference ({pd:+.2f}) lies {'inside' if inside else 'OUTSIDE'} the interval"
                     + ("." if inside else ": these models do not show an effect of the paper's size."))
        return clear, line
    sds = [m[f"{key}_seed_sd"] for m in (trf, conv) if replicated(m)]
    if not sds:
        return None, ("- One seed per system: at the tiny budget one seed's ABX moves by several points, so train "
                      "replicates (`<system>_seed<N>` in `--systems`) of both before reading an ordering into this.")
    clear = abs(t_abx - c_abx) >= sds[0]
    return clear, (f"- The difference ({abs(t_abx - c_abx):.2f} points) is "
                   + (f"larger than the replicated side's seed-to-seed sd ({sds[0]:.2f})" if clear else
                      f"smaller than the seed-to-seed sd ({sds[0]:.2f}): at this training budget the two encoders are "
                      "not told apart")
                   + "; replicate both sides for a test.")


def other_rule_lines(best_n: str, best: dict, conv: dict, candidates: int) -> list:
    """The same ordering check (the same Transformer pick) under libriabx2's frame rule, when both systems have it
    (for every seed when replicated)."""
    key = "abx_libri_rule"
    if not all(m.get(f"{key}_seed_mean" if replicated(m) else key) is not None for m in (best, conv)):
        return []
    t_abx, c_abx = _abx_bitrate(best, key)[0], _abx_bitrate(conv, key)[0]
    _, verdict = compare_seed_means(best, conv, candidates=candidates, key=key)
    return [f"- Under {ABX_RULES[key]} (the same models, the same pick): `{best_n}` {fmt(t_abx)} % vs conv "
            f"{fmt(c_abx)} %: the ordering **{'holds' if t_abx < c_abx else 'does NOT hold'}**.",
            "  " + verdict[2:]]


def claims(systems: dict, s: str):
    """The issue's acceptance checks, stated with the numbers behind them: (lines, whether the paper's
    Transformer-below-conv ordering holds, or None when it could not be checked, whether the difference is told
    apart from seed-to-seed noise (compare_seed_means), or None without replicates). Systems with seed
    replicates are compared by their means over seeds, with the seed-to-seed sd beside them."""
    lines, holds, clear = [], None, None
    trf = [(n, m[s]) for n, m in systems.items()
           if n.startswith("trf_mfcc") and not SEED_RE.match(n) and s in m and "abx" in m[s]]
    conv = systems.get("conv_mfcc_k256", {}).get(s)
    if trf and conv and "abx" in conv:
        c_abx, c_br, c_n = _abx_bitrate(conv)
        # comparable bitrate: within 25 % of the conv model's
        near = [(n, m) for n, m in trf if abs(_abx_bitrate(m)[1] - c_br) <= 0.25 * c_br]
        if replicated(conv) and any(replicated(m) for _, m in trf):
            # a lucky single seed does not stand for its system: against a replicated conv baseline only
            # replicated Transformer systems count, even when none of them is near its bitrate
            near = [(n, m) for n, m in near if replicated(m)]
        if near:
            best_n, best = min(near, key=lambda x: _abx_bitrate(x[1])[0])
            t_abx, t_br, t_n = _abx_bitrate(best)
            holds = t_abx < c_abx

            def desc(m, abx, br, n):
                sd = f" ± {fmt(m['abx_seed_sd'])} sd" if replicated(m) else ""
                return f"{fmt(abx)} %{sd} at {fmt(br)} bits/s" + (f", mean of {n} seeds" if n > 1 else ", one seed")

            lines.append(f"- Transformer VQ-VAE ABX below the conv VQ-VAE's at comparable bitrate (within 25 %): "
                         f"**{'holds' if holds else 'does NOT hold'}** (`{best_n}` {desc(best, t_abx, t_br, t_n)} vs "
                         f"conv {desc(conv, c_abx, c_br, c_n)}).")
            if len(near) > 1:  # say what the pick was made from: the lowest of several means favours the Transformer
                others = sorted(near, key=lambda x: _abx_bitrate(x[1])[0])[1:]
                lines.append(f"- The check takes the lowest of {len(near)} Transformer systems within the window; the "
                             "others: " + "; ".join(f"`{n}` {desc(m, *_abx_bitrate(m))}" for n, m in others) + ".")
            clear, verdict = compare_seed_means(best, conv, PAPER.get(best_n), PAPER.get("conv_mfcc_k256"), len(near))
            lines.append(verdict)
            lines += other_rule_lines(best_n, best, conv, len(near))
        else:
            lines.append("- No Transformer system " + ("with seed replicates " if replicated(conv) else "")
                         + "within 25 % of the conv VQ-VAE's bitrate: no like-for-like comparison.")
    rows = [m[s] for m in systems.values() if s in m and "abx_libriabx2" in m[s]]
    same = [abs(r["abx_libri_rule"] - r["abx_libriabx2"]) for r in rows if "abx_libri_rule" in r]
    default = [abs(r["abx"] - r["abx_libriabx2"]) for r in rows if "abx" in r]
    if same:
        lines.append(f"- Our ABX vs zerospeech-libriabx2 on the same inputs with the same frame rule: largest difference "
                     f"{max(same):.2f} points over {len(same)} rows (**{'within' if max(same) <= 1.0 else 'NOT within'} "
                     "1 point**).")
    if default:
        lines.append(f"- With our default frame rule (the frames whose centre lies inside the item, as ZeroSpeech 2019's "
                     f"ABXpy, with the true frame offsets) the largest difference to libriabx2 is {max(default):.2f} "
                     "points: which frames belong to a triphone matters at 40 ms per code (a frame more or less is "
                     "a large share of a ~250 ms item).")
    return lines, holds, clear


def plot_points(systems: dict, s: str) -> list:
    """What the ABX-vs-bitrate plot draws: one point per system, at its mean over seeds with the seed sd as an
    error bar when it has replicates ((label, bitrate, abx, sd or None, seeds)), and each replicate's own
    (bitrate, abx) as a faint unlabelled point ((None, bitrate, abx, None, 1))."""
    pts = []
    for n, by_set in systems.items():
        m = by_set.get(s)
        if not m or "abx" not in m or "bitrate" not in m:
            continue
        if SEED_RE.match(n):
            pts.append((None, m["bitrate"], m["abx"], None, 1))
            continue
        abx, br, seeds = _abx_bitrate(m)
        label = n.replace("_mfcc", "")  # MFCC is the default input: trf_k128, trf_logmel_k128, conv_k256
        pts.append((label, br, abx, m["abx_seed_sd"] if seeds > 1 else None, seeds))
        if seeds > 1:  # the base system is seed 0 of its replicates: draw its own run too
            pts.append((None, m["bitrate"], m["abx"], None, 1))
    return pts


LABEL_PT = 7           # label font size (points)
LABEL_STEPS = (5, -11, 16, -22, 27, -33, 38, -44)  # vertical offsets tried, nearest first (points)


def label_offsets(anchors) -> list:
    """Vertical offsets (points) of the point labels, so that no two label boxes overlap where a free place is
    within LABEL_STEPS. ANCHORS: (x, y, width) of each label's point and text width, in points on the page. Greedy,
    from the highest point down: each label takes the first offset whose box (x + 4 .. x + 4 + width, height
    LABEL_PT + 1) meets no box placed so far (else the first offset)."""
    placed, out = [], [LABEL_STEPS[0]] * len(anchors)

    def box(i, dy):
        x, y, w = anchors[i]
        return x + 4, y + dy, x + 4 + w, y + dy + LABEL_PT + 1

    def free(b):
        return all(b[2] <= q[0] or q[2] <= b[0] or b[3] <= q[1] or q[3] <= b[1] for q in placed)

    for i in sorted(range(len(anchors)), key=lambda i: -anchors[i][1]):
        out[i] = next((dy for dy in LABEL_STEPS if free(box(i, dy))), LABEL_STEPS[0])
        placed.append(box(i, out[i]))
    return out


def plot(systems: dict, s: str, path: Path) -> bool:
    pts = plot_points(systems, s)
    if not pts:
        return False
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for label, br, abx, _, _ in pts:
        if label is None:
            ax.scatter(br, abx, s=10, color="gray", alpha=0.5)
    labelled = [p for p in pts if p[0] is not None]
    for label, br, abx, sd, seeds in labelled:
        ax.errorbar(br, abx, yerr=sd, fmt="o", color="tab:red" if label.startswith("conv") else "tab:blue", capsize=3)
    ax.set_xlabel("bitrate (bits/s)")
    ax.set_ylabel(f"ABX error on {s} (%)")
    ax.set_title("ABX vs bitrate (blue: Transformer, red: conv VQ-VAE;\n"
                 "bars: mean ± sd over seeds, gray: single seeds)", fontsize=9)
    ax.grid(alpha=0.3)
    texts = [label + (f" ({seeds} seeds)" if seeds > 1 else "") for label, _, _, _, seeds in labelled]
    ax.autoscale_view()
    fig.tight_layout()  # as save_figure lays it out: the data-to-page transform the labels are placed with
    page = ax.transData.transform([(br, abx) for _, br, abx, _, _ in labelled]) * 72.0 / fig.dpi
    offsets = label_offsets([(x, y, 0.6 * LABEL_PT * len(t)) for (x, y), t in zip(page, texts)])
    for (_, br, abx, _, _), text, dy in zip(labelled, texts, offsets):
        ax.annotate(text, (br, abx), fontsize=LABEL_PT, xytext=(4, dy), textcoords="offset points")
    save_figure(fig, path, dpi=90)
    return True


DEPARTURES = [
    "Encoder without position encoding (paper Fig. 3a gives it none; only the inverter adds sinusoidal PE); "
    "`pos_enc: true` in the config adds it.",
    "Codebook: EMA updates as the paper's reference [17] (decay 0.99). Not in the paper but needed for the codebook "
    "to be used at all: the codes start from the first training batch's encoder outputs, and a code whose EMA "
    "count falls below one frame is restarted at a random encoder output of the batch (fixed, not a config "
    "option).",
    "Loss scale: the reconstruction error is averaged over frames and feature dimensions, the commitment (eq. 7) "
    "and smoothing (eq. 9) terms are summed over the code's dimensions and averaged over codes (resp. adjacent "
    "code pairs). If the paper's squared norms are sums over dimensions (it does not say), a weight here "
    "(commitment, smooth_weight) is the paper's divided by the feature dimension, the reconstruction being a mean "
    "over it.",
]


def _span(values) -> str:
    """'48' when all equal, else 'lo-hi (median m)'."""
    lo, hi = min(values), max(values)
    return f"{lo}" if lo == hi else f"{lo}-{hi} (median {statistics.median(values):g})"


def training_line(exp: Path, systems, inverter: Path) -> str:
    """How the scored models were trained, read from their exp dirs (config, epochs run, the epoch of the checkpoint
    that stage 5 encodes with, device): the budget every 'at this training budget' below refers to."""
    groups = {}
    for d in [exp / n for n in systems] + sorted(p.parent for p in Path(inverter).glob("*/train.log")):
        r = training_record(d)
        if r:
            kind = "codebook inverter" if d.parent == Path(inverter) else "VQ-VAE"
            groups.setdefault((kind, r["config"]), []).append(r)
    if not groups:
        return ""
    parts = []
    for (kind, conf), g in groups.items():
        best = [r["best_epoch"] for r in g if "best_epoch" in r]
        parts.append(f"{len(g)} {kind}{'s' if len(g) > 1 else ''} from `{conf}`, {_span([r['epochs_run'] for r in g])} "
                     "epochs" + (f", scored at the best validation loss, epoch {_span(best)}" if best else ""))
    gpus = {r["ngpu"] for g in groups.values() for r in g}
    where = "on the CPU" if gpus == {0} else f"with --ngpu {'/'.join(map(str, sorted(gpus)))}"
    return f"Training (this run, {where}): " + "; ".join(parts) + "."


def write_md(path: Path, results: dict, sets, corpus: str, inverter: str, plot_ok: bool, training: str = "") -> None:
    systems = results["systems"]
    s = sets[0]
    base = systems.get("mfcc_baseline", {}).get(s, {})
    lines = [
        "# ZeroSpeech 2019 unit discovery (paper 003): results", "",
        f"Corpus: **{corpus}**" + (" (the espeak-ng English mini corpus: synthetic voices, NOT comparable with the "
                                   "paper's ZeroSpeech 2019 English numbers, which stand beside ours for shape only)"
                                   if corpus == "mini" else "") + f". Commit {results.get('commit')}, {results.get('hardware')}.",
        "",
        *environment_lines(results.get("environment") or {}), *([training, ""] if training else []),
        *headline_lines(results.get("headline")),
        "Metrics (ZeroSpeech 2019): ABX error = across-speaker, within-context triphone discrimination; DTW over the",
        "angular distance arccos(cos)/pi between frames (codes evaluated as their codebook embeddings, one per 40 ms);",
        "scores averaged over contexts, then speakers, then phone pairs; error = (1 - score) x 100. Bitrate = (N / D) x H:",
        "N symbols over the bitrate list, D its total duration (s), H the entropy (bits) of the symbol distribution.",
        "",
        f"Reference row: raw MFCC 39 (10 ms frames) ABX on {s}: **{fmt(base.get('abx'))} %** "
        f"(zerospeech-libriabx2: {fmt(base.get('abx_libriabx2'))} %).",
    ]
    for t in (1, 2, 3):
        lines += table_lines(t, systems, sets)
    checks, ordering_holds, ordering_clear = claims(systems, s)
    lines += ["", "## Checks", ""] + (checks or ["- not enough systems run to check the paper's claims"])
    inv = systems.get("inverter", {}).get(s)
    lines += ["", f"## Resynthesis in the target voice (codebook inverter + Griffin-Lim, `{inverter}`)", ""]
    if inv:
        mcd = inv.get("mcd")
        lines += [f"- {inv.get('resynth_utts', 0)} {s} utterances resynthesised (wavs in {inverter}/resynth_{s}/<voice>/wav, "
                  "one inverter per target voice), "
                  f"RTF {fmt(inv.get('resynth_rtf'), 3)}, peak level {fmt(inv.get('peak_min'))}-{fmt(inv.get('peak_max'))}.",
                  f"- MCD against the same text spoken by the target voice (DTW-aligned mel-cepstra, pooled over frames): "
                  f"{fmt(mcd) + ' dB' if mcd is not None else 'no reference rendition (real corpus: listen, or use the challenge MOS)'}."]
        if "mcd_source" in inv:
            lines.append(f"- Reference point: the test speakers' own recordings against the target voice (no conversion): "
                         f"MCD {fmt(inv['mcd_source'])} dB, log-F0 RMSE {fmt(inv.get('lf0_rmse_source'), 3)} "
                         f"(resynthesis: {fmt(inv.get('lf0_rmse_frame_pooled'), 3)}). An MCD below the reference point "
                         "means the resynthesis moved toward the target voice's spectra; the inverter sees 40 ms codes "
                         "only, and Griffin-Lim's phase adds its own distortion.")
    else:
        lines.append("- not run (stages 7-8)")
    if plot_ok:
        lines += ["", "## ABX vs bitrate", "", "![ABX vs bitrate](exp/images/abx_vs_bitrate.png)"]
    missing = [n for n in PAPER if n not in systems]
    lines += ["", "## How these models differ from the paper (or fill what it leaves open)", ""]
    lines += [f"- {d}" for d in DEPARTURES]
    lines += gpu_report.section("zerospeech2019/unit1")
    lines += ["", "## Not done yet", ""]
    if missing:
        lines.append(f"- Not run here (rows carry the paper's numbers only): {', '.join(f'`{n}`' for n in missing)}; "
                     "give them with `--systems`.")
    if ordering_holds is False:
        lines.append("- The paper's ordering (Transformer VQ-VAE below the conv VQ-VAE) is not reproduced at this "
                     "training budget; whether it appears with longer training or the paper-size configs is untested.")
    elif ordering_holds and ordering_clear is False:
        lines.append("- The paper's ordering (Transformer VQ-VAE below the conv VQ-VAE) holds on the means only and is "
                     "not told apart from the seed-to-seed noise (see Checks): not a reproduction at this training "
                     "budget; whether it is clearer with longer training or the paper-size configs is untested.")
    lines.append("- Models are the tiny configs unless `--train-config-suffix \"\"` (paper size) was given: see "
                 "exp/<system>/config.yaml.")
    with atomic_open(path) as f:
        f.write("\n".join(lines) + "\n")


def headline(systems: dict, s: str) -> list:
    """The measured claims README's row gives (results.json 'headline'): the checks and the resynthesis MCD."""
    out = [line.strip()[2:] if line.startswith("- ") else line.strip() for line in claims(systems, s)[0]]
    inv = systems.get("inverter", {}).get(s) or {}
    if inv.get("mcd") is not None:
        out.append(f"resynthesis in the target voice: MCD {fmt(inv['mcd'])} dB against its rendition of the text"
                   + (f" (the source speaker's own recording: {fmt(inv['mcd_source'])} dB)" if "mcd_source" in inv
                      else ""))
    return out


def score(systems, sets, inverter: str, corpus: str, exp="exp", results_md="RESULTS.md") -> dict:
    """Collect every system (plus the raw-MFCC baseline and the inverter), update exp/results.json, draw the
    plot and write RESULTS.md; returns the freshly collected {system: {set: metrics}}."""
    exp = Path(exp)
    scored = {n: collect_system(exp, n, sets) for n in ["mfcc_baseline", *systems]}
    add_seed_stats(scored, sets)
    scored["inverter"] = collect_inverter(Path(inverter), sets)
    results = update_results(exp / "results.json", "zerospeech2019/unit1", corpus, scored,
                             headline=lambda systems: headline(systems, sets[0]))
    ok = plot({n: m for n, m in results["systems"].items() if n in systems}, sets[0],
              exp / "images" / "abx_vs_bitrate.png")
    write_md(Path(results_md), results, sets, corpus, inverter, ok, training_line(exp, systems, Path(inverter)))
    return scored


def summary_lines(scored: dict) -> list:
    """One log line per (system, set): its float metrics."""
    return [f"vqvae_score: {n:28s} {s:6s} " + "  ".join(f"{k} {x:.2f}" for k, x in v.items() if isinstance(x, float))
            for n, m in scored.items() for s, v in m.items()]
