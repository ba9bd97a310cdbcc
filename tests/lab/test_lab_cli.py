# SPDX-License-Identifier: BSD-2-Clause
"""syncq-lab end to end: command-line errors, and the results a run writes.

Run by CTest (lab_cli_test) with SYNCQ_LAB pointing at the built binary.
"""
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from labrun import LAB, lab, records

FLOORS = {"uncontended-cas", "uncontended-faa", "cacheline-pingpong",
          "futex-wake-rtt", "context-switch", "sched-yield",
          "cross-core-copy", "cross-process-rtt"}
# The floors measured as a bandwidth rather than a time (GB/s, higher is better).
BANDWIDTH_FLOORS = {"cross-core-copy"}
COUNTERS = {"faa", "cas", "cas-backoff", "mutex"}
MACHINE_FIELDS = {"cpu_model", "cores", "pus", "kernel", "compiler", "flags", "build_type",
                  "git_revision", "date", "size", "reps", "pinning", "perf_counters", "command"}
POINT_FIELDS = {"experiment", "algorithm", "params", "metric", "unit", "better",
                "median", "min", "max", "samples", "counters"}


# ---------------------------------------------------------------- usage errors

@pytest.mark.parametrize("args", [
    [], ["frobnicate"], ["run"], ["list", "extra"], ["algos", "a", "b"],
    ["run", "phys", "--bogus"], ["run", "phys", "--reps"], ["run", "phys", "--reps", "0"],
    ["run", "phys", "--reps", "101"], ["run", "phys", "--reps", "x"],
    ["run", "phys", "--threads", "0"], ["run", "phys", "--threads", "a"],
    ["run", "phys", "--threads", "1,,2"], ["run", "phys", "--threads", "1,"],
    ["run", "phys", "--size", "huge"], ["run", "phys", "--out", ""], ["report"],
    ["run", "phys", "--where"], ["run", "phys", "--where", "threads"],
    ["run", "phys", "--where", "=2"], ["run", "phys", "--where", "threads="],
    ["run", "phys", "--launches", "0"], ["run", "phys", "--launches", "21"],
    ["run", "phys", "--launches"], ["run", "phys", "--launch", "1"],
    ["run", "phys", "--launch", "3", "--launches", "2", "--run-id", "x"],
    ["compare"], ["compare", "a.jsonl"], ["compare", "a", "b", "c"],
    ["run", "phys", "--max-reps", "0"], ["run", "phys", "--max-reps", "101"],
    ["run", "phys", "--max-reps"], ["run", "phys", "--reps", "5", "--max-reps", "3"],
    ["run", "phys", "--claim-budget"], ["run", "phys", "--claim-budget", "-1"],
    ["run", "phys", "--claim-budget", "60001"], ["run", "phys", "--claim-budget", "x"],
    ["run", "phys", "--experiment-timeout"], ["run", "phys", "--experiment-timeout", "-1"],
    ["run", "phys", "--experiment-timeout", "x"], ["run", "phys", "--experiment-timeout", "1.5"],
    ["run", "phys", "--experiment-timeout", ""], ["run", "phys", "--experiment-timeout", "86401"],
    ["run", "phys", "--no-fork", "--experiment-timeout", "5"],
])
def test_bad_usage_exits_2_with_usage(args):
    r = lab(*args, check=2)
    assert "usage: syncq-lab" in r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize("value", ["-1", "x", "1.5", "10s"])
def test_a_bad_experiment_timeout_says_what_it_wants(value):
    err = lab("run", "phys", "--experiment-timeout", value, check=2).stderr
    assert err.startswith("syncq-lab: --experiment-timeout wants seconds 0..86400, 0 for none "
                          f"(got '{value}')"), err


def test_no_fork_has_no_watchdog(tmp_path):
    # the watchdog stops an experiment's process: with --no-fork there is
    # none to stop, so a limit is refused and "none" (0) is accepted
    err = lab("run", "phys", "--no-fork", "--experiment-timeout", "5", check=2).stderr
    assert "--experiment-timeout needs a process per experiment: not with --no-fork" in err, err
    lab("run", "phys", "--no-fork", "--experiment-timeout", "0", "--plan", check=0)


def test_unknown_experiment_names_the_valid_ones():
    r = lab("run", "no-such-exp", check=2)
    assert "unknown experiment 'no-such-exp'" in r.stderr
    assert "phys" in r.stderr and "np99-counter" in r.stderr


def test_unknown_algorithm_names_the_valid_ones(tmp_path):
    r = lab("run", "np99-counter", "--algos", "faa,nope", "--out", str(tmp_path), check=2)
    assert "unknown algorithm 'nope'" in r.stderr
    for name in COUNTERS:
        assert name in r.stderr
    assert not (tmp_path / "results.jsonl").exists()


def test_the_rows_every_run_measures_can_be_chosen(tmp_path):
    """dg25-latency's floor and inline rows are measured beside the
    registry's queues; --algos accepts their names and keeps only them."""
    lab("run", "dg25-latency", "--size", "smoke", "--launches", "1", "--where", "mode=pair",
        "--algos", "nblfq,nblfq:inline,nblfq:reference,two-cas", "--quiet", "--out", str(tmp_path), check=0)
    algos = {r["algorithm"] for r in records(tmp_path) if r["type"] == "point"}
    assert algos == {"nblfq", "nblfq:inline", "nblfq:reference", "two-cas"}, algos
    # locks-cost's floors and inline rows, likewise
    lab("run", "locks-cost", "--size", "smoke", "--launches", "1", "--where", "phase=uncontended",
        "--algos", "mcs,mcs:inline,two-atomics,two-atomics:inline", "--quiet", "--out", str(tmp_path / "locks"),
        check=0)
    algos = {r["algorithm"] for r in records(tmp_path / "locks") if r["type"] == "point"}
    assert algos == {"mcs", "mcs:inline", "two-atomics", "two-atomics:inline"}, algos


def test_every_name_a_claim_reads_can_be_chosen():
    """Each algorithm a claim's rule names (num, den, algo) is a name
    --algos accepts for the claim's experiment: a rerun of one claim's
    variants can select them ("tas@block" as the claims name it)."""
    names = {}

    def walk(rule, exp):
        if isinstance(rule, dict):
            for key, value in rule.items():
                if key in ("num", "den", "algo") and isinstance(value, str):
                    names.setdefault(exp, set()).add(value)
                else:
                    walk(value, exp)
        elif isinstance(rule, list):
            for item in rule:
                walk(item, exp)

    for line in lab("claims", check=0).stdout.splitlines():
        claim = json.loads(line)
        walk(claim["rule"], claim["experiment"])
    assert len(names) > 10 and "tas@block" in names["locks-cost"], names.keys()
    registered = {line.split()[1] for line in lab("algos", check=0).stdout.splitlines()[1:] if line.split()}

    def accepted(exp, algos):
        return lab("run", exp, "--size", "smoke", "--plan", "--algos", ",".join(sorted(algos))).returncode == 0

    def library_absent(exp, name):
        # "ck:spinlock_cas" where this build has no Concurrency Kit (the
        # sanitizer builds link no peer library): its prefix is no
        # algorithm, no row, and no registered name starts with it
        prefix = name.split(":")[0]
        return (":" in name and name not in registered and prefix not in registered
                and not any(r.startswith(prefix + ":") for r in registered) and not accepted(exp, [prefix]))

    refused = []
    for exp, algos in sorted(names.items()):
        algos = {a for a in algos if not library_absent(exp, a)}
        if algos and not accepted(exp, algos):
            r = lab("run", exp, "--size", "smoke", "--plan", "--algos", ",".join(sorted(algos)))
            refused.append((exp, r.stderr.splitlines()[0]))
    assert not refused, refused


