"""Reports of the multilingual RNN-T recipe (egs/indic/asr1 stage 7, `local_models.bin.multisoftmax_score`):
exp/results.json and RESULTS.md in the shape of the paper's Tables 2-7, the paper's numbers beside ours, the
acceptance checks and the switch-off trade-off plot. The metrics themselves live in scoring.py.

Reads, for every test set S (data/S/text_norm is the reference, data/S/utt2lid the true language):
    EXP/<system>/decode_S/known/{hyp,hyp_lang}             language given (vanilla: never used)
    EXP/multisoftmax_lid/decode_S/lidfree/{hyp,hyp_lang,hyp_oracle,decode_stats.json}
    EXP/multisoftmax_lid/decode_S/switchoff/<tau>_<s_th>/{hyp,hyp_lang,decode_stats.json}
    EXP/multisoftmax_lid/decode_D/switchoff/...   the same on every dev set D: the switch-off setting is chosen there
A test set that is not one of the recipe's own (<lang>_test) gets its own table (generalisation check).
Verdicts go through common/verdict.py: a WER comparison on its bootstrap interval resampling speakers (data/S/utt2spk:
a speaker's utterances are not independent draws), the LID goal on its Wilson interval. The switch-off choice is made
on the dev sets only and written to EXP/switch_off_choice.json; each scoring of a sealed set counts as a look
(common/sealed.py, results.json "sealed_looks"), but a rescoring of unchanged hypotheses and references by the same
clean commit.
`run(opts)` takes multisoftmax_score's options (ScoreOptions); `choose(opts)` makes the dev-set choice alone.
"""
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import yaml

from local_models.common import gpu_report
from local_models.common import verdict as V
from local_models.common.datadir import DataDirError, atomic_open, read_table
from local_models.common.plots import pyplot, save_figure, write_report
from local_models.common.results import environment_lines, headline_lines, update_results
from local_models.common.sealed import check_tuning, record_line, score_looks

from .scoring import (ESPNET_HEADER, SILENT_SHARE, Counts, espnet_row, pooled, read_text, score,
                      wer_diff_interval, werr, write_sclite)
from .units import script_of, shared_script
from .systems import LABELS, PAPER_SIZE_SYSTEMS, PAPER_SYSTEMS, SYSTEMS, TABLE2_ROWS, TABLE3_ROWS, UNSEEN_ROWS

LANG_NAMES = {"en": "En-IN", "hi": "Hi-IN", "ta": "Ta-IN", "gu": "Gu-IN", "mr": "Mr-IN", "or": "Or-IN", "te": "Te-IN"}
# paper 001 tables: row -> (En-IN, Hi-IN, Ta-IN, Gu-IN, Avg., WERR)
PAPER_LANGS = ("En-IN", "Hi-IN", "Ta-IN", "Gu-IN")
PAPER_T2 = {"mono": (24.67, 16.2, 32.92, 27.33, 23.97, 0), "vanilla": (35.21, 22.94, 48.56, 28.83, 32.45, -35.35),
            "onehot": (25.88, 18.88, 41.92, 27.9, 26.7, -11.37), "multisoftmax": (23.35, 17.2, 31.18, 23.86, 22.86, 4.65),
            "multisoftmax_lsp": (23.46, 16.84, 30.3, 24.28, 22.73, 5.17)}
PAPER_T3 = {"mono": PAPER_T2["mono"], "ft_onehot": (23.65, 16.64, 31.36, 26.01, 23.24, 3.05),
            "ft_multisoftmax": (21.93, 15, 28.45, 22.66, 21.04, 12.22)}
PAPER_T4 = {"vanilla": (35.21, 22.94, 48.56, 28.83, 32.45, 0), "multisoftmax_lid": (28.92, 20.26, 35.83, 31.55, 27.95, 13.86),
            "multisoftmax_lid_oracle": (25, 18.71, 33, 25.30, 24.45, 24.65)}
PAPER_T5 = {"vanilla": (88.7, 86.2, 90.4, 85.5, 87.7), "multisoftmax_lid": (94, 90.2, 95.8, 83.1, 90.09)}
PAPER_T6 = {"mono": 67.98, "vanilla": 68.95, "onehot": 68.98, "multisoftmax": 68.55, "multisoftmax_lsp": 118.94,
            "multisoftmax_lid": 70.08}
# paper Table 7 (Hi-IN subset): (tau ms, s_th) -> (WER, T_avg, LID acc)
PAPER_T7 = [("inf", "inf", 21.84, 4, 92.4), ("1000", "0.2", 21.97, 3.96, 92.1), ("100", "0.2", 22.59, 2.92, 91.3),
            ("30", "0.2", 25.73, 1.52, 86), ("30", "0.5", 23.14, 1.72, 90), ("10", "0.2", 25.83, 1.04, 85.7)]
METRICS = ("Word errors are Levenshtein substitutions + deletions + insertions against the normalised transcript "
           "(stage 3 `text_norm`), after mapping the B_-grapheme hypothesis back to words; WER = errors / reference "
           "words, word-weighted over utterances and, for Avg., over languages (paper: \"word weighted WER\"). "
           "CER: the same over characters without spaces. WERR = 100 (WER_base - WER) / WER_base. LID accuracy: "
           "share of utterances whose chosen language is right (vanilla: the language whose script most of the "
           "hypothesis is written in, as the paper's Table 5). T_avg = sum over languages of the fraction of "
           "frames that language's decoder ran (paper eq. 2; {L} = every decoder all the time, {L} languages).")


def fmt(x, nd=2) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


class Scorer:
    """Scores decode dirs against a test set's references (read once per set)."""

    def __init__(self, data: Path, exp: Path):
        self.data, self.exp, self._refs = data, exp, {}
        self.dirs: Dict[str, Counts] = {}  # decode dir (relative to exp) -> totals, for ESPnet's WER table
        self.utt_errors: Dict[str, Dict[str, tuple]] = {}  # decode dir -> {utt: (word errors, reference words)}
        self.row_utts: Dict[str, Dict[str, tuple]] = {}  # a table row (collect) -> the same over its decode dirs
        self.row_t: Dict[str, Dict[str, float]] = {}  # a switch-off setting -> {utt: its T (paper eq. 2)}

    def refs(self, test_set: str):
        if test_set not in self._refs:
            d = self.data / test_set
            self._refs[test_set] = (read_text(d / "text_norm"), read_table(d / "utt2lid"))
        return self._refs[test_set]

    def speakers(self, keys) -> Dict[str, str]:
        """{'<set>/<utt>': speaker} of KEYS (collect's per-utterance keys) from each set's utt2spk: the bootstrap's
        clusters."""
        out, tables = {}, {}
        for key in keys:
            test_set, utt = key.split("/", 1)
            if test_set not in tables:
                tables[test_set] = read_table(self.data / test_set / "utt2spk")
            if utt not in tables[test_set]:
                raise ValueError(f"{self.data / test_set / 'utt2spk'}: no speaker for utterance '{utt}'")
            out[key] = tables[test_set][utt]
        return out

    def score_dir(self, decode_dir: Path, test_set: str, hyp_name: str = "hyp",
                  restrict_lang: Optional[str] = None) -> Optional[Dict[str, Counts]]:
        """Score a decode dir: per-language counts (None if it was not decoded), kept in self.dirs /
        self.utt_errors, and its sclite-style score_wer[_<hyp_name>]/result.txt written; restrict_lang: only that
        language's utterances (a monolingual model decodes its own language only)."""
        hyp_path = decode_dir / hyp_name
        if not hyp_path.is_file():
            return None
        refs, utt2lid = self.refs(test_set)
        if restrict_lang is not None:
            refs = {u: r for u, r in refs.items() if utt2lid.get(u) == restrict_lang}
        lang_path = decode_dir / "hyp_lang"
        hyp_lang = read_table(lang_path, allow_empty_value=True) if lang_path.is_file() and hyp_name == "hyp" else None
        alignments = []
        per = score(refs, read_text(hyp_path, allow_empty=True), utt2lid, hyp_lang, str(hyp_path), alignments)
        name = str(hyp_path.relative_to(self.exp)) if hyp_path.is_relative_to(self.exp) else str(hyp_path)
        self.dirs[name] = pooled(per)
        self.utt_errors[name] = {u: (a.sub + a.dels + a.ins, a.corr + a.sub + a.dels) for u, a in alignments}
        write_sclite(decode_dir / ("score_wer" if hyp_name == "hyp" else f"score_wer_{hyp_name}") / "result.txt",
                     name, self.dirs[name], alignments)
        return per


