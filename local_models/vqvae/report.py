"""ZeroSpeech recipe report (paper 003): collect ABX, bitrate and resynthesis numbers into exp/results.json and
RESULTS.md (Tables 1-3 shapes, the paper's numbers beside ours), the acceptance checks with seed statistics, and
the ABX-vs-bitrate plot. Entry point: `local_models.bin.vqvae_score`."""
import dataclasses
import json
import re
import statistics
from pathlib import Path
from typing import Optional

from local_models.common import gpu_report
from local_models.common import verdict as vd
from local_models.common.datadir import read_table
from local_models.common.mcd import pooled_difference
from local_models.common.plots import pyplot, save_figure, write_report
from local_models.common.results import environment_lines, headline_lines, update_results
from local_models.common.sealed import record_line, score_looks
from local_models.common.training import training_record

from .systems import CANDIDATES, PAPER  # paper 003 (English test set): system -> (table, label, ABX %, bitrate bits/s)

TABLE_TITLES = {1: "Table 1 shape: MFCC vs log-mel input (Transformer VQ-VAE, K = 128, stride 4)",
                2: "Table 2 shape: conv VQ-VAE (2019) vs Transformer VQ-VAE over codebook size K",
                3: "Table 3 shape: temporal smoothing (lambda) and jitter (p), Transformer VQ-VAE K = 128"}
# Table 2 and 3 repeat the K = 128 MFCC row
TABLE_EXTRA = {2: ["trf_mfcc_k128"], 3: ["trf_mfcc_k128"]}


SEED_RE = re.compile(r"^(?P<base>.+)_seed(?P<seed>[0-9]+)$")


def _load(path: Path):
    return json.loads(path.read_text()) if path.is_file() else None


def scored_outputs(exp: Path, inverter: Path, s: str, data: Path = None) -> list:
    """The files a scoring of set S reads (every system's ABX and bitrate, the inverter's resynthesis records and
    MCDs, DATA/S/abx_na): the same files scored again by the same clean commit are a rescoring, not a look
    (common/sealed.py)."""
    return [*exp.glob(f"*/abx_{s}.json"), *exp.glob(f"*/codes_{s}/bitrate.json"),
            *inverter.glob(f"resynth_{s}/*/resynth.json"),
            *(inverter / f"resynth_{s}" / name for name in ("mcd.json", "mcd_source.json")),
            *([data / s / "abx_na"] if data is not None else [])]


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
                m["mcd_f0_method"] = mcd.get("settings", {}).get("f0_method", "harvest")
            m.update({k: v for k, v in mcd.items() if k.startswith(("mcd_db", "lf0", "f0_", "vuv"))
                      and isinstance(v, (int, float)) and not isinstance(v, bool)})
        src = _load(inv / f"resynth_{s}" / "mcd_source.json")
        if src and src.get("mcd_db_frame_pooled") is not None:
            m["mcd_source"] = src["mcd_db_frame_pooled"]
            if src.get("lf0_rmse_frame_pooled") is not None:
                m["lf0_rmse_source"] = src["lf0_rmse_frame_pooled"]
            gap = source_gap(mcd or {}, src)
            if gap is not None:
                m["mcd_source_gap"] = gap
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
    """Mean, sample sd and values over training seeds into the base system's metrics (<key>_seed_mean, <key>_seed_sd,
    <key>_seed_values: Welch's interval is computed from them, for each ABX_RULES key the seeds all have;
    bitrate_seed_mean, seeds): at the tiny budget one seed's ABX can move by several points. A system scored without
    replicates gets seeds = 1 (sd null), so a rescoring never keeps an earlier run's statistics."""
    for n, by_set in scored.items():
        for m in by_set.values():
            if "abx" in m and not SEED_RE.match(n):
                m.update(bitrate_seed_mean=m.get("bitrate"), seeds=1)
                for key in ABX_RULES:
                    if key in m:
                        m.update({f"{key}_seed_mean": m[key], f"{key}_seed_sd": None, f"{key}_seed_values": [m[key]]})
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
                                            f"{key}_seed_sd": statistics.stdev(vals), f"{key}_seed_values": vals})
                else:  # a seed without this rule: no mean over the seeds under it (None: a rescoring clears it)
                    scored[base][s].update({f"{key}_seed_mean": None, f"{key}_seed_sd": None,
                                            f"{key}_seed_values": None})


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


