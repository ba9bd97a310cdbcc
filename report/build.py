#!/usr/bin/env python3
"""Build DIR/report.html and DIR/plots/*.png from DIR/results.jsonl.

Usage: python3 report/build.py DIR [--title T]
"""

import sys
from pathlib import Path

# The package sits next to this script; make it importable from any working directory.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from syncq_report.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
