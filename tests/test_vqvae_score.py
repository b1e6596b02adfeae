"""vqvae_score: statistics over seed replicates and the conv-vs-Transformer check built on them."""
import statistics

import pytest

from local_models.vqvae.report import add_seed_stats, claims, seed_groups


def _m(abx, bitrate=150.0):
    return {"test": {"abx": abx, "bitrate": bitrate}}


def test_seed_groups_need_the_pattern():
    names = ["trf_mfcc_k128", "trf_mfcc_k128_seed1", "trf_mfcc_k128_seed2", "conv_mfcc_k256", "seedless_k1"]
    assert seed_groups(names) == {"trf_mfcc_k128": ["trf_mfcc_k128", "trf_mfcc_k128_seed1", "trf_mfcc_k128_seed2"]}


def test_seed_stats_are_mean_and_sample_sd():
    scored = {"trf_mfcc_k128": _m(30.0, 140), "trf_mfcc_k128_seed1": _m(34.0, 120), "trf_mfcc_k128_seed2": _m(29.0, 130),
              "conv_mfcc_k256": _m(28.0)}
    add_seed_stats(scored, ["test"])
    t = scored["trf_mfcc_k128"]["test"]
    assert t["seeds"] == 3 and t["abx_seed_mean"] == pytest.approx(31.0)
    assert t["abx_seed_sd"] == pytest.approx(statistics.stdev([30.0, 34.0, 29.0]))
    assert t["bitrate_seed_mean"] == pytest.approx(130.0) and t["abx"] == 30.0  # the seed-0 row stays as measured
    assert scored["conv_mfcc_k256"]["test"]["seeds"] == 1 and scored["conv_mfcc_k256"]["test"]["abx_seed_sd"] is None
    assert "seeds" not in scored["trf_mfcc_k128_seed1"]["test"]


def test_rescoring_without_replicates_replaces_old_statistics(tmp_path):
    from local_models.common.results import update_results

    scored = {"trf_mfcc_k128": _m(30.0), "trf_mfcc_k128_seed1": _m(34.0)}
    add_seed_stats(scored, ["test"])
    update_results(tmp_path / "results.json", "zs", "mini", scored)
    again = {"trf_mfcc_k128": _m(31.0)}
    add_seed_stats(again, ["test"])
    t = update_results(tmp_path / "results.json", "zs", "mini", again)["systems"]["trf_mfcc_k128"]["test"]
    assert t["seeds"] == 1 and t["abx_seed_mean"] == 31.0 and t["abx_seed_sd"] is None


def _seeds(name, values, bitrate=150.0):
    """A system and its replicates `<name>_seed<N>` with these ABX values (seed 0 first)."""
    return {(name if i == 0 else f"{name}_seed{i}"): _m(v, bitrate) for i, v in enumerate(values)}


def _ordering(lines, name, rule="our frame rule"):
    """The ordering claim of candidate NAME under RULE."""
    got = [l for l in lines if l.startswith(f"- Transformer VQ-VAE ABX below the conv VQ-VAE's ({rule}), `{name}`")]
    assert len(got) == 1, lines
    return got[0]


def test_ordering_verdict_is_welchs_interval_over_the_seeds():
    from local_models.common import verdict as vd

    trf, conv = [27.0, 33.0], [31.0, 31.0]  # means 30 vs 31, but two seeds 6 points apart
    scored = {**_seeds("trf_mfcc_k128", trf), **_seeds("conv_mfcc_k256", conv)}
    add_seed_stats(scored, ["test"])
    lines, verdicts = claims(scored, "test")
    line = _ordering(lines, "trf_mfcc_k128")
    want = vd.welch(trf, conv, what="seeds")
    assert verdicts == {"trf_mfcc_k128": "not told apart"} and want.text() in line and "**" not in line
    assert "mean of 2 seeds" in line
    # three replicates a side that agree: the whole interval lies below 0, the paper's side
    scored = {**_seeds("trf_mfcc_k128", [27.0, 28.0, 27.5]), **_seeds("conv_mfcc_k256", [31.0, 31.5, 31.0])}
    add_seed_stats(scored, ["test"])
    lines, verdicts = claims(scored, "test")
    assert verdicts == {"trf_mfcc_k128": "holds"} and ": **holds**, -3.67 [" in _ordering(lines, "trf_mfcc_k128")
    # the same gap the other way round: the interval lies above 0
    scored = {**_seeds("trf_mfcc_k128", [31.0, 31.5, 31.0]), **_seeds("conv_mfcc_k256", [27.0, 28.0, 27.5])}
    add_seed_stats(scored, ["test"])
    assert claims(scored, "test")[1] == {"trf_mfcc_k128": "does NOT hold"}


