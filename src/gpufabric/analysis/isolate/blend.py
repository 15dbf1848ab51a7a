"""One number per group test from two readings of its batches: the median and the slowest tenth.

A GPU loaded all the time slows every batch alike (its median drops; its tail need be no deeper than a
healthy group's tail); one loaded a quarter of the time slows a minority of batches (its median unmoved,
its tail deep). Read at one statistic alone, one of them is missed (issue 33, 4x H200: the median
missed the light load, tail10 the heavy one). So a group test reports both
(``bench.group_statistic.group_readings``) and the search judges one blended busbw, in the median's
units: each reading against its own healthy level, the lower counting,

    blended = min(median busbw, tail busbw x healthy median / healthy tail)

where each healthy level is learned from the screen: the better of two groups (a slow node only pulls
its own group down, never the better one), the median of three or more (one slow group cannot move it,
and the best of many tails would be the luckiest one). Fixed once, so every later round is judged on
the same scale; the expected value the blended busbw is judged against is ``engine_measurer``'s. A
healthy group reads about its median; a load that slows every batch reads its median's drop, one that
slows a tenth of the batches or more reads its tail's. Everything
downstream (the short line, the controls, the rank and scaled tests, node or link) sees one ratio per
group as before.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

Reading = float | tuple[float, float]
"""A group test's busbw (GB/s), or its (busbw at the median, busbw at the slowest tenth)."""


MEDIAN_FROM = 3
"""From this many screen groups their median is the healthy level: one slow group cannot move it."""


def healthy_level(values: Sequence[float]) -> float:
    """The screen's healthy level of one reading: the better of two groups, the median of three or more
    (the best of many tails is the luckiest one, which reads every other healthy group short)."""
    return max(values) if len(values) < MEDIAN_FROM else statistics.median(values)


def tail_scale(screen: Sequence[Reading]) -> float | None:
    """healthy median / healthy tail of the screen's readings; None when no reading has a tail."""
    pairs = [(float(r[0]), float(r[1])) for r in screen if isinstance(r, tuple)]
    if not pairs:
        return None
    tail = healthy_level([t for _, t in pairs])
    return healthy_level([m for m, _ in pairs]) / tail if tail > 0 else None


def blended(reading: Reading, scale: float | None) -> float:
    """``reading`` as one busbw in the median's units (a plain busbw stays as it is)."""
    if isinstance(reading, tuple):
        median, tail = reading
        return min(float(median), float(tail) * scale) if scale is not None else float(median)
    return float(reading)
