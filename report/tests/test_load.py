# SPDX-License-Identifier: BSD-2-Clause
"""Loading: validation with line numbers, run selection, experiment order."""

import json

import pytest
from support import FIXTURE, fixture_records, write_records

from syncq_report import load

RUN = "r1-20250301T101500Z"


def test_fixture_loads_with_phys_first_then_file_order():
    results = load.load(FIXTURE)
    assert [r.experiment.name for r in results.experiments] == ["phys", "np99-counter", "ms98-queue"]
    assert [m.run_id for m in results.machines] == [RUN]
    counter = results.experiments[1]
    assert len(counter.points) == 24
    assert counter.notes == [
        "work_ns is busy delay calibrated with delay_ns",
        "threads=4 oversubscribes the 2 cores",
    ]
    assert [n.text for n in results.run_notes] == ["quick size: thread counts stop at 2x the cores"]


def header():
    """The fixture's machine and np99-counter experiment records: a valid start of a run."""
    return fixture_records()[:2]


def point(**change):
    record = dict(fixture_records()[2])
    record.update(change)
    return record


def without(record, key):
    return {k: v for k, v in record.items() if k != key}


def lines_of(*records):
    return [r if isinstance(r, str) else json.dumps(r) for r in records]


BAD_LINES = [
    ("not json", ["{oops"], "not a valid JSON line"),
    ("not an object", ["[1, 2]"], "a record must be a JSON object"),
    ("no type", [without(point(), "type")], "record lacks field 'type'"),
    ("unknown type", [point(type="sample")], 'unknown record type "sample"'),
    ("missing field", [without(point(), "median")], "point record lacks field 'median'"),
    ("wrong type", [point(unit=3)], "point field 'unit' must be a string, got 3"),
    ("bool as number", [point(median=True)], "point field 'median' must be a number, got true"),
    ("NaN", ['{"type": "point", "median": NaN}'], "not a valid JSON line: NaN is not a JSON number"),
    (
        "overflow",
        [json.dumps(point()).replace('"median": 6.1', '"median": 1e400')],
        "point field 'median' must be a number, got Infinity",
    ),
    ("huge integer", [point(max=10**400)], "point field 'max' must be a number, got 1000000"),
    (
        "bad param",
        [point(params={"threads": [1]})],
        "point field 'params' must be an object of numbers or strings",
    ),
    ("bad better", [point(better="faster")], 'point field \'better\' must be "lower" or "higher"'),
    ("schema", [point(schema=2)], "unsupported schema 2 (this report reads schema 1)"),
    ("min above median", [point(min=7.0)], "point needs min <= median <= max, got 7.0, 6.1, 6.53"),
    (
        "unknown experiment",
        [point(experiment="np99-locks")],
        f"point for experiment 'np99-locks' comes before its experiment record in run '{RUN}'",
    ),
    ("unknown run", [point(run_id="r9")], "point record of run 'r9' comes before that run's machine record"),
    ("second machine", [fixture_records()[0]], f"second machine record for run '{RUN}'"),
    (
        "second experiment",
        [fixture_records()[1]],
        f"second experiment record for 'np99-counter' in run '{RUN}'",
    ),
    (
        "no x param",
        [point(params={"work_ns": 0})],
        "point lacks param 'threads', the x axis of 'np99-counter'",
    ),
]


@pytest.mark.parametrize(
    "lines, message", [case[1:] for case in BAD_LINES], ids=[case[0] for case in BAD_LINES]
)
def test_malformed_record_is_rejected_with_its_line(tmp_path, lines, message):
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(lines_of(*header(), *lines)) + "\n", encoding="utf-8")
    with pytest.raises(load.ResultsError) as error:
        load.load(path)
    assert str(error.value).startswith(f"{path}:3: {message}")


def test_repeated_point_names_the_first_line(tmp_path):
    path = tmp_path / "results.jsonl"
    write_records(path, [*header(), point(), point(samples=[6.1])])
    with pytest.raises(load.ResultsError, match=r"results.jsonl:4: point repeats the point of line 3$"):
        load.load(path)


def test_blank_lines_are_skipped_but_counted(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(lines_of(*header(), "", "   ", "{oops")) + "\n", encoding="utf-8")
    with pytest.raises(load.ResultsError, match=r"results.jsonl:5: not a valid JSON line"):
        load.load(path)


def test_invalid_utf8_names_the_line(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_bytes(FIXTURE.read_bytes() + b'{"type": "note", "text": "\xff"}\n')
    with pytest.raises(load.ResultsError, match=r"results.jsonl:40: not a valid JSON line"):
        load.load(path)


def test_missing_and_empty_files_are_errors(tmp_path):
    with pytest.raises(load.ResultsError, match="no results file"):
        load.load(tmp_path / "results.jsonl")
    (tmp_path / "results.jsonl").write_text("\n\n", encoding="utf-8")
    with pytest.raises(load.ResultsError, match="results file is empty"):
        load.load(tmp_path / "results.jsonl")


def counter_points(records):
    return [r for r in records if r["type"] == "point" and r["experiment"] == "np99-counter"]


def second_run(records):
    """Run "r2": re-measures np99-counter only, with every number doubled, and adds no note."""
    experiment = [r for r in records if r["type"] == "experiment" and r["name"] == "np99-counter"]
    doubled = [
        dict(p, median=p["median"] * 2, min=p["min"] * 2, max=p["max"] * 2) for p in counter_points(records)
    ]
    return [dict(r, run_id="r2") for r in [records[0], *experiment, *doubled]]


def test_last_run_that_measured_an_experiment_wins(tmp_path):
    first = fixture_records()
    path = tmp_path / "results.jsonl"
    write_records(path, first + second_run(first))
    results = load.load(path)
    by_name = {r.experiment.name: r for r in results.experiments}
    assert [r.experiment.name for r in results.experiments] == ["phys", "np99-counter", "ms98-queue"]
    counter = by_name["np99-counter"]
    assert counter.experiment.run_id == "r2"
    assert [p.median for p in counter.points] == [p["median"] * 2 for p in counter_points(first)]
    # The superseded run's note about np99-counter is gone; r2 added none.
    assert counter.notes == ["work_ns is busy delay calibrated with delay_ns"]
    assert by_name["phys"].experiment.run_id == RUN
    assert [m.run_id for m in results.machines] == [RUN, "r2"]


def test_a_run_no_experiment_is_taken_from_is_not_shown(tmp_path):
    first = fixture_records()
    everything_again = [dict(r, run_id="r2") for r in first]
    path = tmp_path / "results.jsonl"
    write_records(path, first + everything_again)
    results = load.load(path)
    assert [m.run_id for m in results.machines] == ["r2"]
    assert {r.experiment.run_id for r in results.experiments} == {"r2"}
    assert [n.run_id for n in results.run_notes] == ["r2"]
