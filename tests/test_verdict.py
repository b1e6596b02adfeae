"""local_models/common/verdict.py: the one verdict rule (interval side, not point estimate) and its intervals,
each against a reference (scipy, a hand count, a slow loop)."""
import numpy as np
import pytest
from scipy.stats import bootstrap as scipy_bootstrap

from local_models.common import verdict as v


def iv(est, lo, hi):
    return v.Interval(est, lo, hi)


@pytest.mark.parametrize("interval, sign, want", [
    (iv(-2.0, -3.0, -1.0), -1, v.HOLDS),
    (iv(-0.5, -3.04, 2.04), -1, v.NOT_TOLD_APART),   # ZeroSpeech's straddling difference: not "holds"
    (iv(-1.0, -2.0, 0.0), -1, v.NOT_TOLD_APART),     # touching zero is not apart
    (iv(2.0, 1.0, 3.0), -1, v.DOES_NOT_HOLD),
    (iv(2.0, 1.0, 3.0), 1, v.HOLDS),
])
def test_compare(interval, sign, want):
    assert v.compare(interval, sign) == want


def test_goal_on_the_bound():
    lid = v.wilson(84, 91)  # Indic's LID >= 90 %: the point (92.3 %) passes, the interval's low end does not
    assert lid.estimate == pytest.approx(92.31, abs=0.01) and lid.low < 90 < lid.high
    assert v.goal(lid, 90, ">=") == v.NOT_SHOWN
    assert v.goal(iv(95, 91, 97), 90, ">=") == v.MET and v.goal(iv(85, 80, 89.9), 90, ">=") == v.NOT_MET
    assert v.goal(iv(0.04, 0.03, 0.05), 0.05, "<=") == v.MET
    assert v.goal(iv(0.04, 0.03, 0.06), 0.05, "<=") == v.NOT_SHOWN
    assert v.goal(iv(0.07, 0.06, 0.08), 0.05, "<=") == v.NOT_MET
    with pytest.raises(ValueError, match="direction"):
        v.goal(lid, 90, ">")
    with pytest.raises(ValueError, match="paper_sign"):
        v.compare(lid, 0)


def test_wilson_matches_the_formula():
    k, n, z = 84, 91, 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    got = v.wilson(k, n)
    assert got.low == pytest.approx(100 * (centre - half), abs=1e-6) and got.high == pytest.approx(100 * (centre + half), abs=1e-6)


def test_item_bootstrap_agrees_with_scipy():
    x = np.random.default_rng(1).normal(1.0, 2.0, 200)
    ours = v.bootstrap(np.mean, x, n=4000, seed=3)
    ref = scipy_bootstrap((x,), np.mean, n_resamples=4000, method="percentile", random_state=4).confidence_interval
    assert ours.low == pytest.approx(ref.low, abs=0.06) and ours.high == pytest.approx(ref.high, abs=0.06)
    assert ours.method == "bootstrap over 200 items" and ours.estimate == pytest.approx(x.mean())
    assert v.bootstrap(np.mean, x, n=500, seed=3) == v.bootstrap(np.mean, x, n=500, seed=3)  # seeded


def test_cluster_bootstrap_is_as_wide_as_the_clusters_warrant():
    """Three speakers with 30 near-identical utterances each: resampling utterances pretends there are 90 draws."""
    rng = np.random.default_rng(0)
    speaker_means = (0.0, 1.0, 5.0)
    x = np.concatenate([m + 0.01 * rng.standard_normal(30) for m in speaker_means])
    spk = np.repeat(["a", "b", "c"], 30)
    items = v.bootstrap(np.mean, x, n=1000)
    clustered = v.bootstrap(np.mean, x, clusters=spk, n=1000, what="speakers")
    assert clustered.method == "bootstrap over 3 speakers"
    assert (clustered.high - clustered.low) > 2.5 * (items.high - items.low)
    # the slow reference: every resample of 3 speakers out of 3 (27 equally likely draws) bounds the interval
    means = [np.mean([speaker_means[i], speaker_means[j], speaker_means[k]])
             for i in range(3) for j in range(3) for k in range(3)]
    assert min(means) - 0.01 <= clustered.low and clustered.high <= max(means) + 0.01