def seed_values(m: dict, key: str = "abx") -> list:
    """The per-seed ABX values (frame rule KEY) behind M's mean ([] when a seed lacks the rule): what Welch's interval
    is computed from. Results written before the values were kept give the single run's value."""
    vals = m.get(f"{key}_seed_values")
    if vals is None:
        return [m[key]] if m.get(key) is not None and not replicated(m) else []
    return list(vals)


# The ordering check's candidates: declared (systems.py COMPARED), never chosen on test. Where the run has a dev ABX
# set (the mini corpus's data/dev), the candidate with the lowest dev ABX is the one compared with the conv baseline
# on test, at 95 %. ZeroSpeech 2019 scores ABX on its test set only: there no candidate is picked, each is compared
# on its own at a Bonferroni-adjusted level (95 % over the family), and none is preferred for its score.
CONV = "conv_mfcc_k256"
# how a candidate came to be compared: said beside its verdict (a later addition is a second look at test)
HISTORY = {"trf_mfcc_k256": "K 256 was added to the compared systems after the K 128 comparison failed on test"}
PAPER_SIGN = -1  # the paper: Transformer ABX below the conv's (Transformer - conv < 0)


def candidates(names) -> list:
    """The Transformer systems the ordering check compares with the conv baseline: CANDIDATES among NAMES (the
    run's --systems, names only: the same with or without the sealed sets' data)."""
    return [n for n in CANDIDATES if n in names]


def _desc(m: dict, key: str = "abx") -> str:
    abx, br, n = _abx_bitrate(m, key)
    sd = f" ± {fmt(m[f'{key}_seed_sd'])} sd" if replicated(m) and m.get(f"{key}_seed_sd") is not None else ""
    return f"{fmt(abx)} %{sd} at {fmt(br)} bits/s, " + (f"mean of {n} seeds" if n > 1 else "one seed")


def ordering_verdict(name: str, trf: dict, conv: dict, key: str = "abx", level: float = vd.LEVEL):
    """(verdict or None without an interval, line) of candidate NAME against the conv baseline under frame rule KEY:
    Welch's interval of the difference of the seed means at LEVEL, judged by verdict.compare against the paper's
    sign, and whether the paper's own difference lies inside it."""
    head = (f"Transformer VQ-VAE ABX below the conv VQ-VAE's ({ABX_RULES[key]}), `{name}` {_desc(trf, key)} vs conv "
            f"{_desc(conv, key)}")
    t_vals, c_vals = seed_values(trf, key), seed_values(conv, key)
    if len(t_vals) < 2 or len(c_vals) < 2:
        return None, (head + ": no interval (one seed on a side: at the tiny budget one seed's ABX moves by several "
                      "points; train replicates `<system>_seed<N>` of both).")
    diff = vd.welch(t_vals, c_vals, level=level, what="seeds")
    v = vd.compare(diff, PAPER_SIGN)
    line = vd.sentence(head + ", Transformer - conv", v, diff)
    if key == "abx" and name in PAPER and CONV in PAPER:
        pd = PAPER[name][2] - PAPER[CONV][2]
        inside = diff.low <= pd <= diff.high
        line += (f" The paper's difference ({pd:+.2f}) lies {'inside' if inside else 'OUTSIDE'} the interval"
                 + ("." if inside else ": these models do not show an effect of the paper's size."))
    if key == "abx" and name in HISTORY:  # said once, on the first rule's line
        line += f" ({HISTORY[name]}.)"
    return v, line


