"""Timing on the rank: per-step times (CUDA events on GPUs, ``perf_counter`` on CPU), the rank reduction,
and the isolated probe of the step's collectives.

Each step is bracketed on the device's stream, so a GPU time is what the stream spent from the step's
first kernel to its last, including waits on the gradient all-reduce. Per-step times are gathered to
every rank and reduced with max per step: a data-parallel step ends when its slowest rank does.
"""

from __future__ import annotations

import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

from gpufabric.train.result import CollectiveCall


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


def slowest_per_step(local: list[float], world_size: int) -> list[float]:
    """Every rank's per-step times, reduced to the slowest rank for each step (collective: all ranks call)."""
    if world_size == 1:
        return list(local)
    gathered: list[list[float] | None] = [None] * world_size
    dist.all_gather_object(gathered, local)
    rows = [g for g in gathered if g is not None]
    return [max(values) for values in zip(*rows, strict=True)]


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


def _issue(call: CollectiveCall, send: torch.Tensor, recv: torch.Tensor) -> None:
    if call.kind == "all_reduce":
        dist.all_reduce(send)
    elif call.kind == "all_gather":
        dist.all_gather_into_tensor(recv, send)
    else:
        with warnings.catch_warnings():  # torch 2.13 renames it; the GPU hosts' 2.11 has only this name
            warnings.simplefilter("ignore", FutureWarning)
            dist.reduce_scatter_tensor(recv, send)


def probe_collectives(
    calls: list[CollectiveCall], *, rounds: int, world_size: int, device: torch.device
) -> tuple[list[CollectiveCall], float]:
    """Time every call of one step alone, back to back, ``rounds`` times after one untimed round.

    Returns the calls with ``isolated_ms`` (median over rounds, slowest rank) and the median round total.
    Buffers of equal shape are allocated once and shared.
    """
    buffers: dict[tuple[str, int, str], tuple[torch.Tensor, torch.Tensor]] = {}
    for call in calls:
        key = (call.kind, call.size_bytes, call.dtype)
        if key not in buffers:
            buffers[key] = _buffers(call, world_size, device)
    pairs = [buffers[(c.kind, c.size_bytes, c.dtype)] for c in calls]

    def one_round(_: int) -> None:
        for call, (send, recv) in zip(calls, pairs, strict=True):
            _issue(call, send, recv)

    one_round(0)
    per_call: list[list[float]] = [[] for _ in calls]
    totals: list[float] = []
    for _ in range(rounds):
        times = time_steps(lambda i: _issue(calls[i], *pairs[i]), len(calls), device)
        slowest = slowest_per_step(times, world_size)
        for index, value in enumerate(slowest):
            per_call[index].append(value)
        totals.append(sum(slowest))
    timed = [
        call.model_copy(update={"isolated_ms": statistics.median(values)})
        for call, values in zip(calls, per_call, strict=True)
    ]
    return timed, statistics.median(totals)
