# SPDX-License-Identifier: BSD-2-Clause
"""The machine record says how the postoffice's fiber schedulers look for
passed deadlines (po_clock_gate: syncq_po_clock_gate's line, syncq/po.h):
a calibrated counter gates their clock reads, or every switch reads the
clock, and why. Where the kernel's list of clocksources can be read and
leaves out the TSC (x86-64), the line must say so; the report's machine
table shows the line.

Run by CTest (lab_cli_test) with SYNCQ_LAB pointing at the built binary.
"""
import html
import platform
import re
from pathlib import Path

import pytest

from labrun import lab, records

LINE = re.compile(r"^(counter: (\d+(\.\d*)?|\.\d+)(e[-+]\d+)? ticks/ns|clock at every switch: \S.*)$")
CLOCKSOURCES = Path("/sys/devices/system/clocksource/clocksource0/available_clocksource")


def kernel_lists_tsc():
    """True or False where the kernel's list can be read, None where not."""
    try:
        return "tsc" in CLOCKSOURCES.read_text().split()
    except OSError:
        return None


def test_the_machine_record_and_the_report_say_how_deadlines_read_the_clock(tmp_path):
    lab("run", "np99-counter", "--size", "smoke", "--threads", "1", "--algos", "faa", "--quiet",
        "--out", str(tmp_path), check=0)
    (machine,) = [r for r in records(tmp_path) if r["type"] == "machine"]
    line = machine["po_clock_gate"]
    assert LINE.match(line), line
    assert len(line) < 128  # SYNCQ_PO_CLOCK_GATE_LEN, its NUL included
    if line.startswith("counter: "):
        assert float(line.split()[1]) > 0, line
    if platform.machine() == "x86_64" and kernel_lists_tsc() is False:
        assert line.startswith("clock at every switch: the kernel's available clocksources"), line
    r = lab("report", str(tmp_path))
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "report.html").read_text()
    assert f"<th>Postoffice deadline clock</th><td>{html.escape(line)}</td>" in page


DRIFT = re.compile(r"^clock at every switch: the counter's rate drifted from (\S+) to (\S+) ticks/ns$")


def test_a_launch_whose_rate_check_trips_shows_in_the_record(tmp_path):
    """SYNCQ_LAB_PO_SLOW=2: launch 2 calibrates the counter as if it had
    slowed to 1/128 of its rate (po_timer_slow_test's scale), so its fiber
    systems' rate check trips while po-server runs (a quick point's systems
    live long enough for the monitor's 10 ms). The machine record, written
    by launch 1 before its runs, keeps the gate of the start; every point
    says how the gate stood at its end: launch 1's as the record, launch
    2's the clock after the drift once it tripped (all of them here: the
    first point's systems trip it), and the report says where it changed."""
    probe = tmp_path / "probe"
    lab("run", "np99-counter", "--size", "smoke", "--threads", "1", "--algos", "faa", "--quiet",
        "--out", str(probe), check=0)
    (built,) = [r for r in records(probe) if r["type"] == "machine"]
    if "-fsanitize=" in built.get("flags", ""):
        # A quick po-server point spawns 100,000 fiber processes: minutes
        # under a sanitizer. What this test reads (each point's gate) is
        # written by one thread; the trip itself is checked under the
        # sanitizers by po_timer_slow_test and po_timer_fast_test.
        pytest.skip("a sanitizer build: a quick po-server point takes minutes there")
    out = tmp_path / "run"
    lab("run", "po-server", "--size", "quick", "--launches", "2", "--algos", "fiber:mpsc", "--reps", "1",
        "--max-reps", "1", "--quiet", "--out", str(out), env={"SYNCQ_LAB_PO_SLOW": "2"}, check=0)
    recs = records(out)
    (machine,) = [r for r in recs if r["type"] == "machine"]
    start = machine["po_clock_gate"]
    if not start.startswith("counter: "):
        pytest.skip(f"no counter gates the clock here: {start}")
    points = [r for r in recs if r["type"] == "point"]
    first = [p["po_clock_gate"] for p in points if p["launch"] == 1]
    second = [p["po_clock_gate"] for p in points if p["launch"] == 2]
    assert first and set(first) == {start}, first
    assert second, points
    tripped = [DRIFT.match(line) for line in second]
    assert tripped[-1], second[-1]
    k = tripped.index(next(m for m in tripped if m))
    assert all(tripped[k:]), second  # for good, in the process that tripped it
    assert all(line.startswith("counter: ") for line in second[:k]), second
    for m in tripped[k:]:
        scaled, found = float(m.group(1)), float(m.group(2))
        assert 128 * (1 - 1 / 8) < scaled / found < 128 * (1 + 1 / 8), m.group(0)
    r = lab("report", str(out))
    assert r.returncode == 0, r.stderr
    page = html.unescape((out / "report.html").read_text())
    n = sum(1 for p in points if p["launch"] == 2 and DRIFT.match(p["po_clock_gate"]))
    said = f"{start} at the start; then {second[-1]} at the end of {n} of {len(points)} points of po-server in launch 2"
    assert f"<th>Postoffice deadline clock</th><td>{said}</td>" in page  # one process tripped: one line


def test_a_bad_slowed_launch_is_refused(tmp_path):
    for bad in ("0", "21", "x", "2x", ""):
        r = lab("run", "po-switch", "--size", "smoke", "--quiet", "--out", str(tmp_path),
                env={"SYNCQ_LAB_PO_SLOW": bad})
        assert r.returncode == 2, (bad, r.stderr)
        assert "SYNCQ_LAB_PO_SLOW must be a launch number from 1 to 20" in r.stderr, r.stderr
