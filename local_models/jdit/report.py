"""The scoring stage of egs/kss/tts1 (paper 002, JDI-T): what stages 5-6 measured -> exp/results.json and
RESULTS.md (`python -m local_models.bin.jdit_score`, whose --help describes every number; run from the recipe
directory).

Per system (exp/tts_<system>) and GT-mel row (exp/gt_mel*), per test set: MCD / log-F0 RMSE from
<decode>/mcd.json, real-time factors and audio checks from <decode>/synth.json, attention failures of the
autoregressive models (metrics.attention_failures); duration accuracy (metrics.duration_accuracy) of JDI-T's
aligner / predictor, the uniform reference point and FastSpeech's teacher on sets with true durations.
"""
from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from local_models.common import gpu_report
from local_models.common import verdict as V
from local_models.common.datadir import read_table
from local_models.common.mcd import pooled_difference, pooled_mean
from local_models.common.plots import write_report
from local_models.common.results import (environment, environment_lines, hardware, headline_lines, load_text,
                                         update_results)
from local_models.common.results import training_summary as who_trained  # this module's training_summary: epochs
from local_models.common.sealed import record_line, score_looks
from local_models.common.training import epochs_run

from .metrics import (SKIP_TOKENS, attention_failures, attention_path, duration_accuracy, read_durations,
                      strip_eos, uniform_durations)
from .phonemes import token_type_of
from .systems import AUTOREGRESSIVE, GT_MEL_ROWS, LABELS, PAPER_MOS, PAPER_ROWS, TEACHER, VOCODER_LABELS
from .vocoder import checkpoints, vocoder_label

SILENT_PEAK = 0.01  # a synthesised wav whose peak stays below this is called silent
# true durations in data/<set>: the engine's phone events as emitted, and the same with each stop's closure
# given to the stop (jdit_text closures: espeak-ng emits a stop's event after its closure)
REFERENCES = {"events": "durations", "closure": "durations_closure"}
REFERENCE_NAMES = {"events": "engine events", "closure": "closures to the stop"}

@dataclasses.dataclass(frozen=True)
class ScoreOptions:
    """What to score (jdit_score's options, built by local_models/bin/jdit_score.py from its command line).

    systems: trained systems (exp/tts_<system>); sets: test sets (the first one with MCDs is Table 1's);
    corpus: the corpus description for RESULTS.md / results.json; gt_mel_rows: exp/<row>/decode_<set> dirs of
    vocoders on the reference mels; exp, data: the recipe's exp/ and data/ dirs; results_md: the RESULTS.md
    written; sealed_sets: sets only scored, never chosen on (a scoring of one is a look, exp/sealed_looks.tsv);
    dev_set: where JDI-T's settings are chosen (its aligner durations, exp/tts_jdit/align_<dev_set>, are scored
    beside the test sets'); chosen_on: the set JDI-T's departures from the paper were chosen on (each verdict
    says it); config_files, options: what defines the systems scored (the looks' configuration fingerprint)."""
    systems: Sequence[str]
    sets: Sequence[str]
    corpus: str
    gt_mel_rows: Sequence[str] = GT_MEL_ROWS
    exp: Union[str, Path] = "exp"
    data: Union[str, Path] = "data"
    results_md: Union[str, Path] = "RESULTS.md"
    sealed_sets: Sequence[str] = ("test",)
    dev_set: Optional[str] = None
    chosen_on: str = "dev"
    config_files: Sequence[str] = ()
    options: Mapping[str, str] = dataclasses.field(default_factory=dict)


def bias_line(where: str, m: dict, min_count: int = 10, top: int = 8) -> str:
    """Where the aligner's durations are systematically long or short (from duration_accuracy's `bias`); `where`
    names the set (Markdown)."""
    common = [(t, b, n) for t, (b, n) in m["bias"].items() if n >= min_count]
    common.sort(key=lambda r: -abs(r[1]))
    items = ", ".join(f"`{t}` {b:+.1f} ({n})" for t, b, n in common[:top])  # `<space>` is not an HTML tag
    return (f"Systematic error of the JDI-T aligner on {where}: its boundaries lie {m['boundary_signed_mean']:+.2f} "
            f"frames from the true ones on average (+ = later); mean signed duration error (aligner - true, "
            f"frames) of the token types seen {min_count}+ times, largest first: {items}."
            + boundary_bias_text(m, min_count))


def boundary_bias_text(m: dict, min_count: int = 10) -> str:
    """The mean signed boundary error by the classes of the tokens either side (C consonant, V vowel, _ word
    boundary, P punctuation), commonest first; empty without `boundary_bias`."""
    pairs = sorted(((k, b, n) for k, (b, n) in m.get("boundary_bias", {}).items() if n >= min_count),
                   key=lambda r: -r[2])
    if not pairs:
        return ""
    return (" By the tokens a boundary separates (C consonant, V vowel, _ word space, P punctuation; count): "
            + ", ".join(f"{k} {b:+.2f} ({n})" for k, b, n in pairs) + ".")


def failure_rates(d: Path) -> Optional[dict]:
    """Attention-failure counts of one AR decode dir (None when it saved no attention)."""
    att_dir = d / "att_ws"
    if not att_dir.is_dir():
        return None
    per = json.loads((d / "synth.json").read_text())["per_utt"]
    counts = dict(skip=0, repeat=0, incomplete=0, any=0)
    n = 0
    for utt, info in sorted(per.items()):
        f = att_dir / f"{utt}.npy"
        if not f.is_file():
            continue
        att = np.load(f)
        fail = attention_failures(attention_path(att), att.shape[-1], info["hit_maxlen"])
        for key, v in fail.items():
            counts[key] += int(v)
        counts["any"] += int(any(fail.values()))
        n += 1
    if not n:
        return None
    return dict(utterances=n, **counts, failure_rate=counts["any"] / n)


def decode_metrics(d: Path) -> dict:
    """MCD / F0 from mcd.json (if scored) and RTF / audio checks from synth.json."""
    out = {}
    synth = json.loads((d / "synth.json").read_text())
    per = synth["per_utt"].values()
    vocoder = synth.get("vocoder", "unknown")
    # a checkpoint is keyed by its exp dir (vocoder_pwg, vocoder_mbmelgan: every trained one is checkpoint.pkl) and
    # named by its own config (a path relative to the recipe, where stage 5 ran)
    trained = vocoder not in ("griffin_lim", "unknown")
    if trained and not Path(vocoder).is_absolute() and not Path(vocoder).exists():
        vocoder = str(Path(d).resolve().parents[2] / vocoder)
    out.update(vocoder=(Path(vocoder).parent.name or vocoder) if trained else vocoder,
               vocoder_label=vocoder_label(vocoder),
               utterances=synth["utterances"], audio_seconds=synth["audio_seconds"], rtf=synth["acoustic_rtf"],
               vocoder_rtf=synth["vocoder_rtf"], threads=synth["threads"],
               silent=sum(p["peak"] < SILENT_PEAK for p in per), over_full_scale=sum(p["peak"] > 1.0 for p in per),
               hit_maxlen=sum(p["hit_maxlen"] for p in per))
    if (d / "mcd.json").is_file():
        m = json.loads((d / "mcd.json").read_text())
        out.update(mcd=m["mcd_db_frame_pooled"], mcd_utt_mean=m["mcd_db_utt_mean"], lf0_rmse=m["lf0_rmse_frame_pooled"],
                   vuv_error=m["vuv_error_frame_pooled"], mcd_settings=m["settings"])
        lens = [(v["hyp_frames"], v["ref_frames"]) for v in m["per_utt"].values()]
        out["length_ratio"] = float(np.mean([h / r for h, r in lens]))
        out["mcd_1to1"] = m.get("mcd_1to1_db_frame_pooled")  # None: scored before the 1:1 MCD existed
        out["per_utt"] = m["per_utt"]  # the bootstrap's items (not copied into results.json)
    return out


