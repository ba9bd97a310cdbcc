"""Evaluate the RULE objects of docs/results-format.md against one run's points.

Evaluation never raises: a rule that cannot be applied, whatever the reason,
is "not measurable here" with the reason.

A bound is judged on the confidence interval of the compared statistic
(intervals.py), not on its point estimate alone: held when the whole
interval is on the claim's side of the bound, did not hold when the whole
interval is on the other side, inconclusive when the interval contains the
bound (the run cannot tell; the explanation shows the interval).
"""

from dataclasses import dataclass

from . import fmt, intervals

HELD = "held"
FAILED = "did not hold"
INCONCLUSIVE = "inconclusive"
UNMEASURABLE = "not measurable"

# Deeper "all"/"any" nesting is refused rather than risking Python's recursion limit.
MAX_DEPTH = 32


@dataclass(frozen=True)
class Verdict:
    status: str  # HELD, FAILED, INCONCLUSIVE or UNMEASURABLE
    explanation: str  # one line carrying the numbers, or why it is not measurable
    interval: object = None  # (lo, hi) of the compared statistic, for a single bound

    @property
    def label(self):
        """The verdict as the format spells it, e.g. "not measurable here: <why>"."""
        if self.status == UNMEASURABLE:
            return f"{UNMEASURABLE} here: {self.explanation}"
        return self.status


class _Unmeasurable(Exception):
    """Raised inside an evaluation to end it with a not-measurable verdict."""


def evaluate(rule, points, depth=0):
    """Evaluate rule against points (the experiment's points of one run)."""
    try:
        if depth > MAX_DEPTH:
            raise _Unmeasurable(f"rules nested deeper than {MAX_DEPTH}")
        if not isinstance(rule, dict):
            raise _Unmeasurable("malformed rule: not an object")
        if "op" not in rule:
            raise _Unmeasurable("malformed rule: no 'op'")
        op = rule["op"]
        handler = _OPS.get(op) if isinstance(op, str) else None
        if handler is None:
            raise _Unmeasurable(f"unknown rule op '{op}'")
        return handler(rule, points, depth)
    except _Unmeasurable as reason:
        return Verdict(UNMEASURABLE, str(reason))


_last_resolution = (None, None)  # (points, Resolution): the experiment being evaluated


def resolution_of(points):
    """intervals.resolution(points), computed once per experiment's list of points
    (the verdicts of an experiment, its section and its recommendations share it)."""
    global _last_resolution
    if _last_resolution[0] is not points:
        _last_resolution = (points, intervals.resolution(points))
    return _last_resolution[1]


def _decide(interval, bound, above):
    """HELD when the whole interval is on the claim's side of bound, FAILED when
    it is wholly on the other side, INCONCLUSIVE when it contains the bound."""
    lo, hi = interval
    if above:
        return HELD if lo > bound else FAILED if hi <= bound else INCONCLUSIVE
    return HELD if hi < bound else FAILED if lo >= bound else INCONCLUSIVE


def _ci(interval):
    """" [95% CI lo-hi]" for an explanation."""
    lo, hi = interval
    return f" [{round(intervals.LEVEL * 100)}% CI {fmt.num(lo)}-{fmt.num(hi)}]"


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_text(value):
    return isinstance(value, str)


def same_param(a, b):
    """Param equality where 4 == 4.0 but "4" != 4 and true != 1."""
    if is_number(a) and is_number(b):
        return a == b
    return type(a) is type(b) and a == b


def _field(rule, name, valid, description, default=None):
    value = rule.get(name, default)
    if value is None or not valid(value):
        raise _Unmeasurable(f"malformed rule: '{name}' must be {description}")
    return value


def _ratio_below(rule, points, depth):
    return _ratio(rule, points, above=False)


def _ratio_above(rule, points, depth):
    return _ratio(rule, points, above=True)


