"""``gpufabric isolate`` on real ranks: wire the engine's group rounds to the search and render the answer.

The search (``analysis.isolate``) asks for rounds; ``bench.groups.GroupRunner`` runs each round as one job
through the chosen launcher; ``EngineMeasurer`` is the seam between them. This module only decides the
world (nodes, ranks, backend, launcher), reads ``GPUFABRIC_FAULT`` from the user's environment (passed to
the ranks only when set, and then shown), runs the search and writes ``<run dir>/isolate.json``.
Imported only when a real run starts: it pulls in the engine's parent side (still no torch).
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from gpufabric.analysis.isolate import (
    JudgeSettings,
    SearchOptions,
    run_isolation,
    shared_host_note,
    shared_hosts,
)
from gpufabric.analysis.isolate.engine_measurer import EngineMeasurer, MeasuredIsolation
from gpufabric.analysis.isolate.nodes import SLURM_NODELIST
from gpufabric.analysis.isolate.render import host_verdicts, render_table
from gpufabric.bench.adapt import AdaptedLauncher
from gpufabric.bench.config import BenchConfig
from gpufabric.bench.fault import FAULT_ENV, check_world, fault_from_env
from gpufabric.bench.groups import GroupRunner, NodeRanks, RoundSettings
from gpufabric.bench.runner import default_run_dir
from gpufabric.bench.stages import parse_stage_timeouts
from gpufabric.bench.world import resolve_world, visible_gpu_count
from gpufabric.errors import UsageError
from gpufabric.launch.base import Launcher, LaunchOutcome, LaunchPlan, OutputSink, RankProgram
from gpufabric.outputs import write_output
from gpufabric.units import human_size, parse_size

CPU_SIZE, GPU_SIZE = "1M", "64M"
# Seconds per timed batch: a shared CPU host needs long batches to average out its scheduler (healthy
# pairs' 200 ms batches ranged 0.7-3.6 ms per iteration here); GPUs are steady, and rounds stay short.
CPU_BATCH_S, GPU_BATCH_S = 0.1, 0.02
COLLECTIVES = ("alltoall", "all_reduce")
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


class RealRequest(BaseModel):
    """The CLI's flags for a real run, checked here."""

    model_config = ConfigDict(extra="forbid")

    names: list[str]
    hostfile: Path | None
    node_list: bool
    node_source: str = ""
    ranks: int | None
    on: str | None
    collective: str
    size: str | None
    iters: int
    batches: int
    batch_seconds: float | None
    backend: str | None
    expected_gbps: float | None
    round_timeout_s: float
    timeout_stage: str | None
    run_dir: Path | None
    mpirun: str
    link_sweep: bool | None
    group_size: int
    seed: int
    judge: JudgeSettings
    virtual_nodes: bool = False
    mps: bool = False


class HostRecorder:
    """Wraps each round's launcher and keeps the host every rank ran on, as the launcher reported it
    (mpirun's hosts, Slurm's allocation; the local launcher runs every rank on this host)."""

    def __init__(self) -> None:
        self.rank_hosts: dict[int, str] = {}
        self.moved: dict[int, set[str]] = {}
        self.inner: Launcher | None = None
        self.name = ""

    def wrap(self, inner: Launcher) -> HostRecorder:
        self.inner, self.name = inner, inner.name
        return self

    def render(self, program: RankProgram) -> LaunchPlan:
        assert self.inner is not None  # wrap() comes first
        return self.inner.render(program)

    def execute(
        self, plan: LaunchPlan, *, on_output: OutputSink | None = None, timeout_s: float | None = None
    ) -> LaunchOutcome:
        assert self.inner is not None
        outcome = self.inner.execute(plan, on_output=on_output, timeout_s=timeout_s)
        for rank_exit in outcome.exits:
            host = rank_exit.host or (socket.gethostname() if self.name == "local" else None)
            if host is None:
                continue
            before = self.rank_hosts.setdefault(rank_exit.rank, host)
            if before != host:
                self.moved.setdefault(rank_exit.rank, {before}).add(host)
        return outcome

    def notes(self) -> list[str]:
        """A warning when a rank ran on different hosts in different rounds: its verdict is not one node's."""
        return [
            f"rank {rank} ran on {', '.join(sorted(hosts))} in different rounds: pin the nodes (--node-list)"
            for rank, hosts in sorted(self.moved.items())
        ]


