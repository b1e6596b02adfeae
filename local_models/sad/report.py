"""Reports of the Fearless Steps SAD recipe (egs/fearless_steps/sad1 stage 8, `local_models.bin.sad_score`):
every system's DCF / P / R / F1 (metrics.py) with and without collar and its real-time factor, merged into
exp/results.json; RESULTS.md in the shape of the paper's Tables 2-3 and Figs. 6-7, the paper's numbers beside ours;
the DCF-vs-threshold plots. sad_score runs `score_systems`, then `write_reports`.
"""
import json
from pathlib import Path
from typing import Optional

from local_models.common import gpu_report
from local_models.common.plots import pyplot, save_figure, write_report
from local_models.common.results import environment_lines, headline_lines, load_text, update_results
from local_models.common.sealed import record_line
from local_models.common.training import training_record
from local_models.common.verdict import NOT_MET, family_level, sentence

from . import claims
from .decisions import (FA_BOUND, FA_BOUND_KINDS, FA_BOUND_SUFFIX, PRIMARY_COLLAR, bounded_path, load_durations,
                        load_scores, read_threshold_file)
from .events import NONSPEECH_KINDS, SNR_BANDS, band_name, fa_by_chunk, load_events, robustness, separability
from .labels import check_covered, load_reference, read_rttm
from .metrics import CHUNK_S, chunk_spans, count_chunks, score
from .systems import BASELINES, DEVBEST, NETS, PAPER_RTF, PAPER_TABLE2, SEPARABILITY_ROWS, SYSTEMS, net_of
from .systems import system as system_of

OOD_SET = "eval_ood"


def pct(x):
    """A rate as a percentage for the tables ('–' when missing)."""
    return "–" if x is None else f"{100 * x:.2f}"


def paper(x):
    """A number of the paper (already in %) for the tables ('–' when the paper has none)."""
    return "–" if x is None else f"{x:.2f}"


def score_system(exp: Path, system: str, sets, data: Path):
    """Metrics of one system: per set (with a reference and a hyp.rttm) the pooled rates at the primary collar,
    DCF per file and without collar; the RTF over all sets' rtf.json; its tuned threshold."""
    out = {}
    for s in sets:
        dec = exp / system / f"decode_{s}"
        ref = load_reference(data / s)
        if not ref or not (dec / "hyp.rttm").is_file():
            continue
        hyp, durs = read_rttm(dec / "hyp.rttm"), load_durations(dec)
        check_covered(ref, durs, data / s, "score it")
        with_collar = score(ref, hyp, durs, PRIMARY_COLLAR)
        no_collar = score(ref, hyp, durs, 0.0)
        r = with_collar["pooled"]
        out[s] = {"dcf": r["dcf"], "f1": r["f1"], "precision": r["precision"], "recall": r["recall"],
                  "p_miss": r["p_miss"], "p_fa": r["p_fa"], "dcf_per_file": with_collar["per_file"]["dcf"],
                  "dcf_no_collar": no_collar["pooled"]["dcf"], "f1_no_collar": no_collar["pooled"]["f1"],
                  "dcf_per_file_no_collar": no_collar["per_file"]["dcf"],
                  # a list, not a dict: results.json merges dicts key by key, and a rescoring over other files
                  # must not keep the old files' rows
                  "dcf_files": sorted([rec, r["dcf"]] for rec, r in with_collar["files"].items())}
        events = load_events(data / s)
        out[s]["chunks"] = chunk_rows(ref, hyp, durs, events)  # the units the headline's intervals resample
        if events:
            out[s]["robustness"] = robustness(ref, hyp, durs, events)
            if system in SEPARABILITY_ROWS and (dec / "scores.scp").is_file():
                out[s]["separability"] = separability(ref, load_scores(dec), events)
        # the FA-bounded operating point (decisions.fa_bounded_row); None, not absent, when stage 6 found none:
        # results.json merges key by key, and an earlier run's point must not survive
        bounded_rttm = dec / f"hyp{FA_BOUND_SUFFIX}.rttm"
        out[s]["fa_bounded"] = bounded_point(ref, read_rttm(bounded_rttm), durs, events) if bounded_rttm.is_file() else None
    timed = [s for s in sets if (exp / system / f"decode_{s}" / "rtf.json").is_file()]
    rtfs = [json.loads((exp / system / f"decode_{s}" / "rtf.json").read_text()) for s in timed]
    if rtfs:
        out["rtf"] = sum(r["proc_s"] for r in rtfs) / sum(r["audio_s"] for r in rtfs)
        out["threads"] = rtfs[0]["threads"]
        loaded = [(r["load_average_at_start"], r.get("cores"), s) for r, s in zip(rtfs, timed)
                  if "load_average_at_start" in r]
        if loaded:  # the busiest start among its decodes (older rtf.json files did not record it)
            out["load_average_at_start"], out["cores"], out["busiest_set"] = max(loaded, key=lambda x: x[0])
    th = read_threshold_file(exp / system / "threshold")
    if th is not None:
        out["threshold"] = th
    out["threshold_fa_bounded"] = read_threshold_file(bounded_path(exp / system / "threshold"))  # None: none found
    return out


