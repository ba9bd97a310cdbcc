# SPDX-License-Identifier: BSD-2-Clause
"""The workers' event counters reach the points (lab/perf_counters.h;
docs/lab.md, "Event counters"): each event the machine record names as read
is a "<name>_per_op" counter of every point whose team had at most one
thread per processing unit, read or not 0, and of no other point (a team of
more threads counts nothing: its context switches would cost more); the
events it names as not read are absent; --no-perf-counters removes them all
and says so in the machine record. Only the queue experiments (dg25-*,
queue-sides, queue-1p1c) count by default, whose workers seldom switch;
--perf-counters counts in every experiment (np99-counter here).

dg25-prodcons runs 2N threads: N = 1 fits any machine of 2 processing units,
N = 40 none of fewer than 80. Where hwloc finds no topology (forced here with
HWLOC_COMPONENTS=stop), the CPUs sched_getaffinity allows are the units.

The software events (minor page faults, CPU migrations) open wherever
perf_event_paranoid is below 3; where page faults do not, the test that
needs them is skipped. Run by CTest (lab_cli_test) with SYNCQ_LAB pointing
at the built binary.
"""
import os

import pytest

from labrun import lab, records

EVENTS = ("cycles", "instructions", "llc_misses", "branch_misses", "page_faults", "cpu_migrations")


def run(tmp_path, *extra, env=None):
    lab("run", "dg25-prodcons", "--size", "smoke", "--threads", "1,40", "--algos", "lcrq,vyukov",
        "--launches", "1", "--quiet", "--out", str(tmp_path), *extra, check=0, env=env)
    recs = records(tmp_path)
    (machine,) = [r for r in recs if r["type"] == "machine"]
    points = [r for r in recs if r["type"] == "point" and r["metric"] == "throughput"]
    assert len(points) == 4, points
    return machine, points


def read_events(machine):
    """The events the machine record names as read."""
    text = machine["perf_events"]
    if not text.startswith("read: "):
        return set()
    names = text[len("read: "):].split(" (")[0]
    return {n.strip() for n in names.split(",")}


def test_points_carry_the_events_read(tmp_path):
    machine, points = run(tmp_path)
    read = read_events(machine)
    assert read <= set(EVENTS), machine["perf_events"]
    if "page_faults" not in read:
        pytest.skip(f"the software events do not open here: {machine['perf_events']}")
    for name in set(EVENTS) - read:
        assert name in machine["perf_events"].split("not read: ")[1], machine["perf_events"]
    counted = 0
    for p in points:
        c = p["counters"]
        fits = 2 * p["params"]["threads"] <= machine["pus"]
        counted += fits
        for name in EVENTS:
            if name in read and fits:  # recorded even when it counted 0 (a pinned worker does not migrate)
                assert c[f"{name}_per_op"] >= 0, p
            else:
                assert f"{name}_per_op" not in c, p
        # a worker's thread starts with fresh stack pages at least, but the
        # count covers its body alone: far below one fault per operation
        assert c.get("page_faults_per_op", 0) < 1, p
        if "perf_running_fraction" in c:  # only where the PMU multiplexed a hardware counter
            assert 0 < c["perf_running_fraction"] < 1, p
    if machine["pus"] >= 2:
        assert counted == 2  # N = 1, both queues


def test_without_a_topology_the_teams_that_fit_the_cpus_count(tmp_path):
    """hwloc finds no topology (HWLOC_COMPONENTS=stop enables none of its
    discovery components, so hwloc_topology_load fails): the lab runs
    unpinned, the record's pus are the CPUs sched_getaffinity lets the lab
    run on (this process's, which it inherits), the teams that fit them
    count, and perf_events names that count and its source."""
    cpus = len(os.sched_getaffinity(0))
    machine, points = run(tmp_path, env={"HWLOC_COMPONENTS": "stop"})
    if machine["pinning"] != "refused: no topology":
        pytest.skip(f"hwloc found a topology despite HWLOC_COMPONENTS=stop: pinning {machine['pinning']}")
    assert machine["pus"] == cpus and machine["pus_source"].startswith("sched_getaffinity (no topology: "), machine
    read = read_events(machine)
    if "page_faults" not in read:
        pytest.skip(f"the software events do not open here: {machine['perf_events']}")
    assert f"one thread per processing unit [{cpus} by sched_getaffinity: no topology]" in machine["perf_events"]
    counted = 0
    for p in points:
        fits = 2 * p["params"]["threads"] <= cpus
        counted += fits
        for name in read:
            assert (f"{name}_per_op" in p["counters"]) == fits, (cpus, p)
    if cpus >= 2:
        assert counted == 2  # N = 1, both queues: two threads, one CPU each


def test_no_perf_counters_removes_them(tmp_path):
    machine, points = run(tmp_path, "--no-perf-counters")
    assert machine["perf_events"] == "off (--no-perf-counters)"
    assert machine["perf_counters"] == "available" or machine["perf_counters"].startswith("unavailable: ")
    for p in points:
        assert not {f"{name}_per_op" for name in EVENTS} & set(p["counters"]), p
        assert "perf_running_fraction" not in p["counters"], p
        assert "cas_per_op" in p["counters"], p  # the library's own counts stay


def counter_points(tmp_path, *extra):
    lab("run", "np99-counter", "--size", "smoke", "--threads", "1", "--algos", "cas",
        "--launches", "1", "--quiet", "--out", str(tmp_path), *extra, check=0)
    recs = records(tmp_path)
    (machine,) = [r for r in recs if r["type"] == "machine"]
    points = [r for r in recs if r["type"] == "point"]
    assert points
    return machine, points


def test_other_experiments_count_only_when_asked(tmp_path):
    machine, points = counter_points(tmp_path / "default")
    if "page_faults" not in read_events(machine):
        pytest.skip(f"the software events do not open here: {machine['perf_events']}")
    assert "in the experiments that count by default" in machine["perf_events"]
    for p in points:
        assert not {f"{name}_per_op" for name in EVENTS} & set(p["counters"]), p
    machine, points = counter_points(tmp_path / "all", "--perf-counters")
    assert "in the experiments that count by default" not in machine["perf_events"]
    for p in points:
        assert "page_faults_per_op" in p["counters"], p


def test_run_help_names_the_options():
    out = lab("run", "--help", check=0).stdout
    assert "--no-perf-counters" in out and "--perf-counters " in out
