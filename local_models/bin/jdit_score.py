"""Scoring stage of egs/kss/tts1 (paper 002, JDI-T): collect what stages 5-6 measured into exp/results.json and
RESULTS.md (run from the recipe directory).

Per system (exp/tts_<system>) and the GT-mel row (exp/gt_mel), per test set: MCD (DTW) and log-F0 RMSE /
V/UV error from <decode>/mcd.json (local_models/bin/mcd_score.py), real-time factors and audio checks from
<decode>/synth.json (local_models/bin/tts_synth.py). Duration accuracy on sets with true durations
(data/<set>/durations, the mini corpus): JDI-T's aligner (teacher forced) and duration predictor
(exp/tts_jdit/align_<set>), against the "uniform" reference point (each utterance's true frame count
spread evenly over its tokens: what knowing only the length gives).
"""
import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

from local_models.common.datadir import atomic_open, read_table
from local_models.common.results import hardware, update_results

# paper 002, Table 1: MOS (5-point scale)
PAPER_MOS = {"gt_mel": (3.92, 3.87), "tacotron2": (3.52, 3.33), "transformer": (3.55, 3.72),
             "fastspeech": (3.48, 3.23), "jdit": (3.77, 3.52)}
NAMES = {"gt_mel": "GT mel", "tacotron2": "Tacotron2", "transformer": "Transformer", "fastspeech": "FastSpeech",
         "jdit": "JDI-T (ours)"}
SILENT_PEAK = 0.01  # a synthesised wav whose peak stays below this is called silent