def dev_pick(systems: dict, dev: str):
    """(the candidate picked on DEV or None, the line that says how): the declared candidate with the lowest ABX on
    the dev set (our frame rule, the mean over seeds when replicated). None when the run has no dev ABX of any
    candidate (ZeroSpeech 2019): then every candidate is compared and none picked (pick_line)."""
    if not dev:
        return None, ""
    on_dev = {n: _abx_bitrate(systems[n][dev]) for n in candidates(systems)
              if (systems[n].get(dev) or {}).get("abx") is not None}
    if not on_dev:
        return None, ""
    name = min(on_dev, key=lambda n: (on_dev[n][0], n))
    conv = (systems.get(CONV) or {}).get(dev)
    unscored = [n for n in candidates(systems) if n not in on_dev]
    return name, (f"Candidate picked on `{dev}` (the declared Transformer with the lowest dev ABX, our frame rule; "
                  "the test set played no part): " + ", ".join(f"`{n}` {fmt(a)} % ({k} seed{'s' * (k > 1)})"
                                                               for n, (a, _, k) in on_dev.items())
                  + (f" (conv `{CONV}` {fmt(_abx_bitrate(conv)[0])} % on dev)" if conv and "abx" in conv else "")
                  + f" -> `{name}`, the one compared with `{CONV}` on test, at 95 %; the others' test rows are in "
                  "the tables and judge nothing"
                  + (f" (no dev ABX, not candidates here: {', '.join(f'`{n}`' for n in unscored)})" if unscored else "")
                  + "." + "".join(f" ({HISTORY[n]}.)" for n in candidates(systems) if n != name and n in HISTORY))


def ordering_lines(systems: dict, s: str, key: str = "abx", only: str = None):
    """({candidate: verdict or None}, lines, how many intervals) of the candidates scored on S against the conv
    baseline under frame rule KEY: ONLY (the one picked on dev) at 95 %, else every candidate, each at
    1 - 0.05 / (number of candidates with an interval), none picked."""
    def has(m):  # measured under KEY, by every seed when replicated
        return bool(m) and m.get(f"{key}_seed_mean" if replicated(m) else key) is not None

    conv = systems.get(CONV, {}).get(s)
    if not has(conv):
        return {}, [], 0
    scored = [(n, systems[n][s]) for n in candidates(systems) if has(systems[n].get(s)) and only in (None, n)]
    family = sum(len(seed_values(m, key)) >= 2 for _, m in scored) if len(seed_values(conv, key)) >= 2 else 0
    level = vd.family_level(family)
    verdicts, lines = {}, []
    for n, m in scored:
        verdicts[n], line = ordering_verdict(n, m, conv, key, level)
        lines.append(line)
    return verdicts, lines, family


def pick_line(names, family: int, dev: str = "") -> str:
    """How the candidates were chosen (declared, none picked on test, and why: no dev set, or none of them has an
    ABX on DEV) and the level of FAMILY intervals."""
    cands = candidates(names)
    each = "each" if len(cands) > 1 else "it"
    why = f"no candidate has an ABX on `{dev}`" if dev else "this run has no dev ABX set"
    return (f"Candidates: {', '.join(f'`{n}`' for n in cands)} (declared in systems.py COMPARED, none picked: "
            f"{why}, and the lower of two on test would favour the Transformer); {each} is "
            f"compared with `{CONV}` on its own" + (f", at {100 * vd.family_level(family):.4g} % per interval "
                                                    f"(95 % over the {family} comparisons, Bonferroni)"
                                                    if family > 1 else "") + ".")


