# SPDX-License-Identifier: BSD-2-Clause
"""Read a results file, validate every record, and keep per experiment its last run.

A run of several launches (docs/results-format.md, "launch") writes each
experiment and point once per launch under the same run id: the points of
one identity are merged (samples concatenated, each remembering its launch;
median, min and max over all), the first launch's experiment record is
kept and repeated notes are shown once.

The postoffice experiments' points each say how the deadline clock stood
at their end (po_clock_gate): gate_changes() finds those that ended with
another kind of gate than the run's machine record says it started with
(a rate check that tripped in a launch), gate_text() says where.
"""

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from . import schema

# The floors experiment: the report always shows it first.
PHYS = "phys"


class ResultsError(Exception):
    """A results file that cannot be read or breaks the format; the message names file and line."""


@dataclass
class Machine:
    run_id: str
    fields: dict  # the machine fields of docs/results-format.md, by name


@dataclass
class Experiment:
    name: str
    paper: str
    figure: str
    title: str
    description: str
    x: object  # name of the swept param, or None for a table-only experiment
    log_y: bool
    claims: list  # of {"text": str, "rule": dict}
    notes: list
    run_id: str
    log_x: bool = False  # optional in the file: plot x on a log axis
    also_x: list = field(default_factory=list)  # optional: further params to plot against


@dataclass
class Point:
    experiment: str
    algorithm: str
    params: dict
    metric: str
    unit: str
    better: str
    median: float
    min: float
    max: float
    samples: list
    counters: dict
    line: int
    peer: bool = False  # from a peer library (lab/peers/), not syncq
    family: object = None  # registry family, or None for a floor / an unknown name
    props: object = None  # the registry's properties, e.g. "fifo,bounded"
    launches: list = None  # the launch of each sample (None: one launch)
    launch_counters: list = None  # each launch's counters, when launches were merged
    po_clock_gate: object = None  # the deadline clock at the point's end (its first launch's; see gates)
    gates: list = None  # [(launch, po_clock_gate)] of every launch that recorded one


@dataclass
class Note:
    experiment: object  # experiment name or None
    text: str
    run_id: str


@dataclass
class ExperimentResult:
    experiment: Experiment
    points: list
    notes: list  # texts: the experiment record's notes, then note records naming it
    machine: dict = None  # the fields of its run's machine record (the verdict rules read "pus")


@dataclass
class Results:
    machines: list  # Machine of every run the report draws on, in file order
    experiments: list  # ExperimentResult, phys first, then in order of first appearance
    run_notes: list  # Note records of those runs not attached to a shown experiment


@dataclass
class _Run:
    machine: Machine
    experiments: dict = field(default_factory=dict)  # name -> Experiment
    points: dict = field(default_factory=dict)  # name -> [Point]
    point_lines: dict = field(default_factory=dict)  # (identity of a point, launch) -> its line
    merged: dict = field(default_factory=dict)  # identity of a point -> the Point holding every launch
    experiment_launches: dict = field(default_factory=dict)  # name -> launches that wrote its record
    notes: list = field(default_factory=list)


def load(path):
    """Load and select the results at path; raises ResultsError on any problem."""
    path = Path(path)
    records = list(_read(path))
    if not records:
        raise ResultsError(f"{path}: results file is empty")
    return _select(path, records)


def _reject_constant(name):
    # json accepts NaN and Infinity by default; they are not JSON and not measurements.
    raise ValueError(f"{name} is not a JSON number")