def training_summary(exp_dir: Path) -> str:
    """'N epochs x M steps (config)' from an ESPnet2 exp dir's train.log and config.yaml ('' if not trained)."""
    import yaml

    log, conf = exp_dir / "train.log", exp_dir / "config.yaml"
    if not log.is_file() or not conf.is_file():
        return ""
    epochs = epochs_run(exp_dir) or 0
    c = yaml.safe_load(conf.read_text())
    steps = ""
    if c.get("batch_type") == "sorted" and c.get("train_shape_file") and Path(c["train_shape_file"][0]).is_file():
        n = sum(1 for _ in open(c["train_shape_file"][0]))
        per_epoch = math.ceil(n / c["batch_size"])
        steps = f" x {per_epoch} steps ({epochs * per_epoch} steps, batch {c['batch_size']})"
    return f"{epochs} epochs{steps}"


def aligner_summary(exp_dir: Path) -> str:
    """How this run's JDI-T aligner differs from the paper's Algorithm 1 / eq. (1), from its config.yaml."""
    import yaml

    conf = exp_dir / "config.yaml"
    if not conf.is_file():
        return ""
    c = yaml.safe_load(conf.read_text()).get("tts_conf") or {}
    if c.get("aligner_transition_agent"):
        att = ("forward attention WITH the transition agent of Zhang et al. (the paper's ref. [12]; its Algorithm 1 "
               f"has none), prior move rate {c.get('aligner_move_prior', 0.15)} token per frame")
    else:
        att = "forward attention as in the paper's Algorithm 1 (no transition agent)"
    return (f"JDI-T aligner in this run: {att}; guided attention weight {c.get('guided_attn_weight', 1.0)} "
            f"(the paper: 1), sigma {c.get('guided_attn_sigma', 0.2)}.")


def vocoder_summary(exp_dir: Path) -> str:
    """'N steps (generator L layers x C channels, ...)' of a Parallel WaveGAN or Multi-band MelGAN trained by
    jdit_pwg_train ('' if none)."""
    import yaml

    conf = exp_dir / "config.yml"
    done = checkpoints(exp_dir)
    if not conf.is_file() or not done:
        return ""
    c = yaml.safe_load(conf.read_text())
    g = c["generator_params"]
    adv = c["discriminator_train_start_steps"]
    adv = (f"adversarial loss from step {adv}" if adv < c["train_max_steps"]
           else "STFT losses only: the discriminator starts after the last step")
    if c.get("generator_type") == "MelGANGenerator":
        gen = (f"generator {g['out_channels']} sub-bands, {g['channels']} channels, upsampling "
               f"{' x '.join(map(str, g['upsample_scales']))}, {g['stacks']} residual blocks per stage")
    else:
        gen = f"generator {g['layers']} layers x {g['residual_channels']} residual channels"
    return (f"{done[-1][0]} steps (of train_max_steps {c['train_max_steps']}; {adv}), {gen}, batch "
            f"{c['batch_size']} x {c['batch_max_steps']} samples")


def row_name(name: str, sets: dict) -> str:
    """Display name; a GT-mel row says which vocoder it is."""
    if not name.startswith("gt_mel"):
        return LABELS.get(name, name)
    label = next(iter(sets.values()))["vocoder_label"] if sets else "unknown"
    return "GT mel" if label == "unknown" else f"GT mel + {label}"


def fmt(v, digits=2, pct=False):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return f"{100 * v:.1f}" if pct else f"{v:.{digits}f}"


def collect(exp, data, systems: Sequence[str], sets: Sequence[str], gt_mel_rows: Sequence[str] = GT_MEL_ROWS,
            dev_set: Optional[str] = None):
    """({row: {set: decode_metrics}}, {(set, reference): duration_table}) of everything stages 5-6 wrote under
    EXP (and DATA's true durations) for SYSTEMS and the GT_MEL_ROWS on SETS; the durations of DEV_SET last."""
    exp, data = Path(exp), Path(data)
    rows = {}
    for name in [*gt_mel_rows, *systems]:
        base = exp / (name if name.startswith("gt_mel") else f"tts_{name}")
        for x in sets:
            d = base / f"decode_{x}"
            if (d / "synth.json").is_file():
                rows.setdefault(name, {})[x] = decode_metrics(d)
                if name in AUTOREGRESSIVE:
                    fr = failure_rates(d)
                    if fr is not None:
                        rows[name][x]["attention"] = fr
    durs = {}  # {(set, reference): {kind: duration_accuracy}}
    for x in [*sets, *([dev_set] if dev_set and dev_set not in sets else [])]:
        for refname, true_file in REFERENCES.items():
            true_path = data / x / true_file
            if true_path.is_file():
                durs[(x, refname)] = duration_table(exp, data, x, true_path)
    return rows, durs


def duration_table(exp: Path, data: Path, x: str, true_path: Path) -> dict:
    """Every duration source of set x (uniform, JDI-T aligner / predictor, FastSpeech's teacher) against the
    reference durations in true_path."""
    ref = read_durations(true_path)
    table = {"uniform": duration_accuracy(uniform_durations(ref), ref, f"{true_path} (uniform)")}
    text = data / x / "text_phn"
    tokens = {k: v.split() for k, v in read_table(text).items()} if text.is_file() else None
    for kind in ("aligner", "aligner_viterbi", "predictor"):
        f = exp / "tts_jdit" / f"align_{x}" / f"durations_{kind}"
        if f.is_file():
            table[f"jdit_{kind}"] = duration_accuracy(read_durations(f), ref, f"{f} vs {true_path}", tokens)
    teacher = exp / "tts_transformer" / f"teacher_{x}" / "durations" / "durations"
    if teacher.is_file():
        table["fastspeech_teacher"] = duration_accuracy(strip_eos(read_durations(teacher), ref), ref,
                                                        f"{teacher} vs {true_path}")
    return table


def closure_lines(data: Path, sets) -> list:
    """What the closure reference changed, measured per set: the tokens that gained frames over the engine-event
    reference, their mean gain and their most frequent token types."""
    out = []
    for x in sets:
        a, b, text = data / x / REFERENCES["events"], data / x / REFERENCES["closure"], data / x / "text_phn"
        if not (a.is_file() and b.is_file() and text.is_file()):
            continue
        events, closure = read_durations(a), read_durations(b)
        tokens = {k: v.split() for k, v in read_table(text).items()}
        # utterances in sorted order: most_common breaks ties by first occurrence, so a set's order would leak
        gained = [(t, int(d)) for u in sorted(events.keys() & closure.keys() & tokens.keys())
                  for t, d in zip(tokens[u], closure[u] - events[u]) if d > 0]
        if gained:
            kinds = Counter(t for t, _ in gained).most_common(4)
            out.append(f"- `{x}`: {len(gained)} tokens gain frames in the closure reference, mean "
                       f"+{np.mean([d for _, d in gained]):.2f} frames; most often "
                       + ", ".join(f"`{t}` ({n})" for t, n in kinds) + ".")
    return out + [""] if out else []