def chunk_rows(ref, hyp, durs, events) -> list:
    """A set's one-minute chunks (claims.py's units): [rec, start, end, counts at the collar, counts without,
    {kind: [seconds over non-speech, of them called speech]}] (counts: [tp, fp, tn, fn] seconds)."""
    rows = []
    for rec, dur in sorted(durs.items()):
        spans = chunk_spans(dur)
        with_collar = count_chunks(ref.get(rec, []), hyp.get(rec, []), dur, PRIMARY_COLLAR)
        no_collar = count_chunks(ref.get(rec, []), hyp.get(rec, []), dur, 0.0)
        fa = (fa_by_chunk(ref.get(rec, []), hyp.get(rec, []), dur, events[rec], CHUNK_S) if rec in events
              else [{} for _ in spans])
        for (a, b), c, nc, f in zip(spans, with_collar, no_collar, fa):
            rows.append([rec, round(a, 3), round(b, 3), [round(x, 3) for x in (c.tp, c.fp, c.tn, c.fn)],
                         [round(x, 3) for x in (nc.tp, nc.fp, nc.tn, nc.fn)],
                         {k: [round(x, 2) for x in v] for k, v in f.items()}])
    return rows


def bounded_point(ref, hyp, durs, events) -> dict:
    """A set's scores at the FA-bounded threshold: DCF with and without collar, false-alarm shares by kind, and its
    chunk rows (the goal's intervals)."""
    point = {"dcf": score(ref, hyp, durs, PRIMARY_COLLAR)["pooled"]["dcf"],
             "dcf_no_collar": score(ref, hyp, durs, 0.0)["pooled"]["dcf"],
             "chunks": chunk_rows(ref, hyp, durs, events)}
    if events:
        point["fa"] = robustness(ref, hyp, durs, events)["fa"]
    return point


def plot_sweeps(exp: Path, systems, path: Path):
    plt = pyplot()

    fig, axes = plt.subplots(1, 4, figsize=(17, 3.6))
    drawn = 0
    for ax, name in zip(axes[:3], ("energy", "silero_vad", "webrtcvad")):
        f = exp / name / "threshold.sweep.json"
        if name not in systems or not f.is_file():
            ax.set_visible(False)
            continue
        rows = json.loads(f.read_text())["rows"]
        ax.plot([r["threshold"] for r in rows], [100 * r["dcf"] for r in rows], marker="o", ms=3)
        ax.set_xlabel({"energy": "threshold (dB above floor)", "silero_vad": "threshold (speech prob.)",
                       "webrtcvad": "aggressiveness mode"}[name])
        ax.set_ylabel("DCF (%)")
        ax.set_title(f"{name}: dev DCF vs threshold")
        ax.grid(alpha=0.3)
        drawn += 1
    neural = [n for n, s in SYSTEMS.items() if s.kind == "neural"
              and n in systems and (exp / n / "threshold.sweep.json").is_file()]
    ax = axes[3]
    for name in neural:  # paper Fig. 6 (+ the segment RNN)
        rows = json.loads((exp / name / "threshold.sweep.json").read_text())["rows"]
        ax.plot([r["threshold"] for r in rows], [100 * r["dcf"] for r in rows], marker="o", ms=3, label=name)
    if neural:
        ax.set_xlabel("threshold alpha (posterior)")
        ax.set_ylabel("DCF (%)")
        ax.set_title("neural: dev DCF vs threshold (Fig. 6)")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        drawn += 1
    else:
        ax.set_visible(False)
    if drawn:
        save_figure(fig, path, dpi=90)
    else:
        plt.close(fig)
    return drawn > 0


def load_grid(exp: Path):
    """exp/seg_grid/grid.json (stage 7, paper Fig. 7), or None when the grid was not run."""
    f = exp / "seg_grid" / "grid.json"
    return json.loads(f.read_text()) if f.is_file() else None


def grid_lines(grid, dev: str):
    if not grid:
        return []
    ref = grid.get("reference")
    lines = ["", f"## Fig. 7 shape: segment RNN over (L, S), {dev} DCF at each point's own best threshold", "",
             "| L (ms) | S (ms) | DCF | threshold | model |", "|---|---|---|---|---|"]
    for g in grid["points"]:
        lines.append(f"| {g['L_ms']} | {g['S_ms']} | {pct(g['dcf'])} | {g['threshold']} | {g['model_dir']} |")
    if ref:
        lines.append(f"| {ref['label']} (reference line) | | {pct(ref['dcf'])} | {ref['threshold']} | |")
    best = min(grid["points"], key=lambda g: g["dcf"])
    lines += ["", f"Best here: L = {best['L_ms']} ms, S = {best['S_ms']} ms. Paper: the smallest L and S (50 ms, 10 ms) "
              "are best, and every L <= 250 ms with S <= 150 ms beats CNN + HMM."]
    if best["model_dir"] != "exp/seg_rnn":
        lines += ["", f"The training config's (L, S) (exp/seg_rnn, Table 2 row 'Seg. RNN') is not the dev-best point: "
                  f"as the paper chose its (L, S) on dev, the row 'Seg. RNN, dev-best' decodes every set with "
                  f"{best['model_dir']} (exp/seg_rnn_devbest)."]
    lines += [
              "", "![segment RNN grid](exp/images/seg_rnn_grid.png)"]
    return lines


