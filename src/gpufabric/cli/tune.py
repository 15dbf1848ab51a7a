"""``gpufabric tune``: search socket-transport settings on this host's (or the hosts') socket path and print
the best environment to export with its gain over NCCL's defaults. Parse into a ``TuneRequest`` and an
``Execution``, call ``gpufabric.jobs.prepare_tune`` then ``run_tune_job`` (measure, judge, keep
``tune.json``) or print the first round's plans (``--dry-run``), render. No torch is imported here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from gpufabric.options import PLACEMENT_DEFAULTS, TUNE_DEFAULTS
from gpufabric.report import TUNE_FORMATS, Format


def tune(
    path: str = typer.Option(
        TUNE_DEFAULTS.path, "--path", help="transport to tune: socket (one host: P2P/SHM off)"
    ),
    size: str | None = typer.Option(None, "--size", help="size to tune for (default: -e, else 256M)"),
    min_bytes: str | None = typer.Option(None, "-b", "--min-bytes", help="smallest size measured"),
    max_bytes: str | None = typer.Option(None, "-e", "--max-bytes", help="largest size measured"),
    step_factor: int = typer.Option(
        TUNE_DEFAULTS.step_factor, "-f", "--step-factor", help="size multiplier per step"
    ),
    collective: str = typer.Option(TUNE_DEFAULTS.collective, "-c", "--collective", help="collective to tune"),
    backend: str | None = typer.Option(
        None, "--backend", help="whose knobs: nccl (default, GPU ranks) or gloo (devices per interface)"
    ),
    budget: int = typer.Option(
        TUNE_DEFAULTS.budget, "--budget", help="jobs to spend (each candidate run is one job)"
    ),
    repeats: int = typer.Option(
        TUNE_DEFAULTS.repeats, "--repeats", min=1, help="stop once the leader has this many jobs"
    ),
    iters: int = typer.Option(TUNE_DEFAULTS.iters, "-n", "--iters", min=1, help="iterations per timed batch"),
    warmup: int = typer.Option(
        TUNE_DEFAULTS.warmup, "-w", "--warmup", min=0, help="warm-up iterations per size"
    ),
    batches: int = typer.Option(
        TUNE_DEFAULTS.batches, "--batches", min=2, help="timed batches per size and job"
    ),
    ranks: int | None = typer.Option(None, "--ranks", help="ranks (default: every GPU of this host)"),
    instance_type: str | None = typer.Option(None, "--instance-type", help="shape (selects the off switch)"),
    on: str = typer.Option(PLACEMENT_DEFAULTS.on, "--on", help="launcher: local, mpirun, slurm"),
    hosts: list[str] = typer.Option([], "--hosts", help="mpirun: HOST[:SLOTS], comma-separated or repeated"),
    hostfile: Path | None = typer.Option(None, "--hostfile", help="mpirun: OpenMPI hostfile"),
    env: list[str] = typer.Option(
        [], "--env", help="NAME=VALUE passed to every rank, or NAME: its value here (repeatable)"
    ),
    timeout: float | None = typer.Option(None, "--timeout", min=1, help="stop each job after seconds"),
    run_dir: Path | None = typer.Option(
        None, "--run-dir", help=f"default: {TUNE_DEFAULTS.run_dir}/<timestamp>-tune/"
    ),
    out: Path | None = typer.Option(None, "--out", help="also write the JSON report here"),
    fmt: str = typer.Option("table", "--format", help="table, markdown or json"),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="show the ranks' output on stderr"),
    virtual_nodes: int = typer.Option(
        TUNE_DEFAULTS.virtual_nodes,
        "--virtual-nodes",
        min=0,
        help="local: split the ranks into N NCCL nodes (NCCL_HOSTID each)",
    ),
    mps: bool = typer.Option(
        TUNE_DEFAULTS.mps, "--mps", help="local, --virtual-nodes: run an MPS daemon per job"
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="print the first round's job plans (redacted); run nothing"
    ),
) -> None:
    """Find the NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD (and channel count) that moves the most data."""
    from gpufabric.cli._common import choice, parse_env_pairs
    from gpufabric.jobs import Execution, TuneRequest, prepare_tune, run_tune_job
    from gpufabric.launch import placement
    from gpufabric.report import render_document, render_tune

    choice("--format", fmt, TUNE_FORMATS)
    request = TuneRequest(
        path=path, size=size, min_bytes=min_bytes, max_bytes=max_bytes, step_factor=step_factor,
        collective=collective, budget=budget, repeats=repeats, iters=iters, warmup=warmup, batches=batches,
        instance_type=instance_type, run_dir=run_dir or TUNE_DEFAULTS.run_dir, virtual_nodes=virtual_nodes,
        mps=mps, backend=backend,
    )  # fmt: skip
    where = placement(on, hosts=hosts, hostfile=hostfile, virtual_nodes=virtual_nodes, mps=mps)
    execution = Execution(
        launcher=where.launcher, nodes=where.nodes, ranks=ranks, env=parse_env_pairs(env), timeout_s=timeout,
        ranks_here=where.ranks_here, out=out,
        on_output=(lambda p, line: print(f"{p} {line}", file=sys.stderr)) if verbose else None,
    )  # fmt: skip

    def progress(trial: object, total: int) -> None:
        print(f"tune: {getattr(trial, 'candidate', '?')} done ({total} job budget)", file=sys.stderr)

    prepared = prepare_tune(request, execution)
    if dry_run:  # the first round's jobs, headed by their candidates; nothing started, nothing written
        typer.echo(render_document(prepared, Format.TEXT), nl=False)
        return
    report = run_tune_job(prepared, on_trial=progress)
    typer.echo(render_tune(report, Format(fmt)), nl=False)


def register(app: typer.Typer) -> None:
    """Add ``gpufabric tune`` to the app."""
    app.command("tune")(tune)
