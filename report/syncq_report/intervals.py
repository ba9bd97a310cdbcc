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

import numpy as np

LEVEL = 0.95  # two-sided confidence level of every interval
RESAMPLES = 4000  # bootstrap replicates per interval


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
    return np.stack(
        [
            np.concatenate([rng.choice(groups[rng.integers(0, k)], size=len(groups[j])) for j in range(k)])
            for _ in range(resamples)
        ]
    )


def _percentiles(values):
    """The percentile interval; replicate values themselves (no interpolation),
    so an infinite replicate gives an infinite end rather than NaN."""
    tail = (1.0 - LEVEL) / 2.0
    lo, hi = np.quantile(values, [tail, 1.0 - tail], method="inverted_cdf")
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
    An interval may be unbounded (inf) when some replicate's denominator is 0."""
    a = np.asarray(num.samples, dtype=float)
    b = np.asarray(den.samples, dtype=float)
    rng = np.random.default_rng(_seed(num, den))
    if len(a) <= 1 and len(b) <= 1:
        ratio = num.median / den.median if den.median else np.inf
        return (float(ratio), float(ratio))
    if paired(num, den):
        rows = _indices(_labels(num), rng, RESAMPLES)
        top, bottom = np.median(a[rows], axis=1), np.median(b[rows], axis=1)
    else:
        top = np.median(a[_indices(_labels(num), rng, RESAMPLES)], axis=1)
        bottom = np.median(b[_indices(_labels(den), rng, RESAMPLES)], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(bottom != 0, top / np.where(bottom != 0, bottom, 1.0), np.inf)
    return _percentiles(ratios)