def paper_ordering(systems: dict, evl: str, key: str = "dcf"):
    """The paper's claim on eval DCF: seg RNN < CNN+HMM and RNN+HMM < stat SAD < energy baseline.

    Returns (the five DCFs as (label, value) in claimed order, holds) or None when a system was not scored.
    KEY: "dcf" (the challenge's 0.5 s collar, as the paper scores) or "dcf_no_collar".
    The seg RNN is the dev-best (L, S) one when stage 7 made it, as in the paper.
    """
    try:
        d = {n: systems[n][evl][key] for n in order_names(systems, evl)}
    except KeyError:
        return None
    seg = order_names(systems, evl)[0]
    holds = d[seg] < min(d["cnn_hmm"], d["rnn_hmm"]) and max(d["cnn_hmm"], d["rnn_hmm"]) < d["stat_sad"] < d["energy"]
    return [(PAPER_TABLE2[n][0], d[n]) for n in d], holds


def ordering_pairs(seg: str):
    """The paper's ordering as pairs (A, B) it says have DCF(A) < DCF(B)."""
    return ((seg, "cnn_hmm"), (seg, "rnn_hmm"), ("cnn_hmm", "stat_sad"), ("rnn_hmm", "stat_sad"),
            ("stat_sad", "energy"))


def ordering_lines(systems: dict, evl: str, dev: str = "dev"):
    """The paper's ordering checked on EVL with the collar (as the paper scores) and without it: the pooled and
    per-file-mean DCFs, and the verdict on the intervals of the pairs' differences (claims.ordering_verdict)."""
    lines = []
    for key, how in (("dcf", f"DCF (collar {PRIMARY_COLLAR} s, as the paper)"), ("dcf_no_collar", "DCF without collar")):
        o = paper_ordering(systems, evl, key)
        if o is None:
            continue
        rows, points_hold = o
        names = order_names(systems, evl)
        per_file = [systems[n][evl].get("dcf_per_file" if key == "dcf" else "dcf_per_file_no_collar") for n in names]
        claim = (f"Paper's ordering on {evl} {how} (seg RNN < CNN+HMM, RNN+HMM < stat. SAD < energy baseline) here ("
                 + ", ".join(f"{ordering_label(n)} {pct(v)}" for n, (_, v) in zip(names, rows)) + "); per-file mean ("
                 + ", ".join(pct(v) for v in per_file) + ")")
        lines += ["", ordering_sentence(claim, systems, evl, dev, key, names, points_hold)]
    return lines


def ordering_label(name: str) -> str:
    """A system's name in the ordering lines: Table 2's, the energy baseline's short."""
    return "energy" if name == "energy" else PAPER_TABLE2.get(name, (name,))[0]


def order_names(systems: dict, evl: str) -> list:
    """The systems of the ordering claim, in its order (the dev-best seg RNN when stage 7 made it)."""
    seg = "seg_rnn_devbest" if evl in systems.get("seg_rnn_devbest", {}) else "seg_rnn"
    return [seg, "cnn_hmm", "rnn_hmm", "stat_sad", "energy"]


def ordering_sentence(claim: str, systems: dict, evl: str, dev: str, key: str, names: list, points_hold: bool) -> str:
    """CLAIM judged on the intervals of its pairs' differences (chunk rows of results.json), or no verdict when they
    cannot be computed (too few units; results scored before the rows were kept)."""
    labels = {n: ordering_label(n) for n in names}
    rows = {n: systems[n][evl].get("chunks") for n in names}
    chosen = f"thresholds chosen on {dev}"
    try:
        if not all(rows.values()):
            raise claims.NoInterval("no chunk rows in results.json (scored before they were kept)")
        v, pair, iv = claims.ordering_verdict(rows, ordering_pairs(names[0]), key, labels)
    except claims.NoInterval as e:
        return (f"{claim}: {claims.NO_VERDICT}, an interval cannot be computed ({e}); the points are "
                f"{'' if points_hold else 'not '}in the paper's order; {chosen}.")
    return sentence(f"{claim}; the pair that decides, {pair} (% points)", v, iv, chosen_on=dev + " (thresholds)")


def per_file_lines(systems: dict, sets) -> list:
    """Per set: each file's DCF (collar) for every system: rows = files, so a real corpus's many files fit."""
    lines = []
    for x in sets:
        order = [n for n in PAPER_TABLE2 if "dcf_files" in systems.get(n, {}).get(x, {})]
        if not order:
            continue
        per = {n: dict(systems[n][x]["dcf_files"]) for n in order}
        files = sorted(per[order[0]])
        lines += ["", f"## Per-file DCF on {x} (collar {PRIMARY_COLLAR} s, %)", "",
                  "| file | " + " | ".join(PAPER_TABLE2[n][0] for n in order) + " |", "|---" * (len(order) + 1) + "|"]
        lines += [f"| {f} | " + " | ".join(pct(per[n].get(f)) for n in order) + " |" for f in files]
    return lines


