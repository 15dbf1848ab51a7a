"""The parent side of isolate's group rounds, in two steps like a sweep (``bench.runner``):
``prepare_round`` (pure: the round's spec as the ranks read it, the rank program, the launch plan) and
``execute_round`` (write the round directory, record the plan as ``<round dir>/plan.json``, run it, read
rank 0's ``round.json`` back). ``GroupRunner`` does both for every round the search asks for, and runs a
round prepared in advance (``first_round``: the screen round ``gpufabric isolate --dry-run`` printed) as
it is.

Every stage of a round is bounded by the engine's ``StageWatchdog``; a round that fails or hangs raises
one ``GpufabricError`` line naming the round, the rank and the stage. The shared models are
``bench.groups``; the rank side is ``engines.torch.group_rank``. No torch here.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.failure import diagnose_failure
from gpufabric.bench.group_statistic import group_readings
from gpufabric.bench.groups import (
    ROUND_CONFIG,
    ROUND_RESULT,
    GroupRound,
    NodeRanks,
    RoundResult,
    RoundSettings,
    round_timeouts,
)
from gpufabric.bench.rank_program import nccl_debug_env
from gpufabric.bench.run_setup import record_plan
from gpufabric.bench.rundir import NCCL_LOG_DIR, PROGRESS_TAG
from gpufabric.bench.stages import StageTimeouts, StageWatchdog
from gpufabric.errors import GpufabricError, InputError
from gpufabric.launch.base import Launcher, LaunchPlan, OutputSink, RankProgram
from gpufabric.launch.processes import watching
from gpufabric.redact import redact_argv

RANK_MODULE = "gpufabric.engines.torch.group_rank"


def round_dir(run_dir: Path, number: int) -> Path:
    """Where round ``number`` of a search writes: ``<run dir>/round01/`` ..."""
    return run_dir / f"round{number:02d}"


@dataclasses.dataclass(frozen=True)
class PreparedRound:
    """One round, decided and not started. ``spec`` is what every rank reads (at ``config_path``,
    written only by ``execute_round``); ``plan`` is the launcher's rendering of ``program``."""

    spec: GroupRound
    config_path: Path
    program: RankProgram
    plan: LaunchPlan
    launcher: Launcher


def round_spec(
    settings: RoundSettings,
    node_ranks: NodeRanks,
    *,
    number: int,
    groups: Sequence[Sequence[int]],
    run_dir: Path,
    backend: str,
) -> GroupRound:
    """Round ``number`` of node ``groups``, as rank groups, measured by ``settings``; writes in
    ``round_dir(run_dir, number)``."""
    s = settings
    bench = BenchConfig(
        collectives=[s.collective], min_bytes=s.size_bytes, max_bytes=s.size_bytes, iters=s.iters,
        warmup=s.warmup, batches=s.batches, min_batch_s=s.min_batch_s, check=False,
        backend=backend, device=s.device, run_dir=round_dir(run_dir, number).resolve(),
        label=f"isolate-round{number:02d}", command=redact_argv(list(sys.argv)),
        init_timeout_s=s.stage_timeouts.init,
    )  # fmt: skip
    rank_groups = [node_ranks.of_group(g) for g in groups]
    return GroupRound(
        round=number, collective=s.collective, size_bytes=s.size_bytes, groups=rank_groups, bench=bench,
        in_turn=s.in_turn,
    )  # fmt: skip


def prepare_round(
    spec: GroupRound,
    *,
    launcher: Launcher,
    nranks: int,
    on_gpu: bool,
    env: Mapping[str, str],
    environ: Mapping[str, str],
) -> PreparedRound:
    """The rank program and launch plan of ``spec``: the ranks' environment is ``env`` and NCCL's debug
    logging into the round directory, unless ``environ`` (what they inherit) already chooses it. Starts
    nothing, writes nothing (a launcher's ``render`` is pure)."""
    run_dir = spec.bench.run_dir.resolve()
    spec = spec.model_copy(update={"bench": spec.bench.model_copy(update={"run_dir": run_dir})})
    config_path = run_dir / ROUND_CONFIG
    program = RankProgram(
        argv=[sys.executable, "-m", RANK_MODULE, "--config", str(config_path)],
        env={**env, **nccl_debug_env(run_dir, environ, env)},
        nranks=nranks,
        gpus_per_node=nranks if on_gpu else 0,
        workdir=run_dir,
        label=spec.bench.label,
    )
    return PreparedRound(spec, config_path, program, launcher.render(program), launcher)


