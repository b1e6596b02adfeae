"""Decoding of a data set with a trained multilingual RNN-T (`local_models.bin.indic_decode`, recipe stage 6):
reads feats.scp and utt2lid, runs decode.py's streaming search in the known-language or LID-free mode (with
the early switch-off settings of paper Section 6.3, Table 7) and writes the hypothesis tables and
decode_stats.json of each setting. `run(args)` takes indic_decode's parsed options.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import kaldiio
import numpy as np
import torch
import yaml
from tqdm import tqdm

from local_models.common.datadir import DataDirError, atomic_open, c_sort_key, read_table, write_table
from local_models.common.device import device_of

from .decode import LidFreeDecoder, StreamingBeamSearch, SwitchOff, encode_chunks, lang_by_script, t_avg
from .units import units_to_text

NO_LANG = "<none>"  # hyp_lang of a vanilla hypothesis whose script is empty or ambiguous

def parse_grid(text: str) -> List[Tuple[float, float]]:
    settings = []
    for item in text.split():
        try:
            tau, s_th = (float(v) for v in item.split(":"))
        except ValueError:
            raise ValueError(f"--switch_off_grid: {item!r} is not tau:s_th (numbers or inf)") from None
        settings.append((tau, s_th))
    if not settings:
        raise ValueError("--switch_off_grid: no settings")
    return settings


def setting_name(tau: float, s_th: float) -> str:
    return f"{tau:g}_{s_th:g}"


def json_number(v: float):
    """inf as the string "inf" (JSON has no infinity)."""
    return v if np.isfinite(v) else str(v)


def lang_unit_lists(model_dir: Path, net) -> Dict[str, List[str]]:
    """Every language's unit list (config.yaml keeps all of them, the model only its heads')."""
    conf = yaml.safe_load((model_dir / "config.yaml").read_text(encoding="utf-8"))
    lists = (conf.get("model_conf") or {}).get("token_lists") or {}
    missing = [lang for lang in net.langs if lang not in lists]
    if missing:
        raise ValueError(f"{model_dir}/config.yaml: no unit list for {' '.join(missing)} (model_conf.token_lists); "
                         "needed to tell a vanilla hypothesis' language by its script")
    return {lang: lists[lang] for lang in net.langs}


class Collector:
    """Output tables and statistics of one decoding setting."""

    def __init__(self, langs: List[str]):
        self.langs = langs
        self.tables: Dict[str, Dict[str, str]] = {}
        self.dec_cpu = dict.fromkeys(langs, 0.0)
        self.t_avgs: List[float] = []
        self.frames = self.active_frames = self.lid_correct = 0

    def put(self, name: str, utt: str, value: str) -> None:
        self.tables.setdefault(name, {})[utt] = value

    def add(self, utt: str, units: List[str], true_lang: str, chosen: Optional[str], frames: int,
            active: Optional[List[int]], cpu: Dict[str, float]) -> None:
        self.put("hyp_units", utt, " ".join(units))
        self.put("hyp", utt, units_to_text(units))
        self.put("hyp_lang", utt, chosen or NO_LANG)
        self.lid_correct += chosen == true_lang
        if active is not None:
            self.put("decoder_frames", utt, " ".join(str(int(a)) for a in [frames, *active]))
            self.t_avgs.append(t_avg(active, frames))
            self.active_frames += int(np.sum(active))
        self.frames += frames
        for lang, s in cpu.items():
            self.dec_cpu[lang] += s

    def write(self, out: Path, stats: dict) -> dict:
        for name, table in self.tables.items():
            write_table(out / name, table)
        n = len(self.tables.get("hyp", {}))
        stats = dict(stats, utterances=n, frames=self.frames, langs=self.langs,
                     decoder_cpu_s=sum(self.dec_cpu.values()), decoder_cpu_s_per_lang=self.dec_cpu,
                     lid_accuracy=self.lid_correct / n if n else None,
                     active_frames=self.active_frames if self.t_avgs else None,  # summed over utts and decoders
                     T_avg=float(np.mean(self.t_avgs)) if self.t_avgs else None,
                     T_avg_frame_weighted=self.active_frames / self.frames if self.t_avgs and self.frames else None)
        with atomic_open(out / "decode_stats.json") as f:
            json.dump(stats, f, indent=1, ensure_ascii=False)
        return stats


def unit_strings(net, head: str, nbest) -> List[str]:
    return [net.token_lists[head][i] for i in nbest[0][0]]


def check_inputs(net, keys: List[str], utt2lid: Dict[str, str], args) -> None:
    missing = [k for k in keys if k not in utt2lid]
    if missing:
        raise DataDirError(args.utt2lid, None, f"no language for {len(missing)} utterance(s) of {args.feats}: "
                                               f"{' '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}")
    for k in keys:
        if utt2lid[k] not in net.langs:
            raise DataDirError(args.utt2lid, None, f"utterance {k}: language {utt2lid[k]!r} is not one of the "
                                                   f"model's ({' '.join(net.langs)})")
        if args.mode == "known" and not (utt2lid[k] in net.heads_names or "union" in net.heads_names):
            raise DataDirError(args.utt2lid, None, f"utterance {k} is in {utt2lid[k]}; this {net.system} model "
                                                   f"decodes {' '.join(net.heads_names)} only")
    if args.mode == "lidfree" and not (net.system == "vanilla" or net.has_lid):
        raise ValueError(f"{args.model_dir}: --mode lidfree needs a multisoftmax model with an LID head or a "
                         f"vanilla model, not {net.system}{' without LID' if net.system == 'multisoftmax' else ''}")



def read_inputs(args, net):
    """(feats, sorted utterance keys to decode, utt2lid) of --feats / --utt2lid / --only_lang, checked."""
    if not Path(args.feats).is_file():
        raise DataDirError(args.feats, None, "file does not exist")
    feats = kaldiio.load_scp(args.feats)
    keys = sorted(feats, key=c_sort_key)
    if not keys:
        raise DataDirError(args.feats, None, "no utterances")
    utt2lid = read_table(args.utt2lid)
    if args.only_lang:
        keys = [k for k in keys if utt2lid.get(k, args.only_lang) == args.only_lang]
        if not keys:
            raise DataDirError(args.utt2lid, None, f"no utterance of language {args.only_lang!r}")
    check_inputs(net, keys, utt2lid, args)
    return feats, keys, utt2lid


def switch_off_settings(args, lidfree_lid: bool):
    """(settings, grid): the --tau/--s_th setting first (OUT_DIR), then the grid's others (each decoded once)."""
    if (args.switch_off_grid or np.isfinite([args.tau, args.s_th]).any()) and not lidfree_lid:
        raise ValueError("--switch_off_grid, --tau and --s_th apply to --mode lidfree with a multisoftmax LID model")
    grid = parse_grid(args.switch_off_grid) if args.switch_off_grid else []
    settings = list(dict.fromkeys([(args.tau, args.s_th)] + grid))
    return settings, grid


