"""One parallel round of group tests on real ranks: disjoint groups, one collective each, all at once.

``gpufabric isolate`` asks for rounds of disjoint node groups (``analysis.isolate.GroupMeasurer``). A round
here is ONE job over every rank, started through any ``Launcher`` (local, mpirun, slurm): every rank
joins the world, creates one sub-communicator per group (``torch.distributed.new_group``, all groups on
all ranks in the same order, as torch requires) and every group runs the same collective at once on its
own communicator, like nccl-tests' ``NCCL_TESTS_SPLIT``. Each group is timed by the torch engine's rules
(``engines.torch.timing``: warm-up, stabilisation, per-batch time averaged over the group's ranks) and its
busbw is nccl-tests' arithmetic (``bench.semantics``). Rank 0 gathers one ``GroupResult`` per group and writes
``<round dir>/round.json``. This module holds what both sides read (the round's spec, its result, the
settings); the rank side is ``engines.torch.group_rank``, the parent side (prepare a round, run it, read
``round.json`` back) ``bench.group_runner``.

Nodes and ranks are kept apart on purpose (``NodeRanks``): the search names nodes, a job has ranks. Today
one node is one rank (a CPU rank, or one GPU); a node with several GPUs maps to several ranks later.

No torch here, and nothing of the parent's launchers: every rank imports this module.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.group_statistic import GroupStatistic
from gpufabric.bench.stages import ROUND_TIMEOUT_S, StageTimeouts
from gpufabric.options.train import Device
from gpufabric.outputs import atomic_write_text

GroupCollective = Literal["alltoall", "all_reduce"]
ROUND_CONFIG = "round-config.json"
ROUND_RESULT = "round.json"
"""Each round's whole job, at most, unless told otherwise (``isolate --round-timeout``)."""


class NodeRanks(BaseModel):
    """Which ranks of the job stand for each node: ``ranks[i]`` are node ``i``'s ranks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ranks: list[list[int]]

    @classmethod
    def one_per_node(cls, nodes: int) -> NodeRanks:
        return cls(ranks=[[node] for node in range(nodes)])

    @model_validator(mode="after")
    def _a_partition(self) -> NodeRanks:
        flat = sorted(r for ranks in self.ranks for r in ranks)
        if flat != list(range(len(flat))) or any(not ranks for ranks in self.ranks):
            raise ValueError("node ranks must cover ranks 0..N-1 once each, every node at least one")
        return self

    @property
    def world_size(self) -> int:
        return sum(len(ranks) for ranks in self.ranks)

    def of_group(self, nodes: Sequence[int]) -> list[int]:
        return [rank for node in nodes for rank in self.ranks[node]]


class GroupRound(BaseModel):
    """What every rank of one round reads: the groups (as ranks), the collective and the timing rules."""

    model_config = ConfigDict(extra="forbid")

    round: int = Field(ge=1)
    collective: GroupCollective
    size_bytes: int = Field(gt=0)
    groups: list[list[int]] = Field(description="disjoint rank groups, each of 2 or more ranks")
    bench: BenchConfig = Field(description="timing knobs (iters, warm-up, batches, estimator), run dir")
    in_turn: bool = Field(
        default=False,
        description="groups time their collective one after another (ranks sharing one host: a slowed "
        "group's ranks take CPU from the others), not all at once",
    )

    @model_validator(mode="after")
    def _disjoint(self) -> GroupRound:
        seen: set[int] = set()
        for group in self.groups:
            if len(group) < 2 or seen & set(group) or len(set(group)) != len(group):
                raise ValueError(f"round {self.round}: groups must be disjoint, of 2 or more ranks")
            seen |= set(group)
        return self


class GroupResult(BaseModel):
    """One group's collective in one round, as rank 0 gathered it."""

    model_config = ConfigDict(extra="forbid")

    ranks: list[int]
    time_us: float = Field(description="per-iteration time: the estimator over the kept batches")
    algbw_gbps: float
    busbw_gbps: float
    samples_us: list[float]
    iters_per_batch: int
    stopped_by: str


class RoundResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    round: int
    collective: str
    size_bytes: int
    backend: str
    world_size: int
    fault: str | None = None
    groups: list[GroupResult]


class RoundSettings(BaseModel):
    """How every round is measured (the CLI's flags), shared by all rounds of a search."""

    model_config = ConfigDict(extra="forbid")

    collective: GroupCollective = "alltoall"
    size_bytes: int = Field(default=1 << 20, gt=0)
    iters: int = Field(default=20, ge=1, description="iterations per timed batch, at least")
    warmup: int = Field(
        default=10, ge=0, description="untimed launches first; their mean sizes the batches, so a slow "
        "first launch (buffers touched, connections made) must be diluted",
    )  # fmt: skip
    batches: int = Field(default=5, ge=1)
    min_batch_s: float = Field(
        default=0.1,
        gt=0,
        description="seconds per timed batch (more iterations when needed): a slow group runs fewer "
        "iterations for the same time, and a scheduler hiccup or a burst of load on a shared host "
        "cannot fill a whole median of batches",
    )
    statistic: GroupStatistic = Field(
        default="median", description="what each group test's batch times are reduced to (group_statistic)"
    )
    backend: str | None = None
    device: Device = "auto"
    stage_timeouts: StageTimeouts = Field(default_factory=StageTimeouts)
    round_timeout_s: float | None = Field(default=ROUND_TIMEOUT_S, gt=0, description="each round's whole job")
    in_turn: bool = Field(default=False, description="every round's groups take turns (GroupRound.in_turn)")


def round_timeouts(stages: StageTimeouts) -> StageTimeouts:
    """A group that finishes early waits in 'finish' for the slowest group: give it the size deadline."""
    return stages.model_copy(update={"finish": max(stages.finish, stages.size)})


def write_round(result: RoundResult, path: Path) -> None:
    """Rank 0's write, atomic so the parent never reads half a file."""
    atomic_write_text(path, json.dumps(result.model_dump(), indent=2) + "\n")