def test_unknown_family():
    r = lab("algos", "widgets", check=2)
    assert "unknown family 'widgets'" in r.stderr and "counter" in r.stderr


def test_unwritable_output_fails_cleanly():
    r = lab("run", "phys", "--size", "smoke", "--out", "/proc/syncq-cannot-write", check=1)
    assert "cannot create" in r.stderr


# ---------------------------------------------------------------- listings

def test_list_shows_experiments_with_paper_and_figure():
    out = lab("list", check=0).stdout
    assert "phys" in out
    assert "np99-counter" in out and "Figure 3" in out and "003" in out


def test_algos_lists_the_registry():
    out = lab("algos", check=0).stdout
    for name in COUNTERS:
        assert name in out
    assert "wait-free" in out and "lock-free" in out and "blocking" in out
    only = lab("algos", "counter", check=0).stdout
    assert "faa" in only
    locks = lab("algos", "lock", check=0).stdout
    families = {line.split()[0] for line in locks.splitlines()[1:]}
    assert "ttas" in locks and families == {"lock"}  # one family only


def test_help():
    out = lab("--help", check=0).stdout
    assert "usage: syncq-lab" in out and "--claim-budget" in out
    assert lab("help", check=0).stdout == out


def test_run_help_shows_the_run_options():
    out = lab("run", "--help", check=0).stdout
    assert "syncq-lab run" in out and "--threads LIST" in out
    assert "--experiment-timeout S" in out and "there is no watchdog" in out
    assert lab("run", "phys", "-h", check=0).stdout == out


def test_usage_errors_are_short():
    # the error, the synopsis of the command at hand, a pointer to help: not the option list
    err = lab("run", "phys", "--bogus", check=2).stderr.splitlines()
    assert err[0] == "syncq-lab: unknown option '--bogus'"
    assert len(err) <= 3 and "--claim-budget" not in "\n".join(err)
    assert len(lab("frobnicate", check=2).stderr.splitlines()) <= 10


def test_version():
    out = lab("--version", check=0).stdout
    assert out.startswith("syncq-lab ") and "build " in out
    assert lab("version", check=0).stdout == out


def test_algos_columns_line_up():
    lines = lab("algos", check=0).stdout.splitlines()
    head = lines[0]
    for column in ("NAME", "PROGRESS", "PROPERTIES", "PAPER", "TITLE"):
        at = head.index(column)
        for line in lines[1:]:
            assert line[at - 2:at] == "  ", (column, line)  # no cell runs into the next column


def test_report_without_its_python_packages_says_what_to_install(tmp_path):
    # a Python that cannot see any site or dist packages (-S): numpy is missing
    py = tmp_path / "bare-python"
    py.write_text('#!/bin/sh\nexec python3 -S "$@"\n')
    py.chmod(0o755)
    r = lab("report", str(tmp_path), timeout=60, env={"SYNCQ_PYTHON": str(py)})
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "numpy" in lines[0] and "requirements.txt" in lines[0], r.stderr
    assert "Traceback" not in r.stderr


# ---------------------------------------------------------------- a real run

@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke")
    r = lab("run", "all", "--size", "smoke", "--threads", "1,2", "--reps", "2", "--out", str(out), check=0)
    return out, records(out), r.stderr


def test_every_record_is_typed_and_stamped(smoke_run):
    _, recs, _ = smoke_run
    run_ids = {r["run_id"] for r in recs}
    assert len(run_ids) == 1
    for r in recs:
        assert r["schema"] == 1
        assert r["type"] in {"machine", "experiment", "point", "note"}


def test_machine_record_first_and_complete(smoke_run):
    _, recs, _ = smoke_run
    m = recs[0]
    assert m["type"] == "machine"
    assert MACHINE_FIELDS <= set(m)
    assert m["pus"] >= 1
    # hwloc's count; unknown (null) where it found no topology
    assert m["cores"] >= 1 if m["pus_source"] == "hwloc" else m["cores"] is None, m
    assert m["size"] == "smoke" and m["reps"] == 2
    assert m["pinning"] == "hwloc" or m["pinning"] in ("off",) or m["pinning"].startswith("refused: ")
    assert m["perf_counters"] == "available" or m["perf_counters"].startswith("unavailable: ")
    assert "run all" in m["command"]


def test_points_are_well_formed(smoke_run):
    _, recs, _ = smoke_run
    points = [r for r in recs if r["type"] == "point"]
    assert points
    for p in points:
        assert POINT_FIELDS <= set(p), p
        assert len(p["samples"]) == 2
        assert p["min"] <= p["median"] <= p["max"]
        assert min(p["samples"]) == p["min"] and max(p["samples"]) == p["max"]
        assert p["better"] in ("lower", "higher")
        assert all(v >= 0 for v in p["samples"])


def test_experiment_record_precedes_its_points(smoke_run):
    _, recs, _ = smoke_run
    seen = set()
    for r in recs:
        if r["type"] == "experiment":
            seen.add(r["name"])
            assert r["claims"] is not None and isinstance(r["notes"], list)
            for c in r["claims"]:
                assert c["text"] and isinstance(c["rule"], dict) and "op" in c["rule"]
        elif r["type"] == "point":
            assert r["experiment"] in seen


def test_phys_measures_every_floor_or_says_why(smoke_run):
    _, recs, _ = smoke_run
    measured = {r["algorithm"] for r in recs if r["type"] == "point" and r["experiment"] == "phys"}
    notes = " ".join(r["text"] for r in recs if r["type"] == "note" and r["experiment"] == "phys")
    for floor in FLOORS:
        assert floor in measured or floor in notes, floor
    if recs[0]["pus"] >= 2 and recs[0]["pinning"] == "hwloc":
        assert measured == FLOORS
    for r in recs:
        if r["type"] == "point" and r["experiment"] == "phys" and r["algorithm"] in BANDWIDTH_FLOORS:
            assert r["metric"] == "bandwidth" and r["unit"] == "GB/s" and r["median"] > 0
        elif r["type"] == "point" and r["experiment"] == "phys":
            assert r["metric"] == "time_per_op" and r["unit"] == "ns" and r["median"] > 0