def decode_lidfree_lid(net, args, utt, lang, chunks, frames, tau, s_th, col: Collector) -> None:
    """Every language's decoder over the shared encoder output, the LID head choosing (+ the oracle)."""
    dec = LidFreeDecoder(net, args.beam, args.max_sym_per_frame, tau, s_th)
    for h, lp in chunks:
        dec.step(h, lp)
    res = dec.result()
    col.add(utt, unit_strings(net, res.lang, res.nbest[res.lang]), lang, res.lang, frames,
            res.active_frames.tolist(), res.cpu_s)
    oracle = unit_strings(net, lang, res.nbest[lang])
    col.put("hyp_oracle", utt, units_to_text(oracle))
    col.put("lid_post", utt, " ".join(f"{p:.4f}" for p in res.avg_post))


def decode_one_head(net, args, utt, lang, chunks, frames, by_script, col: Collector) -> None:
    """One head's search: the true language's (known), or vanilla's union head (lidfree: language by script)."""
    head = net.head_of(lang)
    search = StreamingBeamSearch(net, head, args.beam, args.max_sym_per_frame)
    for h, _ in chunks:
        search.step(h)
    units = unit_strings(net, head, search.final())
    chosen = lang_by_script(units, by_script) if by_script else lang
    key = head if args.mode == "lidfree" else lang
    col.add(utt, units, lang, chosen, frames, [frames] if args.mode == "lidfree" else None,
            {key: search.cpu_s})


