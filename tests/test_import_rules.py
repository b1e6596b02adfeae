"""The import rules of docs/architecture.md, read from the source (every import, also those inside functions):
- a paper package (local_models/<paper>/) never imports another paper package;
- local_models/common/ and utils/ never reach a paper package (nor bin/, which is the papers' command line);
- a bin/ module never imports another bin/ module (shared logic belongs in a package).
"""
import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = {"common", "bin"}  # local_models sub-packages that are not a paper


def papers(root: Path) -> set:
    return {p.name for p in (root / "local_models").iterdir()
            if p.is_dir() and (p / "__init__.py").exists() and p.name not in SHARED}


def owner(module: str, paper_set: set):
    """The local_models sub-package MODULE belongs to ('sad', 'common', 'bin', ...), or None."""
    parts = module.split(".")
    if len(parts) >= 2 and parts[0] == "local_models" and (parts[1] in paper_set or parts[1] in SHARED):
        return parts[1]
    return None


def violations(root: Path) -> list:
    """Every broken rule under ROOT as 'file:line: message'."""
    paper_set = papers(root)
    found = []
    for path in sorted((root / "local_models").rglob("*.py")):
        rel = path.relative_to(root)
        here = rel.parts[1] if len(rel.parts) > 2 else None
        for line, mod in imported_modules(path, root):
            there = owner(mod, paper_set)
            if here == "bin" == there and mod.count(".") >= 2 and mod.split(".")[2] != path.stem:
                found.append(f"{rel}:{line}: bin/ module imports bin/ module '{mod.split('.')[2]}'")
            elif there is None or there == here:
                continue
            elif here in paper_set and there in paper_set:
                found.append(f"{rel}:{line}: paper package '{here}' imports paper package '{there}'")
            elif here == "common":
                found.append(f"{rel}:{line}: common/ imports '{there}'")
            elif here in paper_set and there == "bin":
                found.append(f"{rel}:{line}: paper package '{here}' imports the command line (bin/)")
    for path in sorted((root / "utils").iterdir()) if (root / "utils").is_dir() else []:
        if path.is_file():
            found += utils_violations(path, root, paper_set)
    return list(dict.fromkeys(found))  # `from a.b import c` is one import, not two


def utils_violations(path: Path, root: Path, paper_set: set) -> list:
    """utils/ scripts may run data-dir tools of bin/ (through pyrun), never a tool that reaches a paper package."""
    found = []
    for i, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        direct = [p for p in sorted(paper_set) if f"local_models.{p}" in line or f"local_models/{p}" in line]
        tools = re.findall(r"(?:pyrun\"?\s+|local_models\.bin\.)(\w+)", line)
        for tool in tools:
            cli = root / "local_models" / "bin" / f"{tool}.py"
            if cli.is_file():
                direct += [owner(m, paper_set) for _, m in imported_modules(cli, root)
                           if owner(m, paper_set) in paper_set]
        found += [f"{path.relative_to(root)}:{i}: utils/ reaches paper package '{p}'" for p in dict.fromkeys(direct)]
    return found


def imported_modules(path: Path, root: Path) -> list:
    """(line, dotted module) of every import in PATH, also inside functions; relative imports resolved."""
    rel = path.relative_to(root).with_suffix("").parts  # a package's __init__ counts as a module in that package
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            mod = ".".join(list(rel[:-node.level]) + ([node.module] if node.module else [])) if node.level \
                else (node.module or "")
            out.append((node.lineno, mod))
            out += [(node.lineno, f"{mod}.{a.name}") for a in node.names]  # `from local_models import sad`
    return out


def test_the_repository_keeps_the_import_rules():
    assert len(papers(ROOT)) == 5, papers(ROOT)
    assert violations(ROOT) == []


def plant(root: Path, rel: str, text: str):
    f = root / rel
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)


@pytest.mark.parametrize("rel,text,expect", [
    ("local_models/sad/report.py", "from local_models.vqvae.abx import dtw_distance\n", "paper package 'sad' imports"),
    ("local_models/sad/report.py", "def f():\n    from local_models import vqvae\n", "paper package 'sad' imports"),
    ("local_models/common/mcd.py", "import local_models.salad.model\n", "common/ imports 'salad'"),
    ("local_models/common/mcd.py", "from ..jdit import model\n", "common/ imports 'jdit'"),
    ("local_models/bin/sad_score.py", "from local_models.bin.tts_synth import x\n", "bin/ module imports bin/"),
    ("local_models/bin/sad_score.py", "from local_models.bin import tts_synth\n", "bin/ module imports bin/"),
    ("local_models/vqvae/report.py", "from local_models.bin.vqvae_score import main\n", "imports the command line"),
    ("utils/sad_decode", '#!/bin/sh\nexec "$(dirname "$0")/pyrun" sad_decode "$@"\n', "utils/ reaches paper package 'sad'"),
    ("utils/sad_score", "#!/bin/sh\npython -m local_models.sad.report\n", "utils/ reaches paper package 'sad'"),
])
def test_a_planted_violation_is_caught(tmp_path, rel, text, expect):
    for pkg in ("common", "bin", "sad", "vqvae", "salad", "jdit", "multisoftmax"):
        plant(tmp_path, f"local_models/{pkg}/__init__.py", "")
    plant(tmp_path, "local_models/__init__.py", "")
    plant(tmp_path, "local_models/sad/ok.py", "from local_models.common import audio\nfrom . import ok\n")
    plant(tmp_path, "local_models/bin/sad_decode.py", "from local_models.sad import detectors\n")
    plant(tmp_path, "local_models/bin/validate_data_dir.py", "from local_models.common import validate\n")
    plant(tmp_path, "utils/validate_data_dir", '#!/bin/sh\nexec "$(dirname "$0")/pyrun" validate_data_dir "$@"\n')
    assert violations(tmp_path) == []  # the clean tree passes
    plant(tmp_path, rel, text)
    found = violations(tmp_path)
    assert len(found) == 1 and expect in found[0] and rel in found[0], found
