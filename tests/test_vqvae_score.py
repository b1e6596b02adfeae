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


def test_claim_compares_seed_means_and_flags_noise():
    scored = {**_seeds("trf_mfcc_k128", [27.0, 33.0]), **_seeds("conv_mfcc_k256", [31.0, 31.0])}  # 30 +- 4.24 vs 31
    add_seed_stats(scored, ["test"])
    lines, holds, clear = claims(scored, "test")
    assert holds is True and clear is False and "mean of 2 seeds" in lines[0] and "not told apart" in lines[1]
    # the replicate rows are not candidates of their own (its 27 % would otherwise "win" against 31 %)
    scored["trf_mfcc_k128_seed1"]["test"]["abx"] = 40.0
    add_seed_stats(scored, ["test"])
    lines, holds, clear = claims(scored, "test")
    assert holds is False and clear is False and "33.50 %" in lines[0]
    # three replicates a side that agree: Welch's test tells the 3.5 points apart
    scored = {**_seeds("trf_mfcc_k128", [27.0, 28.0, 27.5]), **_seeds("conv_mfcc_k256", [31.0, 31.5, 31.0])}
    add_seed_stats(scored, ["test"])
    lines, holds, clear = claims(scored, "test")
    assert holds is True and clear is True and "told apart" in lines[1] and "not told apart" not in lines[1]
    # two seeds of the same data: df 2 instead of 4 widens the interval past 0 (n matters, not only the sd)
    scored = {**_seeds("trf_mfcc_k128", [27.0, 28.5]), **_seeds("conv_mfcc_k256", [30.0, 31.0])}
    add_seed_stats(scored, ["test"])
    assert claims(scored, "test")[2] is False


def test_welch_matches_scipy_on_the_raw_seeds():
    from scipy import stats

    from local_models.vqvae.report import welch

    a, b = [22.5, 24.24, 18.28, 24.52, 24.65], [26.04, 19.46, 23.25, 24.57, 25.0, 21.2]
    diff, (lo, hi), t, df, p = welch(statistics.mean(a), statistics.stdev(a), len(a),
                                     statistics.mean(b), statistics.stdev(b), len(b))
    ref = stats.ttest_ind(a, b, equal_var=False)
    assert t == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue)
    assert diff == pytest.approx(statistics.mean(a) - statistics.mean(b))
    # the interval is diff +- t_{0.975, df} * se, with the Welch-Satterthwaite df
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    assert df == pytest.approx((va + vb) ** 2 / (va ** 2 / 4 + vb ** 2 / 5))
    assert hi - diff == pytest.approx(stats.t.ppf(0.975, df) * (va + vb) ** 0.5) and diff - lo == pytest.approx(hi - diff)
    assert welch(20.0, 0.0, 3, 21.0, 0.0, 3)[4] == 0.0 and welch(20.0, 0.0, 3, 20.0, 0.0, 3)[4] == 1.0
    assert welch(20.0, 0.0, 3, 21.0, 0.0, 3)[2] < 0 < welch(21.0, 0.0, 3, 20.0, 0.0, 3)[2]  # t keeps the sign


def test_claim_says_whether_the_papers_difference_is_inside_the_interval():
    # the paper: trf K 256 21.94 vs conv 24.17 (-2.23 points)
    tight = {**_seeds("trf_mfcc_k256", [24.0, 24.2, 23.9, 24.1]), **_seeds("conv_mfcc_k256", [24.0, 24.1, 23.8, 24.2])}
    add_seed_stats(tight, ["test"])
    lines, holds, clear = claims(tight, "test")
    assert clear is False and "(-2.23) lies OUTSIDE" in lines[1]
    wide = {**_seeds("trf_mfcc_k256", [18.0, 26.0, 22.0]), **_seeds("conv_mfcc_k256", [20.0, 28.0, 24.0])}
    add_seed_stats(wide, ["test"])
    assert "(-2.23) lies inside" in claims(wide, "test")[0][1]


def test_picking_the_lowest_of_several_candidates_is_paid_for_in_p():
    scored = {**_seeds("trf_mfcc_k128", [27.0, 28.0, 27.5]), **_seeds("conv_mfcc_k256", [28.6, 29.4, 29.0])}
    add_seed_stats(scored, ["test"])
    one = claims(scored, "test")
    assert one[2] is True and "adjusted" not in one[0][1]
    p_one = float(one[0][1].split("p = ")[1].split(";")[0])
    assert 0.01 < p_one < 0.05  # clear alone ...
    scored.update(_seeds("trf_mfcc_k256", [35.0, 36.0, 34.0]))
    scored.update(_seeds("trf_mfcc_k64", [33.0, 34.0, 32.0]))
    scored.update(_seeds("trf_mfcc_k512", [33.0, 32.0, 34.0]))
    add_seed_stats(scored, ["test"])
    lines, holds, clear = claims(scored, "test")
    assert holds is True and "lowest of 4" in lines[1] and "adjusted for picking the lowest of 4" in lines[2]
    assert clear is False  # ... but not once p is multiplied by the 4 candidates


