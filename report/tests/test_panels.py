# SPDX-License-Identifier: BSD-2-Clause
"""Grouping points into panels, and placing them along x."""

from syncq_report import panels
from syncq_report.load import Point


def pt(algorithm, metric="time_per_op", unit="ns", **params):
    return Point(
        experiment="e",
        algorithm=algorithm,
        params=params,
        metric=metric,
        unit=unit,
        better="lower",
        median=1.0,
        min=1.0,
        max=1.0,
        samples=[1.0],
        counters={},
        line=1,
    )


def test_panels_group_by_params_other_than_x_plus_metric():
    points = [
        pt("cas", threads=1, work_ns=0),
        pt("faa", threads=2, work_ns=0),
        pt("cas", threads=1, work_ns=5000),
        pt("cas", metric="cas_fail_per_op", unit="1", threads=1, work_ns=0),
    ]
    grouped = panels.group(points, "threads")
    assert [(p.metric, p.fixed, len(p.points)) for p in grouped] == [
        ("time_per_op", {"work_ns": 0}, 2),
        ("time_per_op", {"work_ns": 5000}, 1),
        ("cas_fail_per_op", {"work_ns": 0}, 1),
    ]
    assert grouped[0].caption("np99-counter") == "np99-counter: time_per_op, work_ns=0"


def test_table_only_experiment_gets_one_panel_per_metric_and_unit():
    points = [
        pt("clock_read"),
        pt("cache_line_transfer", threads=2),
        pt("copy", metric="bandwidth", unit="GB/s"),
    ]
    grouped = panels.group(points, None)
    assert [(p.metric, len(p.points)) for p in grouped] == [("time_per_op", 2), ("bandwidth", 1)]
    assert grouped[0].caption("phys") == "phys: time_per_op"


def test_numeric_x_is_sorted_and_string_x_keeps_first_appearance():
    numeric = panels.x_axis([pt("a", threads=4), pt("a", threads=1), pt("b", threads=2)], "threads")
    assert numeric.numeric and numeric.ticks == [1, 2, 4] and numeric.labels == ["1", "2", "4"]
    categories = [pt("a", wait="spin"), pt("a", wait="block"), pt("b", wait="spin")]
    axis = panels.x_axis(categories, "wait")
    assert not axis.numeric and axis.labels == ["spin", "block"]
    assert [axis.position(p) for p in categories] == [0, 1, 0]


def test_table_order_is_algorithm_then_x():
    points = [pt("faa", threads=2), pt("cas", threads=2), pt("faa", threads=1), pt("cas", threads=1)]
    (panel,) = panels.group(points, "threads")
    assert [(p.algorithm, p.params["threads"]) for p in panels.table_order(panel, "threads")] == [
        ("faa", 1),
        ("faa", 2),
        ("cas", 1),
        ("cas", 2),
    ]
