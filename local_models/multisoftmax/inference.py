"""Decoding with a trained multilingual RNN-T, two ways:

A data set (`local_models.bin.multisoftmax_decode`, recipe stage 6): reads feats.scp and utt2lid (optional in the
LID-free mode: then no oracle and no LID accuracy), runs decode.py's streaming search in the known-language or
LID-free mode (with the early switch-off settings of paper Section 6.3, Table 7) and writes the hypothesis tables
and decode_stats.json of each setting. `run(opts)` takes multisoftmax_decode's options (DecodeOptions).

A user's raw audio (`speech-to-text`): `Speech2Text.from_pretrained(archive or exp dir, device="cpu")`, then
`s2t(audio, sample_rate=None, language=None, nbest=1) -> [Hypothesis(text, language, score, units)]` best first
(LID-free unless `language` is given) and `s2t.stream(audio, ...) -> Partial` results chunk by chunk with the
early switch-off; the features are stage 2's (frontend.py), the search stage 6's. Any length (issue #52): an
input over 60 s is read, featurised, stacked, encoded and searched 10 s at a time (`feature_blocks`,
`iter_encode_blocks`), and decode's search keys its hypotheses by prefix-tree nodes (decode.Prefix: a cost per
frame that does not grow with the length decoded), so time per second of input and memory stay flat.
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import kaldiio
import numpy as np
import soundfile
import torch
import yaml
from tqdm import tqdm

from local_models.common.audio import checked_blocks, iter_audio_blocks, read_audio, with_last
from local_models.common.datadir import DataDirError, atomic_open, c_sort_key, read_table, write_table
from local_models.common.device import device_of
from local_models.common.features import compute

from .decode import (INF, LidFreeDecoder, Prefix, StreamingBeamSearch, SwitchOff, cpu_kernels,
                     encode_chunks, lang_by_script, t_avg)
from .frontend import audio_features, feature_dims, read_feat_conf
from .pack import DEFAULT_DECODING, PAPER, exp_files, parse_decoding, read_decode_conf
from .systems import system_language
from .units import SPECIAL, WORD_START, units_to_text

NO_LANG = "<none>"  # hyp_lang of a vanilla hypothesis whose script is empty or ambiguous


@dataclass(frozen=True)
class DecodeOptions:
    """multisoftmax_decode's options (built by local_models.bin.multisoftmax_decode from its parsed args)."""
    model_dir: str                 # exp/<system>: config.yaml and the trained model
    model_file: str                # checkpoint in model_dir
    ngpu: int                      # 0: CPU
    feats: str                     # feats.scp of (T, 80) log-mels
    utt2lid: Optional[str]         # <utt> <language>; None: LID-free decoding of a set of unknown languages
    mode: str                      # known | lidfree
    only_lang: str                 # "" or decode only this language's utterances
    beam: int
    max_sym_per_frame: int
    chunk: int                     # streaming chunk in 30 ms encoder frames
    tau: float                     # the switch-off setting written into out_dir
    s_th: float
    switch_off_grid: str           # "tau:s_th ..." settings decoded into switch_off_dir as well ("" none)
    switch_off_dir: Optional[str]  # None: out_dir/switchoff
    out_dir: str


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


def lang_unit_lists(model_dir: Path, net, config: Optional[Path] = None) -> Dict[str, List[str]]:
    """Every language's unit list (config.yaml keeps all of them, the model only its heads')."""
    config = config or model_dir / "config.yaml"
    conf = yaml.safe_load(config.read_text(encoding="utf-8"))
    lists = (conf.get("model_conf") or {}).get("token_lists") or {}
    missing = [lang for lang in net.langs if lang not in lists]
    if missing:
        raise ValueError(f"{config}: no unit list for {' '.join(missing)} (model_conf.token_lists); "
                         "needed to tell a vanilla hypothesis' language by its script")
    return {lang: lists[lang] for lang in net.langs}


