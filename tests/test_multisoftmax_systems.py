"""The multi-softmax recipe's names (local_models/multisoftmax/systems.py): torch-free, one list that every consumer
reads (model.py's architectures, pack.py's descriptions, report.py's labels and rows, multisoftmax_score's defaults,
stages.sh's expand_systems / system_conf), and the CLI stages.sh asks."""
import subprocess
import sys
from pathlib import Path

import pytest

from local_models.multisoftmax import systems as S

ROOT = Path(__file__).resolve().parents[1]
STAGES = ROOT / "local_models" / "multisoftmax" / "stages.sh"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "local_models.multisoftmax.systems", *args], cwd=ROOT,
                          capture_output=True, text=True)


def test_import_is_torch_free():
    code = ("import sys; import local_models.multisoftmax.systems; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'espnet', 'espnet2', 'numpy')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_consumers_use_the_same_names():
    from local_models.bin import multisoftmax_score
    from local_models.multisoftmax import model, pack, report

    assert model.SYSTEMS == S.MODELS
    assert {c["system"] for c in S.SYSTEMS.values()} == set(S.MODELS)
    assert set(S.DESCRIPTIONS) == set(S.SYSTEMS) and pack.DESCRIPTIONS is S.DESCRIPTIONS
    assert pack.system_language is S.system_language and pack.base_system is S.base_system
    rows = set(S.SYSTEMS) | set(S.PAPER_SYSTEMS) | set(S.TABLE2_ROWS) | set(S.TABLE3_ROWS) | set(S.UNSEEN_ROWS)
    assert rows - {"multisoftmax_lid_lidfree"} <= set(S.LABELS)  # every row has its label
    assert report.LABELS is S.LABELS and report.PAPER_SYSTEMS is S.PAPER_SYSTEMS
    assert set(report.PAPER_T2) <= set(S.TABLE2_ROWS) and set(report.PAPER_T3) == set(S.TABLE3_ROWS)
    assert list(S.PAPER_SIZE_SYSTEMS) == list(S.SYSTEMS) and set(report.PAPER_T6) >= set(S.PAPER_SIZE_SYSTEMS)
    for name, conf in S.PAPER_SIZE_SYSTEMS.items():  # report counts them at the paper's size: a buildable system
        assert conf["system"] in S.MODELS and (conf["system"] == "mono") == ("lang" in conf), name
    args = multisoftmax_score.get_parser().parse_args([])
    assert args.systems.split() == S.expand(S.SYSTEMS, args.langs.split())
    assert all(S.check_seed(f) is None for f in args.finetune.split())
    # stages.sh's default lists are names systems.py knows
    text = STAGES.read_text()
    for var in ("systems", "finetune", "lang_batch_systems"):
        words = text.split(f'\n{var}="', 1)[1].split('"', 1)[0].split()
        for w in words:
            S.check_seed(w) if var == "finetune" else S.check(w)


def test_system_conf_is_the_paper_configs_one():
    from test_paper_configs import INDIC_SYSTEMS  # stages.sh system_conf at run.sh's defaults, as the test trains

    for name, conf in INDIC_SYSTEMS.items():
        got = S.system_conf(name, 0.1, 1, "/h.json")
        assert [c.split("=")[0] if c.startswith("lid_hours_file") else c for c in got] == conf, name
    assert S.system_conf("ft_multisoftmax_ta", 0.1, 1) == ["system=mono", "lang=ta"]  # its language's head only
    assert S.system_conf("ft_onehot_hi", 0.1, 1) == ["system=onehot"]
    assert S.system_conf("ft_multisoftmax_lsp_en", 0.1, 1) == ["system=multisoftmax", "lsp=true"]
    assert S.system_conf("multisoftmax_lid", 0.5, 0) == ["system=multisoftmax", "lid=true", "lid_weight=0.5",
                                                         "lid_rnn_layers=0"]
    for bad in ("mono", "ft_mono_en", "bogus", "ft_bogus_en"):
        with pytest.raises(S.UnknownSystem, match="unknown system"):
            S.system_conf(bad, 0.1, 1)


def test_naming_rules():
    assert S.expand(["mono", "vanilla"], ["en", "hi"]) == ["mono_en", "mono_hi", "vanilla"]
    assert S.finetuned(["onehot", "multisoftmax"], ["en"]) == ["ft_onehot_en", "ft_multisoftmax_en"]
    assert [S.lang_of(n) for n in ("mono_en", "ft_multisoftmax_lsp_gu", "multisoftmax_lid")] == ["en", "gu", ""]
    assert S.seed_of("ft_multisoftmax_lsp_gu") == "multisoftmax_lsp"
    assert S.base_system("ft_multisoftmax_lsp_gu") == "multisoftmax_lsp" and S.base_system("mono_hi") == "mono"
    assert S.system_language("ft_onehot_hi", ["en", "hi"]) == "hi" and S.system_language("vanilla", ["en"]) is None


def test_cli():
    assert cli("--help").returncode == 0
    assert cli("names").stdout.split() == list(S.SYSTEMS)
    assert cli("expand", "--langs", "en hi", "mono", "multisoftmax_lid").stdout.split() == \
        ["mono_en", "mono_hi", "multisoftmax_lid"]
    assert cli("finetuned", "--langs", "en hi", "onehot").stdout.split() == ["ft_onehot_en", "ft_onehot_hi"]
    assert cli("system_conf", "multisoftmax_lsp").stdout.split() == ["--model_conf", "system=multisoftmax",
                                                                     "--model_conf", "lsp=true"]
    assert cli("lang_of", "ft_onehot_hi").stdout == "hi\n" and cli("lang_of", "vanilla").stdout == ""
    ok = cli("check", "--seeds", "onehot multisoftmax", "mono", "mono_en", "ft_multisoftmax_hi", "multisoftmax_lid")
    assert ok.returncode == 0 and ok.stdout == ""
    for args, what in ((["check", "mono_en", "multisoftmx"], "unknown system 'multisoftmx'"),
                       (["check", "--seeds", "mono"], "unknown finetuning seed 'mono'"),
                       (["expand", "--langs", "en", "vanila"], "unknown system 'vanila'"),
                       (["system_conf", "ft_bogus_en"], "unknown system 'ft_bogus_en'")):
        r = cli(*args)
        assert r.returncode == 1 and what in r.stderr and "multisoftmax_lsp" in r.stderr and r.stdout == "", args


def test_stages_sh_functions():
    """stages.sh's expand_systems / finetuned_systems / system_conf / lang_of answer through systems.py."""
    script = f"""set -euo pipefail
        default_ngpu() {{ echo 0; }}; die() {{ echo "DIE $*" >&2; exit 3; }}; option_files=()
        . "{STAGES}"
        langs="en hi"; systems="mono vanilla multisoftmax_lid"; finetune="multisoftmax"
        echo "$(expand_systems)|$(finetuned_systems)|$(lang_of ft_multisoftmax_hi)|$(lang_of vanilla)"
        lid_balance=false; echo "$(system_conf multisoftmax_lid)"
        lid_balance=true; echo "$(system_conf ft_multisoftmax_hi)"
        system_conf bogus
    """
    r = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True,
                       env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    lines = r.stdout.splitlines()
    assert lines[0] == "mono_en mono_hi vanilla multisoftmax_lid|ft_multisoftmax_en ft_multisoftmax_hi|hi|"
    assert lines[1] == ("--model_conf system=multisoftmax --model_conf lid=true --model_conf lid_weight=0.1 "
                        "--model_conf lid_rnn_layers=1")
    assert lines[2] == "--model_conf system=mono --model_conf lang=hi"
    assert r.returncode == 3 and "unknown system 'bogus'" in r.stderr and "DIE system_conf bogus" in r.stderr


def test_finetune_exclusions_and_lid_head_from_systems_py():
    """stages.sh's ft_init_param and decode_system's LID-free test ask systems.py (no system name in the shell)."""
    assert S.init_exclude("multisoftmax", "hi", ["en", "hi", "or"]) == ["net.heads.en", "net.heads.or"]
    assert S.init_exclude("onehot", "hi", ["en", "hi"]) == []
    assert [s for s in S.SYSTEMS if s != "mono" and S.has_lid_head(s)] == ["multisoftmax_lid"]
    script = f"""set -euo pipefail
        default_ngpu() {{ echo 0; }}; die() {{ echo "DIE $*" >&2; exit 3; }}; option_files=()
        . "{STAGES}"
        langs="en hi or"; inference_model=latest.pth
        echo "$(ft_init_param multisoftmax or)|$(ft_init_param onehot hi)"
        echo "$(systems_query lid_head multisoftmax_lid)|$(systems_query lid_head multisoftmax)"
        ft_init_param mono hi
    """
    r = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True,
                       env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    lines = r.stdout.splitlines()
    assert lines[0] == "exp/multisoftmax/latest.pth:::net.heads.en,net.heads.hi|exp/onehot/latest.pth"
    assert lines[1] == "multisoftmax_lid|"
    assert r.returncode == 3 and "unknown finetuning seed 'mono'" in r.stderr
    stages = STAGES.read_text()
    assert '= multisoftmax' not in stages and "net.heads" not in stages
