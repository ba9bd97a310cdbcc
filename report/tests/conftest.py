# SPDX-License-Identifier: BSD-2-Clause
"""Make the report package and the test helpers importable whatever the cwd or import mode."""

import shutil
import sys
from pathlib import Path

import pytest

_TESTS_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(_TESTS_DIR.parent), str(_TESTS_DIR)]

from support import FIXTURE  # noqa: E402 - needs the path set above


@pytest.fixture
def results_dir(tmp_path):
    """A fresh directory holding a copy of the fixture as results.jsonl."""
    directory = tmp_path / "out"
    directory.mkdir()
    shutil.copy(FIXTURE, directory / "results.jsonl")
    return directory
