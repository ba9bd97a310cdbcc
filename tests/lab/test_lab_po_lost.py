# SPDX-License-Identifier: BSD-2-Clause
"""syncq-lab's postoffice experiments and a message lost or duplicated.

SYNCQ_LAB_PO_FAULT=lose:K (dup:K) makes the K-th send of a run (lf07-sort's
slices and replies, po-ring's tokens) lose (duplicate) its message, as a
mailbox that lost (duplicated) it would look to the receiver. A loss must
fail the sample through the experiment's own watch, naming the mailbox and
the count, long before the watchdog (set here to 60 s, so an experiment
that waited for it would show the watchdog's message instead); a
duplicate must fail it with its own message; a run whose fault comes past
its last send must pass.

Run by CTest (lab_cli_test) with SYNCQ_LAB pointing at the built binary.
"""
import re

import pytest

from labrun import LOST_MS, lab, records

# lf07-sort at smoke size with 4 sorters: 8 sends a phase (4 slices, 4 replies), and a
# phase's sends all come before the next phase's, so the 10th is phase 1's; it is a
# slice or a reply as the sorters' replies and the slicer's slices interleave.
SORT = ["lf07-sort", "--algos", "mutex,fiber:mpsc", "--where", "sorters=4", "--where", "send=link"]
SORT_LOST = re.compile(r"(thread:mutex|fiber:mpsc) lost (\d+) of (\d+) messages: every sorter that took a slice "
                       r"had answered and the slicer's inbox stayed empty for 1000 ms \(phase 1, (\d) of 4 replies\)")
# po-ring's main=outside rings of 100: the controller's token is the first send, each
# member's forward the next, so the 10th send is the warm-up round's 10th hop.
RING = ["po-ring", "--algos", "thread:mutex,fiber:mpsc", "--where", "processes=100", "--where", "main=outside"]
RING_LOST = re.compile(r"(thread:mutex|fiber:mpsc) lost 1 of 10 messages: the round's token stopped after 9 of "
                       r"its 100 hops and no member took a token for 1000 ms")


def run(tmp_path, args, fault, check):
    return lab("run", *args, "--size", "smoke", "--quiet", "--experiment-timeout", "60", "--out", str(tmp_path),
               env={"SYNCQ_LAB_PO_FAULT": fault, **LOST_MS}, check=check, timeout=120)


def failures(tmp_path):
    return [n["text"] for n in records(tmp_path) if n["type"] == "note" and n["text"].startswith("FAILED:")]


def test_lf07_sort_names_a_lost_message(tmp_path):
    r = run(tmp_path, SORT, "lose:10", 1)
    assert "did not finish within" not in r.stderr, r.stderr
    found = [SORT_LOST.search(n) for n in failures(tmp_path)]
    assert len(found) == 2 and all(found), r.stderr
    assert {f[1] for f in found} == {"thread:mutex", "fiber:mpsc"}
    for f in found:
        # one message missing of phase 0's 8 and phase 1's 7 or 8 (a lost slice is never
        # answered): 3 replies came either way
        assert f[2] == "1" and int(f[3]) in (15, 16) and f[4] == "3", f[0]


def test_lf07_sort_names_a_duplicated_message(tmp_path):
    r = run(tmp_path, SORT, "dup:10", 1)
    assert "did not finish within" not in r.stderr and " lost " not in r.stderr, r.stderr
    # the second copy comes within phase 1, or after the slicer took phase 1's four
    dup = re.compile(r"(thread:mutex|fiber:mpsc) gave out a message twice: (a second reply|a reply from an earlier "
                     r"phase) of sorter \d, phase [12] \(a duplicate\)")
    found = [dup.search(n) for n in failures(tmp_path)]
    assert len(found) == 2 and all(found), r.stderr


def test_po_ring_names_a_lost_token(tmp_path):
    r = run(tmp_path, RING, "lose:10", 1)
    assert "did not finish within" not in r.stderr, r.stderr
    found = [RING_LOST.search(n) for n in failures(tmp_path)]
    # recv=blocking and recv=yield, each on both backends
    assert len(found) == 4 and all(found), r.stderr
    assert {f[1] for f in found} == {"thread:mutex", "fiber:mpsc"}


def test_po_ring_names_a_duplicated_token(tmp_path):
    r = run(tmp_path, RING, "dup:10", 1)
    assert "did not finish within" not in r.stderr and " lost " not in r.stderr, r.stderr
    dup = re.compile(r"(thread:mutex|fiber:mpsc) gave out a message twice: a round of (\d+) hops ended after the "
                     r"members took (\d+) tokens \(a duplicate\)")
    found = [dup.search(n) for n in failures(tmp_path)]
    assert len(found) == 4 and all(found), r.stderr
    assert all(int(f[3]) != int(f[2]) for f in found)


@pytest.mark.parametrize("args", [SORT[:3], RING[:3]], ids=["lf07-sort", "po-ring"])
def test_runs_that_lose_nothing_pass(args, tmp_path):
    """The fault past the last send (the faulty send alone), every panel of
    the smoke size, both backends."""
    r = run(tmp_path, args, "lose:100000000", 0)
    assert "FAILED" not in r.stderr and "lost" not in r.stderr, r.stderr
    points = [p for p in records(tmp_path) if p["type"] == "point"]
    assert points and {p["algorithm"] for p in points} >= set(args[2].split(","))


@pytest.mark.parametrize("value", ["", "lose", "lose:0", "lose:x", "dup:-1", "drop:3", "dup:3x"])
def test_a_bad_fault_is_refused(value):
    r = lab("list", env={"SYNCQ_LAB_PO_FAULT": value}, check=2)
    assert "SYNCQ_LAB_PO_FAULT must be lose:K or dup:K" in r.stderr


@pytest.mark.parametrize("value", ["", "0", "-5", "1x", "3600001", "99999999999999999999"])
def test_a_bad_lost_bound_is_refused(value):
    r = lab("list", env={"SYNCQ_LAB_LOST_MS": value}, check=2)
    assert "SYNCQ_LAB_LOST_MS must be a count of milliseconds from 1 to 3600000" in r.stderr


def test_the_lost_bound_is_the_one_set(tmp_path):
    r = lab("run", *RING, "--size", "smoke", "--quiet", "--experiment-timeout", "60", "--out", str(tmp_path),
            env={"SYNCQ_LAB_PO_FAULT": "lose:10", "SYNCQ_LAB_LOST_MS": "300"}, check=1, timeout=120)
    texts = failures(tmp_path)
    assert texts and all("no member took a token for 300 ms;" in t for t in texts), (texts, r.stderr)
