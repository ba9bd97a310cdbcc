# SPDX-License-Identifier: BSD-2-Clause
"""Evaluate the RULE objects of docs/results-format.md against one run's points.

Evaluation never raises: a rule that cannot be applied, whatever the reason,
is "not measurable here" with the reason.

A bound is judged on the confidence interval of the compared statistic
(intervals.py), not on its point estimate alone: held when the whole
interval is on the claim's side of the bound, did not hold when the whole
interval is on the other side, inconclusive when the interval contains the
bound (the run cannot tell; the explanation shows the interval).

Every interval a rule compares is taken through one place (_enough_samples):
a point with fewer than MIN_SAMPLES samples, or, in a run of several
launches, with samples from one launch only, has no interval that means its
level, and the verdict is inconclusive with that reason, whatever the op
(docs/results-format.md, "Too few samples").
"""

from dataclasses import dataclass

from . import fmt, intervals

HELD = "held"
FAILED = "did not hold"
INCONCLUSIVE = "inconclusive"
UNMEASURABLE = "not measurable"

# The fewest samples a compared point needs for an interval: the bootstrap's
# percentile interval of a median lies within the samples' range, which holds
# the true median with probability 1 - 2 x 2^-n; 6 is the least n for which
# that reaches LEVEL (0.969; 5 gives 0.938). docs/results-format.md, "Too few
# samples"; the lab asks claimed points for as many (lab.h, LAB_CLAIM_MIN_SAMPLES).
MIN_SAMPLES = 6

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


class _TooFewSamples(Exception):
    """Raised inside an evaluation to end it inconclusive: a compared point has no interval."""


def evaluate(rule, points, depth=0, machine=None):
    """Evaluate rule against points (the experiment's points of one run); machine is
    that run's machine record (a dict of its fields, e.g. "pus"), or None when unknown."""
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
        return handler(rule, points, depth, machine)
    except _Unmeasurable as reason:
        return Verdict(UNMEASURABLE, str(reason))
    except _TooFewSamples as reason:
        return Verdict(INCONCLUSIVE, str(reason))


_last_resolution = (None, None)  # (points, Resolution): the experiment being evaluated


def resolution_of(points):
    """intervals.resolution(points), computed once per experiment's list of points
    (the verdicts of an experiment, its section and its recommendations share it)."""
    global _last_resolution
    if _last_resolution[0] is not points:
        _last_resolution = (points, intervals.resolution(points))
    return _last_resolution[1]


def _enough_samples(points, *compared):
    """Raise _TooFewSamples unless every compared point can have an interval: at least
    MIN_SAMPLES samples and, when the run (points) had several launches, samples from
    at least two of them (one launch's samples do not see the variation between
    launches that the run's intervals claim to cover)."""
    run_launches = resolution_of(points).launches
    short = []
    for p in compared:
        n = len(p.samples)
        where = f"{p.algorithm} {p.metric}" + (f" at {fmt.params(p.params)}" if p.params else "")
        if n < MIN_SAMPLES:
            short.append(f"{n} sample{'s' if n != 1 else ''} of {where}, at least {MIN_SAMPLES} needed for an interval")
        elif run_launches >= 2 and intervals.launch_count(p) < 2:
            short.append(
                f"{n} samples of {where}, all from one of the run's {run_launches} launches; "
                f"an interval across launches needs samples from at least 2"
            )
    if short:
        raise _TooFewSamples("; ".join(dict.fromkeys(short)))


def _median_interval(point, points):
    """The resolved interval of point's median, once it has the samples for one."""
    _enough_samples(points, point)
    return intervals.resolved_median_interval(point, resolution_of(points))


def _ratio_interval(num, den, points):
    """The resolved interval of median(num) / median(den), once both have the samples for one
    and the ratio is defined in all but TAIL of the bootstrap's replicates."""
    _enough_samples(points, num, den)
    _defined(intervals.ratio_undefined_share(num, den), [("", den)])
    return intervals.resolved_ratio_interval(num, den, resolution_of(points))