def test_landed_means_straddling_zero_are_not_told_apart():
    """The issue's case: a -0.50 point difference whose interval reaches +2 is no 'holds', however the means lie."""
    trf = [23.92 + d for d in (-4, -2, -1, 0, 1, 2, 4, -3, 3, 0, -2, 2, 1, -1, 0)]
    conv = [24.42 + d for d in (-5, -3, -1, 0, 1, 3, 5, -4, 4, 0, -2, 2, 1, -1, 0)]
    scored = {**_seeds("trf_mfcc_k256", trf), **_seeds("conv_mfcc_k256", conv)}
    add_seed_stats(scored, ["test"])
    lines, verdicts = claims(scored, "test")
    line = _ordering(lines, "trf_mfcc_k256")
    assert verdicts == {"trf_mfcc_k256": "not told apart"} and "**holds**" not in "\n".join(lines)
    assert "-0.50 [" in line and "lies inside the interval" in line  # the paper's -2.23 cannot be ruled out either
    assert "added to the compared systems after the K 128 comparison failed on test" in line


def test_claim_says_whether_the_papers_difference_is_inside_the_interval():
    # the paper: trf K 256 21.94 vs conv 24.17 (-2.23 points)
    tight = {**_seeds("trf_mfcc_k256", [24.0, 24.2, 23.9, 24.1]), **_seeds("conv_mfcc_k256", [24.0, 24.1, 23.8, 24.2])}
    add_seed_stats(tight, ["test"])
    lines, verdicts = claims(tight, "test")
    assert verdicts["trf_mfcc_k256"] == "not told apart" and "(-2.23) lies OUTSIDE" in lines[0]
    wide = {**_seeds("trf_mfcc_k256", [18.0, 26.0, 22.0]), **_seeds("conv_mfcc_k256", [20.0, 28.0, 24.0])}
    add_seed_stats(wide, ["test"])
    assert "(-2.23) lies inside" in claims(wide, "test")[0][0]


def test_declared_candidates_are_each_reported_none_picked():
    """Both declared Transformers are compared, each at 97.5 % (95 % over the two); a lower Transformer that is no
    candidate (K 64) is not compared; and the candidates do not depend on any score."""
    from local_models.vqvae.report import candidates

    scored = {**_seeds("trf_mfcc_k128", [27.0, 28.0, 27.5]), **_seeds("conv_mfcc_k256", [28.3, 29.1, 28.7]),
              **_seeds("trf_mfcc_k256", [35.0, 36.0, 34.0]), **_seeds("trf_mfcc_k64", [20.0, 21.0, 20.5])}
    add_seed_stats(scored, ["test"])
    lines, verdicts = claims(scored, "test")
    assert set(verdicts) == {"trf_mfcc_k128", "trf_mfcc_k256"} and not any("`trf_mfcc_k64`" in l for l in lines)
    assert "(97.5 % Welch, 3 vs 3 seeds)" in _ordering(lines, "trf_mfcc_k128")
    assert verdicts["trf_mfcc_k256"] == "does NOT hold"  # reported, not dropped for being the higher one
    pick = [l for l in lines if l.startswith("- Candidates:")]
    assert len(pick) == 1 and "none picked" in pick[0] and "no dev ABX set" in pick[0] and "97.5 %" in pick[0]
    # alone, K 128's interval is the 95 % one and the same data hold ... at 97.5 % they are not told apart
    alone = {n: m for n, m in scored.items() if not n.startswith("trf_mfcc_k256")}
    assert claims(alone, "test")[1] == {"trf_mfcc_k128": "holds"} and verdicts["trf_mfcc_k128"] == "not told apart"
    assert candidates(["trf_mfcc_k256", "conv_mfcc_k256", "trf_mfcc_k128"]) == ["trf_mfcc_k128", "trf_mfcc_k256"]
    assert candidates({"trf_mfcc_k64": {}, "conv_mfcc_k256": {}}) == []


