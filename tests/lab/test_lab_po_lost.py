# SPDX-License-Identifier: BSD-2-Clause
"""syncq-lab's postoffice experiments and a message lost or duplicated.

SYNCQ_LAB_PO_FAULT=lose:K (dup:K) makes the K-th send of a run (lf07-sort's
handshakes, start, slices, replies, done and quits; po-ring's tokens;
po-skynet's replies; po-server's requests, hand-overs, replies and quit)
lose (duplicate) its message, as a mailbox that lost (duplicated) it would
look to the receiver (po-ring's main=member panel too). A loss must
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

# lf07-sort at smoke size with 4 sorters: 5 handshakes (sends 1-5: the slicer's and the
# sorters'), the start (6), then 8 sends a phase (4 slices, 4 replies; 8 phases: 7-70),
# the done (71) and the quits (72: the slicer's, 73-76: the sorters' in order). A
# phase's sends all come before the next phase's, so the 16th is phase 1's; it is a
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
    r = run(tmp_path, SORT, "lose:16", 1)
    assert "did not finish within" not in r.stderr, r.stderr
    found = [SORT_LOST.search(n) for n in failures(tmp_path)]
    assert len(found) == 2 and all(found), r.stderr
    assert {f[1] for f in found} == {"thread:mutex", "fiber:mpsc"}
    for f in found:
        # one message missing of phase 0's 8 and phase 1's 7 or 8 (a lost slice is never
        # answered): 3 replies came either way
        assert f[2] == "1" and int(f[3]) in (15, 16) and f[4] == "3", f[0]


def test_lf07_sort_names_a_duplicated_message(tmp_path):
    r = run(tmp_path, SORT, "dup:16", 1)
    assert "did not finish within" not in r.stderr and " lost " not in r.stderr, r.stderr
    # the second copy comes within phase 1, or after the slicer took phase 1's four
    dup = re.compile(r"(thread:mutex|fiber:mpsc) gave out a message twice: (a second reply|a reply from an earlier "
                     r"phase) of sorter \d, phase [12] \(a duplicate\)")
    found = [dup.search(n) for n in failures(tmp_path)]
    assert len(found) == 2 and all(found), r.stderr


SORT_CONTROL = [
    ("lose:1", r"lost a message: a handshake to the controller \(5 of 5 processes had sent theirs, 4 came, none "
     r"for 1000 ms\)"),
    ("lose:5", r"lost a message: a handshake to the controller \(5 of 5 processes had sent theirs, 4 came"),
    ("dup:1", r"gave out a message twice: a handshake more than the 5 processes \(a duplicate\)"),
    ("lose:6", r"lost a message: the controller's start to the slicer \(not taken for 1000 ms\)"),
    ("dup:6", r"gave out a message twice: a second start to the slicer \(a duplicate\)"),
    ("lose:71", r"lost a message: the slicer's done to the controller \(none came for 1000 ms\)"),
    ("dup:71", r"gave out a message twice: a second done from the slicer \(a duplicate\)"),
    ("lose:72", r"lost a message: the controller's quit to the slicer$"),
    ("lose:74", r"lost a message: the controller's quit to sorter 1$"),
]


@pytest.mark.parametrize("fault,cause", SORT_CONTROL, ids=[f for f, _ in SORT_CONTROL])
def test_lf07_sort_names_a_lost_or_duplicated_control_message(tmp_path, fault, cause):
    """The handshakes, the start, the done and the quits: the sample fails
    naming the message, its processes are released and the run goes on to
    the next variant (both fail, each with its own line)."""
    r = run(tmp_path, SORT, fault, 1)
    assert "did not finish within" not in r.stderr, r.stderr
    found = [re.search(r"lf07-sort (thread:mutex|fiber:mpsc) with 4 sorters: \1 " + cause, n.split("; not measured")[0])
             for n in failures(tmp_path)]
    assert len(found) == 2 and all(found), (failures(tmp_path), r.stderr)
    assert {f[1] for f in found} == {"thread:mutex", "fiber:mpsc"}


# po-skynet at smoke size: 1,000 leaves, 1,111 sends (every process's reply to its
# parent, the root's sum to main last); a level-1 process replies only after its 10
# leaves, so sends 1-10 are leaves' replies. The counts name 1,111 processes of the tree,
# main and the watch (a thread attached to the system); live at the stop: main, the
# watch, the root, the level-2 and level-1 processes waiting and the leaf whose reply
# was lost (exited, not joined).
SKYNET = ["po-skynet", "--algos", "fiber:mpsc,thread:mpsc"]
SKYNET_CASES = [
    ("lose:5", r"lost a message: the reply of a child that had exited to the process of level 1 on num \d+; no "
     r"process was spawned or exited for 1000 ms \(1113 processes started, 6 live, main and the watch counted\) "
     r"and main had no sum"),
    ("dup:5", r"gave out a message twice: a second reply to the process of level 1 on num \d+ \(a duplicate\)"),
    ("lose:1111", r"lost a message: the root's sum to main \(level 3, num 0\); no process was spawned or exited "
     r"for 1000 ms \(1113 processes started, 3 live, main and the watch counted\)"),
    ("dup:1111", r"gave out a message twice: a second sum from the root \(level 3, num 0\) to main \(a duplicate\)"),
]


@pytest.mark.parametrize("fault,cause", SKYNET_CASES, ids=[f for f, _ in SKYNET_CASES])
def test_po_skynet_names_a_lost_or_duplicated_reply(tmp_path, fault, cause):
    r = run(tmp_path, SKYNET, fault, 1)
    assert "did not finish within" not in r.stderr, r.stderr
    found = [re.search(r"po-skynet (fiber:mpsc|thread:mpsc), 1000 leaves: \1 " + cause, n) for n in failures(tmp_path)]
    assert len(found) == 2 and all(found), (failures(tmp_path), r.stderr)
    assert {f[1] for f in found} == {"fiber:mpsc", "thread:mpsc"}


# po-server at smoke size: request i is send 3i+1, its hand-over from the server to
# its worker 3i+2, the worker's reply 3i+3; the client's quit comes after the last
# reply (fibers: 1,000 requests, kernel threads: 100).
SERVER = ["po-server", "--algos", "fiber:mpsc,thread:mpsc"]
SERVER_CASES = [
    ("lose:4", r"lost a message: request 1, for which the server spawned no worker; no process was spawned for "
     r"1000 ms \(1 of \d+ replies came\)"),
    ("lose:5", r"lost a message: the server's hand-over of request 1 to its worker; no process was spawned for "
     r"1000 ms \(1 of \d+ replies came\)"),
    ("lose:6", r"lost a message: the reply to request 1; no process was spawned for 1000 ms \(1 of \d+ replies "
     r"came\)"),
    ("dup:4", r"gave out a message twice: a second reply to request 1 \(a duplicate\)"),
    ("dup:6", r"gave out a message twice: a second reply to request 1 \(a duplicate\)"),
]


@pytest.mark.parametrize("fault,cause", SERVER_CASES, ids=[f for f, _ in SERVER_CASES])
def test_po_server_names_a_lost_or_duplicated_message(tmp_path, fault, cause):
    r = run(tmp_path, SERVER, fault, 1)
    assert "did not finish within" not in r.stderr, r.stderr
    found = [re.search(r"po-server (fiber:mpsc|thread:mpsc), \d+ requests: \1 " + cause, n)
             for n in failures(tmp_path)]
    assert len(found) == 2 and all(found), (failures(tmp_path), r.stderr)
    assert {f[1] for f in found} == {"fiber:mpsc", "thread:mpsc"}


@pytest.mark.parametrize("algo,requests", [("fiber:mpsc", 1000), ("thread:mpsc", 100)])
def test_po_server_names_a_lost_quit_and_a_last_reply_twice(tmp_path, algo, requests):
    """The quit is the send after the last reply; a second copy of the last
    reply is found in the client's inbox once every worker has exited."""
    last = 3 * requests
    r = run(tmp_path / "lose", ["po-server", "--algos", algo], f"lose:{last + 1}", 1)
    assert "did not finish within" not in r.stderr, r.stderr
    assert [n for n in failures(tmp_path / "lose")
            if f"lost a message: the client's quit to the server, after its {requests} replies" in n], r.stderr
    r = run(tmp_path / "dup", ["po-server", "--algos", algo], f"dup:{last}", 1)
    assert [n for n in failures(tmp_path / "dup")
            if f"gave out a message twice: a second reply to request {requests - 1} (a duplicate)" in n], r.stderr


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


