"""The names of the multi-softmax recipe (egs/indic/asr1, paper 001, Joshi et al., Interspeech 2021), in one
torch-free module (the standard library only): the systems the recipe trains, the model options behind each, their
labels and descriptions, the paper's table rows, and the naming rules of the expanded names (mono_<lang>,
ft_<seed>_<lang>). model.py, pack.py, report.py and stages.sh read them from here; stages.sh through the CLI:

    python -m local_models.multisoftmax.systems expand --langs "en hi" mono vanilla    # mono_en mono_hi vanilla
    python -m local_models.multisoftmax.systems system_conf multisoftmax_lsp           # --model_conf system=... ...
    python -m local_models.multisoftmax.systems check mono_en ft_onehot_hi             # exit 1 on an unknown name
    python -m local_models.multisoftmax.systems init_exclude --langs "en hi" multisoftmax hi   # net.heads.en
    python -m local_models.multisoftmax.systems lid_head multisoftmax_lid              # multisoftmax_lid

Adding a system: an entry in SYSTEMS, LABELS and DESCRIPTIONS (and, if it is one of the paper's, its table rows).
"""
import argparse
import re
import sys
from typing import Dict, Iterable, List, Optional, Sequence

from local_models.common.names_cli import answer

# MultilingualTransducer's architectures (model_conf system=)
MODELS = ("mono", "vanilla", "onehot", "multisoftmax")

# system -> the model_conf options that make it (besides its size); mono is one system per language (mono_<lang>,
# lang=<lang> added), multisoftmax_lid also takes the recipe's LID options (system_conf: --lid_weight,
# --lid_rnn_layers, --lid_balance's hours file)
SYSTEMS: Dict[str, dict] = {
    "mono": dict(system="mono"),
    "vanilla": dict(system="vanilla"),
    "onehot": dict(system="onehot"),
    "multisoftmax": dict(system="multisoftmax"),
    "multisoftmax_lsp": dict(system="multisoftmax", lsp=True),
    "multisoftmax_lid": dict(system="multisoftmax", lid=True),
}
SEED_HEAD_ONLY = ("multisoftmax",)  # finetuning seeds that keep only their language's head: a mono model results
HEAD_PARAMS = "net.heads."  # the checkpoint's prefix of one language's head (model.py: self.heads[<lang>])

# model cards (pack.py): what each system is
DESCRIPTIONS = {
    "mono": "monolingual RNN-T of one language (paper Table 2 baseline)",
    "vanilla": "multilingual RNN-T, one softmax over the union of every language's units, no language input "
               "(decodes without knowing the language; language read from the output's script)",
    "onehot": "multilingual RNN-T, union softmax, the language as a one-hot encoder input",
    "multisoftmax": "multi-softmax RNN-T: shared encoder and prediction network, one output head per language "
                    "(paper Section 4)",
    "multisoftmax_lsp": "multi-softmax RNN-T with a language-specific prediction network per language (Section 4.1)",
    "multisoftmax_lid": "multi-softmax RNN-T with an LID head (Section 4.2): decodes without knowing the language, "
                        "every language's decoder over one encoder pass, chosen by the LID posterior; streaming with "
                        "early switch-off of decoders (Section 6.3)",
}

# RESULTS.md: the label of every row (systems, finetunings ft_<seed>, the LID model's decodings)
LABELS = {"mono": "Monolingual", "vanilla": "Multilingual Vanilla", "onehot": "Multilingual Onehot",
          "multisoftmax": "Multi-softmax", "multisoftmax_lsp": "Multi-softmax LSP",
          "multisoftmax_lid": "Multi-softmax LID", "multisoftmax_lid_oracle": "Multi-softmax LID Oracle",
          "ft_onehot": "Onehot finetuning", "ft_multisoftmax": "Multi-softmax finetuning"}

# the paper's systems (Tables 2 and 3), in its order: RESULTS.md says which a run trained
PAPER_SYSTEMS = ("mono", "vanilla", "onehot", "multisoftmax", "multisoftmax_lsp", "multisoftmax_lid", "ft_onehot",
                 "ft_multisoftmax")
