"""The contention probe as the rank the others wait for meets the step's collectives.

The contention probe (``contention``) runs the twin's backward on every rank with the step's calls beside
it, so each collective advances only as fast as the most contended rank lets it: on 4x H200 (2026-11-28)
it read the calls at 44-63% of their speed alone and the compute at 67-78%, and its prediction of DDP's
exposed communication came out about 1.5 ms above what the step paid (docs/train-bench.md finding 28).
In the step, one rank is usually last to each call: the kernels traced per rank (01:16, finding 27)
showed the others' NCCL kernels already running, spinning, for 21-36 ms, and that rank's for 8.65 ms,
for calls that take 8.07 alone. Its compute, slowed beside them, is the step's critical path.

This probe measures that case: each round one rank (in turn) runs the twin's backward with the calls
issued at the same start point as the contention probe (gated on GPUs, ``stream_gate``), while every
other rank has issued the same calls at once and waits at them with no compute. What it reads, on the
computing rank: the backward alone and beside the calls, and the calls from their issue to their end.
Per round the computing rank's figures (the others report none), then the median over rounds.
"""

from __future__ import annotations

import statistics

import torch

from gpufabric.train.beside import BesideRun, Start, Step
from gpufabric.train.probe_measures import WaitedForBeside
from gpufabric.train.result import CollectiveCall
from gpufabric.train.strategy import sync_world
from gpufabric.train.timing import slowest_per_step


def probe_waited_for(
    step: Step,
    calls: list[CollectiveCall],
    *,
    rounds: int,
    rank: int,
    world_size: int,
    device: torch.device,
    start: Start | None = None,
) -> WaitedForBeside | None:
    """Medians over ``rounds`` (rank ``i % world_size`` computing in round ``i``) of the computing rank's
    backward alone, beside the calls and the calls' time; None with one rank (no one to wait)."""
    if world_size < 2:
        return None
    run = BesideRun.of(step, calls, world_size=world_size, device=device, start=start)
    alone_ms, beside_ms, comm_ms = [], [], []
    for index in range(rounds):
        computing = index % world_size == rank
        sync_world(device)
        alone = run.alone(index) if computing else 0.0
        sync_world(device)
        if computing:
            beside, comm = run.beside(index)
        else:
            beside, comm = 0.0, 0.0
            _wait_at(run)
        # The other ranks report 0: the slowest of each round is the computing rank's figure.
        alone_ms.append(alone)
        beside_ms.append(beside)
        comm_ms.append(comm)
    sync_world(device)
    alone, beside, comm = (
        statistics.median(slowest_per_step(series, world_size)) for series in (alone_ms, beside_ms, comm_ms)
    )
    return WaitedForBeside(
        backward_alone_ms=alone, backward_beside_ms=beside, comm_beside_ms=comm, rounds=rounds
    )


def _wait_at(run: BesideRun) -> None:
    """Issue every call at once and wait for them: a rank already at the step's collectives, its NCCL
    kernels running (waiting for the computing rank's) on a GPU with nothing else to do."""
    for work in run.issue_all():
        work.wait()
    if run.device.type == "cuda":
        torch.cuda.synchronize(run.device)
