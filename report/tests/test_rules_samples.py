# SPDX-License-Identifier: BSD-2-Clause
"""Too few samples (docs/results-format.md): a rule whose compared point has fewer
than rules.MIN_SAMPLES samples, or only one launch's samples in a run of several,
is inconclusive with the reason, whatever its op; with enough samples every op
decides as it did."""

import pytest

from syncq_report import rules
from syncq_report.load import Point

LINE = iter(range(1, 10_000))
M = rules.MIN_SAMPLES


def pt(algorithm, median, n, better="lower", metric="m", peer=False, launches=None, **params):
    """A point of n samples, all equal to its median: its interval is the median itself,
    so a decided verdict is the one the estimate alone gives."""
    return Point(
        experiment="e",
        algorithm=algorithm,
        params=params,
        metric=metric,
        unit="u",
        better=better,
        median=median,
        min=median,
        max=median,
        samples=[median] * n,
        counters={},
        line=next(LINE),
        family="queue",
        props="fifo",
        peer=peer,
        launches=launches,
    )


def ratio_points(n):
    return [pt("a", 5.0, n, threads=2), pt("b", 10.0, n, threads=2)]


def change_points(n):
    return [pt(a, v, n, threads=2, level=lv) for a, v, lv in (("a", 20.0, 3), ("b", 10.0, 3), ("a", 10.0, 1), ("b", 10.0, 1))]


def peer_points(n):
    return [pt("a", 5.0, n, threads=2), pt("p", 10.0, n, threads=2, peer=True), pt("q", 20.0, n, threads=2, peer=True)]


def pack_points(n):
    return [pt(a, v, n, threads=2) for a, v in (("a", 10.0), ("b", 10.0), ("c", 12.0), ("d", 15.0))]


def curve_points(n):
    return [pt("a", v, n, threads=t) for t, v in ((1, 1.0), (2, 4.0), (4, 4.1), (8, 4.0))]


def along_points(n):
    return [pt("a", 30.0, n, size=1000), pt("a", 10.0, n, size=100)]


def crowd_points(n):
    return [pt("a", v, n, threads=t) for t, v in ((2, 10.0), (4, 9.0))]


RATIO = {"op": "ratio_below", "metric": "m", "num": "a", "den": "b", "bound": 1.0}
CHANGE = {"op": "ratio_change_above", "metric": "m", "num": "a", "den": "b", "where": {"level": 3},
          "base": {"level": 1}, "bound": 1.5}
VALUE = {"op": "value_below", "metric": "m", "algo": "a", "bound": 6.0}
PEER = {"op": "peer_ratio_below", "metric": "m", "algo": "a", "bound": 1.0}
PACK = {"op": "in_pack", "metric": "m", "algo": "a", "factor": 2}
SHAPE = {"op": "rise_then_plateau", "metric": "m", "algo": "a", "knee": 2, "factor": 1.5}
ALONG = {"op": "along_ratio_above", "metric": "m", "algo": "a", "along": "size", "num": 1000, "den": 100, "bound": 2.0}
CROWD = {"op": "oversubscribed_ratio_above", "metric": "m", "algo": "a", "bound": 0.5}
MACHINE = {"pus": 2}

# (op, rule, points of n samples each, the verdict with enough samples); every op of
# rules._OPS that reads a point appears here (test_every_op_is_covered).
CASES = [
    ("ratio_below", RATIO, ratio_points, rules.HELD),
    ("ratio_above", dict(RATIO, op="ratio_above"), ratio_points, rules.FAILED),
    ("ratio_change_above", CHANGE, change_points, rules.HELD),
    ("ratio_change_below", dict(CHANGE, op="ratio_change_below"), change_points, rules.FAILED),
    ("value_below", VALUE, ratio_points, rules.HELD),
    ("value_above", dict(VALUE, op="value_above"), ratio_points, rules.FAILED),
    ("peer_ratio_below", PEER, peer_points, rules.HELD),
    ("peer_ratio_above", dict(PEER, op="peer_ratio_above"), peer_points, rules.FAILED),
    ("in_pack", PACK, pack_points, rules.HELD),
    ("rise_then_plateau", SHAPE, curve_points, rules.HELD),
    ("along_ratio_above", ALONG, along_points, rules.HELD),
    ("along_ratio_below", dict(ALONG, op="along_ratio_below"), along_points, rules.FAILED),
    ("oversubscribed_ratio_above", CROWD, crowd_points, rules.HELD),
    ("all", {"op": "all", "rules": [RATIO, VALUE]}, ratio_points, rules.HELD),
    ("any", {"op": "any", "rules": [dict(RATIO, op="ratio_above"), VALUE]}, ratio_points, rules.HELD),
    ("needs_pus", {"op": "needs_pus", "pus": 2, "rule": RATIO}, ratio_points, rules.HELD),
]
READS_NO_POINT = {"not_measurable"}


