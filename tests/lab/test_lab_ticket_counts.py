# SPDX-License-Identifier: BSD-2-Clause
"""The ticket queues' counts of their time past the ticket reach the points:
deq_waits_per_op, deq_wait_pauses_per_op, deq_waits_out_per_op,
enq_cells_lost_per_op, rings_closed_per_op, enq_slow_per_op (syncq/stats.h;
docs/results-format.md).

queue-sides with one producer, then one consumer, is deterministic: the
producer fills rings of dg25's 1,024 cells, closing each full one (the
ticket it took there is never written, and the ring records it as given
up, the tail it closed as its closed_at), and the consumer, alone on the
queue, waits at nothing: not at a closed ring's unwritten ticket,
although tail is past it.

Run by CTest (lab_cli_test) with SYNCQ_LAB pointing at the built binary.
"""
from labrun import lab, records

TICKET_COUNTERS = ("deq_waits_per_op", "deq_wait_pauses_per_op", "deq_waits_out_per_op",
                   "enq_cells_lost_per_op", "rings_closed_per_op", "enq_slow_per_op")


def test_queue_sides_counts_the_closed_rings_and_the_waits_they_leave(tmp_path):
    lab("run", "queue-sides", "--size", "quick", "--threads", "1", "--reps", "1", "--launches", "1",
        "--algos", "lcrq,lprq,vyukov", "--quiet", "--out", str(tmp_path), check=0)
    # the counters ride on the point's first metric (the fill's), for the whole sample
    points = [r for r in records(tmp_path) if r["type"] == "point" and r["metric"] == "enqueue_throughput"]
    assert sorted(p["algorithm"] for p in points) == ["lcrq", "lprq", "vyukov"]
    for p in points:
        c = p.get("counters", {})
        if p["algorithm"] == "vyukov":  # no ticket queue: none of them (a counter that stayed 0 is left out)
            assert not set(TICKET_COUNTERS) & set(c), p
            continue
        closed = c.get("rings_closed_per_op", 0)
        assert closed > 0, p  # 16,384 items in rings of 1,024
        # the closer's ticket is given up, the rest at the ring's closed_at: no wait there, and no live enqueuer elsewhere
        for k in ("deq_waits_per_op", "deq_wait_pauses_per_op", "deq_waits_out_per_op"):
            assert k not in c, p
        assert "enq_cells_lost_per_op" not in c, p  # no dequeuer while the producer fills
        assert "enq_slow_per_op" not in c, p


def test_dg25_prodcons_says_what_a_pause_takes(tmp_path):
    """deq_wait_pauses_per_op counts pauses, whose length differs between
    CPUs by an order of magnitude: the run notes this machine's."""
    lab("run", "dg25-prodcons", "--size", "smoke", "--threads", "1", "--algos", "lcrq",
        "--quiet", "--out", str(tmp_path), check=0)
    notes = [r["text"] for r in records(tmp_path) if r["type"] == "note" and r["experiment"] == "dg25-prodcons"]
    (pause,) = [t for t in notes if t.startswith("one pause (syncq_pr_relax")]
    ns = float(pause.split(" took ")[1].split(" ns ")[0])
    assert ns > 0, pause
