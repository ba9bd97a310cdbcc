"""Write the report as one self-contained HTML page (inline CSS, images under plots/)."""

from dataclasses import dataclass, field
from html import escape

from . import fmt, panels, rules

MACHINE_LABELS = [
    ("cpu_model", "CPU model"),
    ("cores", "Cores"),
    ("pus", "PUs"),
    ("kernel", "Kernel"),
    ("compiler", "Compiler"),
    ("flags", "Flags"),
    ("build_type", "Build type"),
    ("git_revision", "Git revision"),
    ("date", "Date"),
    ("size", "Size"),
    ("reps", "Reps"),
    ("pinning", "Pinning"),
    ("perf_counters", "Perf counters"),
    ("command", "Command"),
]

# CSS class of each verdict status; the colours live in STYLE.
VERDICT_CLASS = {rules.HELD: "held", rules.FAILED: "failed", rules.UNMEASURABLE: "unmeasurable"}
VERDICT_BADGE = {rules.HELD: "held", rules.FAILED: "did not hold", rules.UNMEASURABLE: "not measurable here"}

STYLE = """
body { font: 15px/1.45 system-ui, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328;
       max-width: 1100px; margin: 2em auto; padding: 0 1.2em; }
h1 { margin-bottom: .2em; }
h2 { border-bottom: 2px solid #d0d7de; padding-bottom: .2em; margin-top: 2.2em; }
h3 { margin: 1.4em 0 .4em; }
table { border-collapse: collapse; margin: .6em 0; font-size: 14px; }
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
.verdict { display: inline-block; color: #fff; background: #6e7781; font-weight: 600;
           font-size: 13px; border-radius: 3px; padding: 0 .5em; margin-right: .6em; }
.held .verdict { background: #1a7f37; }
.failed .verdict { background: #cf222e; }
.why { margin: .2em 0 0; color: #57606a; font-size: 14px; }
.tally span { font-size: 13px; margin-left: .6em; }
.tally .held { color: #1a7f37; }
.tally .failed { color: #cf222e; }
.tally .unmeasurable { color: #6e7781; }
figure { margin: 1em 0; }
img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
.empty { color: #57606a; font-style: italic; }
table.standings tr.behind td:last-child { color: #cf222e; font-weight: 600; }
table.standings tr.ahead td:last-child { color: #1a7f37; font-weight: 600; }
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


def render(title, results, sections):
    """The whole page as a string."""
    parts = [
        f"<h1>{escape(title)}</h1>",
        _machines(results.machines, results.run_notes),
        _contents(sections),
    ]
    parts.extend(_section(section) for section in sections)
    body = "\n".join(part for part in parts if part)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def _machines(machines, run_notes):
    """The machine records, one column per run the report draws on, and the runs' own notes."""
    head = "".join(f"<th>run <code>{escape(m.run_id)}</code></th>" for m in machines)
    rows = [
        f"<tr><th>{label}</th>"
        + "".join(f"<td>{_machine_value(key, m.fields[key])}</td>" for m in machines)
        + "</tr>"
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
    items = ['<li><a href="#machine">Machine</a></li>']
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
            _claims(experiment.claims, section.verdicts),
            _plots(section.plots),
            _standings(section.standings),
            _numbers(section.panels, experiment.x),
            _notes(section.result.notes),
            "</section>",
        ]
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


def _numbers(experiment_panels, x):
    if not experiment_panels:
        return ""
    head = "".join(
        f"<th>{name}</th>"
        for name in ("algorithm", "params", "metric", "median", "min", "max", "unit", "counters")
    )
    rows = [_number_row(point) for panel in experiment_panels for point in panels.table_order(panel, x)]
    return (
        f'<h3>Numbers</h3>\n<table class="numbers">\n<thead><tr>{head}</tr></thead>\n<tbody>\n'
        + "\n".join(rows)
        + "\n</tbody>\n</table>"
    )


def _number_row(point):
    counters = ", ".join(f"{escape(k)}={fmt.num(v)}" for k, v in sorted(point.counters.items()))
    cells = [
        f"<td>{escape(point.algorithm)}</td>",
        f"<td>{escape(fmt.params(point.params))}</td>",
        f"<td>{escape(point.metric)}</td>",
        *(f'<td class="num">{fmt.num(v)}</td>' for v in (point.median, point.min, point.max)),
        f"<td>{escape(point.unit)}</td>",
        f"<td>{counters}</td>",
    ]
    return "<tr>" + "".join(cells) + "</tr>"


def _notes(notes):
    if not notes:
        return ""
    return "<h3>Notes</h3>\n<ul>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>"
