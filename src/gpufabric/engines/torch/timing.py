"""Timed batches: what is inside the timed region, what is not, and who decides when to stop.

A batch is ``n`` back-to-back launches of one workload on the same buffers. Before each batch an
untimed one-element all_reduce lines the ranks up: it completes at the same moment on every rank, so the
start events that follow it are aligned (nccl-tests barriers before its timer for the same reason). The
collective itself would not do: a broadcast's root, or reduce's senders, finish as soon as their data
fits NCCL's buffers, before the other ranks have started. On CUDA the batch is bracketed by events on
the current stream, and with ``graph`` it is one replay of a CUDA graph of ``n`` launches (captured once
per size, replayed once untimed so the upload and first-launch costs stay out). On CPU the batch is
bracketed by ``perf_counter`` after a barrier.

Host launch overhead is inside the timed region by default, as in nccl-tests' default mode (its ``-G``
graph mode is our ``graph``) below ``hold_stream_from_bytes`` (1 MB); from there up, and everywhere with
``hold_stream``, we time device-only batches, because torch's per-call host cost (~36 us per eager
all_reduce on 4x H200) would otherwise cap busbw below what the fabric and nccl-tests deliver.
Holding: a sleep kernel holds the stream while the host enqueues ``lineup, start, batch, end``; the
line-up sits *after* the sleep, so ranks whose sleeps end at different times are re-aligned before the
start event (a sleep between the line-up and the start event, as this module once had, times the
difference of the ranks' sleeps). A batch whose sleep ended before the host finished enqueuing is
detected (the sleep's event has already fired) and discarded, with a longer hold for the next.

Per size, after ``warmup`` iterations: batch length is time-based where asked (``min_batch_s``);
warm-up continues with timed batches that are discarded until two consecutive ones agree within
``stable_tol`` (GPU clock ramp, NCCL's lazy connection set-up, a first graph launch); the per-size time
is the median of the kept batch times (``estimator``; the mean is kept derivable from the samples).

Outside the timed region: the per-batch time is reduced across ranks (avg, min or max, like nccl-tests
``-a``), and rank 0 alone decides whether another batch runs and broadcasts that decision, so every
rank runs the same number of batches even though their clocks differ.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import torch
import torch.distributed as dist

from gpufabric.bench.batches import (
    STOP_REASONS,
    BatchLog,
    BatchPlan,
    BatchTime,
    Samples,
    batch_iters,
    samples_of,
    stop_code,
)
from gpufabric.bench.config import BenchConfig
from gpufabric.bench.per_iteration import BatchDetail, WaitClock, detail_of, rank_row, reduced
from gpufabric.engines.torch.ops import Workload

_SLEEP_CAP_S = 0.2
# A hold that keeps missing (the host cannot enqueue a batch while the GPU sleeps, e.g. a full launch
# queue) is given up on after this many discarded batches: later batches are kept as they are.
_MAX_UNHELD = 4
# torch.cuda's Event/Stream/_sleep are untyped; one Any-typed handle keeps mypy strict elsewhere.
_cuda: Any = torch.cuda


class BatchTimer:
    """Times batches of one workload; one instance per rank, used identically on every rank.

    Its control traffic runs on ``group`` (None: the world) with ``leader`` (a global rank) deciding; a
    group's timer (``engines.torch.group_rank``) passes its sub-communicator, its rank in it and its first
    rank.
    """

    def __init__(
        self,
        config: BenchConfig,
        device: torch.device,
        world_size: int,
        rank: int,
        *,
        group: Any = None,
        leader: int = 0,
    ) -> None:
        self.config = config
        self.device = device
        self.cuda = device.type == "cuda"
        self.world_size = world_size
        self.rank = rank
        self.group = group
        self.leader = leader
        self.hold_everywhere = self.cuda and config.hold_stream
        self._sleep_cycles_per_s: float | None = None
        self._fence: torch.Tensor | None = None
        self.waits = WaitClock()
        """Host time this rank's launches spent waiting for peers (``bench.per_iteration``)."""

    def holds(self, size_bytes: int) -> bool:
        """Whether batches of this size are timed with the stream held (see BenchConfig.hold_stream_*)."""
        if not self.cuda:
            return False
        threshold = self.config.hold_stream_from_bytes
        return self.hold_everywhere or (threshold is not None and size_bytes >= threshold)

    # --- collective control traffic (never inside a timed region) ---
    def _tensor(self, values: list[float], dtype: torch.dtype = torch.float64) -> torch.Tensor:
        return torch.tensor(values, dtype=dtype, device=self.device)

    def reduce_time(self, seconds: float) -> float:
        mode = self.config.time_reduction
        op = {"avg": dist.ReduceOp.SUM, "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}[mode]
        value = self._tensor([seconds])
        dist.all_reduce(value, op=op, group=self.group)
        result = float(value.item())
        return result / self.world_size if mode == "avg" else result

    def reduce_batch(self, batch: BatchTime) -> tuple[float, BatchDetail | None]:
        """The rank-reduced time of a batch, and (``per_iteration``) every rank's figures in one detail."""
        if not self.config.per_iteration:
            return self.reduce_time(batch.per_iter_s), None
        mine = self._tensor([batch.per_iter_s, *rank_row(batch.own_s, batch.iteration_s)])
        everyone = [torch.empty_like(mine) for _ in range(self.world_size)]
        dist.all_gather(everyone, mine, group=self.group)
        rows = [[float(v) for v in t.tolist()] for t in everyone]
        return reduced([row[0] for row in rows], self.config.time_reduction), detail_of(
            [row[1:] for row in rows]
        )

    def any_rank(self, flag: bool) -> bool:
        """True on every rank when ``flag`` is True on any rank."""
        value = self._tensor([1.0 if flag else 0.0])
        dist.all_reduce(value, op=dist.ReduceOp.MAX, group=self.group)
        return bool(value.item() > 0)

    def decide(self, values: list[int]) -> list[int]:
        """The leader's integers (rank 0 of the world or the group), broadcast to everyone."""
        tensor = self._tensor([float(v) for v in values])
        dist.broadcast(tensor, src=self.leader, group=self.group)
        return [int(v) for v in tensor.tolist()]

    def gather_check(self, wrong: int, index: int, expected: float, got: float) -> list[list[float]]:
        """Every rank's (wrong, index, expected, got), on every rank (a sum of one-hot rows)."""
        table = torch.zeros((self.world_size, 4), dtype=torch.float64, device=self.device)
        table[self.rank] = self._tensor([float(wrong), float(index), expected, got])
        dist.all_reduce(table, op=dist.ReduceOp.SUM, group=self.group)
        return [[float(v) for v in row] for row in table.tolist()]

    # --- timed regions ---
    def _calibrate_sleep(self) -> float:
        if self._sleep_cycles_per_s is None:
            cycles = 2_000_000
            start, end = _cuda.Event(enable_timing=True), _cuda.Event(enable_timing=True)
            _cuda._sleep(cycles)  # first call may load the kernel
            start.record()
            _cuda._sleep(cycles)
            end.record()
            end.synchronize()
            self._sleep_cycles_per_s = cycles / max(start.elapsed_time(end) / 1e3, 1e-6)
        return self._sleep_cycles_per_s

    def run_batch(self, work: Workload, iters: int, graph: Any = None, hold_s: float = 0.0) -> BatchTime:
        """One timed batch on this rank (``per_iteration``: with an event or a clock reading between
        every two launches, nccl-tests ``-I``)."""
        per_iteration = self.config.per_iteration and graph is None
        if not self.cuda:  # the CPU path aligns the ranks (of the group) with a barrier
            dist.barrier(group=self.group)
            self.waits.reset()
            start = time.perf_counter()
            stamps = [start]
            for _ in range(iters):
                work.launch()
                if per_iteration:
                    stamps.append(time.perf_counter())
            elapsed = time.perf_counter() - start
            own = (elapsed - self.waits.waited_s) / iters
            steps = [b - a for a, b in itertools.pairwise(stamps)]
            return BatchTime(elapsed / iters, elapsed, own_s=own, iteration_s=steps)
        held_event = None
        if hold_s > 0:
            _cuda._sleep(int(min(hold_s, _SLEEP_CAP_S) * self._calibrate_sleep()))
            held_event = _cuda.Event()
            held_event.record()
        host_start = time.perf_counter()
        self._line_up()
        start_event = _cuda.Event(enable_timing=True)
        end_event = _cuda.Event(enable_timing=True)
        marks = [_cuda.Event(enable_timing=True) for _ in range(iters - 1)] if per_iteration else []
        start_event.record()
        self.waits.reset()
        issue_start = time.perf_counter()
        if graph is not None:
            graph.replay()
        else:
            for i in range(iters):
                if 0 < i <= len(marks):
                    marks[i - 1].record()
                work.launch()
        end_event.record()
        host_enqueue = time.perf_counter() - host_start
        own = (time.perf_counter() - issue_start - self.waits.waited_s) / iters
        # If the sleep is already over, the GPU may have waited for the host inside the timed region.
        held = held_event is None or not held_event.query()
        end_event.synchronize()
        bounds = [start_event, *marks, end_event] if per_iteration else []
        steps = [a.elapsed_time(b) / 1e3 for a, b in itertools.pairwise(bounds)]
        per_iter = start_event.elapsed_time(end_event) / 1e3 / iters
        return BatchTime(per_iter, host_enqueue, held, own_s=own, iteration_s=steps)

    def _line_up(self) -> None:
        """Untimed: a one-element all_reduce, which ends only when every rank of the group has reached it
        (float: a type every NCCL algorithm takes)."""
        if self._fence is None:
            self._fence = torch.zeros(1, dtype=torch.float32, device=self.device)
        dist.all_reduce(self._fence, group=self.group)

    def capture(self, work: Workload, iters: int) -> Any:
        """A CUDA graph of ``iters`` launches (warmed up on a side stream first, as torch requires),
        replayed once untimed: the first launch of a graph uploads it, which no batch should time."""
        side = _cuda.Stream(device=self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            for _ in range(3):
                work.launch()
        torch.cuda.current_stream(self.device).wait_stream(side)
        torch.cuda.synchronize(self.device)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(iters):
                work.launch()
        torch.cuda.synchronize(self.device)
        graph.replay()
        torch.cuda.synchronize(self.device)
        return graph

    def plan(self, work: Workload) -> BatchPlan:
        """Warm up, then size batches from rank 0's warm-up timing (when ``batch_floor_s`` is set).

        Time-sized batches are sized from a second, warm warm-up: a fresh communicator (isolate makes
        new ones every round) makes NCCL's connections inside its first collective, so the first
        warm-up read tens of milliseconds per iteration and sized every batch at 1 iteration (issue 33,
        4x H200: 100 "batches of 5 ms" were 100 single alltoalls of 140 us, a 14 ms window that a load
        busy 50 ms of 200 missed in 4 rounds of 11). Its host time sized the first hold, too long."""
        warmup = max(self.config.warmup, 1)
        first = self.run_batch(work, warmup)
        if self.config.batch_floor_s > 0:
            first = self.run_batch(work, warmup)
        host_per_iter = first.host_enqueue_s / (warmup + 1)
        iters = batch_iters(first.per_iter_s, self.config)
        if self.config.batch_floor_s > 0:
            (iters,) = self.decide([iters])  # every rank must run the same count
        return BatchPlan(iters, warmup, host_per_iter)

    def measure(self, work: Workload) -> Samples:
        """Warm-up, stabilisation, batches until rank 0 says stop; per-batch times reduced across ranks."""
        config = self.config
        plan = self.plan(work)
        graph = self.capture(work, plan.iters_per_batch) if config.graph else None
        log = BatchLog(config.stable_tol, config.max_unstable_batches)
        # Hold 1.5x as long as the warm-up says the host needs to enqueue a batch, plus a margin;
        # doubled whenever a batch shows it was not enough.
        hold_s = plan.host_enqueue_per_iter_s * (plan.iters_per_batch + 1) * 1.5 + 200e-6
        hold = self.holds(work.shape.size_bytes) and not work.synchronizes
        unheld = 0
        ran = 0
        reason = ""
        started = time.monotonic()
        while True:
            batch = self.run_batch(work, plan.iters_per_batch, graph, hold_s if hold else 0.0)
            ran += 1
            keep = True
            if hold and self.any_rank(not batch.held) and unheld < _MAX_UNHELD:
                unheld += 1
                hold_s = min(hold_s * 2, _SLEEP_CAP_S)
                keep = False
            elif hold and batch.held:
                # The first hold is sized from the warm-up's enqueue time, which on a fresh communicator
                # (isolate makes new sub-communicators every round) can hold NCCL's lazy connection
                # set-up: a hold at its 0.2 s cap before each of 100 batches is 20 s a group. Held
                # batches say what enqueuing takes; the hold shrinks towards twice that, at most by
                # half a batch (a miss still doubles it), so it never drops under the host's need.
                hold_s = max(min(hold_s, 2 * batch.host_enqueue_s + 200e-6), hold_s / 2)
            seconds, detail = self.reduce_batch(batch)
            if keep:  # every rank keeps the (identical) reduced times; only rank 0's become rows
                log.add(seconds * 1e6, detail)
            code = 0
            if self.rank == 0:
                code = stop_code(log, config, elapsed_s=time.monotonic() - started, ran=ran)
            (code,) = self.decide([code])
            if code:
                reason = STOP_REASONS[code]
                break
        if graph is not None:
            del graph
        return samples_of(
            log, config, iters=plan.iters_per_batch, reason=reason, warmup=plan.warmup, unheld=unheld
        )