def merge(into: Dict[str, Counts], new: Optional[Dict[str, Counts]]) -> None:
    for lang, c in (new or {}).items():
        into.setdefault(lang, Counts())
        into[lang] += c


def row_metrics(per_lang: Dict[str, Counts], langs: List[str]) -> dict:
    out = {}
    for lang in langs:
        c = per_lang.get(lang)
        if c is not None:
            out[f"wer_{lang}"], out[f"cer_{lang}"] = c.wer, c.cer
            out[f"empty_hyp_{lang}"] = c.empty_hyps / c.utts if c.utts else None
            if c.lid_acc is not None:
                out[f"lid_acc_{lang}"] = c.lid_acc
    if per_lang and all(lang in per_lang for lang in langs):
        tot = pooled(per_lang, langs)
        out.update(wer_avg=tot.wer, cer_avg=tot.cer, words=tot.words, utts=tot.utts)
        if tot.lid_acc is not None:
            out.update(lid_acc_avg=tot.lid_acc, lid_correct=tot.lid_correct)
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in out.items()}


def silent_langs(m: Optional[dict], langs: Sequence[str]) -> List[str]:
    """The languages a table row's system outputs nothing for (empty hypotheses on >= SILENT_SHARE of its
    utterances)."""
    return [l for l in langs if (m or {}).get(f"empty_hyp_{l}") is not None
            and m[f"empty_hyp_{l}"] >= SILENT_SHARE]


WERR_NA = "n/a (system outputs nothing)"


def wer_table(rows: Dict[str, dict], order: List[str], paper: dict, langs: List[str], base: str) -> List[str]:
    """Rows of WER per language + Avg. + WERR against `base`, ours then the paper's. A base that outputs nothing for
    a language (silent_langs) has no WERR: its 100 % WER there is no baseline, and the average mixes it in."""
    cols = [LANG_NAMES.get(l, l) for l in langs]
    lines = ["| Model | " + " | ".join(cols) + " | Avg. | WERR [%] | CER Avg. | paper: " + " / ".join(PAPER_LANGS)
             + " / Avg. / WERR |", "| --- " * (len(langs) + 5) + "|"]
    base_avg = rows.get(base, {}).get("wer_avg")
    mute = silent_langs(rows.get(base), langs)
    for name in order:
        m = rows.get(name)
        if m is None:
            continue
        p = paper.get(name)
        ptxt = "-" if p is None else " / ".join(fmt(v) for v in p)
        lines.append(f"| {LABELS.get(name, name)} | " + " | ".join(fmt(m.get(f"wer_{l}")) for l in langs)
                     + f" | {fmt(m.get('wer_avg'))} | "
                     + f"{WERR_NA if mute else fmt(werr(m.get('wer_avg'), base_avg))} | "
                     + f"{fmt(m.get('cer_avg'))} | {ptxt} |")
    if mute:
        lines += ["", f"WERR n/a: {LABELS.get(base, base)} outputs nothing for {', '.join(mute)} (an empty "
                  f"hypothesis on >= {100 * SILENT_SHARE:.0f} % of those utterances), so a relative reduction against "
                  "its average means nothing."]
    return lines


@dataclass(frozen=True)
class ScoreOptions:
    """multisoftmax_score's options (built by local_models.bin.multisoftmax_score from its parsed args)."""
    langs: Tuple[str, ...]       # language codes
    systems: Tuple[str, ...]     # trained systems (mono expanded: mono_<lang>)
    finetune: Tuple[str, ...]    # finetuned seeds (ft_<seed>_<lang>)
    test_sets: Tuple[str, ...]   # empty: <lang>_test of every language
    corpus: str                  # mini | indic (goes into results.json)
    data: Path                   # data dirs (text_norm, utt2lid)
    exp: Path                    # exp dir of the trained systems
    results: Path                # RESULTS.md to write
    paper_config: Path           # the paper-size training config (Table 6 at the paper's size)
    note: str                    # a line about the run for RESULTS.md
    dev_sets: Tuple[str, ...] = ()     # the sets the switch-off setting is chosen on (empty: <lang>_dev)
    sealed_sets: Tuple[str, ...] = ()  # only ever scored: a choice on one is refused, each scoring is a look
    config_files: Tuple[Path, ...] = ()  # the files that define the systems (the looks' configuration fingerprint)
    look_options: Tuple[Tuple[str, str], ...] = ()  # (name, value): the run's other defining options, the same
    inference_model: str = "valid.loss.best.pth"  # the checkpoint that decoded (valid.*: chosen on the dev loss)
    seed: int = 0                # the one training seed

    @property
    def dev(self) -> List[str]:
        return list(self.dev_sets) or [f"{l}_dev" for l in self.langs]


@dataclass(frozen=True)
class Evidence:
    """What the verdicts are judged on beside the table rows: per-utterance errors and who spoke each utterance."""
    row_utts: Mapping[str, Mapping[str, tuple]]  # a table row -> {'<set>/<utt>': (word errors, reference words)}
    speakers: Mapping[str, str]                  # '<set>/<utt>' -> speaker (utt2spk): the bootstrap's clusters
    chosen_on: str = ""                          # where the systems' choices were made (verdict.sentence's tail)
    row_t: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # setting -> {utt: T} (decoder_frames)

    def diff(self, a: str, b: str, level: V.Levels = V.LEVEL) -> Optional[V.Intervals]:
        """WER(a) - WER(b) [points] with its speaker-resampling interval (a tuple of LEVEL: one per level); None
        without both rows' errors."""
        if a not in self.row_utts or b not in self.row_utts:
            return None
        return wer_diff_interval(self.row_utts[a], self.row_utts[b], self.speakers, level=level)

    def t_cut(self, a: str, b: str, level: V.Levels = V.LEVEL) -> Optional[V.Intervals]:
        """How much setting A cuts T_avg below setting B [%] (100 (1 - T_avg(a) / T_avg(b)) over the utterances
        both scored), with a paired bootstrap interval resampling speakers; None unless every utterance scored in
        both settings (row_utts) has its T and speaker (an interval over a subset would not be the claim's)."""
        ta, tb = self.row_t.get(a) or {}, self.row_t.get(b) or {}
        common = sorted(set(self.row_utts.get(a, {})) & set(self.row_utts.get(b, {})))
        if not common or any(u not in ta or u not in tb or u not in self.speakers for u in common):
            return None
        x, y = (np.array([t[u] for u in common]) for t in (ta, tb))
        labels = [self.speakers[u] for u in common]
        if len(set(labels)) < 2 or y.sum() <= 0:
            return None
        return V.bootstrap(lambda p, q: 100.0 * (1.0 - p.sum() / max(q.sum(), 1e-12)), x, y, clusters=labels,
                           what="speakers", level=level)


NO_EVIDENCE = Evidence({}, {})