class Collector:
    """Output tables and statistics of one decoding setting."""

    def __init__(self, langs: List[str]):
        self.langs = langs
        self.tables: Dict[str, Dict[str, str]] = {}
        self.dec_cpu = dict.fromkeys(langs, 0.0)
        self.t_avgs: List[float] = []
        self.frames = self.active_frames = self.lid_correct = self.lid_scored = 0

    def put(self, name: str, utt: str, value: str) -> None:
        self.tables.setdefault(name, {})[utt] = value

    def add(self, utt: str, units: List[str], true_lang: Optional[str], chosen: Optional[str], frames: int,
            active: Optional[List[int]], cpu: Dict[str, float]) -> None:
        """TRUE_LANG None: the language is not known (LID-free decoding without utt2lid), LID is not scored."""
        self.put("hyp_units", utt, " ".join(units))
        self.put("hyp", utt, units_to_text(units))
        self.put("hyp_lang", utt, chosen or NO_LANG)
        if true_lang is not None:
            self.lid_scored += 1
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
                     lid_accuracy=self.lid_correct / self.lid_scored if self.lid_scored else None,
                     active_frames=self.active_frames if self.t_avgs else None,  # summed over utts and decoders
                     T_avg=float(np.mean(self.t_avgs)) if self.t_avgs else None,
                     T_avg_frame_weighted=self.active_frames / self.frames if self.t_avgs and self.frames else None)
        with atomic_open(out / "decode_stats.json") as f:
            json.dump(stats, f, indent=1, ensure_ascii=False)
        return stats


def unit_strings(net, head: str, nbest) -> List[str]:
    return [net.token_lists[head][i] for i in nbest[0][0]]


def check_inputs(net, keys: List[str], utt2lid: Optional[Dict[str, str]], mode: str, model_dir,
                 utt2lid_file: Optional[str], feats_file: str) -> None:
    """KEYS (of FEATS_FILE) decodable by NET in MODE with their languages UTT2LID (read from UTT2LID_FILE)."""
    if mode == "lidfree" and not (net.system == "vanilla" or net.has_lid):
        raise ValueError(f"{model_dir}: --mode lidfree needs a multisoftmax model with an LID head or a "
                         f"vanilla model, not {net.system}{' without LID' if net.system == 'multisoftmax' else ''}")
    if utt2lid is None:  # LID-free decoding of a set whose languages nobody told us
        return
    missing = [k for k in keys if k not in utt2lid]
    if missing:
        raise DataDirError(utt2lid_file, None, f"no language for {len(missing)} utterance(s) of {feats_file}: "
                                               f"{' '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}")
    for k in keys:
        if utt2lid[k] not in net.langs:
            raise DataDirError(utt2lid_file, None, f"utterance {k}: language {utt2lid[k]!r} is not one of the "
                                                   f"model's ({' '.join(net.langs)})")
        if mode == "known" and not (utt2lid[k] in net.heads_names or "union" in net.heads_names):
            raise DataDirError(utt2lid_file, None, f"utterance {k} is in {utt2lid[k]}; this {net.system} model "
                                                   f"decodes {' '.join(net.heads_names)} only")



def read_inputs(net, feats_file: str, utt2lid_file: Optional[str], mode: str, only_lang: str, model_dir):
    """(feats, sorted utterance keys to decode, utt2lid or None) of --feats / --utt2lid / --only_lang, checked.
    --utt2lid is needed to decode with the language known, to pick a language's utterances and to score LID;
    LID-free decoding runs without it."""
    if not Path(feats_file).is_file():
        raise DataDirError(feats_file, None, "file does not exist")
    if not utt2lid_file and (mode == "known" or only_lang):
        raise ValueError(f"--mode {mode}{' --only_lang' if only_lang else ''} needs --utt2lid (the "
                         "language of every utterance); only --mode lidfree decodes without it")
    feats = kaldiio.load_scp(feats_file)
    keys = sorted(feats, key=c_sort_key)
    if not keys:
        raise DataDirError(feats_file, None, "no utterances")
    utt2lid = read_table(utt2lid_file) if utt2lid_file else None
    if only_lang:
        keys = [k for k in keys if utt2lid.get(k, only_lang) == only_lang]
        if not keys:
            raise DataDirError(utt2lid_file, None, f"no utterance of language {only_lang!r}")
    check_inputs(net, keys, utt2lid, mode, model_dir, utt2lid_file, feats_file)
    return feats, keys, utt2lid


def switch_off_settings(tau: float, s_th: float, switch_off_grid: str, lidfree_lid: bool):
    """(settings, grid): the --tau/--s_th setting first (OUT_DIR), then the grid's others (each decoded once)."""
    if (switch_off_grid or np.isfinite([tau, s_th]).any()) and not lidfree_lid:
        raise ValueError("--switch_off_grid, --tau and --s_th apply to --mode lidfree with a multisoftmax LID model")
    grid = parse_grid(switch_off_grid) if switch_off_grid else []
    settings = list(dict.fromkeys([(tau, s_th)] + grid))
    return settings, grid


