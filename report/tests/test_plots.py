# SPDX-License-Identifier: BSD-2-Clause
"""Plot styles: every series told apart, peers dashed, one x value drawn as sorted bars."""

from types import SimpleNamespace

from syncq_report import panels, plots


def point(name, median, peer=False, threads=1, better="higher"):
    return SimpleNamespace(algorithm=name, median=median, min=median, max=median, peer=peer,
                           params={"threads": threads}, better=better, family=None if peer else "queue")


def test_every_series_has_its_own_colour_and_marker():
    names = [f"algo{i}" for i in range(40)]
    panel = SimpleNamespace(points=[point(n, 1.0, peer=i % 3 == 0) for i, n in enumerate(names)])
    styles = plots._styles([panel])
    pairs = {(s.colour, s.marker) for s in styles.values()}
    assert len(pairs) == len(names)  # no two series look the same
    assert styles["algo0"].line == "--" and styles["algo1"].line == "-"  # peers dashed, syncq solid


def test_one_x_value_is_drawn_as_bars_best_first():
    rows = [point("slow", 1.0), point("fast", 9.0), point("peer:x", 5.0, peer=True)]
    ordered = plots._best_first(panels.Panel("throughput", "Mops/s", {}, rows))
    assert [p.algorithm for p in ordered.points] == ["fast", "peer:x", "slow"]
    lower = [point("a", 3.0, better="lower"), point("b", 1.0, better="lower")]
    assert [p.algorithm for p in plots._best_first(panels.Panel("time", "ns", {}, lower)).points] == ["b", "a"]
