# SPDX-License-Identifier: BSD-2-Clause
"""Every branch of the RULE language of docs/results-format.md."""

import pytest

from syncq_report import rules
from syncq_report.load import Point

LINE = iter(range(1, 10_000))  # distinct line numbers, as the loader would give


def pt(algorithm, threads, median, metric="time_per_op", unit="ns", **params):
    return Point(
        experiment="np99-counter",
        algorithm=algorithm,
        params={"threads": threads, **params},
        metric=metric,
        unit=unit,
        better="lower",
        median=median,
        min=median,
        max=median,
        samples=[median] * rules.MIN_SAMPLES,
        counters={},
        line=next(LINE),
    )


# faa is half the time of cas at every thread count with work_ns=0; equal with work_ns=5000.
POINTS = [
    *(pt("cas", t, 10.0 * t, work_ns=0) for t in (1, 2, 4)),
    *(pt("faa", t, 5.0 * t, work_ns=0) for t in (1, 2, 4, 8)),
    *(pt("cas", t, 100.0, work_ns=5000) for t in (1, 2)),
    *(pt("faa", t, 100.0, work_ns=5000) for t in (1, 2)),
]


def ratio(op="ratio_below", num="faa", den="cas", bound=1.0, **extra):
    rule = {
        "op": op,
        "metric": "time_per_op",
        "num": num,
        "den": den,
        "where": {"work_ns": 0},
        "at": "max_threads",
        "bound": bound,
    }
    rule.update(extra)
    return rule


def check(rule, status, explanation=None, points=POINTS):
    verdict = rules.evaluate(rule, points)
    assert verdict.status == status, verdict
    if explanation is not None:
        assert verdict.explanation == explanation
    return verdict


def test_ratio_below_held_with_numbers_in_explanation():
    check(
        ratio(),
        rules.HELD,
        "faa/cas = 0.500 [95% CI 0.500-0.500] at threads=4, work_ns=0 (bound < 1.0; time_per_op 20.0 ns / 40.0 ns)",
    )


def test_ratio_below_did_not_hold():
    check(ratio(bound=0.4), rules.FAILED)


def test_ratio_equal_to_bound_is_neither_below_nor_above():
    check(ratio(where={"work_ns": 5000}), rules.FAILED)
    check(ratio(op="ratio_above", where={"work_ns": 5000}), rules.FAILED)


def test_ratio_above_held_and_did_not_hold():
    verdict = check(ratio(op="ratio_above", num="cas", den="faa", bound=1.5), rules.HELD)
    assert "cas/faa = 2.00" in verdict.explanation and "bound > 1.5" in verdict.explanation
    check(ratio(op="ratio_above", num="cas", den="faa", bound=2.5), rules.FAILED)


def test_max_threads_is_the_largest_measured_for_both():
    # faa reaches 8 threads, cas only 4: the comparison is at 4.
    assert "threads=4" in check(ratio(), rules.HELD).explanation


def test_at_fixed_threads():
    assert "threads=2" in check(ratio(at={"threads": 2}), rules.HELD).explanation


def test_at_fixed_threads_not_measured_for_one_algorithm():
    check(ratio(at={"threads": 8}), rules.UNMEASURABLE, "no cas point at threads=8")


def test_at_and_where_default_to_max_threads_and_nothing():
    rule = ratio(where={"work_ns": 0})
    del rule["at"]
    assert "threads=4" in check(rule, rules.HELD).explanation
    only_work_0 = [p for p in POINTS if p.params["work_ns"] == 0]
    rule_without_where = ratio()
    del rule_without_where["where"]
    check(rule_without_where, rules.HELD, points=only_work_0)


def test_missing_algorithm_is_not_measurable():
    check(ratio(num="ticket"), rules.UNMEASURABLE, "no ticket point for time_per_op with work_ns=0")
    check(ratio(den="ticket"), rules.UNMEASURABLE, "no ticket point for time_per_op with work_ns=0")


def test_other_metric_is_not_measurable():
    check(ratio(metric="throughput"), rules.UNMEASURABLE)


def test_where_value_nobody_measured_is_not_measurable():
    check(ratio(where={"work_ns": 7}), rules.UNMEASURABLE)


