# SPDX-License-Identifier: BSD-2-Clause
"""Draw one PNG per panel: lines over the x param, or bars for a table-only experiment."""

import dataclasses
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")  # files only: no display, and no GUI toolkit needed

from matplotlib.figure import Figure  # noqa: E402 - must follow the backend choice
from matplotlib.ticker import LogFormatter  # noqa: E402

from . import fmt, panels  # noqa: E402

DPI = 100
LINE_FIGURE_INCHES = (8.0, 4.2)
# The legend sits right of the axes, one line per algorithm: a panel with
# more algorithms than the default height holds (np99-locks: every lock,
# queue and peer lock) gets a taller figure instead of collapsed axes.
LEGEND_INCHES_PER_ENTRY = 0.22
LEGEND_MARGIN_INCHES = 0.8
BAR_INCHES_PER_ROW = 0.4
# Up to this many numeric x values each get a tick; beyond, matplotlib picks ticks.
MAX_X_TICKS = 16
# A bar chart gets its log axis only when its values span more than this factor:
# bars on a log axis of a narrow range have lengths that mean nothing.
BAR_LOG_MIN_SPAN = 10


@dataclass
class Plot:
    file: str  # file name under plots/
    caption: str
    width: int  # pixels
    height: int


def clear(plot_dir):
    """Create plot_dir and remove the PNGs of an earlier build, whose panels may be gone."""
    plot_dir.mkdir(parents=True, exist_ok=True)
    for old in plot_dir.glob("*.png"):
        old.unlink()


def draw(experiment, experiment_panels, plot_dir, prefix):
    """Write one PNG per panel into plot_dir, file names starting with prefix."""
    styles = _styles(experiment_panels)
    drawn = []
    for index, panel in enumerate(experiment_panels, start=1):
        name = _file_stem(prefix, index, panel)
        log, caption = _scale(experiment, panel)
        if experiment.x is None:
            figure = _bars(panel, caption, log, styles)
        elif len(panels.x_axis(panel.points, experiment.x).ticks) == 1:
            # one x value: lines would be a vertical smear of markers; bars sorted best first read
            figure = _bars(_best_first(panel), caption, log, styles)
        else:
            figure = _lines(panel, experiment.x, caption, log, styles, experiment.log_x)
        figure.savefig(plot_dir / f"{name}.png", dpi=DPI)
        width, height = figure.get_size_inches() * DPI
        drawn.append(Plot(file=f"{name}.png", caption=caption, width=round(width), height=round(height)))
    return drawn


class _LogTicks(LogFormatter):
    """Log-axis tick labels as plain numbers (0.4, 100, 1e5) instead of 4x10^-1.

    LogFormatter still decides which ticks get a label; only the text changes.
    """

    def __call__(self, x, pos=None):
        return fmt.num(x, trim=True) if super().__call__(x, pos) else ""


def _plain_log_ticks(axis):
    """Label the ticks of a log-scaled matplotlib Axis with plain numbers."""
    axis.set_major_formatter(_LogTicks())
    axis.set_minor_formatter(_LogTicks(labelOnlyBase=False))


def _plain(text):
    """Text from the results file, shown literally: matplotlib reads $...$ as math and may fail on it."""
    return text.replace("$", r"\$")


# A plot's file name stays well under the 255 bytes a file system allows,
# whatever its parameters' values: longer stems are cut (the index already
# keeps them apart).
MAX_STEM = 120


def _file_stem(prefix, index, panel):
    """A readable, unique name: the index keeps panels apart even if their slugs collide."""
    parts = [prefix, str(index), fmt.slug(panel.metric)]
    if panel.fixed:
        parts.append(fmt.slug(fmt.params(panel.fixed)))
    return "-".join(parts)[:MAX_STEM].rstrip("-")


def _scale(experiment, panel):
    """Whether the value axis is logarithmic, and the caption, which says when log_y cannot be."""
    caption = panel.caption(experiment.name)
    if not experiment.log_y:
        return False, caption
    if any(p.min <= 0 for p in panel.points):
        return False, caption + " (linear: values <= 0)"
    span = max(p.max for p in panel.points) / min(p.min for p in panel.points)
    return experiment.x is not None or span > BAR_LOG_MIN_SPAN, caption


# Ten colours times nine markers: the marker of the k-th series moves on by
# 11k (mod 9), so two series of one colour never share a marker (up to 90
# series), and neighbours in the legend differ in both.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<")


