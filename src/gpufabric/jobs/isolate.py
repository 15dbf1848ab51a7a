"""The isolate mode (``gpufabric isolate``): ``prepare_isolate(request, execution, launchers=...)`` decides
everything (pure: the node names, the search's settings and, on real ranks, the world, the run directory,
the first round's groups, rank program, environment and launch plan) and ``run_isolate_job(prepared)``
runs that search, returning one document: an ``IsolationReport`` on the simulated cluster, a
``MeasuredIsolation`` on real ranks (also kept as ``<run dir>/isolate.json``).

On real ranks the search asks for rounds as it goes, and only the first (the screen) is known before any
measurement (``analysis.isolate.planned_screen``). ``isolate --dry-run`` prints its plan; the run
executes that same ``PreparedRound`` as round 1 and records it (``<run dir>/round01/plan.json``); every
later round is prepared the same way (``bench.group_runner``) when the search asks for it.
``GPUFABRIC_FAULT`` (tests) reaches the ranks only when set in the environment, and is then shown.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from gpufabric.analysis.isolate import (
    SLURM_NODELIST,
    ClusterModel,
    EngineMeasurer,
    IsolationReport,
    JudgeSettings,
    MeasuredIsolation,
    SearchOptions,
    planned_screen,
    run_isolation,
    shared_host_note,
    shared_hosts,
    simulate,
)
from gpufabric.bench.config import BenchConfig
from gpufabric.bench.execution import Execution
from gpufabric.bench.fault import Fault, check_world, fault_from_env
from gpufabric.bench.group_runner import GroupRunner, PreparedRound, prepare_round, round_spec
from gpufabric.bench.groups import NodeRanks, RoundSettings
from gpufabric.bench.run_setup import default_run_dir
from gpufabric.bench.stages import ROUND_TIMEOUT_S, StageTimeouts
from gpufabric.bench.world import resolve_world, visible_gpu_count
from gpufabric.boundary_names import FAULT_ENV
from gpufabric.errors import UsageError
from gpufabric.jobs.isolate_launch import HostRecorder, LauncherChooser, pin_slurm_nodes
from gpufabric.jobs.isolate_request import (
    CPU_BATCH_S,
    CPU_BATCHES,
    CPU_ITERS,
    CPU_SIZE,
    GPU_BATCH_S,
    GPU_BATCHES,
    GPU_ITERS,
    GPU_SIZE,
    TAIL_BATCH_S,
    TAIL_BATCHES,
    TAIL_ITERS,
    IsolateRequest,
)
from gpufabric.launch.base import LaunchPlan
from gpufabric.launch.dry_run import DryRun, DryRunJob
from gpufabric.launch.names import launcher_kind
from gpufabric.outputs import write_output
from gpufabric.units import human_size, parse_size

# Measured on this project's 2-core box: gloo's alltoall over 7 CPU ranks reached 0.07 GB/s busbw where
# pairs reached 0.5-0.6, so an all-node group cannot be judged against pairs there.
GLOO_SWEEP_NOTE = (
    "link sweep off: on CPU ranks gloo's busbw falls steeply with group size, so one all-node group "
    "cannot be judged against pairs (links inside every screen pair are still tested); --link-sweep forces it"
)
SLURM_ALLOCATION_NOTE = (
    f"nodes from {SLURM_NODELIST}; every round is its own sbatch job pinned to them (--nodelist), so "
    "rounds wait while an exclusive allocation holds the nodes: run isolate from outside it"
)
DOCUMENT_NAME = "isolate.json"
SHOWN_GROUPS = 8


@dataclasses.dataclass(frozen=True)
class PreparedSimulation:
    """A search of a simulated cluster, decided: the nodes, the cluster and the search's settings."""

    names: tuple[str, ...]
    node_source: str
    model: ClusterModel
    options: SearchOptions


@dataclasses.dataclass(frozen=True)
class PreparedMeasurement:
    """A search on real ranks, decided and not started: what ``isolate --dry-run`` prints (``notes`` and
    the first round's ``plan``) and what ``run_isolate_job`` runs.

    ``rounds`` is how every round's job runs (the launcher factory, Slurm nodes pinned, the nodes the
    launcher spreads ranks over, the ranks' output); ``env`` is added to every rank, ``environ`` is what
    they inherit (read once, when prepared)."""

    names: tuple[str, ...]
    node_source: str
    options: SearchOptions
    expected_gbps: float | None
    launcher_name: str
    nranks: int
    backend: str
    on_gpu: bool
    fault: Fault | None
    settings: RoundSettings
    node_ranks: NodeRanks
    env: Mapping[str, str]
    environ: Mapping[str, str]
    run_dir: Path
    virtual_nodes: bool
    notes: tuple[str, ...]
    screen_groups: tuple[tuple[int, ...], ...]
    screen: PreparedRound
    rounds: Execution

    @property
    def plan(self) -> LaunchPlan:
        """The first round's launch plan: the job a dry run shows and the run starts with."""
        return self.screen.plan

    def dry_run(self) -> DryRun:
        """``isolate_plan_notes``, then the screen round's plan."""
        return DryRun(notes=isolate_plan_notes(self), jobs=[DryRunJob({"round": 1}, self.plan)])


