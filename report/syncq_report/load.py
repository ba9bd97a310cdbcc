# SPDX-License-Identifier: BSD-2-Clause
"""Read a results file, validate every record, and keep per experiment its last run.

A run of several launches (docs/results-format.md, "launch") writes each
experiment and point once per launch under the same run id: the points of
one identity are merged (samples concatenated, each remembering its launch;
median, min and max over all), the first launch's experiment record is
kept and repeated notes are shown once.
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
