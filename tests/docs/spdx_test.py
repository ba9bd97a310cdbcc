#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Every source file of the repository carries its licence's SPDX line.

usage: spdx_test.py SOURCE_DIR
Source files: C and C++ (.c .h .cpp), Python, shell and CMake files, Rust,
Go, Promela and Erlang, and executable scripts, as git lists them (data,
documents and the fuzz corpus are not sources). The line must be within
the first three lines (after a #! line).
"""

import subprocess
import sys
from pathlib import Path

TAG = "SPDX-License-Identifier: BSD-2-Clause"
SUFFIXES = {".c", ".h", ".cpp", ".py", ".sh", ".cmake", ".rs", ".go", ".pml", ".erl", ".toml"}


def is_source(path):
    if "corpus" in path.parts or path.parts[:3] == ("report", "tests", "data"):
        return False
    if path.suffix in SUFFIXES or path.name in ("CMakeLists.txt", "Makefile"):
        return True
    return path.suffix == "" and path.is_file() and path.read_bytes()[:2] == b"#!"


def main():
    root = Path(sys.argv[1])
    listed = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True)
    if listed.returncode != 0:
        print("SKIP: not a git checkout; nothing to list")
        return 77
    missing = []
    count = 0
    for name in listed.stdout.split():
        path = root / name
        if not path.is_file() or not is_source(Path(name)) and not is_source(path):
            continue
        count += 1
        head = path.read_text(encoding="utf-8", errors="replace").split("\n")[:3]
        if not any(TAG in line for line in head):
            missing.append(name)
    for name in missing:
        print(f"FAIL: {name}: no '{TAG}' line at the top")
    print(f"{count - len(missing)} passed, {len(missing)} failed")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