def _read(path):
    """Yield (line number, record) for each non-blank line, validated against the schema."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise ResultsError(f"{path}: no results file (run syncq-lab first)") from None
    except OSError as err:
        raise ResultsError(f"{path}: cannot read: {err.strerror}") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
                if not text.strip():
                    continue
                record = json.loads(text, parse_constant=_reject_constant)
            except (ValueError, RecursionError) as err:
                raise ResultsError(f"{path}:{number}: not a valid JSON line: {err}") from None
            message = schema.problem(record)
            if message:
                raise ResultsError(f"{path}:{number}: {message}")
            yield number, record


def _select(path, records):
    runs = {}  # run_id -> _Run, in the order their machine records appear
    latest = {}  # experiment name -> run_id of the last experiment record naming it
    for number, record in records:
        try:
            _add(runs, latest, number, record)
        except ValueError as err:
            raise ResultsError(f"{path}:{number}: {err}") from None
    names = sorted(latest, key=lambda name: name != PHYS)  # stable: keeps first-appearance order
    shown = [_experiment_result(runs[latest[name]], name) for name in names]
    used = {latest[name] for name in names} or {list(runs)[-1]}
    return Results(
        machines=[run.machine for run_id, run in runs.items() if run_id in used],
        experiments=shown,
        run_notes=[
            note
            for run_id, run in runs.items()
            if run_id in used
            for note in run.notes
            if note.experiment is None or note.experiment not in run.experiments
        ],
    )


def _add(runs, latest, number, record):
    """File one validated record under its run; raises ValueError when it breaks run order."""
    kind, run_id = record["type"], record["run_id"]
    fields = {name: record[name] for name in schema.RECORD_FIELDS[kind]}
    optional = {name: record[name] for name in schema.OPTIONAL_FIELDS[kind] if name in record}
    if kind == "machine":
        if run_id in runs:
            raise ValueError(f"second machine record for run '{run_id}'")
        runs[run_id] = _Run(Machine(run_id=run_id, fields={**fields, **optional}))
        return
    run = runs.get(run_id)
    if run is None:
        raise ValueError(f"{kind} record of run '{run_id}' comes before that run's machine record")
    launch = optional.pop("launch", 0)
    if kind == "experiment":
        log_x = record.get("log_x", False)
        if not isinstance(log_x, bool):
            raise ValueError("field 'log_x' must be true or false")
        _add_experiment(run, latest, Experiment(run_id=run_id, log_x=log_x, also_x=optional.get("also_x", []), **fields), launch)
    elif kind == "point":
        _add_point(run, Point(line=number, **fields, **optional), launch)
    elif not any(n.experiment == fields["experiment"] and n.text == fields["text"] for n in run.notes):
        run.notes.append(Note(run_id=run_id, **fields))


def _add_experiment(run, latest, experiment, launch):
    seen = run.experiment_launches.setdefault(experiment.name, set())
    if launch in seen:
        raise ValueError(f"second experiment record for '{experiment.name}' in run '{experiment.run_id}'")
    seen.add(launch)
    if experiment.name in run.experiments:
        return  # a later launch of the same run: the first record stands
    run.experiments[experiment.name] = experiment
    run.points[experiment.name] = []
    # Dict order is first insertion, so re-assigning keeps the first-appearance order.
    latest[experiment.name] = experiment.run_id


def _add_point(run, point, launch):
    experiment = run.experiments.get(point.experiment)
    if experiment is None:
        raise ValueError(
            f"point for experiment '{point.experiment}' comes before its experiment record "
            f"in run '{run.machine.run_id}'"
        )
    if experiment.x is not None and experiment.x not in point.params:
        raise ValueError(f"point lacks param '{experiment.x}', the x axis of '{experiment.name}'")
    identity = (point.experiment, point.algorithm, point.metric, tuple(sorted(point.params.items())))
    if (identity, launch) in run.point_lines:
        raise ValueError(f"point repeats the point of line {run.point_lines[(identity, launch)]}")
    run.point_lines[(identity, launch)] = point.line
    point.launches = [launch] * len(point.samples)
    point.gates = [(launch, point.po_clock_gate)] if point.po_clock_gate is not None else []
    first = run.merged.get(identity)
    if first is None:
        run.merged[identity] = point
        run.points[point.experiment].append(point)
        return
    _merge(first, point)


def _merge(into, more):
    """Fold a later launch's point into the first launch's."""
    if (into.unit, into.better) != (more.unit, more.better):
        raise ValueError(
            f"point's unit or direction ({more.unit}, {more.better}) differs from the same point's "
            f"in an earlier launch (line {into.line})"
        )
    into.samples = into.samples + more.samples
    into.launches = into.launches + more.launches
    into.gates = (into.gates or []) + (more.gates or [])
    if into.samples:
        into.median = statistics.median(into.samples)
        into.min = min(into.samples)
        into.max = max(into.samples)
    # Counters are per-launch medians: the merged value is their median (a
    # counter a launch did not report was 0 in every one of its samples).
    into.launch_counters = (into.launch_counters or [into.counters]) + [more.counters]
    names = {name for counters in into.launch_counters for name in counters}
    into.counters = {
        name: statistics.median(c.get(name, 0.0) for c in into.launch_counters) for name in sorted(names)
    }


def _experiment_result(run, name):
    experiment = run.experiments[name]
    attached = [note.text for note in run.notes if note.experiment == name]
    return ExperimentResult(
        experiment=experiment,
        points=run.points[name],
        notes=list(experiment.notes) + attached,
        machine=run.machine.fields,
    )


@dataclass
class GateChange:
    """Points of one experiment that ended with a deadline clock (po_clock_gate)
    of another kind than the run's machine record gives for its start."""

    experiment: str
    line: str  # the gate at their end
    launches: list  # the launches they were measured in, increasing (0: a run without launches)
    points: int  # how many (a point counts once for each launch that measured it)
    of: int  # the experiment's points that recorded a gate, counted alike


