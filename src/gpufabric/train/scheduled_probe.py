"""The contention probe's second half: the step's collectives issued where the step issues them.

``contention.probe_contention`` issues every collective of a step at once, where the first one is ready,
and reads two rates from that (compute and collectives side by side, each as a fraction of its speed
alone); the overlap model (``schedule.exposed_ms``) then plays the step's calls at their ready points
with those rates. On 4x H200 (2026-11-27 17:54, gpt-760m DDP) that gave 4.86 ms of contention where the
step's blocks lost 3.49 ms (the inside-step probe): the rates, or the assumption that they hold when the
calls come one by one as backward readies them, over-count. This probe separates the two: the same
twin's backward with each call issued at the end of the block whose gradients it waits for (calls ready
only at backward's end, such as the tied embedding's bucket, when backward ends), so the collectives meet
the compute they meet in the step, with its gaps. What it reads:

- ``backward_ms``: the backward from the first call's issue to its end (the contention probe's alone
  backward is timed over the same span), so beside - alone is the compute the step's schedule loses;
- ``comm_ms``: from the first call's issue to the last call's end, so its excess over ``backward_ms`` is
  the tail the step waits for after backward;
- ``issue_host_ms``: the host time the hooks spent issuing the calls (Python, torch and NCCL's enqueue),
  work the step's reducer does in C++. Where the host barely keeps ahead of the GPU (the DDP twin on 4x
  H200 issued its step in 39.3 ms of the device's 45.1) such work can show in the backward's time: on 4x
  H200 (2026-11-27 22:56) the backward lost 7.73 ms against the alone backward where the step's blocks
  lost 3.37 ms;
- ``backward_solo_ms``: the same backward with the same hooks issuing an all-reduce per call on the rank's
  own process group (the twin's), timed as ``backward_ms``: the hooks and torch's side of each call, the
  part of the issue that can delay the backward without any transfer. It is not all of it: NCCL's
  one-rank in-place all-reduce launches nothing (``ncclLaunchOneRank``), so NCCL's enqueue and kernel
  launch of a call with peers stay out of it (``issue_host_ms`` has them). beside - solo is the compute
  the schedule's transfers and NCCL's launches cost.

Each round after a barrier; per round the slowest rank, then the median over rounds (as the contention
probe). GPU: every call is enqueued before the step on a side stream, each issue point's calls behind a
gate value the compute stream writes when backward reaches the point (``stream_gate``; without
cuda-bindings they are issued from Python there, from a side stream that waits for the compute stream);
CPU (gloo): ``gloo_waiters`` stamps each issue point's works' end.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from gpufabric.train.block_marks import Point, mark_blocks
from gpufabric.train.gloo_waiters import GlooWaiters
from gpufabric.train.probe_measures import ScheduledBeside
from gpufabric.train.result import CollectiveCall
from gpufabric.train.schedule import END, SAME_POINT
from gpufabric.train.strategy import Mark, sync_world
from gpufabric.train.stream_gate import StreamGate, open_gate
from gpufabric.train.timing import device_clock, elapsed_ms, issue, probe_buffers, slowest_per_step

Step = Callable[[int, Mark], None]


@dataclass(frozen=True)
class IssuePoints:
    """Which calls each block's backward end readies (call indices, issue order kept), and the calls
    issued when backward ends: those ready at its end (1.0) or at no block's end. In ``Layout`` block 0's
    end is 1.0 too (the embeddings' lookup has no FLOPs there), so a call ready at 1.0 waits for
    backward's end: the tied embedding's bucket is ready only after the lookup's backward (and the
    twin's last reducer work), and issued at block 0's end it would start before its gradients exist
    (the 2026-11-27 20:18 run did so: its last call, 176.5 MB, ended before backward did)."""

    by_block: dict[int, list[int]] = field(default_factory=dict)
    at_end: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, calls: Sequence[CollectiveCall], ends: Sequence[float]) -> IssuePoints:
        """``ends``: each block's backward end as a fraction of backward (``schedule.Layout``)."""
        by_block: dict[int, list[int]] = {}
        at_end: list[int] = []
        for index, call in enumerate(calls):
            if call.phase != "backward":
                continue
            block = next((b for b, end in enumerate(ends) if abs(end - call.ready_at) < SAME_POINT), None)
            if block is None or call.ready_at >= END - SAME_POINT:
                at_end.append(index)
            else:
                by_block.setdefault(block, []).append(index)
        return cls(by_block=by_block, at_end=at_end)

    @property
    def empty(self) -> bool:
        return not self.by_block and not self.at_end


def probe_scheduled(
    step: Step,
    calls: list[CollectiveCall],
    blocks: Sequence[nn.Module],
    points: IssuePoints,
    *,
    rounds: int,
    world_size: int,
    device: torch.device,
    solo_group: Any = None,
) -> ScheduledBeside | None:
    """The median over ``rounds`` of the slowest rank's scheduled backward and collectives; None where no
    call of backward is ready at a block's end or at backward's end (FSDP2's schedule has forward calls
    and gathers the twin cannot meet: its probe starts at backward's start, ``contention``). With
    ``solo_group`` (this rank's own process group) each round also runs the same schedule there first,
    where the calls are issued from Python. Not behind a gate: there the hooks only write a flag, and the
    group is the twin's reducer's, whose all-reduces would queue on one NCCL stream behind gated calls
    that open only after the compute stream has waited for them (2x H200, 2026-11-27 23:29: DDP hung)."""
    if not points.by_block:
        return None
    gate = open_gate(device)
    if gate is not None:
        solo_group = None
    pairs = probe_buffers(calls, world_size, device)
    schedule = _Schedule(step, calls, pairs, blocks, points, device, gate)
    run = _scheduled_gpu if device.type == "cuda" else _scheduled_cpu
    backward_ms, comm_ms, issue_ms, solo_ms = [], [], [], []
    for index in range(rounds):
        if solo_group is not None:
            sync_world(device)
            solo_ms.append(run(schedule, index, solo_group).backward_ms)
        sync_world(device)
        timed = run(schedule, index, None)
        backward_ms.append(timed.backward_ms)
        comm_ms.append(timed.comm_ms)
        issue_ms.append(timed.issue_host_ms)
    sync_world(device)
    backward_median, comm_median, issue_median = (
        statistics.median(slowest_per_step(series, world_size)) for series in (backward_ms, comm_ms, issue_ms)
    )
    solo = statistics.median(slowest_per_step(solo_ms, world_size)) if solo_ms else None
    return ScheduledBeside(
        backward_ms=backward_median,
        comm_ms=comm_median,
        rounds=rounds,
        backward_solo_ms=solo,
        issue_host_ms=issue_median,
    )


@dataclass(frozen=True)
class _Schedule:
    """What every round of the probe runs: the twin's step, the calls on their buffers, where to issue."""

    step: Step
    calls: list[CollectiveCall]
    pairs: list[Any]
    blocks: Sequence[nn.Module]
    points: IssuePoints
    device: torch.device
    gate: StreamGate | None

    def issue(self, which: list[int], group: Any) -> list[Any]:
        return [_issue_on(self.calls[i], self.pairs[i], group) for i in which]


@dataclass(frozen=True)
class _Round:
    backward_ms: float
    comm_ms: float
    issue_host_ms: float


def _issue_on(call: CollectiveCall, pair: Any, group: Any) -> Any:
    """The call on the world, or on the rank's own group: there an all-reduce of its send buffer whatever
    its kind (a one-rank gather's shapes would not fit; only its issue is wanted there)."""
    if group is None:
        return issue(call, *pair, async_op=True)
    return dist.all_reduce(pair[0], async_op=True, group=group)


def _hooked_step(
    schedule: _Schedule,
    index: int,
    issue_at: Callable[[list[int]], None],
    stamps: dict[str, Any],
    clock: Callable[[], Any],
) -> None:
    """One step, with ``issue_at(call indices)`` at each block's backward end that readies calls and, for
    the rest, right after backward's end is stamped; the host seconds spent in it go to
    ``stamps["issue_host_s"]``."""
    points = schedule.points
    stamps["issue_host_s"] = 0.0

    def timed_issue(which: list[int]) -> None:
        start = time.perf_counter()
        issue_at(which)
        stamps["issue_host_s"] += time.perf_counter() - start

    def mark(phase: str) -> None:
        stamps[phase] = clock()
        if phase == "backward":
            timed_issue(points.at_end)

    def at_block(block: int, point: Point) -> None:
        if point == "backward_end" and block in points.by_block:
            timed_issue(points.by_block[block])

    remove = mark_blocks(schedule.blocks, at_block)
    try:
        schedule.step(index, mark)
    finally:
        remove()


def _scheduled_gpu(schedule: _Schedule, index: int, group: Any) -> _Round:
    device, points, gate = schedule.device, schedule.points, schedule.gate
    cuda: Any = torch.cuda
    side = cuda.Stream(device)
    clock = device_clock(device)
    stamps: dict[str, Any] = {}
    works: list[Any] = []
    # Behind a gate every call is enqueued before the step, each issue point's calls behind its own value
    # in the order backward reaches them (the last block's end first); the hooks then only open the gate.
    order = [points.by_block[b] for b in sorted(points.by_block, reverse=True)]
    order += [points.at_end] if points.at_end else []
    value_of = {id(which): value for value, which in enumerate(order, start=1)}
    if gate is not None:
        gate.reset()
        with cuda.stream(side):
            for which in order:
                gate.hold(side, value_of[id(which)])
                works.extend(schedule.issue(which, group))
    opened: list[int] = []

    def issue_at(which: list[int]) -> None:
        if not which:
            return
        if gate is not None:
            gate.release(cuda.current_stream(device), value_of[id(which)])
            opened.append(value_of[id(which)])
        else:
            side.wait_stream(cuda.current_stream(device))  # these calls start where compute is now
            with cuda.stream(side):
                works.extend(schedule.issue(which, group))
        if "first" not in stamps:  # on the compute stream, once the first calls are issued
            stamps["first"] = clock()

    try:
        _hooked_step(schedule, index, issue_at, stamps, clock)
    except BaseException:
        if gate is not None:
            gate.release_all()  # never leave calls held: the synchronisation would wait forever
        raise
    if gate is not None and len(opened) < len(order):
        gate.release_all()
        raise RuntimeError("scheduled probe: backward did not reach every point its collectives wait for")
    with cuda.stream(side):
        for work in works:
            work.wait()  # the side stream waits for NCCL's
        stamps["comm"] = clock()
    cuda.current_stream(device).wait_stream(side)
    torch.cuda.synchronize(device)
    return _Round(
        backward_ms=elapsed_ms(device, stamps["first"], stamps["backward"]),
        comm_ms=max(0.0, elapsed_ms(device, stamps["first"], stamps["comm"])),
        issue_host_ms=stamps["issue_host_s"] * 1e3,
    )


def _scheduled_cpu(schedule: _Schedule, index: int, group: Any) -> _Round:
    stamps: dict[str, float] = {}
    waiters = GlooWaiters()

    def issue_at(which: list[int]) -> None:
        if not which:
            return
        works = schedule.issue(which, group)
        if "first" not in stamps:
            stamps["first"] = time.perf_counter()
        waiters.wait_for(works)

    _hooked_step(schedule, index, issue_at, stamps, time.perf_counter)
    comm_end = waiters.join()
    return _Round(
        backward_ms=(stamps["backward"] - stamps["first"]) * 1e3,
        comm_ms=max(0.0, comm_end - stamps["first"]) * 1e3,
        issue_host_ms=stamps["issue_host_s"] * 1e3,
    )