def test_np99_counter_sweeps_every_counter(smoke_run):
    _, recs, _ = smoke_run
    pts = [r for r in recs if r["type"] == "point" and r["experiment"] == "np99-counter"]
    grid = {(p["algorithm"], p["params"]["threads"], p["params"]["work_ns"]) for p in pts}
    want = {(a, t, w) for a in COUNTERS for t in (1, 2) for w in (0, 5000)}
    assert want <= grid
    exp = next(r for r in recs if r["type"] == "experiment" and r["name"] == "np99-counter")
    assert exp["x"] == "threads" and exp["figure"] == "Figure 3"
    assert exp["claims"][0]["rule"]["op"] == "ratio_below"
    # the CAS-loop counter reports its CAS counts per increment (>= 1)
    cas = [p for p in pts if p["algorithm"] == "cas" and p["metric"] == "time"]
    assert all(p["counters"].get("cas_per_op", 0) >= 1 for p in cas)
    # context switches come from the OS, so every multi-thread point has them
    assert all("ctx_switches_per_op" in p["counters"] for p in pts
               if p["metric"] == "time" and p["params"]["threads"] == 2)


def test_ratio_points_normalize_to_the_reference(smoke_run):
    _, recs, _ = smoke_run
    pts = [r for r in recs if r["type"] == "point" and r["experiment"] == "np99-counter"]
    ratios = [p for p in pts if p["metric"] == "time_ratio"]
    assert {p["algorithm"] for p in ratios} == {p["algorithm"] for p in pts if p["metric"] == "time"}
    for p in ratios:
        assert p["unit"] == "x" and len(p["samples"]) == 2
        if p["algorithm"] == "faa":
            assert p["samples"] == [1.0, 1.0]
    # each ratio sample is the quotient of the samples measured side by side
    times = {(p["algorithm"], p["params"]["threads"], p["params"]["work_ns"]): p["samples"]
             for p in pts if p["metric"] == "time"}
    for p in ratios:
        key = (p["algorithm"], p["params"]["threads"], p["params"]["work_ns"])
        ref = times[("faa",) + key[1:]]
        want = [a / b for a, b in zip(times[key], ref)]
        assert p["samples"] == pytest.approx(want)


def test_progress_lines_on_stderr(smoke_run):
    _, _, err = smoke_run
    assert "np99-counter" in err and "left" in err and "%]" in err


def test_algos_filter(tmp_path):
    r = lab("run", "all", "--size", "smoke", "--threads", "2", "--algos", "faa,mutex",
            "--out", str(tmp_path), check=0)
    assert "skipping phys" in r.stderr
    pts = [x for x in records(tmp_path) if x["type"] == "point"]
    assert {p["algorithm"] for p in pts} == {"faa", "mutex"}
    assert {p["params"]["threads"] for p in pts} == {2}


def test_algos_selects_a_locks_discipline_variants(tmp_path):
    # locks-cost's "<lock>@<discipline>" variants go with their lock's name
    lab("run", "locks-cost", "--size", "smoke", "--where", "phase=oversubscribed",
        "--algos", "mcs,pthread-mutex", "--quiet", "--out", str(tmp_path), check=0)
    algos = {p["algorithm"] for p in records(tmp_path) if p["type"] == "point"}
    assert {"mcs@block", "mcs@competitive", "pthread-mutex"} <= algos
    assert all(a.split("@")[0] in ("mcs", "pthread-mutex") for a in algos)


def test_where_keeps_only_the_matching_points(tmp_path):
    # numbers compare numerically ("2.0" is 2), strings exactly, every --where must hold
    lab("run", "np99-counter", "--size", "smoke", "--threads", "1,2", "--where", "threads=2.0",
        "--quiet", "--out", str(tmp_path / "num"), check=0)
    pts = [x for x in records(tmp_path / "num") if x["type"] == "point"]
    assert pts and {p["params"]["threads"] for p in pts} == {2}
    lab("run", "lf07-sort", "--size", "smoke", "--where", "sorters=4", "--where", "send=link",
        "--where", "work=sort", "--quiet", "--out", str(tmp_path / "str"), check=0)
    pts = [x for x in records(tmp_path / "str") if x["type"] == "point"]
    assert pts and {(p["params"]["sorters"], p["params"]["send"], p["params"]["work"]) for p in pts} \
        == {(4, "link", "sort")}


def test_where_that_matches_nothing_fails(tmp_path):
    r = lab("run", "np99-counter", "--size", "smoke", "--where", "threads=3",
            "--threads", "1,2", "--out", str(tmp_path), check=1)
    assert "--where matched no point" in r.stderr
    r = lab("run", "np99-counter", "--size", "smoke", "--where", "nosuchparam=1",
            "--out", str(tmp_path), check=1)
    assert "--where matched no point" in r.stderr


def test_a_failed_point_is_kept_and_the_run_goes_on(tmp_path):
    # one variant's samples fail (SYNCQ_LAB_FAIL): its failure is on stderr
    # and in a note, the other variants and the next experiment are
    # measured, the report is written, and the exit status says it failed
    r = lab("run", "np99-counter,phys", "--size", "smoke", "--threads", "2", "--out", str(tmp_path),
            env={"SYNCQ_LAB_FAIL": "np99-counter:faa"})
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "np99-counter: faa" in r.stderr and "FAILED: injected failure" in r.stderr
    assert "point(s) failed" in r.stderr
    recs = records(tmp_path)
    pts = [x for x in recs if x["type"] == "point"]
    counters = {p["algorithm"] for p in pts if p["experiment"] == "np99-counter"}
    assert "faa" not in counters and "mutex" in counters, counters
    assert any(p["experiment"] == "phys" for p in pts)
    notes = [x["text"] for x in recs if x["type"] == "note"]
    assert any(t.startswith("FAILED: faa") and "injected failure" in t for t in notes), notes
    lab("report", str(tmp_path), check=0)
    assert "FAILED: faa" in (tmp_path / "report.html").read_text()


# ---------------------------------------------------------------- one process per experiment

SUITE = "phys,np99-counter,queue-1p1c"  # a crash injected into the middle one


def _keys(recs, experiment):
    """The points of one experiment, as (algorithm, metric, params)."""
    return {(p["algorithm"], p["metric"], json.dumps(p["params"], sort_keys=True))
            for p in recs if p["type"] == "point" and p["experiment"] == experiment}


def _progress_lines(stderr):
    """The progress lines ("[12/40  30%] ... - about 3s left"), in order."""
    return [line for line in stderr.splitlines() if line.startswith("[") and "/" in line and "%]" in line]


def _progress_counts(stderr):
    """The measured-point counts of the progress lines, in order."""
    return [int(line[1:line.index("/")]) for line in _progress_lines(stderr)]


@pytest.fixture(scope="module")
def clean_suite(tmp_path_factory):
    out = tmp_path_factory.mktemp("clean")
    r = lab("run", SUITE, "--size", "smoke", "--threads", "1,2", "--out", str(out), check=0)
    return records(out), r.stderr