def exercised_case(n):
    counts = pt("a", 10.0, 12, metric="hits", threads=2)
    return [*ratio_points(n), counts]


CASES.append(("exercised", {"op": "exercised", "metric": "hits", "algo": "a", "min": 1, "rule": RATIO}, exercised_case,
              rules.HELD))


def test_every_op_is_covered():
    """A new op must show here that it goes through the common check."""
    assert {op for op, *_ in CASES} | READS_NO_POINT == set(rules._OPS)


@pytest.mark.parametrize("op, rule, points, decided", CASES, ids=[c[0] for c in CASES])
def test_enough_samples_decide_as_before(op, rule, points, decided):
    assert rules.evaluate(rule, points(M), machine=MACHINE).status == decided


@pytest.mark.parametrize("op, rule, points, decided", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("n", [1, M - 1])
def test_too_few_samples_are_inconclusive_with_the_reason(op, rule, points, decided, n):
    verdict = rules.evaluate(rule, points(n), machine=MACHINE)
    assert verdict.status == rules.INCONCLUSIVE, verdict
    word = "sample" if n == 1 else "samples"
    assert f"{n} {word} of a m at " in verdict.explanation, verdict
    assert f"at least {M} needed for an interval" in verdict.explanation, verdict
    assert "CI" not in verdict.explanation  # no interval is shown for it
    assert verdict.interval is None


def test_the_reason_names_every_short_point_and_only_those():
    points = [pt("a", 5.0, M, threads=2), pt("b", 10.0, 1, threads=2)]
    verdict = rules.evaluate(RATIO, points)
    assert verdict.status == rules.INCONCLUSIVE
    assert verdict.explanation == f"1 sample of b m at threads=2, at least {M} needed for an interval"
    both = rules.evaluate(RATIO, ratio_points(2))
    assert both.explanation == (
        f"2 samples of a m at threads=2, at least {M} needed for an interval; "
        f"2 samples of b m at threads=2, at least {M} needed for an interval"
    )


def test_a_short_point_the_rule_does_not_compare_is_not_read():
    """Only the compared points count: a plotted point of one sample changes nothing."""
    points = ratio_points(M) + [pt("a", 5.0, 1, threads=1), pt("c", 1.0, 1, threads=2)]
    assert rules.evaluate(RATIO, points).status == rules.HELD


def test_an_all_with_a_short_part_is_inconclusive_unless_another_part_failed():
    short = [pt("a", 5.0, 1, threads=2), pt("b", 10.0, 1, threads=2), pt("c", 20.0, M, threads=2),
             pt("d", 10.0, M, threads=2)]
    failed = dict(RATIO, num="c", den="d")
    assert rules.evaluate({"op": "all", "rules": [RATIO, dict(failed, op="ratio_above")]}, short).status == (
        rules.INCONCLUSIVE
    )
    assert rules.evaluate({"op": "all", "rules": [RATIO, failed]}, short).status == rules.FAILED


def test_exercised_keeps_the_exposure_with_the_reason():
    verdict = rules.evaluate(CASES[-1][1], exercised_case(1))
    assert verdict.status == rules.INCONCLUSIVE
    assert verdict.explanation.startswith(f"1 sample of a m at threads=2, at least {M} needed for an interval")
    assert "(exercised: 120 a hits over 12 runs of a)" in verdict.explanation


def launch_pair(a_launches, b_launches):
    return [pt("a", 5.0, len(a_launches), threads=2, launches=a_launches),
            pt("b", 10.0, len(b_launches), threads=2, launches=b_launches),
            # another group of the run, measured in all three launches
            pt("a", 5.0, 6, threads=1, launches=[1, 1, 2, 2, 3, 3]),
            pt("b", 10.0, 6, threads=1, launches=[1, 1, 2, 2, 3, 3])]


def test_one_launch_of_several_has_no_interval_across_launches():
    """In a run of three launches, a point whose six samples all come from one launch:
    its interval would see none of the variation between launches."""
    verdict = rules.evaluate(RATIO, launch_pair([1] * 6, [1] * 6))
    assert verdict.status == rules.INCONCLUSIVE
    assert verdict.explanation.startswith(
        "6 samples of a m at threads=2, all from one of the run's 3 launches; "
        "an interval across launches needs samples from at least 2"
    )
    # two launches of the three are enough
    assert rules.evaluate(RATIO, launch_pair([1, 1, 1, 2, 2, 2], [1, 1, 1, 2, 2, 2])).status == rules.HELD


def test_a_run_of_one_launch_decides_from_that_launch():
    points = [pt("a", 5.0, M, threads=2, launches=[1] * M), pt("b", 10.0, M, threads=2, launches=[1] * M)]
    assert rules.evaluate(RATIO, points).status == rules.HELD
