"""One verdict rule for every report: a claim is judged on the 95 % interval of its estimate, never on the point.

Comparisons (ours A vs B, the paper says A is better): the interval of the difference decides,
    holds           the whole interval lies on the paper's side of zero,
    not told apart  it contains zero (the data cannot say which is better),
    does NOT hold   the whole interval lies on the other side.
Goals (LID >= 90 %, DCF <= 0.05): the interval's bound decides,
    met        the whole interval satisfies the goal (for >=: the low end; for <=: the high end),
    not shown  the goal lies inside the interval,
    NOT met    the whole interval misses it.
Claims of several parts (every pair in order, every part of a goal): `conjunction`, positive when every part is at
95 %, negative when one part is at Bonferroni's family-wise level (`family_level`).

Intervals: `bootstrap` (percentile; resamples clusters, e.g. speakers or recordings, when items within one are not
independent: utterances of 3 speakers are 3 draws, not 91), `wilson` (a proportion: scipy's binomtest), `welch` (the
difference of two groups' means, e.g. seeds: scipy's ttest_ind).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Tuple, Union

import numpy as np

HOLDS, NOT_TOLD_APART, DOES_NOT_HOLD = "holds", "not told apart", "does NOT hold"
MET, NOT_SHOWN, NOT_MET = "met", "not shown", "NOT met"
LEVEL = 0.95
Levels = Union[float, Tuple[float, ...]]  # bootstrap's LEVEL: one level, or several (intervals from one resample set)


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    level: float = LEVEL
    method: str = ""  # how it was computed, for the report: "bootstrap over 6 speakers", "Wilson", "Welch, 3 seeds"

    def __post_init__(self):
        if not self.low <= self.estimate <= self.high and not np.isnan(self.estimate):
            raise ValueError(f"interval [{self.low}, {self.high}] does not contain its estimate {self.estimate}")

    def text(self, fmt: str = "{:+.2f}") -> str:
        """'+1.23 [-0.50, +2.96] (95 % Wilson)'."""
        how = f"{self.level * 100:.4g} %" + (f" {self.method}" if self.method else "")
        return f"{fmt.format(self.estimate)} [{fmt.format(self.low)}, {fmt.format(self.high)}] ({how})"


Intervals = Union[Interval, Tuple[Interval, ...]]  # bootstrap's result: one per level of a tuple LEVEL


def family_level(parts: int, level: float = LEVEL) -> float:
    """Bonferroni's level for each of PARTS intervals when any one of them can decide a claim (a union: "one pair is
    reversed", "one part misses its goal"), so the claim errs at most 1 - LEVEL; a claim that needs all of them (an
    intersection) keeps LEVEL."""
    return 1 - (1 - level) / max(parts, 1)


_VOCABULARIES = ((MET, NOT_SHOWN, NOT_MET), (HOLDS, NOT_TOLD_APART, DOES_NOT_HOLD))  # (positive, undecided, negative)


def conjunction(at_level: Sequence[str], at_family: Sequence[str]) -> str:
    """The verdict on a claim that needs every one of its parts (a goal of several parts, an ordering of several
    pairs). AT_LEVEL: each part's verdict on its LEVEL interval; AT_FAMILY: the same parts' verdicts on their
    family_level(len(parts)) intervals. Negative (NOT met, does NOT hold) when one part is negative at the family
    level: any one part can decide it, a union, so Bonferroni's level keeps the claim's error at 1 - LEVEL; positive
    when every part is at LEVEL: an intersection needs no adjustment; else undecided (not shown, not told apart),
    or the word of a part that has no interval (e.g. "no verdict")."""
    if len(at_level) != len(at_family) or not at_level:
        raise ValueError(f"conjunction: {len(at_level)} and {len(at_family)} parts; give each part at both levels")
    words = [v for v in (*at_level, *at_family) if v in _VOCABULARIES[0] + _VOCABULARIES[1]]
    vocabulary = next((k for k in _VOCABULARIES if all(v in k for v in words)), None)
    if vocabulary is None:
        raise ValueError(f"conjunction: goal and comparison verdicts mixed: {', '.join(words)}")
    positive, undecided, negative = vocabulary
    if negative in at_family:
        return negative
    if all(v == positive for v in at_level):
        return positive
    return next((v for v in at_level if v not in vocabulary), undecided)


def compare(diff: Interval, paper_sign: int) -> str:
    """The verdict on a difference DIFF (A - B) when the paper says its sign is PAPER_SIGN (+1: A above B, -1: below)."""
    if paper_sign not in (1, -1):
        raise ValueError(f"paper_sign must be +1 or -1, got {paper_sign}")
    if diff.low > 0:
        side = 1
    elif diff.high < 0:
        side = -1
    else:
        return NOT_TOLD_APART
    return HOLDS if side == paper_sign else DOES_NOT_HOLD


def goal(value: Interval, threshold: float, direction: str) -> str:
    """The verdict on a goal VALUE >= THRESHOLD (direction '>=') or VALUE <= THRESHOLD ('<=')."""
    if direction == ">=":
        return MET if value.low >= threshold else NOT_MET if value.high < threshold else NOT_SHOWN
    if direction == "<=":
        return MET if value.high <= threshold else NOT_MET if value.low > threshold else NOT_SHOWN
    raise ValueError(f"direction must be '>=' or '<=', got {direction!r}")


def bootstrap(stat: Callable[..., float], *arrays: Sequence, clusters: Optional[Sequence] = None,
              level: Levels = LEVEL, n: int = 2000, seed: int = 0,
              what: str = "items") -> Intervals:
    """Percentile bootstrap interval of STAT(*ARRAYS) (arrays aligned item by item, so paired data stay paired).
    With CLUSTERS (one label per item, e.g. the speaker), whole clusters are resampled with replacement: the interval
    of data whose items within a cluster are alike is as wide as the number of clusters warrants. LEVEL a tuple
    (e.g. (LEVEL, family_level(k)) for `conjunction`): a tuple of intervals, one per level, from one set of
    resamples (the same intervals as one call per level with the same seed, for the price of one)."""
    several = isinstance(level, (tuple, list))
    levels = tuple(level) if several else (level,)
    data = [np.asarray(a, dtype=float) for a in arrays]
    size = len(data[0])
    if any(len(a) != size for a in data):
        raise ValueError("bootstrap: the arrays differ in length")
    if size < 2:
        raise ValueError(f"bootstrap: {size} item(s); need at least 2")
    labels = np.arange(size) if clusters is None else np.asarray(clusters)
    if len(labels) != size:
        raise ValueError("bootstrap: one cluster label per item")
    groups = [np.flatnonzero(labels == c) for c in np.unique(labels)]
    if len(groups) < 2:
        raise ValueError("bootstrap: one cluster; an interval needs at least 2")
    rng = np.random.default_rng(seed)
    stats = np.empty(n)
    for i in range(n):
        idx = np.concatenate([groups[j] for j in rng.integers(len(groups), size=len(groups))])
        stats[i] = stat(*(a[idx] for a in data))
    est = float(stat(*data))
    unit = what if clusters is None else "clusters" if what == "items" else what
    out = []
    for lv in levels:
        lo, hi = np.quantile(stats, [(1 - lv) / 2, (1 + lv) / 2])
        out.append(Interval(est, min(float(lo), est), max(float(hi), est), lv, f"bootstrap over {len(groups)} {unit}"))
    return tuple(out) if several else out[0]


def wilson(successes: int, trials: int, level: float = LEVEL, scale: float = 100.0) -> Interval:
    """A proportion (x SCALE, default per cent) with its Wilson score interval."""
    from scipy.stats import binomtest

    if trials < 1:
        raise ValueError("wilson: no trials")
    ci = binomtest(int(successes), int(trials)).proportion_ci(confidence_level=level, method="wilson")
    return Interval(scale * successes / trials, scale * ci.low, scale * ci.high, level,
                    f"Wilson, {successes}/{trials}")


def welch(a: Sequence[float], b: Sequence[float], level: float = LEVEL, what: str = "runs") -> Interval:
    """mean(A) - mean(B) with Welch's t interval (e.g. A and B: one score per training seed)."""
    from scipy.stats import ttest_ind

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) < 2 or len(b) < 2:
        raise ValueError(f"welch: {len(a)} and {len(b)} {what}; need at least 2 on each side")
    diff = float(a.mean() - b.mean())
    if a.std() == 0 and b.std() == 0:  # identical runs: the difference is exact
        return Interval(diff, diff, diff, level, f"Welch, {len(a)} vs {len(b)} {what}")
    ci = ttest_ind(a, b, equal_var=False).confidence_interval(confidence_level=level)
    return Interval(diff, float(ci.low), float(ci.high), level, f"Welch, {len(a)} vs {len(b)} {what}")


def sentence(claim: str, verdict: str, interval: Interval, chosen_on: str = "", fmt: str = "{:+.2f}") -> str:
    """One report line: '<claim>: **holds**, +1.23 [+0.40, +2.10] (95 % bootstrap over 6 speakers); chosen on dev.'
    Only 'holds' and 'met' are set in bold; the rest reads as plainly as it is."""
    shown = f"**{verdict}**" if verdict in (HOLDS, MET) else verdict
    tail = f"; chosen on {chosen_on}" if chosen_on else ""
    return f"{claim}: {shown}, {interval.text(fmt)}{tail}."
