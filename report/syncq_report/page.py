# SPDX-License-Identifier: BSD-2-Clause
"""Write the report as one self-contained HTML page (inline CSS, images under plots/)."""

import math
from dataclasses import dataclass, field
from html import escape

from . import compare, fmt, intervals, load, panels, papers, recommend, rules

MACHINE_LABELS = [
    ("cpu_model", "CPU model"),
    ("cores", "Cores"),
    ("pus", "PUs"),
    ("pus_source", "PUs counted by"),
    ("planned_pus", "Planned for (PUs)"),
    ("kernel", "Kernel"),
    ("compiler", "Compiler"),
    ("flags", "Flags"),
    ("build_type", "Build type"),
    ("git_revision", "Git revision"),
    ("date", "Date"),
    ("size", "Size"),
    ("reps", "Reps per launch"),
    ("launches", "Launches"),
    ("suite_budget_s", "Suite budget (s)"),
    ("pinning", "Pinning"),
    ("queue_wait", "Queue waiting (dg25)"),
    ("perf_counters", "Perf counters"),
    ("perf_events", "Events counted per sample"),
    ("po_clock_gate", "Postoffice deadline clock"),
    ("command", "Command"),
]

# CSS class of each verdict status; the colours live in STYLE.
VERDICT_CLASS = {
    rules.HELD: "held",
    rules.FAILED: "failed",
    rules.INCONCLUSIVE: "inconclusive",
    rules.UNMEASURABLE: "unmeasurable",
}
VERDICT_BADGE = {
    rules.HELD: "held",
    rules.FAILED: "did not hold",
    rules.INCONCLUSIVE: "inconclusive",
    rules.UNMEASURABLE: "not measurable here",
}

STYLE = """
body { font: 15px/1.45 system-ui, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328;
       max-width: 1100px; margin: 2em auto; padding: 0 1.2em; }
h1 { margin-bottom: .2em; }
h2 { border-bottom: 2px solid #d0d7de; padding-bottom: .2em; margin-top: 2.2em; }
h3 { margin: 1.4em 0 .4em; }
/* a table wider than the page scrolls inside its own box: the page never scrolls sideways */
table { border-collapse: collapse; margin: .6em 0; font-size: 14px; display: block; max-width: 100%;
        overflow-x: auto; }
th, td { border: 1px solid #d0d7de; padding: .25em .6em; text-align: left; vertical-align: top; }
thead th, table.machine th { background: #f6f8fa; }
tbody tr:nth-child(even) td { background: #fafbfc; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code { font: 13px ui-monospace, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
.meta { color: #57606a; margin-top: 0; }
.description { max-width: 60em; }
ul.claims { list-style: none; padding: 0; }
li.claim { border-left: 6px solid #8c959f; background: #f6f8fa; padding: .4em .8em; margin: .5em 0; }
li.claim.held { border-color: #1a7f37; }
li.claim.failed { border-color: #cf222e; }
li.claim.inconclusive { border-color: #bf8700; }
.verdict { display: inline-block; color: #fff; background: #6e7781; font-weight: 600;
           font-size: 13px; border-radius: 3px; padding: 0 .5em; margin-right: .6em; }
.held .verdict { background: #1a7f37; }
.failed .verdict { background: #cf222e; }
.inconclusive .verdict { background: #bf8700; }
.why { margin: .2em 0 0; color: #57606a; font-size: 14px; }
.tally span { font-size: 13px; margin-left: .6em; }
.tally .held { color: #1a7f37; }
.tally .failed { color: #cf222e; }
.tally .unmeasurable { color: #6e7781; }
.tally .inconclusive { color: #9a6700; }
td.held { color: #1a7f37; font-weight: 600; }
td.failed { color: #cf222e; font-weight: 600; }
td.inconclusive { color: #9a6700; font-weight: 600; }
td.unmeasurable { color: #6e7781; }
.tie { color: #9a6700; }
figure { margin: 1em 0; }
img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
.empty { color: #57606a; font-style: italic; }
table.standings tr.behind td:last-child { color: #cf222e; font-weight: 600; }
table.standings tr.ahead td:last-child { color: #1a7f37; font-weight: 600; }
.machine-differs { display: inline-block; font-size: 12px; color: #9a6700; }
"""


