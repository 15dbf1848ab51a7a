"""``gpufabric bench --engine nccl-tests``: our flags as nccl-tests' (refusing those it has no counterpart
for), its command lines per collective, the dry-run text, and the run: every collective's binary through
the launcher, read back, checked against its command, and saved as ``result.json`` in the run directory
like our engine's. The work is in ``gpufabric.bench.nccl_tests``; nothing heavy is imported at module level.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from gpufabric.bench.config import BenchConfig
from gpufabric.cli.bench_modes import dry_run_text, resolved_run_dir
from gpufabric.errors import LaunchError, RankFailure, UsageError
from gpufabric.launch.base import Launcher, OutputSink, RankProgram
from gpufabric.results.model import RunResult

# What our flags mean to nccl-tests: -a 0/1/2/3 is rank 0 / avg / min / max of the ranks' times.
AVERAGE_FLAG: dict[str, str] = {"avg": "1", "min": "2", "max": "3"}
# Flags of the gpufabric engine that nccl-tests has no counterpart for: refused, never silently dropped.
GPUFABRIC_ONLY: dict[str, str] = {
    "precision": "--precision is the gpufabric engine's adaptive mode; nccl-tests runs a fixed -n "
    "(set -n/--iters, or use --engine gpufabric)",
    "budget": "--budget is the time limit of the gpufabric engine's adaptive mode; nccl-tests runs a fixed "
    "-n (set -n/--iters, or use --engine gpufabric)",
    "batches": "--batches is the gpufabric engine's; nccl-tests times one loop of -n iterations per size "
    "(set -n/--iters, or use --engine gpufabric)",
    "ranks": "--ranks is the gpufabric engine's; nccl-tests runs one rank per GPU (set --gpus-per-node N, "
    "and --hosts for more nodes; with --on mpirun --virtual-nodes N, --ranks R is mpirun's -np)",
    "backend": "--backend is the gpufabric engine's; nccl-tests always runs NCCL (drop --backend, or use "
    "--engine gpufabric for other backends)",
    "timeout_stage": "--timeout-stage is the gpufabric engine's stage watchdog; nccl-tests: bound the whole "
    "job with --timeout",
}


def refuse_gpufabric_only_flags(config: BenchConfig, *, ranks: int | None, timeout_stage: str | None) -> None:
    """``--engine nccl-tests``: a flag it cannot honour is a usage error naming the flag. A flag is taken
    as given when its value differs from what leaving it out gives (``--budget 2`` is the default, and
    ``--batches 1`` and ``--backend nccl`` are what nccl-tests does anyway)."""
    given = {
        "precision": config.precision is not None,
        "budget": config.budget_s != BenchConfig.model_fields["budget_s"].default,
        "batches": config.batches != 1,
        "ranks": ranks is not None,
        "backend": config.backend not in (None, "nccl"),
        "timeout_stage": timeout_stage is not None,
    }
    for name, message in GPUFABRIC_ONLY.items():
        if given[name]:
            raise UsageError(message)


def nccl_tests_flags(config: BenchConfig) -> list[str]:
    """Our flags as nccl-tests' own: -d -o -r always, -G 1 for --graph, -a for a non-default --average."""
    flags = ["-d", config.dtype, "-o", config.op, "-r", str(config.root)]
    if config.graph:  # one graph launch replaying the -n iterations; nccl-tests divides the time by both
        flags += ["-G", "1"]
    if config.time_reduction != "avg":
        flags += ["-a", AVERAGE_FLAG[config.time_reduction]]
    return flags


def nccl_tests_programs(
    config: BenchConfig,
    *,
    launcher: Launcher,
    nccl_tests_dir: Path | None,
    nodes: int,
    gpus_per_node: int,
    env: Mapping[str, str],
    probe_json: bool,
    notes: list[str] | None = None,
) -> list[tuple[Path, RankProgram]]:
    """(binary, program) per collective of ``config`` (its ``run_dir`` already resolved). ``probe_json``
    asks each binary's ``--help`` whether it takes ``-J`` (that runs it: a dry run passes False, starts
    nothing, and passes ``notes``: a binary missing here is then noted there instead of refused)."""
    from gpufabric.bench.nccl_tests import (
        NcclTestsSettings,
        binary_supports_json,
        locate_binary,
        nccl_tests_program,
        planned_binary,
    )
    from gpufabric.bench.runner import nccl_debug_env

    if gpus_per_node < 1:
        raise UsageError(
            "--engine nccl-tests: no GPU here; nccl-tests needs CUDA GPUs (pass --gpus-per-node N with "
            "--on mpirun/slurm, or use --engine gpufabric for CPU ranks)"
        )
    config.sizes()  # -b/-e/-f checked here as for our engine, before any binary is looked for
    binaries: dict[str, Path] = {}
    for collective in config.collectives:  # all found, or one line (a dry run notes the missing ones)
        if notes is None:
            binaries[collective] = locate_binary(collective, nccl_tests_dir)
            continue
        binaries[collective], note = planned_binary(collective, nccl_tests_dir)
        notes.extend([note] if note else [])
    run_dir = config.run_dir.resolve()
    seed = NcclTestsSettings()
    programs: list[tuple[Path, RankProgram]] = []
    for collective, binary in binaries.items():
        settings = NcclTestsSettings(
            collective=collective,
            min_bytes=str(config.min_bytes),
            max_bytes=str(config.max_bytes),
            step_factor=max(config.step_factor, 2),
            check_iters=seed.check_iters if config.check else 0,
            warmup_iters=config.warmup,
            iters=config.iters,
            extra_args=nccl_tests_flags(config),
        )
        program = nccl_tests_program(
            binary, settings, launcher_name=launcher.name, workdir=run_dir, nodes=nodes,
            gpus_per_node=gpus_per_node, env={**env, **nccl_debug_env(run_dir, {}, env)},
            json_output=binary_supports_json(binary) if probe_json else False,
        )  # fmt: skip
        programs.append((binary, program))
    return programs


