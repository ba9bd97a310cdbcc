"""Confidence intervals (intervals.py) and the verdicts judged on them (rules.py)."""

import pytest

from syncq_report import intervals, rules
from syncq_report.load import Point

LINE = iter(range(1, 10_000))


def pt(algorithm, samples, launches=None, threads=2, better="lower", metric="time"):
    return Point(
        experiment="np99-counter",
        algorithm=algorithm,
        params={"threads": threads},
        metric=metric,
        unit="ms",
        better=better,
        median=sorted(samples)[len(samples) // 2] if len(samples) % 2 else
        (sorted(samples)[len(samples) // 2 - 1] + sorted(samples)[len(samples) // 2]) / 2,
        min=min(samples),
        max=max(samples),
        samples=list(samples),
        counters={},
        line=next(LINE),
        launches=launches,
    )


def ratio_rule(bound, op="ratio_below"):
    return {"op": op, "metric": "time", "num": "faa", "den": "cas", "at": {"threads": 2}, "bound": bound}


def test_one_sample_gives_a_point_interval():
    p = pt("faa", [7.0])
    assert intervals.median_interval(p) == (7.0, 7.0)
    assert intervals.ratio_interval(p, pt("cas", [14.0])) == (0.5, 0.5)


def test_interval_contains_the_estimate_and_stays_within_the_samples():
    p = pt("faa", [10.0, 11.0, 9.0, 30.0, 10.5, 9.5])
    lo, hi = intervals.median_interval(p)
    assert 9.0 <= lo <= p.median <= hi <= 30.0
    assert lo < hi


def test_same_data_same_interval():
    a, b = pt("faa", [1.0, 2.0, 1.5, 1.2]), pt("cas", [2.0, 2.5, 1.9, 3.0])
    assert intervals.ratio_interval(a, b) == intervals.ratio_interval(a, b)


def test_clearly_separated_is_held_and_the_other_way_did_not_hold():
    faa = pt("faa", [5.0, 5.2, 4.9, 5.1, 5.0, 5.3], launches=[1, 1, 1, 2, 2, 2])
    cas = pt("cas", [10.0, 10.4, 9.8, 10.1, 9.9, 10.2], launches=[1, 1, 1, 2, 2, 2])
    held = rules.evaluate(ratio_rule(0.8), [faa, cas])
    assert held.status == rules.HELD
    assert held.interval[1] < 0.8
    assert "[95% CI " in held.explanation
    assert rules.evaluate(ratio_rule(0.3), [faa, cas]).status == rules.FAILED
    assert rules.evaluate(ratio_rule(0.8, "ratio_above"), [faa, cas]).status == rules.FAILED


def test_an_interval_containing_the_bound_is_inconclusive():
    # The medians' ratio is 0.95 < 1, but the samples overlap so much that the
    # interval reaches past 1: the run cannot tell.
    faa = pt("faa", [9.0, 10.5, 8.0, 10.0, 9.5, 11.0])
    cas = pt("cas", [10.0, 9.0, 11.5, 8.5, 10.5, 9.5])
    verdict = rules.evaluate(ratio_rule(1.0), [faa, cas])
    assert verdict.status == rules.INCONCLUSIVE
    lo, hi = verdict.interval
    assert lo < 1.0 < hi
    assert rules.evaluate(ratio_rule(1.0, "ratio_above"), [faa, cas]).status == rules.INCONCLUSIVE


def test_launches_that_disagree_make_the_verdict_inconclusive():
    # Within each launch the samples are tight, but launch 1 says faa is 0.8x
    # cas and launch 2 says 1.2x: the interval must see the launches.
    launches = [1, 1, 1, 2, 2, 2]
    faa = pt("faa", [8.0, 8.1, 7.9, 12.0, 12.1, 11.9], launches=launches)
    cas = pt("cas", [10.0, 10.1, 9.9, 10.0, 10.1, 9.9], launches=launches)
    verdict = rules.evaluate(ratio_rule(1.1), [faa, cas])
    assert verdict.status == rules.INCONCLUSIVE
    lo, hi = verdict.interval
    assert lo < 0.85 and hi > 1.15


def test_pairing_cancels_a_drift_both_points_share():
    # Both slow down together (a machine drift); their ratio is always 0.5.
    drift = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    faa = pt("faa", [x * 1.0 for x in drift])
    cas = pt("cas", [x * 2.0 for x in drift])
    assert intervals.paired(faa, cas)
    lo, hi = intervals.ratio_interval(faa, cas)
    assert lo == pytest.approx(0.5) and hi == pytest.approx(0.5)
    # Not side by side (different launches): drawn independently, much wider.
    unpaired = pt("cas", [x * 2.0 for x in drift], launches=[1, 1, 1, 2, 2, 2])
    assert not intervals.paired(faa, unpaired)
    lo, hi = intervals.ratio_interval(faa, unpaired)
    assert lo < 0.4 and hi > 0.6


def test_a_zero_denominator_gives_an_unbounded_interval():
    faa = pt("faa", [1.0, 1.0, 1.0])
    cas = pt("cas", [0.0, 0.0, 2.0])
    lo, hi = intervals.ratio_interval(faa, cas)
    assert hi == float("inf")


def test_value_bound_on_the_median_interval():
    p = pt("faa", [3.0, 3.1, 2.9, 3.2, 3.0])
    rule = {"op": "value_below", "metric": "time", "algo": "faa", "at": {"threads": 2}}
    assert rules.evaluate({**rule, "bound": 3.5}, [p]).status == rules.HELD
    assert rules.evaluate({**rule, "bound": 2.5}, [p]).status == rules.FAILED
    assert rules.evaluate({**rule, "bound": 3.05}, [p]).status == rules.INCONCLUSIVE


def test_all_and_any_with_inconclusive_parts():
    faa = pt("faa", [9.0, 10.5, 8.0, 10.0, 9.5, 11.0])
    cas = pt("cas", [10.0, 9.0, 11.5, 8.5, 10.5, 9.5])
    points = [faa, cas]
    unsure, sure_held, sure_failed = ratio_rule(1.0), ratio_rule(3.0), ratio_rule(0.2)
    missing = {"op": "not_measurable", "why": "needs a ccNUMA machine"}

    def status(op, *subrules):
        return rules.evaluate({"op": op, "rules": list(subrules)}, points).status

    assert status("all", sure_held, unsure) == rules.INCONCLUSIVE
    assert status("all", sure_failed, unsure) == rules.FAILED
    assert status("all", missing, unsure) == rules.UNMEASURABLE
    assert status("any", sure_failed, unsure) == rules.INCONCLUSIVE
    assert status("any", sure_held, unsure) == rules.HELD
    assert status("any", sure_failed, missing) == rules.FAILED
