# SPDX-License-Identifier: BSD-2-Clause
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


def test_launches_of_unequal_sizes_draw_whole_launches_of_each_slots_size():
    """The j-th slot of a replicate takes as many samples as launch j has, all
    from one drawn launch (the cluster bootstrap), and every launch is drawn."""
    import numpy as np

    labels = np.asarray([1] * 5 + [2] * 2 + [3] * 9)
    rows = intervals._indices(labels, np.random.default_rng(7), 500)
    assert rows.shape == (500, 16)
    seen = set()
    for row in rows:
        start = 0
        for size in (5, 2, 9):
            block = labels[row[start : start + size]]
            assert len(set(block)) == 1  # one launch per slot
            seen.add(int(block[0]))
            start += size
    assert seen == {1, 2, 3}
    # within a drawn launch every sample is reachable, none beyond it
    assert set(rows[:, 0]) == set(range(16))


def test_unequal_launches_give_an_interval_around_the_estimate():
    p = pt("faa", [10.0, 10.2, 9.9, 10.1, 10.0, 11.0, 10.5, 12.0], launches=[1, 1, 1, 1, 1, 2, 2, 3])
    lo, hi = intervals.median_interval(p)
    assert 9.9 <= lo <= p.median <= hi <= 12.0


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
    p = pt("faa", [3.0, 3.1, 2.9, 3.2, 3.0, 3.1])
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


# ---- the experiment's launch-to-launch resolution ----

TWO = [1, 1, 1, 2, 2, 2]


def test_resolution_pools_the_spread_of_ratios_between_launches():
    # Three algorithms at one point; against the reference "cas", "faa" moves
    # by a factor e^0.1 between launches and "ticket" by e^-0.1.
    e = 2.718281828459045
    cas = pt("cas", [10.0] * 6, launches=TWO)
    faa = pt("faa", [5.0] * 3 + [5.0 * e**0.1] * 3, launches=TWO)
    ticket = pt("ticket", [20.0] * 3 + [20.0 * e**-0.1] * 3, launches=TWO)
    res = intervals.resolution([cas, faa, ticket])
    assert res.comparisons == 3  # every pair: cas-faa, cas-ticket, faa-ticket
    assert res.launches == 2
    # cas-faa and cas-ticket: two launch estimates 0.1 apart, variance 0.005
    # (1 df); faa-ticket 0.2 apart, 0.02; the median, 0.005, scaled by the
    # median of chi2_1 (about 0.47)
    assert res.ratio_sd == pytest.approx((0.005 / intervals._chi2_median_over_df(1)) ** 0.5)
    # the single points' own spread, per metric: cas does not move, faa and ticket by 0.1
    assert res.value_sd["time"] == pytest.approx((0.005 / intervals._chi2_median_over_df(1)) ** 0.5)


def test_one_point_with_a_wild_launch_does_not_set_its_groups_resolution():
    # "anderson" (first by name) is 10x slower in its second launch; the four
    # others agree between launches. Pooled over every pair, 4 of the 10
    # comparisons see the wild launch and the median does not: the group's
    # resolution is the others' (none), not anderson's.
    wild = pt("anderson", [10.0] * 3 + [100.0] * 3, launches=TWO)
    steady = [pt(name, [v] * 6, launches=TWO) for name, v in (("cas", 5.0), ("faa", 4.0), ("mcs", 6.0), ("tas", 7.0))]
    res = intervals.resolution([wild] + steady)
    assert res.comparisons == 10
    assert res.ratio_sd == pytest.approx(0.0, abs=1e-9)


def test_one_launch_has_no_resolution_and_widens_nothing():
    a = pt("faa", [5.0, 5.1, 4.9])
    b = pt("cas", [10.0, 10.1, 9.9])
    res = intervals.resolution([a, b])
    assert res.ratio_sd is None
    assert intervals.resolved_ratio_interval(a, b, res) == intervals.ratio_interval(a, b)


