"""How busbw rises with the message size towards its plateau: the alpha-beta model, fitted per group.

A collective of S bytes (nccl-tests' size column) moves S_bus = f x S bytes over the bottleneck link
(f: nccl-tests' busbw factor, doc/PERFORMANCE.md) and pays a fixed cost alpha (launch, synchronisation,
pipeline fill) on top of the link time S_bus / B:

    t(S) = alpha + f S / B,   so   busbw(S) = f S / t(S) = B x S / (S + S_half),   S_half = alpha B / f

B is the plateau (busbw as S grows without bound) and S_half the size at which busbw is half of it. The
band's efficiency is fitted on plateau values (each figure's busbw x (S + S_half) / S) and applied at a
size S times S / (S + S_half).

S_half is fitted on the corpus' series (rows of one run at several sizes, ``series`` in published.yaml)
from their sizes where the band applies: 1 / busbw = 1 / B + (S_half / B) x (1 / S) is a straight line
in 1 / S, fitted by least squares; a series that does not rise (negative slope) has S_half = 0. A group
takes the median S_half of its series, or its parent group's when it has none; a group with no series at
any level has no curve (S_half None: the band is flat, as the plateau).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def fit_half_size(points: Sequence[tuple[int, float]]) -> float | None:
    """S_half in bytes from (size_bytes, busbw) points of one run; None with fewer than 2 sizes or a
    line that gives no positive plateau."""
    by_size = dict(points)
    if len(by_size) < 2:
        return None
    xs = [1.0 / size for size in by_size]
    ys = [1.0 / busbw for busbw in by_size.values()]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread
    intercept = mean_y - slope * mean_x
    if intercept <= 0:
        return None
    return max(0.0, slope / intercept)


def plateau_factor(size_bytes: int | None, half_size: float | None) -> float:
    """busbw(S) / plateau = S / (S + S_half); 1 without a curve or a size (the plateau itself)."""
    if size_bytes is None or not half_size:
        return 1.0
    return size_bytes / (size_bytes + half_size)


def group_half_size(halves: Sequence[float]) -> float | None:
    """A group's S_half: the median over its series."""
    return statistics.median(halves) if halves else None