def _ratio_of_ratios_interval(num, den, base_num, base_den, points):
    """The resolved interval of the ratio of two ratios, once all four points have the
    samples and the ratio is defined in all but TAIL of the bootstrap's replicates."""
    _enough_samples(points, num, den, base_num, base_den)
    share = intervals.ratio_of_ratios_undefined_share(num, den, base_num, base_den)
    _defined(share, [("", den), ("baseline ", base_num), ("baseline ", base_den)])
    return intervals.resolved_ratio_of_ratios_interval(num, den, base_num, base_den, resolution_of(points))


def _defined(share, denominators):
    """Raise _TooFewSamples when more than intervals.TAIL of a ratio's bootstrap replicates
    are undefined (share): a denominator whose median was 0 in that replicate (0/0 or x/0
    is no number, and reading it as one would decide the verdict). denominators: (role,
    point) pairs, the points whose median 0 makes the ratio undefined; the reason names
    those with samples of 0."""
    if share <= intervals.TAIL:
        return
    zeros = []
    for role, p in denominators:
        k = sum(1 for v in p.samples if v == 0)
        if k:
            where = f"{p.algorithm} {p.metric}" + (f" at {fmt.params(p.params)}" if p.params else "")
            zeros.append(f"{role}{where} has median 0 in some replicates ({k} of its {len(p.samples)} samples are 0)")
    raise _TooFewSamples(
        "; ".join(zeros or ["a denominator has median 0 in some replicates"])
        + f": the ratio is undefined in {round(share * 100)}% of the bootstrap's replicates, "
        f"at most {intervals.TAIL * 100:g}% leave an interval"
    )


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


def _ratio_below(rule, points, depth, machine):
    return _ratio(rule, points, above=False)


def _ratio_above(rule, points, depth, machine):
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
    interval = _ratio_interval(top, bottom, points)
    place = ", ".join(
        [f"{key}={fmt.param_value(threads)}"]
        + [f"{k}={fmt.param_value(value)}" for k, value in where.items() if k != key]
    )
    explanation = (
        f"{num}/{den} = {fmt.num(ratio)}{_ci(interval)} at {place} (bound {'>' if above else '<'} {bound}; "
        f"{metric} {fmt.num(top.median)} {top.unit} / {fmt.num(bottom.median)} {bottom.unit})"
    )
    return Verdict(_decide(interval, bound, above), explanation, interval)


def _ratio_change_below(rule, points, depth, machine):
    return _ratio_change(rule, points, above=False)


def _ratio_change_above(rule, points, depth, machine):
    return _ratio_change(rule, points, above=True)


