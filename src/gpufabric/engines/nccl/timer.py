"""Timed batches of the direct engine: CUDA events around ``n`` launches (or one graph of them).

The rules are the torch engine's (``bench.batches``: warm-up, stabilisation, ``-n`` or adaptive batches,
rank 0 decides when to stop), with one difference that is the point of this engine: a launch is NCCL's
own call (~1.4 us of Python on one H100), so no stream hold is needed to keep host time out of large
sizes, and below them the time includes NCCL's launch cost exactly as nccl-tests' does.

Per batch: an untimed one-element all_reduce lines the ranks up (it ends at the same moment everywhere, as
nccl-tests' barrier before its timer does; ``Workload.line_up`` says why not the collective itself),
then the start event, the batch, the end event. With ``graph`` the batch
is one replay of a CUDA graph of ``n`` captured launches (nccl-tests ``-G``), captured once per size
and replayed once untimed first (the first replay uploads the graph).
Per-batch times travel over the control channel (never NCCL) and are reduced like nccl-tests ``-a``.
``launches`` counts the collective calls that ran (warm-up, batches, graph replays), outside the timed
region, for the NIC traffic each size must account for (``bench.traffic``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from gpufabric.bench.batches import STOP_REASONS, BatchLog, Samples, batch_iters, samples_of, stop_code
from gpufabric.bench.config import BenchConfig
from gpufabric.engines.nccl.collectives import Workload
from gpufabric.engines.nccl.control import ControlPlane
from gpufabric.engines.nccl.cuda import Graph, Stream

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

    def reduce_time(self, seconds: float) -> float:
        """This batch's per-iteration time reduced over the ranks (avg, min or max: nccl-tests ``-a``)."""
        everyone = self.control.allgather(seconds)
        mode = self.config.time_reduction
        if mode == "min":
            return float(min(everyone))
        if mode == "max":
            return float(max(everyone))
        return float(sum(everyone)) / len(everyone)

    def run_batch(self, work: Workload, iters: int, graph: Graph | None = None) -> float:
        """One timed batch on this rank: seconds per iteration."""
        start, end = self.stream.event(), self.stream.event()
        calls = work.batch(iters) if graph is None else []
        self.launches += iters
        try:
            work.line_up()  # untimed: every rank is here
            start.record()
            if graph is not None:
                graph.launch()
            else:
                for call in calls:
                    call()
            end.record()
            end.synchronize()
            return end.seconds_since(start) / iters
        finally:
            start.destroy()
            end.destroy()

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
            first = self.run_batch(work, warmup)
            iters = batch_iters(first, config)
            if config.batch_floor_s > 0:
                iters = int(self.control.broadcast(iters))  # every rank must run the same count
        graph = self.capture(work, iters) if config.graph else None
        log = BatchLog(config.stable_tol, 0 if exact else config.max_unstable_batches)
        ran, reason, started = 0, "", time.monotonic()
        try:
            while True:
                value_us = self.reduce_time(self.run_batch(work, iters, graph)) * 1e6
                ran += 1
                log.add(value_us)
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