def write_results_json(opts: ScoreOptions, rows, durs, judged: dict, looks: dict):
    """Merge the rows and duration tables into OPTS.exp/results.json (one flat dict per system and set), with the
    verdicts (JUDGED, judge), the sealed sets' LOOKS ("sealed_looks") and the commits that trained the models."""
    exp = opts.exp
    systems = {}
    for name, sets in rows.items():
        systems[name] = {x: {k: v for k, v in m.items() if k not in ("mcd_settings", "attention", "per_utt")}
                         for x, m in sets.items()}
        for x, m in sets.items():
            if "attention" in m:
                systems[name][x]["attention_failure_rate"] = m["attention"]["failure_rate"]
    for (x, refname), table in durs.items():
        for kind, m in table.items():
            # jdit_aligner -> jdit / *_aligner, fastspeech_teacher -> fastspeech / *_teacher, uniform -> duration_uniform;
            # against the closure reference: *_aligner_closure, ...
            system, suffix = kind.split("_", 1) if "_" in kind else (f"duration_{kind}", "")
            suffix = "".join(f"_{t}" for t in (suffix, "" if refname == "events" else refname) if t)
            systems.setdefault(system, {}).setdefault(x, {}).update(
                {f"duration_mae{suffix}": m["mae_frames"], f"duration_within1{suffix}": m["within1"],
                 f"boundary_mae{suffix}": m["boundary_mae_frames"]})
    bench = Path(exp) / "benchmarks" / "kss_speed.json"
    if bench.is_file():
        for name, m in json.loads(bench.read_text())["models"].items():
            systems.setdefault(name, {})["speed_equal_length"] = {k: v for k, v in m.items() if k != "frames"}
    for name in PAPER_ROWS:  # every ranked system says it (None: converged), so no earlier run's reason survives
        if judged["main_set"] in systems.get(name, {}):
            systems[name][judged["main_set"]]["not_converged"] = judged["not_converged"].get(name)
    trained = {s: Path(exp) / f"tts_{s}" for s in opts.systems if (Path(exp) / f"tts_{s}" / "config.yaml").is_file()}
    for voc in VOCODER_LABELS:
        if (Path(exp) / voc / "checkpoint.pkl").is_file():
            trained[voc] = Path(exp) / voc
    return update_results(Path(exp) / "results.json", "egs/kss/tts1", opts.corpus, systems,
                          extra={"sealed_looks": looks, "verdicts": judged["lines"]}, trained=trained,
                          headline=lambda _: headline(exp, opts.sets, rows, durs, judged))


# ---- verdicts (local_models/common/verdict.py): each on its 95 % interval, with the set its choices were made on
LENGTH_RANGE = (0.5, 2.0)  # mean length ratio outside it: the model does not speak at anything like the recorded rate
GOAL_MAE = 2.0             # the acceptance: JDI-T's aligner durations within 2 frames (MAE) of the true ones
MEASURES = {"DTW": ("mcd_sum_db", "frames"), "1:1": ("mcd_1to1_sum_db", "frames_1to1")}  # per_utt sums, frames


def not_converged(name: str, rows: dict, x: Optional[str]) -> str:
    """Why NAME is not taken as a trained model on set X ('' when nothing says so): its attention failed on most
    utterances (a student: its teacher's did, the durations it learnt from), or its output length is far from the
    recording's (LENGTH_RANGE). Such a model is reported, not ranked."""
    m = rows.get(name, {}).get(x, {}) if x else {}
    why = []
    a = m.get("attention")
    if a and a["failure_rate"] > NOT_ALIGNED:
        why.append(f"attention failed on {fmt(a['failure_rate'], pct=True)} % of utterances")
    ta = rows.get(TEACHER.get(name), {}).get(x, {}).get("attention") if name in TEACHER else None
    if ta and ta["failure_rate"] > NOT_ALIGNED:
        why.append(f"its teacher's ({LABELS[TEACHER[name]]}) attention failed on {fmt(ta['failure_rate'], pct=True)} %"
                   " of utterances")
    r = m.get("length_ratio")
    if r is not None and not LENGTH_RANGE[0] <= r <= LENGTH_RANGE[1]:
        why.append(f"length ratio {fmt(r)}, outside {LENGTH_RANGE[0]:g}-{LENGTH_RANGE[1]:g}")
    return "; ".join(why)


def speaker_clusters(data, x: str, utts: Sequence[str]):
    """(cluster labels, what) for a bootstrap over UTTS of set X: their speakers (data/X/utt2spk) when there are
    more than one (utterances of one speaker are not independent draws), else None (each utterance its own)."""
    f = Path(data) / x / "utt2spk"
    spk = read_table(f) if f.is_file() else {}
    labels = [spk.get(u, u) for u in utts]
    return (labels, "speakers") if len(set(labels)) > 1 and len(set(labels)) < len(utts) else (None, "utterances")


def departs_from_paper(exp: Path) -> Optional[bool]:
    """Whether EXP/tts_jdit's aligner departs from the paper's (transition agent, guided attention weight not 1);
    None when no JDI-T was trained there."""
    import yaml

    conf = Path(exp) / "tts_jdit" / "config.yaml"
    if not conf.is_file():
        return None
    t = (yaml.safe_load(conf.read_text(encoding="utf-8")) or {}).get("tts_conf") or {}
    return bool(t.get("aligner_transition_agent")) or float(t.get("guided_attn_weight", 1.0)) != 1.0


def chosen_on_text(opts: ScoreOptions) -> str:
    """The set JDI-T's settings were chosen on, as each verdict states it: OPTS.chosen_on where this run's JDI-T
    departs from the paper (transition agent, guided attention weight), said plainly when that is a sealed set."""
    if departs_from_paper(Path(opts.exp)) is False:
        return "no set (JDI-T with the paper's aligner settings)"
    if opts.chosen_on in opts.sealed_sets:
        return (f"{opts.chosen_on} (JDI-T's departures from the paper were chosen on this sealed set's true durations "
                "in an earlier version and are not yet re-chosen on dev: not a held-out result)")
    if opts.chosen_on == "dev":
        return "dev (the departures, first found on test, re-chosen there against the paper's settings)"
    return opts.chosen_on


def ordering_lines(rows: dict, x: Optional[str], data, chosen_on: str) -> list:
    """One verdict per baseline and MCD measure on set X: the baseline's frame-pooled MCD minus JDI-T's, paired
    over utterances (bootstrap, clustered by speaker when the set has several), against the side the paper's KSS
    MOS puts them on (higher MOS ~ lower MCD); a baseline that did not converge (not_converged) is not judged."""
    jd = rows.get("jdit", {}).get(x) if x else None
    if not jd or "per_utt" not in jd:
        return []
    out = []
    own = not_converged("jdit", rows, x)
    for b in (n for n in PAPER_ROWS if n != "jdit" and "mcd" in rows.get(n, {}).get(x, {})):
        label = LABELS[b]
        why = "; ".join(w for w in (own and f"JDI-T: {own}", not_converged(b, rows, x) and
                                    f"{label}: {not_converged(b, rows, x)}") if w)
        if why:
            out.append(f"MCD ordering on `{x}`, {label} vs JDI-T (ours): not judged, not converged ({why}).")
            continue
        sign = 1 if PAPER_MOS["jdit"][1] > PAPER_MOS[b][1] else -1
        for measure, (total, frames) in MEASURES.items():
            bu, ju = rows[b][x].get("per_utt", {}), jd["per_utt"]
            utts = sorted(u for u in bu.keys() & ju.keys() if total in bu[u] and total in ju[u])
            claim = (f"MCD ({measure}) on `{x}`, {label} − JDI-T (ours), dB (the paper's KSS MOS puts "
                     f"{'JDI-T' if sign > 0 else label} above)")
            if len(utts) < 2:
                out.append(f"{claim}: not judged, {len(utts)} utterance(s) with per-utterance MCDs (an interval "
                           "needs 2).")
                continue
            clusters, what = speaker_clusters(data, x, utts)
            arrays = [[per[u][k] for u in utts] for per in (bu, ju) for k in (total, frames)]
            iv = V.bootstrap(pooled_difference, *arrays, clusters=clusters, what=what)
            out.append(V.sentence(claim, V.compare(iv, sign), iv, chosen_on))
    return out


