"""The order the throughput steps run in: synced and twin steps back to back, in blocks of ``block`` that
alternate ABBA (synced, twin, twin, synced, ...), each block led in by one untimed step of its side.

Why blocks: where every synced step ran before every twin step, whatever the lent machine did in between
landed on one side only (4x H200, 2026-11-28 03:21-03:27 UTC, gpt-760m DDP: four runs on one machine read
-0.49 to 9.33 ms of exposed communication that way). Why the lead-in: the twin's steps do not synchronise
the ranks, so they drift apart during a twin block, and the first synced step after it waited for that at
its first all-reduce: in every run of 2026-11-28 05:31-06:02 UTC (blocks of 5, no lead-in yet) the first
synced step after a twin block took longer than the others, 59-62 ms in median against 56.2-56.4 on a quiet
machine, up to 132 on a disturbed one (docs/train-bench.md finding 36). A training loop's ranks never
drift so far, so that step is not timed. Documents of those runs have no lead-in
(``TrainResult.block_lead_in`` False): their exposed reading leaves out the first step of each block
(``first_of_each_block``), as a lead-in would have.
No torch here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

StepOrder = Literal["interleaved", "sequential"]
"""'interleaved': the blocks above; 'sequential': every synced step, then every twin step (documents
before 2026-11-28 05:30 UTC)."""

SYNCED, TWIN = 0, 1


def abba_blocks(count: int, block: int) -> Iterator[tuple[int, int, int]]:
    """(side, index of its first step, steps) of each block in the order they run, ``count`` steps a
    side: side ``SYNCED`` or ``TWIN``, blocks of ``block`` (>= 1) steps, the last of a side shorter."""
    if block < 1:
        raise ValueError(f"block must be at least 1, got {block}")
    done = [0, 0]
    order = 0
    while done[SYNCED] < count or done[TWIN] < count:
        for side in (SYNCED, TWIN) if order % 2 == 0 else (TWIN, SYNCED):
            steps = min(block, count - done[side])
            if steps > 0:
                yield side, done[side], steps
                done[side] += steps
        order += 1


def first_of_each_block(count: int, block: int) -> tuple[set[int], set[int]]:
    """The indices of each block's first step: (synced, twin)."""
    firsts: tuple[set[int], set[int]] = (set(), set())
    for side, first, _ in abba_blocks(count, block):
        firsts[side].add(first)
    return firsts