def pin_slurm_nodes(launcher: Launcher, names: list[str] | None) -> Launcher:
    """The Slurm launcher with ``--nodelist`` set to ``names``, so every round runs on the same nodes."""
    from gpufabric.launch.slurm import SlurmLauncher

    if names is None or not isinstance(launcher, SlurmLauncher):
        return launcher
    options = launcher.options
    pinned = [*options.sbatch_args, f"--nodelist={','.join(names)}"]
    return SlurmLauncher(options.model_copy(update={"sbatch_args": pinned}))


def _launcher_name(request: RealRequest) -> str:
    name = request.on or ("mpirun" if request.hostfile else "local")
    if request.node_list and name != "slurm":
        # Kubernetes pods (pod/NAME lines) cannot host real rounds yet: say what does work with them.
        raise UsageError(
            f"--node-list with --on {name}: real rounds run only on listed Slurm nodes (--on slurm); "
            "search these names in the simulator with --simulate --node-list PATH, or measure real ranks "
            "with --on slurm --node-list PATH, --on mpirun --hostfile PATH or --nodes N (local ranks)"
        )
    if request.hostfile and name != "mpirun":
        raise UsageError(f"--hostfile: only --on mpirun places ranks on hosts, not --on {name}")
    if name not in ("local", "mpirun", "slurm"):
        raise UsageError(f"--on {name!r}: isolate runs rounds through local, mpirun or slurm")
    return name


def _check(request: RealRequest, nodes: int) -> None:
    if request.collective not in COLLECTIVES:
        raise UsageError(f"--collective {request.collective!r}: choose from {', '.join(COLLECTIVES)}")
    if request.ranks is not None and request.ranks != nodes:
        raise UsageError(
            f"--ranks {request.ranks}: isolate runs one rank per node ({nodes} nodes); pass --ranks {nodes} "
            "(several GPUs per node come later)"
        )
    if request.iters < 1 or request.batches < 1 or not 0 < (request.batch_seconds or 1) <= 60:
        raise UsageError(
            f"--iters {request.iters} / --batches {request.batches} / --batch-seconds "
            f"{request.batch_seconds}: iterations and batches 1 or more, seconds in (0, 60]"
        )
    if request.expected_gbps is not None and request.expected_gbps <= 0:
        raise UsageError(f"--expected-gbps {request.expected_gbps}: give a positive busbw, e.g. 180")