def _ratio_change(rule, points, above):
    """One comparison against itself at a baseline: (median(num) / median(den) under
    `where`) / (the same under `where` with `base`'s params instead). Both at the value
    `at` selects (`"max_threads"`: the largest measured for all four points), unless
    `base` fixes that param itself (the baseline at threads=1, say). A cost the two
    variants pay alike in both places (e.g. the "-ps" lock's own request, at level 1
    and at level 3) cancels; what is left is what changed between the baseline and
    `where`."""
    metric = _field(rule, "metric", _is_text, "a string")
    num = _field(rule, "num", _is_text, "a string")
    den = _field(rule, "den", _is_text, "a string")
    bound = _field(rule, "bound", is_number, "a number")
    where = _field(rule, "where", lambda v: isinstance(v, dict), "an object", default={})
    base = _field(rule, "base", lambda v: isinstance(v, dict) and v, "a non-empty object")
    min_threads = _field(rule, "min_threads", is_number, "a number", default=1)
    at = rule.get("at", "max_threads")
    if all(k in where and same_param(where[k], v) for k, v in base.items()):
        raise _Unmeasurable("malformed rule: 'base' changes nothing in 'where'")
    base_where = {**where, **base}
    found = [_matching(points, a, metric, w) for w in (where, base_where) for a in (num, den)]
    key, value = _where_at(at, found[0], found[1], num, den)
    base_value = base.get(key, value)
    if key not in base and at == "max_threads":
        measured = set.intersection(*(_threads_measured(f) for f in found))
        if not measured:
            raise _Unmeasurable(
                f"no threads value measured for both {num} and {den} under both {fmt.params(where)} "
                f"and {fmt.params(base_where)}"
            )
        value = base_value = max(measured)
    if key == "threads" and value < min_threads:
        chosen = "the largest measured for all four points" if at == "max_threads" else "from 'at'"
        if key in base:
            chosen = f"the largest measured for both {num} and {den}" if at == "max_threads" else "from 'at'"
        raise _Unmeasurable(
            f"threads={fmt.param_value(value)} ({chosen}) is below min_threads={fmt.param_value(min_threads)}"
        )
    top, bottom = _one_at(found[0], num, value, key), _one_at(found[1], den, value, key)
    base_top, base_bottom = _one_at(found[2], num, base_value, key), _one_at(found[3], den, base_value, key)
    for role, p in (("", bottom), ("baseline ", base_top), ("baseline ", base_bottom)):
        if p.median == 0:
            raise _Unmeasurable(f"{role}{p.algorithm} has median 0 at {fmt.params(p.params)}: the change is undefined")
    here = top.median / bottom.median
    there = base_top.median / base_bottom.median
    change = here / there
    interval = _ratio_of_ratios_interval(top, bottom, base_top, base_bottom, points)
    changed = ", ".join(f"{k}={fmt.param_value(v)}" for k, v in base.items())
    was = ", ".join(
        f"{k}={fmt.param_value(value if k == key else where[k])}" if k == key or k in where else f"{k} any"
        for k in base
    )
    place = ", ".join(
        ([] if key in base else [f"{key}={fmt.param_value(value)}"])
        + [f"{k}={fmt.param_value(v)}" for k, v in where.items() if k != key and k not in base]
    )
    return Verdict(
        _decide(interval, bound, above),
        f"({num}/{den} at {was}) / (at {changed}) = {fmt.num(here)} / {fmt.num(there)} = {fmt.num(change)}"
        f"{_ci(interval)}{' at ' + place if place else ''} (bound {'>' if above else '<'} {bound}; {metric} "
        f"{fmt.num(top.median)} / {fmt.num(bottom.median)} and {fmt.num(base_top.median)} / "
        f"{fmt.num(base_bottom.median)} {top.unit})",
        interval,
    )


def _value_below(rule, points, depth, machine):
    return _value(rule, points, above=False)


def _value_above(rule, points, depth, machine):
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
    interval = _median_interval(p, points)
    place = ", ".join(
        [f"{key}={fmt.param_value(value)}"] + [f"{k}={fmt.param_value(v)}" for k, v in where.items() if k != key]
    )
    return Verdict(
        _decide(interval, bound, above),
        f"{algorithm} {metric} = {fmt.num(p.median)} {p.unit}{_ci(interval)} at {place} "
        f"(bound {'>' if above else '<'} {bound})",
        interval,
    )


def _peer_ratio_below(rule, points, depth, machine):
    return _peer_ratio(rule, points, above=False)


