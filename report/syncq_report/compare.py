# SPDX-License-Identifier: BSD-2-Clause
"""Compare the verdicts of two runs: which claims changed, and the share that did not.

A claim is identified by its experiment and its text; its verdict is one of
held, did not hold, inconclusive, not measurable (the reason of a
not-measurable verdict is not compared: a claim that stays unmeasurable is
stable). Claims present in only one of the runs are listed apart and do not
count towards the share.

Before its list, a comparison names each field of the machine records
(MOVING_FIELDS) that differs between the runs the two files drew a shared
experiment from and that moves that experiment's figures; where the field
moves some experiments only (the postoffice's, the counted ones, the
polling queues', those with peer points), the changed claims of those
experiments are marked with it (docs/results-format.md, "Comparing two
runs"). The postoffice's deadline clock is read with where the
experiment's points found it changed during the run (load.gate_text): a
rate check that tripped in one run and not in the other differs.
"""

import math
import dataclasses
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
    machine: list = dataclasses.field(default_factory=list)  # MachineDifference, in MOVING_FIELDS order

    @property
    def share(self):
        return self.same / self.compared if self.compared else None

    def marks(self, experiment):
        """The fields of the machine differences whose scope names experiment
        (those that move every experiment in both mark none: their warning says so)."""
        return [d.field for d in self.machine if d.scoped and experiment in d.experiments]


# The workers' event counters (docs/results-format.md, "point"): an experiment
# whose points carry one counted.
PERF_COUNTERS = frozenset(
    {
        "cycles_per_op",
        "instructions_per_op",
        "llc_misses_per_op",
        "branch_misses_per_op",
        "page_faults_per_op",
        "cpu_migrations_per_op",
        "perf_running_fraction",
    }
)
NOT_RECORDED = "not recorded"


def _kind(value):
    """The part before the first colon: "counter: 2.9 ticks/ns" and "counter:
    3.0 ticks/ns" gate alike, "refused: A" and "refused: B" pin alike."""
    return value.split(":", 1)[0].strip()


def _postoffice(name, before, after):
    return name.startswith("po-") or name.startswith("lf07-")


def _counted(name, before, after):
    return any(PERF_COUNTERS & set(p.counters) for r in (before, after) for p in r.points)


def _polling(name, before, after):
    return name.startswith("dg25-") or name == "queue-sides"


def _with_peers(name, before, after):
    return any(p.peer for r in (before, after) for p in r.points)


def _peers(value):
    if not isinstance(value, list):
        return NOT_RECORDED
    return ", ".join(f"{p['library']} {p['registered']}" for p in sorted(value, key=lambda p: p["library"])) or "none"


def _gate(result):
    """The machine record's po_clock_gate and where the experiment's points
    found it changed (load.gate_text)."""
    machine = result.machine or {}
    return load.gate_text(machine.get("po_clock_gate", NOT_RECORDED), load.gate_changes(result), named=False)


@dataclass(frozen=True)
class MovingField:
    name: str
    why: str
    affects: object = None  # predicate (experiment name, its ExperimentResult before, after); None: every experiment
    default: object = NOT_RECORDED  # the value of a record that lacks the field (a str, or a callable of the record)
    shown: object = str  # the value as printed
    key: object = None  # what is compared (None: the shown value)
    read: object = None  # the shown value from the experiment's result (None: from its machine record)
    whole: object = None  # the shown value from the whole machine record (None: from the field alone)
    unknown: object = None  # the shown value that says the field is unknown: no difference from or to it


