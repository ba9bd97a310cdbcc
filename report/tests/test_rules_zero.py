# SPDX-License-Identifier: BSD-2-Clause
"""A denominator whose median is 0 (docs/results-format.md, "Verdict rules"): a ratio
over it is undefined, in the point estimate and in every bootstrap replicate where it
happens. The interval counts an undefined replicate as unbounded both ways (never as 0
or inf, the limits that would decide a verdict), and a rule whose ratio is undefined in
more than intervals.TAIL of the replicates is inconclusive, naming the denominator.

A time never reaches 0, so the points are built by hand: samples of 0 in a
denominator whose median is still positive make some replicates' median 0."""

import math

from syncq_report import intervals, rules
from syncq_report.load import Point

LINE = iter(range(1, 10_000))
INF = math.inf


def pt(algorithm, samples, **params):
    ordered = sorted(samples)
    return Point(
        experiment="e",
        algorithm=algorithm,
        params=params,
        metric="m",
        unit="u",
        better="lower",
        median=ordered[len(ordered) // 2],
        min=ordered[0],
        max=ordered[-1],
        samples=list(samples),
        counters={},
        line=next(LINE),
        family="queue",
        props="fifo",
    )


TENS = [10.0] * 7
SOME_ZEROS = [0.0, 0.0, 0.0, 10.0, 10.0, 10.0, 10.0]  # median 10; about 29% of replicates' median is 0


def change_points(num=TENS, den=TENS, base_num=TENS, base_den=TENS):
    return [
        pt("a", num, threads=2, level=3),
        pt("b", den, threads=2, level=3),
        pt("a", base_num, threads=2, level=1),
        pt("b", base_den, threads=2, level=1),
    ]


def change(op, bound):
    return {"op": op, "metric": "m", "num": "a", "den": "b", "where": {"level": 3}, "base": {"level": 1},
            "bound": bound}


def test_a_zero_baseline_denominator_is_undefined_in_every_replicate():
    """(a/b) / (a/0): the baseline ratio's denominator is 0 in every replicate. Read as
    x/0 = inf, the ratio of ratios would be top/inf = 0 in every replicate, an interval
    of (0, 0) that holds any 'below' bound."""
    points = change_points(base_den=[0.0] * 7)
    assert intervals.ratio_of_ratios_interval(*points) == (-INF, INF)
    assert intervals.ratio_of_ratios_undefined_share(*points) == 1.0


def test_a_zero_baseline_numerator_and_zero_over_zero_are_undefined():
    points = change_points(base_num=[0.0] * 7)
    assert intervals.ratio_of_ratios_interval(*points) == (-INF, INF)
    zeros = [pt("a", [0.0] * 7), pt("b", [0.0] * 7)]
    assert intervals.ratio_interval(*zeros) == (-INF, INF)
    assert intervals.ratio_undefined_share(*zeros) == 1.0
    # one sample each: the medians' ratio, undefined too
    assert intervals.ratio_interval(pt("a", [1.0]), pt("b", [0.0])) == (-INF, INF)


def test_replicates_with_a_zero_median_leave_the_interval_unbounded():
    """A positive median over samples of 0: some replicates' median is 0. Those are
    undefined, not 0 (base_den) or inf (den, base_num)."""
    for where in ("den", "base_num", "base_den"):
        points = change_points(**{where: SOME_ZEROS})
        share = intervals.ratio_of_ratios_undefined_share(*points)
        assert 0.15 < share < 0.45, where
        assert intervals.ratio_of_ratios_interval(*points) == (-INF, INF), where
    # a share below the tail moves the ends as little as it is: the defined values bound them
    few = pt("b", [0.0] + [10.0] * 40, threads=2, level=1)
    points = change_points()[:3] + [few]
    assert intervals.ratio_of_ratios_undefined_share(*points) < intervals.TAIL
    assert intervals.ratio_of_ratios_interval(*points) == (1.0, 1.0)


def test_a_change_over_a_zero_median_replicate_is_inconclusive_with_the_reason():
    """The change is 1 at its estimate. Old reading: 29% of replicates 0, the others 1,
    an interval (0, 1): 'below 2' held and 'above 2' did not hold, both from x/0."""
    points = change_points(base_den=SOME_ZEROS)
    for op in ("ratio_change_below", "ratio_change_above"):
        verdict = rules.evaluate(change(op, 2.0), points)
        assert verdict.status == rules.INCONCLUSIVE, op
        assert "baseline b m at level=1, threads=2 has median 0 in some replicates" in verdict.explanation
        assert "(3 of its 7 samples are 0)" in verdict.explanation
        assert "of the bootstrap's replicates" in verdict.explanation
    # a zero baseline numerator: read as inf, (1, inf) held 'above 0.5'
    points = change_points(base_num=SOME_ZEROS)
    verdict = rules.evaluate(change("ratio_change_above", 0.5), points)
    assert verdict.status == rules.INCONCLUSIVE
    assert "baseline a m at level=1, threads=2 has median 0" in verdict.explanation
    # without the zeros, the same rules decide
    assert rules.evaluate(change("ratio_change_below", 2.0), change_points()).status == rules.HELD
    assert rules.evaluate(change("ratio_change_above", 2.0), change_points()).status == rules.FAILED


def test_a_ratio_over_a_zero_median_replicate_is_inconclusive_with_the_reason():
    """ratio_above: den's replicates of median 0 read as inf held 'above 0.5'."""
    points = [pt("a", TENS, threads=2), pt("b", SOME_ZEROS, threads=2)]
    rule = {"op": "ratio_above", "metric": "m", "num": "a", "den": "b", "bound": 0.5}
    verdict = rules.evaluate(rule, points)
    assert verdict.status == rules.INCONCLUSIVE
    assert "b m at threads=2 has median 0 in some replicates (3 of its 7 samples are 0)" in verdict.explanation
    points = [pt("a", TENS, threads=2), pt("b", TENS, threads=2)]
    assert rules.evaluate(rule, points).status == rules.HELD


def test_a_zero_median_point_is_not_measurable_naming_the_baseline():
    for where, role in (("den", "b has"), ("base_num", "baseline a has"), ("base_den", "baseline b has")):
        verdict = rules.evaluate(change("ratio_change_above", 1.0), change_points(**{where: [0.0] * 7}))
        assert verdict.status == rules.UNMEASURABLE, where
        assert f"{role} median 0 at " in verdict.explanation and "the change is undefined" in verdict.explanation
