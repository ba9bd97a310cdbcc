# SPDX-License-Identifier: BSD-2-Clause
"""syncq-lab's queue drivers and a queue that loses or duplicates an item.

SYNCQ_LAB_QUEUE_FAULT=lose:K (dup:K) registers "faulty:lose" ("faulty:dup"),
a two-lock queue whose K-th enqueue loses (duplicates) its item. A loss must
fail the sample through the lab's own check, naming the queue and the count,
long before the watchdog (set here to 60 s, so a driver that waited for it
would show the watchdog's message instead); a duplicate must fail it with its
own message; a queue that loses nothing must pass.

Run by CTest (lab_cli_test) with SYNCQ_LAB pointing at the built binary.
"""
import re

import pytest

from labrun import lab, records

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
               "--out", str(tmp_path), *extra, env={"SYNCQ_LAB_QUEUE_FAULT": fault}, check=check, timeout=120)


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