def test_too_few_threads_is_not_measurable():
    check(
        ratio(min_threads=8),
        rules.UNMEASURABLE,
        "threads=4 (the largest measured for both faa and cas) is below min_threads=8",
    )
    check(ratio(min_threads=4), rules.HELD)


def test_min_threads_applies_to_a_fixed_at():
    check(
        ratio(at={"threads": 2}, min_threads=4),
        rules.UNMEASURABLE,
        "threads=2 (from 'at') is below min_threads=4",
    )


def test_no_common_threads_is_not_measurable():
    points = [pt("cas", 1, 10.0), pt("faa", 2, 5.0)]
    rule = ratio(where={})
    check(rule, rules.UNMEASURABLE, "no threads value measured for both faa and cas", points=points)


def test_points_without_threads_param_are_not_measurable():
    points = [pt("cas", 1, 10.0), pt("faa", 1, 5.0)]
    for p in points:
        del p.params["threads"]
    check(ratio(where={}), rules.UNMEASURABLE, points=points)


def test_several_points_left_by_where_are_ambiguous():
    # Without work_ns fixed, threads=2 has a faa point for work_ns 0 and one for 5000.
    verdict = check(ratio(where={}, at={"threads": 2}), rules.UNMEASURABLE)
    assert verdict.explanation.startswith("2 faa points at threads=2 (lines ")
    assert verdict.explanation.endswith("'where' must fix the other params")


def test_zero_denominator_is_not_measurable():
    points = [pt("cas", 1, 0.0), pt("faa", 1, 5.0)]
    check(ratio(where={}), rules.UNMEASURABLE, "median of cas is 0 at threads=1", points=points)


def test_param_matching_is_numeric_but_typed():
    check(ratio(where={"work_ns": 0.0}), rules.HELD)
    check(ratio(where={"work_ns": "0"}), rules.UNMEASURABLE)
    check(ratio(where={"work_ns": False}), rules.UNMEASURABLE)


MISSING = object()  # marks a field removed from the rule


@pytest.mark.parametrize(
    "key, value, reason",
    [
        ("metric", MISSING, "malformed rule: 'metric' must be a string"),
        ("num", 3, "malformed rule: 'num' must be a string"),
        ("bound", "1", "malformed rule: 'bound' must be a number"),
        ("bound", True, "malformed rule: 'bound' must be a number"),
        ("where", [1], "malformed rule: 'where' must be an object"),
        ("min_threads", "8", "malformed rule: 'min_threads' must be a number"),
        ("at", "min_threads", 'malformed rule: \'at\' must be "max_threads", {"<param>": N} or {"<param>": "max"}'),
        (
            "at",
            {"threads": 2, "work_ns": 0},
            'malformed rule: \'at\' must be "max_threads", {"<param>": N} or {"<param>": "max"}',
        ),
    ],
)
def test_malformed_ratio_is_not_measurable(key, value, reason):
    rule = ratio()
    if value is MISSING:
        del rule[key]
    else:
        rule[key] = value
    check(rule, rules.UNMEASURABLE, reason)


HELD_RULE = ratio()
FAILED_RULE = ratio(bound=0.4)
UNMEASURABLE_RULE = ratio(num="ticket")


def test_all_held_when_every_rule_held():
    verdict = check({"op": "all", "rules": [HELD_RULE, ratio(at={"threads": 2})]}, rules.HELD)
    assert "threads=4" in verdict.explanation and "threads=2" in verdict.explanation


def test_all_did_not_hold_when_any_did_not_hold_even_with_unmeasurable():
    verdict = check({"op": "all", "rules": [UNMEASURABLE_RULE, HELD_RULE, FAILED_RULE]}, rules.FAILED)
    assert "did not hold: faa/cas = 0.500" in verdict.explanation


def test_all_otherwise_not_measurable_with_the_first_reason():
    second = {"op": "not_measurable", "why": "second"}
    check(
        {"op": "all", "rules": [HELD_RULE, UNMEASURABLE_RULE, second]},
        rules.UNMEASURABLE,
        "no ticket point for time_per_op with work_ns=0",
    )


def test_all_without_rules_is_not_measurable():
    check({"op": "all", "rules": []}, rules.UNMEASURABLE)
    check({"op": "all"}, rules.UNMEASURABLE)


