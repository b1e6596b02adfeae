"""README's per-recipe "measured" cells, generated from each recipe's RESULTS.md headline section.

A recipe's scoring stage puts its measured claims in exp/results.json ("headline") and renders them in RESULTS.md
under HEADLINE_TITLE, in the same run. README's table holds one marked cell per recipe,
`<!-- measured egs/<corpus>/<task> -->...<!-- /measured -->`; `make readme` (local_models/bin/update_readme.py)
rewrites each from the committed RESULTS.md, never by hand. The committed RESULTS.md is the source rather than
exp/results.json: exp/ is not committed, and a quick `make demo` run rewrites it at another size.
"""
import re
from pathlib import Path
from typing import List, Optional, Tuple

from .datadir import atomic_open
from .results import HEADLINE_TITLE

MARK = re.compile(r"<!-- measured (?P<recipe>egs/[^ ]+) -->(?P<body>.*?)<!-- /measured -->")
COMMIT = re.compile(r"commit `([^`]+)`")


def headline(results_md: Path) -> Optional[Tuple[str, List[str]]]:
    """(commit, claims) of RESULTS_MD's headline section, or None when it has none (written before the
    headline existed)."""
    if not results_md.is_file():
        return None
    lines = results_md.read_text().splitlines()
    if HEADLINE_TITLE not in lines:
        return None
    claims = []
    for line in lines[lines.index(HEADLINE_TITLE) + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("- "):
            claims.append(line[2:])
    commit = next((m.group(1) for m in map(COMMIT.search, lines) if m), "unknown")
    return commit, claims


def cell(recipe: str, commit: str, claims: List[str]) -> str:
    """The README cell's text between the markers ('|' escaped: the claims sit in a table cell)."""
    # a claim's own closing full stop would read '.;' before the separator
    body = "; ".join(c.rstrip().removesuffix(".").replace("|", "\\|") for c in claims)
    return f"**Measured** ({recipe}/RESULTS.md, commit `{commit}`): {body}"


def refresh(text: str, root: Path) -> Tuple[str, List[str]]:
    """README TEXT with every marked cell rewritten from ROOT/<recipe>/RESULTS.md, and the recipes whose
    RESULTS.md has no headline yet (their cells are left as they are)."""
    stale = []

    def repl(m: re.Match) -> str:
        got = headline(root / m.group("recipe") / "RESULTS.md")
        if got is None:
            stale.append(m.group("recipe"))
            return m.group(0)
        return f"<!-- measured {m.group('recipe')} -->{cell(m.group('recipe'), *got)}<!-- /measured -->"

    return MARK.sub(repl, text), stale


def update_readme(readme: Path) -> List[str]:
    """Rewrite README's marked cells in place (atomically; untouched when nothing changed); returns the stale
    recipes (no headline in their RESULTS.md)."""
    text = readme.read_text()
    new, stale = refresh(text, readme.parent)
    if new != text:
        with atomic_open(readme) as f:
            f.write(new)
    return stale