def run_real(
    request: RealRequest, *, environ: Mapping[str, str], on_output: OutputSink | None
) -> MeasuredIsolation:
    """Run the search on real ranks; returns the answer (also written to ``<run dir>/isolate.json``)."""
    from gpufabric.cli.bench_modes import launcher_factory

    names = request.names
    nodes = len(names)
    launcher_name = _launcher_name(request)
    _check(request, nodes)
    vnodes = nodes if request.virtual_nodes else 0
    probe = BenchConfig(backend=request.backend, collectives=[request.collective], virtual_nodes=vnodes)
    gpus = visible_gpu_count(environ)
    nranks, backend, on_gpu = resolve_world(probe, nodes, gpus)
    fault = fault_from_env(environ)  # a malformed value is refused here, before any round
    check_world(fault, nranks)
    env = {FAULT_ENV: environ[FAULT_ENV]} if fault is not None else {}
    size_bytes = parse_size(request.size or (GPU_SIZE if on_gpu else CPU_SIZE), flag="--size")
    settings = RoundSettings(
        collective=request.collective,
        size_bytes=size_bytes, iters=request.iters, batches=request.batches,
        min_batch_s=request.batch_seconds or (GPU_BATCH_S if on_gpu else CPU_BATCH_S), backend=backend,
        device="cuda" if on_gpu else "cpu", stage_timeouts=parse_stage_timeouts(request.timeout_stage),
        round_timeout_s=request.round_timeout_s,
        # Every rank on this host (local, virtual nodes): groups take turns, or a slowed group's ranks
        # would take CPU from the healthy groups measured beside it and hide it (issue 20).
        in_turn=not (request.hostfile or launcher_name == "slurm"),
    )  # fmt: skip
    run_dir = (request.run_dir or default_run_dir("isolate")).resolve()
    factory = launcher_factory(
        launcher_name, hosts=[], hostfile=request.hostfile, mpirun=request.mpirun, dry_run=False,
        virtual_nodes=vnodes, mps=request.mps,
    )  # fmt: skip
    # One node per host (mpirun --hostfile) or per Slurm node; without hosts every rank runs here.
    launch_nodes = nodes if request.hostfile or launcher_name == "slurm" else 1
    # Named Slurm nodes: every round's job must run on exactly them, or rank i is another node each round.
    pinned = names if launcher_name == "slurm" and request.node_list else None
    hosts = HostRecorder()

    def make_launcher() -> HostRecorder:
        return hosts.wrap(AdaptedLauncher(pin_slurm_nodes(factory(), pinned), nodes=launch_nodes))

    node_ranks = NodeRanks.one_per_node(nodes)
    runner = GroupRunner(
        settings, node_ranks=node_ranks, launcher=make_launcher, run_dir=run_dir, on_gpu=on_gpu,
        backend=backend, env=env, environ=environ, on_output=on_output,
    )  # fmt: skip
    notes: list[str] = []
    if request.node_source == SLURM_NODELIST:
        notes.append(SLURM_ALLOCATION_NOTE)
    sweep = request.link_sweep
    if sweep is None:
        sweep = backend != "gloo"
        if not sweep:
            notes.append(GLOO_SWEEP_NOTE)
    measurer = EngineMeasurer(nodes, runner, request.expected_gbps)
    options = SearchOptions(
        group_size=request.group_size, link_sweep=sweep, seed=request.seed, judge=request.judge
    )
    report = run_isolation(measurer, names, options)
    notes += hosts.notes()
    node_map = {name: ranks for name, ranks in zip(names, node_ranks.ranks, strict=True)}
    shared = shared_hosts(node_map, hosts.rank_hosts)
    notes += shared_host_note(shared, request.virtual_nodes)
    answer = MeasuredIsolation(
        report=report, collective=request.collective, size_bytes=size_bytes, backend=backend,
        launcher=launcher_name, world_size=nranks,
        node_ranks=node_map, rank_hosts=hosts.rank_hosts, shared_hosts=shared,
        node_source=request.node_source,
        expected_gbps=measurer.expected_gbps, expected_source=measurer.expected_source,
        fault=fault.spec if fault else None, link_sweep=sweep, run_dir=str(run_dir),
        round_dirs=[str(runner.round_dir(r.round)) for r in runner.rounds], notes=notes,
    )  # fmt: skip
    write_output(run_dir / "isolate.json", answer.model_dump_json(indent=2) + "\n")
    return answer


def render_real(answer: MeasuredIsolation) -> str:
    """The search's table under two lines saying what was measured, and a fault warning when one was set."""
    expected = (
        f"{answer.expected_gbps:.3f} GB/s ({answer.expected_source})"
        if answer.expected_gbps
        else (answer.expected_source)
    )
    lines = [
        f"measured: {answer.collective} {human_size(answer.size_bytes)} per group, {answer.backend} on "
        f"{answer.world_size} rank(s) via {answer.launcher}, one rank per node; expected busbw {expected}",
    ]
    if answer.fault:
        lines.append(
            f"fault injected: {FAULT_ENV}={answer.fault} (a test run: this slowness was made on purpose)"
        )
    lines += [f"note: {note}" for note in answer.notes]
    lines.append(render_table(answer.report))
    lines += host_verdicts(answer.report, answer.node_ranks, answer.rank_hosts)
    lines.append(f"rounds and per-group results: {answer.run_dir}")
    return "\n".join(lines)
