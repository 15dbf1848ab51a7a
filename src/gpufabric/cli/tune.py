"""``gpufabric tune``: search socket-transport settings on this host's (or the hosts') socket path and print
the best environment to export with its gain over NCCL's defaults. Parse, call ``gpufabric.bench.tune``
(measuring) and ``gpufabric.analysis.tune`` (judging), render. No torch is imported here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from gpufabric.errors import UsageError
from gpufabric.outputs import write_output

if TYPE_CHECKING:
    from gpufabric.bench.config import BenchConfig

PATHS: tuple[str, ...] = ("socket",)
FORMATS: tuple[str, ...] = ("table", "markdown", "json")


def tune(
    path: str = typer.Option("socket", "--path", help="transport to tune: socket (one host: P2P/SHM off)"),
    size: str | None = typer.Option(None, "--size", help="size to tune for (default: -e, else 256M)"),
    min_bytes: str | None = typer.Option(None, "-b", "--min-bytes", help="smallest size measured"),
    max_bytes: str | None = typer.Option(None, "-e", "--max-bytes", help="largest size measured"),
    step_factor: int = typer.Option(4, "-f", "--step-factor", help="size multiplier per step"),
    collective: str = typer.Option("all_reduce", "-c", "--collective", help="collective to tune"),
    budget: int = typer.Option(16, "--budget", help="jobs to spend (each candidate run is one job)"),
    repeats: int = typer.Option(3, "--repeats", min=1, help="stop once the leader has this many jobs"),
    iters: int = typer.Option(5, "-n", "--iters", min=1, help="iterations per timed batch"),
    warmup: int = typer.Option(2, "-w", "--warmup", min=0, help="warm-up iterations per size"),
    batches: int = typer.Option(4, "--batches", min=2, help="timed batches per size and job"),
    ranks: int | None = typer.Option(None, "--ranks", help="ranks (default: every GPU of this host)"),
    instance_type: str | None = typer.Option(None, "--instance-type", help="shape (selects the off switch)"),
    on: str = typer.Option("local", "--on", help="launcher: local, mpirun, slurm"),
    hosts: list[str] = typer.Option([], "--hosts", help="mpirun: HOST[:SLOTS], comma-separated or repeated"),
    hostfile: Path | None = typer.Option(None, "--hostfile", help="mpirun: OpenMPI hostfile"),
    env: list[str] = typer.Option(
        [], "--env", help="NAME=VALUE passed to every rank, or NAME: its value here (repeatable)"
    ),
    timeout: float | None = typer.Option(None, "--timeout", min=1, help="stop each job after seconds"),
    run_dir: Path | None = typer.Option(None, "--run-dir", help="default: runs/<timestamp>-tune/"),
    out: Path | None = typer.Option(None, "--out", "-o", help="also write the JSON report here"),
    fmt: str = typer.Option("table", "--format", help="table, markdown or json"),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="show the ranks' output on stderr"),
    virtual_nodes: int = typer.Option(
        0, "--virtual-nodes", min=0, help="local: split the ranks into N NCCL nodes (NCCL_HOSTID each)"
    ),
    mps: bool = typer.Option(False, "--mps", help="local, --virtual-nodes: run an MPS daemon per job"),
) -> None:
    """Find the NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD (and channel count) that moves the most data."""
    from gpufabric.analysis.nccl_log import attest_files
    from gpufabric.analysis.tune import judge_tune, tune_markdown
    from gpufabric.bench import BenchConfig
    from gpufabric.bench.tune import run_tune
    from gpufabric.bench.world import visible_gpu_count
    from gpufabric.cli._common import parse_env_pairs
    from gpufabric.cli.bench_modes import ensure_engine, host_count, launcher_factory
    from gpufabric.planner import ab_profiles
    from gpufabric.units import parse_size

    if path not in PATHS:
        raise UsageError(f"--path: unknown path {path!r}; choose from {', '.join(PATHS)}")
    if fmt not in FORMATS:
        raise UsageError(f"--format: unknown value {fmt!r}; choose from {', '.join(FORMATS)}")
    extra = parse_env_pairs(env)
    nodes = host_count(hosts, hostfile)
    factory = launcher_factory(on, hosts=hosts, hostfile=hostfile, mpirun="mpirun", dry_run=False,
                               virtual_nodes=virtual_nodes, mps=mps)  # fmt: skip
    top = parse_size(max_bytes or size or "256M", flag="-e/--max-bytes")
    target = parse_size(size, flag="--size") if size else top
    low = parse_size(min_bytes, flag="-b/--min-bytes") if min_bytes else target
    if not low <= target <= top:
        raise UsageError(f"--size: {target} B lies outside -b {low} B .. -e {top} B; widen -b/-e")
    config = BenchConfig(
        collectives=[collective], min_bytes=low, max_bytes=top, step_factor=step_factor, iters=iters,
        warmup=warmup, batches=batches, label="tune", run_dir=run_dir or Path("runs"),
        command=["gpufabric", *sys.argv[1:]], virtual_nodes=virtual_nodes, mps=mps,
    )  # fmt: skip
    if target not in config.sizes():
        raise UsageError(f"--size: {target} B is not on the sweep -b {low} -e {top} -f {step_factor}")
    refuse_gloo(config, ranks, visible_gpu_count({**os.environ, **extra}))
    socket_path = ab_profiles(nodes=nodes, instance_type=instance_type).off

    ensure_engine(config, True, for_what="gpufabric tune")  # refuse_gloo above: NCCL ranks only

    def progress(trial: object, total: int) -> None:
        print(f"tune: {getattr(trial, 'candidate', '?')} done ({total} job budget)", file=sys.stderr)

    runs = run_tune(
        config, socket_path, path_name=path, size_bytes=target, budget=budget, repeats=repeats,
        on_trial=progress, launcher=factory, nodes=nodes, ranks=ranks, env=extra, timeout_s=timeout,
        on_output=(lambda p, line: print(f"{p} {line}", file=sys.stderr)) if verbose else None,
        attest=attest_files,
    )  # fmt: skip
    report = judge_tune(runs)
    document = report.model_dump_json(indent=2) + "\n"
    write_output(Path(runs.root) / "tune.json", document)
    if out is not None:
        write_output(out, document)
    typer.echo(document if fmt == "json" else tune_markdown(report), nl=False)


def refuse_gloo(config: BenchConfig, ranks: int | None, gpus: int) -> None:
    """Refuse a tune whose ranks would run gloo: NCCL's socket knobs only matter to NCCL ranks.

    The backend is the one ``run_bench`` will resolve (``resolve_world``, on this host, for every
    launcher), so ``--on mpirun`` without GPUs here is refused too instead of "tuning" gloo for minutes.
    """
    from gpufabric.bench.world import resolve_world

    _, backend, _ = resolve_world(config, ranks, gpus)
    if backend != "nccl":
        raise UsageError(
            f"tune --path socket: the ranks would run on {backend} (no CUDA GPU on this host, where the "
            "backend is chosen for every --on), and NCCL socket knobs only matter to NCCL ranks; run "
            "gpufabric tune on a GPU host"
        )


def register(app: typer.Typer) -> None:
    """Add ``gpufabric tune`` to the app."""
    app.command("tune")(tune)