def test_several_levels_from_one_set_of_resamples_equal_one_call_per_level():
    """A claim of several parts needs each interval at 95 % and at the family-wise level: one resample set serves both."""
    rng = np.random.default_rng(1)
    x, y, spk = rng.normal(size=40), rng.normal(size=40), np.arange(40) // 4
    stat = lambda a, b: (a - b).mean()  # noqa: E731
    levels = (v.LEVEL, v.family_level(3))
    both = v.bootstrap(stat, x, y, clusters=spk, level=levels, n=500)
    assert both == tuple(v.bootstrap(stat, x, y, clusters=spk, level=lv, n=500) for lv in levels)
    assert both[1].low < both[0].low and both[0].high < both[1].high  # the family-wise one is wider
    assert v.bootstrap(stat, x, y, level=(0.9,), n=100)[0].level == 0.9  # a one-level tuple gives a tuple


def test_paired_ratio_statistic():
    """WER difference: errors and words resampled together, utterance by utterance."""
    ea, eb, words = np.array([1, 0, 2, 3, 1, 0]), np.array([2, 1, 2, 4, 2, 1]), np.array([5, 4, 6, 8, 5, 3])
    d = v.bootstrap(lambda a, b, w: 100 * (a.sum() - b.sum()) / w.sum(), ea, eb, words, n=1000)
    assert d.estimate == pytest.approx(100 * (7 - 12) / 31)
    assert d.high < 0 and v.compare(d, -1) == v.HOLDS  # A never makes more errors than B on any utterance


def test_welch_against_scipy_and_identical_runs():
    a, b = [10.1, 10.6, 9.8], [12.0, 12.9, 11.5]
    d = v.welch(a, b, what="seeds")
    assert d.estimate == pytest.approx(np.mean(a) - np.mean(b)) and d.high < 0
    assert d.method == "Welch, 3 vs 3 seeds"
    assert v.welch([1, 1], [2, 2]) == v.Interval(-1.0, -1.0, -1.0, method="Welch, 2 vs 2 runs")
    with pytest.raises(ValueError, match="need at least 2"):
        v.welch([1.0], [2.0, 3.0])


def test_bad_input():
    with pytest.raises(ValueError, match="differ in length"):
        v.bootstrap(np.mean, [1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="one cluster"):
        v.bootstrap(np.mean, [1, 2, 3], clusters=["s", "s", "s"])
    with pytest.raises(ValueError, match="does not contain"):
        v.Interval(5.0, 0.0, 1.0)


def test_sentence():
    d = iv(-0.5, -3.04, 2.04)
    assert v.sentence("Transformer beats conv on ABX", v.compare(d, -1), d, "dev") == (
        "Transformer beats conv on ABX: not told apart, -0.50 [-3.04, +2.04] (95 %); chosen on dev.")
    h = v.Interval(-2.0, -3.0, -1.0, method="bootstrap over 6 speakers")
    assert v.sentence("x", v.HOLDS, h) == "x: **holds**, -2.00 [-3.00, -1.00] (95 % bootstrap over 6 speakers)."


def test_family_level_is_bonferronis():
    from local_models.common.verdict import family_level

    assert family_level(5) == pytest.approx(0.99) and family_level(2) == pytest.approx(0.975)
    assert family_level(1) == family_level(0) == pytest.approx(0.95)  # one part (or none): no adjustment


def test_a_claim_of_several_parts_is_negative_on_a_family_wise_interval_and_positive_on_every_95_one():
    M, S, N = v.MET, v.NOT_SHOWN, v.NOT_MET
    assert v.conjunction([M, M, M], [M, S, M]) == M  # every part met at 95 %: met (an intersection needs no adjustment)
    assert v.conjunction([M, N, M], [M, S, M]) == S  # missed at 95 % only: one of three chances, not shown
    assert v.conjunction([M, N, M], [M, N, M]) == N  # missed on its family-wise interval too
    assert v.conjunction([M, "no verdict"], [M, "no verdict"]) == "no verdict"  # a part without an interval
    assert v.conjunction(["no verdict", N], ["no verdict", N]) == N  # ... unless another part decides
    assert v.conjunction([v.HOLDS, v.HOLDS], [v.HOLDS, v.NOT_TOLD_APART]) == v.HOLDS
    assert v.conjunction([v.HOLDS, v.DOES_NOT_HOLD], [v.HOLDS, v.NOT_TOLD_APART]) == v.NOT_TOLD_APART
    assert v.conjunction([v.HOLDS, v.DOES_NOT_HOLD], [v.HOLDS, v.DOES_NOT_HOLD]) == v.DOES_NOT_HOLD
    with pytest.raises(ValueError, match="mixed"):
        v.conjunction([M, v.HOLDS], [M, v.HOLDS])
    with pytest.raises(ValueError, match="both levels"):
        v.conjunction([M, M], [M])
    assert v.Interval(1.0, 0.5, 1.5, v.family_level(3)).text() == "+1.00 [+0.50, +1.50] (98.33 %)"
