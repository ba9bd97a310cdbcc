# SPDX-License-Identifier: BSD-2-Clause
"""The rule ops that decide claims on any machine size (docs/results-format.md):
needs_pus, in_pack, rise_then_plateau, along_ratio_below/above,
oversubscribed_ratio_above."""

import pytest

from syncq_report import rules
from syncq_report.load import Point

LINE = iter(range(1, 10_000))


def pt(algorithm, median, better="lower", metric="m", family="queue", props="fifo", peer=False, **params):
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
        samples=[median] * rules.MIN_SAMPLES,
        counters={},
        line=next(LINE),
        family=family,
        props=props,
        peer=peer,
    )


def machine(pus):
    return {"pus": pus}


# ---------------------------------------------------------------- needs_pus

CURVE = [pt("a", 10.0 * t, threads=t) for t in (1, 2, 4, 8, 16)] + [pt("b", 20.0 * t, threads=t) for t in (1, 2, 4, 8, 16)]
BELOW = {"op": "ratio_below", "metric": "m", "num": "a", "den": "b", "bound": 1.0}


def gate(pus, per=1, rule=BELOW):
    return {"op": "needs_pus", "pus": pus, "pus_per_thread": per, "rule": rule}


@pytest.mark.parametrize("have", [2, 4, 7])
def test_needs_pus_short_machine_says_what_it_needs(have):
    v = rules.evaluate(gate(8), CURVE, machine=machine(have))
    assert v.status == rules.UNMEASURABLE
    assert v.explanation == f"needs 8 processing units, this machine has {have}"
    assert v.label == f"not measurable here: needs 8 processing units, this machine has {have}"


@pytest.mark.parametrize("have,largest", [(8, 8), (16, 16), (64, 16)])
def test_needs_pus_reads_the_points_that_fit(have, largest):
    v = rules.evaluate(gate(8), CURVE, machine=machine(have))
    assert v.status == rules.HELD
    assert f"threads={largest}" in v.explanation


def test_needs_pus_per_thread_counts_every_running_thread():
    # 2 threads per count (N producers + N consumers): 16 units hold threads=8
    v = rules.evaluate(gate(8, per=2), CURVE, machine=machine(16))
    assert "threads=8" in v.explanation
    v = rules.evaluate(gate(8, per=2, rule={**BELOW, "min_threads": 16}), CURVE, machine=machine(16))
    assert v.status == rules.UNMEASURABLE and "below min_threads=16" in v.explanation


def test_needs_pus_decides_did_not_hold_too():
    v = rules.evaluate(gate(4, rule={**BELOW, "num": "b", "den": "a"}), CURVE, machine=machine(4))
    assert v.status == rules.FAILED


@pytest.mark.parametrize("record", [None, {}, {"pus": "16"}, {"pus": 0}, {"pus": True}])
def test_needs_pus_without_a_usable_machine_record(record):
    v = rules.evaluate(gate(2), CURVE, machine=record)
    assert v.status == rules.UNMEASURABLE
    assert "processing-unit count" in v.explanation or "machine record" in v.explanation


@pytest.mark.parametrize("bad", [
    {"op": "needs_pus", "rule": BELOW},
    {"op": "needs_pus", "pus": "8", "rule": BELOW},
    {"op": "needs_pus", "pus": 8},
    {"op": "needs_pus", "pus": 8, "rule": "x"},
    {"op": "needs_pus", "pus": 8, "pus_per_thread": 0, "rule": BELOW},
])
def test_malformed_needs_pus(bad):
    v = rules.evaluate(bad, CURVE, machine=machine(64))
    assert v.status == rules.UNMEASURABLE and "malformed" in v.explanation


def test_needs_pus_nests_in_all_and_passes_the_machine_down():
    rule = {"op": "all", "rules": [gate(2), {"op": "any", "rules": [gate(4)]}]}
    assert rules.evaluate(rule, CURVE, machine=machine(4)).status == rules.HELD
    assert rules.evaluate(rule, CURVE, machine=machine(2)).status == rules.UNMEASURABLE


# ---------------------------------------------------------------- in_pack

def pack(nblfq, others, better="higher", threads=(1, 8), **kw):
    points = []
    for t in threads:
        points.append(pt("nblfq", nblfq, better=better, threads=t))
        points += [pt(name, value, better=better, threads=t, **kw) for name, value in others.items()]
    return points


PACK = {"op": "in_pack", "metric": "m", "algo": "nblfq", "factor": 2}


def test_in_pack_held_within_the_factor_of_the_panel_median():
    v = rules.evaluate(PACK, pack(6.0, {"q1": 4.0, "q2": 10.0, "q3": 12.0, "q4": 20.0}))
    assert v.status == rules.HELD
    # panel median: the lower middle of q1..q4 by value, q2 (10); nblfq is 4th of 5, highest first
    assert "nblfq ranks 4 of 5 at threads=8" in v.explanation
    assert "panel median (q2) = 0.6" in v.explanation


