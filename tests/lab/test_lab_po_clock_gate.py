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
