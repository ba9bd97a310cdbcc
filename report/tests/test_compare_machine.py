# SPDX-License-Identifier: BSD-2-Clause
"""compare warns, before its list, of each machine-record field that differs
between the two runs and moves a shared experiment's figures
(compare.MOVING_FIELDS), in its text and in the report's stability section,
and marks the changed claims of the experiments a scoped field moves."""

import copy
import subprocess
import sys

import pytest
from support import BUILD_PY, write_records

from syncq_report import cli, compare, load

MACHINE = {
    "type": "machine",
    "schema": 1,
    "run_id": "before",
    "cpu_model": "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz",
    "cores": 2,
    "pus": 4,
    "planned_pus": 4,
    "kernel": "Linux 6.1.0-18-amd64 x86_64",
    "compiler": "GCC 12.2.0",
    "flags": "-O2 -g",
    "build_type": "RelWithDebInfo",
    "git_revision": "v0.1-14-g3f2a9c1",
    "date": "2025-03-01T10:15:00Z",
    "size": "quick",
    "reps": 6,
    "pinning": "hwloc",
    "perf_counters": "available",
    "perf_events": "read: page_faults, cpu_migrations (user and kernel space, by teams of at most one thread per "
    "processing unit, in the experiments that count by default); not read: cycles (No such file or directory)",
    "po_clock_gate": "counter: 2.9 ticks/ns",
    "queue_wait": "pause",
    "peers": [{"library": "ck", "package": "libck-dev", "registered": 14, "why": ""}],
    "command": "syncq-lab run --quick",
}

# experiment -> (counts events, has a peer point): po-ring is the postoffice's,
# dg25-prodcons polls and counts, np99-locks has a peer, np99-counter none of these.
EXPERIMENTS = {
    "po-ring": (False, False),
    "dg25-prodcons": (True, False),
    "np99-locks": (False, True),
    "np99-counter": (False, False),
}

# Each field, a value that differs from MACHINE's, and the experiments it moves
# (None: every experiment, no row marked).
DIFFERENCES = [
    ("po_clock_gate", "clock at every switch: no invariant counter", ["po-ring"]),
    ("perf_events", "off (--no-perf-counters)", ["dg25-prodcons"]),
    ("queue_wait", "backoff", ["dg25-prodcons"]),
    ("peers", [{"library": "ck", "package": "libck-dev", "registered": 0, "why": "not found"}], ["np99-locks"]),
    ("git_revision", "v0.1-15-g0000000", None),
    ("compiler", "Clang 16.0.6", None),
    ("flags", "-O3 -g", None),
    ("build_type", "Release", None),
    ("cpu_model", "AMD EPYC 7763", None),
    ("pus", 8, None),
    ("cores", 4, None),
    ("planned_pus", 16, None),
    ("kernel", "Linux 6.8.0 x86_64", None),
    ("pinning", "off", None),
]


def results(run_id, machine=None, slow=(), drop=()):
    """A results file's records: MACHINE (with machine's fields, None values
    removed) and EXPERIMENTS less drop, each with one claim "a beats b" that
    holds, or fails for the experiments in slow."""
    m = {**MACHINE, **(machine or {}), "run_id": run_id}
    records = [{k: v for k, v in m.items() if v is not None}]
    for name, (counted, peer) in EXPERIMENTS.items():
        if name in drop:
            continue
        records.append(
            {
                "type": "experiment",
                "schema": 1,
                "run_id": run_id,
                "name": name,
                "paper": "paper",
                "figure": "Figure 1",
                "title": name,
                "description": name,
                "x": "threads",
                "log_y": False,
                "claims": [
                    {
                        "text": f"{name}: a beats b",
                        "rule": {"op": "ratio_below", "metric": "time", "num": "a", "den": "b", "at": "max_threads",
                                 "bound": 1.0},
                    }
                ],
                "notes": [],
            }
        )
        for algorithm, level in (("a", 3.0 if name in slow else 1.0), ("b", 2.0)):
            samples = [level * (1 + i / 100) for i in range(8)]
            point = {
                "type": "point",
                "schema": 1,
                "run_id": run_id,
                "experiment": name,
                "algorithm": algorithm,
                "params": {"threads": 2},
                "metric": "time",
                "unit": "ms",
                "better": "lower",
                "median": sorted(samples)[4],
                "min": min(samples),
                "max": max(samples),
                "samples": samples,
                "counters": {"page_faults_per_op": 0.01} if counted else {},
            }
            if peer and algorithm == "b":
                point["peer"] = True
            records.append(point)
    return records