def _ratio(rule, points, above):
    metric = _field(rule, "metric", _is_text, "a string")
    num = _field(rule, "num", _is_text, "a string")
    den = _field(rule, "den", _is_text, "a string")
    bound = _field(rule, "bound", is_number, "a number")
    where = _field(rule, "where", lambda v: isinstance(v, dict), "an object", default={})
    min_threads = _field(rule, "min_threads", is_number, "a number", default=1)
    num_points = _matching(points, num, metric, where)
    den_points = _matching(points, den, metric, where)
    at = rule.get("at", "max_threads")
    key, threads = _where_at(at, num_points, den_points, num, den)
    if key == "threads" and threads < min_threads:
        chosen = f"the largest measured for both {num} and {den}" if at == "max_threads" else "from 'at'"
        raise _Unmeasurable(
            f"threads={fmt.param_value(threads)} ({chosen}) is below "
            f"min_threads={fmt.param_value(min_threads)}"
        )
    top = _one_at(num_points, num, threads, key)
    bottom = _one_at(den_points, den, threads, key)
    if bottom.median == 0:
        raise _Unmeasurable(f"median of {den} is 0 at {key}={fmt.param_value(threads)}")
    ratio = top.median / bottom.median
    interval = intervals.resolved_ratio_interval(top, bottom, resolution_of(points))
    place = ", ".join(
        [f"{key}={fmt.param_value(threads)}"]
        + [f"{k}={fmt.param_value(value)}" for k, value in where.items() if k != key]
    )
    explanation = (
        f"{num}/{den} = {fmt.num(ratio)}{_ci(interval)} at {place} (bound {'>' if above else '<'} {bound}; "
        f"{metric} {fmt.num(top.median)} {top.unit} / {fmt.num(bottom.median)} {bottom.unit})"
    )
    return Verdict(_decide(interval, bound, above), explanation, interval)


def _value_below(rule, points, depth):
    return _value(rule, points, above=False)


def _value_above(rule, points, depth):
    return _value(rule, points, above=True)


def _value(rule, points, above):
    """An absolute bound on one algorithm's median, e.g. "CAS retries under 3.5 %"."""
    metric = _field(rule, "metric", _is_text, "a string")
    algorithm = _field(rule, "algo", _is_text, "a string")
    bound = _field(rule, "bound", is_number, "a number")
    where = _field(rule, "where", lambda v: isinstance(v, dict), "an object", default={})
    min_threads = _field(rule, "min_threads", is_number, "a number", default=1)
    found = _matching(points, algorithm, metric, where)
    at = rule.get("at", "max_threads")
    key, value = _where_at(at, found, found, algorithm, algorithm)
    if key == "threads" and value < min_threads:
        raise _Unmeasurable(
            f"threads={fmt.param_value(value)} is below min_threads={fmt.param_value(min_threads)}"
        )
    p = _one_at(found, algorithm, value, key)
    interval = intervals.resolved_median_interval(p, resolution_of(points))
    place = ", ".join(
        [f"{key}={fmt.param_value(value)}"] + [f"{k}={fmt.param_value(v)}" for k, v in where.items() if k != key]
    )
    return Verdict(
        _decide(interval, bound, above),
        f"{algorithm} {metric} = {fmt.num(p.median)} {p.unit}{_ci(interval)} at {place} "
        f"(bound {'>' if above else '<'} {bound})",
        interval,
    )


def _peer_ratio_below(rule, points, depth):
    return _peer_ratio(rule, points, above=False)


def _peer_ratio_above(rule, points, depth):
    return _peer_ratio(rule, points, above=True)


def _peer_ratio(rule, points, above):
    """median(algo) / median(best peer) at the selected point: the best of every point
    marked "peer" there, by the metric's direction (the standings' comparison)."""
    metric = _field(rule, "metric", _is_text, "a string")
    algorithm = _field(rule, "algo", _is_text, "a string")
    bound = _field(rule, "bound", is_number, "a number")
    where = _field(rule, "where", lambda v: isinstance(v, dict), "an object", default={})
    min_threads = _field(rule, "min_threads", is_number, "a number", default=1)
    ours = _matching(points, algorithm, metric, where)
    peers = [
        p
        for p in points
        if p.peer
        and p.metric == metric
        and all(key in p.params and same_param(p.params[key], value) for key, value in where.items())
    ]
    if not peers:
        condition = f" with {fmt.params(where)}" if where else ""
        raise _Unmeasurable(f"no peer library measured {metric}{condition} (see the machine record's peers)")
    at = rule.get("at", "max_threads")
    key, value = _where_at(at, ours, peers, algorithm, "the peers")
    if key == "threads" and value < min_threads:
        raise _Unmeasurable(
            f"threads={fmt.param_value(value)} is below min_threads={fmt.param_value(min_threads)}"
        )
    mine = _one_at(ours, algorithm, value, key)
    there = {}
    for p in peers:
        if same_param(p.params.get(key), value):
            there.setdefault(p.algorithm, []).append(p)
    if not there:
        raise _Unmeasurable(f"no peer point at {key}={fmt.param_value(value)}")
    candidates = [_one_at(found, name, value, key) for name, found in there.items()]
    if mine.better == "higher":
        best = max(candidates, key=lambda p: p.median)
    else:
        best = min(candidates, key=lambda p: p.median)
    if best.median == 0:
        raise _Unmeasurable(f"median of {best.algorithm} is 0 at {key}={fmt.param_value(value)}")
    ratio = mine.median / best.median
    interval = intervals.resolved_ratio_interval(mine, best, resolution_of(points))
    place = ", ".join(
        [f"{key}={fmt.param_value(value)}"] + [f"{k}={fmt.param_value(v)}" for k, v in where.items() if k != key]
    )
    return Verdict(
        _decide(interval, bound, above),
        f"{algorithm}/best peer ({best.algorithm}, of {len(candidates)}) = {fmt.num(ratio)}{_ci(interval)} "
        f"at {place} (bound {'>' if above else '<'} {bound}; {metric} {fmt.num(mine.median)} {mine.unit} / "
        f"{fmt.num(best.median)} {best.unit})",
        interval,
    )