def decode_lidfree_lid(net, beam: int, max_sym_per_frame: int, utt, lang, chunks, frames, tau, s_th,
                       col: Collector) -> None:
    """Every language's decoder over the shared encoder output, the LID head choosing (+ the oracle)."""
    dec = LidFreeDecoder(net, beam, max_sym_per_frame, tau, s_th)
    for h, lp in chunks:
        dec.step(h, lp)
    res = dec.result()
    col.add(utt, unit_strings(net, res.lang, res.nbest[res.lang]), lang, res.lang, frames,
            res.active_frames.tolist(), res.cpu_s)
    if lang is not None:  # the oracle needs the true language
        col.put("hyp_oracle", utt, units_to_text(unit_strings(net, lang, res.nbest[lang])))
    col.put("lid_post", utt, " ".join(f"{p:.4f}" for p in res.avg_post))


def decode_one_head(net, mode: str, beam: int, max_sym_per_frame: int, utt, lang, chunks, frames, by_script,
                    col: Collector) -> None:
    """One head's search: the true language's (known), or vanilla's union head (lidfree: language by script)."""
    head = net.heads_names[0] if mode == "lidfree" else net.head_of(lang)
    search = StreamingBeamSearch(net, head, beam, max_sym_per_frame)
    for h, _ in chunks:
        search.step(h)
    units = unit_strings(net, head, search.final())
    chosen = lang_by_script(units, by_script) if by_script else lang
    key = head if mode == "lidfree" else lang
    col.add(utt, units, lang, chosen, frames, [frames] if mode == "lidfree" else None,
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


def decode_set(opts: DecodeOptions) -> Tuple[List[dict], float]:
    """Decode every utterance in every setting and write the outputs; (summary rows, encoder CPU seconds)."""
    device = device_of(opts.ngpu)  # before anything loads: a missing GPU fails at once
    from .task import load_trained

    model_dir, out, mode = Path(opts.model_dir), Path(opts.out_dir), opts.mode
    beam, max_sym, chunk = opts.beam, opts.max_sym_per_frame, opts.chunk
    model = load_trained(model_dir, opts.model_file, device)
    net = model.net
    if beam < 1 or chunk < 1 or max_sym < 0:
        raise ValueError("need --beam >= 1, --chunk >= 1 and --max_sym_per_frame >= 0")
    feats, keys, utt2lid = read_inputs(net, opts.feats, opts.utt2lid, mode, opts.only_lang, opts.model_dir)
    lidfree_lid = mode == "lidfree" and net.has_lid
    settings, grid = switch_off_settings(opts.tau, opts.s_th, opts.switch_off_grid, lidfree_lid)
    grid_dir = Path(opts.switch_off_dir) if opts.switch_off_dir else out / "switchoff"
    for tau, s_th in settings:
        SwitchOff(1, tau, s_th)  # an invalid setting fails now, not after the first utterance
    by_script = lang_unit_lists(model_dir, net) if net.system == "vanilla" else None
    langs = list(net.langs) if lidfree_lid else [net.heads_names[0]] if mode == "lidfree" else list(net.langs)
    collectors = [Collector(langs) for _ in settings]
    enc_cpu = 0.0
    for utt in tqdm(keys, desc=f"multisoftmax_decode {model_dir.name} {mode}", disable=None, mininterval=5):
        lang = utt2lid[utt] if utt2lid is not None else None
        x = torch.tensor(np.asarray(feats[utt]), dtype=torch.float32, device=device)
        if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] != model.feat_mean.numel():
            raise DataDirError(opts.feats, None, f"utterance {utt}: features of shape {tuple(x.shape)}, the "
                                                 f"model reads (frames, {model.feat_mean.numel()})")
        t0 = time.process_time()
        with torch.no_grad():
            chunks = encode_chunks(net, model.normalise(x), chunk,
                                   lid=net.langs.index(lang) if net.system == "onehot" else None,
                                   with_lid=lidfree_lid)
        enc_cpu += time.process_time() - t0
        frames = sum(len(h) for h, _ in chunks)
        for (tau, s_th), col in zip(settings, collectors):
            if lidfree_lid:
                decode_lidfree_lid(net, beam, max_sym, utt, lang, chunks, frames, tau, s_th, col)
            else:
                decode_one_head(net, mode, beam, max_sym, utt, lang, chunks, frames, by_script, col)
    common = dict(system=net.system, mode=mode, model_dir=str(model_dir), feats=opts.feats, utt2lid=opts.utt2lid,
                  beam=beam, max_sym_per_frame=max_sym, chunk=chunk,
                  encoder_cpu_s=enc_cpu, threads=torch.get_num_threads(),
                  device=str(device))
    return write_settings(settings, grid, collectors, out, grid_dir, common), enc_cpu


