"""Timed batches of the direct engine: what nccl-tests' ``BenchTime`` times, on every rank.

The rules are the torch engine's (``bench.batches``: warm-up, stabilisation, ``-n`` or adaptive batches,
rank 0 decides when to stop), with one difference that is the point of this engine: a launch is NCCL's
own call (~1.4 us of Python on one H100), so no stream hold is needed to keep host time out of large
sizes, and below them the time includes NCCL's launch cost exactly as nccl-tests' does.

Per batch, as nccl-tests 2.19 times one (docs/engines.md, "What nccl-tests times, and what we time"):
every rank's GPU idle and every host released at the same moment, then a host clock from that moment
over ``n`` launches and the wait for the stream, divided by ``n``. nccl-tests releases its ranks with
``MPI_Barrier`` after synchronising its stream; we release them with an untimed one-element all_reduce
(``Workload.line_up``: it ends at the same moment on every GPU) and a stream synchronisation after it,
which leaves every host within a few microseconds of the others without MPI. The GPU is idle when the
clock starts: launches queued behind the line-up before the clock started (as an event-timed batch had
them) let a rooted collective's senders run ahead of their root inside the timed region, which read
reduce at 0.6x nccl-tests' time in one run and 1.0x in the next. With ``graph`` the batch is one replay
of a CUDA graph of ``n`` captured launches (nccl-tests ``-G``), captured once per size and replayed once
untimed first (the first replay uploads the graph).

Per-batch times travel over the control channel (never NCCL) and are reduced like nccl-tests ``-a``.
With ``per_iteration`` (nccl-tests ``-I``) a CUDA event sits between every two launches, and every
rank's iteration times and own time (``bench.per_iteration``) travel with its batch time.
``launches`` counts the collective calls that ran (warm-up, batches, graph replays), outside the timed
region, for the NIC traffic each size must account for (``bench.traffic``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from gpufabric.bench.batches import STOP_REASONS, BatchLog, Samples, batch_iters, samples_of, stop_code
from gpufabric.bench.config import BenchConfig
from gpufabric.bench.per_iteration import BatchDetail, WaitClock, detail_of, rank_row, reduced
from gpufabric.engines.nccl.collectives import Workload
from gpufabric.engines.nccl.control import ControlPlane
from gpufabric.engines.nccl.cuda import Graph, Stream
from gpufabric.engines.nccl.launch_loop import LaunchLoop, raise_for


@dataclass(frozen=True)
class DirectBatch:
    """One batch on this rank: seconds per iteration (the host clock), this rank's own seconds per
    iteration (issuing its launches, less what they waited for the device), and each iteration's
    seconds by CUDA events (``per_iteration`` only)."""

    per_iter_s: float
    own_s: float
    iteration_s: list[float]


WARM_BEFORE_CAPTURE = 3
"""Launches that warm the communicator's connections before a capture (torch requires it too)."""


