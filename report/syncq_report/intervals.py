# SPDX-License-Identifier: BSD-2-Clause
"""Confidence intervals of medians and of ratios of medians, by bootstrap.

Why a bootstrap: the lab keeps few samples per point (a handful of
repetitions in each of a few launches) whose distribution is anything but
normal (a preempted thread makes one sample 10x slower), and the verdicts
compare medians and ratios of medians. The percentile bootstrap needs no
distributional assumption and applies to both statistics unchanged (Efron &
Tibshirani, "An Introduction to the Bootstrap", 1993, ch. 13).

Why two stages: samples of one launch share that process's luck (page
placement, the host's neighbours, the CPU frequency of those minutes); the
variation between launches is what made verdicts flip between two runs.
Each bootstrap replicate therefore first draws launches with replacement,
then samples with replacement within each drawn launch (the cluster, or
hierarchical, bootstrap: Davison & Hinkley, "Bootstrap Methods and their
Application", 1997, section 3.8). With one launch it is the ordinary
bootstrap.

Why paired: two points of the same group (same launches, same number of
samples) were measured side by side, the r-th sample of each in the same
pass over the variants (lab/runner.c interleaves them). A replicate draws
the same indices for both, so a drift of the machine that hits both cancels
in their ratio; points not measured side by side are drawn independently.

The random generator is seeded from the points' identity, so the same
results file always gives the same report.
"""

import zlib
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

LEVEL = 0.95  # two-sided confidence level of every interval
RESAMPLES = 4000  # bootstrap replicates per interval
TAIL = (1.0 - LEVEL) / 2.0  # the share of replicates outside each end of an interval


def _labels(point):
    """The launch of each sample (all 0 when the run had one launch)."""
    launches = getattr(point, "launches", None)
    if launches and len(launches) == len(point.samples):
        return np.asarray(launches)
    return np.zeros(len(point.samples), dtype=int)


def _seed(*points):
    text = "|".join(
        f"{p.experiment}/{p.algorithm}/{p.metric}/{sorted(p.params.items())}" for p in points
    )
    return zlib.crc32(text.encode("utf-8"))


def _indices(labels, rng, resamples):
    """Rows of sample indices, one row per replicate: launches drawn with
    replacement, then samples within each drawn launch."""
    groups = [np.flatnonzero(labels == label) for label in np.unique(labels)]
    k = len(groups)
    sizes = {len(g) for g in groups}
    if len(sizes) == 1:
        n = sizes.pop()
        table = np.stack(groups)  # k x n
        drawn = rng.integers(0, k, size=(resamples, k))
        within = rng.integers(0, n, size=(resamples, k, n))
        return table[drawn[:, :, None], within].reshape(resamples, k * n)
    # Launches of unequal sizes: the j-th drawn launch contributes as many
    # samples as the j-th launch has, so every replicate has the data's size.
    # Vectorised over replicates: the launches padded into one table, a
    # uniform draw scaled by each drawn launch's own size picks within it.
    lengths = np.asarray([len(g) for g in groups])
    table = np.zeros((k, int(lengths.max())), dtype=int)
    for i, g in enumerate(groups):
        table[i, : len(g)] = g
    parts = []
    for j in range(k):
        drawn = rng.integers(0, k, size=resamples)
        within = (rng.random((resamples, len(groups[j]))) * lengths[drawn][:, None]).astype(int)
        parts.append(table[drawn[:, None], within])
    return np.concatenate(parts, axis=1)


def _percentiles(values):
    """The percentile interval; replicate values themselves (no interpolation),
    so an infinite replicate gives an infinite end rather than NaN. An undefined
    replicate (NaN: a ratio whose denominator's median was 0 in that replicate)
    could have been any value: it counts as -inf for the lower end and +inf for
    the upper, so more than TAIL of them leave the interval unbounded both ways."""
    values = np.asarray(values, dtype=float)
    undefined = np.isnan(values)
    lo = np.quantile(np.where(undefined, -np.inf, values), TAIL, method="inverted_cdf")
    hi = np.quantile(np.where(undefined, np.inf, values), 1.0 - TAIL, method="inverted_cdf")
    return float(lo), float(hi)


def median_interval(point):
    """(lo, hi): the LEVEL bootstrap interval of the point's median."""
    samples = np.asarray(point.samples, dtype=float)
    if len(samples) <= 1:
        return (float(point.median), float(point.median))
    rng = np.random.default_rng(_seed(point))
    rows = _indices(_labels(point), rng, RESAMPLES)
    return _percentiles(np.median(samples[rows], axis=1))


def paired(a, b):
    """True when a and b were measured side by side (same launches, same count)."""
    la, lb = _labels(a), _labels(b)
    return len(la) == len(lb) and bool(np.all(la == lb))


