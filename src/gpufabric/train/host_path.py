"""The host-path probe: how much longer the host takes to issue a synced step than its twin.

On 4x H200 (2026-11-27) a `gpt-350m` step at batch 2 held about 10 ms of GPU work (PaLM's FLOP count at
the measured MFU) yet took 27 ms on one GPU: the GPU waited for Python to issue kernels. On a step the
host paces, the GPU also pays every millisecond the synced step's host path adds - FSDP2's copy-in and
copy-out around each all-gather and reduce-scatter, their DTensor bookkeeping and per-unit hooks, each
collective's path through the process group - and the one-rank twin issues less of it. Measured
exposed communication then holds host time that no busbw can predict (issue 37: 31 ms of FSDP's 37 ms).

This probe measures that term apart from the timed steps: ``rounds`` times, after a barrier and a
device synchronisation (the GPU idle, so the host is not held back by a full launch queue), the twin's
step and then the synced step, each stamped on the host clock (``perf_counter``) at its start and at the
end of its backward, and on the device (CUDA events) at the same points. Per round the slowest rank,
then the median over rounds. The overlap model takes the host term as the other bound on the synced
backward (``predict``): it cannot end on the GPU before the host has issued it.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch

from gpufabric.train.probe_measures import HostPath
from gpufabric.train.strategy import Mark, sync_world
from gpufabric.train.timing import device_clock, elapsed_ms, slowest_per_step

Step = Callable[[int, Mark], None]


def probe_host_path(
    synced: Step, twin: Step, *, rounds: int, world_size: int, device: torch.device
) -> HostPath:
    series: dict[str, list[float]] = {
        "twin_host": [],
        "twin_device": [],
        "synced_host": [],
        "synced_device": [],
    }
    for index in range(rounds):
        for name, step in (("twin", twin), ("synced", synced)):
            sync_world(device)
            host, on_device = _stamped(step, index, device)
            series[f"{name}_host"].append(host)
            series[f"{name}_device"].append(on_device)
    sync_world(device)
    median = {
        name: statistics.median(slowest_per_step(values, world_size)) for name, values in series.items()
    }
    return HostPath(
        twin_host_ms=median["twin_host"],
        synced_host_ms=median["synced_host"],
        twin_device_ms=median["twin_device"],
        synced_device_ms=median["synced_device"],
        rounds=rounds,
        on_device=device.type == "cuda",
    )


def _stamped(step: Step, index: int, device: torch.device) -> tuple[float, float]:
    """(host ms, device ms) from the step's start to the end of its backward; on CPU both are the host's."""
    clock, host, stamps = device_clock(device), {}, {}

    def mark(phase: str) -> None:
        host[phase] = time.perf_counter()
        stamps[phase] = clock()

    mark("begin")
    step(index, mark)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    host_ms = (host["backward"] - host["begin"]) * 1e3
    device_ms = elapsed_ms(device, stamps["begin"], stamps["backward"]) if device.type == "cuda" else host_ms
    return host_ms, device_ms
