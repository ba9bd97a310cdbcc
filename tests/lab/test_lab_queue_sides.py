# SPDX-License-Identifier: BSD-2-Clause
"""syncq-lab queue-sides: dg25-prodcons's two sides, each alone (a fill, then a drain).

Run by CTest (lab_cli_test) with SYNCQ_LAB pointing at the built binary.
"""
from labrun import lab, records


def test_queue_sides_times_each_side_alone(tmp_path):
    """queue-sides: for every queue and N, a fill's and a drain's throughput
    (the run itself fails on a lost or duplicated item), no ratio points, no
    claims; a bounded queue holds every item at once (a FULL would mean it
    was too small), and an unbounded one never answers FULL."""
    lab("run", "queue-sides", "--size", "smoke", "--threads", "1,2", "--algos", "lcrq,vyukov,nblfq",
        "--quiet", "--out", str(tmp_path), check=0)
    recs = records(tmp_path)
    (exp,) = [r for r in recs if r["type"] == "experiment"]
    assert exp["name"] == "queue-sides" and exp["claims"] == [] and exp["x"] == "threads"
    assert "rounded up to a power of two" in exp["description"]
    points = [r for r in recs if r["type"] == "point"]
    got = {(p["algorithm"], p["params"]["threads"], p["metric"]) for p in points}
    assert got == {(a, t, m) for a in ("lcrq", "vyukov", "nblfq") for t in (1.0, 2.0)
                   for m in ("enqueue_throughput", "dequeue_throughput")}
    for p in points:
        assert p["unit"] == "Mops/s" and p["median"] > 0
        assert "full_polls_per_op" not in p.get("counters", {}), p
