"""Which statistic of a group test's timed batches isolate compares: one number per group, the same for
every group of a search (suspects, their healthy controls and the screen's reference alike).

Every group test times ``batches`` batches of the collective (``engines.torch.timing``) and keeps each
batch's per-iteration time (``GroupResult.samples_us``). The engine's own per-size estimate is their
median, which one disturbed batch cannot move; for isolate that is the wrong question. A GPU busy with
someone else's work a quarter of the time (issue 33: a matmul loop busy 50 ms of every 200 ms beside the
search, on 4x H200) slows a minority of batches, so the median threw it away: 0 short groups after the
screen, while a training job on that GPU feels it. What each statistic sees of a node slow by ``s`` for
a fraction ``d`` of the time:

- ``median``: nothing while the slow batches are fewer than half.
- ``mean`` (total time over iterations, what a job's throughput feels): ``1 - d (1 - 1/s)`` of the
  healthy busbw, diluted by the duty cycle: the light load (d = 0.25, s = 2.2 from the heavy run's 0.45)
  reads about 0.86, inside isolate's 25% floor for real runs.
- ``p95`` (the batch time that only 5% of the batches exceed): the slow part at full depth (about 0.45
  for the light load) as soon as more than 5% of the batches are slow, but near 5% it flips between
  healthy and slow from one test to the next (the simulator convicted healthy partners so).
- ``tail10`` (the mean of the slowest tenth): the slow part at full depth above 10% slow batches, in
  proportion below, without the flip.

With ``--statistic tail10`` GPU rounds use many short batches (``TAIL_BATCHES`` of ``TAIL_BATCH_S``:
100 batches of 5 ms, a window of about 0.5 s, so a 50 ms burst every 200 ms is in it two or three
times, each time over 4-5 whole batches). Measured on 4x H200 (2026-11-27): the light load convicted in 1
of 2 runs, the heavy one not seen in 1 run, so the median stays the default. Their batches are
device-timed (the stream held while the host enqueues), so a slow
batch is the GPU's or its link's own, and healthy ones agree within about 1%. CPU rounds keep the
``median``: a CPU batch includes the host's scheduler, whose preemptions on a shared host an upper
quantile would read as a slow node (healthy pairs' batches ranged 0.7-3.6 ms here). Either way the
confirm stage compares a suspect only with control groups of the same round under the same statistic,
so its rank test stays exact and its scaled test's noise is the spread of that statistic.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Literal

from gpufabric.errors import UsageError

GroupStatistic = Literal["median", "mean", "p95", "tail10"]
GROUP_STATISTICS: tuple[GroupStatistic, ...] = ("median", "mean", "p95", "tail10")
# The default on CPU ranks, virtual nodes and GPUs alike (GPUs: measured on 4x H200, see
# jobs.isolate_request); tail10 is asked for with --statistic.
DEFAULT_STATISTIC: GroupStatistic = "median"
INTERMITTENT_STATISTIC: GroupStatistic = "tail10"  # --statistic tail10: a GPU slow part of the time
TAIL_FRACTION = 0.10
"""``tail10``: the mean of this slowest fraction of the batches (at least one)."""


def parse_statistic(flag: str, value: str) -> GroupStatistic:
    """``value`` as a statistic, or one ``UsageError`` line naming ``flag`` and the choices."""
    named = {name: name for name in GROUP_STATISTICS}
    if value not in named:
        raise UsageError(f"{flag} {value!r}: choose from {', '.join(GROUP_STATISTICS)}")
    return named[value]


def batch_time_us(samples_us: Sequence[float], statistic: GroupStatistic) -> float:
    """One group test's per-iteration time from its batches' (microseconds). Upper quantiles interpolate
    linearly between the two nearest batches (numpy's default), so 100 batches' p95 lies between the
    5th and 6th slowest."""
    if not samples_us:
        raise ValueError("a group test without timed batches")
    if statistic == "median":
        return statistics.median(samples_us)
    if statistic == "mean":
        return statistics.fmean(samples_us)
    ordered = sorted(samples_us)
    if statistic == "tail10":
        slowest = ordered[-max(1, round(TAIL_FRACTION * len(ordered))) :]
        return statistics.fmean(slowest)
    position = 0.95 * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def busbw_under(
    busbw_gbps: float, time_us: float, samples_us: Sequence[float], statistic: GroupStatistic
) -> float:
    """The group's busbw at ``statistic``'s time instead of the engine's estimate ``time_us`` (busbw is
    bytes over time, so it scales inversely)."""
    chosen = batch_time_us(samples_us, statistic)
    return busbw_gbps * time_us / chosen if chosen > 0 else 0.0