def test_in_pack_did_not_hold_far_behind():
    v = rules.evaluate(PACK, pack(2.0, {"q1": 10.0, "q2": 12.0, "q3": 14.0}))
    assert v.status == rules.FAILED
    assert "ranks 4 of 4" in v.explanation


def test_in_pack_lower_is_better():
    v = rules.evaluate(PACK, pack(15.0, {"q1": 10.0, "q2": 12.0, "q3": 14.0}, better="lower"))
    assert v.status == rules.HELD and "ranks 4 of 4" in v.explanation and "bound < 2" in v.explanation
    v = rules.evaluate(PACK, pack(30.0, {"q1": 10.0, "q2": 12.0, "q3": 14.0}, better="lower"))
    assert v.status == rules.FAILED


def test_in_pack_panel_leaves_out_peers_spsc_and_other_families():
    points = pack(7.0, {"q1": 10.0, "q2": 12.0, "q3": 14.0})
    points += [pt("ck:ring", 1000.0, better="higher", peer=True, threads=8)]
    points += [pt("ring", 1000.0, better="higher", props="fifo,spsc", threads=8)]
    points += [pt("lock", 1000.0, better="higher", family="lock", threads=8)]
    v = rules.evaluate(PACK, points)
    assert v.status == rules.HELD and "ranks 4 of 4" in v.explanation
    assert "ck:ring" not in v.explanation and "ring," not in v.explanation and "lock" not in v.explanation
    with_peers = rules.evaluate({**PACK, "peers": True}, points)
    assert "ck:ring" in with_peers.explanation


def test_in_pack_needs_a_panel():
    v = rules.evaluate(PACK, pack(6.0, {"q1": 10.0, "q2": 12.0}))
    assert v.status == rules.UNMEASURABLE and "below the panel's minimum of 3" in v.explanation
    assert rules.evaluate({**PACK, "min_panel": 2}, pack(6.0, {"q1": 10.0, "q2": 12.0})).status == rules.HELD
    assert rules.evaluate(PACK, pack(6.0, {})).status == rules.UNMEASURABLE


@pytest.mark.parametrize("bad", [{"factor": 0.5}, {"factor": "2"}, {"peers": "yes"}, {"metric": 3}])
def test_malformed_in_pack(bad):
    v = rules.evaluate({**PACK, **bad}, pack(6.0, {"q1": 10.0, "q2": 12.0, "q3": 14.0}))
    assert v.status == rules.UNMEASURABLE and "malformed" in v.explanation


# ---------------------------------------------------------------- rise_then_plateau

SHAPE = {"op": "rise_then_plateau", "metric": "m", "algo": "q", "knee": 10, "factor": 2}


def curve(values):
    return [pt("q", v, threads=t) for t, v in values.items()]


def test_rise_then_plateau_held_on_004s_shape():
    v = rules.evaluate(SHAPE, curve({1: 0.1, 2: 0.5, 4: 1.5, 8: 2.8, 16: 3.1, 32: 3.0}))
    assert v.status == rules.HELD
    assert "rise from threads=1 to 8 held" in v.explanation and "within 2x of itself held" in v.explanation


def test_rise_then_plateau_did_not_hold_when_it_keeps_growing():
    v = rules.evaluate(SHAPE, curve({1: 0.1, 4: 1.5, 8: 2.0, 16: 5.0, 32: 9.0}))
    assert v.status == rules.FAILED and "within 2x of itself did not hold" in v.explanation


def test_rise_then_plateau_did_not_hold_when_it_falls():
    v = rules.evaluate(SHAPE, curve({1: 3.0, 8: 1.0, 16: 1.1}))
    assert v.status == rules.FAILED and "rise from threads=1 to 8 did not hold" in v.explanation


def test_rise_then_plateau_needs_two_counts_past_the_knee():
    v = rules.evaluate(SHAPE, curve({1: 0.1, 2: 0.5, 4: 1.5}))
    assert v.status == rules.UNMEASURABLE and "two thread counts from 4 on" in v.explanation
    v = rules.evaluate(SHAPE, curve({16: 1.0, 32: 1.0}))
    assert v.status == rules.UNMEASURABLE and "the rise needs" in v.explanation


def test_rise_then_plateau_reads_only_its_where():
    points = curve({1: 0.1, 8: 2.0, 16: 2.5}) + [pt("q", 50.0, threads=16, rtt_ns=0)]
    for p in points[:3]:
        p.params["rtt_ns"] = 2000
    v = rules.evaluate({**SHAPE, "where": {"rtt_ns": 2000}}, points)
    assert v.status == rules.HELD and "rtt_ns=2000" in v.explanation


def test_malformed_rise_then_plateau():
    assert "malformed" in rules.evaluate({**SHAPE, "factor": 0.5}, curve({1: 1.0})).explanation
    assert "malformed" in rules.evaluate({**SHAPE, "knee": "10"}, curve({1: 1.0})).explanation


# ---------------------------------------------------------------- along_ratio

SORT = [pt("mutex", v, sorters=s, send="link") for s, v in {10: 100.0, 20: 60.0, 100: 40.0, 1000: 90.0}.items()]
SORT += [pt("mutex", 1.0, sorters=100, send="copy")]