def test_any_held_when_one_rule_held_and_lists_only_those():
    verdict = check({"op": "any", "rules": [FAILED_RULE, UNMEASURABLE_RULE, HELD_RULE]}, rules.HELD)
    assert verdict.explanation == rules.evaluate(HELD_RULE, POINTS).explanation


def test_any_did_not_hold_when_none_held_and_one_did_not():
    verdict = check({"op": "any", "rules": [UNMEASURABLE_RULE, FAILED_RULE]}, rules.FAILED)
    assert "did not hold: faa/cas = 0.500" in verdict.explanation
    assert "not measurable" in verdict.explanation


def test_any_otherwise_not_measurable_with_the_first_reason():
    second = {"op": "not_measurable", "why": "second"}
    check({"op": "any", "rules": [UNMEASURABLE_RULE, second]}, rules.UNMEASURABLE,
          "no ticket point for time_per_op with work_ns=0")
    check({"op": "any", "rules": []}, rules.UNMEASURABLE)
    check({"op": "any"}, rules.UNMEASURABLE)


def test_deep_nesting_is_not_measurable_not_a_crash():
    rule = HELD_RULE
    for _ in range(5000):
        rule = {"op": "all", "rules": [rule]}
    check(rule, rules.UNMEASURABLE, f"rules nested deeper than {rules.MAX_DEPTH}")


def test_not_measurable_on_principle():
    verdict = check({"op": "not_measurable", "why": "needs a ccNUMA machine"}, rules.UNMEASURABLE)
    assert verdict.label == "not measurable here: needs a ccNUMA machine"
    check({"op": "not_measurable"}, rules.UNMEASURABLE, "declared not measurable (no reason given)")


def test_unknown_op_is_not_measurable():
    verdict = check({"op": "ratio_between", "num": "faa"}, rules.UNMEASURABLE)
    assert verdict.label == "not measurable here: unknown rule op 'ratio_between'"


@pytest.mark.parametrize("rule", [{"op": 7}, {}, [], "ratio_below", None])
def test_rules_that_are_not_rules_do_not_crash(rule):
    check(rule, rules.UNMEASURABLE)


def test_labels_of_held_and_failed():
    assert rules.evaluate(HELD_RULE, POINTS).label == "held"
    assert rules.evaluate(FAILED_RULE, POINTS).label == "did not hold"


def test_at_any_single_param():
    """'at' may fix another swept param than threads, e.g. {"sorters": 20}."""
    points = [
        pt("mutex", 2, 2.0, metric="time", sorters=20),
        pt("sequential", 2, 4.0, metric="time", sorters=20),
        pt("mutex", 2, 9.0, metric="time", sorters=100),
        pt("sequential", 2, 3.0, metric="time", sorters=100),
    ]
    rule = {"op": "ratio_below", "metric": "time", "num": "mutex", "den": "sequential", "bound": 1.0}
    verdict = rules.evaluate(dict(rule, at={"sorters": 20}), points)
    assert verdict.status == rules.HELD and "sorters=20" in verdict.explanation
    assert rules.evaluate(dict(rule, at={"sorters": 100}), points).status == rules.FAILED
    assert rules.evaluate(dict(rule, at={"sorters": 7}), points).status == rules.UNMEASURABLE


def test_at_max_of_a_param():
    """'at': {"leaves": "max"} takes the largest value measured for both (a sweep whose top depends
    on the size), so the verdict follows the data: held there, failed when the top point says so."""
    small = [
        pt("fiber:mpsc", 2, 10.0, metric="time", leaves=10_000),
        pt("go", 2, 20.0, metric="time", leaves=10_000),
        pt("fiber:mpsc", 2, 90.0, metric="time", leaves=100_000),
        pt("go", 2, 100.0, metric="time", leaves=100_000),
    ]
    rule = {"op": "ratio_below", "metric": "time", "num": "fiber:mpsc", "den": "go", "at": {"leaves": "max"},
            "bound": 1.0}
    verdict = rules.evaluate(rule, small)
    assert verdict.status == rules.HELD and "leaves=100000" in verdict.explanation
    larger = small + [pt("fiber:mpsc", 2, 3000.0, metric="time", leaves=1_000_000),
                      pt("go", 2, 2000.0, metric="time", leaves=1_000_000)]
    assert rules.evaluate(rule, larger).status == rules.FAILED
    # a top measured for one side only does not count
    one_side = small + [pt("go", 2, 2000.0, metric="time", leaves=1_000_000)]
    assert rules.evaluate(rule, one_side).status == rules.HELD
    none = [pt("fiber:mpsc", 2, 1.0, metric="time", leaves=10), pt("go", 2, 1.0, metric="time", leaves=100)]
    assert rules.evaluate(rule, none).status == rules.UNMEASURABLE


