"""README's per-recipe "measured" cells come from the RESULTS.md headline sections (local_models/common/readme.py),
and the Indic report's headline carries its measured claims."""
import re
from pathlib import Path

from local_models.common.readme import MARK, cell, headline, refresh, update_readme
from local_models.common.results import headline_lines

ROOT = Path(__file__).resolve().parents[1]


def _recipe(root: Path, name: str, claims=None, commit="abc1234"):
    d = root / name
    d.mkdir(parents=True)
    text = [f"# {name}", "", "## Environment", "", f"- date: `2026-11-27 10:00 UTC`, commit `{commit}`", ""]
    (d / "RESULTS.md").write_text("\n".join(text + headline_lines(claims) + ["## Table 1", "", "- not a claim"]))


def test_cells_are_rewritten_from_the_headline_and_stale_ones_named(tmp_path):
    _recipe(tmp_path, "egs/a/asr1", ["WER 12.00 vs 13.00 %", "HOLDS: x | y"])
    _recipe(tmp_path, "egs/b/tts1")  # written before the headline existed
    readme = tmp_path / "README.md"
    readme.write_text("| a | <!-- measured egs/a/asr1 -->hand-written 99 %<!-- /measured --> |\n"
                      "| b | <!-- measured egs/b/tts1 -->old text<!-- /measured --> |\n")
    assert update_readme(readme) == ["egs/b/tts1"]
    text = readme.read_text()
    assert "hand-written" not in text and "old text" in text
    assert ("**Measured** (egs/a/asr1/RESULTS.md, commit `abc1234`): WER 12.00 vs 13.00 %; HOLDS: x \\| y"
            in text)  # '|' escaped inside the table cell; '- not a claim' of another section left out
    assert headline(tmp_path / "egs/b/tts1/RESULTS.md") is None
    mtime = readme.stat().st_mtime_ns
    assert update_readme(readme) == ["egs/b/tts1"] and readme.stat().st_mtime_ns == mtime  # nothing to change


def test_readme_cells_match_the_committed_results():
    """A hand edit of a generated cell fails here: run `make readme` after regenerating a RESULTS.md."""
    text = (ROOT / "README.md").read_text()
    marked = {m.group("recipe") for m in MARK.finditer(text)}
    recipes = {str(p.parent.relative_to(ROOT)) for p in ROOT.glob("egs/*/*/RESULTS.md") if "TEMPLATE" not in str(p)}
    assert marked == recipes
    new, stale = refresh(text, ROOT)
    assert new == text, "README.md's measured cells differ from the RESULTS.md headlines: run `make readme`"
    for recipe in stale:  # not regenerated since the headline existed: said so in the cell
        body = re.search(rf"<!-- measured {re.escape(recipe)} -->(.*?)<!-- /measured -->", text).group(1)
        assert body.startswith("Hand-written (its RESULTS.md predates the generated headline)")


def test_cell_text():
    assert cell("egs/x/y", "c0ffee", ["a", "b"]) == "**Measured** (egs/x/y/RESULTS.md, commit `c0ffee`): a; b"
    assert cell("egs/x/y", "c0ffee", ["a holds.", "b 1.5"]).endswith(": a holds; b 1.5")  # no '.;', numbers kept


def test_indic_headline_states_the_averages_and_the_checks():
    from local_models.multisoftmax.report import headline as indic_headline

    rows = {"multisoftmax": {"wer_avg": 80.0, "cer_avg": 30.0}, "vanilla": {"wer_avg": 90.0, "cer_avg": 40.0},
            "ft_multisoftmax": {"wer_avg": 75.5}, "multisoftmax_lid_lidfree": {"wer_avg": 85.0, "lid_acc_avg": 91.0}}
    got = indic_headline(rows, [])
    assert got[0] == ("avg. test WER, language known: Multi-softmax 80.00, Multilingual Vanilla 90.00 % "
                      "(CER Multi-softmax 30.00, Multilingual Vanilla 40.00 %)")
    assert "75.50" in got[1]
    assert got[2].startswith("HOLDS: multi-softmax beats vanilla") and "80.00 vs 90.00" in got[2]
    assert any(g.startswith("HOLDS: multi-softmax LID picks the right language") for g in got)