DEPARTURES = [
    "Front end: log(1 + |STFT|) (FFT 512, 50 ms window, 10 ms shift, 8 kHz) normalised per frequency bin by a "
    "BatchNorm layer, then the CNN blocks of Table 1; the paper names the STFT but not the compression or the "
    "normalisation.",
    "HMM smoothing (CNN + HMM, RNN + HMM): 5 noise + 5 speech states in a ring (stay 0.9) whose emissions are the "
    "net's frame posteriors (log p for speech, log(1 - p) for noise, shifted by logit(threshold)), not GMMs trained "
    "on features.",
    "Segment RNN: a segment (L frames, shift S) is speech in training when any of its frames is (OR over the frames); "
    "its score is read at its last frame, bidirectional: the forward state at the last frame joined with the backward "
    "state at the first; a frame's score is the maximum over the segments that cover it.",
    "The paper-size BiGRU reads the front end's 128 channels per frame, not Table 1's 64 "
    "(conf/tuning/train_rnn.yaml).",
    "The majority vote's members each use their own dev-tuned threshold; the paper does not say how its vote was "
    "thresholded.",
]


def ood_check(systems: dict, dev: str, bounded: bool = False):
    """The robustness goal on eval_ood: {best paper system, its DCF no collar (pooled, per-file mean), silero-vad's,
    its false-alarm shares, its chunk rows and silero-vad's (the intervals)}, or None when eval_ood or silero-vad was
    not scored. The best system is chosen on DEV (lowest DCF without collar), never on the set it is judged on.
    BOUNDED: every paper system at its FA-bounded threshold (those that have one), silero-vad still at its DCF-tuned
    one (its lowest DCF)."""
    if OOD_SET not in systems.get("silero_vad", {}):
        return None

    def point(m, x):
        return m[x].get("fa_bounded") if bounded else m[x]

    ours = {n: m for n, m in systems.items()
            if n not in BASELINES and OOD_SET in m and dev in m and point(m, OOD_SET) and point(m, dev)}
    if not ours:
        return None
    best = min(ours, key=lambda n: point(systems[n], dev)["dcf_no_collar"])
    judged, silero = point(ours[best], OOD_SET), systems["silero_vad"][OOD_SET]
    fa = (judged.get("fa") if bounded else judged.get("robustness", {}).get("fa")) or {}
    return {"best": best, "dcf": judged["dcf_no_collar"], "silero": silero["dcf_no_collar"],
            "per_file": None if bounded else judged.get("dcf_per_file_no_collar"),
            "silero_per_file": silero.get("dcf_per_file_no_collar"), "fa": fa,
            "rows": judged.get("chunks"), "silero_rows": silero.get("chunks")}


def table_order(systems: dict) -> list:
    """The report's row order: Table 2's systems as the paper lists them, then the others by name."""
    return [n for n in PAPER_TABLE2 if n in systems] + sorted(n for n in systems if n not in PAPER_TABLE2)


def robustness_lines(systems: dict, sets, dev: str):
    """Per set with an events table: every system's false alarms on each kind of non-speech and misses by SNR band."""
    lines = []
    bands = [band_name(lo, hi) for lo, hi in SNR_BANDS]
    for x in sets:
        order = table_order(systems)
        scored = {n: systems[n][x] for n in order if "robustness" in systems[n].get(x, {})}
        if not scored:
            continue
        secs = next(iter(scored.values()))["robustness"]["seconds"]
        lines += ["", f"## Robustness on {x}: false alarms by kind of non-speech, misses by SNR (no collar, %)", "",
                  "False-alarm share of a kind = the part of the time that kind sounds over reference non-speech that "
                  "the system calls speech; background = non-speech with no event (the stationary noise). Miss rate by "
                  "the speech burst's SNR against the background. Seconds scored: "
                  + ", ".join(f"{k} {secs[k]:.0f}" for k in (*NONSPEECH_KINDS, "background", *bands) if k in secs) + ".",
                  "", f"| system | DCF | DCF no collar | FA music | FA tone | FA noise | FA babble | FA background | "
                  + " | ".join(f"miss {b}" for b in bands) + " |", "|---" * (8 + len(bands)) + "|"]
        for n, m in scored.items():
            r = m["robustness"]
            cells = [pct(r["fa"].get(k)) for k in (*NONSPEECH_KINDS, "background")]
            cells += [pct(r["miss_by_snr"].get(b)) for b in bands]
            lines.append(f"| {PAPER_TABLE2.get(n, (n,))[0]} | {pct(m['dcf'])} | {pct(m['dcf_no_collar'])} | "
                         + " | ".join(cells) + " |")
        lines += separability_lines(systems, x)
    goal = ood_goal_line(systems, dev)
    return lines + (["", goal] if goal else [])


