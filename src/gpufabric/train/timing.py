"""Timing on the rank: per-step times and the marks inside a step (CUDA events on GPUs, ``perf_counter``
on CPU), the rank reduction, the isolated probe of the step's collectives and an empty call's cost.

Each step is bracketed on the device's stream, so a GPU time is what the stream spent from the step's
first kernel to its last, including waits on the gradient all-reduce. Per-step times are gathered to
every rank and reduced with max per step: a data-parallel step ends when its slowest rank does.
"""

from __future__ import annotations

import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist

from gpufabric.train.config import probe_buffer_layout
from gpufabric.train.result import CollectiveCall
from gpufabric.train.step_order import abba_blocks


def time_steps(fn: Callable[[int], None], count: int, device: torch.device, start: int = 0) -> list[float]:
    """Run ``fn(i)`` for ``count`` steps and return each step's time in ms."""
    if device.type == "cuda":
        cuda: Any = torch.cuda  # Event's constructor is untyped
        marks = [(cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)) for _ in range(count)]
        for i, (begin, end) in enumerate(marks):
            begin.record()
            fn(start + i)
            end.record()
        torch.cuda.synchronize(device)
        return [float(begin.elapsed_time(end)) for begin, end in marks]
    times = []
    for i in range(count):
        t0 = time.perf_counter()
        fn(start + i)
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def time_interleaved_steps(
    synced: Callable[[int], None], twin: Callable[[int], None], count: int, block: int, device: torch.device
) -> tuple[list[float], list[float]]:
    """``count`` steps of each, back to back with nothing between them, in ABBA blocks of ``block`` steps,
    each block led in by one untimed step of its side (``step_order`` says why): (synced step times, twin
    step times), ms. Nothing synchronises between blocks: DDP's step ends with its stream waiting for the
    last all-reduce, so no step's work runs into the next step's window."""
    clock = device_clock(device)
    stamps: tuple[list[tuple[Any, Any]], list[tuple[Any, Any]]] = ([], [])
    sides = (synced, twin)
    for side, first, steps in abba_blocks(count, block):
        sides[side](first)  # the lead-in, untimed
        for index in range(first, first + steps):
            begin = clock()
            sides[side](index)
            stamps[side].append((begin, clock()))
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    synced_ms, twin_ms = ([elapsed_ms(device, b, e) for b, e in side] for side in stamps)
    return synced_ms, twin_ms


@dataclass
class PhasedTimes:
    """Per step, ms from the step's start: to the end of forward, to the end of backward, to the end."""

    forward_ms: list[float] = field(default_factory=list)
    backward_ms: list[float] = field(default_factory=list)
    step_ms: list[float] = field(default_factory=list)

    def extend(self, other: PhasedTimes) -> None:
        self.forward_ms += other.forward_ms
        self.backward_ms += other.backward_ms
        self.step_ms += other.step_ms

    def slowest(self, world_size: int) -> PhasedTimes:
        """Each series reduced to the slowest rank per step (collective: all ranks call)."""
        return PhasedTimes(
            slowest_per_step(self.forward_ms, world_size),
            slowest_per_step(self.backward_ms, world_size),
            slowest_per_step(self.step_ms, world_size),
        )


def time_phased_steps(
    fn: Callable[[int, Callable[[str], None]], None],
    count: int,
    device: torch.device,
    start: int = 0,
    settle: Callable[[], None] | None = None,
) -> PhasedTimes:
    """Run ``fn(i, mark)`` for ``count`` steps; ``mark(phase)`` stamps the step's inner points (events on
    the compute stream on GPUs, so waits for communication count where the stream waits).

    ``settle()`` runs before each step's first mark: the split passes ``strategy.sync_world`` (the
    device idle, the ranks together), so each step starts as the probes' steps do. Back to back, a
    step's start event fires when the device has finished the step before, while the host may be far
    ahead: the device then runs queued work without waiting for the host until it catches up, and the
    step's begin-to-backward time shrinks by that head start.
    The twin's head start is not the synced step's: under FSDP the twin's optimizer updates the whole
    model (fp32 AdamW over every parameter, on the device for many ms after the host has issued it),
    the synced step's a quarter shard on 4 ranks. On 4x H200 (2026-11-27 15:10 UTC, gpt-760m FSDP, 96
    steps a side) the twin's back-to-back end of backward read 80.50 ms against 91.45 ms one step after
    a sync (the host-path probe), the synced step's 110.20 against 107.72: the twin's head start added
    about 11 ms to the measured exposed communication (29.70 ms), which no term of the step's
    communication holds. DDP, whose twin runs the same optimizer, read the same either way (47.87 /
    43.70 back to back, 47.84 / 43.69 after a sync). Settled, both start alike; the host's time to issue
    a step is in each step's window, as it was."""
    cuda: Any = torch.cuda  # Event's constructor is untyped
    on_gpu = device.type == "cuda"
    stamps: list[dict[str, Any]] = []
    for i in range(count):
        marks: dict[str, Any] = {}
        if settle is not None:
            settle()

        def mark(phase: str, marks: dict[str, Any] = marks) -> None:
            if on_gpu:
                marks[phase] = cuda.Event(enable_timing=True)
                marks[phase].record()
            else:
                marks[phase] = time.perf_counter()

        mark("begin")
        fn(start + i, mark)
        mark("end")
        stamps.append(marks)
    if on_gpu:
        torch.cuda.synchronize(device)

    def since(marks: dict[str, Any], phase: str) -> float:
        if on_gpu:
            return float(marks["begin"].elapsed_time(marks[phase]))
        return float(marks[phase] - marks["begin"]) * 1e3

    return PhasedTimes(
        forward_ms=[since(m, "forward") for m in stamps],
        backward_ms=[since(m, "backward") for m in stamps],
        step_ms=[since(m, "end") for m in stamps],
    )


