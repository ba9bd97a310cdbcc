# SPDX-License-Identifier: BSD-2-Clause
"""What the syncq-lab tests share: running the binary CTest names in
SYNCQ_LAB, and reading the results a run wrote.

A plain module, not conftest.py: the tests import these helpers by name
(pytest puts this folder, which has no __init__.py, on sys.path first),
and pytest's documentation keeps conftest.py for fixtures and hooks, not
for imports (`import conftest` would find whichever of the repository's
conftest.py files came first on sys.path: report/tests has one too).
"""
import json
import os
import subprocess
from pathlib import Path

LAB = os.environ.get("SYNCQ_LAB", "")
# The tests that lose an item or a message wait the watches' bound, 1 s in
# a plain build and 10 s in a ThreadSanitizer one: they set it to 1 s in
# every build (their rings and queues are small, so nothing stalls that
# long), and their expected messages name it.
LOST_MS = {"SYNCQ_LAB_LOST_MS": "1000"}


def lab(*args, check=None, env=None, timeout=600):
    """Run syncq-lab with args; env adds to (or overrides) this process's
    environment. With check, the exit status must be that value."""
    assert LAB and Path(LAB).exists(), "set SYNCQ_LAB to the syncq-lab binary"
    r = subprocess.run([LAB, *args], capture_output=True, text=True, timeout=timeout,
                       env=None if env is None else {**os.environ, **env})
    if check is not None:
        assert r.returncode == check, (r.returncode, r.stdout, r.stderr)
    return r


def records(out_dir):
    """The records of out_dir/results.jsonl (at least one)."""
    lines = (Path(out_dir) / "results.jsonl").read_text().splitlines()
    assert lines, "empty results file"
    return [json.loads(line) for line in lines]