def goal_lines(durs: dict, sets: Sequence[str], data, chosen_on: str) -> list:
    """The acceptance on each test set and reference: JDI-T's aligner MAE < GOAL_MAE frames, judged on the upper
    end of its bootstrap interval over utterances (token-pooled MAE, as the table's)."""
    out = []
    for (x, refname), table in durs.items():
        m = table.get("jdit_aligner")
        if x not in sets or not m:
            continue
        claim = (f"JDI-T aligner duration MAE on `{x}` against the {REFERENCE_NAMES[refname]} "
                 f"(goal < {GOAL_MAE:g} frames)")
        utts = sorted(m["per_utt"])
        if len(utts) < 2:
            out.append(f"{claim}: not judged, {fmt(m['mae_frames'])} frames on {len(utts)} utterance (an interval "
                       "needs 2).")
            continue
        clusters, what = speaker_clusters(data, x, utts)
        iv = V.bootstrap(pooled_mean, [m["per_utt"][u][0] for u in utts], [m["per_utt"][u][1] for u in utts],
                         clusters=clusters, what=what)
        out.append(V.sentence(claim, V.goal(iv, GOAL_MAE, "<="), iv, chosen_on, fmt="{:.2f}"))
    return out


def judge(opts: ScoreOptions, rows: dict, durs: dict) -> dict:
    """The run's verdicts: main_set (Table 1's), not_converged ({system: why} there), ordering and goal lines
    (both in `lines`, results.json's "verdicts")."""
    main_set = next((x for x in opts.sets if any(x in r and "mcd" in r[x] for r in rows.values())), None)
    chosen = chosen_on_text(opts)
    ordering = ordering_lines(rows, main_set, opts.data, chosen)
    goals = goal_lines(durs, opts.sets, opts.data, chosen)
    bad = {n: w for n in PAPER_ROWS for w in [not_converged(n, rows, main_set)] if w}
    return dict(main_set=main_set, not_converged=bad, ordering=ordering, goals=goals, lines=ordering + goals)


# the intervals resample utterances; a second training (another seed, another CPU) moves the systems more than that
SEED_NOTE = ("One training seed per system: each interval covers the test utterances, not training noise. A model "
             "retrained on another CPU or from another seed can land elsewhere (at this size an attention model can "
             "converge in one training and fail in the next), and none of these comparisons was repeated over seeds.")


def _verdict_lines(judged: dict, looks: dict) -> list:
    """'## Verdicts': the sealed sets' looks, then the ordering and the goal, each on its interval."""
    L = ["## Verdicts (95 % intervals; local_models/common/verdict.py)", "", record_line(looks), ""]
    if judged["not_converged"]:
        L += ["Not converged, so not ranked (MCD ordering below leaves them out): "
              + "; ".join(f"{LABELS[n]} ({w})" for n, w in judged["not_converged"].items())
              + f". A DTW MCD cannot see a wrong length (it pairs every reference frame with the nearest synthesised "
              "one): the 1:1 MCD and the length ratio in Table 1 can.", ""]
    L += [f"- {line}" for line in judged["lines"]] or ["No verdict: nothing with per-utterance scores to compare."]
    if judged["lines"]:
        L += ["", SEED_NOTE]
    return L + [""]


def _set_line(name: str, d: Path, hop_s: float) -> str:
    """'NAME (d): N clips, M min, S speakers' of one data dir (minutes from utt2num_frames; text only without)."""
    utts = read_table(d / "utt2spk") if (d / "utt2spk").is_file() else read_table(d / "text")
    speakers = len(set(utts.values())) if (d / "utt2spk").is_file() else None
    frames = d / "utt2num_frames"
    length = (f"{sum(int(v) for v in read_table(frames).values()) * hop_s / 60:.1f} min" if frames.is_file()
              else "text only")
    return f"- {name} (`{d}`): {len(utts)} clips, {length}" + (f", {speakers} speaker(s)" if speakers else "")


def data_lines(exp, data, systems: Sequence[str], sets: Sequence[str]) -> list:
    """'## Data (this run)': clips, minutes and speakers of the training and validation sets (as the first
    trained system's config.yaml names them) and of every scored set, from the data dirs under DATA."""
    import yaml

    from .pack import read_fbank_conf

    dirs = {}
    for s in systems:
        conf = Path(exp) / f"tts_{s}" / "config.yaml"
        if conf.is_file():
            c = yaml.safe_load(conf.read_text(encoding="utf-8")) or {}
            for key, name in (("train_data_path_and_name_and_type", "train"),
                              ("valid_data_path_and_name_and_type", "valid")):
                if c.get(key):
                    dirs[name] = Path(c[key][0][0]).parent
            break
    dirs.update({x: Path(data) / x for x in sets})
    fbank = Path(exp).parent / "conf" / "fbank.conf"
    c = read_fbank_conf(fbank) if fbank.is_file() else {"hop_length": 256, "sample_rate": 22050}
    hop_s = int(c["hop_length"]) / int(c["sample_rate"])
    lines = [_set_line(name, d, hop_s) for name, d in dirs.items() if (d / "text").is_file()]
    return ["## Data (this run)", "", *lines, ""] if lines else []


def _intro_lines(corpus: str, systems: Sequence[str], exp, rows, env=None) -> list:
    """Title, CORPUS, environment, SYSTEMS not run, vocoder, training length and the aligner variant of this run
    (under EXP)."""
    L = ["# egs/kss/tts1: JDI-T vs ESPnet Tacotron2 / Transformer / FastSpeech (paper 002, Lim et al.)", "",
         f"Corpus: {corpus}. Written by `local_models/bin/jdit_score.py` (run.sh stage 6) from this run's "
         f"measurements; hardware: {hardware()}.", "", *environment_lines(env or {})]
    not_run = [LABELS[s] for s in PAPER_ROWS if s not in systems]
    if not_run:
        L += [f"**Not run: {', '.join(not_run)}** (rows marked \"not run\").", ""]
    vocoders = sorted({m["vocoder_label"] for name, sets in rows.items() if not name.startswith("gt_mel")
                       for m in sets.values()})
    pwg = vocoder_summary(Path(exp) / "vocoder_pwg")
    pwg = (f"Parallel WaveGAN trained by this recipe (stage 4, `exp/vocoder_pwg`): {pwg}; the paper's vocoder "
           "trained 400k steps with the 30-layer generator (conf/tuning/train_pwg.yaml)") if pwg else ""
    if vocoders == ["Griffin-Lim"]:
        L += ["Vocoder of the systems: griffin_lim (torchaudio's fast Griffin-Lim on the de-normalised log-mel, "
              "local_models/common/griffin_lim.py), NOT the "
              "paper's Parallel WaveGAN, so absolute MCDs include Griffin-Lim's own distortion (the GT mel + "
              "Griffin-Lim row)." + (f" {pwg}: its row on the reference mels says whether it would do better "
                                      "(`--vocoder pwg` vocodes the systems with it)." if pwg else ""), ""]
    elif vocoders:  # trained ones, named by their configs
        L += [f"Vocoder of the systems: {', '.join(vocoders)}." + (f" {pwg}." if pwg else ""), ""]
    mbm = vocoder_summary(Path(exp) / "vocoder_mbmelgan")
    if mbm:
        L += [f"Multi-band MelGAN in `exp/vocoder_mbmelgan` (parallel-wavegan's trainer through jdit_pwg_train, as "
              f"stage 4 runs it with --train-mbmelgan true): {mbm}; its paper trained 1M steps "
              "(conf/tuning/train_mbmelgan.yaml).", ""]
    training = {name: training_summary(Path(exp) / f"tts_{name}") for name in systems}
    trained = [t for t in training.values() if t]
    steps = [int(m.group(1)) for t in trained for m in [re.search(r"\((\d+) steps", t)] if m]
    if trained:
        short = bool(steps) and max(steps) < 10000
        L += ["Training (this run): " + "; ".join(f"{LABELS[n]} {t}" for n, t in training.items() if t) + ". "
              "The paper trained JDI-T for 300k steps on 12 h of KSS"
              + ("; at these step counts the attention-based models here are far from converged (see the "
                 "duration and attention-failure tables), so this run tests the pipeline and the measurements, "
                 "not the paper's quality ranking." if short else "."), ""]
    baselines = [LABELS[n] for n in systems if n != "jdit" and training.get(n)]
    if "jdit" in systems and baselines and departs_from_paper(Path(exp)):
        same_length = len(steps) == len(trained) and len(set(steps)) == 1
        L += ["Settings searched: JDI-T's aligner departures only (against the paper's settings, on the mini "
              "corpus's dev set: `local/choose_departures.sh`, RESULTS_dev_choice.md). The baselines ("
              + ", ".join(baselines) + ") run the ESPnet settings of conf/tuning/train_<system>*.yaml as given, "
              "searched on no set: "
              + (f"the same training length as JDI-T ({steps[0]} steps)" if same_length else "the training lengths above")
              + " and its checkpoint rule (the lowest dev loss), no settings search of their own; a baseline that "
              "does not converge at that length is reported, not ranked.", ""]
    aligner = aligner_summary(Path(exp) / "tts_jdit") if "jdit" in systems else ""
    if aligner:
        L += [aligner, ""]
    return L


