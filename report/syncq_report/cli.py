"""Command line: build DIR/report.html and DIR/plots/*.png from DIR/results.jsonl."""

import argparse
import sys
from pathlib import Path

from . import fmt, load, page, panels, plots, rules, standings

USAGE_ERROR = 2  # usage errors and unusable results files
WRITE_ERROR = 1  # the report could not be written

DEFAULT_TITLE = "syncq-lab report"


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line on stderr (exit status 2)."""

    def error(self, message):
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


def main(argv=None):
    parser = _Parser(prog="build.py", description=__doc__)
    parser.add_argument("dir", help="directory holding results.jsonl; the report is written there")
    parser.add_argument("--title", default=DEFAULT_TITLE, help=f'page title (default "{DEFAULT_TITLE}")')
    args = parser.parse_args(argv)
    directory = Path(args.dir)
    if not directory.is_dir():
        return _fail(parser, USAGE_ERROR, f"{directory}: not a directory")
    try:
        report = build(directory, args.title)
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


def build(directory, title):
    """Build the report in directory and return the path of report.html."""
    results = load.load(directory / "results.jsonl")
    anchors = fmt.unique_slugs(r.experiment.name for r in results.experiments)
    plot_dir = directory / "plots"
    plots.clear(plot_dir)
    sections = [_section(result, anchors[result.experiment.name], plot_dir) for result in results.experiments]
    report = directory / "report.html"
    report.write_text(page.render(title, results, sections), encoding="utf-8")
    return report


def _section(result, slug, plot_dir):
    experiment = result.experiment
    grouped = panels.group(result.points, experiment.x)
    return page.Section(
        result=result,
        anchor=f"exp-{slug}",
        verdicts=[rules.evaluate(claim["rule"], result.points) for claim in experiment.claims],
        panels=grouped,
        plots=plots.draw(experiment, grouped, plot_dir, slug),
        standings=standings.compute(result.points),
    )