def _assert_suite_went_on(tmp_path, clean, r, failed):
    """np99-counter failed as the text `failed` says (stderr, its FAILED
    note, the report), the experiments around it are measured as in the
    clean run, and the progress count runs on without a gap; the counts."""
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert f"np99-counter failed: {failed}" in r.stderr, r.stderr
    assert "1 experiment(s) stopped early" in r.stderr, r.stderr
    recs = records(tmp_path)
    notes = [x for x in recs if x["type"] == "note"]
    assert any(n["experiment"] == "np99-counter" and n["text"].startswith(f"FAILED: np99-counter {failed}")
               for n in notes), notes
    for e in ("phys", "queue-1p1c"):
        assert _keys(recs, e) and _keys(recs, e) == _keys(clean, e), e
    assert not any(p["type"] == "point" and p["experiment"] == "np99-counter" and p["algorithm"] == "mutex"
                   for p in recs)
    assert [x["name"] for x in recs if x["type"] == "experiment"] == SUITE.split(",")
    counts = _progress_counts(r.stderr)
    assert counts == list(range(1, len(counts) + 1)), counts
    lab("report", str(tmp_path), check=0)
    assert f"FAILED: np99-counter {failed}" in (tmp_path / "report.html").read_text()
    return counts


@pytest.mark.parametrize("hook,ended", [
    ("SYNCQ_LAB_CRASH", "ended by signal 11 ("),
    # 3, or a sanitizer's own status where its exit-time check found something
    ("SYNCQ_LAB_EXIT", "exited with status "),
])
def test_an_experiment_that_dies_is_noted_and_the_suite_goes_on(tmp_path, clean_suite, hook, ended):
    # np99-counter's process dies at its mutex variant's first sample (by a
    # signal, or by exit() as a library that gives up would): the runner
    # notes it as FAILED, the experiments before and after it are measured
    # in full, the progress count goes on from the points measured before
    # the death, the report is written, and the exit status says it failed
    clean, clean_err = clean_suite
    r = lab("run", SUITE, "--size", "smoke", "--threads", "1,2", "--out", str(tmp_path),
            env={hook: "np99-counter:mutex"})
    counts = _assert_suite_went_on(tmp_path, clean, r, ended)
    assert len(counts) < len(_progress_counts(clean_err))
    # the points the dead experiment never measured leave the total: the
    # last line reads 100% and "about 0s left"
    last = _progress_lines(r.stderr)[-1]
    assert last.startswith(f"[{counts[-1]}/{counts[-1]} 100%]") and last.endswith("about 0s left"), last


def _processes_marked(mark):
    """The live processes whose environment holds mark (a zombie's is empty)."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if mark.encode() in (d / "environ").read_bytes():
                    pids.append(int(d.name))
            except OSError:
                pass  # gone, or not ours
    return pids


def _none_left(mark, wait_s=10):
    """True once no process carries mark (SIGKILLed ones are reaped by init in a moment)."""
    deadline = time.monotonic() + wait_s
    while _processes_marked(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _processes_marked(mark)


def _kill_marked(mark):
    """Stop what a failed test left waiting forever."""
    for pid in _processes_marked(mark):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def test_a_hung_experiment_is_stopped_and_the_suite_goes_on(tmp_path, clean_suite):
    # np99-counter's mutex sample never returns and the process it forks
    # waits forever too (SYNCQ_LAB_HANG): the watchdog stops the
    # experiment's process group at --experiment-timeout, notes it as
    # FAILED, and the experiments before and after it are measured in full.
    # Without the watchdog the run never ends (the lab() call times out).
    # The limit leaves each experiment 10x what it took in the clean run,
    # so a slow build (a sanitizer's) is not stopped where it should not be.
    clean, clean_err = clean_suite
    took = [float(m) for m in re.findall(r"done in ([0-9.]+) s", clean_err)]
    limit = max(10, math.ceil(10 * max(took)))
    mark = uuid.uuid4().hex
    t0 = time.monotonic()
    try:
        r = lab("run", SUITE, "--size", "smoke", "--threads", "1,2", "--experiment-timeout", str(limit),
                "--out", str(tmp_path), env={"SYNCQ_LAB_HANG": "np99-counter:mutex", "SYNCQ_LAB_TEST_MARK": mark},
                timeout=limit + 120)
        assert _none_left(mark), "a process of the stopped experiment outlived it"
    finally:
        _kill_marked(mark)
    assert time.monotonic() - t0 >= limit
    stopped = f"did not finish within {limit}s: stopped"
    counts = _assert_suite_went_on(tmp_path, clean, r, stopped)
    assert _progress_lines(r.stderr)[-1].startswith(f"[{counts[-1]}/{counts[-1]} 100%]")
    # the note is that text exactly
    assert any(n["text"] == f"FAILED: np99-counter {stopped}" for n in records(tmp_path) if n["type"] == "note")


def test_a_stopped_lab_takes_the_experiments_processes_with_it(tmp_path):
    # the experiment's process leads a process group of its own (for the
    # watchdog), which a terminal's ^C or timeout(1)'s kill of the lab's
    # group does not reach: a SIGTERM to the lab stops that group too, and
    # the lab ends by the signal as before
    mark = uuid.uuid4().hex
    err = tmp_path / "stderr"
    with err.open("w") as f:
        p = subprocess.Popen([LAB, "run", "np99-counter", "--size", "smoke", "--threads", "1",
                              "--out", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=f,
                             env={**os.environ, "SYNCQ_LAB_HANG": "np99-counter:mutex",
                                  "SYNCQ_LAB_TEST_MARK": mark})
    try:
        # the lab, its experiment's process and the process the hung sample forked
        deadline = time.monotonic() + 120
        while len(_processes_marked(mark)) < 3 and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_processes_marked(mark)) == 3, err.read_text()
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=60) == -signal.SIGTERM, err.read_text()
        assert _none_left(mark), "a process of the experiment outlived the lab"
    finally:
        p.kill()
        p.wait()
        _kill_marked(mark)


def _state(pid):
    """The state letter of a process ('T': stopped), None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2]  # after "pid (comm) ", whatever comm holds


def _within(wait_s, ready):
    """True once ready() is, within wait_s."""
    deadline = time.monotonic() + wait_s
    while not ready() and time.monotonic() < deadline:
        time.sleep(0.05)
    return ready()


