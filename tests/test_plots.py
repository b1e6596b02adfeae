"""Report figures: a committed RESULTS.md links figures that are committed beside it."""
from local_models.common.plots import publish_figures


def test_figures_are_copied_beside_the_report_and_linked_there(tmp_path):
    images = tmp_path / "work" / "exp" / "images"
    images.mkdir(parents=True)
    (images / "grid.png").write_bytes(b"png-bytes")
    recipe = tmp_path / "recipe"
    stale = recipe / "images" / "RESULTS_real" / "old.png"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"an earlier run's figure")
    text = "# R\n![the grid](exp/images/grid.png)\n![a sweep](exp/images/sweep.png)\n`exp/images/x.png` as text\n"
    out = publish_figures(text, images, recipe / "RESULTS_real.md")
    assert "![the grid](images/RESULTS_real/grid.png)" in out
    assert (recipe / "images" / "RESULTS_real" / "grid.png").read_bytes() == b"png-bytes"
    assert "(figure not drawn in this run: a sweep)" in out and "sweep.png" not in out  # no dead link
    assert "`exp/images/x.png` as text" in out  # only embedded figures are moved
    assert not stale.exists()  # a figure this run did not draw is not left to be read as this run's
    assert sorted(p.name for p in (recipe / "images" / "RESULTS_real").iterdir()) == ["grid.png"]
    # a report without figures (or without a run's images) touches nothing
    assert publish_figures("no figures\n", None, recipe / "RESULTS.md") == "no figures\n"
    assert not (recipe / "images" / "RESULTS").exists()