def chosen_on(inference_model: str) -> str:
    """Where a system's choices were made: a valid.* checkpoint is the one with the best dev (valid) loss."""
    return "dev (checkpoint by dev loss)" if inference_model.startswith("valid.") else ""


def collect(scorer: Scorer, exp: Path, systems: Sequence[str], finetune: Sequence[str], langs, own_sets,
            extra_sets):
    """The table rows of every system of SYSTEMS and every finetuning of FINETUNE, scored by SCORER."""
    ft = [f"ft_{s}_{l}" for s in finetune for l in langs]
    rows: Dict[str, dict] = {}
    raw: Dict[str, Dict[str, Counts]] = {}

    def gather(name, dirs_and_langs, sets, hyp_name="hyp", suffix=""):
        per: Dict[str, Counts] = {}
        utts: Dict[str, tuple] = {}
        for sys_dir, sub, only in dirs_and_langs:
            for x in sets:
                d = exp_dir / sys_dir / f"decode_{x}" / sub
                merge(per, scorer.score_dir(d, x, hyp_name, only))
                utts.update({f"{x}/{u}": v for u, v in scorer.utt_errors.get(str((d / hyp_name).relative_to(
                    exp_dir)), {}).items()})
        if utts:
            scorer.row_utts[name + suffix] = utts
        return per

    exp_dir = Path(exp)
    for sets, suffix in ((own_sets, ""),) + tuple(((x,), f"@{x}") for x in extra_sets):
        # Table 2 / 3: language known; monolingual and finetuned models each decode their own language
        groups = {"mono": [(f"mono_{l}", "known", l) for l in langs if f"mono_{l}" in systems]}
        for s in finetune:
            groups[f"ft_{s}"] = [(f"ft_{s}_{l}", "known", l) for l in langs if f"ft_{s}_{l}" in ft]
        for s in (s for s in SYSTEMS if s != "mono"):  # the multilingual systems
            if s in systems:
                groups[s] = [(s, "known", None)]
        for name, dirs in groups.items():
            per = gather(name, dirs, sets, suffix=suffix)
            if per:
                raw[name + suffix] = per
                rows[name + suffix] = row_metrics(per, langs)
        if "multisoftmax_lid" in systems:  # Table 4 / 5: language unknown
            for name, hyp in (("multisoftmax_lid_lidfree", "hyp"), ("multisoftmax_lid_oracle", "hyp_oracle")):
                per = gather(name, [("multisoftmax_lid", "lidfree", None)], sets, hyp, suffix)
                if per:
                    rows[name + suffix] = row_metrics(per, langs)
    for name in [n for n in rows if n.split("@")[0] == "vanilla"]:
        rows[name] = without_script_lid(rows[name], langs)
    return rows


def without_script_lid(row: dict, langs: Sequence[str]) -> dict:
    """Vanilla's row without the LID accuracy of languages that share their script with another language of the
    run: its LID reads the hypothesis' script (paper Table 5), which does not tell them apart; counting whose training
    graphemes hold most of the hypothesis would decide on single letters (a diacritic), most hypotheses tying (an
    error). "lid_not_applicable" names them; with one such language there is no LID average either."""
    shared = shared_script(langs)
    if not shared:
        return row
    out = {k: v for k, v in row.items() if k not in {f"lid_acc_{l}" for l in shared} | {"lid_acc_avg", "lid_correct"}}
    out["lid_not_applicable"] = script_note(shared)
    return out


def script_note(shared: Mapping[str, List[str]]) -> str:
    """'shared script: cs, nl, es, ca, fr (Latin)' for each script two or more languages of the run share."""
    groups: Dict[str, List[str]] = {}
    for lang in shared:
        groups.setdefault(script_of(lang), []).append(lang)
    return "shared script: " + "; ".join(f"{', '.join(ls)} ({s})" for s, ls in groups.items())


def switchoff_rows(scorer: Scorer, exp: Path, langs, sets, utts_key: str = "") -> List[dict]:
    """Table 7: one row per switch-off setting decoded, pooled over SETS (the own test sets, or the dev sets the
    setting is chosen on), with Hi-IN alone beside it. T_avg is the paper's, per utterance (eq. 2), then averaged
    over the utterances of every set. UTTS_KEY: keep each setting's per-utterance errors in scorer.row_utts under
    UTTS_KEY + '<tau>_<s_th>' (for the switch-off check's interval)."""
    base = Path(exp) / "multisoftmax_lid"
    settings = sorted({p.name for x in sets for p in (base / f"decode_{x}" / "switchoff").glob("*")
                       if (p / "hyp").is_file()}, key=lambda n: tuple(-float(v) for v in n.split("_")))
    out = []
    for name in settings:
        per: Dict[str, Counts] = {}
        errors: Dict[str, tuple] = {}
        t_utts: Dict[str, float] = {}
        utts = t_sum = cpu = 0.0
        for x in sets:
            d = base / f"decode_{x}" / "switchoff" / name
            if not (d / "hyp").is_file():
                continue
            merge(per, scorer.score_dir(d, x))
            errors.update({f"{x}/{u}": v for u, v in scorer.utt_errors.get(
                str((d / "hyp").relative_to(exp)) if (d / "hyp").is_relative_to(exp) else str(d / "hyp"), {}).items()})
            if utts_key and (d / "decoder_frames").is_file():  # per utterance: S, then each decoder's frames
                t_utts.update({f"{x}/{u}": t_of_row(v, d / "decoder_frames")
                               for u, v in read_table(d / "decoder_frames").items()})
            if (d / "decode_stats.json").is_file():
                st = json.loads((d / "decode_stats.json").read_text())
                if st.get("T_avg") is not None:
                    utts += st["utterances"]
                    t_sum += st["T_avg"] * st["utterances"]
                cpu += st.get("decoder_cpu_s", 0.0)
        tau, sth = name.split("_")
        m = row_metrics(per, langs)
        m.update(tau=tau, s_th=sth, t_avg=round(t_sum / utts, 3) if utts else None, decoder_cpu_s=round(cpu, 3))
        hi = per.get("hi")
        m["wer_hi"] = round(hi.wer, 3) if hi and hi.wer is not None else None
        out.append(m)
        if utts_key and errors:
            scorer.row_utts[f"{utts_key}{name}"] = errors
        if t_utts:
            scorer.row_t[f"{utts_key}{name}"] = t_utts
    return out


def t_of_row(value: str, path: Path) -> float:
    """One utterance's T (paper eq. 2) from its decoder_frames row 'S a_1 ... a_L' (multisoftmax_decode)."""
    from .decode import t_avg  # the decoder's own definition (decode imports torch: only when there is a row)

    try:
        frames, *active = (int(v) for v in value.split())
    except ValueError:
        frames, active = 0, []
    if frames <= 0 or not active:
        raise ValueError(f"{path}: '{value}' is not 'S a_1 ... a_L' (S > 0 frames, then each decoder's frames)")
    return t_avg(active, frames)


def full_setting(rows: List[dict]) -> Optional[dict]:
    """The row that runs every decoder all the time (tau or s_th infinite), if decoded."""
    return next((m for m in rows if m["tau"] == "inf" or m["s_th"] == "inf"), None)


def cuts_enough(m: dict, full: dict) -> bool:
    """The paper's trade-off (Table 7, tau 30 / s_th 0.5): T_avg cut by >= 40 % for at most 1 abs. WER more."""
    return (m.get("t_avg") is not None and full.get("t_avg") is not None and m["t_avg"] <= 0.6 * full["t_avg"]
            and m.get("wer_avg") is not None and full.get("wer_avg") is not None
            and m["wer_avg"] <= full["wer_avg"] + 1.0)


