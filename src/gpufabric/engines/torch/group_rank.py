"""The rank side of isolate's group round, a torch rank program:
``python -m gpufabric.engines.torch.group_rank --config <round config>``.

Every rank joins the world the way the engine's ranks do (``bench.rank_process``: identity from the
launcher's variables, the watched rendezvous and init stages, the error files and exit codes), then
creates one sub-communicator per group, on every rank and in the listed order (``new_group`` is
collective over the world), and the members of each group time the collective on their own communicator
with the torch engine's ``BatchTimer`` (``engines.torch.timing``) on its buffers (``engines.torch.ops``).
Ranks in no group (a confirm round tests a few nodes) only take part in creating the groups and in the
final gather.

``GroupTimer`` is ``BatchTimer`` with its control traffic (batch alignment, the time reduction, the stop
decision) on the group's communicator: on the world's, every group would wait for the slowest one and the
times of different groups would be averaged together. ``GPUFABRIC_FAULT`` acts as in the sweep: ``slow``
delays every launch of that rank (``fault.slowed_launch``), ``hang``/``crash`` fire when its group starts.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from typing import Any

import torch
import torch.distributed as dist

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.fault import Fault, check_world, fault_from_env, slowed_launch, timing_under, trigger
from gpufabric.bench.groups import ROUND_RESULT, GroupResult, GroupRound, RoundResult, write_round
from gpufabric.bench.identity import RankIdentity
from gpufabric.bench.rank_process import join_world, rank_device, run_as_rank
from gpufabric.bench.semantics import bandwidths, layout
from gpufabric.bench.stages import StageReporter
from gpufabric.engines.torch import ops
from gpufabric.engines.torch.timing import BatchTimer
from gpufabric.errors import UsageError


class GroupTimer(BatchTimer):
    """``BatchTimer`` for one group: ``rank``/``world_size`` are group-local, control on ``group``."""

    def __init__(self, config: BenchConfig, device: torch.device, ranks: list[int], rank: int, group: Any):
        # leader: the group's local rank 0, as a global rank (what broadcast takes)
        super().__init__(
            config, device, world_size=len(ranks), rank=ranks.index(rank), group=group, leader=ranks[0]
        )


def measure_group(
    spec: GroupRound, ranks: list[int], rank: int, group: Any, device: torch.device, fault: Fault | None
) -> GroupResult:
    """This rank's part of its group's collective; every member returns the same (group-reduced) numbers."""
    config = spec.bench
    local = ranks.index(rank)
    shape = layout(spec.collective, spec.size_bytes, config.wordsize, len(ranks))
    if shape.param_count == 0:
        raise UsageError(
            f"--size {spec.size_bytes}: less than one {config.dtype} per rank for {spec.collective} "
            f"on {len(ranks)} ranks; raise --size"
        )
    buffers = ops.Buffers(max(shape.send_count, shape.recv_count) * config.wordsize, device)
    in_place = spec.collective in ops.IN_PLACE_ONLY  # torch's all_reduce has no out-of-place form
    work = ops.build(shape, in_place=in_place, buffers=buffers, dtype=config.dtype, op=config.op, root=0,
                     rank=local, group=group)  # fmt: skip
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    slow = slowed_launch(fault, rank, work.launch, sync, group=ranks)  # slowlink: both ends in this group
    if slow is not None:
        work = dataclasses.replace(work, launch=slow, synchronizes=True)
    samples = GroupTimer(config, device, ranks, rank, group).measure(work)
    time_us = samples.estimate_us(config.estimator)
    algbw, busbw = bandwidths(shape, time_us)
    return GroupResult(
        ranks=ranks, time_us=time_us, algbw_gbps=algbw, busbw_gbps=busbw, samples_us=samples.samples_us,
        iters_per_batch=samples.iters_per_batch, stopped_by=samples.stopped_by,
    )  # fmt: skip


def run_group_rank(spec: GroupRound, identity: RankIdentity) -> int:
    config = spec.bench
    backend, device = rank_device(config, identity)
    fault = fault_from_env(os.environ)
    check_world(fault, identity.world_size)
    spec = spec.model_copy(update={"bench": timing_under(fault, spec.bench)})
    stages = StageReporter(config.run_dir, identity.rank)
    join_world(config, identity, backend, device, stages)
    try:
        stages.enter("first")
        mine: tuple[list[int], Any] | None = None
        for ranks in spec.groups:  # every rank creates every group, in the same order
            group = dist.new_group(ranks=ranks)
            if identity.rank in ranks:
                mine = (ranks, group)
        if mine is not None and fault is not None and fault.fires_at(identity.rank, spec.size_bytes, True):
            trigger(fault, identity.rank)  # before the report, so the parent sees this rank as not arrived
        stages.enter("size", collective=spec.collective, size=spec.size_bytes)
        result: GroupResult | None = None
        if spec.in_turn:
            # One group at a time, the others waiting in a world barrier: on one host a slowed group's
            # ranks took CPU from a healthy group timed beside it (measured 7x slower, issue 20).
            for ranks in spec.groups:
                dist.barrier()
                if mine is not None and mine[0] == ranks:
                    result = measure_group(spec, mine[0], identity.rank, mine[1], device, fault)
        elif mine is not None:
            result = measure_group(spec, mine[0], identity.rank, mine[1], device, fault)
        stages.enter("finish")
        # Only each group's local rank 0 answers for its group (every member holds the same numbers).
        answer = result.model_dump() if result is not None and result.ranks[0] == identity.rank else None
        gathered: list[Any] = [None] * identity.world_size
        dist.all_gather_object(gathered, answer)
        if identity.rank == 0:
            by_leader = {g["ranks"][0]: GroupResult.model_validate(g) for g in gathered if g is not None}
            round_result = RoundResult(
                round=spec.round, collective=spec.collective, size_bytes=spec.size_bytes, backend=backend,
                world_size=identity.world_size, fault=fault.spec if fault else None,
                groups=[by_leader[ranks[0]] for ranks in spec.groups],
            )  # fmt: skip
            write_round(round_result, config.run_dir / ROUND_RESULT)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpufabric.engines.torch.group_rank")
    parser.add_argument("--config", required=True, help="<round dir>/round-config.json")
    args = parser.parse_args(argv)
    with open(args.config, encoding="utf-8") as handle:
        spec = GroupRound.model_validate_json(handle.read())
    return run_as_rank(spec.bench.run_dir, lambda identity: run_group_rank(spec, identity))


if __name__ == "__main__":
    sys.exit(main())