def _with_dev(scored, dev_abx):
    """SCORED plus a 'dev' ABX for each system: DEV_ABX {system: value} (replicates get the same value)."""
    for n, by_set in scored.items():
        base = n.split("_seed")[0]
        if base in dev_abx:
            by_set["dev"] = {"abx": dev_abx[base], "bitrate": 150.0}
    return scored


def test_candidate_is_picked_on_dev_and_only_it_is_judged_on_test():
    """With a dev ABX, the candidate with the lower dev ABX is the one compared on test, at 95 %, whatever the test
    scores say: K 256 is better on test here but K 128 on dev, so K 128 is judged (and fails) and K 256 is not."""
    from local_models.vqvae.report import ordering_pick

    scored = {**_seeds("trf_mfcc_k128", [31.0, 31.5, 31.0]), **_seeds("conv_mfcc_k256", [28.3, 29.1, 28.7]),
              **_seeds("trf_mfcc_k256", [20.0, 21.0, 20.5])}
    _with_dev(scored, {"trf_mfcc_k128": 22.0, "trf_mfcc_k256": 26.0, "conv_mfcc_k256": 25.0})
    add_seed_stats(scored, ["dev", "test"])
    lines, verdicts = claims(scored, "test", "dev")
    assert verdicts == {"trf_mfcc_k128": "does NOT hold"} and not any("`trf_mfcc_k256` 2" in l for l in lines
                                                                     if l.startswith("- Transformer"))
    assert "(95 % Welch, 3 vs 3 seeds)" in _ordering(lines, "trf_mfcc_k128")
    pick = [l for l in lines if l.startswith("- Candidate picked on `dev`")]
    assert len(pick) == 1 and "-> `trf_mfcc_k128`" in pick[0] and "`trf_mfcc_k256` 26.00 % (3 seeds)" in pick[0]
    assert "K 256 was added to the compared systems after" in pick[0]  # how the candidate set came to be, still said
    assert ordering_pick(scored, "dev") == {"dev_set": "dev", "picked": "trf_mfcc_k128",
                                            "dev_abx": {"trf_mfcc_k128": 22.0, "trf_mfcc_k256": 26.0}}
    # the dev numbers alone decide: swap them and K 256 is judged (and holds), the test scores unchanged
    _with_dev(scored, {"trf_mfcc_k128": 26.0, "trf_mfcc_k256": 22.0})
    add_seed_stats(scored, ["dev", "test"])
    assert claims(scored, "test", "dev")[1] == {"trf_mfcc_k256": "holds"}
    # no dev ABX (ZeroSpeech 2019): every candidate, none picked
    assert set(claims(scored, "test", "")[1]) == {"trf_mfcc_k128", "trf_mfcc_k256"}
    assert ordering_pick(scored, "")["picked"] is None


def test_claim_with_one_seed_on_a_side_has_no_interval():
    # conv replicated, the Transformer not: no interval, no verdict, a call for replicates
    scored = {"trf_mfcc_k128": _m(20.5), **_seeds("conv_mfcc_k256", [30.0, 32.0])}
    add_seed_stats(scored, ["test"])
    lines, verdicts = claims(scored, "test")
    line = _ordering(lines, "trf_mfcc_k128")
    assert verdicts == {"trf_mfcc_k128": None} and "no interval" in line and "replicates" in line and "**" not in line
    lines, verdicts = claims({"trf_mfcc_k128": _m(20.0), "conv_mfcc_k256": _m(25.0)}, "test")
    assert verdicts == {"trf_mfcc_k128": None} and "one seed" in _ordering(lines, "trf_mfcc_k128")
    from local_models.vqvae.report import not_done_ordering
    assert "is not checked: no candidate has an interval" in not_done_ordering(verdicts)
    assert "is not shown" in not_done_ordering({**verdicts, "trf_mfcc_k256": "not told apart"})