def _table1_lines(systems: Sequence[str], gt_mel_rows: Sequence[str], rows, main_set) -> list:
    """The paper's Table 1 (MOS) beside our objective scores on the main test set (SYSTEMS: those run)."""
    L = ["## Table 1: paper MOS beside our objective scores", ""]
    if main_set:
        s = rows["gt_mel"][main_set]["mcd_settings"] if "gt_mel" in rows else None
        L += [f"Test set `{main_set}`. MOS cannot be run here; objective scores stand in for it: MCD = "
              "(10/ln10)·sqrt(2·Σ_{n=1..order}(c_n − c'_n)²) averaged over the DTW path (c0 excluded), pooled over "
              "all frames of the set; log-F0 RMSE (natural log) over frames voiced in both, V/UV error over the "
              f"path; WORLD analysis ({(s or {}).get('f0_method', 'harvest')} F0, cheaptrick, pysptk sp2mc)"
              + (f" at {s['sample_rates'][0]} Hz, order {s['order'][0]}, alpha {s['alpha'][0]}, {s['shift_ms']} ms "
                 "shift (both sides resampled: the mel stops at 7.6 kHz)" if s else "") + ". Lower is better. "
              "MCD 1:1 penalises a wrong length, which the DTW MCD cannot see: frame t against frame t over the "
              "longer of the two, the shorter held at its last frame (its final silence), the same coefficients "
              "(local_models/jdit/metrics.py `mcd_one_to_one`).", ""]
    L += ["| model | paper MOS Internal | paper MOS KSS | MCD (dB) | MCD 1:1 (dB) | log-F0 RMSE | V/UV err (%) | "
          "length ratio | aligned? | converged? |", "|---|---|---|---|---|---|---|---|---|---|"]
    gt_rows = [n for n in gt_mel_rows if n in rows] or ["gt_mel"]
    aligned = {name: alignment_note(name, rows, main_set) for name in PAPER_ROWS}
    for name in (*gt_rows, *PAPER_ROWS):
        m = rows.get(name, {}).get(main_set) if main_set else None
        # the paper's GT mel row is Parallel WaveGAN on the reference mels
        pi, pk = PAPER_MOS["gt_mel"] if name.startswith("gt_mel") else PAPER_MOS[name]
        if name.startswith("gt_mel") and m is not None and m["vocoder_label"] not in ("Parallel WaveGAN", "unknown"):
            pi, pk = "—", "—"
        label = row_name(name, rows.get(name, {}))
        if m is None or "mcd" not in m:
            why = "not run" if not name.startswith("gt_mel") and name not in systems else "not scored"
            L.append(f"| {label} | {pi} | {pk} | {why} | | | | | | |")
        else:
            bad = not_converged(name, rows, main_set) if name in PAPER_ROWS else ""
            done = ("NO: " + bad if bad else "yes") if name in PAPER_ROWS else ""
            L.append(f"| {label} | {pi} | {pk} | {fmt(m['mcd'])} | {fmt(m.get('mcd_1to1'))} | "
                     f"{fmt(m['lf0_rmse'], 3)} | {fmt(m['vuv_error'], pct=True)} | {fmt(m['length_ratio'])} | {aligned.get(name, '')} | {done} |")
    L += ["", "length ratio = synthesised / reference frames (mean over utterances): 1.0 is the recorded speaking "
          "rate. aligned?: whether the model's attention followed the text at synthesis on this set (the robustness "
          f"table below; NO = failed on more than {100 * NOT_ALIGNED:.0f} % of utterances). A row marked NO compares "
          "with a baseline whose attention never learnt the alignment at this training length, not with the "
          f"paper's converged baseline. converged?: NO when the attention (a student's: its teacher's) failed on more "
          f"than {100 * NOT_ALIGNED:.0f} % of utterances or the length ratio lies outside "
          f"{LENGTH_RANGE[0]:g}-{LENGTH_RANGE[1]:g}; such a row is reported, not ranked (Verdicts).", ""]
    return L


NOT_ALIGNED = 0.5  # attention failure share above which a model is said not to align


def alignment_note(name: str, rows: dict, x: Optional[str]) -> str:
    """Table 1's 'aligned?' cell: from the attention failures of an autoregressive model on set X; a student
    (FastSpeech) inherits its teacher's (the Transformer's) alignment; JDI-T synthesises without attention."""
    if name == "jdit":
        return "no attention at synthesis"
    if name in TEACHER:
        teacher = alignment_note(TEACHER[name], rows, x)
        return f"durations from the {LABELS[TEACHER[name]]} ({teacher})" if teacher else ""
    a = rows.get(name, {}).get(x, {}).get("attention") if x else None
    if not a:
        return ""
    rate = a["failure_rate"]
    return f"{'NO' if rate > NOT_ALIGNED else 'yes'}: attention failed on {fmt(rate, pct=True)} % of utterances"


def scored_token_type(exp, data, systems: Sequence[str]) -> str:
    """'espeak' or 'jamo': the tokens the scored SYSTEMS read (their EXP config's token list; else DATA's list)."""
    import yaml

    for s in systems:
        conf = Path(exp) / f"tts_{s}" / "config.yaml"
        if conf.is_file():
            tokens = yaml.safe_load(conf.read_text(encoding="utf-8")).get("token_list")
            if isinstance(tokens, list):
                return token_type_of(tokens)
    data_list = Path(data) / "token_list" / "phn" / "tokens.txt"
    return token_type_of(data_list.read_text(encoding="utf-8").split()) if data_list.is_file() else "espeak"


def reference_mapping(exp, data, systems: Sequence[str]) -> str:
    """How the true phone times became per-token durations, for the run's token type (scored_token_type)."""
    kind = scored_token_type(exp, data, systems)
    if kind == "espeak":
        return ("one to one: the text tokens are espeak-ng's own Korean phonemes, one per phone event "
                "(run.sh --token-type espeak, local_models/jdit/phonemes.py)")
    return ("mapped onto our jamo tokens by a monotonic alignment (run.sh --token-type jamo). The MAE then also "
            "counts how a segment is shared between a sounding token and a silent neighbour (the onset "
            "placeholder ㅇ and `<space>` have 0 true frames): frames put on one cost twice there but move one "
            "boundary")


