"""Batch arithmetic shared by every engine: samples, warm-up stabilisation, stopping rules, batch sizes.

Pure Python (no torch, no CUDA), so the torch engine (``engines.torch.timing``) and the direct NCCL engine
(``engines.nccl.timer``) decide identically, and the rules are tested directly. How each size's timing
went becomes the lines of ``metadata.notes`` in ``bench.timing_notes``.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.per_iteration import BatchDetail
from gpufabric.bench.steady_rule import allowed_discards, steady
from gpufabric.bench.timing_settings import Estimator

# Stop decisions as the integers rank 0 broadcasts.
STOP_REASONS: tuple[str, ...] = ("", "batches", "precision", "budget", "max_batches", "cap")


@dataclass
class BatchPlan:
    iters_per_batch: int
    warmup: int
    host_enqueue_per_iter_s: float


@dataclass
class BatchTime:
    """One batch on this rank: seconds per iteration, host seconds to enqueue, and whether a hold
    (``hold_stream``) outlasted the enqueue (always True without one)."""

    per_iter_s: float
    host_enqueue_s: float
    held: bool = True
    own_s: float = 0.0
    """This rank's host seconds per iteration not spent waiting for its peers (``bench.per_iteration``)."""
    iteration_s: list[float] = field(default_factory=list)
    """Each iteration's seconds (``per_iteration`` only)."""


@dataclass
class Samples:
    iters_per_batch: int
    samples_us: list[float] = field(default_factory=list)
    stopped_by: str = "batches"
    discarded_us: list[float] = field(default_factory=list)
    """Warm-up batches dropped before two consecutive batches agreed (stabilisation)."""
    stable: bool = True
    """False when stabilisation gave up (``max_unstable_batches`` reached) and kept what it had."""
    short_cap: bool = False
    """Stabilisation gave up under the short batches' cap (``steady_rule.allowed_discards``)."""
    unheld: int = 0
    """Batches discarded because the hold ended before the host had enqueued them."""
    warmup_iters: int = 0
    details: list[BatchDetail] = field(default_factory=list)
    """Per-iteration figures of the kept batches (``--per-iteration``; empty otherwise)."""
    issue_us: float | None = None
    """The slowest rank's host time per iteration to issue its launches, median over the kept batches
    (the direct engine; None elsewhere): near ``median_us`` the GPUs kept up with the hosts, and the
    time is the hosts' launch rate (``results.model.LAUNCH_BOUND_SHARE``)."""

    @property
    def median_us(self) -> float:
        return statistics.median(self.samples_us)

    def estimate_us(self, estimator: Estimator) -> float:
        return estimate(self.samples_us, estimator)


def estimate(values: list[float], estimator: Estimator) -> float:
    """The per-size time from batch times: their median (robust to one cold or disturbed batch) or mean."""
    if not values:
        raise ValueError("no batch samples")
    return statistics.median(values) if estimator == "median" else statistics.fmean(values)


# Two-sided 95% Student t quantiles by degrees of freedom (1..30); 1.96 beyond.
_T95 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)


def _t95(n: int) -> float:
    return _T95[n - 2] if n - 2 < len(_T95) else 1.96


def relative_ci95(values: list[float]) -> float:
    """Half-width of the 95% confidence interval of the mean of ``values``, relative to the mean.

    Unlike the max-min range, this shrinks as batches accumulate, so a noisy size converges instead
    of always running to its budget.
    """
    n = len(values)
    if n < 2:
        return math.inf
    mean = statistics.fmean(values)
    if mean <= 0:
        return math.inf
    return _t95(n) * statistics.stdev(values) / math.sqrt(n) / mean


def relative_ci95_median(values: list[float]) -> float:
    """Half-width of an approximate 95% confidence interval of the median, relative to the median.

    The scale is the MAD (x1.4826, a standard deviation under normal noise) and the median's standard
    error is sqrt(pi/2) times the mean's. One disturbed batch barely moves the MAD, so a size with one
    outlier stops as soon as the others agree, where the mean's interval (inflated by the outlier's
    variance) would run on to the budget.
    """
    n = len(values)
    if n < 2:
        return math.inf
    median = statistics.median(values)
    if median <= 0:
        return math.inf
    mad = statistics.median(abs(v - median) for v in values) * 1.4826
    return _t95(n) * math.sqrt(math.pi / 2) * mad / math.sqrt(n) / median


def relative_ci(values: list[float], estimator: Estimator) -> float:
    """The confidence half-width that matches the reported estimate."""
    return relative_ci95_median(values) if estimator == "median" else relative_ci95(values)


