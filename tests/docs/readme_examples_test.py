#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The README's C fragments compile and run as they stand.

usage: readme_examples_test.py SOURCE_DIR LIBSYNCQ_A CC [EXTRA_LIBS]

Each ```c block of README.md is a fragment of statements: it is put in a
main() after the library's umbrella header and compiled against the
library built here (warnings are errors), then run; a block that defines
main() itself is a whole program, compiled as it is with no header added
(a reader who copies it into a file builds it as it stands, so it must
include what it uses). A fragment that stops compiling when an API
changes, or fails when run (a sanitizer report, a crash), fails this test.
"""

import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

PROLOGUE = "#include <stdint.h>\n#include <stdio.h>\n#include <syncq/syncq.h>\n\n"


def fragments(readme):
    return re.findall(r"```c\n(.*?)```", readme.read_text(encoding="utf-8"), flags=re.S)


def program(fragment):
    if re.search(r"\bmain\s*\(", fragment):
        return fragment
    return PROLOGUE + "int main(void) {\n" + fragment + "  return 0;\n}\n"


def main():
    src, lib, cc = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    extra = shlex.split(sys.argv[4]) if len(sys.argv) > 4 else []
    blocks = fragments(src / "README.md")
    if not blocks:
        print("FAIL: README.md has no C fragment")
        return 1
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, block in enumerate(blocks, start=1):
            c = Path(tmp) / f"fragment{i}.c"
            exe = Path(tmp) / f"fragment{i}"
            c.write_text(program(block), encoding="utf-8")
            build = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-unused-result",
                                    "-I", str(src / "include"), "-o", str(exe), str(c), lib, "-pthread", *extra],
                                   capture_output=True, text=True)
            if build.returncode != 0:
                print(f"FAIL: README fragment {i} does not compile:\n{block}\n{build.stderr}")
                failed += 1
                continue
            run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
            if run.returncode != 0:
                print(f"FAIL: README fragment {i} exits {run.returncode}:\n{block}\n{run.stdout}{run.stderr}")
                failed += 1
            else:
                print(f"README fragment {i}: compiles and runs")
    print(f"{len(blocks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