def nccl_tests_dry_run(
    config: BenchConfig,
    *,
    launcher: Launcher,
    nccl_tests_dir: Path | None,
    nodes: int,
    gpus_per_node: int,
    env: Mapping[str, str],
) -> str:
    """The launch plan of every collective's nccl-tests run, as text; no binary is started."""
    config = config.model_copy(update={"run_dir": resolved_run_dir(config)})
    notes: list[str] = []
    programs = nccl_tests_programs(config, launcher=launcher, nccl_tests_dir=nccl_tests_dir, nodes=nodes,
                                   gpus_per_node=gpus_per_node, env=env, probe_json=False,
                                   notes=notes)  # fmt: skip
    header = ["# dry run: -J FILE.json is added when the binary's --help lists it (not probed: nothing ran)"]
    header += [f"# note: {note}" for note in notes]
    return "\n".join(header) + "\n" + "\n".join(dry_run_text(launcher, program) for _, program in programs)


def run_nccl_tests_engine(
    config: BenchConfig,
    *,
    launcher: Launcher,
    nccl_tests_dir: Path | None,
    nodes: int,
    gpus_per_node: int,
    env: Mapping[str, str],
    timeout_s: float | None,
    on_output: OutputSink | None,
    out: Path | None = None,
) -> RunResult:
    """Every collective of ``config`` as an nccl-tests binary through ``launcher``, read back as one run.

    ``result.json`` goes into the run directory as with our engine (and to ``out``), also when a run
    fails or prints a table that does not match its command: then marked incomplete, with the reason,
    before the error is raised, so ``doctor`` and ``report`` can read what there is."""
    from gpufabric.bench.nccl_tests import run_nccl_tests

    config = config.model_copy(update={"run_dir": resolved_run_dir(config)})
    programs = nccl_tests_programs(config, launcher=launcher, nccl_tests_dir=nccl_tests_dir, nodes=nodes,
                                   gpus_per_node=gpus_per_node, env=env, probe_json=True)  # fmt: skip
    results: list[RunResult] = []
    for binary, program in programs:
        run = run_nccl_tests(launcher, program, on_output=on_output, timeout_s=timeout_s)
        if run.result is not None:
            results.append(run.result)
        error: LaunchError | None = None
        if not run.outcome.ok or run.result is None:
            failed = next((e for e in run.outcome.exits if e.returncode not in (0, None)), None)
            message = f"{binary.name}: {run.outcome.failure or 'the run failed'} (log: {run.log_path})"
            error = LaunchError(message)
            if failed is not None:
                error = RankFailure(message, rank=failed.rank, host=failed.host, last_lines=failed.last_lines)
        elif run.mismatch is not None:
            error = LaunchError(f"{run.mismatch} (log: {run.log_path})")
        if error is not None:
            if results:
                _save(_merged(results, config, launcher, failure=str(error)), config.run_dir, out)
            raise error
    merged = _merged(results, config, launcher, failure=None)
    _save(merged, config.run_dir, out)
    return merged


def _merged(
    results: list[RunResult], config: BenchConfig, launcher: Launcher, failure: str | None
) -> RunResult:
    """One run of every collective's result, with the command, launcher and NCCL attestation."""
    from gpufabric.analysis.nccl_log import attest_files

    merged = results[0].model_copy(deep=True)
    merged.label = config.label
    merged.series = [s for r in results for s in r.series]
    merged.metadata.launcher = launcher.name
    merged.metadata.command = ["gpufabric", *_redacted_args(sys.argv[1:])]
    logs = sorted(str(p) for p in (config.run_dir / "nccl").glob("*.log") if p.stat().st_size > 0)
    merged.metadata.log_files = logs
    if logs:
        merged.attestation = attest_files([Path(p) for p in logs])
    if failure is not None:
        merged.complete = False
        merged.failure = failure
    return merged


def _save(result: RunResult, run_dir: Path, out: Path | None) -> None:
    from gpufabric.bench.rundir import RESULT_NAME
    from gpufabric.results.io import write_result

    write_result(result, run_dir / RESULT_NAME)
    if out is not None:
        write_result(result, out)


def _redacted_args(args: list[str]) -> list[str]:
    """``--env NAME=VALUE`` values through ``redact_env`` (secret-looking names lose their values)."""
    from gpufabric.redact import redact_env

    out: list[str] = []
    for index, arg in enumerate(args):
        if index > 0 and args[index - 1] == "--env" and "=" in arg:
            name, _, value = arg.partition("=")
            arg = f"{name}={redact_env({name: value})[name]}"
        out.append(arg)
    return out