@dataclass
class DirectTimer:
    config: BenchConfig
    stream: Stream
    control: ControlPlane
    rank: int
    world_size: int
    launches: int = 0
    """Collective calls run so far (the line-up's one-element all_reduce is not one of them)."""
    waits: WaitClock = field(default_factory=WaitClock)
    """Time this rank's launches spent waiting for the device (the ``slow`` fault's launches do)."""
    loop: LaunchLoop | None = None
    """The C launch loop that times batches (None, or without a C compiler: the Python loop)."""

    @property
    def timing_loop(self) -> LaunchLoop | None:
        """The C loop where it times this run's batches: not with ``per_iteration`` (CUDA events between
        the calls, recorded from Python) or ``graph`` (a batch is one replay)."""
        return None if self.config.per_iteration or self.config.graph else self.loop

    def reduce_batch(self, batch: DirectBatch) -> tuple[float, BatchDetail | None, float]:
        """The batch's time per iteration reduced over the ranks (avg, min or max: nccl-tests ``-a``),
        (``per_iteration``) every rank's figures in one detail, and the slowest rank's host time per
        iteration to issue its launches in microseconds (``Samples.issue_us``). Every rank sends its time
        and ``rank_row`` (its own time, then each iteration's: none without ``per_iteration``)."""
        rows = self.control.allgather([batch.per_iter_s, *rank_row(batch.own_s, batch.iteration_s)])
        seconds = [float(row[0]) for row in rows]
        issue_us = max(float(row[1]) for row in rows)
        detail = detail_of([row[1:] for row in rows]) if self.config.per_iteration else None
        return reduced(seconds, self.config.time_reduction), detail, issue_us

    def run_batch(self, work: Workload, iters: int, graph: Graph | None = None) -> DirectBatch:
        """One timed batch on this rank: a graph replay, the C launch loop, or (with ``per_iteration``'s
        events between the calls, or no C loop) the Python loop."""
        program = work.native if graph is None and not self.config.per_iteration else None
        calls = work.batch(iters) if graph is None and program is None else []
        marks = [self.stream.event() for _ in range(iters + 1)] if self.config.per_iteration else []
        self.launches += iters
        try:
            work.line_up()  # untimed: ends at the same moment on every GPU ...
            self.stream.synchronize()  # ... and releases every host then, each GPU idle
            self.waits.reset()
            start = time.perf_counter()
            if graph is not None:
                graph.launch()
            elif program is not None:
                status, failed = program.run(iters)
                if status:
                    raise_for(status, failed)
            elif marks:
                for mark, call in zip(marks, calls, strict=False):
                    mark.record()
                    call()
                marks[-1].record()
            else:
                for call in calls:
                    call()
            own = time.perf_counter() - start - self.waits.waited_s
            self.stream.synchronize()
            elapsed = time.perf_counter() - start
            iteration_s = [marks[i + 1].seconds_since(marks[i]) for i in range(len(marks) - 1)]
            return DirectBatch(elapsed / iters, own / iters, iteration_s)
        finally:
            for mark in marks:
                mark.destroy()

    def capture(self, work: Workload, iters: int) -> Graph:
        for i in range(WARM_BEFORE_CAPTURE):
            work.launch(i)
        self.stream.synchronize()
        self.stream.begin_capture()
        for i in range(iters):
            work.launch(i)
        graph = self.stream.end_capture()
        graph.launch()  # the first replay uploads the graph: never timed
        self.launches += WARM_BEFORE_CAPTURE + iters  # captured launches do not run; the replay does
        self.stream.synchronize()
        return graph

    @property
    def exact(self) -> bool:
        """``--batches 1`` in fixed mode is nccl-tests' loop exactly: ``-w`` warm-up launches once per
        size (before the out-of-place column only, as its ``TimeTest`` warms each size once), then one
        ``-n`` batch per column, no stabilisation batches."""
        config = self.config
        return not config.adaptive and config.batches == 1 and config.batch_floor_s == 0

    def warm(self, work: Workload, iters: int) -> None:
        """nccl-tests' warm-up: ``iters`` launches, then wait for them."""
        for call in work.batch(iters):
            call()
        self.launches += iters
        self.stream.synchronize()

    def measure(self, work: Workload, *, warm: bool = True) -> Samples:
        """Warm-up, stabilisation, batches until rank 0 says stop. ``warm=False`` (the in-place column
        of an exact sweep) skips the warm-up, as nccl-tests does."""
        config = self.config
        exact = self.exact
        if exact:
            warmup = config.warmup if warm else 0
            if warmup:
                self.warm(work, warmup)
            iters = config.iters
        else:
            warmup = max(config.warmup, 1)
            first = self.run_batch(work, warmup).per_iter_s
            iters = batch_iters(first, config)
            if config.batch_floor_s > 0:
                iters = int(self.control.broadcast(iters))  # every rank must run the same count
        graph = self.capture(work, iters) if config.graph else None
        log = BatchLog(config.stable_tol, 0 if exact else config.max_unstable_batches)
        ran, reason, started = 0, "", time.monotonic()
        try:
            while True:
                seconds, detail, issue_us = self.reduce_batch(self.run_batch(work, iters, graph))
                ran += 1
                log.add(seconds * 1e6, detail, issue_us)
                code = 0
                if self.rank == 0:
                    code = stop_code(log, config, elapsed_s=time.monotonic() - started, ran=ran)
                code = int(self.control.broadcast(code))
                if code:
                    reason = STOP_REASONS[code]
                    break
        finally:
            if graph is not None:
                graph.destroy()
        return samples_of(log, config, iters=iters, reason=reason, warmup=warmup)