def _duration_lines(exp, data, systems: Sequence[str], durs, goals: Sequence[str] = (),
                    dev_set: Optional[str] = None) -> list:
    """Duration accuracy against the true durations, the acceptance line and the aligner's systematic errors
    (EXP, DATA, SYSTEMS: for the token type, reference_mapping; DATA: the closure reference's changes; GOALS:
    goal_lines' verdicts); a run whose scored sets have no true phone times (recorded speech) says so."""
    L = []
    if not durs:
        L += ["## Duration accuracy against the true phone durations", "",
              "No reference durations: no scored set has true phone times (data/<set>/phones.ctm; recorded speech "
              "has none), so the aligner's and the predictor's durations are not scored here.", ""]
    if durs:
        L += ["## Duration accuracy against the true phone durations (the paper could not measure this)", "",
              "Frames (hop 256 at 22.05 kHz = 11.6 ms) per phoneme token vs the espeak-ng synthesis engine's own "
              f"phone times, {reference_mapping(exp, data, systems)} (local_models/jdit/durations.py). MAE over all tokens; "
              "\"uniform\" spreads each utterance's true frame count evenly over its tokens (what knowing only "
              "the length gives). Boundary error: |cumulative hyp - cumulative true| at each internal token "
              "boundary, in frames; within ±1 frame is about the usual 20 ms tolerance. The acceptance: JDI-T's "
              "extracted durations MAE < 2 frames against the engine events on `test`.", "",
              "Two references from the same engine output. *engine events*: each phone starts at its espeak-ng "
              "phoneme event, as emitted. *closures to the stop*: espeak-ng renders a stop's closure (its "
              "\"pre-pause\", near silence) BEFORE the stop's event (synthesize.c: DoPause(prepause) "
              "precedes DoPhonemeMarker), so the events give the closure to the phone before; phonetic segmentation "
              "(TIMIT's closure + release, forced aligners) gives it to the stop. This reference moves every such "
              "quiet run before a phone's event (15 dB below the preceding phone's level, 10 ms or longer) to that "
              "phone (`jdit_text closures`, local_models/common/synth.py `closures_to_following`). Both are shown: "
              "neither is a human annotation.", "", *closure_lines(Path(data), sorted({x for x, _ in durs})),
              "| set | reference | durations | MAE (frames) | within ±1 frame (%) | zero-length tokens (%) | boundary "
              "error (frames) | boundaries within ±1 frame (%) | tokens |",
              "|---|---|---|---|---|---|---|---|---|"]
        label = {"uniform": "uniform (reference point)", "jdit_aligner": "JDI-T aligner (attention argmax, teacher forced)",
                 "jdit_aligner_viterbi": "JDI-T aligner, best monotonic path (not the paper's rule, see below)",
                 "jdit_predictor": "JDI-T duration predictor (synthesis)",
                 "fastspeech_teacher": "FastSpeech's teacher (Transformer attention, teacher forced)"}
        for (x, refname), table in durs.items():
            for kind, m in table.items():
                L.append(f"| {x} | {REFERENCE_NAMES[refname]} | {label[kind]} | {fmt(m['mae_frames'])} | "
                         f"{fmt(m['within1'], pct=True)} | {fmt(m['zero_share'], pct=True)} | "
                         f"{fmt(m['boundary_mae_frames'])} | {fmt(m['boundary_within1'], pct=True)} | {m['tokens']} |")
        first = next((x for (x, _), table in durs.items() if "jdit_aligner" in table), None)
        for (x, refname), table in durs.items():
            if x != first or "jdit_aligner" not in table:
                continue
            m = table["jdit_aligner"]
            claim = f"JDI-T aligner duration MAE on `{x}` against the {REFERENCE_NAMES[refname]} "
            L += ["", f"Acceptance: {next((g for g in goals if g.startswith(claim)), claim + fmt(m['mae_frames']))}"]
            if m.get("bias"):
                L += ["", bias_line(f"`{x}` against the {REFERENCE_NAMES[refname]}", m)]
            v = table.get("jdit_aligner_viterbi")
            if v:
                L += ["", f"Read-out check on `{x}` against the {REFERENCE_NAMES[refname]}: the best monotonic path "
                      f"through the same attention (content weights and transition probabilities of the recursion, "
                      f"ending on the last token, each frame read off the decoder step after it, the first whose query has "
                      f"seen it; local_models/jdit/attention.py `viterbi_durations`) gives MAE "
                      f"{fmt(v['mae_frames'])} frames against the argmax's {fmt(m['mae_frames'])}. The paper's "
                      "argmax of the forward attention is a filtered read-out (frame t sees frames up to t), the "
                      "best path uses the whole utterance. Not the paper's rule, not what training uses, not the "
                      "acceptance."]
                if v.get("bias"):
                    L += ["", bias_line(f"`{x}`, best path, against the {REFERENCE_NAMES[refname]}", v)]
        if dev_set and any(x == dev_set for x, _ in durs):
            L += ["", f"The `{dev_set}` rows: the set JDI-T's settings are chosen on (stage 5 aligns it and refuses "
                  "a sealed set there). The three departures in conf/tuning/train_jdit_tiny.yaml were first found on "
                  "the test set's true durations in an earlier version, then re-chosen on dev against the paper's "
                  "settings (local/choose_departures.sh, egs/kss/tts1/RESULTS_dev_choice.md)."]
        L += [""]
    return L


def _attention_lines(rows) -> list:
    """Attention failures of the autoregressive models."""
    att_rows = [(name, x, m["attention"]) for name, sets in rows.items() for x, m in sets.items() if "attention" in m]
    L = ["## Robustness: attention failures of the autoregressive models", "",
         f"Per utterance, from the attention at synthesis (argmax input token per output frame; the Transformer's "
         f"most focused encoder-decoder head): skip = a forward jump of more than {SKIP_TOKENS} tokens, repeat = "
         f"going back more than {SKIP_TOKENS} tokens behind the furthest point reached, incomplete = ending more than "
         f"{SKIP_TOKENS} tokens before the end or never stopping. The paper reports (without numbers) that Tacotron2 "
         "and Transformer fail often on out-of-domain scripts after KSS training and never on its test scripts. "
         "FastSpeech and JDI-T use no attention at synthesis.", ""]
    if att_rows:
        L += ["| model | set | utts | skip | repeat | incomplete | failure rate (%) |", "|---|---|---|---|---|---|---|"]
        for name, x, a in att_rows:
            L.append(f"| {LABELS[name]} | {x} | {a['utterances']} | {a['skip']} | {a['repeat']} | {a['incomplete']} | "
                     f"{fmt(a['failure_rate'], pct=True)} |")
    else:
        L += ["Not measured: no autoregressive system was run (or it saved no attention)."]
    L += [""]
    return L


def attention_figures(exp) -> dict:
    """{exp/images name: the plot} for the first attention plot of each set the JDI-T aligner aligned (stage 5 draws
    them under exp/tts_jdit/align_<set>/images/): the figures the report shows, since the durations JDI-T learns from
    are read off this attention (the paper has no such figure)."""
    out = {}
    for d in sorted(Path(exp).glob("tts_jdit/align_*/images")):
        first = next(iter(sorted(d.glob("*.png"))), None)
        if first is not None:  # "__" apart: set test + utt a_x and set test_a + utt x are two names
            out[f"attention_{_safe(d.parent.name[len('align_'):])}__{_safe(first.stem)}.png"] = first
    return out