PreparedIsolate = PreparedSimulation | PreparedMeasurement
IsolateDocument = IsolationReport | MeasuredIsolation


def prepare_isolate(
    request: IsolateRequest, execution: Execution | None = None, *, launchers: LauncherChooser | None = None
) -> PreparedIsolate:
    """Every decision of one search, nothing started, nothing written. A real run's rounds run per
    ``execution`` (``--ranks``, the environment, each round's time limits, the ranks' output) through
    ``launchers(name, virtual nodes)``: a chooser rather than ``execution.launcher``, because which
    launcher, and how many virtual nodes, follow from the node source, read here."""
    execution = execution or Execution()
    environ = dict(execution.base_environ())
    judge = request.judge_settings()
    names, source = request.node_names(environ)
    if request.simulate:
        link_sweep = request.link_sweep if request.link_sweep is not None else True
        options = SearchOptions(group_size=request.group_size, link_sweep=link_sweep, seed=request.seed,
                                judge=judge)  # fmt: skip
        return PreparedSimulation(tuple(names), source, request.simulation(names), options)
    if launchers is None:
        raise ValueError("prepare_isolate: a search on real ranks needs launchers (name -> launcher factory)")
    return _prepare_measurement(request, execution, environ, launchers, names, source, judge)


def _prepare_measurement(
    request: IsolateRequest,
    execution: Execution,
    environ: dict[str, str],
    launchers: LauncherChooser,
    names: list[str],
    source: str,
    judge: JudgeSettings,
) -> PreparedMeasurement:
    nodes = len(names)
    launcher_name = request.launcher_name(source)
    request.check_measurement(nodes, execution.ranks)
    vnodes = nodes if request.virtual_nodes else 0
    probe = BenchConfig(backend=request.backend, collectives=[request.collective], virtual_nodes=vnodes)
    seen = {**environ, **execution.env}  # what the ranks will see
    world = resolve_world(probe, nodes, visible_gpu_count(seen))
    nranks, backend, on_gpu = world.ranks, world.backend, world.on_gpu
    fault = fault_from_env(seen)  # a malformed value is refused here, before any round
    check_world(fault, nranks)
    env = {**execution.env, **({FAULT_ENV: seen[FAULT_ENV]} if fault is not None else {})}
    size_bytes = parse_size(request.size or (GPU_SIZE if on_gpu else CPU_SIZE), flag="--size")
    round_timeout = execution.timeout_s if execution.timeout_s is not None else ROUND_TIMEOUT_S
    if size_bytes < 1:
        raise UsageError(f"--size {request.size}: a group test moves 1 byte or more; e.g. --size 1M")
    if not round_timeout > 0:  # "not >" also refuses nan
        raise UsageError(f"--round-timeout {round_timeout}: give each round a positive number of seconds")
    # Many short batches, read at median+tail10 by default, where GPUs talk directly (NVLink/PCIe, or a
    # NIC between real nodes). Virtual nodes of one host talk over NET/Socket through its kernel and
    # NCCL's proxy threads: host-scheduled batches, read at the median as on CPU ranks.
    statistic = request.group_statistic(direct_gpus=on_gpu and not vnodes)
    tail = on_gpu and not vnodes and statistic != "median"
    iters, batches, batch_s = (
        (TAIL_ITERS, TAIL_BATCHES, TAIL_BATCH_S)
        if tail
        else (GPU_ITERS, GPU_BATCHES, GPU_BATCH_S)
        if on_gpu
        else (CPU_ITERS, CPU_BATCHES, CPU_BATCH_S)
    )
    settings = RoundSettings(
        collective=request.collective,  # check_measurement checked it; pydantic checks it again
        size_bytes=size_bytes, iters=request.iters or iters, batches=request.batches or batches,
        min_batch_s=request.batch_seconds or batch_s,
        statistic=statistic, backend=backend,
        device="cuda" if on_gpu else "cpu", stage_timeouts=execution.stage_timeouts or StageTimeouts(),
        round_timeout_s=round_timeout,
        # Every rank on this host (local, virtual nodes): groups take turns, or a slowed group's ranks
        # would take CPU from the healthy groups measured beside it and hide it (issue 20).
        in_turn=not (request.hostfile or launcher_kind(launcher_name).pins_nodes),
    )  # fmt: skip
    run_dir = (request.run_dir or default_run_dir("isolate")).resolve()
    factory = launchers(launcher_name, vnodes)
    # Named Slurm nodes: every round's job must run on exactly them, or rank i is another node each round.
    named = request.node_list is not None or source == SLURM_NODELIST
    pinned = names if launcher_kind(launcher_name).pins_nodes and named else None
    rounds = execution.replace(
        launcher=lambda: pin_slurm_nodes(factory(), pinned),
        # One node per host (mpirun --hostfile) or per Slurm node; without hosts every rank runs here.
        nodes=nodes if request.hostfile or launcher_kind(launcher_name).pins_nodes else 1,
        environ=environ,
    )
    notes = [SLURM_ALLOCATION_NOTE] if source == SLURM_NODELIST else []
    sweep = request.link_sweep
    if sweep is None:
        sweep = backend != "gloo"
        if not sweep:
            notes.append(GLOO_SWEEP_NOTE)
    options = SearchOptions(group_size=request.group_size, link_sweep=sweep, seed=request.seed, judge=judge)
    node_ranks = NodeRanks.one_per_node(nodes)
    screen_groups = planned_screen(nodes, options)
    spec = round_spec(settings, node_ranks, number=1, groups=screen_groups, run_dir=run_dir, backend=backend)
    screen = prepare_round(spec, launcher=rounds.job_launcher(), nranks=node_ranks.world_size,
                           on_gpu=on_gpu, env=env, environ=environ)  # fmt: skip
    return PreparedMeasurement(
        names=tuple(names), node_source=source, options=options, expected_gbps=request.expected_gbps,
        launcher_name=launcher_name, nranks=nranks, backend=backend, on_gpu=on_gpu, fault=fault,
        settings=settings, node_ranks=node_ranks, env=env, environ=environ, run_dir=run_dir,
        virtual_nodes=request.virtual_nodes, notes=tuple(notes), screen_groups=tuple(screen_groups),
        screen=screen, rounds=rounds,
    )  # fmt: skip


