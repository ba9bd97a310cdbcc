#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""models/spin/run's verdicts from what SPIN's verifier printed.

usage: spin_run_test.py SOURCE_DIR

Runs `models/spin/run nblfq` (four checks expected to hold, one to fail)
with a stand-in `spin` and C compiler on PATH: the "verifier" they build
prints a fixed log, one of the forms pan's output takes, for every check.
A check passes only when the log proves its expected outcome:
  - a complete search with "errors: 0": holds;
  - "errors: N" (N > 0, a counterexample; pan also says "Search not
    completed" when it stops at the first error): fails;
  - a search stopped at the memory bound or the depth limit with no
    error: incomplete (no proof either way);
  - a log with no "errors:" line (the verifier stopped before its report)
    or an abort on a state vector too large: incomplete, not "fails".
Needs bash alone: no SPIN, no compiler.
"""

import os
import re
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

SUMMARY = """
(Spin Version 6.5.2 -- 6 December 2019)
{warning}\t+ Partial Order Reduction
\t+ Compression

Full statespace search for:
\tnever claim         \t- (none specified)
\tassertion violations\t+
\tcycle checks       \t- (disabled by -DSAFETY)
\tinvalid end states\t+

State-vector 36 byte, depth reached 120, errors: {errors}
     1234 states, stored
       56 states, matched
     1290 transitions (= stored+matched)

pan: elapsed time 0.01 seconds
"""

NOT_COMPLETED = "Warning: Search not completed\n"

LOGS = {
    # a full search, nothing found
    "complete": SUMMARY.format(warning="", errors=0),
    # the first error ends the search (pan says it did not complete)
    "counterexample": "pan:1: assertion violated (lost == 0) (at depth 57)\npan: wrote nblfq.pml.trail\n"
    + SUMMARY.format(warning=NOT_COMPLETED, errors=1),
    # the memory bound, no error
    "memory": "pan: reached -DMEMLIM bound\n\t1.12e+08 bytes used\n\t1.34e+08 bytes more needed\n"
    "\t2.09e+08 bytes limit\nhint: to reduce memory, recompile with\n  -DBITSTATE # supertrace, approximation\n"
    + SUMMARY.format(warning=NOT_COMPLETED, errors=0),
    # the depth limit, no error
    "depth": "error: max search depth too small\n" + SUMMARY.format(warning="", errors=0),
    # the verifier stopped before its report
    "truncated": "error: max search depth too small\n\n(Spin Version 6.5.2 -- 6 December 2019)\n",
    # the state vector outgrew VECTORSZ: pan counts its abort as an error
    "vectorsz": "pan: error, VECTORSZ too small, recompile pan.c with -DVECTORSZ=N with N>1100\n"
    "pan:1: aborting (at depth 0)\n" + SUMMARY.format(warning=NOT_COMPLETED, errors=1),
}

HOLDS = ["nblfq-2prod-1cons", "nblfq-1prod-5items-s4", "nblfq-2prod-1item-each", "nblfq-sleeper-no-wrap-w8"]
FAILS = ["nblfq-sleeper-wraps-w4"]

# form -> (what a holds check gets, what a fails check gets)
EXPECTED = {
    "complete": ("holds", "holds"),
    "counterexample": ("fails", "fails"),
    "memory": ("incomplete", "incomplete"),
    "depth": ("incomplete", "incomplete"),
    "truncated": ("incomplete", "incomplete"),
    "vectorsz": ("incomplete", "incomplete"),
}


def script(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def fake_tools(bin_dir, log):
    """A `spin` that writes pan.c, a compiler that makes `pan` print log."""
    script(bin_dir / "spin", "#!/bin/sh\n: > pan.c\n")
    script(
        bin_dir / "fakecc",
        "#!/bin/sh\n"
        'out=a.out\nwhile [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done\n'
        'printf \'#!/bin/sh\\ncat "%s"\\n\' > "$out"\nchmod +x "$out"\n' % log,
    )


def verdicts(output):
    """{check: (ok, got)} from run's lines."""
    found = {}
    for line in output.splitlines():
        m = re.match(r"spin: ok   (\S+): (\S+) as expected", line)
        if m:
            found[m.group(1)] = (True, m.group(2))
            continue
        m = re.match(r"spin: FAIL (\S+): expected \S+, got (\S+) ", line)
        if m:
            found[m.group(1)] = (False, m.group(2))
    return found


def main():
    root = Path(sys.argv[1])
    run = root / "models" / "spin" / "run"
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        for form, text in LOGS.items():
            log = tmp / f"{form}.log"
            log.write_text(text)
            fake_tools(bin_dir, log)
            env = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}", CC=str(bin_dir / "fakecc"))
            r = subprocess.run(["bash", str(run), "nblfq"], env=env, capture_output=True, text=True, timeout=120)
            got = verdicts(r.stdout)
            want_holds, want_fails = EXPECTED[form]
            for names, want, expect in ((HOLDS, want_holds, "holds"), (FAILS, want_fails, "fails")):
                for name in names:
                    if got.get(name) != (want == expect, want):
                        failures.append(f"{form}: {name} (expected {expect}): {got.get(name)}, want {want}")
            everything_ok = all(ok for ok, _ in got.values()) and len(got) == len(HOLDS) + len(FAILS)
            if (r.returncode == 0) != everything_ok:
                failures.append(f"{form}: exit {r.returncode} with verdicts {got}")
            if failures:
                sys.stderr.write(f"--- {form}:\n{r.stdout}{r.stderr}")
    for f in failures:
        print("FAIL", f)
    if failures:
        return 1
    print(f"ok: {len(LOGS)} forms of the verifier's output, each check's verdict as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