def _safe(name: str) -> str:
    """NAME with what a markdown image link cannot hold (brackets, parentheses, spaces, slashes) as '-'."""
    return re.sub(r"[^\w.-]", "-", name)


def attention_lines(exp) -> list:
    """Where stage 5's attention plots are, and the first of each set embedded (attention_figures)."""
    plots = sorted(Path(exp).glob("tts_jdit/align_*/images/*.png"))
    if not plots:
        return []
    # the true path is drawn only where the set has true phone times (the espeak-ng mini corpus)
    truth = any((Path(exp).parent / "data" / p.parent.parent.name[len("align_"):] / "phones.ctm").is_file()
                for p in plots)
    return (["", f"Attention plots (JDI-T aligner{', dashed: true path' if truth else ''}; the first of each set "
             "below): " + ", ".join(f"`{p.as_posix()}`" for p in plots[:6]) + ".", ""]
            + [f"![JDI-T aligner attention, {name[len('attention_'):-len('.png')].replace('__', ' ')}]"
               f"(exp/images/{name})" for name in attention_figures(exp)])


def _speed_lines(exp, rows) -> list:
    """Real-time factors and audio checks, the equal-length speed benchmark (EXP/benchmarks), plots and where the
    outputs are."""
    L = ["## Synthesis speed and audio checks", "",
         "RTF = compute seconds / seconds of audio generated, on this CPU, acoustic model and vocoder apart "
         "(torch threads as listed). silent: peak < 0.01; over full scale: peak > 1 before normalising.", "",
         "| model | set | utts | audio (s) | RTF acoustic | RTF vocoder | threads | silent | over full scale | hit max length |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for name, sets in rows.items():
        for x, m in sets.items():
            L.append(f"| {row_name(name, sets)} | {x} | {m['utterances']} | {m['audio_seconds']:.1f} | "
                     f"{m['rtf']:.4f} | {m['vocoder_rtf']:.4f} | {m['threads']} | {m['silent']} | "
                     f"{m['over_full_scale']} | {m['hit_maxlen']} |")
    bench = Path(exp) / "benchmarks" / "kss_speed.json"
    if bench.is_file():
        b = json.loads(bench.read_text())
        base = next((k[len("speedup_over_"):] for m in b["models"].values() for k in m if k.startswith("speedup_over_")),
                    None)
        L += ["", "### Speed at equal output length (benchmarks/kss_speed.py, run by stage 6)", "",
              f"{b['sentences']} sentences of {', '.join(b['sets'])}; every model generates the same frames (true "
              f"durations where known; the autoregressive models with the stop token disabled and the maximum "
              f"length set to them); acoustic model only, best of {b['repeats']}, {b['threads']} threads, "
              f"{b['precision']}.{load_text(b)} The issue's acceptance: JDI-T at least 10x faster than the "
              "Transformer.", "",
              f"| model | seconds | speech (s) | RTF | speed-up over {base} |", "|---|---|---|---|---|"]
        for name, m in b["models"].items():
            L.append(f"| {LABELS.get(name, name)} | {m['seconds']:.3f} | {m['speech_seconds']:.1f} | {m['rtf']:.4f} | "
                     f"{m.get(f'speedup_over_{base}', float('nan')):.1f}x |")
    L += attention_lines(exp)
    L += ["", "Synthesised wavs: `exp/tts_<system>/decode_<set>/wav/`, the vocoder on reference mels: "
          "`exp/gt_mel*/decode_<set>/wav/`. All numbers: `exp/results.json`.", ""]
    return L


def departure_lines(exp: Path) -> list:
    """What this run's JDI-T does where the paper is silent or different, read from exp/tts_jdit/config.yaml and
    conf/fbank.conf (the recipe's, beside exp/)."""
    import yaml

    conf = exp / "tts_jdit" / "config.yaml"
    if not conf.is_file():
        return []
    c = yaml.safe_load(conf.read_text(encoding="utf-8"))
    t = c.get("tts_conf") or {}
    fbank = exp.parent / "conf" / "fbank.conf"
    opts = dict(re.findall(r"--([\w-]+) (\S+)", fbank.read_text())) if fbank.is_file() else {}
    lines = ["## How this JDI-T differs from the paper (or fills what it leaves open)", "",
             f"- FFT block: self-attention ({t.get('aheads')} heads), then the paper's \"1D convolution\" as ESPnet's "
             f"`{t.get('positionwise_layer_type')}`: conv (kernel {t.get('positionwise_conv_kernel_size')}) -> ReLU "
             "-> linear, each with residual + layer norm.",
             f"- Gradient clipping at norm {c.get('grad_clip')} (the paper gives none); optimiser `{c.get('optim')}` "
             f"{c.get('optim_conf')}, scheduler `{c.get('scheduler')}`.",
             f"- Log-mel features: {opts.get('n-mels', '?')} bands, {opts.get('fmin', '?')}-{opts.get('fmax', '?')} Hz, "
             f"FFT {opts.get('n-fft', '?')}, hop {opts.get('hop-length', '?')} at {opts.get('sample-rate', '?')} Hz "
             f"(the paper states 80 bands only), normalised `{c.get('normalize')}`.", ""]
    return lines


def headline(exp, sets: Sequence[str], rows, durs, judged: dict) -> list:
    """The measured claims README's row gives (results.json 'headline'): MCD (DTW and 1:1) and length ratio of every
    system on the main test set (the first of SETS with one; not-converged ones marked), the verdicts (JUDGED:
    ordering, then the aligner's duration goal), attention failures and the equal-length speed-up (EXP/benchmarks)."""
    out = []
    main_set = judged["main_set"]
    if main_set:
        scored = [(n, rows[n][main_set]) for n in reversed(PAPER_ROWS) if "mcd" in rows.get(n, {}).get(main_set, {})]
        mark = {n: " (not converged)" if n in judged["not_converged"] else "" for n, _ in scored}
        out.append(f"`{main_set}` MCD (DTW): "
                   + ", ".join(f"{LABELS[n]} {fmt(m['mcd'])} dB{mark[n]}" for n, m in scored))
        if any(m.get("mcd_1to1") is not None for _, m in scored):
            out.append(f"`{main_set}` MCD 1:1 (penalises a wrong length) / length ratio: " + ", ".join(
                f"{LABELS[n]} {fmt(m.get('mcd_1to1'))} dB / {fmt(m['length_ratio'])}" for n, m in scored))
    out += judged["lines"]
    fails = [f"{LABELS[n]} {x} {fmt(m['attention']['failure_rate'], pct=True)} %" for n, sets in rows.items()
             for x, m in sets.items() if "attention" in m]
    if fails:
        out.append("attention failures: " + ", ".join(fails))
    bench = Path(exp) / "benchmarks" / "kss_speed.json"
    if bench.is_file():
        jdit = json.loads(bench.read_text())["models"].get("jdit", {})
        out += [f"JDI-T {v:.0f}x faster than {LABELS.get(k[len('speedup_over_'):], k)} at equal length (a timing on "
                "this CPU, no interval)"
                for k, v in jdit.items() if k.startswith("speedup_over_")]
    return out


def write_markdown(opts: ScoreOptions, rows, durs, judged: dict, looks: dict, env=None, claims=None):
    """OPTS.results_md: the sections below, then the GPU check's rows; JUDGED: judge's verdicts, LOOKS: the sealed
    sets' (score_looks); ENV: results.json's environment, CLAIMS: its headline."""
    main_set = judged["main_set"]
    L = (_intro_lines(opts.corpus, opts.systems, opts.exp, rows, env)
         + data_lines(opts.exp, opts.data, opts.systems, opts.sets) + headline_lines(claims)
         + _verdict_lines(judged, looks) + _table1_lines(opts.systems, opts.gt_mel_rows, rows, main_set)
         + _duration_lines(opts.exp, opts.data, opts.systems, durs, judged["goals"], opts.dev_set)
         + _attention_lines(rows) + _speed_lines(opts.exp, rows) + departure_lines(Path(opts.exp)))
    L += gpu_report.section("kss/tts1") + [""]
    images = Path(opts.exp) / "images"
    for name, plot in attention_figures(opts.exp).items():  # beside the run's other figures, for write_report
        images.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(plot, images / name)
    write_report(opts.results_md, "\n".join(L), images)


OWN_SETS = ("test", "ood")  # run.sh's default --test_sets: the first one scored is Table 1's set


def with_earlier_runs(opts: ScoreOptions) -> ScoreOptions:
    """OPTS with the recipe's own test sets an earlier run decoded put first and the systems it trained added, so
    a user's `--test_sets my_set --systems jdit` adds its rows beside the main tables instead of replacing them."""
    exp = Path(opts.exp)
    sets = [x for x in OWN_SETS if x not in opts.sets and any(exp.glob(f"*/decode_{x}/synth.json"))] + list(opts.sets)
    systems = list(opts.systems) + [s for s in PAPER_ROWS if s not in opts.systems
                                    and (exp / f"tts_{s}" / "config.yaml").is_file()]
    return dataclasses.replace(opts, sets=tuple(sets), systems=tuple(systems))


def score(opts: ScoreOptions) -> None:
    """Collect everything and write exp/results.json and RESULTS.md for OPTS, to which the sets and systems of
    earlier runs are added (with_earlier_runs). ValueError when there is nothing to score."""
    scored = list(opts.sets)  # this run's scoring (a look at each sealed one); earlier sets are only shown again
    opts = with_earlier_runs(opts)
    rows, durs = collect(opts.exp, opts.data, opts.systems, opts.sets, opts.gt_mel_rows, opts.dev_set)
    if not rows:
        raise ValueError(f"nothing to score: no {opts.exp}/*/decode_<set>/synth.json for sets {list(opts.sets)} "
                         "(run stage 5)")
    looks = record_looks(opts, scored)
    judged = judge(opts, rows, durs)
    results = write_results_json(opts, rows, durs, judged, looks)
    write_markdown(opts, rows, durs, judged, looks, results.get("environment"), results.get("headline"))


def scored_outputs(exp, data, x: str) -> list:
    """The files a scoring of set X reads (every system's synthesis record, MCD and attention maps, the aligner's
    and the teacher's durations, the references): the same files scored again by the same clean commit are a
    rescoring, not a look (common/sealed.py)."""
    exp, data = Path(exp), Path(data)
    return [*exp.glob(f"*/decode_{x}/synth.json"), *exp.glob(f"*/decode_{x}/mcd.json"),
            *exp.glob(f"*/decode_{x}/att_ws/*.npy"), *exp.glob(f"tts_jdit/align_{x}/durations_*"),
            exp / "tts_transformer" / f"teacher_{x}" / "durations" / "durations",
            *(data / x / name for name in ("text_phn", "utt2spk", *REFERENCES.values()))]  # utt2spk: clusters


def record_looks(opts: ScoreOptions, scored: Sequence[str]) -> dict:
    """results.json's "sealed_looks" for this scoring of SCORED (score_looks over OPTS.config_files + options and
    the files scored); a run that scores no sealed set (a user's own set) keeps the looks of the run whose sealed
    rows it shows. A text-only sealed set (a real corpus's ood sentences) is a look too: its attention failures
    are measured and shown."""
    looks = score_looks(opts.exp, scored, opts.sealed_sets, opts.config_files, dict(opts.options),
                        {x: scored_outputs(opts.exp, opts.data, x) for x in scored})
    old = Path(opts.exp) / "results.json"
    if not looks["looks"] and old.is_file():
        return json.loads(old.read_text(encoding="utf-8")).get("sealed_looks") or looks
    return looks


# ----------------------------------------------------------------------------- choosing settings on dev
def choice_environment(variants: dict) -> list:
    """The choice report's environment block: this machine and commit, and who trained each variant's JDI-T."""
    env = environment()
    env["trained"] = who_trained({f"jdit ({name})": Path(work) / "exp" / "tts_jdit" for name, work in variants.items()})
    return environment_lines(env)


def choose(variants: dict, dev_set: str = "dev", default: str = "paper") -> Tuple[str, list]:
    """(kept variant, markdown lines) of JDI-T variants trained apart (VARIANTS: {name: work dir with exp/ and data/},
    each scored on DEV_SET by stages 5-6). The rule, fixed before the numbers: the variant with the lower aligner
    duration MAE on DEV_SET (attention argmax, teacher forced, against the engine events; token-pooled) is kept when
    the 95 % interval of its difference from DEFAULT's (paired bootstrap over utterances) lies below zero; else
    DEFAULT (the paper's settings) is kept."""
    if default not in variants or len(variants) < 2:
        raise ValueError(f"choose: give {default!r} and at least one other variant, got {', '.join(variants)}")
    tables = {}
    for name, work in variants.items():
        work = Path(work)
        true = work / "data" / dev_set / REFERENCES["events"]
        if not true.is_file():
            raise FileNotFoundError(f"{true}: missing (stage 3 writes the true durations of {dev_set})")
        t = duration_table(work / "exp", work / "data", dev_set, true)
        if "jdit_aligner" not in t:
            raise FileNotFoundError(f"{work / 'exp' / 'tts_jdit' / f'align_{dev_set}'}: no aligner durations "
                                    f"(stage 5 aligns --dev-set {dev_set})")
        tables[name] = t
    utts = sorted(set.intersection(*(set(t["jdit_aligner"]["per_utt"]) for t in tables.values())))
    base = tables[default]["jdit_aligner"]["per_utt"]
    L = [f"# JDI-T's aligner settings chosen on `{dev_set}`", "",
         f"Written by `local_models/bin/jdit_choose.py` (egs/kss/tts1/local/choose_departures.sh) from the runs' own "
         f"stage-5 alignments of `{dev_set}` ({len(utts)} utterances, "
         f"{sum(base[u][1] for u in utts)} tokens). Rule, fixed before the runs: the variant with the lower aligner "
         f"duration MAE (attention argmax, teacher forced, against the engine events, token-pooled) is kept when the "
         f"95 % interval of its difference from `{default}` (paired bootstrap over utterances) lies below zero; "
         f"otherwise `{default}` (the paper's settings) is kept. One training seed per variant.", "",
         *choice_environment(variants), f"No sealed set was scored: every variant on `{dev_set}` only.", "",
         "| variant | work dir | aligner MAE (frames) | best monotonic path MAE | predictor MAE | uniform MAE | "
         f"difference from `{default}` |", "|---|---|---|---|---|---|---|"]
    kept, best = default, None
    for name, t in tables.items():
        cur = t["jdit_aligner"]["per_utt"]
        if name == default:
            diff = "—"
        else:
            iv = V.bootstrap(pooled_difference,
                             [cur[u][0] for u in utts], [cur[u][1] for u in utts],
                             [base[u][0] for u in utts], [base[u][1] for u in utts], what="utterances")
            diff = iv.text()
            if iv.high < 0 and (best is None or iv.estimate < best):
                kept, best = name, iv.estimate
        row = [fmt(t.get(k, {}).get("mae_frames")) for k in ("jdit_aligner", "jdit_aligner_viterbi",
                                                             "jdit_predictor", "uniform")]
        L.append(f"| {name} | `{variants[name]}` | " + " | ".join(row) + f" | {diff} |")
    L += ["", f"Kept: **{kept}**."]
    return kept, L