def test_a_paused_lab_pauses_its_experiment_and_the_watchdog(tmp_path, clean_suite):
    # ^Z (SIGTSTP) reaches the lab's process group, not the group its
    # experiment's process leads: the lab stops that group, then itself;
    # continued (SIGCONT, as fg and bg send), it continues the group. The
    # time stopped does not count towards --experiment-timeout: a pause
    # longer than the limit ends in a complete run. The experiment's first
    # mutex sample starts 1 s late (SYNCQ_LAB_SLOW), so it is still running
    # when the stop comes, and still has that second to run once continued.
    clean, clean_err = clean_suite
    took = [float(m) for m in re.findall(r"done in ([0-9.]+) s", clean_err)]
    limit = max(5, math.ceil(1 + 5 * max(took)))
    mark = uuid.uuid4().hex
    err = tmp_path / "stderr"
    with err.open("w") as f:
        # a process group of its own, as a shell gives a job: in an orphaned
        # group (one whose parents are all outside the session, as under a
        # session leader that CI may run the tests in) the kernel drops a
        # SIGTSTP that would stop the process
        p = subprocess.Popen([LAB, "run", "np99-counter", "--size", "smoke", "--threads", "1",
                              "--experiment-timeout", str(limit), "--out", str(tmp_path)],
                             stdout=subprocess.DEVNULL, stderr=f, preexec_fn=os.setpgrp,
                             env={**os.environ, "SYNCQ_LAB_SLOW": "np99-counter:mutex",
                                  "SYNCQ_LAB_TEST_MARK": mark})
    try:
        assert _within(120, lambda: [q for q in _processes_marked(mark) if q != p.pid] or p.poll() is not None)
        experiment = [q for q in _processes_marked(mark) if q != p.pid]
        assert experiment, err.read_text()
        p.send_signal(signal.SIGTSTP)
        stopped = lambda: _state(p.pid) == "T" and all(_state(q) == "T" for q in experiment)
        assert _within(10, stopped), (_state(p.pid), [_state(q) for q in experiment], err.read_text())
        time.sleep(limit + 1)
        assert stopped(), (_state(p.pid), [_state(q) for q in experiment])
        p.send_signal(signal.SIGCONT)
        assert p.wait(timeout=limit + 120) == 0, err.read_text()
    finally:
        p.kill()
        p.wait()
        _kill_marked(mark)
    assert "did not finish" not in err.read_text(), err.read_text()
    recs = records(tmp_path)
    assert not any(n["type"] == "note" and n["text"].startswith("FAILED") for n in recs), recs
    assert any(x["type"] == "point" and x["experiment"] == "np99-counter" and x["algorithm"] == "mutex" for x in recs)


def test_an_experiment_writes_to_a_terminal_set_to_stop_background_writes(tmp_path):
    # `stty tostop`: a process outside the terminal's foreground group that
    # writes to the terminal gets SIGTTOU, which stops it. The experiment's
    # process leads a group of its own (for the watchdog) and writes its
    # progress lines to the terminal: they must go through, not stop it
    # until the watchdog gives the experiment up. pty.fork: the lab leads
    # a session whose controlling terminal is the pty, in its foreground.
    import pty
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # the child: straight into the lab
        try:
            attrs = termios.tcgetattr(0)
            attrs[3] |= termios.TOSTOP
            termios.tcsetattr(0, termios.TCSANOW, attrs)
            os.execv(LAB, [LAB, "run", "np99-counter", "--size", "smoke", "--threads", "1",
                           "--experiment-timeout", "30", "--out", str(tmp_path)])
        finally:
            os._exit(127)
    out = b""
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not chunk:
                break
            out += chunk
    finally:
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    text = out.decode(errors="replace")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (status, text)
    assert "did not finish" not in text, text
    assert re.search(r"np99-counter: \S+ threads=1", text), text  # a progress line of the experiment's
    assert any(x["type"] == "point" and x["experiment"] == "np99-counter" for x in records(tmp_path))


def test_a_pause_between_the_fork_and_the_handlers_pauses_the_experiment_too(tmp_path):
    # A ^Z that reaches the lab after it started an experiment's process
    # but before it installed its handlers for it waits, blocked, for
    # them: the lab then stops the experiment's group and itself, as at
    # any other time, instead of stopping alone by the default action and
    # leaving the experiment measuring. SYNCQ_LAB_FORK_WAIT holds that
    # window open for 2 s (and the experiment's process for 4 s).
    mark = uuid.uuid4().hex
    err = tmp_path / "stderr"
    with err.open("w") as f:
        p = subprocess.Popen([LAB, "run", "np99-counter", "--size", "smoke", "--threads", "1",
                              "--out", str(tmp_path)],
                             stdout=subprocess.DEVNULL, stderr=f, preexec_fn=os.setpgrp,
                             env={**os.environ, "SYNCQ_LAB_FORK_WAIT": "np99-counter",
                                  "SYNCQ_LAB_TEST_MARK": mark})
    try:
        assert _within(60, lambda: [q for q in _processes_marked(mark) if q != p.pid] or p.poll() is not None)
        experiment = [q for q in _processes_marked(mark) if q != p.pid]
        assert experiment, err.read_text()
        p.send_signal(signal.SIGTSTP)
        stopped = lambda: _state(p.pid) == "T" and all(_state(q) == "T" for q in experiment)
        assert _within(10, stopped), (_state(p.pid), [_state(q) for q in experiment], err.read_text())
        p.send_signal(signal.SIGCONT)
        assert p.wait(timeout=120) == 0, err.read_text()
    finally:
        p.kill()
        p.wait()
        _kill_marked(mark)
    assert any(x["type"] == "point" and x["experiment"] == "np99-counter" for x in records(tmp_path))


def test_progress_counts_every_point_across_the_experiments(clean_suite):
    # each experiment measures in a process of its own, and the count of
    # points measured comes back to the runner: the lines count on from one
    # experiment to the next and end at the planned total
    _, err = clean_suite
    counts = _progress_counts(err)
    assert counts == list(range(1, len(counts) + 1)), counts
    last = [line for line in err.splitlines() if line.startswith("[")][-1]
    assert last.startswith(f"[{counts[-1]}/{counts[-1]} 100%]"), last


def test_a_peer_library_thread_serves_the_experiments_process(tmp_path):
    # liburcu's rculfqueue frees through a call_rcu thread; the lab's own
    # process starts it when its planning pass probes the queue, and a fork
    # copies no thread: without liburcu's fork protocol (lab/peers/urcu.c)
    # np99-locks' first rcu_barrier in its process waited forever
    if "urcu:rculfqueue" not in lab("algos", "queue", check=0).stdout:
        pytest.skip("liburcu is not registered in this build")
    lab("run", "all", "--size", "smoke", "--threads", "2", "--reps", "1", "--algos", "urcu:rculfqueue",
        "--quiet", "--out", str(tmp_path), check=0, timeout=120)
    measured = {p["experiment"] for p in records(tmp_path)
                if p["type"] == "point" and p["algorithm"] == "urcu:rculfqueue"}
    assert {"ms98-queue", "np99-locks", "queue-1p1c"} <= measured, measured


def test_no_fork_runs_the_suite_in_one_process(tmp_path, clean_suite):
    # --no-fork: the experiments run in the lab's own process, so the
    # injected crash ends the whole run and the experiment after it never
    # starts
    r = lab("run", SUITE, "--size", "smoke", "--threads", "1,2", "--no-fork", "--out", str(tmp_path),
            env={"SYNCQ_LAB_CRASH": "np99-counter:mutex"})
    assert r.returncode == -11, (r.returncode, r.stderr)
    recs = records(tmp_path)
    assert _keys(recs, "phys") and not _keys(recs, "queue-1p1c")
    # and without a crash it measures what the forked run measures
    lab("run", SUITE, "--size", "smoke", "--threads", "1,2", "--no-fork", "--quiet",
        "--out", str(tmp_path / "whole"), check=0)
    recs = records(tmp_path / "whole")
    clean, _ = clean_suite
    for e in SUITE.split(","):
        assert _keys(recs, e) and _keys(recs, e) == _keys(clean, e), e


def test_runs_append_with_distinct_ids(tmp_path):
    for _ in range(2):
        lab("run", "phys", "--size", "smoke", "--quiet", "--out", str(tmp_path), check=0)
    recs = records(tmp_path)
    assert len({r["run_id"] for r in recs}) == 2
    assert sum(r["type"] == "machine" for r in recs) == 2


