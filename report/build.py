#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Build DIR/report.html and DIR/plots/*.png from DIR/results.jsonl.

Usage: python3 report/build.py DIR [--title T]
"""

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The third-party packages the report needs (requirements.txt beside this
# script pins their versions).
NEEDED = ("numpy", "matplotlib")


def missing_packages():
    return [name for name in NEEDED if importlib.util.find_spec(name) is None]


if __name__ == "__main__":
    missing = missing_packages()
    if missing:
        # One line, saying what to install: never a traceback.
        print(f"syncq-lab report: {sys.executable} lacks the Python package(s) {', '.join(missing)}: "
              f"install them (`{sys.executable} -m pip install -r {HERE / 'requirements.txt'}`, or on Debian "
              f"`apt-get install {' '.join('python3-' + m for m in missing)}`) or set SYNCQ_PYTHON to a Python "
              "that has them", file=sys.stderr)
        sys.exit(2)
    # The package sits next to this script; make it importable from any working directory.
    sys.path.insert(0, str(HERE))
    from syncq_report.cli import main

    sys.exit(main())
