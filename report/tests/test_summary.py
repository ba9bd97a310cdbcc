# SPDX-License-Identifier: BSD-2-Clause
"""Runs of several launches, the comparison of two runs, and what the report says
first: the recommendation table, the per-paper scoreboard, the papers."""

import copy
import re
import subprocess
import sys

import pytest
from support import BUILD_PY, REPORT_DIR, fixture_records, write_records

from syncq_report import cli, compare, load, panels, papers, recommend, rules
from syncq_report.load import Point

RUN = "r1-20250301T101500Z"


def two_launches(scale_second=1.0):
    """The fixture as a run of two launches: every experiment, point and note
    written once per launch, the second launch's samples scaled."""
    records = fixture_records()
    machine, rest = records[0], records[1:]
    machine = {**machine, "launches": 2, "launch": 1}
    out = [machine]
    for launch in (1, 2):
        for record in rest:
            r = copy.deepcopy(record)
            r["launch"] = launch
            if r["type"] == "point" and launch == 2:
                r["samples"] = [s * scale_second for s in r["samples"]]
                r["median"] *= scale_second
                r["min"] *= scale_second
                r["max"] *= scale_second
            out.append(r)
    return out


def test_launches_merge_into_one_point_with_every_sample(tmp_path):
    path = tmp_path / "results.jsonl"
    write_records(path, two_launches(scale_second=2.0))
    results = load.load(path)
    single = load.load(REPORT_DIR / "tests" / "data" / "results.jsonl")
    counter = results.experiments[1]
    assert counter.experiment.name == "np99-counter"
    assert len(counter.points) == len(single.experiments[1].points)  # merged, not doubled
    merged, first = counter.points[0], single.experiments[1].points[0]
    assert merged.samples == first.samples + [s * 2.0 for s in first.samples]
    assert merged.launches == [1] * len(first.samples) + [2] * len(first.samples)
    assert merged.min == min(merged.samples) and merged.max == max(merged.samples)
    assert merged.min <= merged.median <= merged.max
    # Notes written by both launches are shown once.
    assert counter.notes == single.experiments[1].notes
    assert [n.text for n in results.run_notes] == [n.text for n in single.run_notes]


def test_a_point_twice_in_one_launch_is_refused(tmp_path):
    records = two_launches()
    records.insert(3, copy.deepcopy(records[2]))
    path = tmp_path / "results.jsonl"
    write_records(path, records)
    with pytest.raises(load.ResultsError, match=r"repeats the point of line 3"):
        load.load(path)


def test_bad_launch_field_is_refused(tmp_path):
    records = two_launches()
    records[2]["launch"] = 0
    path = tmp_path / "results.jsonl"
    write_records(path, records)
    with pytest.raises(load.ResultsError, match="'launch' must be a positive integer"):
        load.load(path)


def test_launch_disagreement_reaches_the_verdicts(tmp_path):
    # The fixture's faa/cas claim holds in one launch; a second launch where
    # faa is 3x slower makes the interval straddle the bound.
    records = two_launches()
    scale(records, "faa", 3.0, launch=2)
    path = tmp_path / "results.jsonl"
    write_records(path, records)
    counter = load.load(path).experiments[1]
    verdict = rules.evaluate(counter.experiment.claims[0]["rule"], counter.points)
    assert verdict.status == rules.INCONCLUSIVE, verdict


def run_pair(tmp_path, change):
    """Two results files: the fixture, and the fixture with change(records) applied."""
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    write_records(before, fixture_records())
    records = fixture_records()
    for r in records:
        if r["type"] in ("machine", "experiment", "point", "note"):
            r["run_id"] = "r2"
    change(records)
    write_records(after, records)
    return before, after


def scale(records, algorithm, factor, launch=None):
    """Multiply one algorithm's samples (in one launch, or all) by factor."""
    for r in records:
        if r["type"] == "point" and r["algorithm"] == algorithm and launch in (None, r.get("launch")):
            r["samples"] = [s * factor for s in r["samples"]]
            r["median"], r["min"], r["max"] = r["median"] * factor, r["min"] * factor, r["max"] * factor