def pair(tmp_path, machine=None, slow=(), before_machine=None, drop=()):
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    write_records(before, results("before", before_machine, drop=drop))
    write_records(after, results("after", machine, slow, drop=drop))
    return compare.compare_files(before, after)


def test_identical_machines_warn_of_nothing(tmp_path):
    c = pair(tmp_path, slow=("po-ring",))
    assert c.machine == [] and c.marks("po-ring") == []
    text = compare.text(c)
    assert "machine records differ" not in text and "machine differs" not in text
    assert len(c.changes) == 1  # the claims themselves are compared as before


@pytest.mark.parametrize("name, value, moved", DIFFERENCES, ids=[d[0] for d in DIFFERENCES])
def test_each_field_that_moves_figures_is_warned_of(tmp_path, name, value, moved):
    c = pair(tmp_path, {name: value})
    assert [d.field for d in c.machine] == [name]
    (d,) = c.machine
    assert d.scoped == (moved is not None)
    assert d.experiments == (moved or list(EXPERIMENTS))
    shown = compare._value(next(f for f in compare.MOVING_FIELDS if f.name == name), {name: value})
    assert d.before == [compare._value(next(f for f in compare.MOVING_FIELDS if f.name == name), MACHINE)]
    assert d.after == [shown]
    lines = compare.text(c).splitlines()
    assert lines[1].startswith("warning: the machine records differ where figures move")
    scope = "every experiment" if moved is None else ", ".join(moved)
    assert lines[2] == f"  {name} (moves {scope}): {d.why}"
    assert lines[3:5] == [f"      before: {d.before[0]}", f"      after:  {shown}"]
    assert lines[5].endswith("verdicts identical (100.0%)")  # the warning comes before the counts


def test_the_text_names_both_values_of_each_pair_and_why():
    d = compare.MachineDifference("po_clock_gate", ["counter: 2.9 ticks/ns", "counter: 1 ticks/ns"],
                                  ["clock at every switch: x", "not recorded"], "why", True, ["po-ring", "lf07-sort"])
    assert compare.difference_text(d) == (
        "po_clock_gate (moves po-ring, lf07-sort): why\n"
        "    before: counter: 2.9 ticks/ns\n    after:  clock at every switch: x\n"
        "    before: counter: 1 ticks/ns\n    after:  not recorded")


def test_a_field_that_moves_no_shared_experiment_is_not_warned_of(tmp_path):
    # no po-* experiment in both: the clock gate moved nothing compared
    assert pair(tmp_path, {"po_clock_gate": "clock at every switch: x"}, drop=("po-ring",)).machine == []
    # no experiment counted: what the workers would have counted moved nothing
    assert pair(tmp_path, {"perf_events": "off (--no-perf-counters)"}, drop=("dg25-prodcons",)).machine == []
    # no polling queue experiment, no peer point
    assert pair(tmp_path, {"queue_wait": "yield"}, drop=("dg25-prodcons",)).machine == []
    assert pair(tmp_path, {"peers": []}, drop=("np99-locks",)).machine == []


def test_the_same_kind_with_other_details_is_no_difference(tmp_path):
    # a counter gates both runs' clock reads at its calibrated rate; both runs unpinned
    assert pair(tmp_path, {"po_clock_gate": "counter: 3.1 ticks/ns"}).machine == []
    c = pair(tmp_path, {"pinning": "refused: b"}, before_machine={"pinning": "refused: a"})
    assert c.machine == []


def test_a_field_one_record_lacks_is_not_recorded(tmp_path):
    c = pair(tmp_path, before_machine={"po_clock_gate": None, "perf_events": None, "queue_wait": None})
    assert [(d.field, d.before) for d in c.machine] == [
        ("po_clock_gate", ["not recorded"]),
        ("perf_events", ["not recorded (none counted)"]),
    ]  # a record without queue_wait waited as "pause" does
    # planned_pus defaults to the record's pus
    assert pair(tmp_path, before_machine={"planned_pus": None}).machine == []


NO_TOPOLOGY = {"cores": None, "cpu_model": "unknown", "pinning": "refused: no topology",
               "pus_source": "sched_getaffinity (no topology: hwloc could not load the topology)"}


def pair_of(tmp_path, after=None, before=None):
    """pair, with the machine fields given set as they are (a None is a null, not dropped)."""
    paths = []
    for run_id, machine in (("before", before), ("after", after)):
        records = results(run_id)
        records[0].update(machine or {})
        paths.append(tmp_path / f"{run_id}.jsonl")
        write_records(paths[-1], records)
    return compare.compare_files(*paths)