def choose_switchoff(dev_rows: List[dict]) -> Optional[dict]:
    """The switch-off setting chosen on the dev sets (never on test): of the settings that cut T_avg enough there
    (cuts_enough), the one with the lowest T_avg; none: every decoder all the time (the full setting)."""
    full = full_setting(dev_rows)
    if full is None:
        return None
    ok = [m for m in dev_rows if m is not full and cuts_enough(m, full)]
    return min(ok, key=lambda m: (m["t_avg"], m["wer_avg"])) if ok else full


def with_dev_choice(t7: List[dict], dev_rows: List[dict]) -> List[dict]:
    """The test rows with each setting's dev WER and T_avg beside them, the dev-chosen one flagged."""
    chosen = choose_switchoff(dev_rows)
    chosen_key = None if chosen is None else (chosen["tau"], chosen["s_th"])
    dev = {(m["tau"], m["s_th"]): m for m in dev_rows}
    out = []
    for m in t7:
        key = (m["tau"], m["s_th"])
        d = dev.get(key, {})
        out.append({**m, "dev_wer_avg": d.get("wer_avg"), "dev_t_avg": d.get("t_avg"),
                    **({"chosen_on_dev": True} if key == chosen_key else {})})
    return out


# systems.PAPER_SIZE_SYSTEMS (stages.sh system_conf at run.sh's defaults) give a paper-size count without a run; a
# run's own choices (the architecture keys of SYSTEM_KEYS in exp/<system>/config.yaml) replace them
SYSTEM_KEYS = ("system", "lang", "lsp", "lid", "lid_rnn_layers")  # what makes a system, not its size


def system_options(name: str, exp: Optional[Path]) -> dict:
    """The model_conf keys that make system NAME (SYSTEM_KEYS): the run's (EXP/<name>/config.yaml; mono: mono_en)
    where it trained one, else run.sh's defaults (PAPER_SIZE_SYSTEMS)."""
    conf = Path(exp or "") / ("mono_en" if name == "mono" else name) / "config.yaml"
    if exp is None or not conf.is_file():
        return PAPER_SIZE_SYSTEMS[name]
    mc = yaml.safe_load(conf.read_text()).get("model_conf") or {}
    return {k: mc[k] for k in SYSTEM_KEYS if k in mc}


def paper_size_params(conf_file: Path, exp: Optional[Path] = None, **overrides) -> Dict[str, int]:
    """#parameters of every system (system_options) built from the paper-size training config (model_conf +
    OVERRIDES) with the paper's Table 1 vocabulary sizes, on torch's meta device (counted, never allocated)."""
    import torch

    from .model import MultilingualTransducer
    from .units import PAPER_VOCAB_SIZES, paper_vocabularies

    conf = {**(yaml.safe_load(Path(conf_file).read_text()).get("model_conf") or {}), **overrides}
    vocabs, out = paper_vocabularies(), {}
    for name in PAPER_SIZE_SYSTEMS:
        with torch.device("meta"):
            out[name] = MultilingualTransducer(list(PAPER_VOCAB_SIZES), vocabs,
                                               **{**conf, **system_options(name, exp)}).num_params()
    return out


def matching_lang_joint_dim(conf_file: Path) -> int:
    """The language-specific joint size (model_conf lang_joint_dim) at which multi-softmax has the paper's Table 6
    count: the count is linear in it, so two builds give the line."""
    a, b = (paper_size_params(conf_file, lang_joint_dim=j)["multisoftmax"] for j in (256, 512))
    return max(1, round(256 + (PAPER_T6["multisoftmax"] * 1e6 - a) * 256 / (b - a)))


def paper_size_lines(conf_file: Path, exp: Optional[Path] = None) -> List[str]:
    """Table 6 at the paper's size, counted from CONF_FILE by code for the systems as EXP trained them, beside the
    paper's."""
    if not Path(conf_file).is_file():
        return []
    ours = paper_size_params(conf_file, exp)
    j = matching_lang_joint_dim(conf_file)
    lines = ["", f"At the paper's size ({conf_file}, the paper's Table 1 vocabularies plus our `<unk>`, built by "
             "`report.paper_size_params`):", "", "| Model | ours at paper size [M] | paper [M] | difference |",
             "| --- | --- | --- | --- |"]
    lines += [f"| {LABELS.get(n, n)} | {v / 1e6:.2f} | {PAPER_T6[n]:.2f} | {100 * (v / 1e6 / PAPER_T6[n] - 1):+.1f} % |"
              for n, v in ours.items()]
    return lines + ["", "Ours gives every language its own joint network of the shared size, as the paper's text says "
                    "(\"language specific softmax, joint and embedding layers\"); its Table 6 puts multi-softmax "
                    f"below vanilla, which fits a much smaller per-language joint: `--model_conf lang_joint_dim={j}` "
                    "gives its count. The LID row adds our LSTM LID branch (`run.sh --lid_rnn_layers`, 1 by "
                    "default; the paper's LID layers are an output layer and softmax). LSP adds a prediction "
                    "network per language, as the paper's."]


CHOICE = "switch_off_choice.json"  # in EXP: the switch-off setting chosen on the dev sets, and what it was chosen on


def write_choice(exp: Path, dev_sets: Sequence[str], dev_rows: List[dict]) -> Optional[dict]:
    """The dev-set choice (choose_switchoff of DEV_ROWS) -> EXP/switch_off_choice.json, returned; none (no grid
    decoded on dev): the file is removed, so no stale choice outlives its grid."""
    path = Path(exp) / CHOICE
    chosen = choose_switchoff(dev_rows)
    if chosen is None:
        path.unlink(missing_ok=True)
        return None
    record = {"chosen_on": list(dev_sets), "tau": chosen["tau"], "s_th": chosen["s_th"],
              "dev": [{k: m.get(k) for k in ("tau", "s_th", "wer_avg", "t_avg")} for m in dev_rows]}
    with atomic_open(path) as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
    return record


def chosen_switch_off(exp: Path) -> str:
    """'tau:s_th' of the switch-off setting chosen on the dev sets (EXP/switch_off_choice.json, stage 7)."""
    path = Path(exp) / CHOICE
    if not path.is_file():
        raise ValueError(f"{path}: no switch-off setting chosen on dev (stage 6 decodes the grid on the dev sets for "
                         "multisoftmax_lid, stage 7 chooses; run stages 6-7)")
    record = json.loads(path.read_text())
    return f"{record['tau']}:{record['s_th']}"


def params(exp: Path, systems: Sequence[str]) -> Dict[str, float]:
    """#parameters (millions) from each system's trained model (EXP/<system> of SYSTEMS)."""
    from .task import load_trained  # torch and ESPnet only when a model is read

    out = {}
    for s in systems:
        d = Path(exp) / s
        if (d / "valid.loss.best.pth").is_file():
            net = load_trained(d).net
            key = "mono" if s.startswith("mono_") else s
            out.setdefault(key, []).append(net.num_params() / 1e6)
    return {k: sum(v) / len(v) for k, v in out.items()}


def systems_line(systems: Sequence[str], finetune: Sequence[str]) -> str:
    """Which of the paper's systems this run trained (--systems, --finetune) and which it left out: a left-out
    system has no row below, and the reader should know it was not run rather than lost."""
    run = {"mono" if s.startswith("mono_") else s for s in systems}
    run |= {f"ft_{s}" for s in finetune}
    missing = [s for s in PAPER_SYSTEMS if s not in run]
    line = "Systems trained in this run: " + ", ".join(s for s in PAPER_SYSTEMS if s in run) + "."
    if missing:
        line += (" **Not run this time** (no rows below; `run.sh --systems` / `--finetune` select them): "
                 + ", ".join(missing) + ".")
    return line


