"""Report figures: a committed RESULTS.md links figures that are committed beside it."""
import subprocess

from local_models.common.plots import write_report
from local_models.common.results import git_commit


def test_figures_are_copied_beside_the_report_and_linked_there(tmp_path):
    images = tmp_path / "work" / "exp" / "images"
    images.mkdir(parents=True)
    (images / "grid.png").write_bytes(b"png-bytes")
    recipe = tmp_path / "recipe"
    figures = recipe / "images" / "RESULTS_real"
    figures.mkdir(parents=True)
    (figures / "old.png").write_bytes(b"the previous report's figure")
    (figures / "mine.png").write_bytes(b"a figure no report linked")
    (recipe / "RESULTS_real.md").write_text("![old](images/RESULTS_real/old.png)\n")
    text = "# R\n![the grid](exp/images/grid.png)\n![a sweep](exp/images/sweep.png)\n`exp/images/x.png` as text\n"
    write_report(recipe / "RESULTS_real.md", text, images)
    out = (recipe / "RESULTS_real.md").read_text()
    assert "![the grid](images/RESULTS_real/grid.png)" in out
    assert (figures / "grid.png").read_bytes() == b"png-bytes"
    assert "(figure not drawn in this run: a sweep)" in out and "sweep.png" not in out  # no dead link
    assert "`exp/images/x.png` as text" in out  # only embedded figures are moved
    # the previous report's figure this one does not link is gone; what no report wrote is left alone
    assert sorted(p.name for p in figures.iterdir()) == ["grid.png", "mine.png"]
    # without the run's images: no link, nothing copied
    write_report(recipe / "RESULTS.md", "![g](exp/images/grid.png)\n", None)
    assert (recipe / "RESULTS.md").read_text() == "(figure not drawn in this run: g)\n"
    assert not (recipe / "images" / "RESULTS").exists()


def test_a_failed_report_write_leaves_the_old_figures_and_no_staged_file(tmp_path, monkeypatch):
    images = tmp_path / "images"
    images.mkdir()
    (images / "grid.png").write_bytes(b"new")
    figures = tmp_path / "images" / "RESULTS"
    figures.mkdir()
    (figures / "grid.png").write_bytes(b"old")
    (tmp_path / "RESULTS.md").write_text("old report\n")
    from local_models.common import plots

    def broken(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(plots, "atomic_open", broken)
    try:
        write_report(tmp_path / "RESULTS.md", "![grid](exp/images/grid.png)\n", images)
    except OSError:
        pass
    assert (figures / "grid.png").read_bytes() == b"old" and (tmp_path / "RESULTS.md").read_text() == "old report\n"
    assert sorted(p.name for p in figures.iterdir()) == ["grid.png"]


def test_rewritten_reports_and_figures_do_not_make_the_checkout_dirty(tmp_path, monkeypatch):
    """A rerun must name the same commit: its reports and their figures are outputs, not code."""
    from local_models.common import results

    def git(*args):
        subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    recipe = tmp_path / "egs" / "a" / "b"
    fig = recipe / "images" / "RESULTS_real" / "f.png"
    fig.parent.mkdir(parents=True)
    fig.write_bytes(b"1")
    (recipe / "RESULTS_real.md").write_text("r\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "c")
    monkeypatch.setattr(results, "CODE_ROOT", tmp_path)
    fig.write_bytes(b"2")
    (recipe / "RESULTS_real.md").write_text("r2\n")
    assert not git_commit().endswith("+dirty")
    fig.unlink()
    assert not git_commit().endswith("+dirty")
    (tmp_path / "code.py").write_text("x = 2\n")
    assert git_commit().endswith("+dirty")  # code is code
