# SPDX-License-Identifier: BSD-2-Clause
"""Group an experiment's points into panels: one plot (and one block of the table) each."""

import dataclasses
from dataclasses import dataclass

from . import fmt


# The unit of a count metric: how often something happened in each run (e.g. the
# pseudo-scheduler's preemptions), not a cost (docs/results-format.md, "unit").
# Its panels are not plotted; the page lists them in one table under the plots.
COUNT_UNIT = "count"


def is_count(item):
    """True for a point or panel of a count metric."""
    return item.unit == COUNT_UNIT


@dataclass
class Panel:
    metric: str
    unit: str
    fixed: dict  # params shared by every point of the panel (the x param excluded)
    points: list

    def caption(self, experiment_name):
        """Plot title naming the experiment, the metric and the panel params."""
        fixed = fmt.params(self.fixed)
        return f"{experiment_name}: {self.metric}" + (f", {fixed}" if fixed else "")


def group(points, x):
    """Panels in order of first appearance.

    With an x param, points are grouped by every other param plus the metric, as
    the format says. A table-only experiment (x is None) gets one bar chart per
    metric instead of one chart per point. The unit is part of the key in both
    cases so that one axis never mixes units.
    """
    panels = {}
    for point in points:
        fixed = {} if x is None else {k: v for k, v in point.params.items() if k != x}
        key = (point.metric, point.unit, tuple(sorted(fixed.items())))
        if key not in panels:
            panels[key] = Panel(metric=point.metric, unit=point.unit, fixed=fixed, points=[])
        panels[key].points.append(point)
    return list(panels.values())


def group_also(points, axis):
    """Panels against a further param (an experiment's "also_x" entry): axis["x"]
    on the x axis; with axis["join"], one line per algorithm and value of that
    param, the points whose value is axis["base"] joining every line (e.g. the
    dedicated run is level 1 of both the real and the pseudo multiprogramming);
    axis["metrics"], when given, limits the metrics. Only panels with two or more
    x values are kept: a plot of one x value says nothing a table does not."""
    x, join, base = axis["x"], axis.get("join"), axis.get("base")
    metrics = axis.get("metrics")
    keyed = {}
    for point in points:
        if x not in point.params or (metrics and point.metric not in metrics):
            continue
        fixed = {k: v for k, v in point.params.items() if k not in (x, join)}
        key = (point.metric, point.unit, tuple(sorted(fixed.items())))
        keyed.setdefault(key, []).append(point)
    out = []
    for (metric, unit, fixed), found in keyed.items():
        if join:
            series = [v for v in dict.fromkeys(p.params.get(join) for p in found) if v != base]
            lines = []
            for point in found:
                value = point.params.get(join)
                for label in series if value == base else [value]:
                    lines.append(dataclasses.replace(point, algorithm=f"{point.algorithm} ({join}={label})"))
            found = lines
        if len({p.params[x] for p in found}) >= 2:
            out.append(Panel(metric=metric, unit=unit, fixed=dict(fixed), points=found))
    return out


def algorithms(points):
    """Algorithm names in order of first appearance, so colours and rows stay stable."""
    return list(dict.fromkeys(p.algorithm for p in points))


@dataclass
class XAxis:
    position: object  # point -> its coordinate along x
    ticks: list  # coordinates of the distinct x values, ascending
    labels: list  # tick labels, matching ticks
    numeric: bool  # False when the values are categories


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def x_axis(points, x):
    """Place points along x: numeric values at their value, otherwise as categories 0, 1, 2...

    Categories keep the order in which the values first appear.
    """
    if all(_is_number(p.params[x]) for p in points):
        ticks = sorted({p.params[x] for p in points})
        return XAxis(lambda p: p.params[x], ticks, [fmt.param_value(t) for t in ticks], numeric=True)
    labels = list(dict.fromkeys(str(p.params[x]) for p in points))
    return XAxis(lambda p: labels.index(str(p.params[x])), list(range(len(labels))), labels, numeric=False)


def table_order(panel, x):
    """The panel's points ordered by algorithm (first appearance), then along x."""
    names = algorithms(panel.points)
    if x is None:
        return sorted(panel.points, key=lambda p: names.index(p.algorithm))
    axis = x_axis(panel.points, x)
    return sorted(panel.points, key=lambda p: (names.index(p.algorithm), axis.position(p)))