def lid_loss_line(exp: Path) -> str:
    """How exp/multisoftmax_lid weighed its LID loss (from its config.yaml): the balanced weights are ours."""
    conf = Path(exp) / "multisoftmax_lid" / "config.yaml"
    if not conf.is_file():
        return ""
    mc = yaml.safe_load(conf.read_text()).get("model_conf") or {}
    line = f"LID loss weight {mc.get('lid_weight', 1.0)} (frame cross-entropy summed per utterance)"
    if mc.get("lid_rnn_layers"):
        line += (f"; LID branch: {mc['lid_rnn_layers']} LSTM layer(s) of {mc.get('lid_hidden')} units before its "
                 "softmax (ours; `run.sh --lid_rnn_layers 0`: a frame MLP)")
    weights = mc.get("lid_class_weights")
    if weights:
        line += (", balanced over languages (not in the paper; `run.sh --lid_balance false` for the paper's loss): "
                 + ", ".join(f"{lang} {w:.2f}" for lang, w in zip(mc.get("langs", []), weights)))
    return line + "."


def batches_line(exp: Path, names: List[str]) -> str:
    """How each trained system's mini-batches were drawn and how a finetuning started (from its config.yaml):
    the pooled train_all set has single-language batches (utt2category), train_mixed mixes the languages."""
    parts = []
    for name in names:
        conf = Path(exp) / name / "config.yaml"
        if not conf.is_file():
            continue
        c = yaml.safe_load(conf.read_text())
        train = " ".join(str(t[0]) for t in c.get("train_data_path_and_name_and_type") or [])
        if c.get("init_param"):
            init = str(c["init_param"][0] if isinstance(c["init_param"], list) else c["init_param"])
            kept = (" (its language's head only: " + init.split(":")[-1].replace(",", ", ") + " left out)"
                    if init.count(":") == 3 else "")
            parts.append(f"{name}: finetuned from {init.split(':')[0].split('/')[-2]}{kept}")
        elif "/train_all/" in train:
            parts.append(f"{name}: single-language batches (paper)")
        elif "/train_mixed/" in train:
            parts.append(f"{name}: mixed-language batches (ours; run.sh --lang_batch_systems)")
    return ("Training batches: " + "; ".join(parts) + ".") if parts else ""


# (row, the row it is compared with, the paper's sign of WER(row) - WER(compared with): -1 lower, +1 higher, None
# where the paper has no such row): each table's rows against its base (paper Tables 2-4), and the acceptance pairs
DIFF_PAIRS = [("vanilla", "mono", 1), ("onehot", "mono", 1), ("multisoftmax", "mono", -1),
              ("multisoftmax_lsp", "mono", -1), ("multisoftmax_lid", "mono", None), ("ft_onehot", "mono", -1),
              ("ft_multisoftmax", "mono", -1), ("multisoftmax", "vanilla", -1),
              ("multisoftmax_lid_lidfree", "vanilla", -1), ("multisoftmax_lid_lidfree", "multisoftmax_lid_oracle", 1)]
PAPER_SIDE = {-1: "lower", 1: "higher", None: "-"}
ROW_LABELS = {**LABELS, "multisoftmax_lid_lidfree": "Multi-softmax LID, language not known"}


def diff_verdict(iv: V.Interval, paper_sign: Optional[int]) -> str:
    """verdict.compare against the paper's sign; without one, the side the interval lies on (or not told apart)."""
    if paper_sign is not None:
        return V.compare(iv, paper_sign)
    side = V.compare(iv, 1)
    return {V.HOLDS: "higher", V.DOES_NOT_HOLD: "lower"}.get(side, side)


def diff_lines(ev: Evidence, rows: Optional[dict] = None, langs: Sequence[str] = ()) -> List[str]:
    """WER differences between rows, each with its interval (speakers resampled) and its verdict against the
    paper's direction."""
    found = [(a, b, sign, ev.diff(a, b)) for a, b, sign in DIFF_PAIRS if a in ev.row_utts and b in ev.row_utts]
    found = [f for f in found if f[3] is not None]
    if not found:
        return []
    lines = ["## WER differences with bootstrap intervals", "",
             "WER(row) - WER(compared with), in points over the utterances both decoded; 95 % paired percentile "
             "bootstrap interval (2000 resamples, seed 0) that resamples whole speakers (utt2spk), as a speaker's "
             "utterances are not independent draws. Verdict (common/verdict.py) against the paper's direction: "
             "holds when the whole interval lies on the paper's side of 0, not told apart when it holds 0. One "
             "training seed per system: the interval covers the test speakers drawn, not training noise.", ""]
    mute = silent_langs((rows or {}).get("mono"), langs)
    if mute:
        lines += [f"{LABELS['mono']} outputs nothing for {', '.join(mute)}: a difference against it there is a "
                  "difference against empty output.", ""]
    lines += ["| row | compared with | paper | difference [points] | verdict |", "|---|---|---|---|---|"]
    lines += [f"| {ROW_LABELS.get(a, a)} | {ROW_LABELS.get(b, b)} | {PAPER_SIDE[sign]} | {iv.text()} | "
              f"{diff_verdict(iv, sign)} |" for a, b, sign, iv in found]
    return lines + [""]


def espnet_lines(dirs: Dict[str, Counts]) -> List[str]:
    """ESPnet's WER table, one row per decode dir (each dir's score_wer/result.txt has the alignments)."""
    if not dirs:
        return []
    return ["## WER per decode dir, in ESPnet's format", "",
            "Rates in % of the reference words (Corr, Sub, Del, Ins, Err) and of the utterances (S.Err), from "
            "jiwer's minimal word alignment; each decode dir's `score_wer/result.txt` lists every utterance's "
            "alignment, sclite-style.", "", *ESPNET_HEADER, *[espnet_row(name, c) for name, c in sorted(dirs.items())],
            ""]