def along(op, num, den, bound, **extra):
    return {"op": op, "metric": "m", "algo": "mutex", "along": "sorters", "num": num, "den": den,
            "where": {"send": "link"}, "bound": bound, **extra}


def test_along_ratio_compares_one_algorithm_across_a_param():
    v = rules.evaluate(along("along_ratio_below", 100, 10, 1.0), SORT)
    assert v.status == rules.HELD
    assert v.explanation.startswith("mutex at sorters=100 / at sorters=10 = 0.4")
    assert rules.evaluate(along("along_ratio_above", 1000, 100, 1.0), SORT).status == rules.HELD
    assert rules.evaluate(along("along_ratio_above", 100, 1000, 1.0), SORT).status == rules.FAILED


def test_along_ratio_without_the_point_is_not_measurable():
    v = rules.evaluate(along("along_ratio_above", 6000, 100, 1.0), SORT)
    assert v.status == rules.UNMEASURABLE and "sorters=6000" in v.explanation


def test_along_ratio_where_must_fix_the_rest():
    v = rules.evaluate({**along("along_ratio_below", 100, 10, 1.0), "where": {}}, SORT)
    assert v.status == rules.UNMEASURABLE and "'where' must fix" in v.explanation


@pytest.mark.parametrize("bad", [{"along": 3}, {"num": "100"}, {"bound": None}, {"where": {"sorters": 10, "send": "link"}}])
def test_malformed_along_ratio(bad):
    v = rules.evaluate({**along("along_ratio_below", 100, 10, 1.0), **bad}, SORT)
    assert v.status == rules.UNMEASURABLE and "malformed" in v.explanation


# ---------------------------------------------------------------- oversubscribed_ratio_above

# A queue's throughput over threads = N (N producers + N consumers): "keeps" holds
# its rate past the units, "falls" loses nine tenths of it there.
CROWD = [pt("keeps", v, better="higher", threads=t) for t, v in {1: 40.0, 2: 30.0, 4: 36.0, 8: 20.0, 16: 19.0}.items()]
CROWD += [pt("falls", v, better="higher", threads=t) for t, v in {1: 90.0, 2: 9.0, 4: 3.0, 8: 22.0, 16: 2.0}.items()]


def crowd(algo, **extra):
    return {"op": "oversubscribed_ratio_above", "metric": "m", "algo": algo, "pus_per_thread": 2, "bound": 0.5,
            **extra}


@pytest.mark.parametrize("have,full,crowded", [(2, 1, 2), (16, 8, 16), (4, 2, 4)])
def test_oversubscribed_ratio_reads_the_machine_filled_once_and_twice(have, full, crowded):
    v = rules.evaluate(crowd("keeps"), CROWD, machine=machine(have))
    assert v.status == rules.HELD
    assert v.explanation.startswith(
        f"keeps at threads={crowded} ({2 * crowded} threads on {have} processing units) / at threads={full} ({2 * full})")
    assert rules.evaluate(crowd("falls"), CROWD, machine=machine(have)).status == rules.FAILED


def test_oversubscribed_ratio_between_measured_counts():
    # 12 units: threads=4 (8 running) is the most that fits, threads=16 (32) the fewest at 2x
    v = rules.evaluate(crowd("keeps"), CROWD, machine=machine(12))
    assert "at threads=16 (32 threads on 12 processing units) / at threads=4 (8)" in v.explanation
    v = rules.evaluate(crowd("keeps", over=4), CROWD, machine=machine(4))
    assert "at threads=8 (16 threads on 4 processing units) / at threads=2 (4)" in v.explanation


@pytest.mark.parametrize("have", [32, 64])
def test_oversubscribed_ratio_without_the_crowded_point_says_what_it_needs(have):
    v = rules.evaluate(crowd("keeps"), CROWD, machine=machine(have))
    assert v.status == rules.UNMEASURABLE
    assert f"fitting on the {have} processing units and with 2x as many" in v.explanation
    assert "measured threads: 1, 2, 4, 8, 16" in v.explanation


def test_oversubscribed_ratio_without_a_point_that_fits():
    points = [pt("keeps", 1.0, better="higher", threads=4)]
    v = rules.evaluate(crowd("keeps"), points, machine=machine(2))
    assert v.status == rules.UNMEASURABLE and "measured threads: 4" in v.explanation


@pytest.mark.parametrize("record", [None, {}, {"pus": 0}])
def test_oversubscribed_ratio_needs_the_machine_record(record):
    v = rules.evaluate(crowd("keeps"), CROWD, machine=record)
    assert v.status == rules.UNMEASURABLE
    assert "processing-unit count" in v.explanation or "machine record" in v.explanation


@pytest.mark.parametrize("bad", [{"algo": 3}, {"bound": "0.5"}, {"over": 1}, {"pus_per_thread": 0}, {"where": []}])
def test_malformed_oversubscribed_ratio(bad):
    v = rules.evaluate({**crowd("keeps"), **bad}, CROWD, machine=machine(2))
    assert v.status == rules.UNMEASURABLE and "malformed" in v.explanation