@dataclass
class Section:
    """Everything shown for one experiment."""

    result: object  # load.ExperimentResult
    anchor: str  # HTML id of the section
    verdicts: list  # rules.Verdict per claim, in claim order
    panels: list  # panels.Panel
    plots: list  # plots.Plot per panel
    standings: list = field(default_factory=list)  # standings.Standing, syncq vs the best peer
    resolution: object = None  # intervals.Resolution of the experiment's points (None: computed here)


@dataclass
class Summary:
    """What the page says before the sections: the answers first."""

    answers: list = field(default_factory=list)  # recommend.Answer
    scores: list = field(default_factory=list)  # papers.Score
    stability: object = None  # compare.Comparison against an earlier run, or None
    previous: object = None  # the earlier results file's path, or None


def render(title, results, sections, summary=None):
    """The whole page as a string."""
    summary = summary or Summary()
    parts = [
        f"<h1>{escape(title)}</h1>",
        _answers(summary.answers, sections),
        _scoreboard(summary.scores, sections),
        _stability(summary.stability, summary.previous),
        _papers_table(),
        _machines(results.machines, results.run_notes, results.experiments),
        _contents(sections),
    ]
    parts.extend(_section(section) for section in sections)
    body = "\n".join(part for part in parts if part)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def _machines(machines, run_notes, experiments=()):
    """The machine records, one column per run the report draws on, and the runs' own notes.
    The postoffice's deadline clock is the record's, at the run's start, and where the
    experiments drawn from that run found it changed (load.gate_text)."""
    head = "".join(f"<th>run <code>{escape(m.run_id)}</code></th>" for m in machines)

    def shown(key, m):
        if key == "cores":
            return load.cores_text(m.fields)
        value = m.fields.get(key, _machine_default(key, m))
        if key != "po_clock_gate":
            return value
        changes = [c for r in experiments if r.experiment.run_id == m.run_id for c in load.gate_changes(r)]
        return load.gate_text(value, changes) if changes else value

    rows = [
        f"<tr><th>{label}</th>" + "".join(f"<td>{_machine_value(key, shown(key, m))}</td>" for m in machines) + "</tr>"
        for key, label in MACHINE_LABELS
    ]
    return (
        '<section id="machine">\n<h2>Machine</h2>\n<table class="machine">\n'
        f"<thead><tr><th></th>{head}</tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + "\n</tbody>\n</table>\n"
        + _peers(machines)
        + _run_notes(run_notes)
        + "</section>"
    )


def _peers(machines):
    """The peer libraries of each run: what each registered, or why it is absent."""
    parts = []
    for m in machines:
        peers = m.fields.get("peers")
        if peers is None:
            continue
        rows = [
            f"<tr><td><code>{escape(p['library'])}</code></td><td>{escape(p['package'])}</td>"
            + (
                f'<td class="num">{p["registered"]}</td><td></td>'
                if p["registered"] > 0
                else f'<td class="num">0</td><td>{escape(p["why"])}</td>'
            )
            + "</tr>"
            for p in peers
        ]
        note = m.fields.get("peers_note")
        parts.append(
            f"<h3>Peer libraries (run <code>{escape(m.run_id)}</code>)</h3>\n"
            '<table class="peers">\n<thead><tr><th>library</th><th>from</th><th>structures</th>'
            "<th>why none</th></tr></thead>\n<tbody>\n"
            + "\n".join(rows)
            + "\n</tbody>\n</table>\n"
            + (f"<p>{escape(note)}</p>\n" if note else "")
        )
    return "".join(parts)