def claims(systems: dict, s: str, dev: str = ""):
    """The issue's acceptance checks, stated with the numbers behind them: (lines, {candidate: verdict or None} under
    our frame rule). The Transformer candidate picked on DEV (every declared one when there is no dev ABX) is
    compared with the conv baseline by Welch's interval over training seeds (verdict.compare: 'holds' only when the
    whole interval lies on the paper's side), under our frame rule and libriabx2's."""
    lines = []
    pick, how = dev_pick(systems, dev)
    verdicts, ours, family = ordering_lines(systems, s, only=pick)
    if ours:
        libri = ordering_lines(systems, s, "abx_libri_rule", only=pick)[1]
        lines += ours + [how if pick else pick_line(systems, family, dev)] + libri
    elif pick and systems.get(CONV, {}).get(s):
        lines += [f"- `{pick}`, the candidate picked on `{dev}`, has no ABX on {s}: no ordering check.", how]
    elif systems.get(CONV, {}).get(s):
        lines.append("- No declared Transformer candidate (" + ", ".join(f"`{n}`" for n in CANDIDATES)
                     + ") was scored: no ordering check.")
    lines = [line if line.startswith("- ") else f"- {line}" for line in lines]
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
    return lines, verdicts


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
    cut = sorted({r["max_epoch"] for g in groups.values() for r in g if _cut_short(r)})
    head = (f"**A short partial run: {'/'.join(map(str, cut))} epochs** (--train_args --max_epoch; the configs' "
            "schedules are longer), so these models are not trained to the recipe's length. " if cut else "")
    return f"{head}Training (this run, {where}): " + "; ".join(parts) + "."


def _cut_short(record: dict) -> bool:
    """Whether a run's max_epoch is below its config file's (--train_args "--max_epoch N"): a short partial run."""
    import yaml

    conf = Path(record.get("config") or "")
    return bool(record.get("max_epoch")) and conf.is_file() and \
        record["max_epoch"] < yaml.safe_load(conf.read_text(encoding="utf-8")).get("max_epoch", 0)


def source_gap(mcd: dict, src: dict) -> Optional[dict]:
    """Resynthesis - unconverted source pooled MCD (dB) with its 95 % paired bootstrap interval over the utterances
    both scored (mcd.json / mcd_source.json per_utt sums), as {estimate, low, high, method}; None under 2 utterances
    or without per-utterance sums (older scorings)."""
    a, b = mcd.get("per_utt") or {}, src.get("per_utt") or {}
    utts = sorted(u for u in set(a) & set(b) if a[u].get("frames") and b[u].get("frames"))
    if len(utts) < 2:
        return None
    cols = [[d[u][k] for u in utts] for d in (a, b) for k in ("mcd_sum_db", "frames")]
    return dataclasses.asdict(vd.bootstrap(pooled_difference, *cols, what="utterances"))


def source_words(inv: dict) -> tuple:
    """(relation, gap text, meaning) of the resynthesis's MCD against the unconverted source's: judged on the gap's
    interval where there is one (below / NOT below / not told apart from), else on the point values (older runs)."""
    mcd, src, gap = inv["mcd"], inv["mcd_source"], inv.get("mcd_source_gap")
    if gap:
        iv = vd.Interval(**gap)
        text = f"{iv.estimate:+.2f} [{iv.low:+.2f}, {iv.high:+.2f}] dB, {iv.level * 100:.4g} % {iv.method}"
        said = vd.compare(iv, -1)  # the resynthesis is meant to lie below the source
    else:
        text, said = f"{mcd - src:+.2f} dB", vd.HOLDS if mcd < src else vd.DOES_NOT_HOLD
    return {vd.HOLDS: ("below", text, "moved toward the target voice"),
            vd.DOES_NOT_HOLD: ("NOT below", text, "further from the target voice than no conversion"),
            vd.NOT_TOLD_APART: ("not told apart from", text,
                                "neither nearer nor further than no conversion, by this measure")}[said]


def mcd_against_source(inv: dict) -> str:
    """Whether the resynthesis's MCD (against the target voice's rendition) beats the unconverted source recording's:
    the resynthesis is meant to move toward the target voice, so an MCD above the source's is a failure to."""
    if inv.get("mcd") is None or inv.get("mcd_source") is None:
        return ""
    relation, gap, meaning = source_words(inv)
    return (f"The resynthesis's MCD {fmt(inv['mcd'])} dB is {relation} the unconverted source's "
            f"{fmt(inv['mcd_source'])} dB ({gap}): {meaning}.")


