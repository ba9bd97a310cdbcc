# SPDX-License-Identifier: BSD-2-Clause
"""Standings against the peer libraries: the table, the rules, the records they read."""

import pytest
from support import fixture_records, write_records

from syncq_report import cli, load, rules, standings
from syncq_report.load import Point

LINE = iter(range(1, 10_000))


def pt(algorithm, threads, median, metric="throughput", better="higher", peer=False, family="queue", **params):
    return Point(
        experiment="dg25-prodcons",
        algorithm=algorithm,
        params={"threads": threads, **params},
        metric=metric,
        unit="Mops/s" if metric == "throughput" else "x",
        better=better,
        median=median,
        min=median,
        max=median,
        samples=[median] * rules.MIN_SAMPLES,
        counters={},
        line=next(LINE),
        peer=peer,
        family=family,
    )


POINTS = [
    pt("nblfq", 1, 30.0),
    pt("vyukov", 1, 10.0),
    pt("ck:ring_mpmc", 1, 20.0, peer=True),
    pt("boost:queue", 1, 5.0, peer=True),
    pt("nblfq", 4, 3.0),
    pt("ck:ring_mpmc", 4, 4.0, peer=True),
    pt("moodycamel:concurrentqueue", 4, 8.0, peer=True),
    pt("two-cas", 4, 99.0, family=None),  # a floor, not a registry entry
    pt("nblfq", 8, 2.0),  # no peer measured here
    pt("nblfq", 1, 1.0, metric="throughput_ratio"),  # normalized: left out
    pt("ck:ring_mpmc", 1, 0.66, metric="throughput_ratio", peer=True),
]


def by(rows, algorithm, threads):
    (row,) = [s for s in rows if s.algorithm == algorithm and s.params["threads"] == threads]
    return row


def test_best_peer_is_the_best_by_the_metrics_direction_at_each_point():
    rows = standings.compute(POINTS)
    assert {(s.algorithm, s.params["threads"]) for s in rows} == {("nblfq", 1), ("vyukov", 1), ("nblfq", 4)}
    one = by(rows, "nblfq", 1)
    assert (one.best_peer, one.peer_median, one.ratio, one.ahead) == ("ck:ring_mpmc", 20.0, 1.5, True)
    behind = by(rows, "vyukov", 1)
    assert (behind.best_peer, behind.ratio, behind.ahead) == ("ck:ring_mpmc", 0.5, False)
    four = by(rows, "nblfq", 4)
    assert (four.best_peer, four.ratio, four.ahead) == ("moodycamel:concurrentqueue", 0.375, False)


def test_lower_is_better_picks_the_smallest_peer_and_ahead_means_smaller():
    points = [
        pt("mcs", 1, 10.0, metric="time_per_op", better="lower", family="lock"),
        pt("ck:spinlock_mcs", 1, 12.0, metric="time_per_op", better="lower", peer=True, family="lock"),
        pt("tbb:queuing_mutex", 1, 15.0, metric="time_per_op", better="lower", peer=True, family="lock"),
    ]
    (row,) = standings.compute(points)
    assert (row.best_peer, row.ahead) == ("ck:spinlock_mcs", True)
    assert row.ratio == pytest.approx(10.0 / 12.0)


def test_a_ratio_that_prints_as_one_is_level_not_ahead_or_behind():
    from syncq_report import page

    rows = standings.compute([pt("nblfq", 1, 100.2), pt("ck:ring_mpmc", 1, 100.0, peer=True),
                              pt("vyukov", 1, 90.0)])
    words = {r.algorithm: page._standing_word(r) for r in rows}
    assert words == {"nblfq": "level", "vyukov": "behind"}


def test_no_peer_no_standings_and_a_zero_peer_median_gives_no_ratio():
    assert standings.compute([pt("nblfq", 1, 3.0), pt("vyukov", 1, 2.0)]) == []
    (row,) = standings.compute([pt("nblfq", 1, 3.0), pt("ck:ring_mpmc", 1, 0.0, peer=True)])
    assert row.ratio is None and row.ahead


def peer_rule(op="peer_ratio_above", bound=1.0, **extra):
    rule = {"op": op, "metric": "throughput", "algo": "nblfq", "at": {"threads": 1}, "bound": bound}
    rule.update(extra)
    return rule