# A ratio this close to 1 prints as 1.00: calling it ahead or behind would
# read as a verdict the printed number does not show.
LEVEL_TOLERANCE = 0.005


def _standing_word(s):
    """ahead, behind, or level when the ratio prints as 1.00."""
    if s.ratio is not None and abs(s.ratio - 1.0) < LEVEL_TOLERANCE:
        return "level"
    return "ahead" if s.ahead else "behind"


def _standings(standings):
    """syncq's algorithms against the best peer at each point (standings.py)."""
    if not standings:
        return ""
    head = "".join(
        f"<th>{name}</th>"
        for name in ("algorithm", "params", "metric", "median", "best peer", "its median", "unit", "ratio", "standing")
    )
    rows = []
    for s in standings:
        ratio = "-" if s.ratio is None else fmt.num(s.ratio)
        word = _standing_word(s)
        rows.append(
            f'<tr class="{word}"><td>{escape(s.algorithm)}</td><td>{escape(fmt.params(s.params))}</td>'
            f"<td>{escape(s.metric)} ({escape(s.better)} is better)</td>"
            f'<td class="num">{fmt.num(s.median)}</td><td>{escape(s.best_peer)}</td>'
            f'<td class="num">{fmt.num(s.peer_median)}</td><td>{escape(s.unit)}</td>'
            f'<td class="num">{ratio}</td><td>{word}</td></tr>'
        )
    return (
        "<h3>Standings against the peer libraries</h3>\n"
        '<p class="description">Each syncq algorithm beside the best peer library measured at the same '
        "point of the same run; ratio = its median / the best peer's.</p>\n"
        '<table class="standings">\n'
        f"<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>"
    )


def _factor_cell(factor):
    """"1.8x [1.5-2.1]" for a (factor, lo, hi), or "-"."""
    if factor is None:
        return "-"
    value, lo, hi = factor
    if lo is None:
        return f"{fmt.num(value)}x [no interval: fewer than {rules.MIN_SAMPLES} samples]"
    return f"{fmt.num(value)}x [{fmt.num(lo)}-{fmt.num(hi)}]"


def _answers(answers, sections):
    """Which structure to use on this machine, per use (recommend.py)."""
    if not answers:
        return ""
    anchors = {s.result.experiment.name: s.anchor for s in sections}
    level = round(intervals.LEVEL * 100)
    rows = []
    for a in answers:
        use = escape(a.question.use)
        if a.pick is None:
            rows.append(f'<tr><td>{use}</td><td colspan="5" class="empty">not measured: {escape(a.why_missing)}</td></tr>')
            continue
        where = (
            f'<a href="#{anchors.get(a.experiment, "")}"><code>{escape(a.experiment)}</code></a> '
            f"{escape(fmt.params(a.place))}"
        )
        margin = _factor_cell(a.margin)
        if recommend.is_tie(a.margin):
            margin += ' <span class="tie">(a tie within the interval)</span>'
        elif recommend.is_undecided(a.margin):
            margin += ' <span class="tie">(too few samples to tell)</span>'
        runner = f"<code>{escape(a.runner_up.algorithm)}</code> {margin}" if a.runner_up else "-"
        if a.syncq_vs_peer is not None:
            versus = (
                f"<code>{escape(a.syncq_best.algorithm)}</code> vs <code>{escape(a.peer_best.algorithm)}</code>: "
                f"{_factor_cell(a.syncq_vs_peer)}"
            )
        else:
            versus = "no peer measured here" if a.syncq_best else "-"
        rows.append(
            f"<tr><td>{use}</td><td><code>{escape(a.pick.algorithm)}</code>{' (peer)' if a.pick.peer else ''}</td>"
            f'<td class="num">{fmt.num(a.pick.median)} {escape(a.unit)}</td>'
            f"<td>{runner}</td><td>{versus}</td><td>{where}</td></tr>"
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "use",
            "pick on this machine",
            "its median",
            f"runner-up, and how much better the pick is [{level}% CI]",
            f"syncq's best vs the best peer library (&gt; 1: syncq ahead) [{level}% CI]",
            "measured in",
        )
    )
    return (
        '<section id="answers">\n<h2>Which structure to use on this machine</h2>\n'
        '<p class="description">For each use, the best median the lab measured in this run, the runner-up '
        "and syncq's best against the best peer library, each as a factor (&gt; 1: the first named is "
        f"better) with its {level}% bootstrap confidence interval over repetitions and launches. A pick "
        "whose interval against the runner-up reaches 1 is a tie on this machine.</p>\n"
        f'<table class="answers">\n<thead><tr>{head}</tr></thead>\n<tbody>\n'
        + "\n".join(rows)
        + "\n</tbody>\n</table>\n</section>"
    )