# The machine-record fields that move figures, each with why and the
# experiments it moves (docs/results-format.md, "Comparing two runs"). Left
# out: the sample counts and budgets (reps, max_reps, launches, *_budget_*),
# which change how many samples a point has, not what a sample measures (the
# size, which sets them, is warned of apart); the date and the command;
# perf_counters, the probe's one word (perf_events says what was counted).
MOVING_FIELDS = (
    MovingField(
        "po_clock_gate",
        "the postoffice's fiber schedulers check their deadlines with a calibrated counter or read the clock "
        "at every switch while one is pending; the latter makes those switches dearer",
        _postoffice,
        key=load.gate_kinds,
        read=_gate,
    ),
    MovingField(
        "perf_events",
        "the events a worker counts; a counted thread's context switch costs more: docs/lab.md, \"Event counters\"",
        _counted,
        default="not recorded (none counted)",
    ),
    MovingField(
        "queue_wait",
        "how the queue experiments waited after a failed poll (--queue-wait); it moves single queues by 2x "
        "and more",
        _polling,
        default="pause",
    ),
    MovingField("peers", "the peer libraries registered (library, structures)", _with_peers, shown=_peers),
    MovingField("git_revision", "the code measured"),
    MovingField("compiler", "the compiler that built it"),
    MovingField("flags", "the C flags of the build"),
    MovingField("build_type", "the build type"),
    MovingField("cpu_model", "the processor", unknown="unknown"),
    MovingField("pus", "the processing units: thread counts, oversubscription and needs_pus verdicts"),
    MovingField(
        "cores",
        "the physical cores: where a second thread shares a core",
        whole=load.cores_text,
        unknown=load.CORES_UNKNOWN,
    ),
    MovingField(
        "planned_pus", "the processing units planned for: the thread lists and budgets", default=lambda m: m.get("pus")
    ),
    MovingField("kernel", "the kernel: its scheduler, futexes and system calls"),
    MovingField("pinning", "whether threads were pinned (hwloc, off, refused)", key=_kind),
)


@dataclass
class MachineDifference:
    field: str
    before: list  # the values before (shown), one per distinct pair
    after: list
    why: str
    scoped: bool  # False: it moves every experiment in both results (a field of every experiment, all differing)
    experiments: list  # the experiments in both runs it moves, whose records differ


def _value(spec, machine):
    """The field's shown value in a machine record."""
    machine = machine or {}
    if spec.whole is not None:
        return spec.whole(machine)
    if spec.name in machine:
        return spec.shown(machine[spec.name])
    return spec.default(machine) if callable(spec.default) else spec.default


def _value_of(spec, result):
    """The field's shown value for an experiment's result: its run's machine
    record's, or what spec.read makes of the result."""
    return spec.read(result) if spec.read is not None else _value(spec, result.machine)


def machine_differences(before, after):
    """[MachineDifference] of every MOVING_FIELDS field that differs between the
    machine records of an experiment in both results and moves its figures."""
    b = {r.experiment.name: r for r in before.experiments}
    names = [r.experiment.name for r in after.experiments if r.experiment.name in b]
    a = {r.experiment.name: r for r in after.experiments}
    out = []
    for spec in MOVING_FIELDS:
        pairs, moved = [], []
        key = spec.key or str
        for name in names:
            x, y = _value_of(spec, b[name]), _value_of(spec, a[name])
            if key(str(x)) == key(str(y)):
                continue
            if spec.unknown is not None and spec.unknown in (x, y):
                continue  # unknown on one side: nothing known changed (pus, recorded alike, still would)
            if spec.affects is not None and not spec.affects(name, b[name], a[name]):
                continue
            moved.append(name)
            if (x, y) not in pairs:
                pairs.append((x, y))
        if moved:
            out.append(
                MachineDifference(
                    field=spec.name,
                    before=[str(x) for x, _ in pairs],
                    after=[str(y) for _, y in pairs],
                    why=spec.why,
                    scoped=spec.affects is not None or len(moved) < len(names),
                    experiments=moved,
                )
            )
    return out


def machine_warning(comparison):
    """The sentence before the machine differences (the text form and the report share it)."""
    marked = any(d.scoped for d in comparison.machine)
    return "the machine records differ where figures move; their verdicts need not agree" + (
        " (a changed claim below is marked with the fields that move its experiment)" if marked else ""
    )


def difference_text(d):
    """One machine difference as text: the field, what it moves and why, then
    the values before and after (a pair a line)."""
    scope = ", ".join(d.experiments) if d.scoped else "every experiment"
    lines = [f"{d.field} (moves {scope}): {d.why}"]
    for x, y in zip(d.before, d.after):
        lines += [f"    before: {x}", f"    after:  {y}"]
    return "\n".join(lines)


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
        machine=machine_differences(before, after),
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
    if c.machine:
        lines.append(f"warning: {machine_warning(c)}:")
        lines.extend("  " + difference_text(d).replace("\n", "\n  ") for d in c.machine)
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
        marks = c.marks(change.experiment)
        mark = f"  [machine differs: {', '.join(marks)}]" if marks else ""
        lines.append(
            f"  {change.experiment}: {change.claim}{mark}\n"
            f"      before: {change.before.status}: {change.before.explanation}\n"
            f"      after:  {change.after.status}: {change.after.explanation}"
        )
    for label, keys in (("only before", c.only_before), ("only after", c.only_after)):
        lines.extend(_one_side(label, keys))
    return "\n".join(lines)