@dataclass
class BatchLog:
    """Rank 0's record of one size's batch times, with warm-up stabilisation.

    Until two consecutive batches agree (``steady``: within ``tol``, or the microsecond floor) the
    older one of each disagreeing pair is discarded (at most ``max_unstable`` of them, or
    ``allowed_discards`` where batches are short; then what is there is kept and ``stable`` stays
    False). A warm batch costs nothing: when the first two agree, both are kept. ``details``
    (per-iteration figures, when measured) follow their samples exactly.
    """

    tol: float
    max_unstable: int
    samples_us: list[float] = field(default_factory=list)
    discarded_us: list[float] = field(default_factory=list)
    settled: bool = False
    stable: bool = True
    short_cap: bool = False
    """When it gave up: whether the short batches' cap was the one that applied."""
    details: list[BatchDetail | None] = field(default_factory=list)
    issues_us: list[float | None] = field(default_factory=list)
    """Each kept batch's hosts' issue time per iteration (``Samples.issue_us``), as ``details`` follow."""

    def __post_init__(self) -> None:
        if self.max_unstable <= 0:
            self.settled = True

    def add(self, value_us: float, detail: BatchDetail | None = None, issue_us: float | None = None) -> None:
        self.samples_us.append(value_us)
        self.details.append(detail)
        self.issues_us.append(issue_us)
        if self.settled or len(self.samples_us) < 2:
            return
        older, newer = self.samples_us[-2], self.samples_us[-1]
        if steady(older, newer, self.tol):
            self.settled = True
        elif len(self.discarded_us) >= (cap := allowed_discards(min(older, newer), self.max_unstable)):
            self.settled, self.stable = True, False
            self.short_cap = cap > self.max_unstable
        else:
            self.discarded_us.append(self.samples_us.pop(0))
            self.details.pop(0)
            self.issues_us.pop(0)


def should_stop(
    samples_us: list[float],
    *,
    config: BenchConfig,
    elapsed_s: float,
    settled: bool = True,
    batches_run: int | None = None,
) -> str | None:
    """Rank 0's stopping rule; returns why it stops, or None to run another batch.

    ``settled``: warm-up stabilisation is over (no sample counts towards ``batches`` or ``precision``
    before). ``batches_run`` counts discarded batches too, for the adaptive ``max_batches`` cap.
    """
    ran = len(samples_us) if batches_run is None else batches_run
    if not config.adaptive:
        return "batches" if settled and len(samples_us) >= config.batches else None
    assert config.precision is not None
    if (
        settled
        and len(samples_us) >= config.min_batches
        and relative_ci(samples_us, config.estimator) <= config.precision
    ):
        return "precision"
    if elapsed_s >= config.budget_s and len(samples_us) >= 2:
        return "budget"
    if ran >= config.max_batches and len(samples_us) >= 2:
        return "max_batches"
    return None


HARD_BATCH_CAP = 10_000
"""Batches per size after which rank 0 stops whatever the rules say (a safety net, reported as "cap")."""


def stop_code(log: BatchLog, config: BenchConfig, *, elapsed_s: float, ran: int) -> int:
    """Rank 0's decision after a batch, as the integer it broadcasts (0: run another; else an index into
    ``STOP_REASONS``)."""
    why = should_stop(
        log.samples_us, config=config, elapsed_s=elapsed_s, settled=log.settled, batches_run=ran
    )
    if why is None and ran >= HARD_BATCH_CAP:
        why = "cap"
    return STOP_REASONS.index(why) if why else 0


def samples_of(
    log: BatchLog, config: BenchConfig, *, iters: int, reason: str, warmup: int, unheld: int = 0
) -> Samples:
    """What one size's batches leave: in fixed mode the last ``batches`` kept samples (batches=1: the
    agreeing pair's newer half), in adaptive mode all of them."""
    kept, details, issues = log.samples_us, log.details, log.issues_us
    if not config.adaptive and len(kept) > config.batches:
        kept, details, issues = kept[-config.batches :], details[-config.batches :], issues[-config.batches :]
    measured = [issue for issue in issues if issue is not None]
    return Samples(
        issue_us=statistics.median(measured) if measured else None,
        details=[d for d in details if d is not None],
        iters_per_batch=iters,
        samples_us=kept,
        stopped_by=reason,
        discarded_us=log.discarded_us,
        stable=log.stable,
        short_cap=log.short_cap,
        unheld=unheld,
        warmup_iters=warmup,
    )


def batch_iters(per_iter_s: float, config: BenchConfig) -> int:
    """Iterations per batch: enough for ``batch_floor_s`` of work, capped at ``max_iters_per_batch``;
    never below ``iters`` in fixed mode (``-n`` is a floor there, as the user asked for it)."""
    floor_s = config.batch_floor_s
    if floor_s <= 0:
        return config.iters
    wanted = math.ceil(floor_s / max(per_iter_s, 1e-9))
    sized = max(1, min(config.max_iters_per_batch, wanted))
    return sized if config.adaptive else max(config.iters, sized)