def test_derived_ratio_points_are_not_pooled():
    a = pt("faa", [1.0, 1.0, 1.0, 2.0, 2.0, 2.0], launches=TWO)
    b = pt("cas", [1.0] * 6, launches=TWO)
    a.unit = b.unit = "x"
    assert intervals.resolution([a, b]).comparisons == 0


def test_a_ratio_inside_the_experiments_resolution_is_inconclusive(monkeypatch):
    """faa/cas is 0.97 in both launches (a tight interval of its own: held
    against < 1.0 alone), but the experiment's other comparisons move by 10%
    between launches: at that resolution 3% cannot be called."""
    monkeypatch.setattr(intervals, "RUN_TO_RUN_SD", 0.0)
    faa = pt("faa", [9.7, 9.7, 9.7, 9.7, 9.7, 9.7], launches=TWO)
    cas = pt("cas", [10.0] * 6, launches=TWO)
    alone = rules.evaluate(ratio_rule(1.0), [faa, cas])
    assert alone.status == rules.HELD
    others = []
    for i in range(5):
        ref = pt(f"ref{i}", [10.0] * 6, launches=TWO, threads=4)
        other = pt(f"zz{i}", [10.0] * 3 + [11.0] * 3, launches=TWO, threads=4)
        others += [ref, other]
    widened = rules.evaluate(ratio_rule(1.0), [faa, cas] + others)
    assert widened.status == rules.INCONCLUSIVE
    lo, hi = widened.interval
    assert lo < 0.97 < 1.0 < hi
    # a difference well beyond the resolution is still decided
    fast = pt("faa", [5.0] * 6, launches=TWO)
    assert rules.evaluate(ratio_rule(1.0), [fast, cas] + others).status == rules.HELD


def test_a_small_difference_is_inconclusive_at_the_run_to_run_spread(monkeypatch):
    """Launches that agree exactly still leave the spread between runs: 3% is
    inside it (at 0.03, 95% is +-6%), 20% is not."""
    monkeypatch.setattr(intervals, "RUN_TO_RUN_SD", 0.03)
    cas = pt("cas", [10.0] * 6, launches=TWO)
    near = rules.evaluate(ratio_rule(1.0), [pt("faa", [9.7] * 6, launches=TWO), cas])
    assert near.status == rules.INCONCLUSIVE
    far = rules.evaluate(ratio_rule(1.0), [pt("faa", [8.0] * 6, launches=TWO), cas])
    assert far.status == rules.HELD


def test_widen_keeps_a_wider_interval():
    assert intervals.widen((0.5, 2.0), 1.0, 0.01, 2) == (0.5, 2.0)
    lo, hi = intervals.widen((0.99, 1.01), 1.0, 0.1, 4, run_sd=0.0)
    z = intervals.critical_value()
    assert lo == pytest.approx(2.718281828459045 ** (-z * 0.05))
    assert hi == pytest.approx(2.718281828459045 ** (z * 0.05))


def test_the_run_to_run_spread_adds_to_the_launches():
    z = intervals.critical_value()
    lo, hi = intervals.widen((0.99, 1.01), 1.0, 0.1, 4, run_sd=0.05)
    assert hi == pytest.approx(2.718281828459045 ** (z * (0.1**2 / 4 + 0.05**2) ** 0.5))
    # one launch: no resolution, the bootstrap's interval alone
    assert intervals.widen((0.99, 1.01), 1.0, 0.1, 1, run_sd=0.05) == (0.99, 1.01)
    assert intervals.floor_sd(0.0, 3) == pytest.approx(intervals.RUN_TO_RUN_SD)


def _panel(level, spread, n):
    """n comparisons at one level, each moving by e^spread between two launches."""
    e = 2.718281828459045
    out = []
    for i in range(n):
        ref = pt(f"a{i}", [10.0] * 6, launches=TWO)
        other = pt(f"b{i}", [10.0] * 3 + [10.0 * e**spread] * 3, launches=TWO)
        for p in (ref, other):
            p.params = {"threads": 2 + i, "level": level}
        out += [ref, other]
    return out