def test_run_sh_defaults_replicate_both_sides_of_the_check():
    """The conv-vs-Transformer check compares seed means: the recipe's default systems must train replicates of
    the conv baseline and of the Transformer it is compared with (one seed moved ABX by ~9 points)."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    stages = root / "local_models" / "vqvae" / "stages.sh"
    # the stage default, then what the recipe's run.sh sets (it wins)
    lines = [ln for f in (stages, root / "egs" / "zerospeech2019" / "unit1" / "run.sh")
             for ln in f.read_text().splitlines() if ln.startswith(("systems=", "systems+="))]
    script = f'. "{root}/utils/stage_lib.sh"\n. "{stages}"\n' + "\n".join(lines) + "\nexpand_systems ${systems}"
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout.split()
    groups = seed_groups(out)
    for base in ("conv_mfcc_k256", "trf_mfcc_k128"):
        assert len(groups.get(base, [])) >= 3, f"run.sh default systems: {base} needs 2+ seed replicates ({out})"


def test_plot_points_put_replicated_systems_at_their_seed_mean(tmp_path):
    from local_models.vqvae.report import plot, plot_points

    scored = {"trf_mfcc_k128": _m(30.0, 140), "trf_mfcc_k128_seed1": _m(34.0, 120), "conv_mfcc_k256": _m(28.0, 170)}
    add_seed_stats(scored, ["test"])
    pts = plot_points(scored, "test")
    labelled = {p[0]: p for p in pts if p[0] is not None}
    assert set(labelled) == {"trf_k128", "conv_k256"}  # replicates are not labelled points of their own
    _, br, abx, sd, seeds = labelled["trf_k128"]
    assert (br, abx, seeds) == (130.0, 32.0, 2) and sd == pytest.approx(statistics.stdev([30.0, 34.0]))
    assert labelled["conv_k256"][1:] == (170, 28.0, None, 1)
    # both seeds of the replicated system stay visible as faint points
    assert sorted((p[1], p[2]) for p in pts if p[0] is None) == [(120, 34.0), (140, 30.0)]
    assert plot(scored, "test", tmp_path / "abx.png") and (tmp_path / "abx.png").stat().st_size > 1000
    assert not plot({}, "test", tmp_path / "none.png")


def test_results_md_says_an_ordering_inside_the_noise_is_no_reproduction(tmp_path):
    from local_models.vqvae.report import write_md

    scored = {**_seeds("trf_mfcc_k128", [27.0, 33.0]), **_seeds("conv_mfcc_k256", [31.0, 31.0])}
    add_seed_stats(scored, ["test"])
    results = {"systems": scored, "commit": "abc", "hardware": "cpu"}
    write_md(tmp_path / "RESULTS.md", results, ["test"], "mini", "trf_mfcc_k128", plot_ok=False)
    not_done = (tmp_path / "RESULTS.md").read_text().split("## Not done yet")[1]
    assert "is not shown: no candidate's interval lies below zero" in not_done
    scored.update(_seeds("trf_mfcc_k128", [27.0, 28.0, 27.5]))  # a clear difference: no such line
    scored.update(_seeds("conv_mfcc_k256", [31.0, 31.5, 31.0]))
    add_seed_stats(scored, ["test"])
    write_md(tmp_path / "RESULTS.md", results, ["test"], "mini", "trf_mfcc_k128", plot_ok=False)
    md = (tmp_path / "RESULTS.md").read_text()
    assert "is not shown" not in md and "holds for every candidate" in md


def test_resynthesis_says_whether_it_beats_the_unconverted_source(tmp_path):
    """MCD 12.64 dB against the target voice is worse than the source recording's 10.55 dB: said so, not implied."""
    from local_models.vqvae.report import headline, write_md

    inv = {"mcd": 12.64, "mcd_source": 10.55, "resynth_utts": 3}
    systems = {"inverter": {"test": inv}}
    claim = headline(systems, "test")[-1]
    assert claim.startswith("resynthesis in the target voice: MCD 12.64 dB")
    assert "NOT below the unconverted source recording's 10.55 dB (+2.09 dB)" in claim
    write_md(tmp_path / "RESULTS.md", {"systems": systems}, ["test"], "mini", "inv", plot_ok=False)
    assert "is NOT below the unconverted source's 10.55 dB (+2.09 dB)" in (tmp_path / "RESULTS.md").read_text()
    inv["mcd"] = 9.55
    claim = headline(systems, "test")[-1]
    assert "below the unconverted source recording's 10.55 dB (-1.00 dB): moved toward" in claim and "NOT" not in claim


