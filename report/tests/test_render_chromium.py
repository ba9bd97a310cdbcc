# SPDX-License-Identifier: BSD-2-Clause
"""Render the report in headless Chromium: every image loads and every section is there.

Chromium is a required test dependency (scripts/bootstrap installs it): a
missing browser fails this test instead of skipping it, so that a broken
install cannot pass unnoticed.
"""

import html
import json
import os
import re
import shutil
import subprocess

import pytest
from support import FIXTURE_PANELS

from syncq_report import cli, load

TIMEOUT_S = 90
PAGE_WIDTH = 1400  # a laptop's browser window: the report must not scroll sideways in it

# Appended to a copy of the page: after load, count the images that really decoded.
PROBE = """<script>
window.addEventListener("load", function () {
  var images = Array.prototype.slice.call(document.images);
  var loaded = images.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.setAttribute("data-images", loaded + "/" + images.length);
  // a page wider than the window scrolls sideways: the whole report must fit 1,400 px
  document.body.setAttribute("data-overflow",
      document.documentElement.scrollWidth + "/" + document.documentElement.clientWidth);
});
</script>
"""


def chromium():
    for candidate in (os.environ.get("SYNCQ_CHROMIUM"), "chromium", "chromium-browser"):
        found = candidate and shutil.which(candidate)
        if found:
            return found
    pytest.fail(
        "Chromium not found (looked for $SYNCQ_CHROMIUM, chromium, chromium-browser): run scripts/bootstrap"
    )


def run_chromium(profile, *args):
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=10000",
        *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, f"chromium exited {done.returncode}: {done.stderr[-2000:]}"
    return done.stdout


def wide_numbers(results_dir):
    """Give every point a parameter whose value is one long word, as a user's
    placement or mode names can be: the numbers tables get a column wider than
    any window (numbers never wrap), which must scroll inside its table."""
    path = results_dir / "results.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in records:
        if record.get("type") == "point":
            record["params"]["placement"] = "one_thread_per_core_" * 12 + "then_hyperthreads"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_report_renders_in_chromium(results_dir, tmp_path, capsys):
    wide_numbers(results_dir)
    assert cli.main([str(results_dir)]) == 0
    capsys.readouterr()
    page = (results_dir / "report.html").read_text(encoding="utf-8")
    assert page.count("</body>") == 1
    probe = results_dir / "report-probe.html"
    probe.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")

    dom = run_chromium(tmp_path / "profile-dom", f"--window-size={PAGE_WIDTH},1000", "--dump-dom", probe.as_uri())

    counts = re.search(r'data-images="(\d+)/(\d+)"', dom)
    assert counts, "the probe did not run: no data-images attribute on <body>"
    loaded, total = map(int, counts.groups())
    assert total == FIXTURE_PANELS
    assert loaded == total, f"only {loaded} of {total} images loaded"
    width, window = map(int, re.search(r'data-overflow="(\d+)/(\d+)"', dom).groups())
    assert width <= window, f"the page scrolls sideways at {PAGE_WIDTH} px: {width} px wide in a {window} px window"
    for result in load.load(results_dir / "results.jsonl").experiments:
        assert f"<h2>{html.escape(result.experiment.title, quote=False)}</h2>" in dom

    screenshot = tmp_path / "report.png"
    run_chromium(
        tmp_path / "profile-shot",
        f"--screenshot={screenshot}",
        "--window-size=1200,3000",
        (results_dir / "report.html").as_uri(),
    )
    assert screenshot.read_bytes().startswith(b"\x89PNG")
    with capsys.disabled():
        print(f"\nscreenshot: {screenshot}")
