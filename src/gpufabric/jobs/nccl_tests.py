"""The nccl-tests mode (``bench --engine nccl-tests``): NVIDIA's binaries instead of our engine, one per
collective, through the same launchers, read back as one ``RunResult`` saved like our engine's.

``prepare_nccl_tests`` is pure: the binaries' paths (a binary missing here is a note, since it usually
lives in the ranks' image or on the remote hosts), one program and launch plan per collective, our flags
as nccl-tests' own (refusing those it has no counterpart for). ``run_nccl_tests_job`` runs those plans;
the one step it adds is ``-J FILE.json`` where the binary's ``--help`` lists it (asking runs the binary,
which a dry run must not), and it records each plan it executed in the run directory.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.execution import Execution
from gpufabric.bench.rank_program import nccl_debug_env
from gpufabric.bench.run_setup import resolved_run_dir
from gpufabric.bench.rundir import RESULT_NAME
from gpufabric.boundary_names import NCCL_LOG_DIR
from gpufabric.engines.nccl_tests import NcclTestsSettings
from gpufabric.errors import LaunchError, RankFailure, UsageError
from gpufabric.launch.base import Launcher, LaunchPlan, RankProgram
from gpufabric.launch.dry_run import DryRun, DryRunJob
from gpufabric.launch.names import launcher_kind
from gpufabric.redact import redact_argv
from gpufabric.results.io import write_result
from gpufabric.results.model import RunResult

# What our flags mean to nccl-tests: -a 0/1/2/3 is rank 0 / avg / min / max of the ranks' times.
AVERAGE_FLAG: dict[str, str] = {"avg": "1", "min": "2", "max": "3"}
DRY_RUN_NOTE = "dry run: -J FILE.json is added when the binary's --help lists it (not probed: nothing ran)"
# Flags of the gpufabric engine that nccl-tests has no counterpart for: refused, never silently dropped.
GPUFABRIC_ONLY: dict[str, str] = {
    "precision": "--precision is the gpufabric engine's adaptive mode; nccl-tests runs a fixed -n "
    "(set -n/--iters, or use --engine gpufabric)",
    "budget": "--budget is the time limit of the gpufabric engine's adaptive mode; nccl-tests runs a fixed "
    "-n (set -n/--iters, or use --engine gpufabric)",
    "batches": "--batches is the gpufabric engine's; nccl-tests times one loop of -n iterations per size "
    "(set -n/--iters, or use --engine gpufabric)",
    "ranks": "--ranks is the gpufabric engine's; nccl-tests runs one rank per GPU (set --gpus-per-node N, "
    "and --hosts for more nodes)",
    "backend": "--backend is the gpufabric engine's; nccl-tests always runs NCCL (drop --backend, or use "
    "--engine gpufabric for other backends)",
    "timeout_stage": "--timeout-stage is the gpufabric engine's stage watchdog; nccl-tests: bound the whole "
    "job with --timeout",
}


@dataclasses.dataclass(frozen=True)
class NcclTestsJob:
    """One collective's binary, the program that runs it, and the launcher's plan for that program."""

    collective: str
    binary: Path
    settings: NcclTestsSettings
    program: RankProgram
    plan: LaunchPlan


@dataclasses.dataclass(frozen=True)
class PreparedNcclTests:
    """Every collective's nccl-tests job, decided and not started (``--dry-run`` prints ``plans``)."""

    config: BenchConfig
    launcher: Launcher
    execution: Execution
    jobs: tuple[NcclTestsJob, ...]
    gpus_per_node: int
    nccl_tests_dir: Path | None
    missing: tuple[str, ...]  # collectives whose binary is not on this machine (a real run refuses)
    notes: tuple[str, ...]

    @property
    def plans(self) -> list[LaunchPlan]:
        return [job.plan for job in self.jobs]

    def dry_run(self) -> DryRun:
        """The -J probe and the binaries not found here, then each collective's plan."""
        jobs = [DryRunJob({"collective": job.collective}, job.plan) for job in self.jobs]
        return DryRun(notes=[DRY_RUN_NOTE, *self.notes], jobs=jobs)


def refuse_gpufabric_only_flags(config: BenchConfig, execution: Execution) -> None:
    """A flag nccl-tests cannot honour is a usage error naming the flag. A flag is taken as given when
    its value differs from what leaving it out gives (``--budget 2`` is the default, and ``--batches 1``
    and ``--backend nccl`` are what nccl-tests does anyway)."""
    given = {
        "precision": config.precision is not None,
        "budget": config.budget_s != BenchConfig.model_fields["budget_s"].default,
        "batches": config.batches != 1,
        "ranks": execution.ranks is not None,
        "backend": config.backend not in (None, "nccl"),
        "timeout_stage": execution.stage_timeouts is not None,
    }
    for name, message in GPUFABRIC_ONLY.items():
        if given[name]:
            raise UsageError(message)