def test_a_panel_has_its_own_resolution_borrowing_from_the_experiment():
    quiet, noisy = _panel(1, 0.01, 4), _panel(3, 0.2, 20)
    res = intervals.resolution(quiet + noisy)
    sd_quiet = res.sd_of(quiet[0])
    sd_noisy = res.sd_of(noisy[0])
    own_quiet = (0.01**2 / 2 / intervals._chi2_median_over_df(1)) ** 0.5
    assert own_quiet < sd_quiet < res.ratio_sd <= sd_noisy
    # 4 comparisons of its own against the experiment's weight of 8
    w = intervals.PRIOR_COMPARISONS
    expected = ((4 * own_quiet**2 + w * res.ratio_sd**2) / (4 + w)) ** 0.5
    assert sd_quiet == pytest.approx(expected)
    # a comparison across panels takes the wider
    assert res.sd_of(quiet[0], noisy[0]) == sd_noisy


def test_a_ratio_of_ratios_interval_carries_both_ratios_spread():
    """(faa/cas here) / (faa/cas at the baseline): each pair drawn as ratio_interval draws it,
    the two independently, so the interval is at least as wide as either ratio's."""
    here = (pt("faa", [10.0, 11.0, 12.0, 10.5, 11.5, 12.5]), pt("cas", [10.0, 10.2, 9.8, 10.1, 9.9, 10.0]))
    there = (pt("faa", [8.0, 9.0, 10.0, 8.5, 9.5, 8.2]), pt("cas", [10.0, 10.1, 9.9, 10.0, 10.2, 9.8]))
    lo, hi = intervals.ratio_of_ratios_interval(*here, *there)
    estimate = (here[0].median / here[1].median) / (there[0].median / there[1].median)
    assert lo < estimate < hi
    for num, den in (here, there):
        a, b = intervals.ratio_interval(num, den)
        assert hi / lo > b / a
    # the same points, the same interval; one sample each: the point estimate
    assert intervals.ratio_of_ratios_interval(*here, *there) == (lo, hi)
    ones = [pt(n, [v]) for n, v in (("faa", 12.0), ("cas", 10.0), ("faa", 8.0), ("cas", 10.0))]
    assert intervals.ratio_of_ratios_interval(*ones) == pytest.approx((1.5, 1.5))
    # a zero baseline numerator in every replicate: unbounded above
    zero = [pt("faa", [12.0, 12.0]), pt("cas", [10.0, 10.0]), pt("faa", [0.0, 0.0]), pt("cas", [10.0, 10.0])]
    assert intervals.ratio_of_ratios_interval(*zero)[1] == float("inf")


def test_a_ratio_of_ratios_is_widened_by_both_panels_resolution():
    """With launches, the floor adds both ratios' launch-to-launch variances and the
    run-to-run spread twice: wider than one ratio's floor."""
    here = (pt("faa", [11.0] * 6, launches=TWO), pt("cas", [10.0] * 6, launches=TWO))
    there = (pt("faa", [9.0] * 6, launches=TWO), pt("cas", [10.0] * 6, launches=TWO))
    for p in there:
        p.params = {"threads": 2, "level": 1}
    res = intervals.Resolution(ratio_sd=0.1, panel_sd={}, value_sd={}, comparisons=8, launches=2, run_sd=0.03)
    lo, hi = intervals.resolved_ratio_of_ratios_interval(*here, *there, res)
    z = intervals.critical_value()
    half = z * (2 * (0.1**2 / 2 + 0.03**2)) ** 0.5
    estimate = 1.1 / 0.9
    assert lo == pytest.approx(estimate * 2.718281828459045 ** -half)
    assert hi == pytest.approx(estimate * 2.718281828459045 ** half)
    one_lo, one_hi = intervals.resolved_ratio_interval(*here, res)
    assert (hi / lo) > one_hi / one_lo  # wider than one ratio's
    # no resolution: the bootstrap's interval alone (a point for constant samples)
    assert intervals.resolved_ratio_of_ratios_interval(*here, *there, None) == pytest.approx((estimate, estimate))