# po-ring's main=member rings of 100 (main and 99 members; main as a fiber, and the lab's
# thread attached to the fibers): main's token is the first send and each member's
# forward the next, so the 10th send is the warm-up lap's 10th hop.
MEMBER = ["po-ring", "--algos", "fiber:mpsc,fiber-attached:mpsc", "--where", "processes=100", "--where",
          "main=member"]


def test_po_ring_member_names_a_lost_token(tmp_path):
    r = run(tmp_path, MEMBER, "lose:10", 1)
    assert "did not finish within" not in r.stderr, r.stderr
    lost = re.compile(r"(fiber|fiber-attached):mpsc lost a message: the token stopped after 0 of the \d+ laps \(main "
                      r"a member\) and no lap ended for 1000 ms")
    found = [lost.search(n) for n in failures(tmp_path)]
    assert len(found) == 2 and all(found), (failures(tmp_path), r.stderr)
    assert {f[1] for f in found} == {"fiber", "fiber-attached"}


def test_po_ring_member_names_a_duplicated_token(tmp_path):
    r = run(tmp_path, MEMBER, "dup:10", 1)
    assert "did not finish within" not in r.stderr and " lost " not in r.stderr, r.stderr
    dup = re.compile(r"(fiber|fiber-attached):mpsc gave out a message twice: a token came back to main (with -?\d+ "
                     r"hops left where \d+ were awaited|where the quit was awaited) \(a duplicate\)")
    found = [dup.search(n) for n in failures(tmp_path)]
    assert len(found) == 2 and all(found), (failures(tmp_path), r.stderr)


@pytest.mark.parametrize("args", [SORT[:3], RING[:3], MEMBER[:3], SKYNET, SERVER], ids=["lf07-sort", "po-ring", "po-ring-member",
                                                                                   "po-skynet", "po-server"])
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
