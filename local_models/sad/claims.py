"""The SAD report's headline verdicts, judged on 95 % intervals (common/verdict.py), never on the points.

Units of the bootstrap: frames of one recording are not independent draws, so the bootstrap resamples recordings
when a set has at least MIN_UNITS of them; with fewer (the mini corpus: 2 per set) it resamples one-minute chunks of
the recordings (metrics.CHUNK_S) and says so: chunks of one recording share its voices and noise, so that interval
is narrower than one over recordings would be. With fewer than MIN_UNITS chunks too there is no interval, and no
verdict: the line says why rather than judging points.

Each scored set's rows (report.score_system, results.json "chunks"): [rec, start, end, [tp, fp, tn, fn] at the 0.5 s
collar, [tp, fp, tn, fn] without collar, {kind: [seconds the kind sounds over non-speech, of them called speech]}].
"""
from __future__ import annotations

from functools import partial
from typing import Dict, List, Optional, Sequence, Tuple

from local_models.common.verdict import (DOES_NOT_HOLD, HOLDS, LEVEL, MET, Interval, Intervals, Levels, bootstrap,
                                         compare, conjunction, family_level, goal)

from .metrics import CHUNK_S, dcf_of_counts

MIN_UNITS = 5  # recordings (else chunks) a bootstrap needs; fewer: no interval
NO_VERDICT = "no verdict"
COUNTS = {"dcf": 3, "dcf_no_collar": 4}  # results.json key -> the chunk row's counts column


GoalPart = Tuple[str, str, Optional[Interval], str]  # (name, verdict, interval or None, why none)


class NoInterval(ValueError):
    """Too few units to resample: the claim gets no verdict."""


def units(rows: Sequence) -> Tuple[Optional[list], str]:
    """(bootstrap clusters, what they are) for a set's chunk ROWS: recordings when there are MIN_UNITS, else chunks
    (clusters None: each chunk a unit); NoInterval when there are fewer than MIN_UNITS chunks as well."""
    recs = [r[0] for r in rows]
    n_rec = len(set(recs))
    if n_rec >= MIN_UNITS:
        return recs, "recordings"
    if len(rows) >= MIN_UNITS:
        return None, f"{CHUNK_S / 60:g}-minute chunks of {n_rec} recording{'s' if n_rec != 1 else ''}"
    raise NoInterval(f"{n_rec} recording{'s' if n_rec != 1 else ''}, {len(rows)} chunk{'s' if len(rows) != 1 else ''} "
                     f"of {CHUNK_S:g} s: fewer than {MIN_UNITS} units to resample")


def aligned(*row_lists: Sequence) -> List[list]:
    """The chunk rows of several systems on one set, paired by (recording, start): the rows all of them have."""
    keyed = [{(r[0], r[1]): r for r in rows} for rows in row_lists]
    keys = sorted(set.intersection(*(set(k) for k in keyed)))
    return [[k[r] for r in keys] for k in keyed]


def dcf_diff(rows_a: Sequence, rows_b: Sequence, key: str = "dcf", half_b: bool = False,
             level: Levels = LEVEL) -> Intervals:
    """Interval of DCF(A) - DCF(B) (x 0.5 for B with HALF_B), in % points, paired over the chunks both have (a
    tuple of LEVEL: one interval per level, from one set of resamples)."""
    a, b = aligned(rows_a, rows_b)
    clusters, what = units(a)
    col = COUNTS[key]
    scale = 0.5 if half_b else 1.0
    return bootstrap(lambda x, y: 100 * (dcf_of_counts(x) - scale * dcf_of_counts(y)),
                     [r[col] for r in a], [r[col] for r in b], clusters=clusters, what=what, level=level)


def fa_share(rows: Sequence, kind: str, level: Levels = LEVEL) -> Intervals:
    """Interval (at LEVEL; a tuple: one per level) of the false-alarm share (%) of KIND over the chunks where it sounds
    over non-speech."""
    have = [r for r in rows if kind in r[5]]
    clusters, what = units(have)
    secs = [r[5][kind] for r in have]
    return bootstrap(lambda x: 100 * x[:, 1].sum() / x[:, 0].sum(), secs, clusters=clusters,
                     what=f"{what} where {kind} sounds" if clusters is None else what, level=level)