def not_done_ordering(verdicts: dict, picked: str = None) -> str:
    """The 'Not done yet' line on the paper's ordering from the candidates' verdicts ({name: verdict or None}; one,
    PICKED, when the candidate was picked on dev)."""
    if vd.HOLDS in verdicts.values():
        held = [n for n, v in verdicts.items() if v == vd.HOLDS]
        if picked:
            return (f"- The paper's ordering holds for `{picked}`, the candidate picked on dev (the only one judged), "
                    "at this training budget; the paper-size configs are untested.")
        return (f"- The paper's ordering holds for {', '.join(f'`{n}`' for n in held)} only (see Checks); the other "
                "candidates' intervals do not show it at this training budget.") if len(held) < len(verdicts) else (
                "- The paper's ordering holds for every candidate at this training budget; the paper-size configs "
                "are untested.")
    if vd.DOES_NOT_HOLD in verdicts.values():
        return ("- The paper's ordering (Transformer VQ-VAE below the conv VQ-VAE) is reversed at this training "
                "budget for " + ", ".join(f"`{n}`" for n, v in verdicts.items() if v == vd.DOES_NOT_HOLD)
                + "; whether it appears with longer training or the paper-size configs is untested.")
    if all(v is None for v in verdicts.values()):
        return ("- The paper's ordering (Transformer VQ-VAE below the conv VQ-VAE) is not checked: no candidate has an "
                "interval (one seed on a side); train replicates `<system>_seed<N>` of both.")
    return ("- The paper's ordering (Transformer VQ-VAE below the conv VQ-VAE) is not shown: no candidate's interval "
            "lies below zero (see Checks), so these runs cannot tell the encoders apart at this training budget; "
            "whether longer training or the paper-size configs can is untested.")


def _set_line(name: str, d: Path) -> str:
    """'- NAME (`d`): N clips, M min, S speakers (...)' of one data dir (minutes from utt2dur, when it has one)."""
    spk = read_table(d / "utt2spk")
    speakers = sorted(set(spk.values()))
    durs = d / "utt2dur"
    minutes = f", {sum(float(v) for v in read_table(durs).values()) / 60:.1f} min" if durs.is_file() else ""
    named = f": {', '.join(f'`{x}`' for x in speakers)}" if len(speakers) <= 6 else ""
    line = f"- {name} (`{d}`): {len(spk)} clips{minutes}, {len(speakers)} speaker(s){named}"
    if (d / "voice_ref.scp").is_file():
        refs = read_table(d / "voice_ref.scp")
        line += (f"; {len(refs)} of its clips have a recording of the same line by the target voice (voice_ref.scp, "
                 f"{len(set(refs.values()))} recordings, in no training set): stage 8 resynthesises and scores those")
    return line


def data_lines(data: Path, sets) -> list:
    """'## Data (this run)': clips, minutes and speakers of data/{train,voice} and of each scored set."""
    names = {"train": "train (VQ-VAE: unit discovery)", "voice": "voice (the inverter's target voice)"}
    lines = [_set_line(names.get(x, f"{x} (scored, unseen speakers)"), Path(data) / x)
             for x in dict.fromkeys(["train", "voice", *sets]) if (Path(data) / x / "utt2spk").is_file()]
    return ["## Data (this run)", "", *lines, ""] if lines else []


K_RE = re.compile(r"^trf_mfcc_k(?P<k>[0-9]+)$")