def gate_kind(line):
    """The part before the first colon: "counter", "clock at every switch"."""
    return str(line).split(":", 1)[0].strip()


def gate_changes(result):
    """[GateChange] of an ExperimentResult, one per gate line, in order of first appearance."""
    start = (result.machine or {}).get("po_clock_gate")
    recorded = [gate for p in result.points for gate in (p.gates or [])]
    changes = {}
    for launch, line in recorded:
        if start is not None and gate_kind(line) == gate_kind(start):
            continue
        c = changes.setdefault(line, GateChange(result.experiment.name, line, [], 0, len(recorded)))
        c.points += 1
        if launch not in c.launches:
            c.launches.append(launch)
    for c in changes.values():
        c.launches.sort()
    return list(changes.values())


CORES_UNKNOWN = "unknown (no topology)"


def machine_cores(fields):
    """The machine record's physical cores, or None where they are unknown:
    null (hwloc found no topology, and a CPU count cannot tell cores from
    hardware threads), or the 1 such runs recorded before (their pus_source
    names a source other than hwloc)."""
    cores = fields.get("cores")
    source = fields.get("pus_source")
    if cores is None or (source is not None and source != "hwloc"):
        return None
    return cores


def cores_text(fields):
    """machine_cores as shown: the count, or CORES_UNKNOWN."""
    cores = machine_cores(fields)
    return CORES_UNKNOWN if cores is None else str(cores)


GATE_START = " at the start"
GATE_THEN = "; then "


def gate_text(start, changes, named=True):
    """The machine record's gate and where it changed: "counter: 2.596 ticks/ns at
    the start; then clock at every switch: the counter's rate drifted from 2.596
    to 1.298 ticks/ns at the end of 12 of 24 points[ of po-ring] in launch 2";
    the start alone when nothing changed (start None: "not recorded")."""
    start = "not recorded" if start is None else str(start)
    if not changes:
        return start
    parts = []
    for c in changes:
        where = f" of {c.experiment}" if named else ""
        launches = ""
        if c.launches != [0]:
            launches = (" in launch " if len(c.launches) == 1 else " in launches ") + ", ".join(map(str, c.launches))
        parts.append(f"{c.line} at the end of {c.points} of {c.of} points{where}{launches}")
    return start + GATE_START + GATE_THEN + GATE_THEN.join(parts)


def gate_kinds(text):
    """What gate_text's text says of the gates' kinds, for comparing two:
    "counter" or "counter then clock at every switch"."""
    return " then ".join(gate_kind(part) for part in str(text).split(GATE_THEN))