def execute_round(
    prepared: PreparedRound,
    *,
    stage_timeouts: StageTimeouts,
    timeout_s: float | None,
    on_output: OutputSink | None = None,
) -> RoundResult:
    """Run ``prepared`` (its plan, unchanged) as one job, bounded stage by stage; the gathered result or
    one-line error."""
    spec, run_dir = prepared.spec, prepared.config_path.parent
    (run_dir / NCCL_LOG_DIR).mkdir(parents=True, exist_ok=True)
    prepared.config_path.write_text(spec.model_dump_json(indent=2) + "\n", encoding="utf-8")
    record_plan(prepared.plan, run_dir)
    watchdog = StageWatchdog(prepared.program.nranks, stage_timeouts)

    def sink(prefix: str, line: str) -> None:
        if watchdog.observe(line) or line.startswith(PROGRESS_TAG):
            return
        if on_output is not None:
            on_output(prefix, line)

    watchdog.started = watchdog.clock()
    with watching(watchdog.check):
        outcome = prepared.launcher.execute(prepared.plan, on_output=sink, timeout_s=timeout_s)
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


class GroupRunner:
    """Runs rounds of node groups as jobs; ``__call__(groups) -> busbw per group`` (GB/s) at the
    settings' statistic of each group's batch times (``bench.group_statistic``; ``median+tail10``: the
    pair of readings that ``analysis.isolate.blend`` makes one).

    ``launcher`` makes a fresh launcher per round (a new rendezvous port each time); ``env`` is added to
    every rank (``GPUFABRIC_FAULT`` only when the caller passes it); ``first_round``, when given, is run
    as round 1 instead of preparing it again (its groups must be the ones the search asks for);
    ``rounds`` keeps every result.
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
        first_round: PreparedRound | None = None,
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
        self.first_round = first_round
        self.rounds: list[RoundResult] = []

    @property
    def node_count(self) -> int:
        return len(self.node_ranks.ranks)

    def round_dir(self, number: int) -> Path:
        return round_dir(self.run_dir, number)

    def prepare(self, number: int, groups: Sequence[Sequence[int]]) -> PreparedRound:
        """Round ``number`` of ``groups``, decided and not started (a fresh launcher renders it)."""
        spec = round_spec(self.settings, self.node_ranks, number=number, groups=groups,
                          run_dir=self.run_dir, backend=self.backend)  # fmt: skip
        return prepare_round(spec, launcher=self.launcher(), nranks=self.node_ranks.world_size,
                             on_gpu=self.on_gpu, env=self.env, environ=self.environ)  # fmt: skip

    def __call__(self, groups: Sequence[Sequence[int]]) -> list[float | tuple[float, float]]:
        number = len(self.rounds) + 1
        prepared = self.first_round if number == 1 and self.first_round else self.prepare(number, groups)
        asked = [self.node_ranks.of_group(g) for g in groups]
        if prepared.spec.groups != asked:
            # The dry run showed the prepared round: running other groups would make it a lie.
            raise GpufabricError(
                f"isolate round {number}: the search asked for rank groups {asked}, but the prepared "
                f"round measures {prepared.spec.groups}"
            )
        result = execute_round(
            prepared,
            stage_timeouts=round_timeouts(self.settings.stage_timeouts),
            timeout_s=self.settings.round_timeout_s,
            on_output=self.on_output,
        )
        self.rounds.append(result)
        statistic = self.settings.statistic
        return [group_readings(g.busbw_gbps, g.time_us, g.samples_us, statistic) for g in result.groups]