def _scoreboard(scores, sections):
    """Per paper: how its claims fared in this run."""
    if not scores:
        return ""
    head = (
        "<th>paper</th>"
        + "".join(f"<th>{VERDICT_BADGE[s]}</th>" for s in papers.STATUSES)
        + "<th>experiments</th>"
    )
    anchors = {s.result.experiment.name: s.anchor for s in sections}
    rows = []
    totals = dict.fromkeys(papers.STATUSES, 0)
    for score in scores:
        cells = "".join(
            f'<td class="num {VERDICT_CLASS[status] if score.counts[status] else ""}">{score.counts[status]}</td>'
            for status in papers.STATUSES
        )
        for status in papers.STATUSES:
            totals[status] += score.counts[status]
        links = ", ".join(f'<a href="#{anchors[name]}"><code>{escape(name)}</code></a>' for name in score.experiments)
        rows.append(f'<tr><td><a href="#{score.anchor}">{escape(score.label)}</a></td>{cells}<td>{links}</td></tr>')
    total = "".join(f'<td class="num">{totals[s]}</td>' for s in papers.STATUSES)
    rows.append(f"<tr><th>all claims</th>{total}<td></td></tr>")
    level = round(intervals.LEVEL * 100)
    return (
        '<section id="scoreboard">\n<h2>How each paper fared</h2>\n'
        '<p class="description">Every claim is judged on the confidence interval of the number it bounds '
        f"({level}% bootstrap over repetitions and launches): held or did not hold only when the whole "
        "interval is on one side of the bound, inconclusive when it contains the bound.</p>\n"
        f'<table class="scoreboard">\n<thead><tr>{head}</tr></thead>\n<tbody>\n'
        + "\n".join(rows)
        + "\n</tbody>\n</table>\n</section>"
    )


def _stability(comparison, previous):
    """The verdicts that changed since an earlier run (compare.py)."""
    if comparison is None:
        return ""
    c = comparison
    share = (
        f"{c.same} of {c.compared} verdicts identical ({100.0 * c.share:.1f}%)"
        if c.compared
        else "no claim in both runs"
    )
    warn = (
        f"<p>The runs measured different sizes ({escape(c.before_size)} before, {escape(c.after_size)} now): "
        "their verdicts need not agree.</p>\n"
        if c.before_size != c.after_size
        else ""
    )
    if c.machine:
        warn += (
            f"<p>{escape(_sentence(compare.machine_warning(c)))}:</p>\n"
            '<ul class="machine-differences">\n'
            + "".join(f"<li>{_difference(d)}</li>\n" for d in c.machine)
            + "</ul>\n"
        )
    rows = [
        f"<tr><td><code>{escape(ch.experiment)}</code>{_marks(c.marks(ch.experiment))}</td>"
        f"<td>{escape(ch.claim)}</td>"
        f'<td class="{VERDICT_CLASS[ch.before.status]}">{VERDICT_BADGE[ch.before.status]}</td>'
        f'<td class="{VERDICT_CLASS[ch.after.status]}">{VERDICT_BADGE[ch.after.status]}</td>'
        f"<td>{escape(ch.after.explanation)}</td></tr>"
        for ch in c.changes
    ]
    table = (
        '<table class="changes">\n<thead><tr><th>experiment</th><th>claim</th><th>before</th><th>now</th>'
        "<th>now, why</th></tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>\n"
        if rows
        else ""
    )
    apart = len(c.only_before) + len(c.only_after)
    return (
        '<section id="stability">\n<h2>Stability against the previous run</h2>\n'
        f"<p>This run ({escape(c.after_run)}) against <code>{escape(str(previous))}</code> (run "
        f"{escape(c.before_run)}): <strong>{share}</strong>"
        + (f"; {apart} claims are in only one of the two runs" if apart else "")
        + ".</p>\n"
        + warn
        + table
        + "</section>"
    )