def get_parser():
    p = argparse.ArgumentParser(prog="jdit_score", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--systems", nargs="+", required=True, help="trained systems (exp/tts_<system>)")
    p.add_argument("--sets", nargs="+", required=True, help="test sets (first one with audio = the main table)")
    p.add_argument("--corpus", required=True, help="corpus description for RESULTS.md / results.json")
    p.add_argument("--exp", default="exp")
    p.add_argument("--data", default="data")
    p.add_argument("--results-md", default="RESULTS.md")
    return p


def read_durations(path: Path) -> dict:
    return {k: np.array(v.split(), dtype=int) for k, v in read_table(path).items()}


def duration_accuracy(hyp: dict, ref: dict, where: str) -> dict:
    """MAE in frames, share within +-1 frame and share of zero durations over all tokens of utterances in both."""
    utts = sorted(set(hyp) & set(ref))
    if not utts:
        raise ValueError(f"{where}: no utterance in common with the true durations")
    err, zeros = [], 0
    for u in utts:
        if len(hyp[u]) != len(ref[u]):
            raise ValueError(f"{where}: utterance {u}: {len(hyp[u])} durations for {len(ref[u])} tokens")
        err.append(np.abs(hyp[u] - ref[u]))
        zeros += int((hyp[u] == 0).sum())
    e = np.concatenate(err)
    return dict(mae_frames=float(e.mean()), within1=float((e <= 1).mean()), zero_share=zeros / len(e),
                tokens=int(len(e)), utterances=len(utts))


def uniform_durations(ref: dict) -> dict:
    """Each utterance's frame count spread evenly over its tokens (rounded boundaries)."""
    out = {}
    for u, d in ref.items():
        n, total = len(d), int(d.sum())
        out[u] = np.diff(np.round(np.arange(n + 1) * total / n).astype(int))
    return out


def decode_metrics(d: Path) -> dict:
    """MCD / F0 from mcd.json (if scored) and RTF / audio checks from synth.json."""
    out = {}
    synth = json.loads((d / "synth.json").read_text())
    per = synth["per_utt"].values()
    out.update(utterances=synth["utterances"], audio_seconds=synth["audio_seconds"], rtf=synth["acoustic_rtf"],
               vocoder_rtf=synth["vocoder_rtf"], threads=synth["threads"],
               silent=sum(p["peak"] < SILENT_PEAK for p in per), over_full_scale=sum(p["peak"] > 1.0 for p in per),
               hit_maxlen=sum(p["hit_maxlen"] for p in per))
    if (d / "mcd.json").is_file():
        m = json.loads((d / "mcd.json").read_text())
        out.update(mcd=m["mcd_db_frame_pooled"], mcd_utt_mean=m["mcd_db_utt_mean"], lf0_rmse=m["lf0_rmse_frame_pooled"],
                   vuv_error=m["vuv_error_frame_pooled"], mcd_settings=m["settings"])
        lens = [(v["hyp_frames"], v["ref_frames"]) for v in m["per_utt"].values()]
        out["length_ratio"] = float(np.mean([h / r for h, r in lens]))
    return out


def fmt(v, digits=2, pct=False):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return f"{100 * v:.1f}" if pct else f"{v:.{digits}f}"


def collect(args):
    exp, data = Path(args.exp), Path(args.data)
    rows = {}
    for name in ["gt_mel", *args.systems]:
        base = exp / ("gt_mel" if name == "gt_mel" else f"tts_{name}")
        for x in args.sets:
            d = base / f"decode_{x}"
            if (d / "synth.json").is_file():
                rows.setdefault(name, {})[x] = decode_metrics(d)
    durs = {}
    for x in args.sets:
        true_path = data / x / "durations"
        if not true_path.is_file():
            continue
        ref = read_durations(true_path)
        durs[x] = {"uniform": duration_accuracy(uniform_durations(ref), ref, f"{true_path} (uniform)")}
        align = exp / "tts_jdit" / f"align_{x}"
        for kind in ("aligner", "predictor"):
            f = align / f"durations_{kind}"
            if f.is_file():
                durs[x][f"jdit_{kind}"] = duration_accuracy(read_durations(f), ref, str(f))
    return rows, durs


def write_results_json(args, rows, durs):
    systems = {}
    for name, sets in rows.items():
        systems[name] = {x: {k: v for k, v in m.items() if k != "mcd_settings"} for x, m in sets.items()}
    for x, table in durs.items():
        for kind, m in table.items():
            if kind.startswith("jdit_"):
                systems.setdefault("jdit", {}).setdefault(x, {}).update(
                    {f"duration_mae_{kind[5:]}": m["mae_frames"], f"duration_within1_{kind[5:]}": m["within1"]})
            else:
                systems.setdefault(f"duration_{kind}", {})[x] = {"duration_mae": m["mae_frames"],
                                                                 "duration_within1": m["within1"]}
    return update_results(Path(args.exp) / "results.json", "egs/kss/tts1", args.corpus, systems)


def write_markdown(args, rows, durs):
    main_set = next((x for x in args.sets if any(x in r and "mcd" in r[x] for r in rows.values())), None)
    L = ["# egs/kss/tts1: JDI-T vs ESPnet Tacotron2 / Transformer / FastSpeech (paper 002, Lim et al.)", "",
         f"Corpus: {args.corpus}. Written by `local_models/bin/jdit_score.py` (run.sh stage 6) from this run's "
         f"measurements; hardware: {hardware()}.", ""]
    not_run = [NAMES[s] for s in ("tacotron2", "transformer", "fastspeech", "jdit") if s not in args.systems]
    if not_run:
        L += [f"**Not run in this recipe yet: {', '.join(not_run)}** (rows marked \"not run\"). The vocoder is "
              f"Griffin-Lim, not the paper's Parallel WaveGAN, unless run.sh got `--vocoder <checkpoint>`.", ""]
    L += ["## Table 1: paper MOS beside our objective scores", ""]
    if main_set:
        s = rows["gt_mel"][main_set]["mcd_settings"] if "gt_mel" in rows else None
        L += [f"Test set `{main_set}`. MOS cannot be run here; objective scores stand in for it: MCD = "
              "(10/ln10)·sqrt(2·Σ_{n=1..order}(c_n − c'_n)²) averaged over the DTW path (c0 excluded), pooled over "
              "all frames of the set; log-F0 RMSE (natural log) over frames voiced in both, V/UV error over the "
              "path; WORLD analysis (harvest F0, cheaptrick, pysptk sp2mc)"
              + (f" at {s['sample_rates'][0]} Hz, order {s['order'][0]}, alpha {s['alpha'][0]}, {s['shift_ms']} ms "
                 "shift (both sides resampled: the mel stops at 7.6 kHz)" if s else "") + ". Lower is better.", ""]
    L += ["| model | paper MOS Internal | paper MOS KSS | MCD (dB) | log-F0 RMSE | V/UV err (%) | length ratio |",
          "|---|---|---|---|---|---|---|"]
    for name in ("gt_mel", "tacotron2", "transformer", "fastspeech", "jdit"):
        pi, pk = PAPER_MOS[name]
        m = rows.get(name, {}).get(main_set) if main_set else None
        if m is None or "mcd" not in m:
            why = "not run" if name != "gt_mel" and name not in args.systems else "not scored"
            L.append(f"| {NAMES[name]} | {pi} | {pk} | {why} | | | |")
        else:
            L.append(f"| {NAMES[name]} | {pi} | {pk} | {fmt(m['mcd'])} | {fmt(m['lf0_rmse'], 3)} | "
                     f"{fmt(m['vuv_error'], pct=True)} | {fmt(m['length_ratio'])} |")
    L += ["", "length ratio = synthesised / reference frames (mean over utterances): 1.0 is the recorded speaking "
          "rate.", ""]
    if durs:
        L += ["## Duration accuracy against the true phone durations (the paper could not measure this)", "",
              "Frames (hop 256 at 22.05 kHz = 11.6 ms) per phoneme token vs the espeak-ng synthesis engine's own "
              "phone times mapped onto our jamo tokens (local_models/jdit/durations.py). MAE over all tokens; "
              "\"uniform\" spreads each utterance's true frame count evenly over its tokens (what knowing only "
              "the length gives). The issue's acceptance: JDI-T's extracted durations MAE < 2 frames.", "",
              "| set | durations | MAE (frames) | within ±1 frame (%) | zero-length tokens (%) | tokens |",
              "|---|---|---|---|---|---|"]
        label = {"uniform": "uniform (reference point)", "jdit_aligner": "JDI-T aligner (attention argmax, teacher forced)",
                 "jdit_predictor": "JDI-T duration predictor (synthesis)"}
        for x, table in durs.items():
            for kind, m in table.items():
                L.append(f"| {x} | {label[kind]} | {fmt(m['mae_frames'])} | {fmt(m['within1'], pct=True)} | "
                         f"{fmt(m['zero_share'], pct=True)} | {m['tokens']} |")
        for x, table in durs.items():
            if "jdit_aligner" in table:
                ok = table["jdit_aligner"]["mae_frames"] < 2.0
                L += ["", f"Acceptance on `{x}`: aligner MAE {fmt(table['jdit_aligner']['mae_frames'])} frames: "
                      + ("**met** (< 2)." if ok else "**NOT met** (≥ 2).")]
                break
        L += [""]
    L += ["## Synthesis speed and audio checks", "",
          "RTF = compute seconds / seconds of audio generated, on this CPU, acoustic model and vocoder apart "
          "(torch threads as listed). silent: peak < 0.01; over full scale: peak > 1 before normalising.", "",
          "| model | set | utts | audio (s) | RTF acoustic | RTF vocoder | threads | silent | over full scale | hit max length |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for name, sets in rows.items():
        for x, m in sets.items():
            L.append(f"| {NAMES.get(name, name)} | {x} | {m['utterances']} | {m['audio_seconds']:.1f} | "
                     f"{m['rtf']:.4f} | {m['vocoder_rtf']:.4f} | {m['threads']} | {m['silent']} | "
                     f"{m['over_full_scale']} | {m['hit_maxlen']} |")
    plots = sorted(Path(args.exp).glob("tts_jdit/align_*/images/*.png"))
    if plots:
        L += ["", "Attention plots (JDI-T aligner, dashed: true path): "
              + ", ".join(f"`{p.as_posix()}`" for p in plots[:6]) + "."]
    L += ["", "Synthesised wavs: `exp/tts_<system>/decode_<set>/wav/`, the vocoder on reference mels: "
          "`exp/gt_mel/decode_<set>/wav/`. All numbers: `exp/results.json`.", ""]
    with atomic_open(args.results_md) as f:
        f.write("\n".join(L))


def main(argv=None):
    args = get_parser().parse_args(argv)
    try:
        rows, durs = collect(args)
        if not rows:
            raise ValueError(f"nothing to score: no {args.exp}/*/decode_<set>/synth.json for sets {args.sets} "
                             "(run stage 5)")
        write_results_json(args, rows, durs)
        write_markdown(args, rows, durs)
    except (ValueError, OSError, KeyError) as e:
        sys.exit(f"jdit_score: {e}")
    print(f"jdit_score: {args.results_md}, {args.exp}/results.json")


if __name__ == "__main__":
    main()