def test_cores_or_processor_unknown_on_one_side_is_no_difference(tmp_path):
    """A run without a topology knows neither the cores (null, or the 1 such
    runs recorded before) nor the processor: against a run that knows them
    neither is a difference (the pinning is); the pus, which both record,
    still tell a machine with other CPUs."""
    for unknown in (NO_TOPOLOGY, {**NO_TOPOLOGY, "cores": 1}):
        assert [d.field for d in pair_of(tmp_path, after=unknown).machine] == ["pinning"]
        assert [d.field for d in pair_of(tmp_path, before=unknown).machine] == ["pinning"]
    assert [d.field for d in pair_of(tmp_path, after={**NO_TOPOLOGY, "pus": 8}).machine] == ["pus", "pinning"]
    # both unknown: alike
    assert pair_of(tmp_path, NO_TOPOLOGY, NO_TOPOLOGY).machine == []
    # a topology's 1 core against its 2 is a difference
    (d,) = pair(tmp_path, {"cores": 1, "pus_source": "hwloc"}).machine
    assert (d.field, d.before, d.after) == ("cores", ["2"], ["1"])


def test_unknown_cores_are_shown_as_unknown(tmp_path):
    """Where the cores do differ from what is shown elsewhere, the text says
    unknown, never a count or "None"."""
    spec = next(f for f in compare.MOVING_FIELDS if f.name == "cores")
    assert compare._value(spec, NO_TOPOLOGY) == "unknown (no topology)"
    assert compare._value(spec, {**NO_TOPOLOGY, "cores": 1}) == "unknown (no topology)"
    assert compare._value(spec, MACHINE) == "2"


def test_each_experiment_is_compared_with_its_own_run(tmp_path):
    # the after file draws np99-counter from a later run on another kernel:
    # the kernel moved that experiment alone, and its changed claim is marked
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    write_records(before, results("before"))
    later = [r for r in results("later", {"kernel": "Linux 7"}, slow=("np99-counter",))
             if r["type"] == "machine" or r.get("experiment", r.get("name")) == "np99-counter"]
    write_records(after, results("after") + later)
    c = compare.compare_files(before, after)
    assert [(d.field, d.scoped, d.experiments, d.after) for d in c.machine] == [
        ("kernel", True, ["np99-counter"], ["Linux 7"])]
    assert c.marks("np99-counter") == ["kernel"] and c.marks("po-ring") == []
    assert "  kernel (moves np99-counter): " in compare.text(c)


def test_changed_claims_of_the_experiments_moved_are_marked(tmp_path):
    c = pair(tmp_path, {"po_clock_gate": "clock at every switch: x", "git_revision": "v2"},
             slow=("po-ring", "np99-counter"))
    assert [d.field for d in c.machine] == ["po_clock_gate", "git_revision"]
    assert c.marks("po-ring") == ["po_clock_gate"] and c.marks("np99-counter") == []
    text = compare.text(c)
    assert "  po-ring: po-ring: a beats b  [machine differs: po_clock_gate]\n" in text
    assert "  np99-counter: np99-counter: a beats b\n" in text