def slow_faa(records):
    scale(records, "faa", 10)


def test_compare_lists_the_changed_verdicts_and_the_share(tmp_path):
    before, after = run_pair(tmp_path, slow_faa)
    same = compare.compare_files(before, before)
    assert same.compared > 0 and same.same == same.compared and same.changes == []
    c = compare.compare_files(before, after)
    assert c.compared == same.compared
    assert len(c.changes) >= 1
    change = c.changes[0]
    assert change.experiment == "np99-counter"
    assert change.before.status == rules.HELD and change.after.status == rules.FAILED
    assert c.share == pytest.approx((c.compared - len(c.changes)) / c.compared)
    assert "verdicts identical" in compare.text(c)
    summary = compare.text(c).splitlines()[2]  # the counts come before any detail
    assert summary == f"{len(c.changes)} changed, 0 only before, 0 only after"


def test_compare_sums_up_many_one_sided_claims():
    few = [("np99-counter", f"claim {i}") for i in range(3)]
    assert compare._one_side("only before", few) == [f"  only before: np99-counter: claim {i}" for i in range(3)]
    many = [("dg25-prodcons", f"c{i}") for i in range(7)] + [("phys", f"p{i}") for i in range(5)]
    assert compare._one_side("only before", many) == [
        "  only before: 12 claims of 2 experiments (dg25-prodcons 7, phys 5)"]