def _matching(points, algorithm, metric, where):
    found = [
        p
        for p in points
        if p.algorithm == algorithm
        and p.metric == metric
        and all(key in p.params and same_param(p.params[key], value) for key, value in where.items())
    ]
    if not found:
        condition = f" with {fmt.params(where)}" if where else ""
        raise _Unmeasurable(f"no {algorithm} point for {metric}{condition}")
    return found


def _where_at(at, num_points, den_points, num, den):
    """The (param, value) the rule compares at: fixed by "at" ({"threads": N}, or
    any one numeric param such as {"sorters": 20}), or the largest threads
    value measured for both ("max_threads")."""
    if isinstance(at, dict) and len(at) == 1:
        (key, value), = at.items()
        if isinstance(key, str) and is_number(value):
            return key, value
    if at != "max_threads":
        raise _Unmeasurable('malformed rule: \'at\' must be "max_threads" or {"<param>": N}')
    return "threads", _max_common_threads(num_points, den_points, num, den)


def _max_common_threads(num_points, den_points, num, den):
    common = _threads_measured(num_points) & _threads_measured(den_points)
    if not common:
        raise _Unmeasurable(f"no threads value measured for both {num} and {den}")
    return max(common)


def _threads_measured(points):
    return {p.params["threads"] for p in points if is_number(p.params.get("threads"))}


def _one_at(points, algorithm, value, key="threads"):
    found = [p for p in points if same_param(p.params.get(key), value)]
    if not found:
        raise _Unmeasurable(f"no {algorithm} point at {key}={fmt.param_value(value)}")
    if len(found) > 1:
        raise _Unmeasurable(
            f"{len(found)} {algorithm} points at {key}={fmt.param_value(value)} "
            f"(lines {', '.join(str(p.line) for p in found)}); 'where' must fix the other params"
        )
    return found[0]


def _all(rule, points, depth):
    rules = rule.get("rules")
    if not isinstance(rules, list) or not rules:
        raise _Unmeasurable("malformed rule: 'all' needs a non-empty 'rules' array")
    verdicts = [evaluate(sub, points, depth + 1) for sub in rules]
    statuses = {v.status for v in verdicts}
    if FAILED in statuses:
        return Verdict(FAILED, "; ".join(f"{v.status}: {v.explanation}" for v in verdicts))
    if UNMEASURABLE in statuses:
        return next(v for v in verdicts if v.status == UNMEASURABLE)
    if INCONCLUSIVE in statuses:
        return Verdict(INCONCLUSIVE, "; ".join(f"{v.status}: {v.explanation}" for v in verdicts))
    return Verdict(HELD, "; ".join(v.explanation for v in verdicts))


def _any(rule, points, depth):
    rules = rule.get("rules")
    if not isinstance(rules, list) or not rules:
        raise _Unmeasurable("malformed rule: 'any' needs a non-empty 'rules' array")
    verdicts = [evaluate(sub, points, depth + 1) for sub in rules]
    held = [v for v in verdicts if v.status == HELD]
    if held:
        return Verdict(HELD, "; ".join(v.explanation for v in held))
    if any(v.status == INCONCLUSIVE for v in verdicts):
        return Verdict(INCONCLUSIVE, "; ".join(f"{v.status}: {v.explanation}" for v in verdicts))
    if any(v.status == FAILED for v in verdicts):
        return Verdict(FAILED, "; ".join(f"{v.status}: {v.explanation}" for v in verdicts))
    return verdicts[0]


def _not_measurable(rule, points, depth):
    why = rule.get("why")
    raise _Unmeasurable(why if isinstance(why, str) and why else "declared not measurable (no reason given)")


_OPS = {
    "ratio_below": _ratio_below,
    "ratio_above": _ratio_above,
    "value_below": _value_below,
    "value_above": _value_above,
    "peer_ratio_below": _peer_ratio_below,
    "peer_ratio_above": _peer_ratio_above,
    "all": _all,
    "any": _any,
    "not_measurable": _not_measurable,
}
