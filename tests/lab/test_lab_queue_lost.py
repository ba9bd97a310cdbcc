# SPDX-License-Identifier: BSD-2-Clause
"""syncq-lab's queue drivers and a queue that loses or duplicates an item.

SYNCQ_LAB_QUEUE_FAULT=lose:K (dup:K) registers "faulty:lose" ("faulty:dup"),
a two-lock queue whose K-th enqueue loses (duplicates) its item. A loss must
fail the sample through the lab's own check, naming the queue and the count,
long before the watchdog (set here to 60 s, so a driver that waited for it
would show the watchdog's message instead); a duplicate must fail it with its
own message; a queue that loses nothing must pass.

The drivers whose every thread both puts and takes (ms98-queue,
np99-mp-queue, and the applications' pools, where the producers are the
consumers themselves) fail with their own form of the message, "every
thread had finished or was waiting for work". The same variable registers
a stack "faulty:lose" ("faulty:dup") for the applications whose pool is a
stack, and np99-mp-queue's non-blocking discipline runs on the faulty
queue in place of "ms".

Run by CTest (lab_cli_test) with SYNCQ_LAB pointing at the built binary.
"""
import re

import pytest

from labrun import LOST_MS, lab, records

LOST = re.compile(r"faulty:lose lost (\d+) of (\d+) items: every producer had finished "
                  r"and the queue answered EMPTY for 1000 ms")

# (experiment, extra arguments, K, the lost count and the total the message names)
LOSSES = [
    # 1 producer, 1 consumer, 1,000 items (smoke)
    ("dg25-prodcons", ["--threads", "1"], 500, 1, 1000),
    # 2 of each: the other consumer stops too
    ("dg25-prodcons", ["--threads", "2"], 500, 1, 2000),
    ("queue-sides", ["--threads", "2"], 500, 1, 2000),
    # stream: 2,000 items; pingpong: 500 round trips of one item
    ("queue-1p1c", ["--where", "mode=stream"], 500, 1, 2000),
    ("queue-1p1c", ["--where", "mode=pingpong"], 50, 1, 1000),
    # 100 round trips a pinger, a request and a reply each; the 50th request is lost
    ("dg25-mt-pingpong", ["--threads", "1"], 50, 1, 200),
    ("dg25-latency", ["--where", "mode=pingpong"], 50, 1, 1000),
]


def run(tmp_path, exp, extra, fault, algo, check):
    return lab("run", exp, "--size", "smoke", "--algos", algo, "--quiet", "--experiment-timeout", "60",
               "--out", str(tmp_path), *extra, env={"SYNCQ_LAB_QUEUE_FAULT": fault, **LOST_MS}, check=check, timeout=120)


@pytest.mark.parametrize("exp,extra,k,lost,total", LOSSES, ids=[f"{l[0]}-{l[1][-1]}" for l in LOSSES])
def test_a_lost_item_fails_the_sample_naming_the_count(exp, extra, k, lost, total, tmp_path):
    r = run(tmp_path, exp, extra, f"lose:{k}", "faulty:lose", 1)
    assert "did not finish within" not in r.stderr, r.stderr
    found = LOST.search(r.stderr)
    assert found, r.stderr
    assert (int(found[1]), int(found[2])) == (lost, total), found[0]
    notes = [n["text"] for n in records(tmp_path) if n["type"] == "note"]
    assert any(n.startswith("FAILED: faulty:lose") and LOST.search(n) for n in notes), notes


DUPS = [
    ("dg25-prodcons", ["--threads", "2"], "faulty:dup gave out more items than were enqueued: every consumer "
     "took its share of the 2000 and 1 was left in the queue (a duplicate)"),
    ("queue-sides", ["--threads", "1"], "faulty:dup gave out more items than were enqueued: every consumer "
     "took its share of the 1000 and 1 was left in the queue (a duplicate)"),
    ("queue-1p1c", ["--where", "mode=stream"], "faulty:dup gave out more items than were enqueued (stream): "
     "1 left in the queue after the 2000 items were taken"),
    ("dg25-mt-pingpong", ["--threads", "1"], "faulty:dup: 2 messages left in the queues after every pinger "
     "had its replies (a duplicate)"),
    ("dg25-latency", ["--where", "mode=pingpong"], "faulty:dup gave out more items than were enqueued "
     "(pingpong): 2 left in the queues after the 500 round trips"),
]


@pytest.mark.parametrize("exp,extra,message", DUPS, ids=[f"{d[0]}-{d[1][-1]}" for d in DUPS])
def test_a_duplicated_item_fails_the_sample_saying_so(exp, extra, message, tmp_path):
    r = run(tmp_path, exp, extra, "dup:50", "faulty:dup", 1)
    assert message in r.stderr, r.stderr
    assert "lost" not in r.stderr and "did not finish within" not in r.stderr, r.stderr