def _peer_ratio_above(rule, points, depth, machine):
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
    interval = _ratio_interval(mine, best, points)
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
    any one numeric param such as {"sorters": 20}), the largest value of a param
    measured for both ({"leaves": "max"}), or the largest threads value measured
    for both ("max_threads")."""
    if isinstance(at, dict) and len(at) == 1:
        (key, value), = at.items()
        if isinstance(key, str) and is_number(value):
            return key, value
        if isinstance(key, str) and value == "max":
            return key, _max_common(num_points, den_points, num, den, key)
    if at != "max_threads":
        raise _Unmeasurable('malformed rule: \'at\' must be "max_threads", {"<param>": N} or {"<param>": "max"}')
    return "threads", _max_common_threads(num_points, den_points, num, den)


def _max_common(num_points, den_points, num, den, key):
    """The largest value of param key measured for both (a sweep whose top depends on the size)."""
    common = {p.params[key] for p in num_points if is_number(p.params.get(key))} & {
        p.params[key] for p in den_points if is_number(p.params.get(key))
    }
    if not common:
        raise _Unmeasurable(f"no {key} value measured for both {num} and {den}")
    return max(common)


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


def _all(rule, points, depth, machine):
    rules = rule.get("rules")
    if not isinstance(rules, list) or not rules:
        raise _Unmeasurable("malformed rule: 'all' needs a non-empty 'rules' array")
    verdicts = [evaluate(sub, points, depth + 1, machine) for sub in rules]
    statuses = {v.status for v in verdicts}
    if FAILED in statuses:
        return Verdict(FAILED, "; ".join(f"{v.status}: {v.explanation}" for v in verdicts))
    if UNMEASURABLE in statuses:
        return next(v for v in verdicts if v.status == UNMEASURABLE)
    if INCONCLUSIVE in statuses:
        return Verdict(INCONCLUSIVE, "; ".join(f"{v.status}: {v.explanation}" for v in verdicts))
    return Verdict(HELD, "; ".join(v.explanation for v in verdicts))


def _any(rule, points, depth, machine):
    rules = rule.get("rules")
    if not isinstance(rules, list) or not rules:
        raise _Unmeasurable("malformed rule: 'any' needs a non-empty 'rules' array")
    verdicts = [evaluate(sub, points, depth + 1, machine) for sub in rules]
    held = [v for v in verdicts if v.status == HELD]
    if held:
        return Verdict(HELD, "; ".join(v.explanation for v in held))
    if any(v.status == INCONCLUSIVE for v in verdicts):
        return Verdict(INCONCLUSIVE, "; ".join(f"{v.status}: {v.explanation}" for v in verdicts))
    if any(v.status == FAILED for v in verdicts):
        return Verdict(FAILED, "; ".join(f"{v.status}: {v.explanation}" for v in verdicts))
    return verdicts[0]


def _machine_pus(machine):
    """The processing units of the run's machine record (the real ones, not a
    count the run planned for: docs/results-format.md, "planned_pus")."""
    if not isinstance(machine, dict):
        raise _Unmeasurable("no machine record to read the processing units from")
    pus = machine.get("pus")
    if not is_number(pus) or pus < 1:
        raise _Unmeasurable("the machine record gives no processing-unit count")
    return pus


def _needs_pus(rule, points, depth, machine):
    """The inner rule, decided only where the machine has the processing units the
    claim needs, and read over the points that did not oversubscribe them: a point
    at `threads` t runs t x pus_per_thread threads (2 for N producers + N consumers)."""
    need = _field(rule, "pus", is_number, "a number")
    per = _field(rule, "pus_per_thread", is_number, "a number", default=1)
    inner = _field(rule, "rule", lambda v: isinstance(v, dict), "an object")
    if per <= 0:
        raise _Unmeasurable("malformed rule: 'pus_per_thread' must be positive")
    have = _machine_pus(machine)
    if have < need:
        return Verdict(
            UNMEASURABLE,
            f"needs {fmt.param_value(need)} processing units, this machine has {fmt.param_value(have)}",
        )
    within = [p for p in points if not is_number(p.params.get("threads")) or p.params["threads"] * per <= have]
    return evaluate(inner, within, depth + 1, machine)


def _count_of(points, algorithm, metric, where, at, what):
    """(total, point) of a count metric at the selected point: the sum of its samples
    (every repetition of every launch), the count over all the runs the verdict reads."""
    try:
        found = _matching(points, algorithm, metric, where)
    except _Unmeasurable as e:
        raise _Unmeasurable(f"the run did not count {what}: {e}") from None
    key, value = _where_at(at, found, found, algorithm, algorithm)
    p = _one_at(found, algorithm, value, key)
    if not p.samples or not all(is_number(x) and x >= 0 for x in p.samples):
        raise _Unmeasurable(f"{algorithm} {metric} at {key}={fmt.param_value(value)} holds no count")
    return sum(p.samples), p


def _exercised(rule, points, depth, machine):
    """The inner rule, judged only where the run exercised the mechanism the claim is
    about: a count measured in the run (`metric` of `algo` under `where`, at `at`, summed
    over the point's samples) must reach `min`, and, with `of` (the count it is a share
    of, same algo and point), `min_share` of that; with `min_runs_share`, that share of
    the point's runs must each have counted at least one. Below it the verdict is inconclusive:
    a run in which the cause never happened cannot say the effect is absent."""
    metric = _field(rule, "metric", _is_text, "a string")
    algorithm = _field(rule, "algo", _is_text, "a string")
    need = _field(rule, "min", is_number, "a number", default=1)
    where = _field(rule, "where", lambda v: isinstance(v, dict), "an object", default={})
    what = _field(rule, "what", _is_text, "a string", default=f"{algorithm} {metric}")
    inner = _field(rule, "rule", lambda v: isinstance(v, dict), "an object")
    of = rule.get("of")
    share = rule.get("min_share")
    runs_share = rule.get("min_runs_share")
    if of is not None and not _is_text(of):
        raise _Unmeasurable("malformed rule: 'of' must be a string")
    if share is not None and (of is None or not is_number(share) or not 0 <= share <= 1):
        raise _Unmeasurable("malformed rule: 'min_share' must be a number from 0 to 1, with 'of'")
    if need < 1 or isinstance(need, bool):
        raise _Unmeasurable("malformed rule: 'min' must be at least 1")
    if runs_share is not None and (not is_number(runs_share) or isinstance(runs_share, bool)
                                   or not 0 < runs_share <= 1):
        raise _Unmeasurable("malformed rule: 'min_runs_share' must be a number above 0, at most 1")
    at = rule.get("at", "max_threads")
    count, p = _count_of(points, algorithm, metric, where, at, what)
    total = None
    if of is not None:
        total, _ = _count_of(points, algorithm, of, where, at, what)
    needs = [f">= {fmt.param_value(need)}"]
    floor = need
    if share is not None:
        floor = max(floor, share * total)
        needs.append(f">= {fmt.num(share * 100, trim=True)}% of them")
    runs = len(p.samples)
    measured = f"{fmt.param_value(count)}" + (f" of {fmt.param_value(total)}" if total is not None else "")
    exposure = f"{measured} {what} over {runs} run{'s' if runs != 1 else ''} of {algorithm}"
    short = False
    if runs_share is not None:
        # A count summed over the runs can come from a few of them; an effect on the
        # median run needs the mechanism in enough runs, each.
        with_one = sum(1 for x in p.samples if x >= 1)
        exposure += f", in {with_one} of them"
        needs.append(f"in >= {fmt.num(runs_share * 100, trim=True)}% of the runs")
        short = with_one < runs_share * runs
    if count < floor or short:
        return Verdict(
            INCONCLUSIVE, f"the mechanism was not exercised: {exposure} (needs {' and '.join(needs)})"
        )
    verdict = evaluate(inner, points, depth + 1, machine)
    if verdict.status == UNMEASURABLE:
        return verdict
    return Verdict(verdict.status, f"{verdict.explanation} (exercised: {exposure})", verdict.interval)


def _higher(point):
    return point.better == "higher"


def _in_pack(rule, points, depth, machine):
    """ALGO's place among a panel: every other point of the metric under `where`
    from the same registry family (props without "spsc"; peer libraries' only with
    "peers": true). Held when median(ALGO) / median of the panel's middle
    algorithm is not worse than `factor` (>= 1/factor where higher is better,
    <= factor where lower is), i.e. ALGO is not behind the pack by more than that."""
    metric = _field(rule, "metric", _is_text, "a string")
    algorithm = _field(rule, "algo", _is_text, "a string")
    factor = _field(rule, "factor", is_number, "a number")
    where = _field(rule, "where", lambda v: isinstance(v, dict), "an object", default={})
    min_panel = _field(rule, "min_panel", is_number, "a number", default=3)
    peers = rule.get("peers", False)
    if factor < 1 or not isinstance(peers, bool):
        raise _Unmeasurable("malformed rule: 'factor' must be >= 1 and 'peers' true or false")
    ours = _matching(points, algorithm, metric, where)
    family = rule.get("family", ours[0].family)
    panel = [
        p
        for p in points
        if p.algorithm != algorithm
        and p.metric == metric
        and (peers or not p.peer)
        and p.family == family
        and "spsc" not in (p.props or "").split(",")
        and all(key in p.params and same_param(p.params[key], value) for key, value in where.items())
    ]
    if not panel:
        raise _Unmeasurable(f"no other {family} measured {metric}")
    at = rule.get("at", "max_threads")
    key, value = _where_at(at, ours, panel, algorithm, "the panel")
    mine = _one_at(ours, algorithm, value, key)
    there = {}
    for p in panel:
        if same_param(p.params.get(key), value):
            there.setdefault(p.algorithm, []).append(p)
    members = [_one_at(found, name, value, key) for name, found in there.items()]
    if len(members) < min_panel:
        raise _Unmeasurable(
            f"{len(members)} other {family} measured at {key}={fmt.param_value(value)}, "
            f"below the panel's minimum of {fmt.param_value(min_panel)}"
        )
    best_first = sorted(members + [mine], key=lambda p: -p.median if _higher(mine) else p.median)
    rank = best_first.index(mine) + 1
    ordered = sorted(members, key=lambda p: p.median)
    middle = ordered[(len(ordered) - 1) // 2]  # the lower middle of an even panel
    if middle.median == 0:
        raise _Unmeasurable(f"median of {middle.algorithm} is 0 at {key}={fmt.param_value(value)}")
    ratio = mine.median / middle.median
    interval = _ratio_interval(mine, middle, points)
    if _higher(mine):
        bound, above = 1 / factor, True
    else:
        bound, above = factor, False
    place = ", ".join(
        [f"{key}={fmt.param_value(value)}"] + [f"{k}={fmt.param_value(v)}" for k, v in where.items() if k != key]
    )
    return Verdict(
        _decide(interval, bound, above),
        f"{algorithm} ranks {rank} of {len(best_first)} at {place}; {algorithm}/panel median "
        f"({middle.algorithm}) = {fmt.num(ratio)}{_ci(interval)} (bound {'>' if above else '<'} {fmt.num(bound)}; "
        f"panel: {', '.join(p.algorithm for p in best_first)})",
        interval,
    )


def _curve(rule, points):
    """(metric, algo, where, {threads: point}) of one algorithm's curve over threads."""
    metric = _field(rule, "metric", _is_text, "a string")
    algorithm = _field(rule, "algo", _is_text, "a string")
    where = _field(rule, "where", lambda v: isinstance(v, dict), "an object", default={})
    found = _matching(points, algorithm, metric, where)
    curve = {}
    for t in sorted(_threads_measured(found)):
        curve[t] = _one_at(found, algorithm, t)
    if not curve:
        raise _Unmeasurable(f"no {algorithm} point with a threads value")
    return metric, algorithm, where, curve