def probe_latency(*, rounds: int, world_size: int, device: torch.device) -> float:
    """The per-call cost of a collective that moves (almost) nothing: a one-element all-reduce, timed alone
    ``rounds`` times after one untimed call; the median of the slowest rank, ms."""
    tiny = torch.ones(1, dtype=torch.float32, device=device)
    dist.all_reduce(tiny)
    times = slowest_per_step(time_steps(lambda _: dist.all_reduce(tiny), rounds, device), world_size)
    return statistics.median(times)


def slowest_per_step(local: list[float], world_size: int) -> list[float]:
    """Every rank's per-step times, reduced to the slowest rank for each step (collective: all ranks call)."""
    if world_size == 1:
        return list(local)
    gathered: list[list[float] | None] = [None] * world_size
    dist.all_gather_object(gathered, local)
    rows = [g for g in gathered if g is not None]
    return [max(values) for values in zip(*rows, strict=True)]


def slowest_rank(local: list[float], world_size: int) -> list[float]:
    """The per-step times of the rank whose steps took longest in all (collective: all ranks call).

    For back-to-back steps: their mean is that rank's total / steps, as a training loop's own throughput
    is timed (torchtitan, benchmarks/train_reference.py), where a per-step maximum over ranks would add
    each step's rank-to-rank jitter to the mean."""
    if world_size == 1:
        return list(local)
    gathered: list[list[float] | None] = [None] * world_size
    dist.all_gather_object(gathered, local)
    return max((g for g in gathered if g is not None), key=sum)


def _buffers(
    call: CollectiveCall, world_size: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    dtype = {"float": torch.float32, "bfloat16": torch.bfloat16, "half": torch.float16}[call.dtype]
    itemsize = torch.empty((), dtype=dtype).element_size()
    total = call.size_bytes // itemsize
    if call.kind == "all_reduce":
        buf = torch.ones(total, dtype=dtype, device=device)
        return buf, buf
    shard = total // world_size
    whole = torch.ones(shard * world_size, dtype=dtype, device=device)
    part = torch.ones(shard, dtype=dtype, device=device)
    return (part, whole) if call.kind == "all_gather" else (whole, part)


def issue(call: CollectiveCall, send: torch.Tensor, recv: torch.Tensor, *, async_op: bool = False) -> Any:
    """Issue one of the step's collectives on its probe buffers; with ``async_op`` returns its work."""
    if call.kind == "all_reduce":
        return dist.all_reduce(send, async_op=async_op)
    if call.kind == "all_gather":
        return dist.all_gather_into_tensor(recv, send, async_op=async_op)
    with warnings.catch_warnings():  # torch 2.13 renames it; the GPU hosts' 2.11 has only this name
        warnings.simplefilter("ignore", FutureWarning)
        return dist.reduce_scatter_tensor(recv, send, async_op=async_op)


def probe_buffers(
    calls: list[CollectiveCall], world_size: int, device: torch.device
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(send, receive) for each call: its own, as each of the step's buckets and shards is its own memory,
    or, with ``GPUFABRIC_PROBE_BUFFERS=shared``, one pair per shape that every call of that shape uses."""
    if probe_buffer_layout() == "distinct":
        return [_buffers(call, world_size, device) for call in calls]
    buffers: dict[tuple[str, int, str], tuple[torch.Tensor, torch.Tensor]] = {}
    for call in calls:
        key = (call.kind, call.size_bytes, call.dtype)
        if key not in buffers:
            buffers[key] = _buffers(call, world_size, device)
    return [buffers[(c.kind, c.size_bytes, c.dtype)] for c in calls]


def probe_collectives(
    calls: list[CollectiveCall], *, rounds: int, world_size: int, device: torch.device
) -> tuple[list[CollectiveCall], float]:
    """Time every call of one step alone, back to back, ``rounds`` times after one untimed round.

    Returns the calls with ``isolated_ms`` (median over rounds, slowest rank) and the median round total.
    """
    pairs = probe_buffers(calls, world_size, device)

    def one_round(_: int) -> None:
        for call, (send, recv) in zip(calls, pairs, strict=True):
            issue(call, send, recv)

    one_round(0)
    per_call: list[list[float]] = [[] for _ in calls]
    totals: list[float] = []
    for _ in range(rounds):
        times = time_steps(lambda i: issue(calls[i], *pairs[i]), len(calls), device)
        slowest = slowest_per_step(times, world_size)
        for index, value in enumerate(slowest):
            per_call[index].append(value)
        totals.append(sum(slowest))
    timed = [
        call.model_copy(update={"isolated_ms": statistics.median(values)})
        for call, values in zip(calls, per_call, strict=True)
    ]
    return timed, statistics.median(totals)


def device_clock(device: torch.device) -> Callable[[], Any]:
    """A point in time on this rank: a recorded event on GPUs (read after a synchronize), else the host's."""
    if device.type != "cuda":
        return time.perf_counter
    cuda: Any = torch.cuda  # Event's constructor is untyped

    def record() -> Any:
        event = cuda.Event(enable_timing=True)
        event.record()
        return event

    return record


def elapsed_ms(device: torch.device, start: Any, end: Any) -> float:
    """Milliseconds between two points of ``device_clock`` (events: after a synchronize)."""
    if device.type == "cuda":
        return float(start.elapsed_time(end))
    return float(end - start) * 1e3
