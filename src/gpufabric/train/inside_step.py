"""The inside-step probe: of what the synced step pays beyond its twin, how much is the blocks' own compute
running slower and how much is the compute stream standing between blocks.

The FSDP prediction on NVLink missed by 12.6 ms beyond its host-path bound (4x H200, 2026-11-27 15:10
UTC: 29.70 ms measured, 17.07 predicted) and nothing measured whether that was ranks waiting for each
other at FSDP2's all-gathers or compute slowed inside the step. This probe tells them apart: ``rounds``
times, after a barrier and a device synchronisation, the twin's step and then the synced step, each
stamped on the compute stream (CUDA events; the host clock on CPU ranks) at its start, at the end of its
backward, and at the four edges of every block (``block_marks``: inside FSDP2's hooks, so its waits for
the all-gathers and its copies fall between blocks, not in them). Per step:

- block compute: the sum over blocks of forward end - forward start and backward end - backward start;
- between blocks: start to end of backward less that sum, which holds the compute stream waiting for a
  gather (the wire, or a peer not yet there), FSDP2's copy-in/copy-out, the blocks' gradient buckets
  under DDP, the head, embeddings and loss (the same in both steps) and any wait for the host.

The synced step minus its twin splits into ``compute_slowed_ms`` (blocks slower: NCCL's kernels taking
SMs and memory bandwidth beside them) and ``between_blocks_ms`` (the stream waiting more). Per round the
rank whose step ended last, as the step's own time is the slowest rank's; then the median over rounds.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from gpufabric.train.block_marks import Point, mark_blocks
from gpufabric.train.probe_measures import InsideStep
from gpufabric.train.strategy import Mark, sync_world
from gpufabric.train.timing import device_clock, elapsed_ms

Step = Callable[[int, Mark], None]


def probe_inside_step(
    synced: tuple[Step, Sequence[nn.Module]],
    twin: tuple[Step, Sequence[nn.Module]],
    *,
    rounds: int,
    world_size: int,
    device: torch.device,
) -> InsideStep:
    """``synced`` and ``twin``: each step with its model's blocks."""
    local: dict[str, list[tuple[float, float]]] = {"twin": [], "synced": []}
    for index in range(rounds):
        for name, (step, blocks) in (("twin", twin), ("synced", synced)):
            sync_world(device)
            local[name].append(_stamped(step, blocks, index, device))
    sync_world(device)
    twin_span, twin_blocks = _median_of_last_rank(local["twin"], world_size)
    synced_span, synced_blocks = _median_of_last_rank(local["synced"], world_size)
    return InsideStep(
        twin_span_ms=twin_span,
        twin_blocks_ms=twin_blocks,
        synced_span_ms=synced_span,
        synced_blocks_ms=synced_blocks,
        rounds=rounds,
    )


def _stamped(
    step: Step, blocks: Sequence[nn.Module], index: int, device: torch.device
) -> tuple[float, float]:
    """(start to end of backward, the blocks' compute in it), ms, for one step on this rank."""
    clock = device_clock(device)
    marks: dict[str, Any] = {}
    edges: list[tuple[int, Point, Any]] = []

    def mark(phase: str) -> None:
        marks[phase] = clock()

    def at_block(block: int, point: Point) -> None:
        edges.append((block, point, clock()))

    remove = mark_blocks(blocks, at_block)
    try:
        mark("begin")
        step(index, mark)
    finally:
        remove()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return elapsed_ms(device, marks["begin"], marks["backward"]), _block_compute_ms(edges, device)


def _block_compute_ms(edges: list[tuple[int, Point, Any]], device: torch.device) -> float:
    """Sum of each block's forward and backward windows; an edge without its partner adds nothing."""
    stamps = {(block, point): stamp for block, point, stamp in edges}
    total = 0.0
    for (block, point), start in stamps.items():
        end = stamps.get((block, _END_OF[point])) if point in _END_OF else None
        if end is not None:
            total += max(0.0, elapsed_ms(device, start, end))
    return total


_END_OF: dict[Point, Point] = {"forward_start": "forward_end", "backward_start": "backward_end"}


def _median_of_last_rank(local: list[tuple[float, float]], world_size: int) -> tuple[float, float]:
    """Per round, the (span, blocks) of the rank whose span was longest; the median of each over rounds."""
    rows: list[list[tuple[float, float]]] = [local]
    if world_size > 1:
        gathered: list[Any] = [None] * world_size
        dist.all_gather_object(gathered, local)
        rows = [g for g in gathered if g is not None]
    last = [max(per_rank, key=lambda pair: pair[0]) for per_rank in zip(*rows, strict=True)]
    return statistics.median(p[0] for p in last), statistics.median(p[1] for p in last)