def nccl_tests_layout(
    on: str,
    *,
    virtual_nodes: int,
    ranks: int | None,
    gpus_per_node: int | None,
    visible_gpus: int,
    nodes: int,
) -> tuple[int, int]:
    """(nodes, GPU slots per node) of an nccl-tests job: one process per slot under MPI, ``-g 1``.

    Without virtual nodes: the hosts, and ``--gpus-per-node`` (default: this host's GPUs). With
    ``--virtual-nodes N`` (mpirun on this host): N nodes; the processes are ``--ranks R`` (mpirun's
    ``-np``, R/N per node), else N x ``--gpus-per-node G``, else this host's GPUs split over the nodes
    (at least one process per node: on one GPU, ``--virtual-nodes 2`` is 2 processes sharing it)."""
    if not virtual_nodes:
        return nodes, gpus_per_node or visible_gpus
    if launcher_kind(on).always_here:  # no MPI: one process drives every GPU
        raise UsageError(
            "--virtual-nodes with --engine nccl-tests: one process per rank needs MPI; use --on mpirun "
            "(nccl-tests built with make MPI=1)"
        )
    if ranks is None:
        return virtual_nodes, gpus_per_node or (max(visible_gpus // virtual_nodes, 1) if visible_gpus else 0)
    if ranks % virtual_nodes:
        raise UsageError(
            f"--ranks: {ranks} processes do not split evenly over {virtual_nodes} virtual nodes; use a "
            f"multiple of {virtual_nodes}"
        )
    per_node = ranks // virtual_nodes
    if gpus_per_node is not None and gpus_per_node != per_node:
        raise UsageError(
            f"--ranks {ranks} and --gpus-per-node {gpus_per_node} disagree: {virtual_nodes} virtual nodes x "
            f"{gpus_per_node} = {virtual_nodes * gpus_per_node} processes; give one of them"
        )
    if visible_gpus and per_node > max(visible_gpus // virtual_nodes, 1):
        # Within one node NCCL refuses two ranks on one GPU ("Duplicate GPU detected").
        raise UsageError(
            f"--ranks {ranks} on {virtual_nodes} virtual nodes puts {per_node} processes of one node on "
            f"{max(visible_gpus // virtual_nodes, 1)} GPU(s); NCCL refuses two ranks of a node on one GPU "
            f"(Duplicate GPU): use --virtual-nodes {ranks}"
        )
    return virtual_nodes, per_node


def nccl_tests_flags(config: BenchConfig) -> list[str]:
    """Our flags as nccl-tests' own: -d -o -r always, -G 1 for --graph, -I 1 for --per-iteration (read
    back from its -J JSON), -a for a non-default --average."""
    flags = ["-d", config.dtype, "-o", config.op, "-r", str(config.root)]
    if config.graph:  # one graph launch replaying the -n iterations; nccl-tests divides the time by both
        flags += ["-G", "1"]
    if config.per_iteration:
        flags += ["-I", "1"]
    if config.time_reduction != "avg":
        flags += ["-a", AVERAGE_FLAG[config.time_reduction]]
    return flags


def prepare_nccl_tests(
    config: BenchConfig, execution: Execution, *, nccl_tests_dir: Path | None, gpus_per_node: int
) -> PreparedNcclTests:
    """Every collective of ``config`` as an nccl-tests job through ``execution``'s launcher. Pure."""
    from gpufabric.engines.nccl_tests import nccl_tests_program, planned_binary

    refuse_gpufabric_only_flags(config, execution)
    if gpus_per_node < 1:
        raise UsageError(
            "--engine nccl-tests: no GPU here; nccl-tests needs CUDA GPUs (pass --gpus-per-node N with "
            "--on mpirun/slurm, or use --engine gpufabric for CPU ranks)"
        )
    config.sizes()  # -b/-e/-f checked here as for our engine, before any binary is looked for
    config = config.model_copy(update={"run_dir": resolved_run_dir(config.run_dir, config.label)})
    launcher = execution.job_launcher()
    notes: list[str] = []
    missing: list[str] = []
    binaries: dict[str, Path] = {}
    for collective in config.collectives:
        binaries[collective], note = planned_binary(collective, nccl_tests_dir)
        if note:
            notes.append(note)
            missing.append(collective)
    seed = NcclTestsSettings()
    env = {**execution.env, **nccl_debug_env(config.run_dir, execution.base_environ(), execution.env)}
    jobs: list[NcclTestsJob] = []
    for collective, binary in binaries.items():
        settings = NcclTestsSettings(
            collective=collective, min_bytes=str(config.min_bytes), max_bytes=str(config.max_bytes),
            step_factor=max(config.step_factor, 2), check_iters=seed.check_iters if config.check else 0,
            warmup_iters=config.warmup, iters=config.iters, extra_args=nccl_tests_flags(config),
        )  # fmt: skip
        program = nccl_tests_program(
            binary, settings, launcher_name=launcher.name, workdir=config.run_dir, nodes=execution.nodes,
            gpus_per_node=gpus_per_node, env=env,
        )  # fmt: skip
        jobs.append(NcclTestsJob(collective, binary, settings, program, launcher.render(program)))
    return PreparedNcclTests(config=config, launcher=launcher, execution=execution, jobs=tuple(jobs),
                             gpus_per_node=gpus_per_node, nccl_tests_dir=nccl_tests_dir,
                             missing=tuple(missing), notes=tuple(notes))  # fmt: skip


def with_json_output(job: NcclTestsJob, prepared: PreparedNcclTests) -> NcclTestsJob:
    """The job with ``-J FILE.json`` when its binary's ``--help`` lists it (this runs ``--help``); the
    program is otherwise the prepared one (same binary, flags, environment, layout)."""
    from gpufabric.engines.nccl_tests import binary_supports_json, nccl_tests_program

    if not binary_supports_json(job.binary):
        return job
    program = nccl_tests_program(
        job.binary, job.settings, launcher_name=prepared.launcher.name, workdir=job.program.workdir,
        nodes=prepared.execution.nodes, gpus_per_node=prepared.gpus_per_node, env=job.program.env,
        json_output=True,
    )  # fmt: skip
    return dataclasses.replace(job, program=program, plan=prepared.launcher.render(program))


def run_nccl_tests_job(prepared: PreparedNcclTests) -> RunResult:
    """Run every prepared collective, read back as one run.

    ``result.json`` goes into the run directory as with our engine (and to ``--out``), also when a run
    fails or prints a table that does not match its command: then marked incomplete, with the reason,
    before the error is raised, so ``doctor`` and ``report`` can read what there is."""
    from gpufabric.engines.nccl_tests import locate_binary, run_nccl_tests

    config, execution = prepared.config, prepared.execution
    for collective in prepared.missing:  # the dry run notes it; a real run needs it here
        locate_binary(collective, prepared.nccl_tests_dir)
    results: list[RunResult] = []
    for planned in prepared.jobs:
        job = with_json_output(planned, prepared)
        config.run_dir.mkdir(parents=True, exist_ok=True)
        record = config.run_dir / f"plan-{job.collective}.json"
        record.write_text(job.plan.recorded_json(), encoding="utf-8")
        run = run_nccl_tests(prepared.launcher, job.program, on_output=execution.on_output,
                             timeout_s=execution.timeout_s, plan=job.plan)  # fmt: skip
        if run.result is not None:
            results.append(run.result)
        error: LaunchError | None = None
        if not run.outcome.ok or run.result is None:
            failed = next((e for e in run.outcome.exits if e.returncode not in (0, None)), None)
            message = f"{job.binary.name}: {run.outcome.failure or 'the run failed'} (log: {run.log_path})"
            error = LaunchError(message)
            if failed is not None:
                error = RankFailure(message, rank=failed.rank, host=failed.host, last_lines=failed.last_lines)
        elif run.mismatch is not None:
            error = LaunchError(f"{run.mismatch} (log: {run.log_path})")
        if error is not None:
            if results:
                _save(merged_result(results, prepared, failure=str(error)), config.run_dir, execution.out)
            raise error
    merged = merged_result(results, prepared, failure=None)
    _save(merged, config.run_dir, execution.out)
    return merged


def merged_result(results: list[RunResult], prepared: PreparedNcclTests, failure: str | None) -> RunResult:
    """One run of every collective's result, with the command, launcher and NCCL attestation."""
    config = prepared.config
    merged = results[0].model_copy(deep=True)
    merged.label = config.label
    merged.series = [s for r in results for s in r.series]
    merged.metadata.launcher = prepared.launcher.name
    merged.metadata.command = redact_argv(config.command)  # assignment skips the model's validator
    logs = sorted(str(p) for p in (config.run_dir / NCCL_LOG_DIR).glob("*.log") if p.stat().st_size > 0)
    merged.metadata.log_files = logs
    if logs and prepared.execution.attest is not None:
        merged.attestation = prepared.execution.attest([Path(p) for p in logs])
    if failure is not None:
        merged.complete = False
        merged.failure = failure
    return merged


def _save(result: RunResult, run_dir: Path, out: Path | None) -> None:
    write_result(result, run_dir / RESULT_NAME)
    if out is not None:
        write_result(result, out)