def test_the_command_line_warns_before_the_counts(tmp_path):
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    write_records(before, results("before"))
    write_records(after, results("after", {"perf_events": "off (--no-perf-counters)"}, slow=("dg25-prodcons",)))
    done = subprocess.run([sys.executable, str(BUILD_PY), "compare", str(before), str(after)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.index("  perf_events (moves dg25-prodcons): ") < out.index("      before: read: page_faults") < out.index(
        "      after:  off (--no-perf-counters)") < out.index("verdicts identical")
    assert "dg25-prodcons: a beats b  [machine differs: perf_events]" in out


def test_the_report_shows_the_differences_and_marks(tmp_path):
    before = tmp_path / "before.jsonl"
    write_records(before, results("before"))
    directory = tmp_path / "out"
    directory.mkdir()
    machine = {"po_clock_gate": "clock at every switch: <no counter>", "kernel": "Linux 7"}
    write_records(directory / "results.jsonl", results("after", machine, slow=("po-ring",)))
    assert cli.main([str(directory), "--compare", str(before)]) == 0
    page = (directory / "report.html").read_text(encoding="utf-8")
    section = page[page.index('id="stability"'):page.index("</section>", page.index('id="stability"'))]
    assert "The machine records differ where figures move" in section
    assert section.index('<ul class="machine-differences">') < section.index('<table class="changes">')
    assert "now: <code>clock at every switch: &lt;no counter&gt;</code>" in section
    assert "<code>kernel</code>" in section and "moves every experiment" in section
    assert '<code>po-ring</code> <span class="machine-differs">machine differs: po_clock_gate</span>' in section
    # the same run against itself: no list, no mark
    same = copy.deepcopy(results("before"))
    write_records(directory / "results.jsonl", same)
    assert cli.main([str(directory), "--compare", str(before)]) == 0
    page = (directory / "report.html").read_text(encoding="utf-8")
    assert "machine-differences" not in page and "machine differs" not in page


# ---------------------------------------------------------------- the gate as it stood at the end of each point

DRIFT = "clock at every switch: the counter's rate drifted from 2.9 to 1.45 ticks/ns"


def launched(run_id, gates, machine=None):
    """results(run_id) measured in two launches: every experiment and point
    record once per launch; po-ring's points of launch k carry gates[k - 1]
    (None: no po_clock_gate field, as before the points recorded it)."""
    records = results(run_id, {"launches": 2, **(machine or {})})
    out = [records[0]]
    for launch in (1, 2):
        for r in records[1:]:
            r = dict(r, launch=launch)
            if r["type"] == "point" and r["experiment"] == "po-ring" and gates[launch - 1] is not None:
                r["po_clock_gate"] = gates[launch - 1]
            out.append(r)
    return out


def test_a_gate_changed_in_a_launch_is_where_the_run_says(tmp_path):
    """The machine record gives the gate at the run's start; po-ring's points of
    launch 2 ended with the clock after a drift: load says where, compare
    names po_clock_gate for po-ring against a run whose gate held (before the
    points carried the gate, the two compared alike)."""
    path = tmp_path / "after.jsonl"
    write_records(path, launched("after", ["counter: 2.9 ticks/ns", DRIFT]))
    (ring,) = [r for r in load.load(path).experiments if r.experiment.name == "po-ring"]
    (change,) = load.gate_changes(ring)
    assert (change.line, change.launches, change.points, change.of) == (DRIFT, [2], 2, 4)
    assert load.gate_text(ring.machine["po_clock_gate"], [change]) == (
        f"counter: 2.9 ticks/ns at the start; then {DRIFT} at the end of 2 of 4 points of po-ring in launch 2")
    assert load.gate_kinds(load.gate_text("counter: 2.9 ticks/ns", [change])) == "counter then clock at every switch"
    before = tmp_path / "before.jsonl"
    write_records(before, launched("before", ["counter: 2.9 ticks/ns", "counter: 2.9 ticks/ns"]))
    c = compare.compare_files(before, path)
    (d,) = c.machine
    assert (d.field, d.experiments, d.scoped) == ("po_clock_gate", ["po-ring"], True)
    assert d.before == ["counter: 2.9 ticks/ns"]
    assert d.after == [f"counter: 2.9 ticks/ns at the start; then {DRIFT} at the end of 2 of 4 points in launch 2"]
    # a gate of the start's kind at a point's end is no change (a launch's own calibration)
    write_records(path, launched("after", ["counter: 2.9 ticks/ns", "counter: 3.1 ticks/ns"]))
    assert compare.compare_files(before, path).machine == []
    # points without the field (older results): the machine record alone, as before
    write_records(path, launched("after", [None, None]))
    assert compare.compare_files(before, path).machine == []


def test_the_report_shows_where_the_gate_changed(tmp_path):
    """The machine table's row and the experiment's section say where the
    gate changed; an experiment whose gate held says nothing more."""
    directory = tmp_path / "out"
    directory.mkdir()
    write_records(directory / "results.jsonl", launched("after", ["counter: 2.9 ticks/ns", DRIFT]))
    assert cli.main([str(directory)]) == 0
    page = (directory / "report.html").read_text(encoding="utf-8")
    drift = DRIFT.replace("'", "&#x27;")
    assert (f"<th>Postoffice deadline clock</th><td>counter: 2.9 ticks/ns at the start; then {drift} at the end "
            "of 2 of 4 points of po-ring in launch 2</td>") in page
    ring = page[page.index('<section class="experiment" id="exp-po-ring"'):]
    ring = ring[: ring.index("</section>")]
    assert (f'<p class="gate">Postoffice deadline clock: counter: 2.9 ticks/ns at the start; then {drift} at '
            "the end of 2 of 4 points in launch 2.") in ring
    assert page.count('<p class="gate">') == 1