@pytest.mark.parametrize("exp,extra", [("dg25-prodcons", ["--threads", "1,3"]), ("queue-sides", ["--threads", "1,3"]),
                                       ("queue-1p1c", []), ("dg25-mt-pingpong", ["--threads", "1,3"]),
                                       ("dg25-latency", ["--where", "mode=pingpong"])])
def test_queues_that_lose_nothing_pass(exp, extra, tmp_path):
    """The fault past the last enqueue (the wrapper alone), and queues whose
    EMPTY may be spurious while an enqueue is in flight (Vyukov's, SCQ),
    with 3 threads a side: more than this machine's cores when it has 2."""
    r = run(tmp_path, exp, extra, "lose:100000000", "faulty:lose,vyukov,scq,lcrq", 0)
    assert "lost" not in r.stderr, r.stderr
    points = [p for p in records(tmp_path) if p["type"] == "point"]
    assert {p["algorithm"] for p in points} >= {"faulty:lose", "vyukov", "scq", "lcrq"}


@pytest.mark.parametrize("value", ["", "lose", "lose:", "lose:0", "lose:x", "dup:-1", "drop:3", "lose:3x"])
def test_a_bad_fault_is_refused(value):
    r = lab("list", env={"SYNCQ_LAB_QUEUE_FAULT": value}, check=2)
    assert "SYNCQ_LAB_QUEUE_FAULT must be lose:K or dup:K" in r.stderr


def test_without_the_variable_there_is_no_faulty_queue():
    out = lab("algos", "queue", check=0).stdout
    assert "faulty:" not in out
    out = lab("algos", "queue", env={"SYNCQ_LAB_QUEUE_FAULT": "dup:2"}, check=0).stdout
    assert "faulty:dup" in out and "faulty:lose" not in out
    assert "faulty:" not in lab("algos", "stack", check=0).stdout
    out = lab("algos", "stack", env={"SYNCQ_LAB_QUEUE_FAULT": "lose:2"}, check=0).stdout
    assert "faulty:lose" in out and "faulty:dup" not in out


LOST_BY_ALL = re.compile(r"(\S+) lost (\d+) of (\d+) (\w+): every thread had finished or was waiting for work, "
                         r"and the ([a-z ]+) answered EMPTY for 1000 ms")

# (experiment, extra arguments, K, the structures the messages name (one a failed point, in
# order), what they count, the total when it is fixed, else the most it can be)
LOSSES_BY_ALL = [
    # 1,000 pairs in each of two panels (delay_ns 6000 and 0): one thread enqueues 500, then waits
    ("ms98-queue", ["--threads", "1"], 500, ["queue", "queue"], "items", 500),
    # two threads: both end waiting, having enqueued at most the 1,000 pairs
    ("ms98-queue", ["--threads", "2"], 500, ["queue", "queue"], "items", -1000),
    # a copy (level 3) of two threads, 2,000 operations, half of them enqueues; under the
    # pseudo-scheduler time-sharing, co-scheduling, and as processes under Linux
    ("np99-mp-queue", ["--algos", "non-blocking@ts"], 300, ["queue"], "items", -1000),
    ("np99-mp-queue", ["--algos", "non-blocking@gang"], 300, ["queue"], "items", -1000),
    ("np99-mp-queue", ["--algos", "non-blocking@linux"], 300, ["queue"], "items", -1000),
    # three threads a copy, shares of 667, 667 and 666 operations: two end taking back their last item
    ("np99-mp-queue", ["--pus", "3", "--algos", "non-blocking@ts"], 300, ["queue"], "items", -1001),
    # 20,000 keys; the pool a queue, then a stack
    ("ms98-quicksort", ["--threads", "2"], 5, ["queue", "stack"], "intervals", None),
    # the task queue of 688 tasks over the queue, then the stack
    ("np99-apps-dedicated", ["--threads", "2", "--where", "kernel=taskq"], 5, ["queue", "stack"], "tasks", 688),
    # the hybrid program with the faulty stack swapped in
    ("ms98-tsp", ["--threads", "2"], 5, ["heap and the stack"], "tours", None),
]


@pytest.mark.parametrize("exp,extra,k,structures,items,total", LOSSES_BY_ALL,
                         ids=[f"{l[0]}-{'-'.join(a.lstrip('-') for a in l[1])}" for l in LOSSES_BY_ALL])