def test_resynthesis_against_the_source_is_judged_on_its_interval():
    """With per-utterance sums the gap gets a paired bootstrap interval over the utterances, and the word follows
    it: a point below the source's whose interval straddles zero is 'not told apart', not 'below'."""
    from local_models.vqvae.report import headline, source_gap

    def sums(mcds, frames=100):
        return {"per_utt": {f"u{i}": {"mcd_sum_db": m * frames, "frames": frames} for i, m in enumerate(mcds)}}

    src = sums([10.0, 11.0, 10.5, 10.2, 10.8, 10.4])
    clear = source_gap(sums([12.0, 13.2, 12.4, 12.1, 12.9, 12.5]), src)  # every utterance ~2 dB above
    assert clear["low"] > 0 and clear["estimate"] == pytest.approx(2.03, abs=0.01)
    assert clear["method"] == "bootstrap over 6 utterances"
    mixed = sums([8.0, 13.0, 9.0, 12.5, 8.5, 11.6])  # pooled below the source's, utterances both ways
    gap = source_gap(mixed, src)
    assert gap["estimate"] < 0 < gap["high"]
    inv = {"mcd": 10.43, "mcd_source": 10.48, "mcd_source_gap": gap}
    claim = headline({"inverter": {"test": inv}}, "test")[-1]
    assert "not told apart from the unconverted source recording's 10.48 dB (" in claim
    assert "95 % bootstrap over 6 utterances): neither nearer nor further" in claim
    inv.update(mcd=12.52, mcd_source_gap=clear)
    assert "NOT below the unconverted" in headline({"inverter": {"test": inv}}, "test")[-1]
    assert source_gap(sums([9.0]), sums([10.0])) is None and source_gap({}, src) is None  # no interval: point rule


def test_point_labels_do_not_overlap():
    from local_models.vqvae.report import LABEL_PT, LABEL_STEPS, label_offsets

    # three points within a label's height of each other (the K 128 smoothing rows at ~167 bits/s), one far away
    anchors = [(300.0, 120.0, 80.0), (302.0, 118.0, 80.0), (310.0, 121.0, 90.0), (60.0, 200.0, 50.0)]
    dys = label_offsets(anchors)
    boxes = [(x + 4, y + dy, x + 4 + w, y + dy + LABEL_PT + 1) for (x, y, w), dy in zip(anchors, dys)]
    for i in range(len(boxes)):
        for j in range(i):
            a, b = boxes[i], boxes[j]
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (i, j, dys)
    assert dys[3] == LABEL_STEPS[0] and dys[2] == LABEL_STEPS[0]  # the far one and the highest keep the nearest place
    assert label_offsets([(0.0, 0.0, 10.0), (100.0, 0.0, 10.0)]) == [LABEL_STEPS[0]] * 2  # apart: both above


