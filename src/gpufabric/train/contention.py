"""The contention probe: how much a step's compute and its collectives slow each other side by side.

On NVLink the collectives of a step take a few ms alone, yet the step paid several times that (issue 37,
2026-11-27 on 4x H200): NCCL's kernels there run on many channels, one SM each, and move data through the
same memory the backward's GEMMs read, so both run slower together than alone. The overlap model
(``schedule.exposed_ms``) takes that as two rates; this probe measures them on this machine, apart from
the timed steps, with the step's own compute and its own collectives:

- alone: the communication-free twin's step, marked at the end of its forward and of its backward;
- beside: the same step with every collective of one synced step issued asynchronously when its forward
  ends, so they run beside its backward. On GPUs they are issued from a side stream that waits for the
  forward; their end is an event on that stream once it waits on their works. On CPU (gloo) the works run
  on gloo's threads; a thread waits for them and stamps their end. The backward beside them is timed
  (and the collectives' end) from when the host has issued them (an event on the compute stream then;
  the calls that ran while the host issued the rest get that head start): on a step the host paces,
  the GPU idles while the host issues 20-70 calls, and that issue time is the host path's term
  (``host_path``: the synced step issues them where its twin issues its own one-rank calls), not
  compute slowed by collectives.

Each round runs both after a barrier; per round the slowest rank, then the median over rounds. The
collectives' time alone is the probe's (``timing.probe_collectives``): the same calls back to back.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

import torch

from gpufabric.train.measures import Contention
from gpufabric.train.result import CollectiveCall
from gpufabric.train.strategy import Mark, sync_world
from gpufabric.train.timing import device_clock, elapsed_ms, issue, probe_buffers, slowest_per_step

Step = Callable[[int, Mark], None]


def probe_contention(
    step: Step,
    calls: list[CollectiveCall],
    *,
    comm_alone_ms: float,
    rounds: int,
    world_size: int,
    device: torch.device,
) -> Contention:
    pairs = probe_buffers(calls, world_size, device)
    beside = _beside_gpu if device.type == "cuda" else _beside_cpu
    alone_ms, beside_ms, comm_ms = [], [], []
    for index in range(rounds):
        sync_world(device)
        alone_ms.append(_alone(step, index, device))
        sync_world(device)
        backward, comm = beside(step, index, calls, pairs, device)
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
    )


def _alone(step: Step, index: int, device: torch.device) -> float:
    clock, stamps = device_clock(device), {}

    def mark(phase: str) -> None:
        stamps[phase] = clock()

    step(index, mark)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return elapsed_ms(device, stamps["forward"], stamps["backward"])


def _beside_gpu(
    step: Step, index: int, calls: list[CollectiveCall], pairs: list[Any], device: torch.device
) -> tuple[float, float]:
    cuda: Any = torch.cuda
    side = cuda.Stream(device)
    clock, stamps = device_clock(device), {}

    def mark(phase: str) -> None:
        stamps[phase] = clock()
        if phase != "forward":
            return
        side.wait_stream(cuda.current_stream(device))  # the collectives start when forward is done
        with cuda.stream(side):
            works = [
                issue(call, send, recv, async_op=True)
                for call, (send, recv) in zip(calls, pairs, strict=True)
            ]
            for work in works:
                work.wait()  # the side stream waits for NCCL's; the compute stream does not
            stamps["comm"] = clock()
        stamps["resume"] = clock()  # on the compute stream: backward starts once the calls are issued

    step(index, mark)
    cuda.current_stream(device).wait_stream(side)
    torch.cuda.synchronize(device)
    return (
        elapsed_ms(device, stamps["resume"], stamps["backward"]),
        max(0.0, elapsed_ms(device, stamps["resume"], stamps["comm"])),
    )


def _beside_cpu(
    step: Step, index: int, calls: list[CollectiveCall], pairs: list[Any], device: torch.device
) -> tuple[float, float]:
    stamps: dict[str, float] = {}
    waiters: list[threading.Thread] = []

    def wait_all(works: list[Any]) -> None:
        for work in works:
            work.wait()
        stamps["comm"] = time.perf_counter()

    def mark(phase: str) -> None:
        stamps[phase] = time.perf_counter()
        if phase != "forward":
            return
        works = [
            issue(call, send, recv, async_op=True) for call, (send, recv) in zip(calls, pairs, strict=True)
        ]
        # gloo's works have no future for every collective (Work::getFuture): a thread waits for them.
        waiters.append(threading.Thread(target=wait_all, args=(works,), daemon=True))
        waiters[-1].start()
        stamps["resume"] = time.perf_counter()

    step(index, mark)
    for waiter in waiters:
        waiter.join()
    return (stamps["backward"] - stamps["resume"]) * 1e3, max(0.0, stamps["comm"] - stamps["resume"]) * 1e3