def _difference(d):
    """One machine difference (compare.MachineDifference) as HTML."""
    scope = ", ".join(f"<code>{escape(e)}</code>" for e in d.experiments) if d.scoped else "every experiment"
    values = "".join(
        f"<br>before: <code>{escape(x)}</code><br>now: <code>{escape(y)}</code>" for x, y in zip(d.before, d.after)
    )
    return f"<code>{escape(d.field)}</code> (moves {scope}): {escape(d.why)}{values}"


def _sentence(text):
    return text[:1].upper() + text[1:]


def _marks(fields):
    """The mark of a changed claim whose experiment a machine difference moves."""
    if not fields:
        return ""
    return f' <span class="machine-differs">machine differs: {escape(", ".join(fields))}</span>'


def _papers_table():
    """The papers the experiments reproduce, and the prefixes that name them."""
    rows = [
        f'<tr id="paper-{p.number}"><td>{p.number}</td><td><code>{p.prefix}-*</code></td>'
        f"<td>{escape(p.authors)}</td><td>{escape(p.title)}</td><td>{escape(p.venue)}</td>"
        f"<td>{escape(p.machine)}</td></tr>"
        for p in papers.PAPERS
    ]
    rows.append(
        '<tr id="paper-own"><td>-</td><td>other names</td><td colspan="4">syncq\'s own experiments: the '
        "machine floors (<code>phys</code>), lock costs, the postoffice ring and context switches, "
        "and the like</td></tr>"
    )
    return (
        '<section id="papers">\n<h2>The papers</h2>\n'
        '<p class="description">Claims cite the papers by number (000-004); experiment names start with the '
        "prefix of the paper they reproduce.</p>\n"
        '<table class="papers">\n<thead><tr><th>number</th><th>experiments</th><th>authors</th><th>title</th>'
        "<th>venue</th><th>measured on</th></tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + "\n</tbody>\n</table>\n</section>"
    )


def _machine_default(key, machine):
    """A field older results lack: a run planned for its own PUs, no suite budget, one launch,
    the queue waiting the lab had before --queue-wait, no event counted before the workers
    counted theirs, nothing known of the postoffice's clock before the record said it."""
    if key == "planned_pus":
        return machine.fields.get("pus", 1)
    if key == "queue_wait":
        return "pause"
    if key == "perf_events":
        return "none (results older than the workers' event counters)"
    if key == "po_clock_gate":
        return "not recorded (results older than the record of the postoffice's clock gate)"
    if key == "pus_source":
        return "not recorded (results older than the record of the count's source)"
    return 0 if key == "suite_budget_s" else 1


def _machine_value(key, value):
    text = escape(str(value))
    return f"<code>{text}</code>" if key in ("flags", "command", "git_revision") else text


def _run_notes(notes):
    if not notes:
        return ""
    items = "".join(
        "<li>" + (f"<code>{escape(n.experiment)}</code>: " if n.experiment else "") + f"{escape(n.text)}</li>"
        for n in notes
    )
    return f"<h3>Run notes</h3>\n<ul>{items}</ul>\n"


