"""One sweep of the engine through any launcher, in two steps: ``prepare_sweep`` (pure: the checks, the run
directory's path, the rank program, the launch plan) and ``run_sweep`` (write the run directory, execute
that plan, read rank 0's result). ``bench --dry-run`` prints the first; the real run executes the same
object and records its plan as ``plan.json`` in the run directory. ``run_bench`` is both in one call;
``gpufabric.jobs`` (bench, ``--ab``, tune) and the isolate measurer run through these.

``run_sweep`` follows rank 0's progress lines and returns the ``RunResult`` rank 0 wrote. On failure it
says which rank failed and why, using the one-line error file the rank left behind. Every stage is
bounded (``gpufabric.bench.stages``): the ranks' stage reports feed a ``StageWatchdog`` that
``run_commands`` polls, so a hang ends as ``BenchTimeout`` naming the stage, collective, size and the
ranks that did not arrive. Whatever ends a run early, ``result.json`` is still written, marked
incomplete, with every size rank 0 streamed before the end (even when rank 0 itself died).

The run directory is made ready by ``bench.run_setup`` (shared with training and isolate); the ranks'
lines are read as they come by ``bench.rank_output_reader``.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping
from pathlib import Path

from gpufabric.bench.config import BenchConfig, resolve_engine
from gpufabric.bench.execution import Attester, Execution, ProgressSink
from gpufabric.bench.failure import diagnose_failure
from gpufabric.bench.fault import Fault
from gpufabric.bench.rank_output_reader import RankOutputReader
from gpufabric.bench.rank_program import nccl_debug_env, rank_module, rank_program
from gpufabric.bench.run_end import keep_partial, write_out, wrong_data, wrong_data_line
from gpufabric.bench.run_setup import record_plan, resolve_run_config, write_run_config
from gpufabric.bench.rundir import CONFIG_NAME, RESULT_NAME, STREAM_NAME, check_output_file
from gpufabric.bench.stages import StageTimeouts, StageWatchdog
from gpufabric.bench.world import checked_world
from gpufabric.errors import GpufabricError, OutputError
from gpufabric.launch.base import Launcher, LaunchPlan, OutputSink, RankProgram
from gpufabric.launch.dry_run import DryRun, DryRunJob
from gpufabric.launch.names import launcher_kind
from gpufabric.launch.processes import watching
from gpufabric.launch.signals import Interrupted
from gpufabric.launch.standby import held
from gpufabric.outputs import FULL_DISK_ERRNOS, free_space, full_disk_error
from gpufabric.results.io import read_result, write_result
from gpufabric.results.model import RunResult
from gpufabric.results.phases import PARENT_BESIDE, RunPhases, now, process_start

__all__ = [
    "Attester", "Execution", "PreparedSweep", "ProgressSink", "nccl_debug_env", "prepare_sweep",
    "rank_module", "run_bench", "run_sweep",
]  # fmt: skip


@dataclasses.dataclass(frozen=True)
class PreparedSweep:
    """One sweep, decided and not started: what ``bench --dry-run`` prints and what ``run_sweep`` runs.

    ``config`` is the one every rank reads (at ``config_path``, written only by ``run_sweep``);
    ``plan`` is the launcher's rendering of ``program``, executed as it is."""

    config: BenchConfig
    config_path: Path
    program: RankProgram
    plan: LaunchPlan
    launcher: Launcher
    execution: Execution
    nranks: int
    fault: Fault | None

    def dry_run(self) -> DryRun:
        return DryRun(notes=[], jobs=[DryRunJob({}, self.plan)])


def prepare_sweep(config: BenchConfig, execution: Execution) -> PreparedSweep:
    """Every check a run makes before it starts, the run directory's path, the rank program and the
    launch plan. Starts nothing, writes nothing (the launcher's ``render`` is pure)."""
    base = execution.base_environ()
    extra = dict(execution.env)
    if execution.out is not None:
        check_output_file(execution.out)  # before the sweep, not after it
    launcher = execution.job_launcher()
    ranks_here = execution.ranks_here
    if ranks_here is None:
        ranks_here = launcher_kind(launcher.name).always_here
    world = checked_world(config, ranks=execution.ranks, environ={**base, **extra}, ranks_here=ranks_here)
    config = config.model_copy(update={"engine": resolve_engine(config, world.backend)})
    config, config_path = resolve_run_config(config, backend=world.backend, config_name=CONFIG_NAME)
    program = rank_program(config, config_path, nranks=world.ranks, on_gpu=world.on_gpu, environ=base,
                           env=extra, launcher=launcher.name)  # fmt: skip
    plan = launcher.render(program)
    return PreparedSweep(config=config, config_path=config_path, program=program, plan=plan,
                         launcher=launcher, execution=execution, nranks=world.ranks,
                         fault=world.fault)  # fmt: skip