def _rise_then_plateau(rule, points, depth, machine):
    """The shape of 004's Figures 1 and 16: an algorithm's value rises from the fewest
    threads measured to the most measured up to `knee`, then stays within `factor` of itself at every
    thread count from `knee` on (at least two of them). Each part is judged on the
    medians' intervals: the rise held when the knee's interval is wholly above the
    start's, the plateau held when even the intervals' extremes stay within factor."""
    knee = _field(rule, "knee", is_number, "a number")
    factor = _field(rule, "factor", is_number, "a number")
    if factor < 1:
        raise _Unmeasurable("malformed rule: 'factor' must be >= 1")
    metric, algorithm, where, curve = _curve(rule, points)
    start = min(curve)
    below = [t for t in curve if t <= knee]
    if not below or max(below) <= start:
        raise _Unmeasurable(
            f"the rise needs two {algorithm} thread counts up to {fmt.param_value(knee)} (measured: "
            f"{', '.join(fmt.param_value(t) for t in curve)})"
        )
    knee = max(below)  # the thread counts grow by powers of two: the measured one nearest below
    tail = [t for t in curve if t >= knee]
    if len(tail) < 2:
        raise _Unmeasurable(
            f"the plateau needs two thread counts from {fmt.param_value(knee)} on; "
            f"{algorithm} was measured up to threads={fmt.param_value(max(curve))}"
        )
    _enough_samples(points, curve[start], *(curve[t] for t in tail))  # every reason at once
    first = _median_interval(curve[start], points)
    at_knee = _median_interval(curve[knee], points)
    rise = HELD if at_knee[0] > first[1] else FAILED if at_knee[1] <= first[0] else INCONCLUSIVE
    spans = [_median_interval(curve[t], points) for t in tail]
    low_hi, high_lo = min(hi for lo, hi in spans), max(lo for lo, hi in spans)
    low_lo, high_hi = min(lo for lo, hi in spans), max(hi for lo, hi in spans)
    flat = HELD if high_hi <= factor * low_lo else FAILED if high_lo > factor * low_hi else INCONCLUSIVE
    statuses = {rise, flat}
    status = FAILED if FAILED in statuses else INCONCLUSIVE if INCONCLUSIVE in statuses else HELD
    unit = curve[knee].unit
    values = ", ".join(f"{fmt.param_value(t)}: {fmt.num(curve[t].median)}" for t in curve)
    condition = f" with {fmt.params(where)}" if where else ""
    return Verdict(
        status,
        f"{algorithm} {metric}{condition} by threads ({unit}) {values}; rise from threads="
        f"{fmt.param_value(start)} to {fmt.param_value(knee)} {rise}; from threads={fmt.param_value(knee)} on, "
        f"within {fmt.param_value(factor)}x of itself {flat} (intervals {fmt.num(low_lo)}-{fmt.num(high_hi)})",
    )


