"""Compare the verdicts of two runs: which claims changed, and the share that did not.

A claim is identified by its experiment and its text; its verdict is one of
held, did not hold, inconclusive, not measurable (the reason of a
not-measurable verdict is not compared: a claim that stays unmeasurable is
stable). Claims present in only one of the runs are listed apart and do not
count towards the share.
"""

from dataclasses import dataclass

from . import load, rules


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

    @property
    def share(self):
        return self.same / self.compared if self.compared else None


def verdicts(results):
    """{(experiment, claim text): Verdict} of every claim of a loaded run."""
    out = {}
    for result in results.experiments:
        for claim in result.experiment.claims:
            out[(result.experiment.name, claim["text"])] = rules.evaluate(claim["rule"], result.points)
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
    )


def compare_files(before_path, after_path):
    return compare(load.load(before_path), load.load(after_path))


def text(comparison):
    """The comparison as plain text, for the command line."""
    c = comparison
    lines = [f"before: run {c.before_run} ({c.before_size}); after: run {c.after_run} ({c.after_size})"]
    if c.before_size != c.after_size:
        lines.append("warning: the runs measured different sizes; their verdicts need not agree")
    if c.compared:
        lines.append(f"{c.same} of {c.compared} verdicts identical ({100.0 * c.share:.1f}%)")
    else:
        lines.append("no claim is in both runs")
    for change in c.changes:
        lines.append(
            f"  {change.experiment}: {change.claim}\n"
            f"      before: {change.before.status}: {change.before.explanation}\n"
            f"      after:  {change.after.status}: {change.after.explanation}"
        )
    for label, keys in (("only before", c.only_before), ("only after", c.only_after)):
        for experiment, claim in keys:
            lines.append(f"  {label}: {experiment}: {claim}")
    return "\n".join(lines)