def separability_lines(systems: dict, x: str) -> list:
    """Set X's threshold-free table: per graded score, the ROC AUC of speech frames against each kind of non-speech."""
    rows = [(label, systems[n][x]["separability"]) for n, label in SEPARABILITY_ROWS.items()
            if "separability" in systems.get(n, {}).get(x, {})]
    if not rows:
        return []
    kinds = [k for k in (*NONSPEECH_KINDS, "background") if any(k in a for _, a in rows)]
    lines = ["", f"Separability on {x} (threshold-free): ROC AUC of each frame score, reference speech frames against "
             "the frames of each kind of non-speech (1 = every speech frame scores above every frame of the kind, 0.5 "
             "= chance). A high AUC beside a high false-alarm share above suggests that the operating point (the threshold tuned "
             "for DCF, and the HMM or median smoothing after it) lets that kind through; a low AUC, that no threshold "
             "would keep it out. An AUC of 0.9 can still leave much of a kind above every usable threshold.", "",
             "| score | " + " | ".join(f"AUC {k}" for k in kinds) + " |", "|---" * (1 + len(kinds)) + "|"]
    for label, auc in rows:
        lines.append(f"| {label} | " + " | ".join(f"{auc[k]:.3f}" if k in auc else "–" for k in kinds) + " |")
    return lines


def ood_goal_line(systems: dict, dev: str, bounded: bool = False) -> Optional[str]:
    """The robustness goal on eval_ood (ood_check) judged on the intervals of its parts (claims.goal_parts): met,
    not shown, NOT met, or no verdict when they cannot be computed; None when it was not scored."""
    c = ood_check(systems, dev, bounded)
    if not c:
        return None
    where = (f"at the FA-bounded thresholds (chosen on {dev}; silero-vad at its DCF-tuned one)" if bounded
             else "at the DCF-tuned thresholds")
    music, tone = c["fa"].get("music"), c["fa"].get("tone")
    per_file = (f"; per-file mean {pct(c['per_file'])} vs {pct(c['silero_per_file'])}"
                if c["per_file"] is not None and c["silero_per_file"] is not None else "")
    claim = (f"Goal on {OOD_SET} (held-out make), {where}: the best paper system (chosen on {dev}: lowest DCF without "
             f"collar) has a DCF without collar at most half of silero-vad's, and calls at most {FA_BOUND * 100:.0f} % "
             f"of music and of tone time speech")
    points = (f"{PAPER_TABLE2.get(c['best'], (c['best'],))[0]}: DCF no collar {pct(c['dcf'])} vs silero-vad "
              f"{pct(c['silero'])}{per_file}, FA music {pct(music)}, FA tone {pct(tone)}")
    if not c["rows"] or not c["silero_rows"]:
        return (f"{claim}: {claims.NO_VERDICT}, an interval cannot be computed (no chunk rows in results.json: scored "
                f"before they were kept) ({points}).")
    parts, family = claims.goal_parts(c["rows"], c["silero_rows"], c["rows"], FA_BOUND_KINDS, FA_BOUND)
    verdict = claims.combine_goals(parts, family)
    if verdict == NOT_MET:  # decided by a family-wise interval: show those
        parts = family
    judged = "; ".join(f"{name}: {v}, {iv.text('{:+.2f}' if name.startswith('DCF') else '{:.2f}')}" if iv else
                       f"{name}: {v} ({why})" for name, v, iv, why in parts)
    after = (f" The FA-bounded rule was added after the DCF-tuned thresholds were seen to fail this goal on {OOD_SET}: "
             f"{OOD_SET} is not a clean held-out test of it." if bounded else "")
    level = (f" ({100 * family_level(len(parts)):.4g} % each: one of {len(parts)} parts missing its bound decides, "
             "Bonferroni)" if verdict == NOT_MET else "")
    return (f"{claim}: {claims.shown(verdict)} ({points}); on intervals (%){level}: {judged}.{after}")