def test_a_lost_item_stops_threads_that_both_put_and_take(exp, extra, k, structures, items, total, tmp_path):
    algos = [] if "--algos" in extra else ["--algos", "faulty:lose"]
    r = lab("run", exp, "--size", "smoke", *algos, "--quiet", "--experiment-timeout", "60", "--out", str(tmp_path),
            *extra, env={"SYNCQ_LAB_QUEUE_FAULT": f"lose:{k}", **LOST_MS}, check=1, timeout=120)
    assert "did not finish within" not in r.stderr, r.stderr
    failed = [LOST_BY_ALL.search(n["text"]) for n in records(tmp_path)
              if n["type"] == "note" and n["text"].startswith("FAILED:")]
    assert len(failed) == len(structures) and all(failed), r.stderr
    for found, structure in zip(failed, structures):
        assert found[1].endswith("faulty:lose") and found[2] == "1", found[0]
        assert (found[4], found[5]) == (items, structure), found[0]
        n = int(found[3])
        assert n == total if total is not None and total > 0 else n >= 1 and (total is None or n <= -total), found[0]


DUPS_BY_ALL = [
    ("ms98-queue", ["--threads", "1", "--where", "delay_ns=0"], "faulty:dup gave out more items than were enqueued: "
     "every consumer took its share of the 1000 and 1 was left in the queue (a duplicate)"),
    ("np99-mp-queue", ["--algos", "non-blocking@ts"], "faulty:dup gave out more items than were enqueued: every "
     "consumer took its share of the 1000 and 1 was left in the queue (a duplicate)"),
]


@pytest.mark.parametrize("exp,extra,message", DUPS_BY_ALL, ids=[d[0] for d in DUPS_BY_ALL])
def test_a_duplicate_is_named_by_threads_that_both_put_and_take(exp, extra, message, tmp_path):
    algos = [] if "--algos" in extra else ["--algos", "faulty:dup"]
    r = lab("run", exp, "--size", "smoke", *algos, "--quiet", "--experiment-timeout", "60", "--out", str(tmp_path),
            *extra, env={"SYNCQ_LAB_QUEUE_FAULT": "dup:50", **LOST_MS}, check=1, timeout=120)
    assert message in r.stderr, r.stderr
    assert "lost" not in r.stderr and "did not finish within" not in r.stderr, r.stderr


@pytest.mark.parametrize("exp,extra", [
    # Vyukov's EMPTY is spurious while an enqueue is in flight; levels 2 and 3 are not run at smoke
    ("ms98-queue", ["--threads", "1,2", "--algos", "faulty:lose,vyukov,ms"]),
    # every discipline and schedule, the non-blocking one on the faulty queue; with three
    # threads a copy, two of them with an odd share
    ("np99-mp-queue", []),
    ("np99-mp-queue", ["--pus", "3"]),
    # level 1 over the faulty queue and stack, level 3 over 001's pools under the pseudo-scheduler
    # and as processes
    ("ms98-quicksort", ["--threads", "2", "--algos", "faulty:lose,ms,treiber,single-lock-ps,lock-ps"]),
    ("np99-apps-dedicated", ["--threads", "2", "--where", "kernel=taskq", "--algos", "faulty:lose,ms,ttas"]),
])
def test_threads_that_both_put_and_take_pass_when_nothing_is_lost(exp, extra, tmp_path):
    """The fault past the last enqueue (the wrapper alone): the idle and
    waiting threads of these drivers, the pseudo-scheduler's stopped ones
    among them, never make the watch fire."""
    r = lab("run", exp, "--size", "smoke", "--quiet", "--experiment-timeout", "60", "--out", str(tmp_path), *extra,
            env={"SYNCQ_LAB_QUEUE_FAULT": "lose:100000000", **LOST_MS}, check=0, timeout=120)
    assert "lost" not in r.stderr and "FAILED" not in r.stderr, r.stderr
    points = [p for p in records(tmp_path) if p["type"] == "point"]
    # a time or rate is never 0; a count of events may be (the pseudo-scheduler's deferred
    # preemptions of an ordinary lock, which makes no request)
    assert points and all(p["median"] > 0 for p in points if p["unit"] != "count")
    notes = [n["text"] for n in records(tmp_path) if n["type"] == "note"]
    if exp == "np99-mp-queue":
        assert any("runs on \"faulty:lose\", the lab's faulty queue" in n for n in notes), notes


def test_ms98_stack_names_a_lost_item_without_waiting(tmp_path):
    """ms98-stack's pop never waits (each thread's push precedes its pop):
    the faulty stack's lost item is a pop answered EMPTY, named at once."""
    r = lab("run", "ms98-stack", "--size", "smoke", "--algos", "faulty:lose", "--threads", "1", "--where",
            "delay_ns=0", "--quiet", "--experiment-timeout", "60", "--out", str(tmp_path),
            env={"SYNCQ_LAB_QUEUE_FAULT": "lose:5", **LOST_MS}, check=1, timeout=120)
    assert ("faulty:lose lost 1 of 2000 items: the stack answered EMPTY to 1 of the 2000 pops, though each "
            "thread's push precedes its pop; 0 other failed operations, final state right at the end") in r.stderr, \
        r.stderr
