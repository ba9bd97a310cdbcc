# SPDX-License-Identifier: BSD-2-Clause
"""Standings: each of syncq's algorithms against the best peer library measured beside it.

For every experiment point (same metric, unit and params, so the same run and
the same conditions) that has at least one peer point (a point record with
"peer": true), each syncq algorithm (a registry entry: "family" set, "peer"
false) is compared with the best peer there, best by the metric's own
direction. The ratio is syncq's median over the best peer's; `ahead` says
whether syncq's algorithm is at least as good. Normalized metrics
("<metric>_ratio") repeat their raw metric and are left out.
"""

from dataclasses import dataclass

NORMALIZED_SUFFIX = "_ratio"


@dataclass(frozen=True)
class Standing:
    metric: str
    unit: str
    better: str  # "lower" or "higher"
    params: dict
    algorithm: str
    median: float
    best_peer: str
    peer_median: float
    ratio: object  # median / peer_median, or None when the peer's median is 0
    ahead: bool  # syncq's algorithm at least as good as the best peer


def is_ours(point):
    """A syncq algorithm: a registry entry that is not a peer (floors and baselines by name are not)."""
    return not point.peer and point.family is not None


def best_peer(points):
    """The best peer point among points (all of one metric), or None without peers."""
    peers = [p for p in points if p.peer]
    if not peers:
        return None
    if peers[0].better == "higher":
        return max(peers, key=lambda p: p.median)
    return min(peers, key=lambda p: p.median)


def _key(point):
    return (point.metric, point.unit, tuple(sorted((k, str(v)) for k, v in point.params.items())))


def compute(points):
    """Standings for one experiment's points, in order of first appearance of each point."""
    groups = {}
    for point in points:
        if point.metric.endswith(NORMALIZED_SUFFIX):
            continue
        groups.setdefault(_key(point), []).append(point)
    out = []
    for group in groups.values():
        best = best_peer(group)
        if best is None:
            continue
        for point in group:
            if not is_ours(point):
                continue
            ratio = point.median / best.median if best.median != 0 else None
            if point.better == "higher":
                ahead = point.median >= best.median
            else:
                ahead = point.median <= best.median
            out.append(
                Standing(
                    metric=point.metric,
                    unit=point.unit,
                    better=point.better,
                    params=dict(point.params),
                    algorithm=point.algorithm,
                    median=point.median,
                    best_peer=best.algorithm,
                    peer_median=best.median,
                    ratio=ratio,
                    ahead=ahead,
                )
            )
    return out