def _along_ratio_below(rule, points, depth, machine):
    return _along_ratio(rule, points, above=False)


def _along_ratio_above(rule, points, depth, machine):
    return _along_ratio(rule, points, above=True)


def _along_ratio(rule, points, above):
    """One algorithm against itself at two values of one param (e.g. 1000 sorters
    against 100): median at `num` / median at `den`, under `where`."""
    metric = _field(rule, "metric", _is_text, "a string")
    algorithm = _field(rule, "algo", _is_text, "a string")
    along = _field(rule, "along", _is_text, "a string")
    num_at = _field(rule, "num", is_number, "a number")
    den_at = _field(rule, "den", is_number, "a number")
    bound = _field(rule, "bound", is_number, "a number")
    where = _field(rule, "where", lambda v: isinstance(v, dict), "an object", default={})
    if along in where:
        raise _Unmeasurable(f"malformed rule: '{along}' is both 'along' and in 'where'")
    found = _matching(points, algorithm, metric, where)
    top = _one_at(found, algorithm, num_at, along)
    bottom = _one_at(found, algorithm, den_at, along)
    if bottom.median == 0:
        raise _Unmeasurable(f"median of {algorithm} is 0 at {along}={fmt.param_value(den_at)}")
    ratio = top.median / bottom.median
    interval = _ratio_interval(top, bottom, points)
    condition = f", {fmt.params(where)}" if where else ""
    return Verdict(
        _decide(interval, bound, above),
        f"{algorithm} at {along}={fmt.param_value(num_at)} / at {along}={fmt.param_value(den_at)} = "
        f"{fmt.num(ratio)}{_ci(interval)}{condition} (bound {'>' if above else '<'} {bound}; {metric} "
        f"{fmt.num(top.median)} {top.unit} / {fmt.num(bottom.median)} {bottom.unit})",
        interval,
    )