def test_seed_statistics_and_ordering_under_both_frame_rules():
    """libriabx2's frame rule gets its own mean and sd over seeds, and each candidate is checked under it: here the
    rule flips the ordering (as it flips seed 0 of the mini run)."""
    ours, libri = {"trf": [27.0, 28.0, 27.5], "conv": [31.0, 31.5, 31.0]}, {"trf": [32.0, 32.2, 31.8],
                                                                          "conv": [30.0, 30.2, 29.8]}
    scored = {**_seeds("trf_mfcc_k256", ours["trf"]), **_seeds("conv_mfcc_k256", ours["conv"])}
    for sys_name, short in (("trf_mfcc_k256", "trf"), ("conv_mfcc_k256", "conv")):
        for i, v in enumerate(libri[short]):
            scored[sys_name if i == 0 else f"{sys_name}_seed{i}"]["test"]["abx_libri_rule"] = v
    add_seed_stats(scored, ["test"])
    t = scored["trf_mfcc_k256"]["test"]
    assert t["abx_libri_rule_seed_mean"] == pytest.approx(32.0)
    assert t["abx_libri_rule_seed_sd"] == pytest.approx(statistics.stdev(libri["trf"]))
    lines, verdicts = claims(scored, "test")
    assert verdicts == {"trf_mfcc_k256": "holds"}
    rule = _ordering(lines, "trf_mfcc_k256", "libriabx2's frame rule")
    assert "32.00 % ± 0.20 sd at 150.00 bits/s" in rule and "vs conv 30.00 %" in rule
    assert ": does NOT hold, +2.00 [" in rule
    # one seed of the conv without the libriabx2 rule: no mean under that rule, no second check
    del scored["conv_mfcc_k256_seed1"]["test"]["abx_libri_rule"]
    add_seed_stats(scored, ["test"])
    assert scored["conv_mfcc_k256"]["test"]["abx_libri_rule_seed_mean"] is None
    assert not [l for l in claims(scored, "test")[0] if "(libriabx2's frame rule)" in l]


def test_readme_cell_gives_each_candidates_verdict():
    """README's cell from this report's headline: every candidate with its verdict word (bold only on 'holds');
    the cell of a RESULTS.md in the earlier wording is still built (tests/test_readme_headlines.py)."""
    from local_models.common.readme import FAILS, HOLDS, cell
    from local_models.vqvae.report import headline

    scored = {**_seeds("trf_mfcc_k128", [27.0, 28.0, 27.5]), **_seeds("conv_mfcc_k256", [31.0, 31.5, 31.0]),
              **_seeds("trf_mfcc_k256", [29.0, 33.0, 31.0])}
    add_seed_stats(scored, ["test"])
    text, ok = cell("egs/zerospeech2019/unit1", headline(scored, "test"))
    assert ok and text == (f"ABX conv 31.17 (paper 24.17) vs Transformer K128 27.50 (paper 21.91): {HOLDS}; "
                           "K256 31.00 (paper 21.94): not told apart")
    scored.update(_seeds("trf_mfcc_k128", [33.0, 34.0, 33.5]))
    add_seed_stats(scored, ["test"])
    assert f"K128 33.50 (paper 21.91): {FAILS}" in cell("egs/zerospeech2019/unit1", headline(scored, "test"))[0]


def test_a_run_cut_below_its_configs_epochs_is_called_partial(tmp_path):
    from local_models.vqvae.report import _cut_short

    conf = tmp_path / "train.yaml"
    conf.write_text("max_epoch: 48\n")
    assert _cut_short({"config": str(conf), "max_epoch": 2})          # --train_args "--max_epoch 2"
    assert not _cut_short({"config": str(conf), "max_epoch": 48})     # the config's own length
    assert not _cut_short({"config": str(tmp_path / "gone.yaml"), "max_epoch": 2})  # no config to compare with
    assert not _cut_short({"max_epoch": 2})


def test_a_pick_is_said_as_one_and_a_picked_candidate_without_test_abx_checks_nothing():
    from local_models.vqvae.report import not_done_ordering

    assert "holds for `trf_mfcc_k256`, the candidate picked on dev (the only one judged)" in not_done_ordering(
        {"trf_mfcc_k256": "holds"}, "trf_mfcc_k256")
    assert "every candidate" in not_done_ordering({"trf_mfcc_k256": "holds"})
    scored = {**_seeds("trf_mfcc_k128", [27.0, 28.0, 27.5]), **_seeds("conv_mfcc_k256", [28.3, 29.1, 28.7]),
              "trf_mfcc_k256": {"dev": {"abx": 20.0, "bitrate": 150.0}}}
    _with_dev(scored, {"trf_mfcc_k128": 26.0})
    add_seed_stats(scored, ["dev", "test"])
    lines, verdicts = claims(scored, "test", "dev")
    assert verdicts == {} and lines[0] == ("- `trf_mfcc_k256`, the candidate picked on `dev`, has no ABX on test: no "
                                           "ordering check.") and "-> `trf_mfcc_k256`" in lines[1]
    # a dev set where no candidate has an ABX: every candidate compared, and the reason said
    no_dev = {n: {"test": m["test"]} for n, m in scored.items() if "test" in m}
    lines, _ = claims(no_dev, "test", "dev")
    assert any("none picked: no candidate has an ABX on `dev`" in l for l in lines)