def rate_line(data: Path) -> str:
    """How stage 1 prepared the audio (DATA/sample_rate, DATA/prepared.json): the one rate every language was read
    at, the rates as recorded and the dev rule of a corpus without a dev set; '' when stage 1 wrote neither."""
    try:
        rate = int((data / "sample_rate").read_text(encoding="utf-8").split()[0])
    except (OSError, ValueError, IndexError):
        return ""
    line = f"Every language's audio was read at {rate} Hz for the features (stage 1's data/sample_rate)"
    try:
        info = json.loads((data / "prepared.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return line + ": LID cannot tell a language by its bandwidth."
    by_rate: Dict[int, List[str]] = {}
    for lang, rates in info.get("rates", {}).items():
        for r in rates:
            by_rate.setdefault(r, []).append(lang)
    recorded = "; ".join(f"{', '.join(ls)} at {r} Hz" for r, ls in sorted(by_rate.items()))
    up = [l for r, ls in by_rate.items() if r < rate for l in ls]
    line += (f" (`--sample-rate {info.get('rate_policy')}`; recorded: {recorded})" if recorded else "")
    line += (f": {', '.join(sorted(up))} upsampled, so a model can tell them by their missing upper band alone."
             if up else ": LID cannot tell a language by its bandwidth.")
    return line + (f" Dev: {info['dev']}." if info.get("dev") else "")


def seed_line(seed: int) -> str:
    return (f"One training run per system (seed {seed}): every interval below covers the test speakers drawn, not "
            "training noise; a second seed could move a difference that is told apart here.")


SWITCH_OFF_HISTORY = (
    "History of the grid: the default grid's larger s_th points (40, 80) were first picked by looking at the mini "
    "test sets (commit 8a37bed, which said so); ca07388 moved the choice among the grid's settings to dev and dropped "
    "that disclosure. The choice is now made on the dev sets only (stage 7; a sealed set is refused), but the grid "
    "itself was drawn up after test results had been seen.")


def corpus_size(corpus: str) -> str:
    """How much speech the run's corpus has, in words (results.json's corpus: mini, indic, or the real corpus's
    description, which starts 'real speech')."""
    if corpus == "mini":
        return "the mini corpus has minutes of espeak-ng speech"
    if corpus.startswith("real speech"):
        return "the real-speech corpus has at most 1.5 hours of recorded speech from one or two main voices"
    return "this corpus has far less speech"


def write_md(path: Path, rows, t7, prm, langs, own_sets, extra_sets, *, corpus: str, note: str, exp: Path,
             systems: Sequence[str], finetune: Sequence[str], paper_config: Path, env=None, dirs=None,
             ev: Evidence = NO_EVIDENCE, claims=None, data: Optional[Path] = None, looks: Optional[dict] = None,
             seed: int = 0, dev_sets: Sequence[str] = ()) -> None:
    """RESULTS.md; ENV and CLAIMS: results.json's environment and headline (computed once, in run); LOOKS: its
    sealed_looks."""
    lines = ["# egs/indic/asr1: multi-softmax streaming multilingual RNN-T (paper 001, Joshi et al., Interspeech 2021)",
             "", f"Corpus: **{corpus}**, test sets {', '.join(own_sets)}. {note}".rstrip(), "",
             *environment_lines(env or {}), record_line(looks), "", seed_line(seed), "",
             *headline_lines(claims),
             systems_line(systems, finetune), "",
             batches_line(exp, list(systems) + [f"ft_{f}_{l}" for f in finetune for l in langs]), "",
             "Every number below was measured by this recipe's stages 4-7 in the run that wrote this file. The "
             f"paper trains 6 x 1024 LSTM models on 23 000 hours; {corpus_size(corpus)} per language, so the "
             "absolute numbers are not comparable: the comparisons between rows are.", "",
             "## Metrics", "", METRICS.format(L=len(langs)), ""]
    lines += ["## Table 2: language known (WER [%], WERR vs monolingual)", ""]
    lines += wer_table(rows, list(TABLE2_ROWS), PAPER_T2, langs, "mono") + [""]
    lines += ["## Table 3: monolingual models seeded with multilingual ones (WER [%], WERR vs monolingual)", ""]
    lines += wer_table(rows, list(TABLE3_ROWS), PAPER_T3, langs, "mono") + [""]
    t4 = {"vanilla": rows.get("vanilla"), "multisoftmax_lid": rows.get("multisoftmax_lid_lidfree"),
          "multisoftmax_lid_oracle": rows.get("multisoftmax_lid_oracle")}
    lines += ["## Table 4: language not known (WER [%], WERR vs vanilla)", "",
              "Vanilla needs no language; multi-softmax LID runs every language's decoder over one encoder pass "
              "and keeps the output of the language with the highest LID posterior averaged over frames; the "
              "oracle keeps the true language's decoder output of the same run.", ""]
    lines += wer_table({k: v for k, v in t4.items() if v}, list(t4), PAPER_T4, langs, "vanilla") + [""]
    lines += diff_lines(ev, rows, langs)
    lines += espnet_lines(dirs or {})
    lid_loss = lid_loss_line(exp)
    rates = rate_line(data) if data is not None else ""
    lines += ["## Table 5: LID accuracy [%]", ""] + ([lid_loss, ""] if lid_loss else [])
    lines += ["The LID goal (>= 90 %) is judged on the Wilson interval of the pooled accuracy (Acceptance checks); "
              "Wilson counts utterances as independent, and each language's test utterances come from a few speakers, "
              "so the true uncertainty is wider still.", ""]
    lines += ([rates, ""] if rates else []) + [
              "| Model | " + " | ".join(LANG_NAMES.get(l, l) for l in langs) + " | Avg. | paper |",
              "| --- " * (len(langs) + 3) + "|"]
    for name, m in (("vanilla", rows.get("vanilla")), ("multisoftmax_lid", rows.get("multisoftmax_lid_lidfree"))):
        if m:
            p = PAPER_T5[name]
            na = shared_script(langs) if name == "vanilla" else {}
            lines.append(f"| {LABELS[name]} | " + " | ".join("n/a" if l in na else fmt(m.get(f"lid_acc_{l}"))
                                                            for l in langs)
                         + f" | {'n/a' if na else fmt(m.get('lid_acc_avg'))} | {' / '.join(fmt(v) for v in p)} |")
    if rows.get("vanilla") and shared_script(langs):
        lines += ["", f"Vanilla n/a: {script_note(shared_script(langs))}. Vanilla's LID is the script the hypothesis "
                  "is written in (paper Table 5), which is not defined between languages of one script; matching the "
                  "hypothesis against each language's grapheme inventory instead would decide on single letters "
                  "(diacritics) and tie on most hypotheses, so no number is given. Multi-softmax LID (its LID head) "
                  "is measured as usual."]
    lines += ["", "## Table 6: number of parameters [M]", "", "| Model | ours | paper |", "| --- | --- | --- |"]
    for name, value in prm.items():
        lines.append(f"| {LABELS.get(name, name)} | {value:.3f} | {fmt(PAPER_T6.get(name))} |")
    lines += paper_size_lines(Path(paper_config), Path(exp)) + [""]
    if t7:
        chosen = next((m for m in t7 if m.get("chosen_on_dev")), None)
        hi = "hi" in langs  # the paper's Table 7 is on Hi-IN: its column where the run has Hindi
        lines += ["## Table 7: early switch-off of multi-softmax LID decoders", "",
                  f"tau in encoder frames (30 ms). The setting is chosen on the dev sets ({', '.join(dev_sets)}; "
                  "pooled; exp/switch_off_choice.json): of the settings "
                  "that cut T_avg by >= 40 % for <= 1 abs. WER there, the lowest T_avg, else every decoder all the "
                  "time; only then is it read on test. Test columns pooled over every test set"
                  + (" (WER Hi-IN alone beside it)" if hi else "") + "; the paper's on a Hi-IN subset."
                  " Decoder CPU: process time of the test sets' beam "
                  "searches (encoder excluded). Settings with s_th above the paper's 0.5 are ours: s_l sums "
                  "log-posteriors, and once the LID leans the gaps pass 0.5 within a few frames, so the paper's "
                  "thresholds act as 'switch off at tau'.", "", SWITCH_OFF_HISTORY, "",
                  (f"Chosen on dev: **tau {chosen['tau']}, s_th {chosen['s_th']}** (the packed LID model streams "
                   "with it unless run.sh --switch_off names another)." if chosen else
                   "No dev-set decoding of the grid: no setting chosen (run stage 6 with the dev sets)."), "",
                  "| tau [frames] | s_th | dev WER [%] | dev T_avg | WER [%] |" + (" WER Hi-IN |" if hi else "")
                  + " T_avg | LID acc. [%] | decoder CPU [s] |", "| --- " * (9 if hi else 8) + "|"]
        for m in t7:
            mark = " (chosen)" if m.get("chosen_on_dev") else ""
            lines.append(f"| {m['tau']}{mark} | {m['s_th']} | {fmt(m.get('dev_wer_avg'))} | {fmt(m.get('dev_t_avg'))} "
                         f"| {fmt(m.get('wer_avg'))} | " + (f"{fmt(m.get('wer_hi'))} | " if hi else "") +
                         f"{fmt(m.get('t_avg'))} | {fmt(m.get('lid_acc_avg'))} | {fmt(m.get('decoder_cpu_s'))} |")
        lines += ["", "The paper's Table 7 (Hi-IN subset; its text reads tau as 30 ms frames: \"30 frames (900ms)\"):", "",
                  "| tau | s_th | WER [%] | T_avg | LID acc. [%] |", "| --- | --- | --- | --- | --- |"]
        lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in PAPER_T7]
        lines += ["", "![switch-off trade-off](exp/images/switchoff.png)", ""]
    lines += acceptance(rows, t7, ev)
    for x in extra_sets:
        sub = {k[: -len(x) - 1]: v for k, v in rows.items() if k.endswith(f"@{x}")}
        if sub:
            lines += [f"## Unseen test set {x}", ""]
            lines += wer_table(sub, list(UNSEEN_ROWS), {}, [l for l in langs], "mono") + [""]
    lines += gpu_report.section("indic/asr1") + [""]
    write_report(path, "\n".join(lines) + "\n", Path(exp) / "images")


def compare_line(claim: str, iv: Optional[V.Interval], paper_sign: int, on: str) -> str:
    """A comparison's report line: verdict.compare on the interval (none: said so, no verdict)."""
    if iv is None:
        return f"{claim}: not judged (no per-utterance errors of both rows to resample)"
    return V.sentence(claim, V.compare(iv, paper_sign), iv, on)


def lid_line(row: dict, on: str) -> Optional[str]:
    """The LID goal (>= 90 % right) judged on the Wilson interval's low end (verdict.goal), not on the point."""
    acc = row.get("lid_acc_avg")
    if acc is None:
        return None
    claim = "multi-softmax LID picks the right language on >= 90 % of utterances (LID accuracy [%])"
    if row.get("lid_correct") is None or not row.get("utts"):
        return f"{claim}: not judged ({fmt(acc)} % without the counts a Wilson interval needs)"
    iv = V.wilson(int(row["lid_correct"]), int(row["utts"]))
    return V.sentence(claim, V.goal(iv, 90.0, ">="), iv, on, fmt="{:.1f}")


def switchoff_line(t7: List[dict], ev: Evidence) -> Optional[str]:
    """The switch-off goal on test: the dev-chosen setting cuts T_avg by >= 40 % and costs <= 1 abs. WER, each judged
    on its interval (speakers resampled): the cut on its low end, the WER increase on its high end. Met when both
    95 % intervals meet their bounds (an intersection: no adjustment); NOT met when either part's Bonferroni-adjusted
    interval (97.5 %, two parts) misses its bound (a union), and the line shows those; otherwise not shown. Without
    every utterance's T (decoder_frames) the cut is judged on its point, and the line says so."""
    full = full_setting(t7)
    if not full or not full.get("t_avg") or full.get("wer_avg") is None:
        return None
    claim = "the switch-off setting chosen on dev cuts test T_avg by >= 40 % for <= 1 abs. WER"
    chosen = next((m for m in t7 if m.get("chosen_on_dev")), None)
    if chosen is None:
        return f"{claim}: not judged (no setting chosen on dev)"
    setting = f"tau {chosen['tau']}, s_th {chosen['s_th']}"
    if full["wer_avg"] >= 99.0:  # a model that gets (almost) no word right cannot show a WER trade-off
        return (f"{claim}: not measurable, the LID model's WER with every decoder on is {fmt(full['wer_avg'])} "
                f"({setting})")
    cut = 100 * (1 - chosen["t_avg"] / full["t_avg"]) if chosen.get("t_avg") is not None else None
    claim += (f" ({setting}: test T_avg {fmt(chosen.get('t_avg'))} vs {fmt(full['t_avg'])}, cut {fmt(cut, 0)} %; "
              f"WER {fmt(chosen.get('wer_avg'))} vs {fmt(full['wer_avg'])}, increase in points)")
    key = lambda m: f"switchoff_{m['tau']}_{m['s_th']}"  # noqa: E731
    levels = (V.LEVEL, V.family_level(2))  # each part at 95 % and at the two parts' family-wise level
    ivs = ev.diff(key(chosen), key(full), levels)
    if ivs is None:
        return f"{claim}: not judged (no per-utterance errors to resample)"
    iv, iv_f = ivs
    cuts = ev.t_cut(key(chosen), key(full), levels)
    if cuts is None:
        verdict = V.NOT_MET if cut is None or cut < 40 else V.goal(iv, 1.0, "<=")
        return (V.sentence(claim, verdict, iv, "dev") + " The T_avg cut is judged on its point (not every scored "
                "utterance has its T in decoder_frames and a speaker).")
    cut_iv, cut_f = cuts
    verdict = V.conjunction([V.goal(cut_iv, 40.0, ">="), V.goal(iv, 1.0, "<=")],
                            [V.goal(cut_f, 40.0, ">="), V.goal(iv_f, 1.0, "<=")])
    if verdict == V.NOT_MET:  # decided by a family-wise interval: show those
        cut_iv, iv = cut_f, iv_f
    shown = f"**{verdict}**" if verdict == V.MET else verdict
    return f"{claim}: {shown}, T_avg cut [%] {cut_iv.text('{:.1f}')}, WER increase {iv.text()}; chosen on dev."


def acceptance(rows, t7, ev: Evidence = NO_EVIDENCE) -> List[str]:
    """The recipe's acceptance checks, each with its verdict (common/verdict.py) on its interval: the WER
    comparisons on a bootstrap that resamples speakers, the LID goal on its Wilson interval."""
    def get(name, key):
        return (rows.get(name) or {}).get(key)

    checks = []
    ms, va = get("multisoftmax", "wer_avg"), get("vanilla", "wer_avg")
    if ms is not None and va is not None:
        checks.append(compare_line(f"multi-softmax beats vanilla on average WER ({fmt(ms)} vs {fmt(va)} %; "
                                   "difference in points)", ev.diff("multisoftmax", "vanilla"), -1, ev.chosen_on))
    lf = get("multisoftmax_lid_lidfree", "wer_avg")
    if lf is not None and va is not None:
        checks.append(compare_line(f"LID-free multi-softmax beats vanilla ({fmt(lf)} vs {fmt(va)} %; difference in "
                                   "points)", ev.diff("multisoftmax_lid_lidfree", "vanilla"), -1, ev.chosen_on))
    checks.append(lid_line(rows.get("multisoftmax_lid_lidfree") or {}, ev.chosen_on))
    checks.append(switchoff_line(t7, ev))
    return ["## Acceptance checks", "", *[f"- {c}" for c in checks if c], ""]


def headline(rows, t7, ev: Evidence = NO_EVIDENCE) -> List[str]:
    """The measured claims README's row gives (results.json 'headline'): Table 2-4 averages and the checks."""
    def avg(names, key="wer_avg"):
        return ", ".join(f"{LABELS.get(n, n)} {fmt(rows[n][key])}" for n in names
                         if rows.get(n) and rows[n].get(key) is not None)

    out = []
    known = ["multisoftmax", "vanilla", "onehot", "mono", "multisoftmax_lsp", "multisoftmax_lid"]
    t2, cer = avg(known), avg(known, "cer_avg")
    if t2:
        out.append(f"avg. test WER, language known: {t2} %" + (f" (CER {cer} %)" if cer else ""))
    t3 = avg(["ft_onehot", "ft_multisoftmax"])
    if t3:
        out.append(f"monolingual models seeded with multilingual ones: {t3} %")
    return out + [line[2:] for line in acceptance(rows, t7, ev)[2:] if line.startswith("- ")]


def plot_switchoff(t7, out: Path) -> None:
    plt = pyplot()

    pts = [(m["t_avg"], m["wer_avg"], f"{m['tau']}/{m['s_th']}") for m in t7
           if m.get("t_avg") is not None and m.get("wer_avg") is not None]
    if not pts:
        out.unlink(missing_ok=True)  # an earlier run's figure is not this run's
        return
    pts.sort()
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label="ours (all test sets, tau/s_th)")
    at: Dict[tuple, tuple] = {}  # settings that land on one spot share a label (at the first's point): no overprint
    for x, y, label in pts:
        at.setdefault((round(x, 1), round(y)), (x, y, []))[2].append(label)
    for i, (x, y, labels) in enumerate(at.values()):  # neighbours' labels alternate above and below the line
        ax.annotate(", ".join(labels), (x, y), fontsize=7, textcoords="offset points",
                    xytext=(3, 5) if i % 2 == 0 else (3, -11))
    ax.margins(x=0.15, y=0.1)  # room for the labels of the outermost points
    ax.plot([p[3] for p in PAPER_T7], [p[2] for p in PAPER_T7], "s--", alpha=0.6, label="paper (Hi-IN subset)")
    chosen = [(m["t_avg"], m["wer_avg"]) for m in t7 if m.get("chosen_on_dev") and m.get("t_avg") is not None
              and m.get("wer_avg") is not None]
    if chosen:
        ax.plot(*chosen[0], "*", markersize=14, color="tab:red", label="chosen on dev")
    ax.set_xlabel("T_avg (decoders running, on average)")
    ax.set_ylabel("WER [%]")
    ax.set_title("Early switch-off of decoders (paper Table 7)")
    ax.legend(fontsize=8)
    save_figure(fig, out)