def _contents(sections):
    items = [
        '<li><a href="#answers">Which structure to use on this machine</a></li>',
        '<li><a href="#scoreboard">How each paper fared</a></li>',
        '<li><a href="#papers">The papers</a></li>',
        '<li><a href="#machine">Machine</a></li>',
    ]
    for section in sections:
        experiment = section.result.experiment
        items.append(
            f'<li><a href="#{section.anchor}">{escape(experiment.title)}</a> '
            f"<code>{escape(experiment.name)}</code>{_tally(section.verdicts)}</li>"
        )
    return '<nav id="contents">\n<h2>Contents</h2>\n<ol>\n' + "\n".join(items) + "\n</ol>\n</nav>"


def _tally(verdicts):
    """Counts of each verdict, e.g. "2 held  1 did not hold", coloured like the claims."""
    counts = [
        f'<span class="{VERDICT_CLASS[status]}">{n} {VERDICT_BADGE[status]}</span>'
        for status in VERDICT_CLASS
        if (n := sum(v.status == status for v in verdicts))
    ]
    return f'<span class="tally">{"".join(counts)}</span>' if counts else ""


def _section(section):
    experiment = section.result.experiment
    return "\n".join(
        [
            f'<section class="experiment" id="{section.anchor}">',
            f"<h2>{escape(experiment.title)}</h2>",
            f'<p class="meta"><code>{escape(experiment.name)}</code> &middot; {escape(experiment.paper)} '
            f"&middot; {escape(experiment.figure)} &middot; run <code>{escape(experiment.run_id)}</code></p>",
            f'<p class="description">{escape(experiment.description)}</p>',
            _gate(section.result),
            _claims(experiment.claims, section.verdicts),
            _resolution(section.resolution or rules.resolution_of(section.result.points)),
            _plots(section.plots),
            _counts(section.panels),
            _standings(section.standings),
            _numbers(section.panels, experiment.x),
            _notes(section.result.notes),
            "</section>",
        ]
    )


def _gate(result):
    """A line where the postoffice's deadline clock changed during the run (a rate check tripped)."""
    changes = load.gate_changes(result)
    if not changes:
        return ""
    text = load.gate_text((result.machine or {}).get("po_clock_gate"), changes, named=False)
    return (
        f'<p class="gate">Postoffice deadline clock: {escape(text)}. A point measured after a change paid a '
        "clock read at every fiber switch while a deadline was pending (docs/reliability.md, "
        '"The rate checked as it runs").</p>'
    )


def _resolution(res):
    """One line: how much this experiment's ratios move between launches of the run."""
    if res.ratio_sd is None:
        return ""
    z = intervals.critical_value()
    panels = sorted(res.panel_sd.values())
    spread = (
        f"; its panels from &times;{fmt.num(math.exp(panels[0]))} to &times;{fmt.num(math.exp(panels[-1]))}"
        if len(panels) > 1
        else ""
    )
    return (
        f'<p class="resolution">Launch-to-launch resolution: a ratio moves by about '
        f"&times;{fmt.num(math.exp(res.ratio_sd))} between launches (one standard deviation, pooled "
        f"over {res.comparisons} comparison{'' if res.comparisons == 1 else 's'} in {res.launches} launches"
        f"{spread}); with the run-to-run spread (&times;{fmt.num(math.exp(res.run_sd))}), every interval "
        "above is at least &times;/&divide;"
        f"{fmt.num(math.exp(z * intervals.floor_sd(min(panels or [res.ratio_sd]), res.launches, res.run_sd)))} "
        "around its estimate (docs/results-format.md, Resolution).</p>\n"
    )


def _claims(claims, verdicts):
    if not claims:
        return '<h3>Claims</h3>\n<p class="empty">No claims declared.</p>'
    items = [
        f'<li class="claim {VERDICT_CLASS[v.status]}"><span class="verdict">{VERDICT_BADGE[v.status]}</span>'
        f'{escape(claim["text"])}<p class="why">{escape(v.explanation)}</p></li>'
        for claim, v in zip(claims, verdicts, strict=True)
    ]
    return '<h3>Claims</h3>\n<ul class="claims">\n' + "\n".join(items) + "\n</ul>"