def run(opts: DecodeOptions) -> int:
    """multisoftmax_decode with its options: 0, or 1 after an error message on stderr."""
    torch.set_num_threads(1)  # CPU times comparable across runs and settings
    try:
        summary, enc_cpu = decode_set(opts)
    except (DataDirError, ValueError, OSError, KeyError) as e:
        print(f"multisoftmax_decode: {e}", file=sys.stderr)
        return 1
    for row in summary:
        lid = (f"LID accuracy {row['lid_accuracy']:.3f}" if row["lid_accuracy"] is not None
               else "LID accuracy not scored (no --utt2lid)")
        print(f"multisoftmax_decode: {row['dir']} tau={row['tau']} "
              f"s_th={row['s_th']}: T_avg {row['T_avg']}, decoder CPU {row['decoder_cpu_s']:.2f} s, encoder CPU "
              f"{enc_cpu:.2f} s, {lid}", file=sys.stderr)
    return 0


# ============================================================================ any length: partial texts

class _BestText:
    """`units_to_text` of a search's best hypothesis (and with LANG_UNITS, vanilla's `lang_by_script` of it),
    updated from the previous one: only the units after the point where the two part are converted, so a partial
    result costs O(new units), not O(length)."""

    def __init__(self, names: Sequence[str], lang_units: Optional[Dict[str, Sequence[str]]] = None):
        self.names = names
        self.chain: List[Prefix] = []   # the last best hypothesis' nodes, oldest first
        self.pieces: List[str] = []      # each unit's text: " x" for a word-start unit after the first, else x
        self.langs = list(lang_units or {})
        sets = [{_grapheme(u) for u in lang_units[lang] if u not in SPECIAL} for lang in self.langs]
        # per unit id: 1 for each language whose script holds its grapheme; counts: running sums along the chain
        self.member = [tuple(int(n not in SPECIAL and _grapheme(n) in g) for g in sets) for n in names]
        self.counts: List[Tuple[int, ...]] = []

    def __call__(self, node: Prefix) -> str:
        new = []
        while node.length > len(self.chain) or (node.length and self.chain[node.length - 1] is not node):
            new.append(node)
            node = node.parent
        del self.chain[node.length:], self.pieces[node.length:], self.counts[node.length:]
        for n in reversed(new):
            name = self.names[n.unit]
            word_start = name.startswith(WORD_START) and name not in SPECIAL
            grapheme = name[len(WORD_START):] if word_start else name
            self.pieces.append(" " + grapheme if word_start and self.chain else grapheme)
            if self.langs:
                last = self.counts[-1] if self.counts else (0,) * len(self.langs)
                self.counts.append(tuple(a + b for a, b in zip(last, self.member[n.unit])))
            self.chain.append(n)
        return "".join(self.pieces)

    def language(self) -> Optional[str]:
        """`lang_by_script` of the hypothesis last given: the one language with most of its graphemes, or None."""
        counts = self.counts[-1] if self.counts else (0,) * len(self.langs)
        top = max(counts, default=0)
        winners = [lang for lang, c in zip(self.langs, counts) if c == top]
        return winners[0] if top > 0 and len(winners) == 1 else None


def _grapheme(unit: str) -> str:
    """A unit's grapheme as lang_by_script reads it (B_x: x)."""
    return unit[len(WORD_START):] if unit.startswith(WORD_START) else unit


# ============================================================================ any length: bounded memory

LONG_S = 60.0   # inputs up to this long are read and featurised whole (exactly as stage 2); longer ones in blocks
BLOCK_S = 10.0  # block of a long input: its features are computed, encoded and searched before the next is read