TABLE2_ROWS = ("mono", "vanilla", "onehot", "multisoftmax", "multisoftmax_lsp", "multisoftmax_lid")  # language known
TABLE3_ROWS = ("mono", "ft_onehot", "ft_multisoftmax")  # monolingual models seeded with multilingual ones
# the rows of a test set that is not the recipe's own (generalisation check)
UNSEEN_ROWS = ("mono", "vanilla", "onehot", "multisoftmax", "multisoftmax_lsp", "multisoftmax_lid",
               "multisoftmax_lid_lidfree", "multisoftmax_lid_oracle", "ft_onehot", "ft_multisoftmax")

# Table 6 at the paper's size: each system at run.sh's defaults ("Mono." of the paper, which does not say which
# language: English; the LID branch: run.sh --lid_rnn_layers 1)
PAPER_SIZE_SYSTEMS = {name: {**conf, **({"lang": "en"} if name == "mono" else {}),
                             **({"lid_rnn_layers": 1} if conf.get("lid") else {})} for name, conf in SYSTEMS.items()}


class UnknownSystem(ValueError):
    pass


def known() -> str:
    return ", ".join(SYSTEMS)


def expand(systems: Sequence[str], langs: Sequence[str]) -> List[str]:
    """SYSTEMS with mono -> mono_<lang> for every language of LANGS."""
    return [x for s in systems for x in ([f"mono_{l}" for l in langs] if s == "mono" else [s])]


def finetuned(seeds: Sequence[str], langs: Sequence[str]) -> List[str]:
    """ft_<seed>_<lang> for every seed of SEEDS and every language of LANGS."""
    return [f"ft_{f}_{l}" for f in seeds for l in langs]


def seed_of(name: str) -> str:
    """ft_<seed>_<lang> -> <seed>."""
    s = name[len("ft_"):] if name.startswith("ft_") else name
    return s.rsplit("_", 1)[0] if "_" in s else s


def lang_of(name: str) -> str:
    """The one language of mono_<lang> / ft_<seed>_<lang>; "" for a multilingual system (every language)."""
    return name.rsplit("_", 1)[-1] if name.startswith(("mono_", "ft_")) else ""


def system_language(system: str, langs: Sequence[str]) -> Optional[str]:
    """The one language of a monolingual (mono_<lang>) or finetuned (ft_<seed>_<lang>) system, else None."""
    m = re.fullmatch(r"(?:mono|ft_.+)_([^_]+)", system)
    return m.group(1) if m and m.group(1) in langs else None


def base_system(system: str) -> str:
    """mono_<lang> -> mono, ft_<seed>_<lang> -> <seed>, multisoftmax_lid -> multisoftmax_lid."""
    if system.startswith("mono_"):
        return "mono"
    m = re.fullmatch(r"ft_(.+)_[^_]+", system)
    return m.group(1) if m else system


def init_exclude(seed: str, lang: str, langs: Sequence[str]) -> List[str]:
    """Checkpoint prefixes a finetuning of SEED on LANG leaves out: the other languages' heads of a SEED_HEAD_ONLY
    seed ("discarding the remaining parameters", paper Section 4.1); none for any other seed."""
    check_seed(seed)
    return [f"{HEAD_PARAMS}{l}" for l in langs if l != lang] if seed in SEED_HEAD_ONLY else []


def has_lid_head(name: str) -> bool:
    """Whether system NAME decodes without the language by its own LID head (LID-free decoding, stage 6)."""
    check(name)
    return bool(SYSTEMS.get(name, {}).get("lid"))


def check(name: str) -> None:
    """NAME is a system of SYSTEMS (mono as mono_<lang>; also bare), or a finetuning ft_<seed>_<lang> of one."""
    if name.startswith("ft_"):
        seed = seed_of(name)
        if seed in SYSTEMS and seed != "mono" and "_" in name[len("ft_"):]:
            return
    elif name in SYSTEMS or (name.startswith("mono_") and len(name) > len("mono_")):
        return
    raise UnknownSystem(f"unknown system '{name}' ({known()})")


def check_seed(seed: str) -> None:
    """SEED can be finetuned into monolingual models (ft_<seed>_<lang>): a multilingual system."""
    if seed not in SYSTEMS or seed == "mono":
        raise UnknownSystem(f"unknown finetuning seed '{seed}' ({', '.join(s for s in SYSTEMS if s != 'mono')})")