def _oversubscribed_ratio_above(rule, points, depth, machine):
    """One algorithm against itself once its threads outnumber the machine's
    processing units M: median at the fewest `threads` measured whose running
    threads (threads x pus_per_thread) are at least `over` x M, over the median
    at the most `threads` measured whose running threads fit on M. Held when the
    ratio's interval is wholly above B: a queue that keeps B of its rate when
    every unit runs `over` threads has not collapsed."""
    metric = _field(rule, "metric", _is_text, "a string")
    algorithm = _field(rule, "algo", _is_text, "a string")
    per = _field(rule, "pus_per_thread", is_number, "a number", default=1)
    over = _field(rule, "over", is_number, "a number", default=2)
    bound = _field(rule, "bound", is_number, "a number")
    where = _field(rule, "where", lambda v: isinstance(v, dict), "an object", default={})
    if per <= 0:
        raise _Unmeasurable("malformed rule: 'pus_per_thread' must be positive")
    if over <= 1:
        raise _Unmeasurable("malformed rule: 'over' must be above 1")
    have = _machine_pus(machine)
    found = _matching(points, algorithm, metric, where)
    measured = sorted(_threads_measured(found))
    fit = [t for t in measured if t * per <= have]
    past = [t for t in measured if t * per >= over * have]
    if not fit or not past:
        raise _Unmeasurable(
            f"needs {algorithm} with its threads fitting on the {fmt.param_value(have)} processing units and with "
            f"{fmt.param_value(over)}x as many (threads x {fmt.param_value(per)}); measured threads: "
            f"{', '.join(fmt.param_value(t) for t in measured) or 'none'}"
        )
    full, crowded = max(fit), min(past)
    top = _one_at(found, algorithm, crowded)
    bottom = _one_at(found, algorithm, full)
    if bottom.median == 0:
        raise _Unmeasurable(f"median of {algorithm} is 0 at threads={fmt.param_value(full)}")
    ratio = top.median / bottom.median
    interval = _ratio_interval(top, bottom, points)
    condition = f", {fmt.params(where)}" if where else ""
    return Verdict(
        _decide(interval, bound, True),
        f"{algorithm} at threads={fmt.param_value(crowded)} ({fmt.param_value(crowded * per)} threads on "
        f"{fmt.param_value(have)} processing units) / at threads={fmt.param_value(full)} "
        f"({fmt.param_value(full * per)}) = {fmt.num(ratio)}{_ci(interval)}{condition} (bound > {bound}; {metric} "
        f"{fmt.num(top.median)} {top.unit} / {fmt.num(bottom.median)} {bottom.unit})",
        interval,
    )


def _not_measurable(rule, points, depth, machine):
    why = rule.get("why")
    raise _Unmeasurable(why if isinstance(why, str) and why else "declared not measurable (no reason given)")


_OPS = {
    "ratio_below": _ratio_below,
    "ratio_above": _ratio_above,
    "ratio_change_below": _ratio_change_below,
    "ratio_change_above": _ratio_change_above,
    "value_below": _value_below,
    "value_above": _value_above,
    "peer_ratio_below": _peer_ratio_below,
    "peer_ratio_above": _peer_ratio_above,
    "all": _all,
    "any": _any,
    "needs_pus": _needs_pus,
    "exercised": _exercised,
    "in_pack": _in_pack,
    "rise_then_plateau": _rise_then_plateau,
    "along_ratio_below": _along_ratio_below,
    "along_ratio_above": _along_ratio_above,
    "oversubscribed_ratio_above": _oversubscribed_ratio_above,
    "not_measurable": _not_measurable,
}