def _plots(plots):
    if not plots:
        return '<h3>Plots</h3>\n<p class="empty">No points were measured.</p>'
    figures = [
        f'<figure><img src="plots/{escape(p.file)}" width="{p.width}" height="{p.height}" '
        f'alt="{escape(p.caption)}"></figure>'
        for p in plots
    ]
    return "<h3>Plots</h3>\n" + "\n".join(figures)


def _counts(experiment_panels):
    """The count metrics (panels.COUNT_UNIT), compactly: a row per algorithm and params,
    a column per count, each cell the total over the point's runs and its median run.
    The verdicts that read them (rule op "exercised") read the same points."""
    points = [p for panel in experiment_panels if panels.is_count(panel) for p in panel.points]
    if not points:
        return ""
    metrics = list(dict.fromkeys(p.metric for p in points))
    rows = {}
    for p in points:
        rows.setdefault((p.algorithm, fmt.params(p.params)), {})[p.metric] = p
    head = "".join(f"<th>{escape(name)}</th>" for name in ["algorithm", "params", *metrics])
    body = []
    for (algorithm, params), found in rows.items():
        cells = [f"<td>{escape(algorithm)}</td>", f"<td>{escape(params)}</td>"]
        for metric in metrics:
            p = found.get(metric)
            if p is None:
                cells.append("<td></td>")
                continue
            runs = len(p.samples)
            total = sum(p.samples)
            cells.append(
                f'<td class="num">{fmt.param_value(total)} over {runs} run{"" if runs == 1 else "s"} '
                f"(median {fmt.param_value(p.median)})</td>"
            )
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        '<h3>Counts</h3>\n<p class="counts">How often each run counted what the counts name (not plotted: '
        "counts, not costs).</p>\n"
        f'<table class="numbers counts">\n<thead><tr>{head}</tr></thead>\n<tbody>\n'
        + "\n".join(body)
        + "\n</tbody>\n</table>"
    )


def _numbers(experiment_panels, x):
    if not experiment_panels:
        return ""
    head = "".join(
        f"<th>{name}</th>"
        for name in (
            "algorithm",
            "params",
            "metric",
            "median",
            f"{round(intervals.LEVEL * 100)}% CI of the median",
            "min",
            "max",
            "unit",
            "samples",
            "counters",
        )
    )
    rows = [_number_row(point) for panel in experiment_panels for point in panels.table_order(panel, x)]
    return (
        f'<h3>Numbers</h3>\n<table class="numbers">\n<thead><tr>{head}</tr></thead>\n<tbody>\n'
        + "\n".join(rows)
        + "\n</tbody>\n</table>"
    )


def _number_row(point):
    counters = ", ".join(f"{escape(k)}={fmt.num(v)}" for k, v in sorted(point.counters.items()))
    lo, hi = intervals.median_interval(point)
    launches = len(set(point.launches or [0]))
    cells = [
        f"<td>{escape(point.algorithm)}</td>",
        f"<td>{escape(fmt.params(point.params))}</td>",
        f"<td>{escape(point.metric)}</td>",
        f'<td class="num">{fmt.num(point.median)}</td>',
        f'<td class="num">{fmt.num(lo)}-{fmt.num(hi)}</td>',
        *(f'<td class="num">{fmt.num(v)}</td>' for v in (point.min, point.max)),
        f"<td>{escape(point.unit)}</td>",
        f'<td class="num">{len(point.samples)}' + (f" ({launches} launches)" if launches > 1 else "") + "</td>",
        f"<td>{counters}</td>",
    ]
    return "<tr>" + "".join(cells) + "</tr>"


def _notes(notes):
    if not notes:
        return ""
    return "<h3>Notes</h3>\n<ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>"