def isolate_plan_notes(prepared: PreparedMeasurement) -> list[str]:
    """What ``isolate --dry-run`` says above the first round's plan: what each group test measures, the
    screen's groups, where the later rounds (known only once it has run) will go."""
    s, names = prepared.settings, prepared.names
    groups = ["+".join(names[node] for node in group) for group in prepared.screen_groups]
    more = len(groups) - SHOWN_GROUPS
    listed = ", ".join(groups[:SHOWN_GROUPS]) + (f" and {more} more" if more > 0 else "")
    lines = [
        f"isolate on real ranks: {len(names)} nodes ({prepared.node_source}), one rank per node, "
        f"{prepared.backend} via {prepared.launcher_name}; each group test: {s.collective} "
        f"{human_size(s.size_bytes)}, {s.batches} batches of {s.min_batch_s:g} s, their {s.statistic}",
        f"round 1 (screen), the job below: {len(groups)} group(s): {listed}",
        f"later rounds follow the measurements, one job each like this one, in {prepared.run_dir}/roundNN",
    ]
    if prepared.fault is not None:
        lines.append(f"fault injected: {FAULT_ENV}={prepared.fault.spec}")
    return lines + [f"note: {note}" for note in prepared.notes]


def run_isolate_job(prepared: PreparedIsolate) -> IsolateDocument:
    """Run the search of ``prepared`` as it is; real ranks need torch (checked first, one line)."""
    if isinstance(prepared, PreparedSimulation):
        return simulate(prepared.model, list(prepared.names), prepared.options)
    from gpufabric._optional import ensure_installed

    ensure_installed("torch", extra="torch", for_what="gpufabric isolate on real ranks",
                     instead="--simulate, which needs none")  # fmt: skip
    names, rounds = list(prepared.names), prepared.rounds
    hosts = HostRecorder()
    runner = GroupRunner(
        prepared.settings, node_ranks=prepared.node_ranks, run_dir=prepared.run_dir,
        launcher=lambda: hosts.wrap(rounds.job_launcher()), on_gpu=prepared.on_gpu,
        backend=prepared.backend, env=prepared.env, environ=prepared.environ, on_output=rounds.on_output,
        # Round 1 is the round prepared (and shown by a dry run), its hosts recorded like every round's.
        first_round=dataclasses.replace(prepared.screen, launcher=hosts.wrap(prepared.screen.launcher)),
    )  # fmt: skip
    measurer = EngineMeasurer(len(names), runner, prepared.expected_gbps)
    report = run_isolation(measurer, names, prepared.options)
    node_map = {name: ranks for name, ranks in zip(names, prepared.node_ranks.ranks, strict=True)}
    shared = shared_hosts(node_map, hosts.rank_hosts)
    notes = [*prepared.notes, *hosts.notes(), *shared_host_note(shared, prepared.virtual_nodes)]
    answer = MeasuredIsolation(
        report=report, collective=prepared.settings.collective, size_bytes=prepared.settings.size_bytes,
        statistic=prepared.settings.statistic, batches=prepared.settings.batches,
        backend=prepared.backend, launcher=prepared.launcher_name, world_size=prepared.nranks,
        node_ranks=node_map, rank_hosts=hosts.rank_hosts, shared_hosts=shared,
        node_source=prepared.node_source,
        expected_gbps=measurer.expected_gbps, expected_source=measurer.expected_source,
        tail_scale=measurer.tail_scale,
        fault=prepared.fault.spec if prepared.fault else None, link_sweep=prepared.options.link_sweep,
        run_dir=str(prepared.run_dir),
        round_dirs=[str(runner.round_dir(r.round)) for r in runner.rounds], notes=notes,
    )  # fmt: skip
    write_output(prepared.run_dir / DOCUMENT_NAME, answer.model_dump_json(indent=2) + "\n")
    return answer