def test_claim_with_one_replicated_side_measures_against_its_sd():
    # conv replicated (sd 1.41), the Transformer not: no test is possible, the difference is held against the sd
    scored = {"trf_mfcc_k128": _m(30.5), **_seeds("conv_mfcc_k256", [30.0, 32.0])}
    add_seed_stats(scored, ["test"])
    lines, holds, clear = claims(scored, "test")
    assert holds is True and clear is False and "smaller than the seed-to-seed sd (1.41)" in lines[1]
    assert "replicate both sides" in lines[1] and "Welch" not in lines[1]
    scored["trf_mfcc_k128"]["test"]["abx"] = 27.0
    add_seed_stats(scored, ["test"])
    lines, holds, clear = claims(scored, "test")
    assert clear is True and "larger than the replicated side's seed-to-seed sd (1.41)" in lines[1]


def test_claim_with_one_seed_asks_for_replicates():
    lines, holds, clear = claims({"trf_mfcc_k128": _m(20.0), "conv_mfcc_k256": _m(25.0)}, "test")
    assert holds is True and clear is None and "one seed" in lines[0] and "replicates" in lines[1]


def test_replicated_systems_are_compared_with_replicated_ones():
    scored = {"trf_mfcc_k128": _m(30.0), "trf_mfcc_k128_seed1": _m(32.0), "trf_mfcc_k256": _m(20.0, 170.0),
              "conv_mfcc_k256": _m(28.0, 170.0), "conv_mfcc_k256_seed1": _m(30.0, 170.0)}
    add_seed_stats(scored, ["test"])
    lines, holds, clear = claims(scored, "test")
    assert holds is False and "`trf_mfcc_k128`" in lines[0]  # not the single-seed k256's 20 %
    assert not any("lowest of" in line for line in lines)  # one candidate: nothing picked
    # two replicated candidates: the lower mean is checked, the other is listed beside it
    scored.update(trf_mfcc_k256=_m(25.0, 170.0), trf_mfcc_k256_seed1=_m(27.0, 170.0))
    add_seed_stats(scored, ["test"])
    lines, holds, clear = claims(scored, "test")
    assert holds is True and "`trf_mfcc_k256` 26.00 %" in lines[0]
    assert "lowest of 2" in lines[1] and "`trf_mfcc_k128` 31.00 % ± 1.41 sd" in lines[1]
    del scored["trf_mfcc_k256_seed1"]
    # a replicated Transformer outside the bitrate window (one seed collapsed to 0 bits/s) does not let a
    # single-seed system stand in for it
    scored["trf_mfcc_k128_seed1"]["test"]["bitrate"] = 0.0
    add_seed_stats(scored, ["test"])
    lines, holds, clear = claims(scored, "test")
    assert holds is None and "No Transformer system with seed replicates" in lines[0]


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
    assert "holds on the means only" in not_done
    scored.update(_seeds("trf_mfcc_k128", [27.0, 28.0, 27.5]))  # a clear difference: no such line
    scored.update(_seeds("conv_mfcc_k256", [31.0, 31.5, 31.0]))
    add_seed_stats(scored, ["test"])
    write_md(tmp_path / "RESULTS.md", results, ["test"], "mini", "trf_mfcc_k128", plot_ok=False)
    assert "holds on the means only" not in (tmp_path / "RESULTS.md").read_text()


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
    """libriabx2's frame rule gets its own mean and sd over seeds, and the same pick is checked under it: here the
    rule flips the ordering (as it flips seed 0 of the mini run)."""
    ours, libri = {"trf": [27.0, 28.0, 27.5], "conv": [31.0, 31.5, 31.0]}, {"trf": [32.0, 33.0, 31.0],
                                                                          "conv": [30.0, 30.5, 29.5]}
    scored = {**_seeds("trf_mfcc_k256", ours["trf"]), **_seeds("conv_mfcc_k256", ours["conv"])}
    for sys_name, short in (("trf_mfcc_k256", "trf"), ("conv_mfcc_k256", "conv")):
        for i, v in enumerate(libri[short]):
            scored[sys_name if i == 0 else f"{sys_name}_seed{i}"]["test"]["abx_libri_rule"] = v
    add_seed_stats(scored, ["test"])
    t = scored["trf_mfcc_k256"]["test"]
    assert t["abx_libri_rule_seed_mean"] == pytest.approx(32.0)
    assert t["abx_libri_rule_seed_sd"] == pytest.approx(statistics.stdev(libri["trf"]))
    lines, holds, clear = claims(scored, "test")
    assert holds is True and clear is True
    rule = [l for l in lines if "libriabx2's frame rule" in l]
    assert len(rule) == 1 and "32.00 % vs conv 30.00 %" in rule[0] and "does NOT hold" in rule[0]
    follow = lines[lines.index(rule[0]) + 1]
    assert follow.startswith("  Difference (Transformer - conv) +2.00 points")
    # one seed of the conv without the libriabx2 rule: no mean under that rule, no second check
    del scored["conv_mfcc_k256_seed1"]["test"]["abx_libri_rule"]
    add_seed_stats(scored, ["test"])
    assert scored["conv_mfcc_k256"]["test"]["abx_libri_rule_seed_mean"] is None
    assert not [l for l in claims(scored, "test")[0] if "libriabx2's frame rule (the same" in l]