def test_report_command_writes_html(smoke_run):
    out, _, _ = smoke_run
    r = lab("report", str(out))
    assert r.returncode == 0, r.stderr
    html = (out / "report.html").read_text()
    assert "np99-counter" in html and "phys" in html
    assert list((out / "plots").glob("*.png"))


def test_po_ring_measures_three_metrics_per_run_and_names_its_peers(smoke_run):
    _, recs, _ = smoke_run
    pts = [r for r in recs if r["type"] == "point" and r["experiment"] == "po-ring"]
    by = {(p["algorithm"], p["metric"], p["params"]["recv"], p["params"]["processes"]) for p in pts}
    # every variant of a run gets hop, spawn and rss points from the same samples
    for mb in ("mutex", "nonblocking", "ttas", "two-lock", "mutex-nofree", "mpsc"):
        for backend in ("fiber", "thread"):
            for n in (2, 100):
                for metric in ("hop", "spawn", "rss"):
                    assert (f"{backend}:{mb}", metric, "blocking", n) in by
    for p in pts:
        if p["metric"] == "hop":
            assert p["unit"] == "ns" and p["median"] > 0
    notes = " ".join(r["text"] for r in recs if r["type"] == "note" and r["experiment"] == "po-ring")
    for peer in ("erlang", "go"):
        ran = any(p["algorithm"] == peer for p in pts)
        assert ran or f"Peer {peer} absent" in notes, peer
        if ran:
            assert f"Peer {peer}:" in notes
    # the extra metrics have their ratios to the reference (Erlang) too
    if any(p["algorithm"] == "erlang" for p in pts):
        assert any(p["metric"] == "spawn_ratio" for p in pts)


def test_po_ring_main_member_panel_and_cold_spawn(smoke_run):
    """main=member: main's work a fiber (syncq_po_run) or an attached thread, in the ring;
    spawn_cold beside spawn for every syncq variant with main outside, recv=blocking."""
    _, recs, _ = smoke_run
    pts = [r for r in recs if r["type"] == "point" and r["experiment"] == "po-ring"]
    by = {(p["algorithm"], p["metric"], p["params"]["recv"], p["params"]["main"], p["params"]["processes"]): p
          for p in pts}
    for n in (2, 100):
        for mb in ("mpsc", "nonblocking", "mutex"):
            for algo in (f"fiber:{mb}", f"fiber-attached:{mb}"):
                p = by[(algo, "hop", "blocking", "member", n)]
                assert p["unit"] == "ns" and p["median"] > 0
        for backend in ("fiber", "thread"):
            cold = by[(f"{backend}:mpsc", "spawn_cold", "blocking", "outside", n)]
            assert cold["unit"] == "us" and cold["median"] > 0
            assert (f"{backend}:mpsc", "spawn", "blocking", "outside", n) in by
        # the member panel has no thread backend, the outside panels no attached main
        assert ("thread:mpsc", "hop", "blocking", "member", n) not in by
        assert ("fiber-attached:mpsc", "hop", "blocking", "outside", n) not in by
    for peer in ("erlang", "go"):
        if any(p["algorithm"] == peer for p in pts):
            assert (peer, "hop", "blocking", "member", 2) in by
    notes = " ".join(r["text"] for r in recs if r["type"] == "note" and r["experiment"] == "po-ring")
    assert "default guards" in notes and "vm.max_map_count" in notes
    assert "Cold spawn: " in notes and "a fresh program per sample" in notes