def bitrate_lines(systems: dict, s: str) -> list:
    """The paper's claims on bitrate, checkable without ABX: every scored row's bitrate beside the paper's, and
    whether it grows with the codebook size K (Table 2's Transformer rows: 141.82 < 170.42 < 194.69 < 217.47)."""
    lines = ["| system | bitrate (bits/s) | codes used | paper bitrate | ours / paper |", "|---|---|---|---|---|"]
    measured = False
    for n, (_, label, _, pbr) in PAPER.items():
        m = systems.get(n, {}).get(s)
        if m and "bitrate" in m:
            measured = True
            lines.append(f"| {label} (`{n}`) | {fmt(m['bitrate'])} | {m['codes_used']}/{m['num_codes']} | {pbr} | "
                         f"{m['bitrate'] / pbr:.2f} |")
        else:
            lines.append(f"| {label} (`{n}`) | not run here | – | {pbr} | – |")
    if not measured:
        return ["- no system's bitrate was measured (stage 5)"]
    ks = sorted((int(K_RE.match(n)["k"]), m[s]["bitrate"]) for n, m in systems.items()
                if K_RE.match(n) and "bitrate" in m.get(s, {}))
    if len(ks) > 1:
        grows = "holds" if all(a[1] < b[1] for a, b in zip(ks, ks[1:])) else "does NOT hold"
        lines += ["", f"- Bitrate grows with the codebook size K (paper Table 2): **{grows}** ("
                  + ", ".join(f"K {k}: {fmt(b)}" for k, b in ks) + " bits/s)."]
    return lines


def dev_lines(systems: dict, dev: str) -> list:
    """'## Dev': the dev ABX (our frame rule) of the raw-MFCC reference, the conv baseline and the declared
    candidates, the numbers the ordering check's pick is made on."""
    rows = [(n, (systems.get(n) or {}).get(dev)) for n in ("mfcc_baseline", CONV, *CANDIDATES)]
    rows = [(n, m) for n, m in rows if m and m.get("abx") is not None]
    if not rows:
        return []
    lines = ["", f"## Dev (`{dev}`): where the ordering check's candidate is picked", "",
             "| system | ABX dev (ours) | mean ± sd over seeds | bitrate |", "|---|---|---|---|"]
    for n, m in rows:
        seeds = f"{fmt(m['abx_seed_mean'])} ± {fmt(m['abx_seed_sd'])} ({m['seeds']})" if replicated(m) else "–"
        lines.append(f"| `{n}` | {fmt(m['abx'])} | {seeds} | {fmt(m.get('bitrate'))} |")
    return lines


