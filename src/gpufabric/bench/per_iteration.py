"""Per-iteration timing (``bench --per-iteration``, nccl-tests 2.19's ``-I``) and each rank's own time.

nccl-tests ``-I 1`` records a CUDA event between every two iterations of its timed loop, takes each
iteration's time as the maximum over the GPUs (and then over the processes) and prints the minimum, the
maximum, the 99th percentile (index ``min(n-1, ceil(n*p/100)-1)`` of the sorted times) and the coefficient
of variation (population standard deviation over the mean) per size; its JSON adds each process's own
per-iteration times. Both engines do the same per batch (``BatchDetail``), and the kept batches of a size
become one ``IterationSpread``.

Why a rank's own time as well: in a collective every rank's iteration lasts as long as the slowest rank
makes it (the others wait inside the collective), so per-iteration durations are the same on every rank
whichever one is late. What differs is where the time went: the late rank spends it *before* entering the
collective (a busy host, a delay), the others *inside* it, waiting. ``WaitClock`` measures the waiting
(blocking collective calls on CPU, device synchronisations on GPU) so each rank's own time is its batch's
host time minus that. A GPU slowed by another process's kernels is not seen this way (its host is not
late); the per-iteration maxima still show the disturbance.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gpufabric.results.model import IterationSpread


@dataclass(frozen=True)
class BatchDetail:
    """One batch's per-iteration figures, as rank 0 files them after gathering every rank's."""

    per_iter_us: tuple[float, ...]
    """Each iteration's time, the slowest rank's (nccl-tests' per-iteration figure)."""
    rank_max_us: tuple[float, ...]
    """Each rank's own slowest iteration of this batch."""
    rank_own_us: tuple[float, ...]
    """Each rank's host time per iteration not spent waiting for its peers."""


def detail_of(gathered: Sequence[Sequence[float]]) -> BatchDetail:
    """A batch's detail from every rank's ``[own_us, t_1_us, ..., t_n_us]`` (``rank_row``), in rank order."""
    times = [list(row[1:]) for row in gathered]
    per_iter = tuple(max(column) for column in zip(*times, strict=True))
    return BatchDetail(
        per_iter_us=per_iter,
        rank_max_us=tuple(max(t) for t in times),
        rank_own_us=tuple(float(row[0]) for row in gathered),
    )


def rank_row(own_s: float, iteration_s: Sequence[float]) -> list[float]:
    """What one rank contributes to a batch's gather: its own time and each iteration's, in microseconds."""
    return [own_s * 1e6, *(t * 1e6 for t in iteration_s)]


def reduced(seconds: Sequence[float], mode: str) -> float:
    """A batch's time over the ranks as nccl-tests ``-a`` reduces it: avg (its default), min or max."""
    if mode == "min":
        return min(seconds)
    if mode == "max":
        return max(seconds)
    return sum(seconds) / len(seconds)


def percentile(sorted_values: Sequence[float], percent: int) -> float:
    """nccl-tests' ``percentileIndex``: the value at ``min(n - 1, ceil(n * p / 100) - 1)``."""
    n = len(sorted_values)
    return sorted_values[min(n - 1, (n * percent + 99) // 100 - 1)]


def spread_of(details: Sequence[BatchDetail]) -> IterationSpread | None:
    """The per-iteration figures of a size's kept batches (None without any)."""
    times = sorted(t for d in details for t in d.per_iter_us)
    if not times:
        return None
    mean = statistics.fmean(times)
    stdev = math.sqrt(statistics.fmean((t - mean) ** 2 for t in times))  # population, as nccl-tests
    ranks = len(details[0].rank_own_us)
    return IterationSpread(
        iterations=len(times),
        min_us=times[0],
        max_us=times[-1],
        p99_us=percentile(times, 99),
        cv_pct=stdev / mean * 100 if mean > 0 else 0.0,
        rank_max_us=[max(d.rank_max_us[r] for d in details) for r in range(ranks)],
        rank_own_us=[statistics.median(d.rank_own_us[r] for d in details) for r in range(ranks)],
    )


class WaitClock:
    """Host seconds spent waiting for peers (blocking collective calls, device synchronisations) since the
    last ``reset``; ``timed`` wraps the functions that wait."""

    def __init__(self) -> None:
        self.waited_s = 0.0

    def reset(self) -> None:
        self.waited_s = 0.0

    def timed(self, wait: Callable[[], Any]) -> Callable[[], Any]:
        def waiting() -> Any:
            start = time.perf_counter()
            try:
                return wait()
            finally:
                self.waited_s += time.perf_counter() - start

        return waiting
