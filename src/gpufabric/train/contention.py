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
    pairs = probe_buffers(calls, world_size, device)
    gate = open_gate(device)
    alone_ms, beside_ms, comm_ms = [], [], []
    for index in range(rounds):
        sync_world(device)
        alone_ms.append(backward_alone(step, index, device, start))
        sync_world(device)
        backward, comm = backward_beside(step, index, calls, pairs, device, start, gate)
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
        gated=gate is not None,
    )


def _run(
    step: Step,
    index: int,
    start: Start | None,
    on_start: Callable[[], None],
    stamps: dict[str, Any],
    clock: Callable[[], Any],
) -> None:
    """One step, stamped at its forward and backward marks, calling ``on_start`` where the collectives start:
    at the forward mark, or where ``start``'s block ends its backward."""

    def mark(phase: str) -> None:
        stamps[phase] = clock()
        if phase == "forward" and start is None:
            on_start()

    def at_block(_index: int, point: Point) -> None:
        if point == "backward_end":
            on_start()

    remove = mark_blocks([start.block], at_block) if start is not None else None
    try:
        step(index, mark)
    finally:
        if remove is not None:
            remove()


def backward_alone(step: Step, index: int, device: torch.device, start: Start | None) -> float:
    """The twin's backward from ``start`` (its forward mark where None) to its end, alone, ms."""
    clock, stamps = device_clock(device), {}

    def begin() -> None:
        stamps["start"] = clock()

    _run(step, index, start, begin, stamps, clock)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return elapsed_ms(device, stamps["start"], stamps["backward"])


def backward_beside(
    step: Step,
    index: int,
    calls: list[CollectiveCall],
    pairs: list[Any],
    device: torch.device,
    start: Start | None,
    gate: StreamGate | None,
) -> tuple[float, float]:
    """The twin's backward with ``calls`` issued at ``start`` beside it, and the calls' time, both from
    where they were issued to their end, ms."""
    if device.type == "cuda":
        return _beside_gpu(step, index, calls, pairs, device, start, gate)
    return _beside_cpu(step, index, calls, pairs, device, start)


def _beside_gpu(
    step: Step,
    index: int,
    calls: list[CollectiveCall],
    pairs: list[Any],
    device: torch.device,
    start: Start | None,
    gate: StreamGate | None,
) -> tuple[float, float]:
    if gate is not None:
        return _beside_gated(step, index, calls, pairs, device, start, gate)
    cuda: Any = torch.cuda
    side = cuda.Stream(device)
    clock, stamps = device_clock(device), {}

    def issue_all() -> None:
        side.wait_stream(cuda.current_stream(device))  # the collectives start where compute is now
        with cuda.stream(side):
            works = [
                issue(call, send, recv, async_op=True)
                for call, (send, recv) in zip(calls, pairs, strict=True)
            ]
            for work in works:
                work.wait()  # the side stream waits for NCCL's; the compute stream does not
            stamps["comm"] = clock()
        stamps["resume"] = clock()  # on the compute stream: backward goes on once the calls are issued

    _run(step, index, start, issue_all, stamps, clock)
    cuda.current_stream(device).wait_stream(side)
    torch.cuda.synchronize(device)
    return (
        elapsed_ms(device, stamps["resume"], stamps["backward"]),
        max(0.0, elapsed_ms(device, stamps["resume"], stamps["comm"])),
    )


def _beside_gated(
    step: Step,
    index: int,
    calls: list[CollectiveCall],
    pairs: list[Any],
    device: torch.device,
    start: Start | None,
    gate: StreamGate,
) -> tuple[float, float]:
    """The calls enqueued before the step behind the gate, which the compute stream opens at the start
    point: there the host does one driver call, not the calls' issue (``stream_gate``)."""
    cuda: Any = torch.cuda
    side = cuda.Stream(device)
    clock, stamps = device_clock(device), {}
    gate.reset()
    gate.hold(side, 1)
    with cuda.stream(side):
        works = [
            issue(call, send, recv, async_op=True) for call, (send, recv) in zip(calls, pairs, strict=True)
        ]
        for work in works:
            work.wait()
        stamps["comm"] = clock()

    def open_calls() -> None:
        gate.release(cuda.current_stream(device), 1)
        stamps["resume"] = clock()  # on the compute stream, where the calls start

    try:
        _run(step, index, start, open_calls, stamps, clock)
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


def _beside_cpu(
    step: Step,
    index: int,
    calls: list[CollectiveCall],
    pairs: list[Any],
    device: torch.device,
    start: Start | None,
) -> tuple[float, float]:
    stamps: dict[str, float] = {}
    waiters = GlooWaiters()

    def issue_all() -> None:
        works = [
            issue(call, send, recv, async_op=True) for call, (send, recv) in zip(calls, pairs, strict=True)
        ]
        waiters.wait_for(works)
        stamps["resume"] = time.perf_counter()

    _run(step, index, start, issue_all, stamps, time.perf_counter)
    comm_end = waiters.join()
    return (stamps["backward"] - stamps["resume"]) * 1e3, max(0.0, comm_end - stamps["resume"]) * 1e3