def write_md(path: Path, results: dict, sets, corpus: str, inverter: str, plot_ok: bool, training: str = "",
             data: tuple = (), abx_na: str = "", dev: str = "", images: Optional[Path] = None) -> None:
    """RESULTS.md. DATA: the '## Data (this run)' lines; ABX_NA: why the scored set has no ABX (a corpus without
    phone times): the ABX tables and checks give way to that reason and the claims checkable without ABX; DEV: the
    set the ordering check's candidate is picked on ("" none); IMAGES: the run's exp/images (plots.write_report)."""
    systems = results["systems"]
    s = sets[0]
    base = systems.get("mfcc_baseline", {}).get(s, {})
    lines = [
        "# ZeroSpeech 2019 unit discovery (paper 003): results", "",
        f"Corpus: **{corpus}**" + (" (the espeak-ng English mini corpus: synthetic voices, NOT comparable with the "
                                   "paper's ZeroSpeech 2019 English numbers, which stand beside ours for shape only)"
                                   if corpus == "mini" else "") + f". Commit {results.get('commit')}, {results.get('hardware')}.",
        "", *([record_line(results["sealed_looks"]), ""] if "sealed_looks" in results else []),
        *environment_lines(results.get("environment") or {}), *([training, ""] if training else []),
        *headline_lines(results.get("headline")),
        "Metrics (ZeroSpeech 2019): ABX error = across-speaker, within-context triphone discrimination; DTW over the",
        "angular distance arccos(cos)/pi between frames (codes evaluated as their codebook embeddings, one per 40 ms);",
        "scores averaged over contexts, then speakers, then phone pairs; error = (1 - score) x 100. Bitrate = (N / D) x H:",
        "N symbols over the bitrate list, D its total duration (s), H the entropy (bits) of the symbol distribution.",
        "", *data,
    ]
    if abx_na:
        lines += [f"## ABX: n/a on {s}", "", f"- ABX error (every row, the raw-MFCC reference too): **n/a**. {abx_na}",
                  "", f"## Bitrate on {s} (the paper's claims checkable without ABX)", "", *bitrate_lines(systems, s)]
        ordering = {}
    else:
        lines.append(f"Reference row: raw MFCC 39 (10 ms frames) ABX on {s}: **{fmt(base.get('abx'))} %** "
                     f"(zerospeech-libriabx2: {fmt(base.get('abx_libriabx2'))} %).")
        for t in (1, 2, 3):
            lines += table_lines(t, systems, sets)
        lines += dev_lines(systems, dev)
        checks, ordering = claims(systems, s, dev)
        lines += ["", "## Checks", ""] + (checks or ["- not enough systems run to check the paper's claims"])
    inv = systems.get("inverter", {}).get(s)
    lines += ["", f"## Resynthesis in the target voice (codebook inverter + Griffin-Lim, `{inverter}`)", ""]
    if inv:
        mcd = inv.get("mcd")
        lines += [f"- {inv.get('resynth_utts', 0)} {s} utterances resynthesised (wavs in {inverter}/resynth_{s}/<voice>/wav, "
                  "one inverter per target voice), "
                  f"RTF {fmt(inv.get('resynth_rtf'), 3)}, peak level {fmt(inv.get('peak_min'))}-{fmt(inv.get('peak_max'))}.",
                  "- MCD against the same text spoken by the target voice (DTW-aligned mel-cepstra of WORLD analysis with "
                  f"{inv.get('mcd_f0_method', 'harvest')} F0, pooled over frames): "
                  f"{fmt(mcd) + ' dB' if mcd is not None else 'no reference rendition (real corpus: listen, or use the challenge MOS)'}."]
        if "mcd_source" in inv:
            lines.append(f"- Reference point: the test speakers' own recordings against the target voice (no conversion): "
                         f"MCD {fmt(inv['mcd_source'])} dB, log-F0 RMSE {fmt(inv.get('lf0_rmse_source'), 3)} "
                         f"(resynthesis: {fmt(inv.get('lf0_rmse_frame_pooled'), 3)}). " + mcd_against_source(inv)
                         + " The inverter sees 40 ms codes only, and Griffin-Lim's phase adds its own distortion.")
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
    if ordering:
        lines.append(not_done_ordering(ordering, dev_pick(systems, dev)[0]))
    lines.append("- Models are the tiny configs unless `--train-config-suffix \"\"` (paper size) was given: see "
                 "exp/<system>/config.yaml.")
    write_report(path, "\n".join(lines) + "\n", images)


def headline(systems: dict, s: str, abx_na: str = "", dev: str = "") -> list:
    """The measured claims README's row gives (results.json 'headline'): the checks (ABX_NA: ABX n/a and the
    bitrate checks instead; DEV: the set the candidate is picked on) and the resynthesis MCD."""
    checks = [f"- ABX: n/a. {abx_na}", *(line for line in bitrate_lines(systems, s) if line.startswith("- "))] \
        if abx_na else claims(systems, s, dev)[0]
    out = [line.strip()[2:] if line.startswith("- ") else line.strip() for line in checks]
    inv = systems.get("inverter", {}).get(s) or {}
    if inv.get("mcd") is not None:
        src = inv.get("mcd_source")
        if src is not None:
            relation, gap, meaning = source_words(inv)
        out.append(f"resynthesis in the target voice: MCD {fmt(inv['mcd'])} dB against its rendition of the text"
                   + ("" if src is None else
                      f", {relation} the unconverted source recording's {fmt(src)} dB ({gap}): {meaning}"))
    return out