def ratio_interval(num, den):
    """(lo, hi): the LEVEL bootstrap interval of median(num) / median(den).
    A replicate whose median(den) is 0 is undefined (_divide), and more than
    TAIL of them leave the interval unbounded both ways (-inf, inf); so does a
    median(den) of 0 with one sample each."""
    return _percentiles(_ratio_draws(num, den))


def ratio_undefined_share(num, den):
    """The share of ratio_interval's replicates that are undefined (median(den) 0)."""
    return float(np.mean(np.isnan(_ratio_draws(num, den))))


def _ratio_draws(num, den):
    if len(num.samples) <= 1 and len(den.samples) <= 1:
        return _divide(np.asarray([num.median], dtype=float), np.asarray([den.median], dtype=float))
    return _ratio_replicates(num, den, np.random.default_rng(_seed(num, den)))


def ratio_of_ratios_interval(num, den, base_num, base_den):
    """(lo, hi): the LEVEL bootstrap interval of (median(num) / median(den)) /
    (median(base_num) / median(base_den)): one comparison at a point against the
    same comparison at a baseline point (e.g. level 3 against level 1). Each pair
    is drawn as ratio_interval draws it (paired when measured side by side); the
    two pairs are drawn independently (different groups, different runs). A
    replicate where any of the three denominators (den, base_den, and the
    baseline's ratio itself, i.e. base_num) has median 0 is undefined, as in
    ratio_interval: never 0 or inf."""
    return _percentiles(_ratio_of_ratios_draws(num, den, base_num, base_den))


def ratio_of_ratios_undefined_share(num, den, base_num, base_den):
    """The share of ratio_of_ratios_interval's replicates that are undefined."""
    return float(np.mean(np.isnan(_ratio_of_ratios_draws(num, den, base_num, base_den))))


def _ratio_of_ratios_draws(num, den, base_num, base_den):
    rng = np.random.default_rng(_seed(num, den, base_num, base_den))
    return _divide(_ratio_replicates(num, den, rng), _ratio_replicates(base_num, base_den, rng))


def _divide(top, bottom):
    """top / bottom elementwise, NaN (undefined) where bottom is 0 or either is
    undefined: 0/0 and x/0 are no number, and neither is their limit (x/0 read as
    inf would make a ratio of ratios over it read 0)."""
    top, bottom = np.asarray(top, dtype=float), np.asarray(bottom, dtype=float)
    defined = (bottom != 0) & ~np.isnan(bottom) & ~np.isnan(top)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(defined, top / np.where(defined, bottom, 1.0), np.nan)


def _ratio_replicates(num, den, rng):
    """RESAMPLES bootstrap replicates of median(num) / median(den) (NaN, undefined,
    where a replicate's median(den) is 0)."""
    a = np.asarray(num.samples, dtype=float)
    b = np.asarray(den.samples, dtype=float)
    if paired(num, den):
        rows = _indices(_labels(num), rng, RESAMPLES)
        top, bottom = np.median(a[rows], axis=1), np.median(b[rows], axis=1)
    else:
        top = np.median(a[_indices(_labels(num), rng, RESAMPLES)], axis=1)
        bottom = np.median(b[_indices(_labels(den), rng, RESAMPLES)], axis=1)
    return _divide(top, bottom)


# ---- the launch-to-launch resolution of an experiment ----
#
# Why: a run has few launches (3 by default), and the variation between
# launches is what moves a verdict from one run to the next (one launch's
# page placement, the host's neighbours, the CPU frequency of those minutes).
# A bootstrap over a few launches sees that variation through a few draws,
# so a ratio whose launches happened to agree gets an interval narrower than
# the next run's estimate will respect. Every comparison of an experiment is
# a repeated measurement of the same kind of launch effect, though: the
# spread of a ratio between the launches of one run, pooled over many
# comparisons, is the resolution (one launch's estimate of a ratio moves by
# about this much, in log terms, from launch to launch). It is the pooled
# variance of an analysis of variance (many comparisons, each with K
# launches, share one between-launch variance); the median of the
# per-comparison variances is used rather than their mean so a few
# pathological points (a lock that convoys in one launch) do not set
# everyone's resolution, divided by the median of chi-square_nu / nu so that
# it estimates the variance itself (nu = K - 1 degrees of freedom, the median
# by the Wilson-Hilferty approximation).
#
# Where: points plotted together (a panel: the same params but for the
# thread count) share a regime (a dedicated machine, or three programs
# under the pseudo-scheduler), and regimes differ tenfold in how much they
# move. So the resolution is pooled per panel, and a panel with few
# comparisons borrows from its whole experiment: its variance is the
# weighted mean of the panel's (weight: its comparisons) and the
# experiment's (weight: PRIOR_COMPARISONS), the shrinkage of an empirical
# Bayes estimate (Smyth 2004, "Linear models and empirical Bayes methods for
# assessing differential expression in microarray experiments", where each
# gene's few replicates borrow from all genes' variance) -- upwards only: a
# panel that moved more than its experiment keeps its own spread (the
# multiprogrammed panels, a few comparisons each, are the noisy ones).
#
# Between runs: launches minutes apart do not see everything that differs
# between two runs of the suite (measured on this VM, two pairs of
# consecutive runs: the median ratio moved as the launches predict, but one
# ratio in six moved by more than its 95% interval). RUN_TO_RUN_SD is that
# extra spread, measured from pairs of runs of the same revision (A/A runs;
# compare.run_to_run prints it for any pair), and added to the variance of
# every estimate of a run with launches.
#
# A ratio's interval is then at least estimate x exp(+-z sqrt(sd^2 / K +
# RUN_TO_RUN_SD^2)): the normal interval of the mean of K launch estimates
# with the pooled sd, plus the run's own. The bootstrap interval of the
# ratio's own samples is kept when it is wider (a point whose own samples
# spread more than its panel's typical point). Nothing here looks at a
# second run: the resolution comes from the launches of the run being judged
# and the stated run-to-run constant.

