# SPDX-License-Identifier: BSD-2-Clause
"""Command line: build DIR/report.html and DIR/plots/*.png from DIR/results.jsonl,
or compare the verdicts of two results files.

    build.py DIR [--title TEXT] [--compare OLD.jsonl]
    build.py compare A.jsonl B.jsonl
"""

import argparse
import dataclasses
import sys
from pathlib import Path

from . import compare, fmt, load, page, panels, papers, plots, recommend, rules, standings

USAGE_ERROR = 2  # usage errors and unusable results files
WRITE_ERROR = 1  # the report could not be written

DEFAULT_TITLE = "syncq-lab report"


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line on stderr (exit status 2)."""

    def error(self, message):
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "compare":
        return compare_main(argv[1:])
    parser = _Parser(prog="build.py", description=__doc__)
    parser.add_argument("dir", help="directory holding results.jsonl; the report is written there")
    parser.add_argument("--title", default=DEFAULT_TITLE, help=f'page title (default "{DEFAULT_TITLE}")')
    parser.add_argument(
        "--compare",
        metavar="OLD",
        help="an earlier results file: the report shows which verdicts changed since (stability)",
    )
    args = parser.parse_args(argv)
    directory = Path(args.dir)
    if not directory.is_dir():
        return _fail(parser, USAGE_ERROR, f"{directory}: not a directory")
    try:
        report = build(directory, args.title, Path(args.compare) if args.compare else None)
    except load.ResultsError as err:
        return _fail(parser, USAGE_ERROR, str(err))
    except OSError as err:
        return _fail(parser, WRITE_ERROR, f"cannot write the report: {err}")
    print(report)
    return 0


def _fail(parser, status, message):
    # Keep it to one line even if a message quotes a multi-line value.
    print(f"{parser.prog}: error: {' '.join(message.split())}", file=sys.stderr)
    return status


def compare_main(argv):
    parser = _Parser(prog="build.py compare", description="the verdicts that differ between two runs")
    parser.add_argument("before", help="the earlier results file (results.jsonl)")
    parser.add_argument("after", help="the later results file")
    args = parser.parse_args(argv)
    try:
        comparison = compare.compare_files(Path(args.before), Path(args.after))
    except load.ResultsError as err:
        return _fail(parser, USAGE_ERROR, str(err))
    try:
        print(compare.text(comparison))
    except BrokenPipeError:  # e.g. piped into head: the reader has what it wanted
        sys.stderr.close()
    return 0


def build(directory, title, previous=None):
    """Build the report in directory and return the path of report.html. previous:
    an earlier results file to compare the verdicts with (None: no comparison)."""
    results = load.load(directory / "results.jsonl")
    anchors = fmt.unique_slugs(r.experiment.name for r in results.experiments)
    plot_dir = directory / "plots"
    plots.clear(plot_dir)
    sections = [_section(result, anchors[result.experiment.name], plot_dir) for result in results.experiments]
    stability = None
    if previous is not None:
        stability = compare.compare(load.load(previous), results)
    summary = page.Summary(
        answers=recommend.answer_all(sections),
        scores=papers.scoreboard(sections),
        stability=stability,
        previous=str(previous) if previous is not None else None,
    )
    report = directory / "report.html"
    report.write_text(page.render(title, results, sections, summary), encoding="utf-8")
    return report


def _section(result, slug, plot_dir):
    experiment = result.experiment
    grouped = panels.group(result.points, experiment.x)
    return page.Section(
        result=result,
        anchor=f"exp-{slug}",
        verdicts=[rules.evaluate(claim["rule"], result.points, machine=result.machine) for claim in experiment.claims],
        panels=grouped,
        plots=plots.draw(experiment, [p for p in grouped if not panels.is_count(p)], plot_dir, slug)
        + _also_plots(experiment, [p for p in result.points if not panels.is_count(p)], plot_dir, slug),
        standings=standings.compute(result.points),
        resolution=rules.resolution_of(result.points),
    )


def _also_plots(experiment, points, plot_dir, slug):
    """The experiment's further plots against another param ("also_x")."""
    drawn = []
    for axis in experiment.also_x:
        grouped = panels.group_also(points, axis)
        if grouped:
            view = dataclasses.replace(experiment, x=axis["x"], log_x=False)
            drawn += plots.draw(view, grouped, plot_dir, f"{slug}-vs-{axis['x']}")
    return drawn
