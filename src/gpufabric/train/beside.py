"""One round of the contention probe's kind: the twin's backward alone, and with the step's collectives
issued beside it at a start point (``Start``), both timed from there to their end.

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
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from gpufabric.train.block_marks import Point, mark_blocks
from gpufabric.train.gloo_waiters import GlooWaiters
from gpufabric.train.result import CollectiveCall
from gpufabric.train.strategy import Mark
from gpufabric.train.stream_gate import StreamGate, open_gate
from gpufabric.train.timing import device_clock, elapsed_ms, issue, probe_buffers

Step = Callable[[int, Mark], None]


@dataclass(frozen=True)
class Start:
    """Where the probe's collectives start: the end of ``block``'s backward, ``fraction`` of backward."""

    block: nn.Module
    fraction: float


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
    return _from_resume(device, side, stamps)


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
    return _from_resume(device, side, stamps)


def _from_resume(device: torch.device, side: Any, stamps: dict[str, Any]) -> tuple[float, float]:
    """Once the side stream's calls are done: the backward and the calls, each from the resume stamp, ms."""
    cuda: Any = torch.cuda
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