@dataclass(frozen=True)
class Style:
    colour: tuple
    marker: str
    line: str  # "-" for syncq's algorithms, "--" for peer libraries'


def _styles(experiment_panels):
    """One style per algorithm across all panels of an experiment, so the legends agree:
    every series told apart by colour and marker, peers dashed."""
    palette = matplotlib.colormaps["tab10"].colors
    points = [p for panel in experiment_panels for p in panel.points]
    peers = {p.algorithm for p in points if p.peer}
    styles = {}
    for i, name in enumerate(panels.algorithms(points)):
        styles[name] = Style(palette[i % len(palette)], MARKERS[(i + i // len(palette)) % len(MARKERS)],
                             "--" if name in peers else "-")
    return styles


def _best_first(panel):
    """The panel with its points sorted best first by the metric's direction."""
    higher = panel.points[0].better == "higher"
    return dataclasses.replace(panel, points=sorted(panel.points, key=lambda p: p.median, reverse=higher))


def _value_label(panel):
    better = panel.points[0].better
    return _plain(f"{panel.metric} ({panel.unit}, {better} is better)")


def _spread(points):
    """Error bar extents below and above each median: min..max."""
    return [[p.median - p.min for p in points], [p.max - p.median for p in points]]


def _line_figure_height(entries):
    """Inches: the default, or enough for a legend of `entries` lines."""
    return max(LINE_FIGURE_INCHES[1], entries * LEGEND_INCHES_PER_ENTRY + LEGEND_MARGIN_INCHES)


def _lines(panel, x, caption, log, styles, experiment_log_x=False):
    height = _line_figure_height(len(panels.algorithms(panel.points)))
    figure = Figure(figsize=(LINE_FIGURE_INCHES[0], height), layout="constrained")
    axes = figure.add_subplot()
    axis = panels.x_axis(panel.points, x)
    for algorithm in panels.algorithms(panel.points):
        mine = sorted((p for p in panel.points if p.algorithm == algorithm), key=axis.position)
        axes.errorbar(
            [axis.position(p) for p in mine],
            [p.median for p in mine],
            yerr=_spread(mine),
            marker=styles[algorithm].marker,
            linestyle=styles[algorithm].line,
            capsize=3,
            label=_plain(algorithm + (" (peer)" if styles[algorithm].line == "--" else "")),
            color=styles[algorithm].colour,
        )
    if not axis.numeric or len(axis.ticks) <= MAX_X_TICKS:
        axes.set_xticks(axis.ticks, [_plain(label) for label in axis.labels])
    axes.set_xlabel(_plain(x))
    if experiment_log_x and axis.numeric and all(p > 0 for p in axis.ticks):
        axes.set_xscale("log")
        axes.set_xticks(axis.ticks, [_plain(label) for label in axis.labels])
    axes.set_ylabel(_value_label(panel))
    if log:
        axes.set_yscale("log")
        _plain_log_ticks(axes.yaxis)
    axes.set_title(_plain(caption))
    axes.grid(True, alpha=0.3)
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    return figure


def _bars(panel, caption, log, styles):
    rows = panel.points
    height = max(2.0, BAR_INCHES_PER_ROW * len(rows) + 1.4)
    figure = Figure(figsize=(LINE_FIGURE_INCHES[0], height), layout="constrained")
    axes = figure.add_subplot()
    positions = range(len(rows))
    axes.barh(
        positions,
        [p.median for p in rows],
        xerr=_spread(rows),
        capsize=3,
        color=[styles[p.algorithm].colour for p in rows],
        hatch=None,
    )
    for bar, point in zip(axes.patches, rows):
        if styles[point.algorithm].line == "--":
            bar.set_hatch("//")  # a peer library's bar, as its line is dashed
            bar.set_edgecolor("white")
    labels = [p.algorithm + (" (peer)" if p.peer else "") + (f" ({fmt.params(p.params)})" if p.params else "")
              for p in rows]
    axes.set_yticks(positions, [_plain(label) for label in labels])
    axes.invert_yaxis()  # first point on top, as in the table
    for row, point in enumerate(rows):
        axes.annotate(
            fmt.num(point.median),
            xy=(point.max, row),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize="small",
        )
    if log:
        axes.set_xscale("log")
        _plain_log_ticks(axes.xaxis)
    axes.margins(x=0.15)  # room for the value labels right of the bars
    axes.set_xlabel(_value_label(panel))
    axes.set_title(_plain(caption))
    axes.grid(True, axis="x", alpha=0.3)
    return figure
