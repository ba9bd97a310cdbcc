# SPDX-License-Identifier: BSD-2-Clause
"""Compare the verdicts of two runs: which claims changed, and the share that did not.

A claim is identified by its experiment and its text; its verdict is one of
held, did not hold, inconclusive, not measurable (the reason of a
not-measurable verdict is not compared: a claim that stays unmeasurable is
stable). Claims present in only one of the runs are listed apart and do not
count towards the share.
"""

import math
from dataclasses import dataclass

import numpy as np

from . import intervals, load, rules

# run_to_run: the share of ratios allowed to move beyond their intervals
# (twice the nominal 5%: the pairs measured here have a heavy tail of ratios
# that switch regime between runs, which no constant spread covers) and the
# grid searched.
RUN_TO_RUN_TOLERANCE = 0.10
RUN_TO_RUN_STEP = 0.005
RUN_TO_RUN_MAX = 0.5


@dataclass
class Change:
    experiment: str
    claim: str
    before: object  # rules.Verdict
    after: object  # rules.Verdict


@dataclass
class Comparison:
    before_run: str  # run ids (comma-separated when the file drew on several)
    after_run: str
    before_size: str
    after_size: str
    compared: int  # claims in both runs
    same: int  # of those, the claims whose verdict did not change
    changes: list  # Change
    only_before: list  # (experiment, claim)
    only_after: list
    run_to_run: object = None  # (spread, ratios compared): see run_to_run()
    before_wait: str = "pause"  # the queue experiments' waiting (--queue-wait)
    after_wait: str = "pause"

    @property
    def share(self):
        return self.same / self.compared if self.compared else None


def verdicts(results):
    """{(experiment, claim text): Verdict} of every claim of a loaded run."""
    out = {}
    for result in results.experiments:
        for claim in result.experiment.claims:
            out[(result.experiment.name, claim["text"])] = rules.evaluate(claim["rule"], result.points, machine=result.machine)
    return out


def _runs(results):
    return ", ".join(m.run_id for m in results.machines)


def _size(results):
    return ", ".join(sorted({str(m.fields.get("size")) for m in results.machines}))


def _wait(results):
    """The runs' queue waiting; results from before --queue-wait waited as "pause" does."""
    return ", ".join(sorted({str(m.fields.get("queue_wait", "pause")) for m in results.machines}))


def compare(before, after):
    """Compare two loaded results (load.Results)."""
    a, b = verdicts(before), verdicts(after)
    both = [key for key in a if key in b]
    changes = [Change(key[0], key[1], a[key], b[key]) for key in both if a[key].status != b[key].status]
    return Comparison(
        before_run=_runs(before),
        after_run=_runs(after),
        before_size=_size(before),
        after_size=_size(after),
        compared=len(both),
        same=len(both) - len(changes),
        changes=changes,
        only_before=[key for key in a if key not in b],
        only_after=[key for key in b if key not in a],
        run_to_run=run_to_run(before, after),
        before_wait=_wait(before),
        after_wait=_wait(after),
    )


def _ratios(results):
    """{(experiment, metric, params, algorithm): (log ratio to the group's first
    point, its launch-based variance)} for every side-by-side comparison of a run."""
    out = {}
    for result in results.experiments:
        res = intervals.resolution(result.points, run_sd=0.0)
        for metric, members in intervals.side_by_side(result.points):
            ref = members[0]
            for p in members[1:]:
                sd = res.sd_of(p, ref)
                if sd is None or p.median <= 0 or ref.median <= 0:
                    continue
                launches = intervals.launch_count(p, ref)
                params = tuple(sorted((k, repr(v)) for k, v in p.params.items()))
                out[(result.experiment.name, metric, params, p.algorithm)] = (
                    math.log(p.median / ref.median),
                    sd * sd / launches,
                )
    return out


def run_to_run(before, after):
    """(spread, n): the smallest run-to-run spread (log scale, 1 sd; the report's
    intervals.RUN_TO_RUN_SD) at which at most RUN_TO_RUN_TOLERANCE of the n ratios
    measured in both runs moved by more than their 95% intervals allow, given the
    spread their launches showed; None when the runs share no ratio with launches.
    Run it on two runs of the same revision (an A/A pair) to measure a machine."""
    a, b = _ratios(before), _ratios(after)
    both = [key for key in a if key in b]
    if not both:
        return None
    moved = np.asarray([a[k][0] - b[k][0] for k in both])
    var = np.asarray([a[k][1] + b[k][1] for k in both])
    z = intervals.critical_value()
    for step in range(int(round(RUN_TO_RUN_MAX / RUN_TO_RUN_STEP)) + 1):
        spread = step * RUN_TO_RUN_STEP
        beyond = np.abs(moved) > z * np.sqrt(var + 2.0 * spread * spread)
        if beyond.mean() <= RUN_TO_RUN_TOLERANCE:
            return (spread, len(both))
    return (RUN_TO_RUN_MAX, len(both))


def compare_files(before_path, after_path):
    return compare(load.load(before_path), load.load(after_path))


# Up to this many claims found in one run only are listed one by one; more
# are summed up per experiment (a full run against a quick one of a few
# experiments would list every other claim).
LIST_ONE_SIDE = 8


def _one_side(label, keys):
    """The claims of one run only: listed when few, else counted per experiment."""
    if len(keys) <= LIST_ONE_SIDE:
        return [f"  {label}: {experiment}: {claim}" for experiment, claim in keys]
    per = {}
    for experiment, _ in keys:
        per[experiment] = per.get(experiment, 0) + 1
    counts = ", ".join(f"{experiment} {n}" for experiment, n in per.items())
    return [f"  {label}: {len(keys)} claims of {len(per)} experiments ({counts})"]


def text(comparison):
    """The comparison as plain text, for the command line."""
    c = comparison
    lines = [f"before: run {c.before_run} ({c.before_size}); after: run {c.after_run} ({c.after_size})"]
    if c.before_size != c.after_size:
        lines.append("warning: the runs measured different sizes; their verdicts need not agree")
    if c.before_wait != c.after_wait:
        lines.append(
            f"warning: the queue experiments waited differently after a failed poll ({c.before_wait} "
            f"before, {c.after_wait} after: --queue-wait); their verdicts need not agree"
        )
    if c.compared:
        lines.append(f"{c.same} of {c.compared} verdicts identical ({100.0 * c.share:.1f}%)")
    else:
        lines.append("no claim is in both runs")
    lines.append(f"{len(c.changes)} changed, {len(c.only_before)} only before, {len(c.only_after)} only after")
    if c.run_to_run is not None:
        spread, n = c.run_to_run
        lines.append(
            f"run-to-run spread of this pair: {spread:.3f} (log scale; the smallest at which at most "
            f"{RUN_TO_RUN_TOLERANCE:.0%} of the {n} ratios measured in both moved beyond their 95% intervals; "
            f"the report assumes {intervals.RUN_TO_RUN_SD})"
        )
    for change in c.changes:
        lines.append(
            f"  {change.experiment}: {change.claim}\n"
            f"      before: {change.before.status}: {change.before.explanation}\n"
            f"      after:  {change.after.status}: {change.after.explanation}"
        )
    for label, keys in (("only before", c.only_before), ("only after", c.only_after)):
        lines.extend(_one_side(label, keys))
    return "\n".join(lines)