def test_po_cold_helper():
    """syncq-lab-po-cold, spawn_cold's fresh program: one line per run on either backend; a bad
    argument or a refused system is an exit status, never a figure."""
    helper = Path(LAB).parent / "syncq-lab-po-cold"
    assert helper.exists()
    for backend in ("fiber", "thread"):
        r = subprocess.run([str(helper), backend, "mpsc", "50"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        key, value = r.stdout.strip().split("=")
        assert key == "spawn_cold_us" and float(value) > 0
    for args, status in ((["fiber", "mpsc"], 2), (["fiber", "mpsc", "0"], 2), (["fiber", "mpsc", "9x"], 2),
                         (["fiber", "mpsc", str(2**20 + 1)], 2), (["fiber", "no-such-mailbox", "10"], 1),
                         (["no-such-backend", "mpsc", "10"], 1)):
        r = subprocess.run([str(helper), *args], capture_output=True, text=True, timeout=120)
        assert r.returncode == status and r.stdout == "", (args, r.returncode, r.stdout)


def test_po_skynet_sums_the_tree_on_every_runtime(smoke_run):
    """Smallest point: 1,000 leaves (1,111 processes); a wrong sum fails the run, so a point is a checked sum."""
    _, recs, stderr = smoke_run
    pts = {r["algorithm"]: r for r in recs if r["type"] == "point" and r["experiment"] == "po-skynet"
           and r["metric"] == "time"}
    assert {"fiber:mpsc", "fiber:nonblocking", "fiber:mutex", "thread:mpsc"} <= set(pts), stderr[-2000:]
    for p in pts.values():
        assert p["unit"] == "ms" and p["median"] > 0 and p["params"]["leaves"] == 1000
    notes = " ".join(r["text"] for r in recs if r["type"] == "note" and r["experiment"] == "po-skynet")
    for peer in ("erlang", "go"):
        assert peer in pts or f"Peer {peer} absent" in notes, peer
        if peer in pts:
            assert f"Peer {peer}:" in notes


def test_po_server_serves_every_request_on_every_runtime(smoke_run):
    """Smallest point: 1,000 requests, each reply checked against its request."""
    _, recs, stderr = smoke_run
    pts = {r["algorithm"]: r for r in recs if r["type"] == "point" and r["experiment"] == "po-server"
           and r["metric"] == "request"}
    assert {"fiber:mpsc", "fiber:nonblocking", "fiber:mutex", "thread:mpsc"} <= set(pts), stderr[-2000:]
    for p in pts.values():
        assert p["unit"] == "us" and p["median"] > 0 and p["params"]["requests"] == 1000
    notes = " ".join(r["text"] for r in recs if r["type"] == "note" and r["experiment"] == "po-server")
    for peer in ("erlang", "go"):
        assert peer in pts or f"Peer {peer} absent" in notes, peer


def test_skynet_go_peer_checks_its_sum():
    """The Go skynet peer refuses a tree that is not a power of 10 (exit 2) and sums a small one."""
    go = Path(LAB).parent / "peers" / "skynet" / "skynet-go"
    if go.exists():
        r = subprocess.run([str(go), "999"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "power of 10" in r.stderr
        r = subprocess.run([str(go), "100"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.startswith("time_ms=") and "sum=4950" in r.stdout


def test_po_switch_measures_each_switch(smoke_run):
    _, recs, _ = smoke_run
    pts = {r["algorithm"]: r for r in recs if r["type"] == "point" and r["experiment"] == "po-switch"
           and r["metric"] == "switch"}
    assert {"fiber-yield", "kernel-yield"} <= set(pts)
    assert all(p["median"] > 0 for p in pts.values())


def test_spsc_queues_run_only_at_one_producer_one_consumer(smoke_run):
    """SPSC rings (props "spsc") are registered in the lab and measured by
    queue-1p1c, never by an experiment with several threads on a side."""
    _, recs, _ = smoke_run
    spsc = {line.split()[1] for line in lab("algos", "queue", check=0).stdout.splitlines()[1:]
            if "spsc" in line.split()[3].split(",")}
    pts = [r for r in recs if r["type"] == "point"]
    for p in pts:
        if p["algorithm"] in spsc:
            assert p["experiment"] == "queue-1p1c", p
            assert "spsc" in p["props"].split(",")
    one = [p for p in pts if p["experiment"] == "queue-1p1c"]
    assert {p["params"]["mode"] for p in one} == {"stream", "pingpong"}
    assert all(p["params"]["threads"] == 2 for p in one)
    measured = {p["algorithm"] for p in one}
    assert spsc <= measured and "nblfq" in measured
    # the "validated but not measured" note is gone once they are measured
    assert "not measured" not in recs[0].get("peers_note", "")


# ---------------------------------------------------------------- launches

def test_a_run_of_two_launches_writes_each_point_twice_under_one_run(tmp_path):
    out = tmp_path / "two"
    r = lab("run", "phys,np99-counter", "--size", "smoke", "--launches", "2",
            "--threads", "1,2", "--out", str(out), check=0)
    assert "launch 1 of 2" in r.stderr and "launch 2 of 2" in r.stderr
    recs = records(out)
    machines = [x for x in recs if x["type"] == "machine"]
    assert len(machines) == 1 and machines[0]["launches"] == 2
    assert machines[0]["command"].endswith("--out " + str(out))  # the user's command
    assert len({x["run_id"] for x in recs}) == 1
    exps = [(x["name"], x["launch"]) for x in recs if x["type"] == "experiment"]
    assert sorted(exps) == [("np99-counter", 1), ("np99-counter", 2), ("phys", 1), ("phys", 2)]
    # Launch 1 runs the whole list before launch 2 starts.
    assert exps.index(("np99-counter", 1)) < exps.index(("phys", 2))
    points = [x for x in recs if x["type"] == "point" and x["experiment"] == "np99-counter"]
    by_launch = {1: set(), 2: set()}
    for p in points:
        by_launch[p["launch"]].add((p["algorithm"], p["metric"], json.dumps(p["params"], sort_keys=True)))
    assert by_launch[1] and by_launch[1] == by_launch[2]
    # The report merges the launches into one point each.
    r = lab("report", str(out), check=0)
    page = (out / "report.html").read_text()
    assert "(2 launches)" in page


# ---------------------------------------------------------------- repetitions

def test_cheap_points_get_more_repetitions_up_to_the_cap(tmp_path):
    """--reps 2 --max-reps 6: np99-counter's smoke points (4,000 increments)
    take microseconds, thousands of times under the budget per variant
    (250 ms outside --quick), so each group runs to the cap; the machine
    record carries the rule; the counts are the same for every variant of a
    group (their repetitions are interleaved)."""
    out = tmp_path / "adaptive"
    lab("run", "np99-counter", "--size", "smoke", "--reps", "2", "--max-reps", "6",
        "--algos", "faa,cas", "--threads", "1", "--where", "work_ns=0", "--out", str(out), check=0)
    recs = records(out)
    machine = recs[0]
    assert machine["reps"] == 2 and machine["max_reps"] == 6 and machine["point_budget_ms"] > 0
    counts = {len(x["samples"]) for x in recs if x["type"] == "point"}
    assert counts == {6}


def test_reps_alone_fixes_the_count(tmp_path):
    out = tmp_path / "fixed"
    lab("run", "np99-counter", "--size", "smoke", "--reps", "3", "--algos", "faa,cas",
        "--threads", "1", "--where", "work_ns=0", "--out", str(out), check=0)
    recs = records(out)
    assert recs[0]["max_reps"] == 3
    assert {len(x["samples"]) for x in recs if x["type"] == "point"} == {3}


def test_points_a_claim_reads_get_more_repetitions(tmp_path):
    """np99-counter's claim reads faa and cas at the largest thread count
    with work_ns=0: with a claim budget those two points go on past the
    group's repetitions (smoke points take microseconds: many fit), every
    other point keeps its one; the ratio points pair only repetitions made
    side by side."""
    out = tmp_path / "claimed"
    lab("run", "np99-counter", "--size", "smoke", "--claim-budget", "200", "--algos", "faa,cas,mutex",
        "--threads", "1,2", "--where", "work_ns=0", "--out", str(out), check=0)
    recs = records(out)
    machine = recs[0]
    assert machine["claim_budget_ms"] == 200 and machine["claim_max_reps"] == 100
    counts = {}
    for x in recs:
        if x["type"] == "point" and x["unit"] != "x":
            counts[(x["algorithm"], x["params"]["threads"])] = len(x["samples"])
    assert counts[("faa", 2)] > 1 and counts[("cas", 2)] > 1
    assert counts[("faa", 2)] == counts[("cas", 2)] <= 100  # interleaved: the same count
    assert counts[("mutex", 2)] == 1  # in the group, not read by the claim
    assert counts[("faa", 1)] == counts[("cas", 1)] == counts[("mutex", 1)] == 1  # not the largest count
    for x in recs:
        if x["type"] == "point" and x["unit"] == "x" and x["params"]["threads"] == 2:
            assert len(x["samples"]) == min(counts[(x["algorithm"], 2)], counts[("faa", 2)])  # faa: the reference


def test_pseudo_scheduler_claims_get_a_dozen_repetitions_past_a_small_budget(tmp_path):
    """Under the pseudo-scheduler a sample's time is a whole number of quanta:
    ms98-stack's level-3 claim reads lock, lock-ps and treiber there, and
    those go on to MP_PSEUDO_CLAIM_MIN_REPS (12) repetitions although a 1 ms
    claims' budget would stop them after one; herlihy, in the group but not
    read by a claim, keeps its one."""
    out = tmp_path / "pseudo"
    lab("run", "ms98-stack", "--size", "smoke", "--claim-budget", "1", "--where", "mode=pseudo",
        "--where", "level=3", "--out", str(out), check=0)
    counts = {}
    for x in records(out):
        if x["type"] == "point" and x["unit"] != "x":
            counts.setdefault(x["algorithm"], []).append(len(x["samples"]))
    top = {a: max(c) for a, c in counts.items()}
    assert top["lock"] == top["lock-ps"] == top["treiber"] >= 12
    assert top["herlihy"] == 1
    # with no claims' budget at all, none
    out0 = tmp_path / "pseudo0"
    lab("run", "ms98-stack", "--size", "smoke", "--claim-budget", "0", "--where", "mode=pseudo",
        "--where", "level=3", "--out", str(out0), check=0)
    assert {len(x["samples"]) for x in records(out0) if x["type"] == "point"} == {1}


@pytest.mark.parametrize("launches, each", [(1, 6), (2, 3)])
def test_claimed_points_get_the_samples_a_verdict_needs_past_a_small_budget(tmp_path, launches, each):
    """The report finds no verdict in a point of fewer than 6 samples (rules.py,
    MIN_SAMPLES): ms98-stack's dedicated claims read treiber, lock and herlihy at
    level 1, and those get 6 samples over the run's launches, each launch its share,
    although a 1 ms claims' budget would stop them after one; elimination, in the
    group but read by no claim, keeps one a launch (a syncq algorithm, not a peer:
    the sanitizer builds leave the peers out)."""
    out = tmp_path / f"min{launches}"
    lab("run", "ms98-stack", "--size", "smoke", "--claim-budget", "1", "--launches", str(launches), "--where",
        "mode=dedicated", "--where", "level=1", "--where", "delay_ns=6000", "--threads", "1", "--algos",
        "treiber,lock,herlihy,elimination", "--out", str(out), check=0)
    counts = {}  # algorithm -> its samples in each launch (a launch writes its own point)
    for x in records(out):
        if x["type"] == "point" and x["unit"] != "x":
            counts.setdefault(x["algorithm"], []).append(len(x["samples"]))
    assert counts["treiber"] == counts["lock"] == counts["herlihy"] == [each] * launches
    assert counts["elimination"] == [1] * launches


def test_pseudo_scheduler_notes_how_often_a_preemption_safe_thread_was_preempted_in_its_request(tmp_path):
    """The ms98 experiments note, per level, the share of the pseudo-scheduler's
    preemptions that found a -ps variant's thread inside its no-preemption
    request, over every -ps run; a run without -ps variants writes none."""
    out = tmp_path / "tally"
    lab("run", "ms98-stack", "--size", "smoke", "--claim-budget", "0", "--where", "mode=pseudo",
        "--where", "level=3", "--out", str(out), check=0)
    recs = records(out)
    notes = [x["text"] for x in recs if x["type"] == "note" and "no-preemption request" in x["text"]]
    # one for the delayed sweep, one for the level-3 panel without delay
    assert len(notes) == 2 and notes[0].startswith("Level 3, mode=pseudo:")
    assert notes[1].startswith("Level 3, mode=pseudo, delay_ns=0:")
    for delay, note in zip((6000, 0), notes):
        m = re.search(r"at (\d+) of the pseudo-scheduler's (\d+) preemptions \(([\d.]+)%, over (\d+) runs\)", note)
        assert m, note
        deferred, decisions, runs = int(m.group(1)), int(m.group(2)), int(m.group(4))
        assert deferred <= decisions
        mine = [x for x in recs if x["type"] == "point" and x["algorithm"] == "lock-ps"
                and x["params"]["delay_ns"] == delay]
        time = next(x for x in mine if x["metric"] == "time")
        assert runs >= len(time["samples"]) >= 1  # warm-up runs count too
        # the same counts as metrics of the point, each measured run's (the note adds the warm-up's)
        counted = {x["metric"]: x for x in mine if x["unit"] == "count"}
        assert set(counted) == {"preemptions", "preemptions_deferred"}
        assert len(counted["preemptions"]["samples"]) == len(time["samples"])
        assert sum(counted["preemptions_deferred"]["samples"]) <= deferred
        assert sum(counted["preemptions"]["samples"]) <= decisions
        assert all(d <= t for d, t in zip(counted["preemptions_deferred"]["samples"], counted["preemptions"]["samples"]))
    # an ordinary lock makes no request: none of its preemptions is ever deferred
    plain = [x for x in recs if x["type"] == "point" and x["algorithm"] == "lock" and x["metric"] == "preemptions_deferred"]
    assert len(plain) == 2 and all(v == 0 for x in plain for v in x["samples"])
    # counts, not costs: no ratio points of them
    assert not [x for x in recs if x["type"] == "point" and x["metric"].startswith("preemptions_")
                and x["metric"] != "preemptions_deferred"]
    out2 = tmp_path / "tally-none"
    lab("run", "ms98-stack", "--size", "smoke", "--claim-budget", "0", "--where", "mode=pseudo",
        "--where", "level=3", "--algos", "lock,treiber", "--out", str(out2), check=0)
    assert not [x for x in records(out2) if x["type"] == "note" and "no-preemption request" in x["text"]]


def test_smoke_and_reps_alone_give_claims_nothing_more(tmp_path):
    out = tmp_path / "noclaim"
    lab("run", "np99-counter", "--size", "smoke", "--algos", "faa,cas", "--threads", "1,2",
        "--where", "work_ns=0", "--out", str(out), check=0)
    recs = records(out)
    assert recs[0]["claim_budget_ms"] == 0
    assert {len(x["samples"]) for x in recs if x["type"] == "point"} == {1}


def test_compare_lists_a_run_against_itself_as_identical(tmp_path):
    out = tmp_path / "c"
    lab("run", "np99-counter", "--size", "smoke", "--algos", "faa,cas", "--threads", "1,2",
        "--out", str(out), check=0)
    results = str(out / "results.jsonl")
    r = lab("compare", results, results, check=0)
    assert " verdicts identical (100.0%)" in r.stdout


def test_quicksort_counts_preemptions_for_its_exercised_claim(tmp_path):
    """ms98-quicksort's pseudo-scheduled points carry the pseudo-scheduler's counts
    (apps_common.h), which its degradation claim reads through "exercised": a -ps
    pool's deferrals are at most its preemptions, an ordinary lock's are 0."""
    out = tmp_path / "qs"
    lab("run", "ms98-quicksort", "--size", "smoke", "--claim-budget", "0", "--where", "mode=pseudo",
        "--where", "level=3", "--algos", "lock,lock-ps,treiber", "--out", str(out), check=0)
    recs = [x for x in records(out) if x["type"] == "point" and x["params"].get("pool") == "stack"]
    counted = {(x["algorithm"], x["metric"]): x for x in recs if x["unit"] == "count"}
    assert {m for _, m in counted} == {"preemptions", "preemptions_deferred"}
    assert {a for a, _ in counted} == {"lock", "lock-ps", "treiber"}
    ps = counted[("lock-ps", "preemptions")]["samples"]
    assert sum(ps) > 0 and len(ps) == len(next(x for x in recs if x["algorithm"] == "lock-ps"
                                              and x["metric"] == "time")["samples"])
    assert all(d <= t for d, t in zip(counted[("lock-ps", "preemptions_deferred")]["samples"], ps))
    assert all(v == 0 for v in counted[("lock", "preemptions_deferred")]["samples"])
    # the claim reads them: exercised or not, never "did not count"
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "report"))
    from syncq_report import load, rules
    result = next(e for e in load.load(out / "results.jsonl").experiments if e.experiment.name == "ms98-quicksort")
    claim = next(c for c in result.experiment.claims if "degrades under multiprogramming" in c["text"])
    stack_part = claim["rule"]["rules"][1]
    v = rules.evaluate(stack_part, result.points, machine=result.machine)
    assert "did not count" not in v.explanation, v
    # not exercised at this size, or exercised and then short of the level-1 baseline this run left out
    assert ("preemptions found a thread of lock-ps" in v.explanation
            or (v.status == rules.UNMEASURABLE and "level=1" in v.explanation)), v
