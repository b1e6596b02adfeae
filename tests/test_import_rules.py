"""The import rules of docs/architecture.md, read from the source (every import, also those inside functions):
- a paper package (local_models/<paper>/) never imports another paper package;
- local_models/common/ and utils/ never reach a paper package (nor bin/, which is the papers' command line);
- a bin/ module never imports another bin/ module (shared logic belongs in a package);
- inside each package (a paper, common/, bin/) the modules import one another without a circle, counting the imports
  inside functions too (a function-level import hides a circle from Python, not from a reader).
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
            mod = from_module(node, rel)
            out.append((node.lineno, mod))
            out += [(node.lineno, f"{mod}.{a.name}") for a in node.names]  # `from local_models import sad`
    return out


def from_module(node: ast.ImportFrom, rel: tuple) -> str:
    """The dotted X of `from X import ...` in the file whose path parts (no suffix) are REL; relative X resolved."""
    if not node.level:
        return node.module or ""
    return ".".join(list(rel[:-node.level]) + ([node.module] if node.module else []))


def module_of(path: Path, root: Path) -> str:
    """'sad.detectors' for local_models/sad/detectors.py, 'salad.frontend' for its salad/frontend/__init__.py."""
    parts = path.relative_to(root / "local_models").with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_graph(root: Path, package: str) -> dict:
    """{module: {module it imports}} inside local_models/PACKAGE, for every import (also inside functions).
    `import a.b.c` goes to a.b.c; `from pkg import name` to the submodule pkg.name when there is one, else to pkg
    (a package's __init__, or the module `from pkg.module import name` names). A module importing itself is no
    edge; neither is the parent package Python initialises on the way (not an import the code chose)."""
    files = {module_of(p, root): p for p in sorted((root / "local_models" / package).rglob("*.py"))}

    def target(dotted: str):  # the longest prefix of DOTTED that is a module of the package
        parts = dotted.split(".")
        if parts[0] != "local_models":
            return None
        parts = parts[1:]
        while parts and ".".join(parts) not in files:
            parts.pop()
        return ".".join(parts) or None

    graph = {}
    for mod, path in files.items():
        rel = path.relative_to(root).with_suffix("").parts
        graph[mod] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [f"{from_module(node, rel)}.{a.name}" for a in node.names]
            else:
                continue
            graph[mod].update(t for t in map(target, names) if t and t != mod)
    return graph


def reaches(graph: dict, start: str) -> set:
    """The modules START imports, directly or not."""
    seen, todo = set(), [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def shortest_cycle(graph: dict, start: str) -> list:
    """[START, ..., START]: the shortest import path from START back to itself (breadth first, in name order)."""
    parent, queue = {start: None}, [start]
    while queue:
        mod = queue.pop(0)
        for nxt in sorted(graph.get(mod, ())):
            if nxt == start:
                path = [mod]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return path[::-1] + [start]
            if nxt not in parent:
                parent[nxt] = mod
                queue.append(nxt)
    raise ValueError(f"{start} is on no circle")


def cycles(root: Path) -> list:
    """One circle ('sad.detectors -> sad.neural -> sad.detectors') per group of modules that import one another,
    for each package under ROOT/local_models: the papers, common/ and bin/."""
    packages = papers(root) | {p for p in SHARED if (root / "local_models" / p / "__init__.py").exists()}
    found = []
    for package in sorted(packages):
        graph, reported = package_graph(root, package), set()
        for mod in sorted(graph):
            if mod in reported or mod not in reaches(graph, mod):
                continue
            found.append(" -> ".join(shortest_cycle(graph, mod)))
            reported |= {m for m in reaches(graph, mod) if mod in reaches(graph, m)}  # the rest of its group
    return found


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
    ("local_models/bin/sad_score.py", "from local_models.bin.jdit_synth import x\n", "bin/ module imports bin/"),
    ("local_models/bin/sad_score.py", "from local_models.bin import jdit_synth\n", "bin/ module imports bin/"),
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


def test_no_package_imports_itself_in_a_circle():
    graph = package_graph(ROOT, "sad")
    assert {"sad.detectors", "sad.nets"} <= graph["sad.neural"]  # nets: imported inside a function
    assert cycles(ROOT) == []


CLEAN_TREE = {
    "local_models/sad/__init__.py": "from .a import A\n",
    "local_models/sad/a.py": "from local_models.sad import b  # a submodule: no edge to sad/__init__\n"
                             "from . import c\nA = 1\n",
    "local_models/sad/b.py": "def f():\n    from .c import C\n",
    "local_models/sad/c.py": "import local_models.common.audio\nC = 2\n",
    "local_models/salad/frontend/__init__.py": "from .labels import L\n",
    "local_models/salad/frontend/labels.py": "from .phones import P\nL = 0\n",
    "local_models/salad/frontend/phones.py": "P = 0\n",
    "local_models/common/audio.py": "def load():\n    from .datadir import read\n",
    "local_models/common/datadir.py": "read = None\n",
    "local_models/bin/sad_tool.py": "from local_models.sad import a\nfrom local_models.common.audio import load\n",
}


@pytest.mark.parametrize("rel,text,expect", [
    ("local_models/sad/c.py", "def f():\n    from .b import f\n", "sad.b -> sad.c -> sad.b"),
    ("local_models/sad/c.py", "from local_models.sad import A\n", "sad -> sad.a -> sad.c -> sad"),  # __init__'s A
    ("local_models/sad/c.py", "def f():\n    import local_models.sad.a as a\n", "sad.a -> sad.c -> sad.a"),
    ("local_models/salad/frontend/phones.py", "from local_models.salad.frontend import L\n",
     "salad.frontend -> salad.frontend.labels -> salad.frontend.phones -> salad.frontend"),
    ("local_models/salad/frontend/phones.py", "from ..frontend.labels import L\n",
     "salad.frontend.labels -> salad.frontend.phones -> salad.frontend.labels"),
    ("local_models/common/datadir.py", "from local_models.common.audio import load\n",
     "common.audio -> common.datadir -> common.audio"),
])
def test_a_planted_import_circle_is_caught(tmp_path, rel, text, expect):
    for pkg in ("common", "bin", "sad", "vqvae", "salad", "jdit", "multisoftmax"):
        plant(tmp_path, f"local_models/{pkg}/__init__.py", "")
    plant(tmp_path, "local_models/__init__.py", "")
    for path, code in CLEAN_TREE.items():
        plant(tmp_path, path, code)
    assert package_graph(tmp_path, "sad") == {"sad": {"sad.a"}, "sad.a": {"sad.b", "sad.c"}, "sad.b": {"sad.c"},
                                              "sad.c": set()}
    assert cycles(tmp_path) == []  # the clean tree passes
    plant(tmp_path, rel, text)
    assert cycles(tmp_path) == [expect]