PRIOR_COMPARISONS = 8  # the weight of the experiment's resolution in a panel's
# The spread of a ratio between two runs beyond what their launches show (log
# scale, 1 sd): on this 2-core VM, from two A/A pairs of --quick runs, the
# smallest value at which at most 10% of the ratios moved by more than their
# 95% intervals (compare.run_to_run: 0.015 on a pair of 2-launch runs, 0.05
# on a pair of 3-launch runs; docs/results-format.md, "Resolution").
RUN_TO_RUN_SD = 0.03
PANEL_AXIS = "threads"  # the param a panel's points differ in


def _chi2_median_over_df(nu):
    """median(chi-square with nu degrees of freedom) / nu (Wilson-Hilferty)."""
    return (1.0 - 2.0 / (9.0 * nu)) ** 3


def _launch_medians(point):
    """{launch: median of that launch's samples}."""
    labels = _labels(point)
    samples = np.asarray(point.samples, dtype=float)
    return {int(label): float(np.median(samples[labels == label])) for label in np.unique(labels)}


def _pooled_var(variances_by_df):
    """median(s^2) / median(chi2_nu / nu) over (s^2, nu) pairs, None when empty."""
    if not variances_by_df:
        return None
    s2 = np.asarray([v for v, _ in variances_by_df])
    nu = float(np.median([d for _, d in variances_by_df]))
    return float(np.median(s2) / _chi2_median_over_df(nu))


def panel_key(point):
    """The panel a point is plotted in: its params but the thread count."""
    return tuple(sorted((k, repr(v)) for k, v in point.params.items() if k != PANEL_AXIS))


@dataclass(frozen=True)
class Resolution:
    """An experiment's launch-to-launch spread in one run (log scale, 1 sd)."""

    ratio_sd: object  # float over the whole experiment, or None (fewer than 2 launches / no comparison)
    panel_sd: dict  # panel_key -> float: a ratio's spread in that panel, shrunk towards ratio_sd
    value_sd: dict  # metric -> float: a single point's median between launches
    comparisons: int  # how many ratios the ratio_sd pools
    launches: int  # launches of the run (max over the points)
    run_sd: float = 0.0  # the run-to-run spread added to every floor

    def sd_of(self, *points):
        """The ratio spread for a comparison of these points (the widest of their panels)."""
        sds = [self.panel_sd.get(panel_key(p), self.ratio_sd) for p in points]
        sds = [sd for sd in sds if sd is not None]
        return max(sds) if sds else None


def side_by_side(points):
    """The groups of raw points measured side by side (same metric and params),
    each sorted by algorithm name: [(metric, [points...]), ...]. Derived ratio
    points (unit "x") are left out: they repeat the raw comparisons."""
    groups = {}
    for p in points:
        if p.unit == "x":
            continue
        key = (p.metric, tuple(sorted((k, repr(v)) for k, v in p.params.items())))
        groups.setdefault(key, []).append(p)
    return [(metric, sorted(members, key=lambda p: p.algorithm)) for (metric, _), members in groups.items()]