def block_features(waves: Iterable[np.ndarray], cfg) -> Iterator[np.ndarray]:
    """`common.features.compute` of the joined wave blocks WAVES, block by block (static features: cfg.deltas 0):
    frame i is centred on sample i * hop, so each block's frames are computed with half an FFT window of the
    samples around them and equal the one-pass frames (the FFTs are the same; the mel product may round
    differently in the last bit). Holds one block and a window's context."""
    hop, half = cfg.hop_length, cfg.fft_size // 2
    ctx = -(-half // hop) * hop            # context samples, a whole number of hops
    buf, buf0, frame = np.zeros(0, np.float32), 0, 0   # samples from global index buf0; next frame to give
    for wave, last in with_last(waves):
        buf = np.concatenate([buf, wave])
        end = buf0 + len(buf)
        start = max(0, frame * hop - ctx)
        seg = buf[start - buf0:]
        # frames whose window lies in what was read; at the end every frame (1 + samples // hop, as one pass)
        upto = end // hop + 1 if last else (end - half) // hop + 1
        if upto > frame:
            first = (frame * hop - start) // hop
            yield compute(seg, cfg)[first:first + upto - frame]
            frame = upto
        keep = max(0, frame * hop - ctx)
        buf, buf0 = buf[keep - buf0:], keep


def iter_encode_blocks(net, blocks: Iterable[torch.Tensor], chunk: int = 10, lid: Optional[int] = None,
                       with_lid: bool = False) -> Iterator[Tuple[torch.Tensor, Optional[torch.Tensor], int]]:
    """decode.iter_encode over normalised features that arrive in BLOCKS: the same chunks (h (S_c, H), LID
    log-posteriors or None) as iter_encode over the joined features, plus the feature frames read so far. The
    causal stacking runs chunk by chunk on the chunk's frames and the history it looks back at, so memory holds a
    block, not the whole input's stacked (8x wider) features."""
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1 frame, got {chunk}")
    n, stride = net.stack_n, net.stride
    back = -(-(n - stride) // stride)          # stacked frames whose history reaches before a chunk's first
    buf, buf0, fed, j0 = None, 0, 0, 0         # features from frame buf0 on; frames read; next stacked frame
    state = lid_state = None
    lid_t = None if lid is None else torch.tensor([lid], device=net.device)

    def encode(j1: int, final: bool):
        nonlocal state, lid_state, buf, buf0
        lo = stride * max(0, j0 - back)
        window = buf[lo - buf0:] if final else buf[lo - buf0:stride * j1 - buf0]
        with cpu_kernels():
            x, _ = net.stack(window[None], torch.tensor([len(window)], device=window.device))
            k0 = j0 - lo // stride
            xc = x[:, k0:k0 + j1 - j0]
            h, state = net.encode(xc, torch.tensor([xc.shape[1]], device=xc.device), lid_t, state)
            lp = None
            if with_lid:
                lp, lid_state = net.lid_log_posteriors(h, lid_state)
        return h[0], None if lp is None else lp[0]

    for block in blocks:
        buf = block if buf is None else torch.cat([buf, block])
        fed += len(block)
        while stride * (j0 + chunk) <= fed:    # a whole chunk and everything its stacking reads are in
            h, lp = encode(j0 + chunk, final=False)
            j0 += chunk
            keep = stride * max(0, j0 - back)
            buf, buf0 = buf[keep - buf0:], keep
            yield h, lp, fed
    if buf is None:
        raise ValueError("no features (zero-length audio)")
    total = -(-fed // stride)
    while j0 < total:                          # the rest: the last, partial 30 ms block repeats the final frame
        j1 = min(j0 + chunk, total)
        h, lp = encode(j1, final=True)
        j0 = j1
        yield h, lp, fed


# ============================================================================ a user's audio: Speech2Text

@dataclass
class Hypothesis:
    """One hypothesis of `Speech2Text.__call__` (an n-best list is best first)."""
    text: str                  # words (the B_-grapheme units joined back)
    language: Optional[str]    # language code; None: a vanilla hypothesis whose script is empty or ambiguous
    score: float               # log-probability of the unit sequence in the beam search (higher is better)
    units: List[str]


@dataclass
class Partial:
    """One step of `Speech2Text.stream`: the best hypothesis so far, after `seconds` of audio."""
    text: str
    language: Optional[str]    # LID-free: the language leading now (highest average LID posterior, decoders on)
    seconds: float             # audio consumed so far
    final: bool                # True once: the whole input is decoded (text = the call's 1-best)
    running: List[str] = field(default_factory=list)  # languages whose decoders are still on (LID head)
    lid_posteriors: Dict[str, float] = field(default_factory=dict)  # average frame LID posterior so far


class Speech2Text:
    """Speech recognition from raw audio with a packed (or exp dir) multilingual RNN-T of egs/indic/asr1.

        s2t = Speech2Text.from_pretrained("exp/multisoftmax_lid/packed/model.tar.gz")
        s2t("utt.wav")[0].text, .language       # LID-free: the language comes from the model (paper Section 4.2)
        s2t((wave, 44100), language="hi")        # the language known: its decoder only
        for p in s2t.stream("utt.wav"): print(p.language, p.text)   # streaming, early switch-off (Section 6.3)

    The front end is the recipe's stage 2 (conf/fbank.conf, packed) and the normalisation its training statistics;
    the search is stage 6's (beam, chunk, max_sym_per_frame from the card). LID-free decoding needs a model that
    can tell the language: multisoftmax_lid (LID head), vanilla (script of its output), or a monolingual / finetuned
    model (its one language); the others need `language=`."""

    def __init__(self, model, feat_conf, card: Optional[dict] = None, decoding: Optional[dict] = None,
                 lang_lists: Optional[Dict[str, List[str]]] = None):
        """MODEL a TransducerModel, FEAT_CONF the recipe's FeatConfig, LANG_LISTS every language's unit list
        (config.yaml's model_conf.token_lists: vanilla's LID-free decoding reads the language from them)."""
        self.model, self.net, self.feat_conf = model.eval(), model.net, feat_conf
        self.lang_lists = {lang: list((lang_lists or self.net.token_lists)[lang]) for lang in self.net.langs
                           if lang in (lang_lists or self.net.token_lists)}
        if self.net.system == "vanilla" and len(self.lang_lists) != len(self.net.langs):
            raise ValueError("a vanilla model needs every language's unit list (lang_lists) to tell the language")
        self.card = dict(card or {})
        self.decoding = dict(decoding or DEFAULT_DECODING)
        self.system = self.card.get("system", self.net.system)
        # mono / finetuned systems decode one language: the one they were trained (or finetuned) on
        self.own_language = self.net.heads_names[0] if self.net.system == "mono" else \
            self.card.get("language") or system_language(self.system, self.net.langs)
        if feature_dims(feat_conf) != model.feat_mean.numel():
            raise ValueError(f"the front end gives {feature_dims(feat_conf)}-dim features, the model reads "
                             f"{model.feat_mean.numel()} (feats_conf is not the recipe's conf/fbank.conf?)")

    @classmethod
    def from_pretrained(cls, path, device="cpu", inference_model: str = "valid.loss.best.pth",
                        **decoding) -> "Speech2Text":
        """PATH: an archive of the recipe's pack stage, an unpacked one, or the recipe's exp/<system> dir (then the
        checkpoint INFERENCE_MODEL and the recipe's conf/fbank.conf). DECODING overrides the card's search setting:
        beam, chunk, max_sym_per_frame, tau, s_th (the switch-off that `stream` uses)."""
        from local_models.common.pack import load_model

        from .espnet_model import load_from_files

        packed = load_model(path, paper=PAPER, exp_resolver=lambda d: exp_files(d, inference_model))
        conf = dict(packed.card["decoding"]) if "decoding" in packed.card else \
            read_decode_conf(packed.files.get("decode_conf"))
        conf = parse_decoding({**conf, **decoding}, f"{path}: decoding setting")
        feat_conf = read_feat_conf(packed.file("feats_conf"))
        device = device_of_name(device)
        model = load_from_files(packed.file("config"), packed.file("model_file"), device)
        lists = lang_unit_lists(packed.file("config").parent, model.net, packed.file("config"))
        # librosa imports its spectral modules (scipy.signal, ...) on first use: seconds, taken here with the load
        # rather than in the first input's time (its progress line, its first partial result)
        compute(np.zeros(feat_conf.sample_rate // 10, np.float32), feat_conf)
        return cls(model, feat_conf, packed.card, conf, lists)

    # ------------------------------------------------------------------ what the model decodes
    @property
    def languages(self) -> List[str]:
        """Language codes this model decodes (a monolingual / finetuned one: its own)."""
        return [self.own_language] if self.own_language else list(self.net.langs)

    @property
    def lid_free(self) -> bool:
        """True if a call without `language` works (LID head, vanilla's script, or a one-language model)."""
        return self.net.has_lid or self.net.system == "vanilla" or self.own_language is not None

    @property
    def device(self) -> torch.device:
        return self.net.device

    def check_language(self, language: Optional[str]) -> Optional[str]:
        if language is None:
            if not self.lid_free:
                raise ValueError(f"this {self.system} model needs the language: language= one of "
                                 f"{', '.join(self.languages)} (without one, use a multisoftmax_lid or vanilla model)")
            return self.own_language
        if language not in self.languages:
            raise ValueError(f"unknown language {language!r}: this {self.system} model decodes "
                             f"{', '.join(self.languages)}")
        return language

    def features(self, audio, sample_rate=None) -> torch.Tensor:
        """Normalised (T, 80) log-mels of AUDIO on the model's device (the recipe's stage 2 + training stats)."""
        x = torch.from_numpy(audio_features(audio, self.feat_conf, sample_rate)).to(self.device)
        return self.model.normalise(x)

    def feature_blocks(self, audio, sample_rate=None) -> Iterator[torch.Tensor]:
        """`features` of AUDIO in blocks: one block for an input up to LONG_S (60 s), so that it decodes exactly as
        the recipe's stage 2 + 6 would; a longer one in BLOCK_S (10 s) blocks, a file read block by block
        (`common.audio.iter_audio_blocks`: the recipes' polyphase resampling, block by block, where the rate is not
        the model's), so that memory stays flat in the input's length."""
        waves = self._long_input_blocks(audio, sample_rate)
        if waves is None:
            yield self.features(audio, sample_rate)
            return
        for feats in block_features(waves, self.feat_conf):
            yield self.model.normalise(torch.from_numpy(feats).to(self.device))

    def _long_input_blocks(self, audio, sample_rate) -> Optional[Iterator[np.ndarray]]:
        """Wave blocks at the model's rate of an input longer than LONG_S with static features, else None."""
        rate = self.feat_conf.sample_rate
        if self.feat_conf.deltas:
            return None
        if isinstance(audio, (str, Path)):
            try:
                if soundfile.info(str(audio)).duration <= LONG_S:
                    return None
            except (RuntimeError, soundfile.LibsndfileError):
                return None  # read_audio names the problem
            return checked_blocks(iter_audio_blocks(audio, rate, BLOCK_S), str(audio), rate)
        if isinstance(audio, tuple) and (len(audio) != 2 or sample_rate is not None):
            return None  # audio_features names the problem
        wave, in_rate = audio if isinstance(audio, tuple) else (audio, sample_rate)
        if not isinstance(in_rate, (int, np.integer)) or in_rate <= 0 or len(wave) <= LONG_S * in_rate:
            return None
        wave, _ = read_audio((wave, in_rate), rate)  # in memory already: resampled whole, then featurised by blocks
        step = int(BLOCK_S * rate)
        return (wave[i:i + step] for i in range(0, len(wave), step))

    # ------------------------------------------------------------------ decoding
    def _session(self, language: Optional[str], switch_off: Tuple[float, float]) -> "_Session":
        return _Session(self, self.check_language(language), switch_off)

    def __call__(self, audio, sample_rate=None, language: Optional[str] = None, nbest: int = 1,
                 switch_off: Optional[Tuple[float, float]] = None) -> List[Hypothesis]:
        """N-best hypotheses of AUDIO (a file path, (array, rate), or an array with SAMPLE_RATE; any rate), best
        first. LANGUAGE None: LID-free (the model tells the language); a code: that language's decoder. SWITCH_OFF
        (tau, s_th): LID-free early switch-off; default every decoder runs to the end (the recipe's Table 4).
        Any length: memory and time per second of input do not grow with it (`feature_blocks`, decode.Prefix)."""
        if nbest < 1:
            raise ValueError(f"nbest must be >= 1, got {nbest}")
        session = self._session(language, switch_off or (INF, INF))
        for h, lp, _ in iter_encode_blocks(self.net, self.feature_blocks(audio, sample_rate), self.decoding["chunk"],
                                           session.onehot, session.with_lid):
            session.step(h, lp)
        return session.final(nbest)

    def stream(self, audio, sample_rate=None, language: Optional[str] = None,
               switch_off: Optional[Tuple[float, float]] = None) -> Iterator[Partial]:
        """Partial results chunk by chunk (every `chunk` 30 ms encoder frames) as the streaming encoder and search
        advance, the last with final=True. LID-free with an LID head, decoders are switched off early with the
        card's (tau, s_th) (paper Section 6.3) unless SWITCH_OFF overrides it. The features are the recipe's
        (STFT frames of the whole input up to 60 s, as stage 2; of 10 s blocks beyond); the encoder and search
        never look ahead. A partial result costs O(units new since the last), not O(units so far)."""
        session = self._session(language, switch_off or (self.decoding["tau"], self.decoding["s_th"]))
        frames, fed, seconds_per_frame = 0, 0, self.net.stride * self.feat_conf.hop_ms / 1000
        for h, lp, fed in iter_encode_blocks(self.net, self.feature_blocks(audio, sample_rate), self.decoding["chunk"],
                                             session.onehot, session.with_lid):
            session.step(h, lp)
            frames += len(h)
            yield session.partial(min(frames * seconds_per_frame, fed * self.feat_conf.hop_ms / 1000), final=False)
        duration = fed * self.feat_conf.hop_ms / 1000
        best = session.final(1)[0]
        last = session.partial(duration, final=True)
        yield Partial(best.text, best.language, duration, True, last.running, last.lid_posteriors)


class _Session:
    """One input's search: a language's decoder (known, or a one-language model), every language's decoder with
    the LID head choosing (LID-free), or vanilla's union decoder with the language read from the script."""

    def __init__(self, s2t: Speech2Text, language: Optional[str], switch_off: Tuple[float, float]):
        net, d = s2t.net, s2t.decoding
        self.net, self.language = net, language
        self.with_lid = language is None and net.has_lid
        self.onehot = net.langs.index(language) if net.system == "onehot" else None
        if self.with_lid:
            self.decoder = LidFreeDecoder(net, d["beam"], d["max_sym_per_frame"], *switch_off)
            self.head = None
        else:
            self.head = net.heads_names[0] if language is None else net.head_of(language)
            self.decoder = StreamingBeamSearch(net, self.head, d["beam"], d["max_sym_per_frame"])
        self.by_script = s2t.lang_lists if language is None and net.system == "vanilla" else None
        self._texts = {head: _BestText(net.token_lists[head], self.by_script) for head in net.heads_names}

    def step(self, h: torch.Tensor, lid_log_post: Optional[torch.Tensor]) -> None:
        if self.with_lid:
            self.decoder.step(h, lid_log_post)
        else:
            self.decoder.step(h)

    def _hyp(self, head: str, units: List[int], score: float, lang: Optional[str]) -> Hypothesis:
        names = [self.net.token_lists[head][i] for i in units]
        if self.by_script is not None:
            lang = lang_by_script(names, self.by_script)
        return Hypothesis(units_to_text(names), lang, float(score), names)

    def final(self, nbest: int) -> List[Hypothesis]:
        if self.with_lid:
            res = self.decoder.result()
            return [self._hyp(res.lang, u, s, res.lang) for u, s in res.nbest[res.lang][:nbest]]
        return [self._hyp(self.head, u, s, self.language) for u, s in self.decoder.final()[:nbest]]

    def partial(self, seconds: float, final: bool) -> Partial:
        """The best hypothesis so far; its text is updated from the last partial's (_BestText)."""
        if self.with_lid:
            lang, avg, running = self.decoder.leader() if final else self.decoder.running_leader()
            text = self._texts[lang](self.decoder.searches[lang].best_prefix())
            return Partial(text, lang, seconds, final, [l for l, on in zip(self.net.langs, running) if on],
                           {l: round(float(p), 4) for l, p in zip(self.net.langs, avg)})
        text = self._texts[self.head]
        words = text(self.decoder.best_prefix())
        # vanilla: the script of the units so far
        return Partial(words, text.language() if self.by_script is not None else self.language, seconds, final)


def device_of_name(device) -> torch.device:
    """A torch device from 'cpu' / 'cuda' / 'cuda:1'; a clear error when the GPU is not there."""
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"--device {device}: no CUDA GPU visible to torch")
    return dev


def result_lines(name: str, hyps: List[Hypothesis], numbered: bool = False) -> List[str]:
    """speech-to-text's output of one input: `<name>\\t<language>\\t<text>`, or with an n-best list numbered lines
    `<name>\\t<rank>\\t<language>\\t<score>\\t<text>` (score: the search's log-probability)."""
    if not numbered:
        return [f"{name}\t{hyps[0].language or NO_LANG}\t{hyps[0].text}\n"]
    return [f"{name}\t{i}\t{h.language or NO_LANG}\t{h.score:.3f}\t{h.text}\n" for i, h in enumerate(hyps, 1)]