def split_sets(langs: Sequence[str], test_sets: Sequence[str], data: Path, exp: Path):
    """(the recipe's own test sets, the other test sets) of LANGS and TEST_SETS (empty: <lang>_test of every
    language). A run that names only other sets (a user's `--test_sets my_set`) keeps the own test sets the main run
    decoded (DATA, EXP), so RESULTS.md keeps Tables 2-7 and the headline beside the new set's section instead of
    emptying them."""
    own = [f"{l}_test" for l in langs]
    test_sets = list(test_sets) or own
    extra_sets = [x for x in test_sets if x not in own]
    own_sets = [x for x in test_sets if x in own] or [x for x in own if decoded_before(data, exp, x)]
    return own_sets, extra_sets


def decoded_before(data: Path, exp: Path, test_set: str) -> bool:
    """Whether an earlier run prepared and decoded TEST_SET (its WER reference in DATA and a decode dir in EXP)."""
    return (Path(data) / test_set / "text_norm").is_file() and any(Path(exp).glob(f"*/decode_{test_set}"))


def results_systems(rows, t7, prm) -> Dict[str, dict]:
    """exp/results.json's "systems": the table rows, #parameters and one entry per switch-off setting."""
    systems = {k: v for k, v in rows.items() if v}
    for k, v in prm.items():
        systems.setdefault(k, {})["params_M"] = round(v, 3)
    for m in t7:
        systems[f"switchoff_tau{m['tau']}_sth{m['s_th']}"] = dict(m)
    return systems