def write_settings(settings, grid, collectors, out: Path, grid_dir: Path, common: dict) -> List[dict]:
    """Every setting's tables and decode_stats.json (OUT_DIR and/or its grid dir); the grid's summary."""
    summary = []
    for (tau, s_th), col in zip(settings, collectors):
        dirs = ([out] if (tau, s_th) == settings[0] else []) + \
               ([grid_dir / setting_name(tau, s_th)] if (tau, s_th) in grid else [])
        for d in dirs:
            stats = col.write(d, dict(common, tau=json_number(tau), s_th=json_number(s_th)))
            summary.append({k: stats[k] for k in ("tau", "s_th", "T_avg", "decoder_cpu_s", "lid_accuracy")}
                           | {"dir": str(d)})
    if grid:
        with atomic_open(grid_dir / "switch_off_grid.json") as f:
            json.dump(summary[1:], f, indent=1)  # [0] is OUT_DIR
    return summary


def decode_set(args) -> Tuple[List[dict], float]:
    """Decode every utterance in every setting and write the outputs; (summary rows, encoder CPU seconds)."""
    device = device_of(args.ngpu)  # before anything loads: a missing GPU fails at once
    from .task import load_trained

    model_dir, out = Path(args.model_dir), Path(args.out_dir)
    model = load_trained(model_dir, args.model_file, device)
    net = model.net
    if args.beam < 1 or args.chunk < 1 or args.max_sym_per_frame < 0:
        raise ValueError("need --beam >= 1, --chunk >= 1 and --max_sym_per_frame >= 0")
    feats, keys, utt2lid = read_inputs(args, net)
    lidfree_lid = args.mode == "lidfree" and net.has_lid
    settings, grid = switch_off_settings(args, lidfree_lid)
    grid_dir = Path(args.switch_off_dir) if args.switch_off_dir else out / "switchoff"
    for tau, s_th in settings:
        SwitchOff(1, tau, s_th)  # an invalid setting fails now, not after the first utterance
    by_script = lang_unit_lists(model_dir, net) if net.system == "vanilla" else None
    langs = list(net.langs) if lidfree_lid else [net.heads_names[0]] if args.mode == "lidfree" else list(net.langs)
    collectors = [Collector(langs) for _ in settings]
    enc_cpu = 0.0
    for utt in tqdm(keys, desc=f"indic_decode {model_dir.name} {args.mode}", disable=None, mininterval=5):
        lang = utt2lid[utt]
        x = torch.tensor(np.asarray(feats[utt]), dtype=torch.float32, device=device)
        if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] != model.feat_mean.numel():
            raise DataDirError(args.feats, None, f"utterance {utt}: features of shape {tuple(x.shape)}, the "
                                                 f"model reads (frames, {model.feat_mean.numel()})")
        t0 = time.process_time()
        with torch.no_grad():
            chunks = encode_chunks(net, model.normalise(x), args.chunk,
                                   lid=net.langs.index(lang) if net.system == "onehot" else None,
                                   with_lid=lidfree_lid)
        enc_cpu += time.process_time() - t0
        frames = sum(len(h) for h, _ in chunks)
        for (tau, s_th), col in zip(settings, collectors):
            if lidfree_lid:
                decode_lidfree_lid(net, args, utt, lang, chunks, frames, tau, s_th, col)
            else:
                decode_one_head(net, args, utt, lang, chunks, frames, by_script, col)
    common = dict(system=net.system, mode=args.mode, model_dir=str(model_dir), feats=args.feats,
                  beam=args.beam, max_sym_per_frame=args.max_sym_per_frame, chunk=args.chunk,
                  encoder_cpu_s=enc_cpu, threads=torch.get_num_threads(),
                  device=str(device))
    return write_settings(settings, grid, collectors, out, grid_dir, common), enc_cpu


def run(args) -> int:
    """indic_decode with parsed options (args.out_dir set): 0, or 1 after an error message on stderr."""
    torch.set_num_threads(1)  # CPU times comparable across runs and settings
    try:
        summary, enc_cpu = decode_set(args)
    except (DataDirError, ValueError, OSError, KeyError) as e:
        print(f"indic_decode: {e}", file=sys.stderr)
        return 1
    for row in summary:
        print(f"indic_decode: {row['dir']} tau={row['tau']} "
              f"s_th={row['s_th']}: T_avg {row['T_avg']}, decoder CPU {row['decoder_cpu_s']:.2f} s, encoder CPU "
              f"{enc_cpu:.2f} s, LID accuracy {row['lid_accuracy']:.3f}", file=sys.stderr)
    return 0
