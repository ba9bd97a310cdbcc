# SPDX-License-Identifier: BSD-2-Clause
"""The five source papers, the experiment prefixes that reproduce them, and the
per-paper scoreboard of verdicts. docs/papers.md says the same for readers of
the source tree; report/tests/test_summary.py (test_papers_page_matches_the_report)
keeps the two in step."""

from dataclasses import dataclass

from . import rules


@dataclass(frozen=True)
class Paper:
    number: str  # "000".."004": the file under shared/papers and the number claims cite
    prefix: str  # the experiment-name prefix, e.g. "lc98"
    authors: str
    title: str
    venue: str
    machine: str  # what the paper measured on


PAPERS = (
    Paper(
        "000",
        "lc98",
        "Steven S. Lumetta, David E. Culler",
        "Managing Concurrent Access for Shared Memory Active Messages",
        "IPPS/SPDP 1998 (12th International Parallel Processing Symposium)",
        "Sun Enterprise 5000",
    ),
    Paper(
        "001",
        "ms98",
        "Maged M. Michael, Michael L. Scott",
        "Relative Performance of Preemption-Safe Locking and Non-Blocking Synchronization "
        "on Multiprogrammed Shared Memory Multiprocessors",
        "IPPS 1997; extended in J. Parallel and Distributed Computing 51(1), 1998 (hence ms98)",
        "SGI Challenge",
    ),
    Paper(
        "002",
        "lf07",
        "Charles Eric LaForest",
        "Message-Passing Concurrency on Shared-Memory Multiprocessors",
        "report, University of Toronto, December 2007",
        "commodity Linux multiprocessor",
    ),
    Paper(
        "003",
        "np99",
        "Dimitrios S. Nikolopoulos, Theodore S. Papatheodorou",
        "A Quantitative Architectural Evaluation of Synchronization Algorithms and Disciplines "
        "on ccNUMA Systems: the Case of the SGI Origin2000",
        "ICS 1999 (13th ACM International Conference on Supercomputing)",
        "SGI Origin2000",
    ),
    Paper(
        "004",
        "dg25",
        "Alexandre Denis (cited in syncq as Denis & Goedefroit)",
        "NBLFQ: a lock-free MPMC queue optimized for low contention",
        "2025 (Inria Bordeaux; the copy in shared/papers names no venue)",
        "x86-64 servers (NewMadeleine)",
    ),
)

OWN = "syncq"  # experiments of syncq's own (floors, po-ring, po-skynet, po-server, locks-cost, ...)


def paper_of(experiment):
    """The Paper an experiment reproduces (by its name's prefix), or None for syncq's own."""
    prefix = experiment.name.split("-", 1)[0]
    return next((p for p in PAPERS if p.prefix == prefix), None)


STATUSES = (rules.HELD, rules.FAILED, rules.INCONCLUSIVE, rules.UNMEASURABLE)


@dataclass
class Score:
    label: str  # "000 Lumetta & Culler (lc98)" or "syncq's own"
    anchor: str  # the papers table's row id
    counts: dict  # status -> number of claims
    experiments: list  # names


def scoreboard(sections):
    """Per paper (in PAPERS order, then syncq's own): the claims' verdicts counted."""
    rows = {p.number: Score(_label(p), f"paper-{p.number}", dict.fromkeys(STATUSES, 0), []) for p in PAPERS}
    rows[OWN] = Score("syncq's own experiments", "paper-own", dict.fromkeys(STATUSES, 0), [])
    for section in sections:
        paper = paper_of(section.result.experiment)
        row = rows[paper.number if paper else OWN]
        row.experiments.append(section.result.experiment.name)
        for verdict in section.verdicts:
            row.counts[verdict.status] += 1
    return [row for row in rows.values() if row.experiments]


def _label(paper):
    surnames = {
        "000": "Lumetta & Culler",
        "001": "Michael & Scott",
        "002": "LaForest",
        "003": "Nikolopoulos & Papatheodorou",
        "004": "Denis & Goedefroit",
    }
    return f"{paper.number} {surnames.get(paper.number, paper.authors)} ({paper.prefix})"