def combine_comparisons(results: List[Tuple[str, Interval, str]],
                        reversed_: Optional[List[Tuple[str, Interval, str]]] = None) -> Tuple[str, str, Interval]:
    """The claim A1 < B1 and A2 < B2 ...: (verdict.conjunction's verdict, the pair that decides, its interval) from
    RESULTS [(pair, interval, verdict)] at 95 % and REVERSED_ (the same pairs at the family-wise level; default
    RESULTS). The pair shown: the first reversed at the family-wise level; when the claim holds, the one nearest
    zero; else the first not shown to hold (a pair above zero at 95 % but not at the family-wise level with the
    family-wise interval, the one that straddles zero)."""
    family = reversed_ if reversed_ is not None else results
    verdict = conjunction([v for _, _, v in results], [v for _, _, v in family])
    if verdict == DOES_NOT_HOLD:
        return next((v, pair, iv) for pair, iv, v in family if v == DOES_NOT_HOLD)
    if verdict == HOLDS:
        pair, iv, _ = max(results, key=lambda r: r[1].high)  # all below zero: the weakest
        return verdict, pair, iv
    wide = {pair: iv for pair, iv, _ in family}
    pair, iv, v = next(r for r in results if r[2] != HOLDS)
    return verdict, pair, wide[pair] if v == DOES_NOT_HOLD else iv


def ordering_verdict(rows: Dict[str, Sequence], pairs: Sequence[Tuple[str, str]], key: str,
                     labels: Dict[str, str]) -> Tuple[str, str, Interval]:
    """The paper's ordering (every A of PAIRS below its B on DCF KEY) on chunk ROWS {system: rows}; NoInterval when
    the set has too few units. "Holds" needs every pair's 95 % interval below zero: an intersection of claims, each
    tested at 5 %, is itself tested at 5 % (no adjustment). "Does NOT hold" needs one pair's interval above zero
    among len(PAIRS): a union, so those intervals are Bonferroni-adjusted (99 % for 5 pairs), else five chances at
    2.5 % (one side of a 95 % interval) would call a true ordering reversed up to about one time in eight."""
    judged, adjusted = [], []
    family = family_level(len(pairs))
    for a, b in pairs:
        name = f"{labels[a]} - {labels[b]}"
        iv, iv_f = dcf_diff(rows[a], rows[b], key, level=(LEVEL, family))
        judged.append((name, iv, compare(iv, -1)))
        adjusted.append((name, iv_f, compare(iv_f, -1)))
    return combine_comparisons(judged, adjusted)


def combine_goals(parts: List[GoalPart], family: Optional[List[GoalPart]] = None) -> str:
    """The goal of several PARTS [(name, verdict, interval, why)] at 95 % and FAMILY (the same parts at the
    family-wise level: goal_parts' second list; default PARTS): verdict.conjunction's rule,
    NOT met when one part's family-wise interval misses its bound, else met when every 95 % one meets it, else no
    verdict when a part has no interval, else not shown."""
    return conjunction([p[1] for p in parts], [p[1] for p in (family if family is not None else parts)])


def goal_parts(best_rows: Sequence, silero_rows: Sequence, fa_rows: Sequence, kinds: Sequence[str],
               fa_bound: float) -> Tuple[List[GoalPart], List[GoalPart]]:
    """The eval_ood goal's parts [(name, verdict, interval or None, why none)] at 95 % and at the parts' family-wise
    level (family_level of their number; combine_goals' PARTS and FAMILY), each part's two intervals from one set of
    resamples: the best system's DCF without collar at most half of silero-vad's (the difference below 0), and its
    false-alarm share of each of KINDS at most FA_BOUND (FA_ROWS: its rows at the operating point judged)."""
    levels = (LEVEL, family_level(1 + len(kinds)))

    def judged(name: str, bound: float, intervals) -> List[GoalPart]:
        """NAME's part at each level: INTERVALS() gives its interval at each of LEVELS, each judged against BOUND."""
        try:
            return [(name, goal(iv, bound, "<="), iv, "") for iv in intervals()]
        except NoInterval as e:
            return [(name, NO_VERDICT, None, str(e))] * len(levels)

    by_part = [judged("DCF no collar - half of silero-vad's", 0.0,
                      partial(dcf_diff, best_rows, silero_rows, "dcf_no_collar", half_b=True, level=levels))]
    by_part += [judged(f"FA {kind}", 100 * fa_bound, partial(fa_share, fa_rows, kind, levels)) for kind in kinds]
    at_95, at_family = (list(parts) for parts in zip(*by_part))
    return at_95, at_family


def shown(verdict: str) -> str:
    """A verdict as the report sets it: bold only where it holds or is met (verdict.sentence's rule)."""
    return f"**{verdict}**" if verdict in (HOLDS, MET) else verdict

