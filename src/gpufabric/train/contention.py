"""The contention probe: how much a step's compute and its collectives slow each other side by side.

On NVLink the collectives of a step take a few ms alone, yet the step paid several times that (issue 37,
2026-11-27 on 4x H200): NCCL's kernels there run on many channels, one SM each, and move data through the
same memory the backward's GEMMs read, so both run slower together than alone. The overlap model
(``schedule.exposed_ms``) takes that as two rates; this probe measures them on this machine, apart from
the timed steps, with the step's own compute and its own collectives:

- alone: the communication-free twin's step, timed from the point below to the end of its backward;
- beside: the same step with every collective of one synced step issued asynchronously where the step's
  first collective of backward is ready, so they run beside the backward the step's collectives meet.
  Under DDP that is the end of the last block's backward (``Start``, ``block_marks``): the LM head's and
  the fp32 loss's backward come first, large GEMMs and memory-bound passes over the logits that no
  bucket ever runs beside, and a rate taken over them is not the rate of the blocks' backward. That was
  thought to be why the probe started at backward's start over-counted (4x H200, 2026-11-27 15:10: 3.97
  ms of contention in a DDP prediction of 4.97 ms where the step paid 4.17 in all); it was not: started
  here, the term rose to 4.86 ms where the inside-step probe saw the blocks lose 3.49 ms (17:54,
  docs/train-bench.md finding 20), and what the probe still does differently from the step is open.
  FSDP2's first backward gather is ready at backward's start, so its probe starts there, at the forward
  mark.

On GPUs the calls are enqueued before the step on a side stream behind a gate that the compute stream opens
at that point (``stream_gate``: the host does one driver call there, not 20-70 issues from Python, which
on a host little ahead of its GPU left the backward after them host-paced, docs/train-bench.md finding
23); without cuda-bindings they are issued from Python at the point, from a side stream that waits for the
compute stream there (``Contention.gated`` says which). Their end is an event on that stream once it
waits on their works. On CPU (gloo) the works run on gloo's threads; a
thread waits for them and stamps their end (``gloo_waiters``). The backward beside them is timed (and the
collectives' end) from when the host has issued them (an event on the compute stream then; the calls that
ran while the host issued the rest get that head start): on a step the host paces, the GPU idles while the
host issues 20-70 calls, and that issue time is the host path's term (``host_path``: the synced step
issues them where its twin issues its own one-rank calls), not compute slowed by collectives.

Each round runs both after a barrier; per round the slowest rank, then the median over rounds. The
collectives' time alone is the probe's (``timing.probe_collectives``): the same calls back to back.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from gpufabric.train.block_marks import Point, mark_blocks
from gpufabric.train.gloo_waiters import GlooWaiters
from gpufabric.train.probe_measures import Contention
from gpufabric.train.result import CollectiveCall
from gpufabric.train.schedule import SAME_POINT
from gpufabric.train.strategy import Mark, sync_world
from gpufabric.train.stream_gate import StreamGate, open_gate
from gpufabric.train.timing import device_clock, elapsed_ms, issue, probe_buffers, slowest_per_step

Step = Callable[[int, Mark], None]


@dataclass(frozen=True)
class Start:
    """Where the probe's collectives start: the end of ``block``'s backward, ``fraction`` of backward."""

    block: nn.Module
    fraction: float


def first_ready_start(
    calls: Sequence[CollectiveCall], blocks: Sequence[nn.Module], ends: Sequence[float]
) -> Start | None:
    """The block whose backward ends where the step's first collective of backward is ready (``ends``:
    each block's backward end as a fraction of backward, ``schedule.Layout.backward_end``); None where
    that call is ready at backward's start (FSDP2) or at no block's end."""
    first = min((c.ready_at for c in calls if c.phase == "backward"), default=0.0)
    if first <= 0 or first >= 1:
        return None
    for block, end in zip(blocks, ends, strict=False):
        if abs(end - first) < SAME_POINT:
            return Start(block=block, fraction=first)
    return None


def probe_contention(
    step: Step,
    calls: list[CollectiveCall],
    *,
    comm_alone_ms: float,
    rounds: int,
    world_size: int,
    device: torch.device,
    start: Start | None = None,
) -> Contention:
    run = BesideRun.of(step, calls, world_size=world_size, device=device, start=start)
    alone_ms, beside_ms, comm_ms = [], [], []
    for index in range(rounds):
        sync_world(device)
        alone_ms.append(run.alone(index))
        sync_world(device)
        backward, comm = run.beside(index)
        beside_ms.append(backward)
        comm_ms.append(comm)
    sync_world(device)
    median = [
        statistics.median(slowest_per_step(series, world_size)) for series in (alone_ms, beside_ms, comm_ms)
    ]
    return Contention(
        backward_alone_ms=median[0],
        backward_beside_ms=median[1],
        comm_beside_ms=median[2],
        comm_alone_ms=comm_alone_ms,
        rounds=rounds,
        starts_at=start.fraction if start is not None else 0.0,
        gated=run.gate is not None,
    )


@dataclass(frozen=True)
class BesideRun:
    """What every round of the probe runs (and ``waited_for``'s): the twin's step, the step's calls on
    their buffers, where they start, and the gate that holds them on GPUs (None: issued from Python)."""

    step: Step
    calls: list[CollectiveCall]
    pairs: list[Any]
    device: torch.device
    start: Start | None
    gate: StreamGate | None

    @classmethod
    def of(
        cls,
        step: Step,
        calls: list[CollectiveCall],
        *,
        world_size: int,
        device: torch.device,
        start: Start | None,
    ) -> BesideRun:
        pairs = probe_buffers(calls, world_size, device)
        return cls(step, calls, pairs, device, start, open_gate(device))

    def issue_all(self) -> list[Any]:
        """Every call, asynchronously, on the current stream; their works."""
        return [issue(call, *pair, async_op=True) for call, pair in zip(self.calls, self.pairs, strict=True)]

    def alone(self, index: int) -> float:
        """The twin's backward from the start point (its forward mark where None) to its end, alone, ms."""
        clock, stamps = device_clock(self.device), {}

        def begin() -> None:
            stamps["start"] = clock()

        _run(self, index, begin, stamps, clock)
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return elapsed_ms(self.device, stamps["start"], stamps["backward"])

    def beside(self, index: int) -> tuple[float, float]:
        """The twin's backward with the calls issued at the start point beside it, and the calls' time,
        both from where they were issued to their end, ms."""
        if self.device.type != "cuda":
            return _beside_cpu(self, index)
        return _beside_python(self, index) if self.gate is None else _beside_gated(self, index, self.gate)


def _run(
    run: BesideRun, index: int, on_start: Callable[[], None], stamps: dict[str, Any], clock: Callable[[], Any]
) -> None:
    """One step, stamped at its forward and backward marks, calling ``on_start`` where the collectives start:
    at the forward mark, or where the start's block ends its backward."""
    start = run.start

    def mark(phase: str) -> None:
        stamps[phase] = clock()
        if phase == "forward" and start is None:
            on_start()

    def at_block(_index: int, point: Point) -> None:
        if point == "backward_end":
            on_start()

    remove = mark_blocks([start.block], at_block) if start is not None else None
    try:
        run.step(index, mark)
    finally:
        if remove is not None:
            remove()


def _beside_python(run: BesideRun, index: int) -> tuple[float, float]:
    """The calls issued from Python at the start point, from a side stream that waits for compute there."""
    cuda: Any = torch.cuda
    device = run.device
    side = cuda.Stream(device)
    clock, stamps = device_clock(device), {}

    def issue_all() -> None:
        side.wait_stream(cuda.current_stream(device))  # the collectives start where compute is now
        with cuda.stream(side):
            for work in run.issue_all():
                work.wait()  # the side stream waits for NCCL's; the compute stream does not
            stamps["comm"] = clock()
        stamps["resume"] = clock()  # on the compute stream: backward goes on once the calls are issued

    _run(run, index, issue_all, stamps, clock)
    cuda.current_stream(device).wait_stream(side)
    torch.cuda.synchronize(device)
    return (
        elapsed_ms(device, stamps["resume"], stamps["backward"]),
        max(0.0, elapsed_ms(device, stamps["resume"], stamps["comm"])),
    )


def _beside_gated(run: BesideRun, index: int, gate: StreamGate) -> tuple[float, float]:
    """The calls enqueued before the step behind the gate, which the compute stream opens at the start
    point: there the host does one driver call, not the calls' issue (``stream_gate``)."""
    cuda: Any = torch.cuda
    device = run.device
    side = cuda.Stream(device)
    clock, stamps = device_clock(device), {}
    gate.reset()
    gate.hold(side, 1)
    with cuda.stream(side):
        for work in run.issue_all():
            work.wait()
        stamps["comm"] = clock()

    def open_calls() -> None:
        gate.release(cuda.current_stream(device), 1)
        stamps["resume"] = clock()  # on the compute stream, where the calls start

    try:
        _run(run, index, open_calls, stamps, clock)
    except BaseException:
        gate.release_all()  # never leave the calls held: the synchronisation below would wait forever
        raise
    if "resume" not in stamps:  # the start point never came: release and say so
        gate.release_all()
        raise RuntimeError("contention probe: the step never reached the point its collectives start at")
    cuda.current_stream(device).wait_stream(side)
    torch.cuda.synchronize(device)
    return (
        elapsed_ms(device, stamps["resume"], stamps["backward"]),
        max(0.0, elapsed_ms(device, stamps["resume"], stamps["comm"])),
    )


def _beside_cpu(run: BesideRun, index: int) -> tuple[float, float]:
    stamps: dict[str, float] = {}
    waiters = GlooWaiters()

    def issue_all() -> None:
        waiters.wait_for(run.issue_all())
        stamps["resume"] = time.perf_counter()

    _run(run, index, issue_all, stamps, time.perf_counter)
    comm_end = waiters.join()
    return (stamps["backward"] - stamps["resume"]) * 1e3, max(0.0, comm_end - stamps["resume"]) * 1e3
