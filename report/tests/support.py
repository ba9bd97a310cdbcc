# SPDX-License-Identifier: BSD-2-Clause
"""Paths and helpers shared by the tests, relative to this file so any cwd works."""

import json
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
REPORT_DIR = TESTS_DIR.parent
FIXTURE = TESTS_DIR / "data" / "results.jsonl"
BUILD_PY = REPORT_DIR / "build.py"

# Panels in the fixture: np99-counter 2 (work_ns 0 and 5000), phys 2 (time_per_op ns and
# bandwidth GB/s), ms98-queue 1.
FIXTURE_PANELS = 5


def fixture_records():
    """The fixture's records, decoded, in file order."""
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def write_records(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
