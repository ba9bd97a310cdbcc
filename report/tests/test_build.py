# SPDX-License-Identifier: BSD-2-Clause
"""The command line: files written, page content, exit statuses."""

import re
import subprocess
import sys

import pytest
from support import BUILD_PY, FIXTURE_PANELS, fixture_records, write_records

from syncq_report import cli


def run_build(*args, cwd):
    return subprocess.run(
        [sys.executable, str(BUILD_PY), *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def build(directory, *options):
    assert cli.main([str(directory), *options]) == 0
    return (directory / "report.html").read_text(encoding="utf-8")


def test_builds_from_another_directory_with_a_relative_path(results_dir, tmp_path):
    # cwd is the parent of DIR, far from report/: build.py must find its package itself.
    done = run_build(results_dir.name, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{results_dir.name}/report.html\n"
    assert (results_dir / "report.html").is_file()


def test_one_png_per_panel_and_each_is_on_the_page(results_dir):
    page = build(results_dir)
    pngs = sorted(p.name for p in (results_dir / "plots").glob("*.png"))
    assert len(pngs) == FIXTURE_PANELS
    assert sorted(re.findall(r'<img src="plots/([^"]+)"', page)) == pngs
    for name in pngs:
        assert (results_dir / "plots" / name).read_bytes().startswith(b"\x89PNG")


def test_rebuild_removes_plots_of_panels_that_are_gone(results_dir):
    build(results_dir)
    records = [r for r in fixture_records() if r.get("experiment") != "ms98-queue"]
    write_records(results_dir / "results.jsonl", records)
    build(results_dir)
    assert len(list((results_dir / "plots").glob("*.png"))) == FIXTURE_PANELS - 1


def test_phys_first_then_file_order(results_dir):
    page = build(results_dir)
    order = re.findall(r'<section class="experiment" id="exp-([^"]+)"', page)
    assert order == ["phys", "np99-counter", "ms98-queue"]


def test_page_shows_machine_claims_numbers_and_notes(results_dir):
    page = build(results_dir, "--title", "Quick run")
    assert "<title>Quick run</title>" in page and "<h1>Quick run</h1>" in page
    assert "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz" in page
    assert "unavailable: perf_event_paranoid=3" in page
    claims = re.findall(r'<li class="claim (\w+)">', page)
    assert claims == [
        "held",
        "failed",
        "unmeasurable",
        "unmeasurable",
        "held",
        "unmeasurable",
        "unmeasurable",
    ]
    assert "faa/cas = 0.505 [95% CI " in page and "] at threads=4, work_ns=0" in page
    assert "unknown rule op &#x27;ratio_between&#x27;" in page
    assert '<td>cas</td><td>threads=4, work_ns=0</td><td>time_per_op</td><td class="num">95.4</td>' in page
    assert page.index('id="answers"') < page.index('id="scoreboard"') < page.index('id="machine"')
    assert "cas_fail_per_op=0.520" in page
    assert "threads=4 oversubscribes the 2 cores" in page
    assert "quick size: thread counts stop at 2x the cores" in page
    assert '<a href="#exp-phys">' in page


def test_text_from_the_file_is_escaped(results_dir):
    records = fixture_records()
    records[1]["description"] = 'Counts <script>alert("x")</script> & more'
    records[2]["algorithm"] = "<b>cas</b>"
    write_records(results_dir / "results.jsonl", records)
    page = build(results_dir, "--title", "<i>T</i>")
    assert "<script" not in page and "<b>" not in page and "<i>" not in page
    assert "Counts &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more" in page
    assert "&lt;b&gt;cas&lt;/b&gt;" in page
    assert "<h1>&lt;i&gt;T&lt;/i&gt;</h1>" in page


@pytest.mark.parametrize("args", [[], ["a", "b"], ["--colour", "x"], ["--title"]])
def test_bad_usage_exits_2_with_one_line(tmp_path, args):
    done = run_build(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert re.fullmatch(r"build\.py: error: .+\n", done.stderr), done.stderr


def error_of(capsys, directory):
    status = cli.main([str(directory)])
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    return status, captured.err


def test_missing_directory_exits_2(tmp_path, capsys):
    status, err = error_of(capsys, tmp_path / "nowhere")
    assert status == 2 and "nowhere: not a directory" in err


def test_missing_results_file_exits_2(tmp_path, capsys):
    status, err = error_of(capsys, tmp_path)
    assert status == 2 and f"{tmp_path}/results.jsonl: no results file" in err


def test_empty_results_file_exits_2(tmp_path, capsys):
    (tmp_path / "results.jsonl").write_text("", encoding="utf-8")
    status, err = error_of(capsys, tmp_path)
    assert status == 2 and "results file is empty" in err


def test_malformed_record_exits_2_naming_file_and_line(results_dir, capsys):
    records = fixture_records()
    del records[4]["median"]
    write_records(results_dir / "results.jsonl", records)
    status, err = error_of(capsys, results_dir)
    assert status == 2
    assert err == f"build.py: error: {results_dir}/results.jsonl:5: point record lacks field 'median'\n"
    assert not (results_dir / "report.html").exists()


def test_dollar_signs_in_names_are_plotted_as_text(results_dir):
    # matplotlib would parse "$\frac{$" as math and fail; names from the file must stay literal.
    records = fixture_records()
    for record in records:
        if record.get("algorithm") == "faa":
            record["algorithm"] = r"faa$\frac{$"
    write_records(results_dir / "results.jsonl", records)
    page = build(results_dir)
    assert r"<td>faa$\frac{$</td>" in page


def test_a_line_panel_with_many_algorithms_grows_taller_and_keeps_its_axes(results_dir):
    # np99-locks plots ~30 locks in one panel: the legend must not squash the axes to nothing.
    import copy
    import warnings

    records = fixture_records()
    extra = []
    for record in records:
        if record.get("experiment") == "np99-counter" and record.get("algorithm") == "faa":
            for k in range(40):
                clone = copy.deepcopy(record)
                clone["algorithm"] = f"lock-{k}"
                extra.append(clone)
    assert extra
    write_records(results_dir / "results.jsonl", records + extra)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns when constrained layout collapses the axes
        page = build(results_dir)
    heights = [int(h) for h in re.findall(r'<img src="plots/np99-counter-[^"]*" width="\d+" height="(\d+)"', page)]
    assert heights and max(heights) > 420


def test_count_metrics_are_tabled_not_plotted(results_dir):
    """Points of unit "count" (how often something happened in a run, e.g. the
    pseudo-scheduler's preemptions) get no plot: a table of their totals instead."""
    records = fixture_records()
    point = next(r for r in records if r.get("experiment") == "ms98-queue" and r.get("type") == "point")
    for metric, samples in (("preemptions", [13, 16, 15]), ("preemptions_deferred", [3, 0, 4])):
        for algorithm in ("ms", "ms-ps"):
            records.append(dict(point, algorithm=algorithm, metric=metric, unit="count", samples=samples,
                                median=sorted(samples)[1], min=min(samples), max=max(samples)))
    write_records(results_dir / "results.jsonl", records)
    page = build(results_dir)
    assert len(list((results_dir / "plots").glob("*.png"))) == FIXTURE_PANELS
    assert "preemptions" not in " ".join(re.findall(r'<img src="plots/([^"]+)"', page))
    table = page[page.index("<h3>Counts</h3>"):]
    table = table[: table.index("</table>")]
    assert "<th>preemptions</th><th>preemptions_deferred</th>" in table
    assert table.count("<tr><td>ms") == 2  # one row per algorithm and params, both counts in it
    assert '<td class="num">44 over 3 runs (median 15)</td><td class="num">7 over 3 runs (median 3)</td>' in table
    # the numbers table still lists every point
    assert page.count("<td>preemptions_deferred</td>") == 2
    # without counts, no table
    write_records(results_dir / "results.jsonl", fixture_records())
    assert "<h3>Counts</h3>" not in build(results_dir)


def test_machine_table_names_the_events_counted(results_dir):
    """The machine record's perf_events (the workers' event counters) gets its
    row; results from before it say that none were counted."""
    page = build(results_dir)
    row = page[page.index("<th>Events counted per sample</th>"):]
    assert row[: row.index("</tr>")].endswith("<td>none (results older than the workers&#x27; event counters)</td>")
    records = fixture_records()
    text = "read: page_faults, cpu_migrations (user space only, by teams of at most one thread per processing unit)"
    records[0] = dict(records[0], perf_events=text)
    write_records(results_dir / "results.jsonl", records)
    assert f"<th>Events counted per sample</th><td>{text}</td>" in build(results_dir)
    records[0] = dict(records[0], perf_events=3)  # a string or nothing
    write_records(results_dir / "results.jsonl", records)
    assert cli.main([str(results_dir)]) == 2


def test_machine_table_says_how_the_postoffice_reads_its_clock(results_dir):
    """The machine record's po_clock_gate (syncq_po_clock_gate's line) gets its
    row; results from before it say it was not recorded."""
    page = build(results_dir)
    row = page[page.index("<th>Postoffice deadline clock</th>"):]
    assert row[: row.index("</tr>")].endswith(
        "<td>not recorded (results older than the record of the postoffice&#x27;s clock gate)</td>")
    records = fixture_records()
    for text in ("counter: 2.596 ticks/ns",
                 "clock at every switch: the kernel's available clocksources leave out the TSC (marked unstable)"):
        records[0] = dict(records[0], po_clock_gate=text)
        write_records(results_dir / "results.jsonl", records)
        shown = text.replace("'", "&#x27;")
        assert f"<th>Postoffice deadline clock</th><td>{shown}</td>" in build(results_dir)
    records[0] = dict(records[0], po_clock_gate=True)  # a string or nothing
    write_records(results_dir / "results.jsonl", records)
    assert cli.main([str(results_dir)]) == 2


def test_machine_table_says_where_the_pus_were_counted(results_dir):
    """The machine record's pus_source (hwloc, or without a topology the CPUs
    sched_getaffinity allows) gets its row under the PUs; results from before
    it say it was not recorded; anything but a string is refused."""
    page = build(results_dir)
    row = page[page.index("<th>PUs counted by</th>"):]
    assert row[: row.index("</tr>")].endswith(
        "<td>not recorded (results older than the record of the count&#x27;s source)</td>")
    assert page.index("<th>PUs</th>") < page.index("<th>PUs counted by</th>")
    records = fixture_records()
    text = "sched_getaffinity (no topology: hwloc could not load the topology)"
    records[0] = dict(records[0], pus_source=text)
    write_records(results_dir / "results.jsonl", records)
    assert f"<th>PUs counted by</th><td>{text}</td>" in build(results_dir)
    records[0] = dict(records[0], pus_source=2)
    write_records(results_dir / "results.jsonl", records)
    assert cli.main([str(results_dir)]) == 2


def test_machine_table_says_the_cores_are_unknown_without_a_topology(results_dir):
    """Without a topology the record's cores are null: the row says they are
    unknown rather than a count; a record of such a run from before, whose 1
    was the lab's placeholder (pus_source names no hwloc), says the same; a
    topology's count stays; anything but an integer or null is refused."""
    assert "<th>Cores</th><td>2</td>" in build(results_dir)
    records = fixture_records()
    source = "sched_getaffinity (no topology: hwloc could not load the topology)"
    for machine in ({"cores": None, "pus_source": source}, {"cores": 1, "pus_source": source}):
        records[0] = dict(records[0], **machine)
        write_records(results_dir / "results.jsonl", records)
        assert "<th>Cores</th><td>unknown (no topology)</td>" in build(results_dir)
    records[0] = dict(records[0], cores=1, pus_source="hwloc")
    write_records(results_dir / "results.jsonl", records)
    assert "<th>Cores</th><td>1</td>" in build(results_dir)
    records[0] = dict(records[0], cores="2")
    write_records(results_dir / "results.jsonl", records)
    assert cli.main([str(results_dir)]) == 2