def run_sweep(prepared: PreparedSweep) -> RunResult:
    """Run ``prepared`` (its plan, unchanged) and return rank 0's ``RunResult``.

    Raises ``BenchTimeout`` (a stage or the job ran out of time), ``RankFailure`` (a rank died or
    failed), ``CheckFailed`` (``--check`` found wrong data; the result is kept) or ``UsageError``."""
    execution, config, nranks, fault = prepared.execution, prepared.config, prepared.nranks, prepared.fault
    out, attest, on_output, on_progress = (
        execution.out,
        execution.attest,
        execution.on_output,
        execution.on_progress,
    )
    stages = execution.stage_timeouts or StageTimeouts()
    timeout_s = execution.timeout_s
    if stages.total is not None:
        timeout_s = stages.total if timeout_s is None else min(timeout_s, stages.total)
    write_run_config(config, prepared.config_path)
    run_dir = config.run_dir
    record_plan(prepared.plan, run_dir)
    watchdog = StageWatchdog(nranks, stages)
    reader = RankOutputReader(watchdog, len(config.collectives) * len(config.sizes()), on_output, on_progress)
    watchdog.started = watchdog.clock()  # the launch stage starts now, not when the config was written
    spawn = now()
    with watching(watchdog.check):
        try:
            outcome = prepared.launcher.execute(prepared.plan, on_output=reader, timeout_s=timeout_s)
        except Interrupted as interrupted:
            # The ranks are already stopped; keep what they measured, then let the CLI say so.
            with contextlib.suppress(GpufabricError, OSError):
                keep_partial(config, run_dir, f"interrupted by {interrupted.signal_name}; every rank was "
                             "stopped", out=out, world_size=nranks, fault=fault)  # fmt: skip
            raise
    reader.keep_diagnostics(run_dir)  # before the outcome is read: a failed P2P pair may be why
    if not outcome.ok:
        error = diagnose_failure(run_dir, outcome, timeout_s, watchdog)
        try:
            keep_partial(config, run_dir, str(error), out=out, world_size=nranks, fault=fault)
        except OSError as exc:
            if exc.errno not in FULL_DISK_ERRNOS:
                raise
            # The stream keeps every finished size whole (results.io.StreamWriter); show reads it.
            kept = str(error).replace(f"kept in {run_dir / RESULT_NAME}", f"kept in {run_dir / STREAM_NAME}")
            raise OutputError(
                f"{kept}; {RESULT_NAME} not written ({exc.strerror or exc}, {free_space(run_dir)} there)"
            ) from None
        raise error
    ranks_exited = now()
    result = read_result(run_dir / RESULT_NAME)
    result.metadata.phases = _command_phases(result.metadata.phases or RunPhases(), spawn, ranks_exited,
                                             reader.end_phases)  # fmt: skip
    if attest is not None and result.metadata.log_files:
        result.attestation = attest([Path(p) for p in result.metadata.log_files])
    check_failure = wrong_data(result, run_dir / RESULT_NAME)
    if check_failure is not None:
        # Every size ran (complete stays true), but the numbers are not to be trusted: say so in the
        # document, so compare, report and doctor see it and not only this command's exit code.
        result.failure = wrong_data_line(result)
    if execution.finish is not None:
        result = execution.finish(result)
    # One write after the ranks exit (the phases, the attestation, the caller's step): each write is
    # an fsync the command waits for before it can print its last lines (issue 36).
    try:
        write_result(result, run_dir / RESULT_NAME)
    except OSError as exc:
        if exc.errno not in FULL_DISK_ERRNOS:
            raise
        raise full_disk_error(run_dir / RESULT_NAME, exc, fix="free space there; the run's rows are "
                              f"in {STREAM_NAME}") from None  # fmt: skip
    if out is not None:
        write_out(result, out, kept=run_dir / RESULT_NAME)
    if check_failure is not None:
        raise check_failure
    return result


def _command_phases(
    phases: RunPhases, spawn: float, ranks_exited: float, end_phases: Mapping[str, float]
) -> RunPhases:
    """Rank 0's ``phases`` with this process's own joined to them, in the returned result and the file
    alike; when rank 0 was a rank started before its plan (``launch.standby``), when that was, and this
    process's start-up beside it (``PARENT_BESIDE``)."""
    command_start = process_start()
    standby = held()
    early = standby.started_at if standby is not None and 0 in standby.handed_over else None
    beside = dict(phases.background_s)
    if early is not None and command_start is not None:
        beside[PARENT_BESIDE] = round(spawn - command_start, 3)
    # Rank 0's start comes from /proc, in clock ticks (10 ms): one read as before its spawn began then.
    started = early if early is not None else spawn
    rank_start = None if phases.rank_start is None else max(phases.rank_start, started)
    return phases.model_copy(
        update={
            "command_start": command_start,
            "early_spawn": early,
            "spawn": spawn,
            "rank_start": rank_start,
            "ranks_exited": ranks_exited,
            "background_s": beside,
            **end_phases,
        }
    )


def run_bench(
    config: BenchConfig,
    *,
    launcher: Launcher | None = None,
    ranks: int | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    on_output: OutputSink | None = None,
    on_progress: ProgressSink | None = None,
    attest: Attester | None = None,
    out: Path | None = None,
    environ: Mapping[str, str] | None = None,
    stage_timeouts: StageTimeouts | None = None,
    ranks_here: bool | None = None,
) -> RunResult:
    """Run the benchmark described by ``config`` and return rank 0's ``RunResult``: ``prepare_sweep``
    then ``run_sweep``, with the ``Execution`` spelled as keywords (the library's one-call entry point).

    ``launcher`` runs this one job (local when None); ``ranks_here`` defaults to "the launcher is the
    local one"; ``timeout_s`` bounds the whole job, ``stage_timeouts`` each stage."""
    execution = Execution(
        launcher=None if launcher is None else (lambda: launcher),
        ranks=ranks, env=dict(env or {}), environ=environ, timeout_s=timeout_s,
        stage_timeouts=stage_timeouts, ranks_here=ranks_here, out=out, on_output=on_output,
        on_progress=on_progress, attest=attest,
    )  # fmt: skip
    return run_sweep(prepare_sweep(config, execution))
