"""The parts of ``gpufabric bench`` beyond one local sweep: where it runs (``--on``, ``--hosts``), the
nccl-tests engine, ``--dry-run``. Parse and wire only; the work is in ``gpufabric.bench`` and
``gpufabric.launch``. Nothing heavy is imported at module level (the CLI must start without torch).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from gpufabric.bench.config import BenchConfig
from gpufabric.errors import LaunchError, RankFailure, UsageError
from gpufabric.launch.base import Launcher, OutputSink, RankProgram
from gpufabric.results.model import RunResult

ENGINES: tuple[str, ...] = ("gpufabric", "nccl-tests")
RUNNING_LAUNCHERS: tuple[str, ...] = ("local", "mpirun", "slurm")


def host_count(hosts: list[str], hostfile: Path | None) -> int:
    """Nodes named by ``--hosts``/``--hostfile`` (1 when none: every rank on this host)."""
    from gpufabric.launch.hosts import parse_hostfile, parse_hosts

    if hosts and hostfile:
        raise UsageError("--hosts and --hostfile both given; use one of them")
    if hostfile is not None:
        return len(parse_hostfile(hostfile))
    return len(parse_hosts(hosts)) if hosts else 1


def launcher_factory(
    on: str,
    *,
    hosts: list[str],
    hostfile: Path | None,
    mpirun: str,
    dry_run: bool,
    image: str | None = None,
) -> Callable[[], Launcher]:
    """A fresh launcher per job (A/B rounds and tune candidates are separate jobs)."""
    from gpufabric.launch.local import free_port
    from gpufabric.launch.registry import LauncherSettings, check_launcher_name, make_launcher

    name = check_launcher_name(on)
    if (hosts or hostfile) and name != "mpirun":
        raise UsageError(f"--hosts/--hostfile: only --on mpirun places ranks on hosts, not --on {name}")
    if name not in RUNNING_LAUNCHERS and not dry_run:
        raise UsageError(
            f"--on {name}: bench runs through {', '.join(RUNNING_LAUNCHERS)}; add --dry-run to print the "
            f"{name} plan, or run it with `gpufabric launch TASK --on {name}`"
        )

    def make() -> Launcher:
        settings = LauncherSettings()
        settings.mpirun.hosts = list(hosts)
        settings.mpirun.hostfile = hostfile
        settings.mpirun.mpirun = mpirun
        settings.kubernetes.image = image
        if not (hosts or hostfile):
            # Ranks on this host: a free port, so concurrent jobs here never share a rendezvous.
            settings.mpirun.master_port = free_port()
            settings.slurm.master_port = free_port()
        return make_launcher(name, settings)

    return make


def rank_program(config: BenchConfig, nranks: int, on_gpu: bool, env: Mapping[str, str]) -> RankProgram:
    """The program ``run_bench`` would hand its launcher (for ``--dry-run``; nothing is written)."""
    from gpufabric.bench.runner import default_run_dir, nccl_debug_env

    run_dir = config.run_dir
    run_dir = (default_run_dir(config.label, root=run_dir) if run_dir == Path("runs") else run_dir).resolve()
    argv = [sys.executable, "-m", "gpufabric.bench.rank", "--config", str(run_dir / "config.json")]
    full_env = {**env, **nccl_debug_env(run_dir, {}, env)}
    return RankProgram(argv=argv, env=full_env, nranks=nranks, gpus_per_node=nranks if on_gpu else 0,
                       workdir=run_dir, label=config.label)  # fmt: skip


def dry_run_text(launcher: Launcher, program: RankProgram) -> str:
    from gpufabric.cli.launch import render_plan_text

    if launcher.name == "kubernetes":  # one rank per pod: a pod is a node with one GPU (or none)
        gpus = 1 if program.gpus_per_node else 0
        program = program.model_copy(update={"nodes": program.nranks, "gpus_per_node": gpus})
    return render_plan_text(launcher.render(program))


def nccl_tests_programs(
    config: BenchConfig,
    *,
    launcher: Launcher,
    nccl_tests_dir: Path | None,
    nodes: int,
    gpus_per_node: int,
    env: Mapping[str, str],
    probe_json: bool,
) -> list[tuple[Path, RankProgram]]:
    """(binary, program) per collective of ``config``. ``probe_json`` asks each binary's ``--help``
    whether it takes ``-J`` (that runs it: a dry run passes False and starts nothing)."""
    from gpufabric.bench.nccl_tests import (
        NcclTestsSettings,
        binary_supports_json,
        locate_binary,
        nccl_tests_program,
    )
    from gpufabric.bench.runner import nccl_debug_env

    if gpus_per_node < 1:
        raise UsageError(
            "--engine nccl-tests: no GPU here; nccl-tests needs CUDA GPUs (pass --gpus-per-node N with "
            "--on mpirun/slurm, or use --engine gpufabric for CPU ranks)"
        )
    config.sizes()  # -b/-e/-f checked here as for our engine, before any binary is looked for
    binaries = {c: locate_binary(c, nccl_tests_dir) for c in config.collectives}  # all found, or one line
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
            extra_args=["-d", config.dtype, "-o", config.op, "-r", str(config.root)],
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
    programs = nccl_tests_programs(config, launcher=launcher, nccl_tests_dir=nccl_tests_dir, nodes=nodes,
                                   gpus_per_node=gpus_per_node, env=env, probe_json=False)  # fmt: skip
    note = "# dry run: -J FILE.json is added when the binary's --help lists it (not probed: nothing ran)\n"
    return note + "\n".join(dry_run_text(launcher, program) for _, program in programs)


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
) -> RunResult:
    """Every collective of ``config`` as an nccl-tests binary through ``launcher``, read back as one run."""
    from gpufabric.analysis.nccl_log import attest_files
    from gpufabric.bench.nccl_tests import run_nccl_tests

    programs = nccl_tests_programs(config, launcher=launcher, nccl_tests_dir=nccl_tests_dir, nodes=nodes,
                                   gpus_per_node=gpus_per_node, env=env, probe_json=True)  # fmt: skip
    run_dir = config.run_dir.resolve()
    results: list[RunResult] = []
    for binary, program in programs:
        run = run_nccl_tests(launcher, program, on_output=on_output, timeout_s=timeout_s)
        if not run.outcome.ok or run.result is None:
            failed = next((e for e in run.outcome.exits if e.returncode not in (0, None)), None)
            message = f"{binary.name}: {run.outcome.failure or 'the run failed'} (log: {run.log_path})"
            if failed is not None:
                raise RankFailure(message, rank=failed.rank, host=failed.host, last_lines=failed.last_lines)
            raise LaunchError(message)
        results.append(run.result)
    merged = results[0].model_copy(deep=True)
    merged.label = config.label
    merged.series = [s for r in results for s in r.series]
    merged.metadata.launcher = launcher.name
    merged.metadata.command = ["gpufabric", *_redacted_args(sys.argv[1:])]
    logs = sorted(str(p) for p in (run_dir / "nccl").glob("*.log") if p.stat().st_size > 0)
    merged.metadata.log_files = logs
    if logs:
        merged.attestation = attest_files([Path(p) for p in logs])
    return merged


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