def test_peer_ratio_rules_compare_with_the_best_peer():
    held = rules.evaluate(peer_rule(), POINTS)
    assert held.status == rules.HELD
    assert "best peer (ck:ring_mpmc, of 2) = 1.5" in held.explanation
    assert rules.evaluate(peer_rule(bound=2.0), POINTS).status == rules.FAILED
    assert rules.evaluate(peer_rule(op="peer_ratio_below", bound=2.0), POINTS).status == rules.HELD
    at4 = rules.evaluate(peer_rule(op="peer_ratio_above", bound=0.5, at={"threads": 4}), POINTS)
    assert at4.status == rules.FAILED and "moodycamel" in at4.explanation


def test_peer_ratio_rules_say_why_they_cannot_be_measured():
    no_peers = rules.evaluate(peer_rule(), [p for p in POINTS if not p.peer])
    assert no_peers.status == rules.UNMEASURABLE and "no peer library measured" in no_peers.explanation
    none_there = rules.evaluate(peer_rule(at={"threads": 8}), POINTS)
    assert none_there.status == rules.UNMEASURABLE and "no peer point at threads=8" in none_there.explanation
    small = rules.evaluate(peer_rule(at="max_threads", min_threads=8), POINTS)
    assert small.status == rules.UNMEASURABLE and "below min_threads" in small.explanation
    assert rules.evaluate(peer_rule(algo="absent"), POINTS).status == rules.UNMEASURABLE
    assert rules.evaluate(peer_rule(bound="x"), POINTS).status == rules.UNMEASURABLE


def test_records_carry_peer_family_props_and_the_machine_its_peers(tmp_path):
    records = fixture_records()
    machine = dict(records[0])
    machine["peers"] = [
        {"library": "ck", "package": "Debian libck-dev", "registered": 15, "why": ""},
        {"library": "dpdk", "package": "Debian libdpdk-dev", "registered": 0, "why": "absent: not found"},
    ]
    machine["peers_note"] = "SPSC peers not measured"
    ours = dict(records[2], family="counter", props="linearizable", peer=False)
    theirs = dict(records[2], algorithm="ck:counter", family="counter", props="peer", peer=True)
    theirs["median"], theirs["min"], theirs["max"] = 1.0, 1.0, 1.0
    (tmp_path / "out").mkdir()
    write_records(tmp_path / "out" / "results.jsonl", [machine, records[1], ours, theirs])
    results = load.load(tmp_path / "out" / "results.jsonl")
    points = results.experiments[0].points
    assert [(p.algorithm, p.peer, p.family) for p in points] == [("cas", False, "counter"), ("ck:counter", True, "counter")]
    assert results.machines[0].fields["peers"][1]["why"] == "absent: not found"
    cli.build(tmp_path / "out", "t")
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "Peer libraries" in page and "absent: not found" in page and "SPSC peers not measured" in page
    assert "Standings against the peer libraries" in page and "ck:counter" in page


def test_old_records_without_the_fields_load_as_not_peers(tmp_path):
    records = fixture_records()
    (tmp_path / "out").mkdir()
    write_records(tmp_path / "out" / "results.jsonl", records)
    results = load.load(tmp_path / "out" / "results.jsonl")
    assert all(not p.peer and p.family is None for r in results.experiments for p in r.points)
    assert all(standings.compute(r.points) == [] for r in results.experiments)


@pytest.mark.parametrize(
    "field, value",
    [("peer", "yes"), ("family", 3), ("props", None)],
)
def test_bad_optional_point_fields_are_refused(tmp_path, field, value):
    records = fixture_records()
    bad = dict(records[2], **{field: value})
    (tmp_path / "out").mkdir()
    write_records(tmp_path / "out" / "results.jsonl", [records[0], records[1], bad])
    with pytest.raises(load.ResultsError, match=f"point field '{field}'"):
        load.load(tmp_path / "out" / "results.jsonl")


def test_bad_machine_peers_are_refused(tmp_path):
    records = fixture_records()
    machine = dict(records[0], peers=[{"library": "ck", "registered": "15"}])
    (tmp_path / "out").mkdir()
    write_records(tmp_path / "out" / "results.jsonl", [machine, *records[1:]])
    with pytest.raises(load.ResultsError, match="machine field 'peers'"):
        load.load(tmp_path / "out" / "results.jsonl")
