#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The README's table of bounded and unbounded queues is the registry's.

usage: readme_queues_test.py SOURCE_DIR LIBSYNCQ_A CC [EXTRA_LIBS]

A small program built against the library lists every queue of the
registry (syncq_registry_list) with its SYNCQ_PROP_BOUNDED flag; the
README's table (between the "queue-bounds" markers) must name each
bounded algorithm in its "bounded" row, each other one in its "unbounded"
row, and no name the registry does not have. A queue added, removed or
made bounded without the README saying so fails here.
"""

import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

LISTER = r"""
#include <stdio.h>
#include <syncq/syncq.h>

int main(void) {
  const syncq_algo *algos[512];
  int n = syncq_registry_list(SYNCQ_FAMILY_QUEUE, algos, sizeof algos / sizeof algos[0]);
  if (n < 0 || n > (int)(sizeof algos / sizeof algos[0])) return 1;
  for (int i = 0; i < n; i++)
    printf("%s %s\n", algos[i]->name, (algos[i]->props & SYNCQ_PROP_BOUNDED) ? "bounded" : "unbounded");
  return 0;
}
"""


def readme_rows(readme):
    """{"bounded": [names], "unbounded": [names]} of the README's table."""
    text = readme.read_text(encoding="utf-8")
    m = re.search(r"<!-- queue-bounds:.*?-->(.*?)<!-- queue-bounds: end -->", text, flags=re.S)
    if not m:
        return None
    rows = {}
    for line in m.group(1).split("\n"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0] in ("bounded", "unbounded"):
            rows[cells[0]] = re.findall(r"`([^`]+)`", cells[1])
    return rows


def main():
    src, lib, cc = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    extra = shlex.split(sys.argv[4]) if len(sys.argv) > 4 else []
    rows = readme_rows(src / "README.md")
    if not rows or set(rows) != {"bounded", "unbounded"}:
        print("FAIL: README.md has no table of bounded and unbounded queues between the queue-bounds markers")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        c, exe = Path(tmp) / "lister.c", Path(tmp) / "lister"
        c.write_text(LISTER, encoding="utf-8")
        build = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(src / "include"), "-o",
                                str(exe), str(c), lib, "-pthread", *extra], capture_output=True, text=True)
        if build.returncode != 0:
            print(f"FAIL: the registry lister does not build:\n{build.stderr}")
            return 1
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        print(f"FAIL: the registry lister exits {run.returncode}")
        return 1
    registry = dict(line.split() for line in run.stdout.split("\n") if line.strip())
    failed = 0
    for kind in ("bounded", "unbounded"):
        want = {n for n, k in registry.items() if k == kind}
        have = set(rows[kind])
        for n in sorted(want - have):
            print(f"FAIL: the registry's {kind} queue \"{n}\" is not in the README's {kind} row")
            failed += 1
        for n in sorted(have - want):
            what = f"is {registry[n]}" if n in registry else "is not in the registry"
            print(f"FAIL: the README's {kind} row names \"{n}\", which {what}")
            failed += 1
    if failed:
        return 1
    print(f"README: {len(rows['bounded'])} bounded and {len(rows['unbounded'])} unbounded queues, as the registry says")
    return 0


if __name__ == "__main__":
    sys.exit(main())