def test_value_bounds():
    """value_below / value_above: an absolute bound on one algorithm's median."""
    points = [pt("nblfq", t, share, metric="cas_retry_share", unit="%") for t, share in ((1, 0.0), (2, 0.4), (4, 5.0))]
    rule = {"op": "value_below", "metric": "cas_retry_share", "algo": "nblfq", "bound": 3.5}
    assert rules.evaluate(dict(rule, at={"threads": 2}), points).status == rules.HELD
    failed = rules.evaluate(rule, points)  # max_threads: 4 -> 5.0 %
    assert failed.status == rules.FAILED and "5.00 %" in failed.explanation and "threads=4" in failed.explanation
    assert rules.evaluate(dict(rule, op="value_above", bound=1.0), points).status == rules.HELD
    assert rules.evaluate(dict(rule, algo="scq"), points).status == rules.UNMEASURABLE
    assert rules.evaluate(dict(rule, min_threads=8), points).status == rules.UNMEASURABLE
    assert rules.evaluate(dict(rule, bound="3.5"), points).status == rules.UNMEASURABLE


def count_pt(algorithm, threads, samples, metric):
    """A count metric's point (the pseudo-scheduler's preemptions of each run)."""
    p = pt(algorithm, threads, float(sorted(samples)[len(samples) // 2]), metric=metric, unit="count", level=3)
    p.samples = [float(s) for s in samples]
    return p


def exercised(inner, **extra):
    rule = {
        "op": "exercised",
        "metric": "preemptions_deferred",
        "of": "preemptions",
        "algo": "lock-ps",
        "where": {"level": 3},
        "min": 12,
        "min_share": 0.15,
        "what": "preemptions found a lock holder",
        "rule": inner,
    }
    rule.update(extra)
    return rule


# lock is 1.5x lock-ps at level 3: the ratio alone would say "held".
DEGRADES = [pt("lock", 2, 15.0, metric="time", level=3), pt("lock-ps", 2, 10.0, metric="time", level=3)]
DEGRADATION = {"op": "ratio_above", "metric": "time", "num": "lock", "den": "lock-ps", "where": {"level": 3}, "bound": 1.1}


def test_exercised_judges_the_inner_rule_where_the_count_reaches_its_minimum():
    """12 runs, 40 of 160 preemptions found a holder: 25% >= 15% and 40 >= 12."""
    counts = [count_pt("lock-ps", 2, [3] * 8 + [4] * 4, "preemptions_deferred"),
              count_pt("lock-ps", 2, [13] * 8 + [14] * 4, "preemptions")]
    assert sum(counts[0].samples) == 40 and sum(counts[1].samples) == 160
    v = rules.evaluate(exercised(DEGRADATION), DEGRADES + counts)
    assert v.status == rules.HELD
    assert "lock/lock-ps = 1.50" in v.explanation
    assert "exercised: 40 of 160 preemptions found a lock holder over 12 runs of lock-ps" in v.explanation
    # the inner verdict passes through as it is, did not hold included
    v = rules.evaluate(exercised(dict(DEGRADATION, bound=2.0)), DEGRADES + counts)
    assert v.status == rules.FAILED


def test_exercised_is_inconclusive_where_the_mechanism_was_not_exercised():
    """0 of 159: the ratio is not read, whatever it says."""
    counts = [count_pt("lock-ps", 2, [0] * 12, "preemptions_deferred"),
              count_pt("lock-ps", 2, [13] * 9 + [14] * 3, "preemptions")]
    for inner_bound in (1.1, 2.0):  # a ratio that would hold, and one that would not
        v = rules.evaluate(exercised(dict(DEGRADATION, bound=inner_bound)), DEGRADES + counts)
        assert v.status == rules.INCONCLUSIVE
        assert v.explanation == (
            "the mechanism was not exercised: 0 of 159 preemptions found a lock holder over 12 runs of lock-ps "
            "(needs >= 12 and >= 15% of them)"
        )
    # the share alone: 20 of 159 reaches 12 but not 15% (23.85)
    few = [count_pt("lock-ps", 2, [2] * 8 + [1] * 4, "preemptions_deferred"), counts[1]]
    assert rules.evaluate(exercised(DEGRADATION), DEGRADES + few).status == rules.INCONCLUSIVE
    # the count alone (no "of"): 20 >= 12 is enough, 11 is not
    no_share = exercised(DEGRADATION)
    del no_share["of"], no_share["min_share"]
    assert rules.evaluate(no_share, DEGRADES + few).status == rules.HELD
    eleven = [count_pt("lock-ps", 2, [1] * 11 + [0], "preemptions_deferred")]
    v = rules.evaluate(no_share, DEGRADES + eleven)
    assert v.status == rules.INCONCLUSIVE and "11 preemptions found a lock holder" in v.explanation
    assert "(needs >= 12)" in v.explanation


def test_exercised_with_min_runs_share_needs_the_mechanism_in_enough_runs():
    """40 of 160 from one run of 12 meets the sum and the share, not half the runs."""
    one_run = [count_pt("lock-ps", 2, [40] + [0] * 11, "preemptions_deferred"),
               count_pt("lock-ps", 2, [13] * 8 + [14] * 4, "preemptions")]
    v = rules.evaluate(exercised(DEGRADATION, min_runs_share=0.5), DEGRADES + one_run)
    assert v.status == rules.INCONCLUSIVE
    assert v.explanation == (
        "the mechanism was not exercised: 40 of 160 preemptions found a lock holder over 12 runs of lock-ps, "
        "in 1 of them (needs >= 12 and >= 15% of them and in >= 50% of the runs)"
    )
    # without the field the same counts are enough
    assert rules.evaluate(exercised(DEGRADATION), DEGRADES + one_run).status == rules.HELD
    # six runs of twelve with 4 each: 24 of 160 (15%), half the runs
    half = [count_pt("lock-ps", 2, [4] * 6 + [0] * 6, "preemptions_deferred"), one_run[1]]
    v = rules.evaluate(exercised(DEGRADATION, min_runs_share=0.5), DEGRADES + half)
    assert v.status == rules.HELD
    assert "exercised: 24 of 160 preemptions found a lock holder over 12 runs of lock-ps, in 6 of them" in v.explanation


def test_exercised_without_its_count_is_not_measurable():
    """A run that did not count the mechanism (an older file, or a mode that cannot)
    neither judges the ratio nor calls the mechanism absent."""
    v = rules.evaluate(exercised(DEGRADATION), DEGRADES)
    assert v.status == rules.UNMEASURABLE
    assert "did not count preemptions found a lock holder" in v.explanation
    only_count = [count_pt("lock-ps", 2, [5] * 12, "preemptions_deferred")]  # "of" absent
    assert rules.evaluate(exercised(DEGRADATION), DEGRADES + only_count).status == rules.UNMEASURABLE
    # counted at another level only: where selects nothing
    elsewhere = [count_pt("lock-ps", 2, [5] * 12, "preemptions_deferred"), count_pt("lock-ps", 2, [9] * 12, "preemptions")]
    for p in elsewhere:
        p.params["level"] = 2
    assert rules.evaluate(exercised(DEGRADATION), DEGRADES + elsewhere).status == rules.UNMEASURABLE


@pytest.mark.parametrize(
    "change",
    [{"min": 0}, {"min": "12"}, {"min": True}, {"min_share": 1.5}, {"min_share": "x"}, {"of": 3}, {"rule": "ratio"},
     {"what": 7}, {"min_runs_share": 0}, {"min_runs_share": 1.5}, {"min_runs_share": "x"}, {"min_runs_share": True}],
)
def test_malformed_exercised_is_not_measurable(change):
    counts = [count_pt("lock-ps", 2, [5] * 12, "preemptions_deferred"), count_pt("lock-ps", 2, [9] * 12, "preemptions")]
    v = rules.evaluate(exercised(DEGRADATION, **change), DEGRADES + counts)
    assert v.status == rules.UNMEASURABLE and "malformed rule" in v.explanation
    share_without_of = exercised(DEGRADATION)
    del share_without_of["of"]
    assert rules.evaluate(share_without_of, DEGRADES + counts).status == rules.UNMEASURABLE


def spread_pt(algorithm, threads, samples, **params):
    """A time point of 12 runs (one launch), its samples as given."""
    p = pt(algorithm, threads, float(sorted(samples)[len(samples) // 2]), metric="time", unit="ms", **params)
    p.samples = [float(s) for s in samples]
    p.min, p.max = min(p.samples), max(p.samples)
    return p


L1 = {"level": 1, "mode": "dedicated"}
L3 = {"level": 3, "mode": "pseudo"}
JITTER = [0.98, 0.99, 1.0, 1.01, 1.02, 1.0] * 2  # +-2% around each median
# lock-ps's runs move otherwise than lock's (paired draws do not cancel them)
JITTER_PS = [1.0, 1.02, 0.99, 1.0, 0.98, 1.01] * 2


def levels(ord1, ps1, ord3, ps3, threads=(1, 2)):
    """lock and lock-ps at level 1 and level 3, medians as given, at every threads value."""
    out = []
    for t in threads:
        for algo, med, where in (("lock", ord1, L1), ("lock-ps", ps1, L1), ("lock", ord3, L3), ("lock-ps", ps3, L3)):
            jitter = JITTER_PS if algo == "lock-ps" else JITTER
            out.append(spread_pt(algo, t, [med * j for j in jitter], delay_ns=0, **where))
    return out


def change(op="ratio_change_above", bound=1.1, **extra):
    rule = {"op": op, "metric": "time", "num": "lock", "den": "lock-ps", "where": {"delay_ns": 0, **L3},
            "base": dict(L1), "at": "max_threads", "bound": bound, "min_threads": 2}
    rule.update(extra)
    return rule


def test_ratio_change_takes_the_baseline_ratio_out():
    """lock-ps costs 25% more than lock without a scheduler (0.8) and lock is 1.1x lock-ps at
    level 3: the level-3 ratio alone says "not 10% slower", the change (1.1 / 0.8 = 1.375) says held."""
    points = levels(ord1=8.0, ps1=10.0, ord3=33.0, ps3=30.0)
    v = rules.evaluate(change(), points)
    assert v.status == rules.HELD, v
    assert v.explanation.startswith(
        "(lock/lock-ps at level=3, mode=pseudo) / (at level=1, mode=dedicated) = 1.10 / 0.800 = 1.38 [95% CI "
    ), v.explanation
    assert "at threads=2, delay_ns=0 (bound > 1.1; time 33.0 / 30.0 and 8.00 / 10.0 ms)" in v.explanation
    lo, hi = v.interval
    assert 1.1 < lo < 1.375 < hi
    # the ratio_below form of the same
    assert rules.evaluate(change(op="ratio_change_below", bound=1.1), points).status == rules.FAILED
    # the ratio at level 3 alone would not have held
    alone = {"op": "ratio_above", "metric": "time", "num": "lock", "den": "lock-ps",
             "where": {"delay_ns": 0, **L3}, "bound": 1.1, "min_threads": 2}
    assert rules.evaluate(alone, points).status != rules.HELD


def test_ratio_change_does_not_hold_where_the_ratio_did_not_grow():
    """lock is 1.2x lock-ps at level 3, and 1.2x already at level 1: no change."""
    v = rules.evaluate(change(), levels(ord1=12.0, ps1=10.0, ord3=36.0, ps3=30.0))
    assert v.status == rules.FAILED, v
    assert "= 1.20 / 1.20 = 1.00 [95% CI" in v.explanation


def test_ratio_change_is_inconclusive_where_its_interval_holds_the_bound():
    points = levels(ord1=10.0, ps1=10.0, ord3=33.0, ps3=30.0)  # 1.1 exactly
    assert rules.evaluate(change(), points).status == rules.INCONCLUSIVE
    # a wide spread at level 1 too
    wide = levels(ord1=10.0, ps1=10.0, ord3=40.0, ps3=30.0)
    for p in wide:
        if p.params["level"] == 1 and p.algorithm == "lock":
            p.samples = [5.0, 20.0] * 6
    assert rules.evaluate(change(), wide).status == rules.INCONCLUSIVE


def test_ratio_change_at_the_threads_measured_everywhere():
    """Level 3 measured at 2 only, level 1 at 1 and 2: the change is read at 2; level 1 at 1
    only leaves no common count."""
    points = [p for p in levels(8.0, 10.0, 33.0, 30.0) if p.params["level"] == 1 or p.params["threads"] == 2]
    assert "at threads=2" in rules.evaluate(change(), points).explanation
    only_one = [p for p in points if p.params["level"] == 3 or p.params["threads"] == 1]
    v = rules.evaluate(change(), only_one)
    assert v.status == rules.UNMEASURABLE and "no threads value measured for both lock and lock-ps" in v.explanation
    v = rules.evaluate(change(min_threads=4), points)
    assert v.status == rules.UNMEASURABLE and "below min_threads=4" in v.explanation


def test_ratio_change_without_a_level_is_not_measurable():
    """A run of level 3 alone (--where level=3) has no baseline."""
    points = [p for p in levels(8.0, 10.0, 33.0, 30.0) if p.params["level"] == 3]
    v = rules.evaluate(change(), points)
    assert v.status == rules.UNMEASURABLE
    assert v.explanation == "no lock point for time with delay_ns=0, level=1, mode=dedicated"
    no_ps = [p for p in levels(8.0, 10.0, 33.0, 30.0) if not (p.params["level"] == 1 and p.algorithm == "lock-ps")]
    assert "no lock-ps point" in rules.evaluate(change(), no_ps).explanation
    zero = levels(8.0, 0.0, 33.0, 30.0)
    assert "baseline lock-ps has median 0" in rules.evaluate(change(), zero).explanation


@pytest.mark.parametrize(
    "edit",
    [{"base": None}, {"base": {}}, {"base": "level=1"}, {"base": {"level": 3}}, {"base": {"level": 3, "mode": "pseudo"}},
     {"bound": "1.1"}, {"num": 3}, {"where": []}, {"at": "min"}],
)
def test_malformed_ratio_change_is_not_measurable(edit):
    rule = change()
    rule.update(edit)
    if edit.get("base") is None and "base" in edit:
        del rule["base"]
    v = rules.evaluate(rule, levels(8.0, 10.0, 33.0, 30.0))
    assert v.status == rules.UNMEASURABLE and "malformed rule" in v.explanation, v


def test_ratio_change_against_a_baseline_at_its_own_thread_count():
    """`base` may fix the param `at` selects: level 3 at the largest p against level 1 at
    threads=1 (the "-ps" lock's own cost without contention)."""
    points = [p for p in levels(8.0, 10.0, 33.0, 30.0) if not (p.params["level"] == 1 and p.params["threads"] == 2)]
    points += [spread_pt(a, 2, [m * j for j in JITTER], delay_ns=0, **L1) for a, m in (("lock", 30.0), ("lock-ps", 10.0))]
    v = rules.evaluate(change(base={**L1, "threads": 1}), points)
    assert v.status == rules.HELD, v
    assert v.explanation.startswith(
        "(lock/lock-ps at level=3, mode=pseudo, threads=2) / (at level=1, mode=dedicated, threads=1) = 1.10 / 0.800 = "
    ), v.explanation
    assert "at delay_ns=0 (bound > 1.1; time 33.0 / 30.0 and 8.00 / 10.0 ms)" in v.explanation
    # the same p at both levels reads level 1's 3.0 instead
    assert rules.evaluate(change(), points).status == rules.FAILED
    # no level-1 point at threads=1
    missing = [p for p in points if not (p.params["level"] == 1 and p.params["threads"] == 1)]
    v = rules.evaluate(change(base={**L1, "threads": 1}), missing)
    assert v.status == rules.UNMEASURABLE and v.explanation.startswith("no lock point for time with"), v
    # min_threads reads where's count, not the baseline's
    v = rules.evaluate(change(base={**L1, "threads": 1}, min_threads=4), points)
    assert v.status == rules.UNMEASURABLE and "threads=2 (the largest measured for both lock and lock-ps)" in v.explanation