def _exp(tmp_path, abx):
    """An exp dir holding ABX and bitrate results: ABX {system: {set: value}}."""
    import json

    for name, by_set in abx.items():
        for s, v in by_set.items():
            (tmp_path / "exp" / name / f"codes_{s}").mkdir(parents=True, exist_ok=True)
            (tmp_path / "exp" / name / f"abx_{s}.json").write_text(json.dumps({"abx_error": v}))
            (tmp_path / "exp" / name / f"codes_{s}" / "bitrate.json").write_text(json.dumps(
                {"bitrate": 150.0, "entropy": 6.0, "codes_used": 100, "num_codes": 128}))


def test_results_json_pick_is_the_headlines_after_a_rescoring_with_fewer_systems(tmp_path, monkeypatch):
    """results.json keeps systems of earlier runs: its ordering_pick is computed from the same merged systems as
    the headline and RESULTS.md, so the three never name different candidates."""
    import json

    from local_models.vqvae.report import score

    monkeypatch.chdir(tmp_path)
    first = {"trf_mfcc_k128": {"dev": 26.0, "test": 27.0}, "trf_mfcc_k128_seed1": {"dev": 26.5, "test": 27.5},
             "trf_mfcc_k256": {"dev": 22.0, "test": 25.0}, "trf_mfcc_k256_seed1": {"dev": 22.5, "test": 25.5},
             "conv_mfcc_k256": {"test": 28.0}, "conv_mfcc_k256_seed1": {"test": 28.5}}
    _exp(tmp_path, first)
    score(list(first), ["test"], "exp/inverter", "mini", dev_sets=["dev"])
    score([n for n in first if "k256_seed1" not in n and n != "trf_mfcc_k256"], ["test"], "exp/inverter", "mini",
          dev_sets=["dev"])
    results = json.loads((tmp_path / "exp" / "results.json").read_text())
    picked = results["ordering_pick"]["picked"]
    assert picked == "trf_mfcc_k256" and results["headline"][0].startswith(
        f"Transformer VQ-VAE ABX below the conv VQ-VAE's (our frame rule), `{picked}`")
    assert f"-> `{picked}`" in (tmp_path / "RESULTS.md").read_text()


def test_a_rescoring_of_the_same_files_by_a_clean_commit_is_not_a_look(tmp_path, monkeypatch):
    """The scoring fingerprints what it reads (report.scored_outputs): the same ABX, bitrate and abx_na files scored
    again by the same clean commit are a rescoring; any of them changed is another look at the sealed test set."""
    import json

    from local_models.vqvae.report import score

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("local_models.common.sealed.git_commit", lambda *a, **k: "abc1234")
    systems = {"trf_mfcc_k128": {"test": 27.0}, "conv_mfcc_k256": {"test": 28.0}}
    _exp(tmp_path, systems)

    def looks():
        score(list(systems), ["test"], "exp/inverter", "mini", sealed_sets=["test"])
        return json.loads((tmp_path / "exp" / "results.json").read_text())["sealed_looks"]

    assert looks()["looks"] == {"test": 1}
    again = looks()
    assert again["looks"] == {"test": 1} and again["rescored"] == {"test": 1}
    (tmp_path / "exp" / "conv_mfcc_k256" / "abx_test.json").write_text(json.dumps({"abx_error": 28.5}))
    assert looks()["looks"] == {"test": 2}
    (tmp_path / "data" / "test").mkdir(parents=True)
    (tmp_path / "data" / "test" / "abx_na").write_text("no phone times\n")  # read by the report: a new input
    assert looks()["looks"] == {"test": 3}
    monkeypatch.setattr("local_models.common.sealed.git_commit", lambda *a, **k: "abc1234+dirty")
    assert looks()["looks"] == {"test": 4}  # a modified checkout: the code may differ, every scoring a look
