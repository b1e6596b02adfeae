"""Decode a data set with a trained multilingual RNN-T (paper 001): streaming beam search, known language or
LID-free (Section 4.2), with early switch-off of decoders (Section 6.3, Table 7). See --help and
local_models/multisoftmax/decode.py for the search and the switch-off rule."""
from __future__ import annotations

import argparse
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
from local_models.common.device import add_ngpu_option, device_of
from local_models.multisoftmax.decode import (LidFreeDecoder, StreamingBeamSearch, SwitchOff, encode_chunks,
                                              lang_by_script, t_avg)
from local_models.multisoftmax.units import units_to_text

NO_LANG = "<none>"  # hyp_lang of a vanilla hypothesis whose script is empty or ambiguous


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="indic_decode",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""Decode every utterance of FEATS with the model trained in MODEL_DIR (config.yaml + MODEL_FILE),
streaming: the encoder and the beam search advance --chunk 30 ms frames at a time.

--mode known    the true language (UTT2LID) selects the decoder: the language's head (multisoftmax,
                mono: only its own language), the one-hot input (onehot), nothing (vanilla).
--mode lidfree  multisoftmax with an LID head: one encoder pass, every language's decoder in parallel,
                chosen language = highest average LID posterior among the decoders still running;
                decoders are switched off early by --tau/--s_th (paper eq. 1). vanilla: its union
                decoder, language read from the hypothesis' script.

Writes OUT_DIR/hyp_units (<utt> units), hyp (<utt> words), hyp_lang (<utt> chosen language, <none> if a
vanilla hypothesis has no clear script), decode_stats.json (CPU seconds of encoder and decoders, T_avg,
LID accuracy), and in lidfree mode also decoder_frames (<utt> S active frames per language) and, with an
LID head, hyp_oracle (the true language's decoder, as far as it ran) and lid_post (<utt> average posterior per language;
languages in decode_stats.json "langs" order). --switch_off_grid also decodes each of its settings (one
encoder pass per utterance shared by all) into SWITCH_OFF_DIR/<tau>_<s_th>/ (e.g. inf_inf, 30_0.5), with a
summary in SWITCH_OFF_DIR/switch_off_grid.json; OUT_DIR keeps the --tau/--s_th setting.""",
    )
    p.add_argument("--model_dir", required=True, help="exp/<system>: config.yaml and the trained model")
    p.add_argument("--model-file", "--model_file", dest="model_file", default="valid.loss.best.pth",
                   help="checkpoint in MODEL_DIR (default %(default)s)")
    add_ngpu_option(p)
    p.add_argument("--feats", required=True, help="feats.scp of (T, 80) log-mels, e.g. dump/fbank/<set>/feats.scp")
    p.add_argument("--utt2lid", required=True, help="<utt> <language> for every utterance, e.g. data/<set>/utt2lid")
    p.add_argument("--mode", choices=("known", "lidfree"), default="known", help="default %(default)s")
    p.add_argument("--only_lang", default="", help="decode only the utterances of this language (a monolingual "
                                                   "model on a set that mixes languages)")
    p.add_argument("--beam", type=int, default=4, help="beam width; 1 = greedy (default %(default)s)")
    p.add_argument("--max_sym_per_frame", type=int, default=3,
                   help="units a hypothesis may emit per 30 ms frame (default %(default)s)")
    p.add_argument("--chunk", type=int, default=10, help="streaming chunk in 30 ms frames (default %(default)s)")
    p.add_argument("--tau", type=float, default=float("inf"),
                   help="lidfree: minimum wait in 30 ms frames before a decoder may be switched off (default inf)")
    p.add_argument("--s_th", type=float, default=float("inf"),
                   help="lidfree: switch decoder l off once s_l(t) < max s(t) - S_TH (default inf: never)")
    p.add_argument("--switch_off_grid", default="",
                   help='lidfree: several "tau:s_th" settings, e.g. "inf:inf 100:0.2 30:0.2 30:0.5 10:0.2" '
                        "(OUT_DIR still gets --tau/--s_th)")
    p.add_argument("--switch_off_dir", help="where the grid's settings go (default OUT_DIR/switchoff)")
    p.add_argument("out_dir", nargs="?", help="output directory (or --out_dir)")
    p.add_argument("--out_dir", dest="out_dir_opt", metavar="OUT_DIR", help="output directory")
    return p


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


def main(argv=None) -> int:
    parser = get_parser()
    args = parser.parse_args(argv)
    if bool(args.out_dir) == bool(args.out_dir_opt):
        parser.error("give the output directory once: as the last argument or as --out_dir")
    args.out_dir = args.out_dir or args.out_dir_opt
    torch.set_num_threads(1)  # CPU times comparable across runs and settings
    try:
        device = device_of(args.ngpu)  # before anything loads: a missing GPU fails at once
        from local_models.multisoftmax.task import load_trained

        model_dir, out = Path(args.model_dir), Path(args.out_dir)
        model = load_trained(model_dir, args.model_file, device)
        net = model.net
        if args.beam < 1 or args.chunk < 1 or args.max_sym_per_frame < 0:
            raise ValueError("need --beam >= 1, --chunk >= 1 and --max_sym_per_frame >= 0")
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
        lidfree_lid = args.mode == "lidfree" and net.has_lid
        if (args.switch_off_grid or np.isfinite([args.tau, args.s_th]).any()) and not lidfree_lid:
            raise ValueError("--switch_off_grid, --tau and --s_th apply to --mode lidfree with a multisoftmax LID model")
        # the --tau/--s_th setting first (OUT_DIR), then the grid's others (a setting is decoded once)
        grid = parse_grid(args.switch_off_grid) if args.switch_off_grid else []
        settings = list(dict.fromkeys([(args.tau, args.s_th)] + grid))
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
                    dec = LidFreeDecoder(net, args.beam, args.max_sym_per_frame, tau, s_th)
                    for h, lp in chunks:
                        dec.step(h, lp)
                    res = dec.result()
                    col.add(utt, unit_strings(net, res.lang, res.nbest[res.lang]), lang, res.lang, frames,
                            res.active_frames.tolist(), res.cpu_s)
                    oracle = unit_strings(net, lang, res.nbest[lang])
                    col.put("hyp_oracle", utt, units_to_text(oracle))
                    col.put("lid_post", utt, " ".join(f"{p:.4f}" for p in res.avg_post))
                else:
                    head = net.head_of(lang)
                    search = StreamingBeamSearch(net, head, args.beam, args.max_sym_per_frame)
                    for h, _ in chunks:
                        search.step(h)
                    units = unit_strings(net, head, search.final())
                    chosen = lang_by_script(units, by_script) if by_script else lang
                    key = head if args.mode == "lidfree" else lang
                    col.add(utt, units, lang, chosen, frames, [frames] if args.mode == "lidfree" else None,
                            {key: search.cpu_s})
        common = dict(system=net.system, mode=args.mode, model_dir=str(model_dir), feats=args.feats,
                      beam=args.beam, max_sym_per_frame=args.max_sym_per_frame, chunk=args.chunk,
                      encoder_cpu_s=enc_cpu, threads=torch.get_num_threads(),
                      device=str(device))
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
    except (DataDirError, ValueError, OSError, KeyError) as e:
        print(f"indic_decode: {e}", file=sys.stderr)
        return 1
    for row in summary:
        print(f"indic_decode: {row['dir']} tau={row['tau']} "
              f"s_th={row['s_th']}: T_avg {row['T_avg']}, decoder CPU {row['decoder_cpu_s']:.2f} s, encoder CPU "
              f"{enc_cpu:.2f} s, LID accuracy {row['lid_accuracy']:.3f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
