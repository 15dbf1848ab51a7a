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
- ``median+tail10`` (the default between GPUs): both, each against its own healthy level, the lower
  counting (``analysis.isolate.blend``). On 4x H200 (2026-11-27) tail10 alone found the light load (1 of
  2 runs) but read the heavy one healthy. The healthy groups' own slowest tenth was about as deep as
  the heavy load: clean tail10 runs' best group read 128-130 GB/s where the morning's median runs read
  237-239 (0.55), and the heavy load reads 0.45-0.53 at the median. A tail judged against healthy tails
  cannot see a load no deeper than the healthy tail that slows every batch alike; the median sees
  exactly that one, and the tail the load the median drops.

GPU rounds use many short batches (``TAIL_BATCHES`` of ``TAIL_BATCH_S``: 100 batches of 5 ms, a window
of about 0.5 s, so a 50 ms burst every 200 ms is in it two or three times, each time over 4-5 whole
batches); the median of 100 is as steady as the median of 5 long ones. Until the engine sized batches
from a warm warm-up (``engines.torch.timing``), those batches were single 140 us alltoalls on 4x H200
(2026-11-27): a 14 ms window, which the light load's bursts missed in 4 of 11 rounds, and in which a
healthy group's slowest tenth was its two warm-up batches (1.5-1.9x) and the heavy load read 1.1x at
the median, not the 0.45-0.53 of 20 ms batches: the figures above from those runs are of that window.
Every reading leaves out the first ``WARMUP_BATCHES`` of 20 or more (``settled``). Their batches are
device-timed (the stream held while the host enqueues), so a slow batch is the GPU's or its link's own.
CPU rounds keep the ``median``: a CPU batch includes the host's scheduler, whose preemptions on a shared
host an upper quantile would read as a slow node (healthy pairs' batches ranged 0.7-3.6 ms here). Either
way the confirm stage compares a suspect only with control groups of the same round under the same statistic,
so its rank test stays exact and its scaled test's noise is the spread of that statistic.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Literal

from gpufabric.errors import UsageError

GroupStatistic = Literal["median", "mean", "p95", "tail10", "median+tail10"]
GROUP_STATISTICS: tuple[GroupStatistic, ...] = ("median", "mean", "p95", "tail10", "median+tail10")
# CPU ranks and virtual nodes (host-scheduled batches): the median. GPUs talking directly: both.
DEFAULT_STATISTIC: GroupStatistic = "median"
BLENDED: GroupStatistic = "median+tail10"
"""Read twice (the median and tail10); ``group_readings`` gives both, ``analysis.isolate.blend`` one."""
GPU_STATISTIC: GroupStatistic = BLENDED
TAIL_FRACTION = 0.10
"""``tail10``: the mean of this slowest fraction of the batches (at least one)."""
WARMUP_BATCHES, SETTLE_FROM = 2, 20
"""Left out of every reading of ``SETTLE_FROM`` batches or more: the first ``WARMUP_BATCHES``. On 4x H200
(2026-11-27, 56 group tests of 100 single-iteration batches) 22 of the 28 healthy groups' first two
batches read 1.5-1.9x their median, and no later batch of a healthy group above 1.04x: two of a tail10's
ten, which set its healthy spread (5.5% between groups with them, 0.8% without)."""


def parse_statistic(flag: str, value: str) -> GroupStatistic:
    """``value`` as a statistic, or one ``UsageError`` line naming ``flag`` and the choices."""
    named = {name: name for name in GROUP_STATISTICS}
    if value not in named:
        raise UsageError(f"{flag} {value!r}: choose from {', '.join(GROUP_STATISTICS)}")
    return named[value]


def settled(samples_us: Sequence[float]) -> Sequence[float]:
    """The batches a reading looks at: from ``SETTLE_FROM`` batches on, all but the first
    ``WARMUP_BATCHES`` (fewer, e.g. the median of 5, are read whole)."""
    return samples_us[WARMUP_BATCHES:] if len(samples_us) >= SETTLE_FROM else samples_us


def batch_time_us(samples_us: Sequence[float], statistic: GroupStatistic) -> float:
    """One group test's per-iteration time from its batches' (microseconds). Upper quantiles interpolate
    linearly between the two nearest batches (numpy's default), so 100 batches' p95 lies between the
    5th and 6th slowest."""
    if not samples_us:
        raise ValueError("a group test without timed batches")
    samples_us = settled(samples_us)
    if statistic in ("median", BLENDED):  # the blend's first reading; ``group_readings`` gives both
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


def group_readings(
    busbw_gbps: float, time_us: float, samples_us: Sequence[float], statistic: GroupStatistic
) -> float | tuple[float, float]:
    """What a group test reports to isolate: its busbw at ``statistic``, or for ``median+tail10`` the
    pair (busbw at the median, busbw at tail10) that ``analysis.isolate.blend`` turns into one."""
    if statistic == BLENDED:
        return (busbw_under(busbw_gbps, time_us, samples_us, "median"),
                busbw_under(busbw_gbps, time_us, samples_us, "tail10"))  # fmt: skip
    return busbw_under(busbw_gbps, time_us, samples_us, statistic)
