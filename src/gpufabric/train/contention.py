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

How the calls are issued beside the backward, gated on GPUs, is ``beside``'s (``BesideRun``). Each
round runs both after a barrier; per round the slowest rank, then the median over rounds. The
collectives' time alone is the probe's (``timing.probe_collectives``): the same calls back to back.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import torch
from torch import nn

from gpufabric.train.beside import BesideRun, Start, Step
from gpufabric.train.config import probe_buffer_layout
from gpufabric.train.probe_measures import Contention
from gpufabric.train.result import CollectiveCall
from gpufabric.train.schedule import SAME_POINT
from gpufabric.train.strategy import sync_world
from gpufabric.train.timing import slowest_per_step


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
        buffers=probe_buffer_layout(),
    )
