# SPDX-License-Identifier: BSD-2-Clause
"""syncq-lab --queue-wait: the waiting of dg25's queue drivers after a failed poll.

The option parses, a bad value is a usage error, every policy moves every
item exactly once (the run checks its checksum and fails otherwise), and the
policy reaches the results: the machine record, the experiments'
descriptions, a note on every non-default run, the report's machine table,
and compare's warning when two runs waited differently.

Run by CTest (lab_cli_test) with SYNCQ_LAB pointing at the built binary.
"""
import os
import subprocess

import pytest

from labrun import LAB, lab, records

POLICIES = ("pause", "backoff", "yield")
QUEUE_EXPERIMENTS = ("dg25-prodcons", "dg25-latency", "dg25-mt-pingpong", "dg25-casfail")


def queue_run(out, *extra):
    """dg25-prodcons with two queues, one producer and one consumer, then two
    of each (4 threads: more than this machine's cores when it has 2)."""
    return lab("run", "dg25-prodcons", "--size", "smoke", "--threads", "1,2", "--algos", "nblfq,vyukov",
               "--quiet", "--out", str(out), *extra, check=0)


@pytest.mark.parametrize("value", ["", "spin", "Pause", "pause,yield", "backof"])
def test_an_unknown_policy_is_a_usage_error_naming_the_valid_ones(value, tmp_path):
    r = lab("run", "dg25-prodcons", "--size", "smoke", "--queue-wait", value, "--out", str(tmp_path), check=2)
    assert f"unknown --queue-wait '{value}'" in r.stderr
    for name in POLICIES:
        assert name in r.stderr.splitlines()[0]
    assert "usage: syncq-lab run" in r.stderr
    assert r.stdout == ""
    assert not (tmp_path / "results.jsonl").exists()


def test_a_missing_policy_is_a_usage_error():
    r = lab("run", "dg25-prodcons", "--queue-wait", check=2)
    assert "--queue-wait needs a value" in r.stderr


def test_run_help_documents_the_option():
    out = lab("run", "--help", check=0).stdout + lab("help", check=0).stdout
    assert "--queue-wait" in out
    for name in POLICIES:
        assert name in out


def test_the_default_is_pause_and_says_so(tmp_path):
    queue_run(tmp_path)
    recs = records(tmp_path)
    machine = [r for r in recs if r["type"] == "machine"]
    assert len(machine) == 1 and machine[0]["queue_wait"] == "pause"
    (exp,) = [r for r in recs if r["type"] == "experiment"]
    assert "--queue-wait pause" in exp["description"]
    assert not [r for r in recs if r["type"] == "note" and "--queue-wait" in r["text"]]


@pytest.mark.parametrize("policy", ["backoff", "yield"])
def test_a_policy_reaches_the_record_the_description_and_a_note(policy, tmp_path):
    queue_run(tmp_path, "--queue-wait", policy)
    recs = records(tmp_path)
    (machine,) = [r for r in recs if r["type"] == "machine"]
    assert machine["queue_wait"] == policy
    assert f"--queue-wait {policy}" in machine["command"]
    (exp,) = [r for r in recs if r["type"] == "experiment"]
    assert f"--queue-wait {policy}" in exp["description"]
    notes = [r["text"] for r in recs if r["type"] == "note" and r["experiment"] == "dg25-prodcons"]
    assert any(f"--queue-wait {policy}" in t and "not as the lab's default" in t for t in notes), notes
    points = [r for r in recs if r["type"] == "point" and r["metric"] == "throughput"]
    assert {(p["algorithm"], p["params"]["threads"]) for p in points} == {
        (a, t) for a in ("nblfq", "vyukov") for t in (1.0, 2.0)
    }


@pytest.mark.parametrize("policy", POLICIES)
def test_every_policy_moves_every_item_through_every_queue_experiment(policy, tmp_path):
    """The samples fail the run on a lost or duplicated item or a message left
    behind; 3 thread pairs oversubscribe a 2-core machine, where a wait that
    never let a preempted thread run would not end."""
    lab("run", ",".join(QUEUE_EXPERIMENTS), "--size", "smoke", "--threads", "1,3", "--algos", "nblfq,lcrq",
        "--queue-wait", policy, "--quiet", "--out", str(tmp_path), check=0)
    recs = records(tmp_path)
    assert {r["name"] for r in recs if r["type"] == "experiment"} == set(QUEUE_EXPERIMENTS)
    for exp in QUEUE_EXPERIMENTS:
        assert [r for r in recs if r["type"] == "point" and r["experiment"] == exp], exp
    modes = {r["params"].get("mode") for r in recs if r["type"] == "point" and r["experiment"] == "dg25-latency"}
    assert "pingpong" in modes


def test_a_launch_of_a_run_keeps_the_policy(tmp_path):
    lab("run", "dg25-prodcons", "--size", "smoke", "--threads", "1", "--algos", "nblfq", "--launches", "2",
        "--queue-wait", "backoff", "--quiet", "--out", str(tmp_path), check=0)
    recs = records(tmp_path)
    (machine,) = [r for r in recs if r["type"] == "machine"]
    assert machine["queue_wait"] == "backoff"
    assert {r.get("launch") for r in recs if r["type"] == "point"} == {1, 2}


def test_the_report_shows_the_policy_and_compare_warns_across_policies(tmp_path):
    pause, backoff = tmp_path / "pause", tmp_path / "backoff"
    queue_run(pause)
    queue_run(backoff, "--queue-wait", "backoff")
    r = lab("report", str(backoff))
    assert r.returncode == 0, r.stderr
    html = (backoff / "report.html").read_text()
    assert "Queue waiting (dg25)" in html
    row = html[html.index("Queue waiting (dg25)"):]
    assert row[: row.index("</tr>")].count("backoff") == 1
    assert "not as the lab&#x27;s default" in html or "not as the lab's default" in html
    r = lab("compare", str(pause / "results.jsonl"), str(backoff / "results.jsonl"))
    assert r.returncode == 0, r.stderr
    assert "  queue_wait (moves dg25-prodcons): how the queue experiments waited after a failed poll" in r.stdout
    assert "      before: pause\n      after:  backoff\n" in r.stdout
    r = lab("compare", str(pause / "results.jsonl"), str(pause / "results.jsonl"))
    assert r.returncode == 0, r.stderr
    assert "queue_wait" not in r.stdout


def test_points_count_the_polls_that_waited(tmp_path):
    """One producer and one consumer confined to one processing unit, 16,384
    items each through a queue of 1,024 slots: the producer cannot put every
    item before the consumer takes some, nor the consumer take one before it
    is put, and each runs a whole time slice (milliseconds: thousands of
    operations) at a turn, so one side finds the queue full or empty and
    polls again; the points say how often. LCRQ is unbounded: it never
    answers FULL, so its points never count a full poll."""
    cpu = min(os.sched_getaffinity(0))
    r = subprocess.run([LAB, "run", "dg25-prodcons", "--size", "quick", "--threads", "1", "--algos", "vyukov,lcrq",
                        "--reps", "3", "--max-reps", "3", "--claim-budget", "0", "--no-pin", "--quiet",
                        "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=300,
                       preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    assert r.returncode == 0, r.stderr
    points = {p["algorithm"]: p for p in records(tmp_path)
              if p["type"] == "point" and p["metric"] == "throughput"}
    assert set(points) == {"vyukov", "lcrq"}
    waits = points["vyukov"]["counters"]
    assert waits.get("empty_polls_per_op", 0) + waits.get("full_polls_per_op", 0) > 0, waits
    assert "full_polls_per_op" not in points["lcrq"]["counters"], points["lcrq"]["counters"]

