"""One parallel round of group tests on real ranks: disjoint groups, one collective each, all at once.

``gpufabric isolate`` asks for rounds of disjoint node groups (``analysis.isolate.GroupMeasurer``). A round
here is ONE job over every rank, started through any ``Launcher`` (local, mpirun, slurm): every rank
joins the world, creates one sub-communicator per group (``torch.distributed.new_group``, all groups on
all ranks in the same order, as torch requires) and every group runs the same collective at once on its
own communicator, like nccl-tests' ``NCCL_TESTS_SPLIT``. Each group is timed by the engine's own rules
(``bench.timing``: warm-up, stabilisation, per-batch time averaged over the group's ranks) and its busbw is
nccl-tests' arithmetic (``bench.semantics``). Rank 0 gathers one ``GroupResult`` per group and writes
``<round dir>/round.json``; the parent reads it back. The rank side is ``bench.group_rank``.

Nodes and ranks are kept apart on purpose (``NodeRanks``): the search names nodes, a job has ranks. Today
one node is one rank (a CPU rank, or one GPU); a node with several GPUs maps to several ranks later.

Every stage of a round is bounded by the engine's ``StageWatchdog``; a round that fails or hangs raises
one ``GpufabricError`` line naming the round, the rank and the stage. No torch here.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.failure import diagnose_failure
from gpufabric.bench.rundir import NCCL_LOG_DIR, PROGRESS_TAG
from gpufabric.bench.runner import nccl_debug_env
from gpufabric.bench.stages import StageTimeouts, StageWatchdog
from gpufabric.errors import GpufabricError, InputError
from gpufabric.launch.base import Launcher, OutputSink, RankProgram
from gpufabric.launch.processes import watching
from gpufabric.redact import redact_argv

GroupCollective = Literal["alltoall", "all_reduce"]
ROUND_CONFIG = "round-config.json"
ROUND_RESULT = "round.json"
RANK_MODULE = "gpufabric.bench.group_rank"


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
    backend: str | None = None
    device: Literal["auto", "cuda", "cpu"] = "auto"
    stage_timeouts: StageTimeouts = Field(default_factory=StageTimeouts)
    round_timeout_s: float | None = Field(default=600.0, gt=0, description="each round's whole job")
    in_turn: bool = Field(default=False, description="every round's groups take turns (GroupRound.in_turn)")


def round_timeouts(stages: StageTimeouts) -> StageTimeouts:
    """A group that finishes early waits in 'finish' for the slowest group: give it the size deadline."""
    return stages.model_copy(update={"finish": max(stages.finish, stages.size)})


class GroupRunner:
    """Runs rounds of node groups as jobs; ``__call__(groups) -> busbw per group`` (GB/s).

    ``launcher`` makes a fresh launcher per round (a new rendezvous port each time); ``env`` is added to
    every rank (``GPUFABRIC_FAULT`` only when the caller passes it); ``rounds`` keeps every result.
    """

    def __init__(
        self,
        settings: RoundSettings,
        *,
        node_ranks: NodeRanks,
        launcher: Callable[[], Launcher],
        run_dir: Path,
        on_gpu: bool,
        backend: str,
        env: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
        on_output: OutputSink | None = None,
    ) -> None:
        self.settings = settings
        self.node_ranks = node_ranks
        self.launcher = launcher
        self.run_dir = run_dir.resolve()
        self.on_gpu = on_gpu
        self.backend = backend
        self.env = dict(env or {})
        self.environ = dict(environ or {})
        self.on_output = on_output
        self.rounds: list[RoundResult] = []

    @property
    def node_count(self) -> int:
        return len(self.node_ranks.ranks)

    def round_dir(self, number: int) -> Path:
        return self.run_dir / f"round{number:02d}"

    def __call__(self, groups: Sequence[Sequence[int]]) -> list[float]:
        number = len(self.rounds) + 1
        spec = self.round_spec(number, groups)
        result = run_round(
            spec,
            launcher=self.launcher(),
            nranks=self.node_ranks.world_size,
            on_gpu=self.on_gpu,
            env=self.env,
            environ=self.environ,
            stage_timeouts=round_timeouts(self.settings.stage_timeouts),
            timeout_s=self.settings.round_timeout_s,
            on_output=self.on_output,
        )
        self.rounds.append(result)
        return [g.busbw_gbps for g in result.groups]

    def round_spec(self, number: int, groups: Sequence[Sequence[int]]) -> GroupRound:
        s = self.settings
        bench = BenchConfig(
            collectives=[s.collective], min_bytes=s.size_bytes, max_bytes=s.size_bytes, iters=s.iters,
            warmup=s.warmup, batches=s.batches, min_batch_s=s.min_batch_s, check=False,
            backend=self.backend, device=s.device, run_dir=self.round_dir(number),
            label=f"isolate-round{number:02d}", command=redact_argv(list(sys.argv)),
            init_timeout_s=s.stage_timeouts.init,
        )  # fmt: skip
        rank_groups = [self.node_ranks.of_group(g) for g in groups]
        return GroupRound(
            round=number, collective=s.collective, size_bytes=s.size_bytes, groups=rank_groups, bench=bench,
            in_turn=s.in_turn,
        )  # fmt: skip


def run_round(
    spec: GroupRound,
    *,
    launcher: Launcher,
    nranks: int,
    on_gpu: bool,
    env: Mapping[str, str],
    environ: Mapping[str, str],
    stage_timeouts: StageTimeouts,
    timeout_s: float | None,
    on_output: OutputSink | None = None,
) -> RoundResult:
    """Launch one round as one job, bounded stage by stage; the gathered result or one-line error."""
    run_dir = spec.bench.run_dir.resolve()
    (run_dir / NCCL_LOG_DIR).mkdir(parents=True, exist_ok=True)
    spec = spec.model_copy(update={"bench": spec.bench.model_copy(update={"run_dir": run_dir})})
    config_path = run_dir / ROUND_CONFIG
    config_path.write_text(spec.model_dump_json(indent=2) + "\n", encoding="utf-8")
    program = RankProgram(
        argv=[sys.executable, "-m", RANK_MODULE, "--config", str(config_path)],
        env={**env, **nccl_debug_env(run_dir, environ, env)},
        nranks=nranks,
        gpus_per_node=nranks if on_gpu else 0,
        workdir=run_dir,
        label=spec.bench.label,
    )
    watchdog = StageWatchdog(nranks, stage_timeouts)

    def sink(prefix: str, line: str) -> None:
        if watchdog.observe(line) or line.startswith(PROGRESS_TAG):
            return
        if on_output is not None:
            on_output(prefix, line)

    plan = launcher.render(program)
    watchdog.started = watchdog.clock()
    with watching(watchdog.check):
        outcome = launcher.execute(plan, on_output=sink, timeout_s=timeout_s)
    what = f"isolate round {spec.round} ({len(spec.groups)} group(s) of {spec.collective})"
    if not outcome.ok:
        raise _with_prefix(diagnose_failure(run_dir, outcome, timeout_s, watchdog), what, run_dir)
    return read_round(run_dir / ROUND_RESULT, spec)


def _with_prefix(error: GpufabricError, what: str, run_dir: Path) -> GpufabricError:
    """The engine's error, its message prefixed with the round (the attributes stay)."""
    error.args = (f"{what}: {error}; logs in {run_dir}",)
    return error


def read_round(path: Path, spec: GroupRound) -> RoundResult:
    try:
        result = RoundResult.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"isolate round {spec.round}: no readable result in {path} ({exc})") from exc
    if [g.ranks for g in result.groups] != spec.groups:
        raise InputError(f"isolate round {spec.round}: {path} answers other groups than were asked")
    return result


def write_round(result: RoundResult, path: Path) -> None:
    """Rank 0's write, atomic so the parent never reads half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(result.model_dump(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