def bounded_lines(systems: dict, dev: str) -> list:
    """The FA-bounded operating point: per system, its threshold and its DCF and music / tone false alarms on DEV
    (where it was chosen) and, where the recipe has it, on eval_ood, then the goal judged there."""
    rows = [n for n in table_order(systems) if "threshold" in systems[n]]
    if not any(dev in systems[n] and systems[n][dev].get("fa_bounded") for n in rows):
        return []
    ood = any(systems[n].get(OOD_SET, {}).get("fa_bounded") for n in rows)  # FS02's held-out make; not every recipe's
    kinds = " and ".join(FA_BOUND_KINDS) + f" (those {dev}'s events table holds)"
    judged = (f"judged on {OOD_SET}. " if ood else "judged on the sealed set when it is scored. ")
    history = (f" This rule was added after the DCF-tuned thresholds were seen to fail the {OOD_SET} goal; it reads "
               f"nothing of {OOD_SET}." if ood else "")
    cols = [f"{dev} DCF", f"{dev} FA music", f"{dev} FA tone"] + (
        [f"{OOD_SET} DCF", f"{OOD_SET} DCF no collar", f"{OOD_SET} FA music", f"{OOD_SET} FA tone"] if ood else [])
    lines = ["", f"## FA-bounded operating point: the lowest {dev} DCF that calls at most {FA_BOUND * 100:.0f} % of {kinds} "
             f"time speech on {dev} (%)", "",
             f"The thresholds of Table 2 minimise DCF, which weighs a miss 3x a false alarm, so they sit low and let "
             f"much music and many tones through. Here each system's threshold is the lowest-DCF one of the same {dev} "
             f"sweep among those with at most {FA_BOUND * 100:.0f} % false alarms on each of {kinds} on {dev} (its events "
             f"table): chosen on {dev}, {judged}'–': no threshold of the sweep keeps within the bound on "
             f"{dev} (the statistical SAD's and the majority vote's sweeps hold one fixed threshold each: nothing to "
             f"choose; the vote's members keep their DCF-tuned thresholds).{history}", "",
             "| system | DCF-tuned threshold | FA-bounded threshold | " + " | ".join(cols) + " |",
             "|---" * (3 + len(cols)) + "|"]
    for n in rows:
        m = systems[n]
        d, o = m.get(dev, {}).get("fa_bounded") or {}, m.get(OOD_SET, {}).get("fa_bounded") or {}
        cells = [pct(d.get("dcf")), pct(d.get("fa", {}).get("music")), pct(d.get("fa", {}).get("tone"))]
        if ood:
            cells += [pct(o.get("dcf")), pct(o.get("dcf_no_collar")), pct(o.get("fa", {}).get("music")),
                      pct(o.get("fa", {}).get("tone"))]
        lines.append(f"| {PAPER_TABLE2.get(n, (n,))[0]} | {m.get('threshold', '–')} | "
                     f"{m.get('threshold_fa_bounded') or '–'} | " + " | ".join(cells) + " |")
    goal = ood_goal_line(systems, dev, bounded=True)
    return lines + (["", goal] if goal else [])


def headline(systems: dict, dev: str, evl: str) -> list:
    """The measured claims README's row gives (results.json 'headline'): the paper's ordering on EVL with and
    without collar, and the robustness goal."""
    goals = [ood_goal_line(systems, dev), ood_goal_line(systems, dev, bounded=True)]
    return [line for line in ordering_lines(systems, evl, dev) if line] + [g for g in goals if g]


PAPER_ITERS = 50_000  # paper Sec. 4.2: 50,000 iterations of 24 random 4 s chunks
NET_NAMES = NETS  # nets.NETS' keys (systems.py: nets.py imports torch)


def training_data(exp_dir: Path, recipe: Path) -> str:
    """What EXP_DIR's net trained on: its train_data.txt (stage 4 writes it before training; local_models/sad/gpu_train.sh
    brings it back from the device), else, for nets trained before that record existed, the chunk count of the
    config's train_shape_file under RECIPE as it is now; '?' when neither is there."""
    import yaml

    note = exp_dir / "train_data.txt"
    if note.is_file():
        return note.read_text(encoding="utf-8").strip()
    shapes = (yaml.safe_load((exp_dir / "config.yaml").read_text(encoding="utf-8")) or {}).get("train_shape_file")
    shape = recipe / shapes[0] if shapes else None
    if shape is None or not shape.is_file():
        return "?"
    n = sum(1 for line in shape.read_text(encoding="utf-8").splitlines() if line.strip())
    return f"{shape.parent.parent.name}: {n} chunks"


def nets_training(exp: Path) -> dict:
    """{model dir relative to EXP: training_record + its training data} of the nets this run trained (stage 4,
    stage 7's grid)."""
    dirs = [exp / n for n in NET_NAMES] + sorted((exp / "seg_grid").glob("*/"))
    records = {str(d.relative_to(exp)): (d, r) for d in dirs if (r := training_record(d)) is not None}
    return {name: {**r, "train_data": training_data(d, exp.parent)} for name, (d, r) in records.items()}


def training_lines(training: dict) -> list:
    """RESULTS.md section: how each net was trained, and which checkpoint decodes."""
    if not training:
        return []
    lines = ["", "## Training: how each net was trained (from its exp dir: config.yaml, train.log)", "",
             f"Paper: {PAPER_ITERS} iterations, Adam lr 1e-3, batches of 24 random 4 s chunks. The checkpoint that "
             "decodes is the epoch of lowest validation loss (ESPnet's valid.loss.best.pth, keep_nbest_models 1).", "",
             "| net | config | training data (4 s chunks) | iterations run (epochs x iterations) | "
             "best validation loss at iteration | valid loss | where |", "|---|---|---|---|---|---|---|"]
    for name, r in training.items():
        where = r.get("device") or (f"{r['ngpu']} GPU(s)" if r.get("ngpu") else "CPU")
        run = f"{r.get('iters_run', '?')} ({r.get('epochs_run')} x {r.get('iters_per_epoch')})"
        if r.get("max_epoch") and r.get("epochs_run", 0) < r["max_epoch"]:
            run += f", stopped before max_epoch {r['max_epoch']}"
        lines.append(f"| {name} | `{r.get('config')}` | {r.get('train_data', '?')} | {run} | {r.get('best_iters', '?')} | "
                     f"{r.get('best_valid', '?')} | {where} |")
    if any("device" in r for r in training.values()):
        lines += ["", "The nets with a GPU named were trained on a lent GPU machine by `local_models/sad/gpu_train.sh` (stages "
                  "2-4 there, with the augmented copies where the recipe makes them, each net stopped at a time limit), then decoded and scored here: docs/gpu.md, \"The SAD nets "
                  "at paper size on a lent machine\"."]
    return lines