def no_abx_reason(d: Path, scored: dict, s: str) -> str:
    """Why set S has no ABX (its data dir D's abx_na line), when no row of SCORED has an ABX on it; else ''."""
    if any("abx" in by_set.get(s, {}) for by_set in scored.values()) or not (d / "abx_na").is_file():
        return ""
    return " ".join((d / "abx_na").read_text(encoding="utf-8").split())


def trained_dirs(exp: Path, systems, inverter: Path) -> dict:
    """{model: exp dir} of the scored models (every system and each target voice's inverter): update_results names
    the commit and device that trained each."""
    dirs = {n: exp / n for n in systems}
    dirs.update({f"{inverter.name}/{d.name}": d for d in sorted(p.parent for p in inverter.glob("*/train.log"))})
    return dirs


def score(systems, sets, inverter: str, corpus: str, exp="exp", results_md="RESULTS.md", sealed_sets=(),
          config_files=(), options=None, data="data", dev_sets=()) -> dict:
    """Collect every system (plus the raw-MFCC baseline and the inverter), update exp/results.json, draw the
    plot and write RESULTS.md; returns the freshly collected {system: {set: metrics}}. Each of SEALED_SETS that has
    scores is a look, counted under the fingerprint of CONFIG_FILES + OPTIONS (results.json "sealed_looks"). The
    first of DEV_SETS (scored, never a look) is where the ordering check's candidate is picked.
    A first set without ABX whose data dir (under DATA) says why (its abx_na file: a corpus without phone times) is
    reported as ABX n/a, with the bitrate checks and the data used instead of the ABX tables (write_md)."""
    exp = Path(exp)
    dev = next(iter(dev_sets), "")
    both = [*dict.fromkeys([*dev_sets, *sets])]
    scored = {n: collect_system(exp, n, both) for n in ["mfcc_baseline", *systems]}
    add_seed_stats(scored, both)
    scored["inverter"] = collect_inverter(Path(inverter), sets)
    seen = [s for s in sets if any(s in by_set for by_set in scored.values())]  # a set without scores is no look
    looks = score_looks(exp, seen, sealed_sets, config_files, options,
                        {s: scored_outputs(exp, Path(inverter), s, Path(data)) for s in seen})
    abx_na = no_abx_reason(Path(data) / sets[0], scored, sets[0])
    results = update_results(exp / "results.json", "zerospeech2019/unit1", corpus, scored,
                             headline=lambda systems: headline(systems, sets[0], abx_na, dev),
                             extra=lambda merged: {"sealed_looks": looks, "ordering_candidates": candidates(systems),
                                                   "ordering_pick": ordering_pick(merged, dev)},
                             trained=trained_dirs(exp, systems, Path(inverter)))
    ok = plot({n: m for n, m in results["systems"].items() if n in systems}, sets[0],
              exp / "images" / "abx_vs_bitrate.png")
    write_md(Path(results_md), results, sets, corpus, inverter, ok, training_line(exp, systems, Path(inverter)),
             tuple(data_lines(Path(data), sets)) if abx_na else (), abx_na, dev, exp / "images")
    return scored


def ordering_pick(systems: dict, dev: str) -> dict:
    """results.json 'ordering_pick': the dev set and the candidate picked on it (None: none picked, every candidate
    compared), with the dev ABX each candidate was picked by."""
    pick, _ = dev_pick(systems, dev)
    return {"dev_set": dev or None, "picked": pick,
            "dev_abx": {n: _abx_bitrate(systems[n][dev])[0] for n in candidates(systems)
                        if (systems[n].get(dev) or {}).get("abx") is not None} if dev else {}}


def summary_lines(scored: dict) -> list:
    """One log line per (system, set): its float metrics."""
    return [f"vqvae_score: {n:28s} {s:6s} " + "  ".join(f"{k} {x:.2f}" for k, x in v.items() if isinstance(x, float))
            for n, m in scored.items() for s, v in m.items()]