def test_compare_command_line(tmp_path):
    before, after = run_pair(tmp_path, slow_faa)
    done = subprocess.run(
        [sys.executable, str(BUILD_PY), "compare", str(before), str(after)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"\d+ of \d+ verdicts identical", done.stdout)
    assert "before: held" in done.stdout and "after:  did not hold" in done.stdout
    missing = subprocess.run(
        [sys.executable, str(BUILD_PY), "compare", str(before), str(tmp_path / "nope.jsonl")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "no results file" in missing.stderr


def test_report_with_compare_shows_stability_first(tmp_path):
    before, after = run_pair(tmp_path, slow_faa)
    directory = tmp_path / "out"
    directory.mkdir()
    (directory / "results.jsonl").write_bytes(after.read_bytes())
    assert cli.main([str(directory), "--compare", str(before)]) == 0
    page = (directory / "report.html").read_text(encoding="utf-8")
    assert page.index('id="stability"') < page.index('id="machine"')
    assert re.search(r"\d+ of \d+ verdicts identical", page)
    assert '<td class="held">held</td><td class="failed">did not hold</td>' in page


def test_scoreboard_counts_every_claim_by_paper(results_dir):
    assert cli.main([str(results_dir)]) == 0
    page = (results_dir / "report.html").read_text(encoding="utf-8")
    assert 'id="scoreboard"' in page and "003 Nikolopoulos &amp; Papatheodorou (np99)" in page
    results = load.load(results_dir / "results.jsonl")
    sections = [cli._section(r, r.experiment.name, results_dir / "plots") for r in results.experiments]
    scores = papers.scoreboard(sections)
    assert sum(sum(s.counts.values()) for s in scores) == sum(len(s.verdicts) for s in sections)
    labels = [s.label for s in scores]
    assert labels.index("001 Michael & Scott (ms98)") < labels.index("003 Nikolopoulos & Papatheodorou (np99)")
    assert labels[-1] == "syncq's own experiments"  # phys


def test_papers_page_matches_the_report():
    text = (REPORT_DIR.parent / "docs" / "papers.md").read_text(encoding="utf-8")
    for paper in papers.PAPERS:
        assert f"| {paper.number} |" in text and f"`{paper.prefix}-`" in text, paper.number
        assert paper.title in text, paper.title


def qpoint(algorithm, median, family="queue", peer=False, threads=2, samples=None):
    samples = samples or [median * f for f in (0.97, 0.98, 0.99, 1.0, 1.01, 1.02, 1.03)]
    return Point(
        experiment="dg25-prodcons",
        algorithm=algorithm,
        params={"threads": threads},
        metric="throughput",
        unit="Mops/s",
        better="higher",
        median=median,
        min=min(samples),
        max=max(samples),
        samples=samples,
        counters={},
        line=1,
        peer=peer,
        family=family,
    )


class _Section:
    def __init__(self, name, points):
        self.result = type("R", (), {"experiment": type("E", (), {"name": name})(), "points": points})()
        self.anchor = f"exp-{name}"


def test_recommendation_picks_the_best_and_measures_its_margin():
    points = [
        qpoint("nblfq", 40.0),
        qpoint("ms", 10.0),
        qpoint("ck:ring_mpmc", 20.0, peer=True),
        qpoint("nblfq", 99.0, threads=1),  # a smaller thread count: not the point asked
        qpoint("cacheline-pingpong", 500.0, family=None),  # a floor, not a structure
    ]
    answers = recommend.answer_all([_Section("dg25-prodcons", points)])
    many = next(a for a in answers if a.question.use.startswith("Queue, many"))
    assert many.pick.algorithm == "nblfq" and many.runner_up.algorithm == "ck:ring_mpmc"
    factor, lo, hi = many.margin
    assert factor == pytest.approx(2.0) and 1.0 < lo <= factor <= hi
    assert not recommend.is_tie(many.margin)
    assert many.syncq_best.algorithm == "nblfq" and many.peer_best.algorithm == "ck:ring_mpmc"
    assert many.syncq_vs_peer[0] == pytest.approx(2.0)
    one = next(a for a in answers if a.question.use.startswith("Queue, 1 producer"))
    assert one.pick.algorithm == "nblfq" and one.place == {"threads": 1}  # the fallback source
    lock = next(a for a in answers if a.question.use == "Lock, uncontended")
    assert lock.pick is None and "locks-cost was not run" in lock.why_missing


def test_recommendation_calls_a_close_race_a_tie():
    points = [
        qpoint("nblfq", 10.0, samples=[8.0, 9.0, 9.5, 10.0, 10.5, 11.0, 12.0]),
        qpoint("vyukov", 9.8, samples=[8.5, 9.0, 9.4, 9.8, 10.2, 10.6, 11.5]),
    ]
    many = next(a for a in recommend.answer_all([_Section("dg25-prodcons", points)]) if a.question.use.startswith("Queue, many"))
    assert many.pick.algorithm == "nblfq" and recommend.is_tie(many.margin)


def test_recommendation_quotes_no_interval_from_too_few_samples():
    # One sample a side: the bootstrap interval would be the point itself, a
    # 2x "win" with nothing to say how sure it is. The factor stays, unbounded.
    points = [qpoint("nblfq", 40.0, samples=[40.0]), qpoint("ck:ring_mpmc", 20.0, peer=True, samples=[20.0])]
    many = next(a for a in recommend.answer_all([_Section("dg25-prodcons", points)]) if a.question.use.startswith("Queue, many"))
    factor, lo, hi = many.margin
    assert factor == pytest.approx(2.0) and lo is None and hi is None
    assert recommend.is_undecided(many.margin) and not recommend.is_tie(many.margin)
    assert many.syncq_vs_peer[1] is None


def _po_point(experiment, algorithm, metric, median, **params):
    return Point(experiment=experiment, algorithm=algorithm, params={"threads": 2, **params}, metric=metric,
                 unit="ms", better="lower", median=median, min=median, max=median, samples=[median],
                 counters={}, line=1)


def test_recommendation_answers_the_actor_runtimes_questions():
    """skynet falls back to the --quick tree; the ring's two panels (main outside, main a member)
    are two questions, each reading its own panel; po-* are syncq's own experiments."""
    skynet = [_po_point("po-skynet", "go", "time", 150.0, leaves=100000),
              _po_point("po-skynet", "fiber:mpsc", "time", 300.0, leaves=100000),
              _po_point("po-skynet", "fiber:mpsc", "time", 1.0, leaves=10000)]
    ring = [_po_point("po-ring", "fiber:mpsc", "hop", 60.0, recv="blocking", main="outside", processes=1000),
            _po_point("po-ring", "go", "hop", 100.0, recv="blocking", main="outside", processes=1000),
            _po_point("po-ring", "fiber:mpsc", "hop", 500.0, recv="blocking", main="member", processes=1000),
            _po_point("po-ring", "go", "hop", 200.0, recv="blocking", main="member", processes=1000)]
    server = [_po_point("po-server", "fiber:mpsc", "request", 1.0, requests=100000),
              _po_point("po-server", "go", "request", 2.0, requests=100000)]
    answers = {a.question.use: a for a in recommend.answer_all(
        [_Section("po-skynet", skynet), _Section("po-ring", ring), _Section("po-server", server)])}
    tree = next(a for use, a in answers.items() if "skynet" in use)
    assert tree.pick.algorithm == "go" and tree.place["leaves"] == 100000
    outside = answers["Lightweight processes: a message hop in a 1,000-process ring"]
    member = next(a for use, a in answers.items() if "main taking part" in use)
    assert outside.pick.algorithm == "fiber:mpsc" and outside.place["main"] == "outside"
    assert member.pick.algorithm == "go" and member.place["main"] == "member"
    assert next(a for use, a in answers.items() if "request/reply" in use).pick.algorithm == "fiber:mpsc"
    for name in ("po-ring", "po-skynet", "po-server"):
        assert papers.paper_of(type("E", (), {"name": name})()) is None  # syncq's own


def test_plots_against_the_level_join_the_dedicated_run_to_every_mode():
    def lp(algorithm, mode, level):
        return Point(
            experiment="ms98-queue",
            algorithm=algorithm,
            params={"threads": 2, "mode": mode, "level": level},
            metric="time_ratio",
            unit="x",
            better="lower",
            median=1.0,
            min=1.0,
            max=1.0,
            samples=[1.0],
            counters={},
            line=1,
        )

    points = [lp("ms", "dedicated", 1), lp("ms", "real", 3), lp("ms", "pseudo", 3), lp("ms", "real", 2)]
    axis = {"x": "level", "join": "mode", "base": "dedicated", "metrics": ["time_ratio"]}
    (panel,) = panels.group_also(points, axis)
    lines = {}
    for p in panel.points:
        lines.setdefault(p.algorithm, []).append(p.params["level"])
    assert lines == {"ms (mode=real)": [1, 3, 2], "ms (mode=pseudo)": [1, 3]}
    assert panels.group_also(points, {**axis, "metrics": ["time"]}) == []


def test_run_to_run_spread_of_a_pair(tmp_path):
    """compare.run_to_run: a run against itself moved nothing (0); a second run
    whose faa is 10x slower everywhere needs a spread that covers log(10),
    far above the launches' own (identical launches: no spread of their own)."""
    first = tmp_path / "a.jsonl"
    write_records(first, two_launches())
    same = compare.compare_files(first, first)
    assert same.run_to_run is not None and same.run_to_run[0] == 0.0 and same.run_to_run[1] > 0
    records = two_launches()
    slow_faa(records)
    second = tmp_path / "b.jsonl"
    write_records(second, records)
    spread, n = compare.compare_files(first, second).run_to_run
    assert n == same.run_to_run[1]
    assert spread > 0.0
    assert "run-to-run spread of this pair" in compare.text(compare.compare_files(first, second))


def test_run_to_run_needs_launches(tmp_path):
    before, after = run_pair(tmp_path, slow_faa)
    assert compare.compare_files(before, after).run_to_run is None


def test_sections_state_their_resolution_only_with_launches(tmp_path):
    """A run of two launches whose second launch moved one algorithm: the
    section says how much its ratios move between launches; a one-launch run
    says nothing of it."""
    records = two_launches()
    scale(records, "cas", 1.5, launch=2)
    two = tmp_path / "two"
    two.mkdir()
    write_records(two / "results.jsonl", records)
    cli.build(two, "t")
    page = (two / "report.html").read_text()
    assert "Launch-to-launch resolution" in page and "in 2 launches" in page
    one = tmp_path / "one"
    one.mkdir()
    write_records(one / "results.jsonl", fixture_records())
    cli.build(one, "t")
    assert "Launch-to-launch resolution" not in (one / "report.html").read_text()