def resolution(points, run_sd=None):
    """The Resolution of an experiment's points (one run), pooled as described above.
    Derived ratio points (unit "x") are left out: they repeat the raw comparisons.
    run_sd: the run-to-run spread the floors add (None: RUN_TO_RUN_SD)."""
    ratio_vars, panel_vars, value_vars, launches = [], {}, {}, 1
    for metric, members in side_by_side(p for p in points if len(p.samples) >= 2):
        per_launch = [(p, _launch_medians(p)) for p in members]
        for p, meds in per_launch:
            launches = max(launches, len(meds))
            if len(meds) >= 2 and min(meds.values()) > 0:
                logs = np.log(list(meds.values()))
                value_vars.setdefault(metric, []).append((float(np.var(logs, ddof=1)), len(logs) - 1))
        # Every pair of the group, not each point against one reference: a
        # reference with one wild launch would otherwise lend its spread to
        # every comparison of the group, and the median would not see it
        # (a point with a wild launch spoils M - 1 of the M (M - 1) / 2 pairs).
        for i, (ref, ref_meds) in enumerate(per_launch):
            if len(ref_meds) < 2 or min(ref_meds.values()) <= 0:
                continue
            for p, meds in per_launch[i + 1 :]:
                if not paired(p, ref) or len(meds) < 2 or min(meds.values()) <= 0:
                    continue
                diffs = [np.log(meds[k]) - np.log(ref_meds[k]) for k in meds if k in ref_meds]
                if len(diffs) < 2:
                    continue
                entry = (float(np.var(diffs, ddof=1)), len(diffs) - 1)
                ratio_vars.append(entry)
                panel_vars.setdefault(panel_key(p), []).append(entry)
    whole = _pooled_var(ratio_vars)
    panel_sd = {}
    if whole is not None:
        for key, entries in panel_vars.items():
            n = len(entries)
            own = _pooled_var(entries)
            shrunk = (n * own + PRIOR_COMPARISONS * whole) / (n + PRIOR_COMPARISONS)
            panel_sd[key] = float(np.sqrt(max(own, shrunk)))
    return Resolution(
        ratio_sd=None if whole is None else float(np.sqrt(whole)),
        panel_sd=panel_sd,
        value_sd={m: float(np.sqrt(v)) for m, v in ((m, _pooled_var(e)) for m, e in value_vars.items())},
        comparisons=len(ratio_vars),
        launches=launches,
        run_sd=RUN_TO_RUN_SD if run_sd is None else run_sd,
    )


def critical_value():
    """The two-sided normal quantile of LEVEL (1.96 at 95%)."""
    return NormalDist().inv_cdf(0.5 + LEVEL / 2.0)


def floor_sd(sd, launches, run_sd=None):
    """The sd (log scale) of a run's estimate: sqrt(sd^2 / launches + run_sd^2)."""
    run_sd = RUN_TO_RUN_SD if run_sd is None else run_sd
    return float(np.sqrt(sd * sd / launches + run_sd * run_sd))


def widen(interval, estimate, sd, launches, run_sd=None):
    """The interval, widened to at least estimate x exp(+-z floor_sd(sd, launches, run_sd)).
    Unchanged for a run of one launch (no resolution: the bootstrap's interval alone)."""
    lo, hi = interval
    if sd is None or launches < 2 or not np.isfinite(estimate) or estimate <= 0:
        return interval
    half = critical_value() * floor_sd(sd, launches, run_sd)
    return (min(lo, estimate * float(np.exp(-half))), max(hi, estimate * float(np.exp(half))))


def launch_count(*points):
    """The launches every one of the points has samples from (the fewest)."""
    return min(len(np.unique(_labels(p))) for p in points)


def resolved_ratio_interval(num, den, res):
    """ratio_interval(num, den), widened by the resolution res of their panel (res may be None)."""
    interval = ratio_interval(num, den)
    if res is None or den.median == 0:
        return interval
    return widen(interval, num.median / den.median, res.sd_of(num, den), launch_count(num, den), res.run_sd)


def resolved_ratio_of_ratios_interval(num, den, base_num, base_den, res):
    """ratio_of_ratios_interval, widened by the resolution res (may be None): the two
    ratios come from different panels, so their launch-to-launch variances add (and
    each carries the run-to-run spread)."""
    interval = ratio_of_ratios_interval(num, den, base_num, base_den)
    if res is None or den.median == 0 or base_den.median == 0 or base_num.median == 0:
        return interval
    launches = (launch_count(num, den), launch_count(base_num, base_den))
    sds = (res.sd_of(num, den), res.sd_of(base_num, base_den))
    if min(launches) < 2 or None in sds:
        return interval
    estimate = (num.median / den.median) / (base_num.median / base_den.median)
    if not np.isfinite(estimate) or estimate <= 0:
        return interval
    var = sum(floor_sd(sd, k, res.run_sd) ** 2 for sd, k in zip(sds, launches))
    half = critical_value() * float(np.sqrt(var))
    lo, hi = interval
    return (min(lo, estimate * float(np.exp(-half))), max(hi, estimate * float(np.exp(half))))


def resolved_median_interval(point, res):
    """median_interval(point), widened by the resolution of the point's metric."""
    interval = median_interval(point)
    if res is None:
        return interval
    return widen(interval, point.median, res.value_sd.get(point.metric), launch_count(point), res.run_sd)
