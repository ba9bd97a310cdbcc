# SPDX-License-Identifier: BSD-2-Clause
"""The report's first answer: which structure to use on this machine, per use.

Each question names where the lab measures it (experiment, metric, the
params that fix the point; the largest thread count measured there unless
the params fix it), and who competes: the registry's structures (syncq's
and the peer libraries'), or every variant of the point (po-ring's Erlang
and Go rings). The pick is the best median; beside it the runner-up and the
best of the other side (syncq vs the peers), each as a factor with its
confidence interval (intervals.py), oriented so that > 1 means the first
named is better. A pick whose interval against the runner-up reaches 1 is a
tie on this machine, and the table says so.
"""

from dataclasses import dataclass

from . import fmt, intervals, rules


@dataclass(frozen=True)
class Question:
    use: str  # the reader's question, e.g. "Queue, many producers and consumers"
    sources: tuple  # ((experiment, metric, {param: value}), ...): the first one measured is used
    everyone: bool = False  # compete every variant, not only registry structures


QUESTIONS = (
    Question(
        "Queue, 1 producer / 1 consumer (throughput)",
        (("queue-1p1c", "throughput", {"mode": "stream"}), ("dg25-prodcons", "throughput", {"threads": 1})),
    ),
    Question("Queue, many producers and consumers (throughput)", (("dg25-prodcons", "throughput", {}),)),
    Question("Queue, message round trip between two threads", (("dg25-latency", "latency", {"mode": "pingpong"}),)),
    Question(
        "Queue with work between operations, oversubscribed 3x (Linux)",
        (("ms98-queue", "time", {"mode": "real", "level": 3, "delay_ns": 6000}),),
    ),
    Question("Stack, contended", (("ms98-stack", "time", {"mode": "dedicated", "level": 1, "delay_ns": 0}),)),
    Question("Priority queue, contended", (("ms98-heap", "time", {"mode": "dedicated", "level": 1, "delay_ns": 0}),)),
    Question("Counter, contended", (("np99-counter", "time", {"work_ns": 0}),)),
    Question("Lock, uncontended", (("locks-cost", "time_per_op", {"phase": "uncontended"}),)),
    Question("Lock, two threads contending", (("locks-cost", "time_per_op", {"phase": "two-threads"}),)),
    Question("Lock under oversubscription", (("locks-cost", "time_per_op", {"phase": "oversubscribed"}),)),
    Question("Barrier", (("np99-barrier", "time", {"wait": "default"}),)),
    Question(
        "Lightweight processes: a message hop in a 1,000-process ring",
        (("po-ring", "hop", {"processes": 1000, "recv": "blocking", "main": "outside"}),),
        everyone=True,
    ),
    Question(
        "Lightweight processes: a 1,000-process ring with main taking part",
        (("po-ring", "hop", {"processes": 1000, "recv": "blocking", "main": "member"}),),
        everyone=True,
    ),
    Question(
        "Lightweight processes: skynet, a tree of a million processes (100,000 at --quick)",
        (("po-skynet", "time", {"leaves": 1000000}), ("po-skynet", "time", {"leaves": 100000})),
        everyone=True,
    ),
    Question(
        "Lightweight processes: a request/reply server, a process per request",
        (("po-server", "request", {}),),
        everyone=True,
    ),
)


@dataclass
class Answer:
    question: Question
    experiment: str  # where it was measured
    place: dict  # the params of the point
    unit: str
    better: str
    pick: object  # load.Point
    runner_up: object  # load.Point or None
    margin: tuple  # (factor, lo, hi) pick vs runner-up, or None
    syncq_best: object  # load.Point or None
    peer_best: object  # load.Point or None
    syncq_vs_peer: tuple  # (factor, lo, hi), > 1: syncq's best is better; or None
    why_missing: str = ""  # set when the question could not be answered


def answer_all(sections):
    by_name = {s.result.experiment.name: s.result.points for s in sections}
    resolutions = {s.result.experiment.name: getattr(s, "resolution", None) for s in sections}
    return [_answer(q, by_name, resolutions) for q in QUESTIONS]


def _answer(question, by_name, resolutions):
    tried = []
    for experiment, metric, where in question.sources:
        points = by_name.get(experiment)
        if points is None:
            tried.append(f"{experiment} was not run")
            continue
        found = [
            p
            for p in points
            if p.metric == metric
            and all(k in p.params and rules.same_param(p.params[k], v) for k, v in where.items())
            and (question.everyone or p.family is not None or p.peer)
        ]
        if "threads" not in where:
            threads = [p.params["threads"] for p in found if rules.is_number(p.params.get("threads"))]
            if threads:
                top = max(threads)
                found = [p for p in found if rules.same_param(p.params.get("threads"), top)]
        if not found:
            tried.append(f"{experiment} has no {metric} point with {fmt.params(where) or 'any params'}")
            continue
        return _rank(question, experiment, found, resolutions.get(experiment) or rules.resolution_of(points))
    return Answer(question, "", {}, "", "", None, None, None, None, None, None, "; ".join(tried))


def _factor(better, winner, other, res):
    """(factor, lo, hi): how many times better winner is than other, with its interval
    (widened by the experiment's launch-to-launch resolution res, as the verdicts are).
    lo and hi are None when either point has fewer samples than a verdict needs
    (rules.MIN_SAMPLES): a factor from so few samples has no interval to quote."""
    if min(len(winner.samples), len(other.samples)) < rules.MIN_SAMPLES:
        if better == "higher":
            return (winner.median / other.median if other.median else float("inf"), None, None)
        return (other.median / winner.median if winner.median else float("inf"), None, None)
    if better == "higher":
        lo, hi = intervals.resolved_ratio_interval(winner, other, res)
        return (winner.median / other.median if other.median else float("inf"), lo, hi)
    lo, hi = intervals.resolved_ratio_interval(other, winner, res)
    return (other.median / winner.median if winner.median else float("inf"), lo, hi)


def _rank(question, experiment, found, res):
    better = found[0].better
    ordered = sorted(found, key=lambda p: p.median, reverse=better == "higher")
    pick = ordered[0]
    runner_up = ordered[1] if len(ordered) > 1 else None
    ours = [p for p in ordered if p.family is not None and not p.peer]
    peers = [p for p in ordered if p.peer]
    syncq_best = ours[0] if ours else None
    peer_best = peers[0] if peers else None
    return Answer(
        question=question,
        experiment=experiment,
        place=dict(pick.params),
        unit=pick.unit,
        better=better,
        pick=pick,
        runner_up=runner_up,
        margin=_factor(better, pick, runner_up, res) if runner_up else None,
        syncq_best=syncq_best,
        peer_best=peer_best,
        syncq_vs_peer=_factor(better, syncq_best, peer_best, res) if syncq_best and peer_best else None,
    )


def is_tie(margin):
    """True when the runner-up is within the interval: the pick is not decisively better."""
    return margin is not None and margin[1] is not None and margin[1] <= 1.0


def is_undecided(margin):
    """True when the factor has no interval (too few samples): neither a win nor a tie."""
    return margin is not None and margin[1] is None