def looks_lines(record: Optional[dict]) -> list:
    """How often each sealed set was scored under this configuration (results.json 'sealed_looks'), a line and a
    blank; nothing for results scored before looks were counted."""
    if record is None:
        return []
    return [f"{record_line(record)} (configuration {record.get('config')}: the nets' training "
            "configs and the stage options that define the systems; thresholds and picks are chosen on dev under it)",
            ""]


# the corpora the SAD model runs on (a recipe's --recipe_name): the report's title
TITLES = {"fearless_steps/sad1": "Fearless Steps SAD (paper 004)",
          "debian_speech/sad1": "Real-recording SAD (paper 004's systems on human speech)"}
DEFAULT_RECIPE = "fearless_steps/sad1"


def write_results_md(path: Path, results: dict, corpus: str, dev: str, evl: str, plot_ok: bool, grid=None,
                     images: Optional[Path] = None):
    systems = results["systems"]
    recipe = results.get("recipe") or DEFAULT_RECIPE
    lines = [
        f"# {TITLES.get(recipe, recipe + ' (paper 004)')}: results",
        "",
        f"Corpus: **{corpus}**" + (" (the espeak-ng Apollo-like mini corpus: NOT comparable with the paper's FS02 "
                                   "numbers; the paper's numbers stand beside ours for shape only)" if corpus == "mini" else "")
        + f". Commit {results.get('commit')}, {results.get('hardware')}.",
        "",
        *environment_lines(results.get("environment") or {}), *looks_lines(results.get("sealed_looks")),
        *headline_lines(results.get("headline")),
        "Metrics (paper eq. 2-4, NIST OpenSAD convention as in the FS02 scorer): time scored on a 1 ms grid;",
        f"DCF = 0.75 P_miss + 0.25 P_fa; P, R, F1 over speech time. Collar {PRIMARY_COLLAR} s: reference non-speech within",
        f"{PRIMARY_COLLAR} s of a reference speech boundary is not scored (speech always is). Pooled over all files",
        "(times summed) unless marked per-file: the mean of the files' DCFs, the FS02 scorer's overall figure. Every",
        "system's threshold was tuned on dev (lowest pooled DCF) and applied unchanged to eval, except the majority",
        "vote's, which is the rule itself: speech where at least 2 of CNN + HMM, RNN + HMM and the segment RNN of this",
        "table (the dev-best (L, S) when that row is there) say so, each at its own tuned threshold. All values in %.",
        "",
        f"## Table 2 shape: {dev} F1 / P / R / DCF and {evl} DCF (ours | paper)",
        "",
        f"| system | {dev} F1 | P | R | DCF | DCF no collar | DCF per-file | {evl} DCF | {evl} DCF no collar "
        f"| {evl} DCF per-file | threshold | paper F1 | P | R | DCF | eval DCF |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, (label, pf1, pp, pr, pdcf, pedcf) in PAPER_TABLE2.items():
        m = systems.get(name)
        if m is None and name == "seg_rnn_devbest":
            continue  # only when the grid's best (L, S) is not the training config's
        if m is None:
            ours = "not run here | – | – | – | – | – | – | – | – | –"
        else:
            d, e = m.get(dev, {}), m.get(evl, {})
            ours = (f"{pct(d.get('f1'))} | {pct(d.get('precision'))} | {pct(d.get('recall'))} | {pct(d.get('dcf'))} | "
                    f"{pct(d.get('dcf_no_collar'))} | {pct(d.get('dcf_per_file'))} | {pct(e.get('dcf'))} | "
                    f"{pct(e.get('dcf_no_collar'))} | {pct(e.get('dcf_per_file'))} | {m.get('threshold', '–')}")
        lines.append(f"| {label} | {ours} | {paper(pf1)} | {paper(pp)} | {paper(pr)} | {paper(pdcf)} | {paper(pedcf)} |")
    threads = {m.get("threads") for m in systems.values() if "threads" in m}
    lines += [
        "",
        f"## Table 3 shape: real-time factor (processing s / audio s, {'/'.join(str(t) for t in threads) or '?'} "
        f"thread(s), this machine's CPU, over {'+'.join(x for x in (dev, evl, OOD_SET) if any(x in m for m in systems.values()))})",
        "",
        "| system | RTF (ours) | RTF (paper, Xeon E3-1240 v6) |",
        "|---|---|---|",
    ]
    for name in PAPER_TABLE2:
        if name in systems and "rtf" in systems[name] or name in PAPER_RTF:
            ours = f"{systems[name]['rtf']:.5f}" if "rtf" in systems.get(name, {}) else "not run here"
            lines.append(f"| {PAPER_TABLE2[name][0]} | {ours} | {PAPER_RTF.get(name, '–')} |")
    timed = [n for n in PAPER_TABLE2 if "load_average_at_start" in systems.get(n, {})]
    if timed:
        n = max(timed, key=lambda n: systems[n]["load_average_at_start"])
        lines += ["", f"Each decode recorded the CPU's load when it started; the busiest start was {PAPER_TABLE2[n][0]} "
                  f"on {systems[n]['busiest_set']}." + load_text(systems[n], "RTFs")]
    training = results.get("training") or {}
    if training:
        lines += ["", "The nets timed are the ones this run trained: "
                  + ", ".join(f"{n} from `{r.get('config')}`" for n, r in training.items() if "/" not in n)
                  + " (section Training); their size sets their RTF."]
    lines += ordering_lines(systems, evl, dev)
    lines += ["", "## How these systems differ from the paper", ""] + [f"- {d}" for d in DEPARTURES]
    lines += per_file_lines(systems, [x for x in (evl, OOD_SET) if any(x in m for m in systems.values())])
    lines += robustness_lines(systems, [x for x in (evl, OOD_SET, dev) if any(x in m for m in systems.values())], dev)
    lines += bounded_lines(systems, dev)
    lines += ["", "## Figures", ""]
    if plot_ok:
        lines.append("![DCF vs threshold](exp/images/dcf_vs_threshold.png)  \n"
                     "Dev DCF against each detector's threshold; last panel: the neural systems (paper Fig. 6 shape).")
    lines += grid_lines(grid, dev)
    missing = [PAPER_TABLE2[n][0] for n in PAPER_TABLE2 if n not in systems and n != "seg_rnn_devbest"]
    lines += training_lines(results.get("training") or {})
    lines += gpu_report.section(recipe)
    lines += ["", "## Not done yet", ""]
    if not grid:
        lines.append("- The segment RNN's (L, S) grid of paper Fig. 7 was not run (stage 7, `--seg-grid`).")
    short = [n for n, r in (results.get("training") or {}).items() if (r.get("iters_run") or 0) < PAPER_ITERS]
    if short:
        lines.append(f"- {', '.join(short)}: trained fewer than the paper's {PAPER_ITERS} iterations (section Training).")
    if missing:
        lines.append(f"- Not run here: {', '.join(missing)} (rows carry the paper's numbers only).")
    if any(OOD_SET in m for m in systems.values()):
        lines.append(f"- A sealed set of a make not used so far, scored once with the FA-bounded rule frozen: {OOD_SET} "
                     "was looked at before that rule was added, so its goal line is not a held-out test of it.")
    write_report(path, "\n".join(lines) + "\n", images)  # IMAGES: the run's exp/images


def score_systems(exp: Path, systems, sets, data: Path) -> dict:
    """{system: metrics} of every system on SETS (raises DataDirError / OSError on unreadable inputs)."""
    return {s: score_system(exp, s, sets, data) for s in systems}


def trained_nets(exp: Path, systems) -> dict:
    """{neural system of SYSTEMS: the exp dir of the net it decodes with} (the dev-best seg RNN: its grid point's),
    for results.json's environment['trained']; the vote's nets are its members'."""
    out = {}
    for s in systems:
        if system_of(s).kind != "neural":
            continue
        devbest = exp / s / "model_dir"
        out[s] = exp.parent / devbest.read_text().strip() if s == DEVBEST and devbest.is_file() else exp / net_of(s)
    return out


def write_reports(exp: Path, scored: dict, corpus: str, dev: str, evl: str, results_md: Path,
                  sealed_looks: Optional[dict] = None, recipe: str = DEFAULT_RECIPE) -> None:
    """Merge SCORED into EXP/results.json (with SEALED_LOOKS, sealed.score_looks' record of this scoring, and the
    commits that trained the scored nets), draw EXP/images/dcf_vs_threshold.png, write RESULTS_MD."""
    extra = {"training": nets_training(exp)}
    if sealed_looks is not None:
        extra["sealed_looks"] = sealed_looks
    results = update_results(exp / "results.json", recipe, corpus, scored,
                             drop=[] if "seg_rnn_devbest" in scored else ["seg_rnn_devbest"],  # stage 7 removed it
                             extra=extra, headline=lambda systems: headline(systems, dev, evl),
                             trained=trained_nets(exp, scored))
    plot_ok = plot_sweeps(exp, list(scored), exp / "images" / "dcf_vs_threshold.png")
    write_results_md(results_md, results, corpus, dev, evl, plot_ok, load_grid(exp), Path(exp) / "images")