def trained_dirs(exp: Path, systems: Sequence[str], finetune: Sequence[str], langs: Sequence[str]) -> Dict[str, Path]:
    """{system: exp dir} of every system of the run that has one (results.json's environment['trained'])."""
    names = list(systems) + [f"ft_{s}_{l}" for s in finetune for l in langs]
    return {n: Path(exp) / n for n in names if (Path(exp) / n).is_dir()}


DECODE_OUTPUTS = ("hyp", "hyp_lang", "hyp_oracle", "decoder_frames")  # what scoring reads (not the CPU times)
REFERENCES = ("text_norm", "utt2lid", "utt2spk")                      # ... and what it scores them against


def look_record(opts: ScoreOptions, scored: Sequence[str]) -> dict:
    """One look at each sealed set of SCORED under the configuration that defines the systems (common/sealed.py);
    a rescoring of every system's unchanged hypotheses of a set (same references, same code) is counted apart."""
    exp, data = Path(opts.exp), Path(opts.data)
    outputs = {x: [*(p for name in DECODE_OUTPUTS for p in exp.glob(f"*/decode_{x}/**/{name}")),
                   *(data / x / name for name in REFERENCES)] for x in scored}
    return score_looks(opts.exp, scored, opts.sealed_sets, opts.config_files, dict(opts.look_options), outputs)


def choose(opts: ScoreOptions) -> int:
    """The dev-set choice alone (stage 7 with --tune_only): the switch-off setting chosen on the dev sets ->
    EXP/switch_off_choice.json; no test set is read."""
    try:
        check_tuning(opts.dev, opts.sealed_sets, "stage 7 (the switch-off setting's choice)")
        record = write_choice(opts.exp, opts.dev, switchoff_rows(Scorer(Path(opts.data), Path(opts.exp)), opts.exp,
                                                                 list(opts.langs), opts.dev))
    except (DataDirError, OSError, ValueError) as e:
        print(f"multisoftmax_score: {e}", file=sys.stderr)
        return 1
    if record is None:
        print(f"multisoftmax_score: no switch-off grid decoded on {' '.join(opts.dev)} (with every decoder on among "
              "its settings): nothing to choose", file=sys.stderr)
        return 1
    print(f"{record['tau']}:{record['s_th']}")
    return 0


def run(opts: ScoreOptions) -> int:
    """Score every decode dir, then write exp/results.json, exp/images/switchoff.png and RESULTS.md."""
    langs, exp = list(opts.langs), Path(opts.exp)
    own_sets, extra_sets = split_sets(langs, opts.test_sets, Path(opts.data), exp)
    try:
        check_tuning(opts.dev, opts.sealed_sets, "stage 7 (the switch-off setting's choice)")
        scorer = Scorer(Path(opts.data), exp)
        rows = collect(scorer, exp, opts.systems, opts.finetune, langs, own_sets, extra_sets)
        dev_rows = switchoff_rows(scorer, exp, langs, opts.dev)
        write_choice(exp, opts.dev, dev_rows)
        t7 = with_dev_choice(switchoff_rows(scorer, exp, langs, own_sets, utts_key="switchoff_"), dev_rows)
        ev = Evidence(scorer.row_utts, scorer.speakers({k for u in scorer.row_utts.values() for k in u}),
                      chosen_on(opts.inference_model), scorer.row_t)
        prm = params(exp, opts.systems)
        looks = look_record(opts, own_sets + extra_sets)
    except (DataDirError, OSError, ValueError) as e:
        print(f"multisoftmax_score: {e}", file=sys.stderr)
        return 1
    results = update_results(exp / "results.json", "egs/indic/asr1", opts.corpus, results_systems(rows, t7, prm),
                             extra={"headline": headline(rows, t7, ev), "sealed_looks": looks},
                             trained=trained_dirs(exp, opts.systems, opts.finetune, langs))
    plot_switchoff(t7, exp / "images" / "switchoff.png")
    write_md(Path(opts.results), rows, t7, prm, langs, own_sets, extra_sets, corpus=opts.corpus, note=opts.note,
             exp=exp, systems=opts.systems, finetune=opts.finetune, paper_config=Path(opts.paper_config),
             env=results.get("environment"), dirs=scorer.dirs, ev=ev, claims=results.get("headline"),
             data=Path(opts.data), looks=looks, seed=opts.seed, dev_sets=opts.dev)
    for name in ("mono", "vanilla", "onehot", "multisoftmax", "multisoftmax_lsp", "multisoftmax_lid_lidfree"):
        if name in rows:
            print(f"multisoftmax_score: {name}: WER {fmt(rows[name].get('wer_avg'))} %, CER {fmt(rows[name].get('cer_avg'))} %",
                  file=sys.stderr)
    return 0