def system_conf(name: str, lid_weight: float, lid_rnn_layers: int, lid_hours_file: Optional[str] = None) -> List[str]:
    """The model_conf options (key=value) of system NAME, as stage 4 trains it: a finetuning ft_<seed>_<lang> is
    its seed's (a SEED_HEAD_ONLY seed keeps only its language's head: a mono model); multisoftmax_lid adds the LID
    options (LID_HOURS_FILE: the LID loss balanced over languages' hours)."""
    if name.startswith("ft_"):
        check(name)
        seed = seed_of(name)
        return system_conf(f"mono_{lang_of(name)}" if seed in SEED_HEAD_ONLY else seed, lid_weight, lid_rnn_layers,
                           lid_hours_file)
    if name.startswith("mono_") and len(name) > len("mono_"):
        conf = dict(SYSTEMS["mono"], lang=name[len("mono_"):])
    elif name in SYSTEMS and name != "mono":
        conf = dict(SYSTEMS[name])
    else:
        raise UnknownSystem(f"unknown system '{name}' ({known()})")
    if conf.get("lid"):
        conf.update(lid_weight=lid_weight, lid_rnn_layers=lid_rnn_layers)
        if lid_hours_file:
            conf["lid_hours_file"] = lid_hours_file
    return [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in conf.items()]


def get_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m local_models.multisoftmax.systems", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="query", required=True)
    sub.add_parser("names", help="the systems (mono stands for mono_<lang>)")
    q = sub.add_parser("expand", help="the systems with mono -> mono_<lang> for every language")
    q.add_argument("--langs", required=True, help="language codes, e.g. 'en hi ta gu'")
    q.add_argument("systems", nargs="*")
    q = sub.add_parser("finetuned", help="ft_<seed>_<lang> for every seed and language")
    q.add_argument("--langs", required=True)
    q.add_argument("seeds", nargs="*")
    q = sub.add_parser("check", help="exit 1 with a message on the first unknown name")
    q.add_argument("--seeds", default="", help="finetuning seeds (ft_<seed>_<lang>) to check too")
    q.add_argument("names", nargs="*")
    q = sub.add_parser("lang_of", help="the one language of mono_<lang> / ft_<seed>_<lang> (else nothing)")
    q.add_argument("name")
    q = sub.add_parser("init_exclude", help="a finetuning's checkpoint prefixes left out, comma-separated "
                                            "(the other languages' heads of a head-only seed; else nothing)")
    q.add_argument("--langs", required=True)
    q.add_argument("seed")
    q.add_argument("lang")
    q = sub.add_parser("lid_head", help="print the name if the system decodes LID-free by its LID head, else nothing")
    q.add_argument("name")
    q = sub.add_parser("system_conf", help="stage 4's --model_conf options of a system (or a finetuning)")
    q.add_argument("name")
    q.add_argument("--lid_weight", default="1.0", help="multisoftmax_lid: LID loss weight")
    q.add_argument("--lid_rnn_layers", default="1", help="multisoftmax_lid: LSTM layers of the LID branch")
    q.add_argument("--lid_hours_file", default="", help="multisoftmax_lid: hours.json (LID loss balanced)")
    return p


def _query(args) -> Iterable[str]:
    """The answer to the parsed query ARGS (main's words)."""
    if args.query == "names":
        out = list(SYSTEMS)
    elif args.query == "expand":
        for s in args.systems:
            check(s)
        out = expand(args.systems, args.langs.split())
    elif args.query == "finetuned":
        for s in args.seeds:
            check_seed(s)
        out = finetuned(args.seeds, args.langs.split())
    elif args.query == "check":
        for s in args.names:
            check(s)
        for s in args.seeds.split():
            check_seed(s)
        out = []
    elif args.query == "init_exclude":
        prefixes = init_exclude(args.seed, args.lang, args.langs.split())
        out = [",".join(prefixes)] if prefixes else []
    elif args.query == "lid_head":
        out = [args.name] if has_lid_head(args.name) else []
    elif args.query == "lang_of":
        out = [lang_of(args.name)] if lang_of(args.name) else []
    else:
        out = [w for kv in system_conf(args.name, args.lid_weight, args.lid_rnn_layers, args.lid_hours_file)
               for w in ("--model_conf", kv)]
    return out


def main(argv: Optional[list] = None) -> int:
    args = get_parser().parse_args(argv)
    return answer("local_models.multisoftmax.systems", lambda: _query(args), errors=(UnknownSystem,))


if __name__ == "__main__":
    sys.exit(main())
