"""``gpufabric isolate``: find the slow node or link with adaptive group testing.

``--simulate`` runs the search on a simulated cluster (``--nodes N`` or the names of a hostfile / node
list, faults from ``--bad`` and ``--bad-link``). Without it the same search runs on real ranks: every
round is one job (``--on local`` by default, ``mpirun`` with ``--hostfile``, ``slurm``) in which each group
runs the collective on its own sub-communicator. One node is one rank (one GPU, or one CPU rank with
gloo). ``--dry-run`` prints the first round's plan, the one a run starts with; later rounds depend on
the measurements. ``GPUFABRIC_FAULT`` (tests) reaches the ranks only when set here, and is then shown in
the output. A flag of the other mode (``--noise`` on a real run, ``--ranks`` with ``--simulate``) is
refused, never silently ignored. Exit codes (``EXIT_CODES``, in the command's help): 0 clean, 1 something
to act on, 2 bad flags or inputs.

Parse into an ``IsolateRequest`` and an ``Execution``, call ``gpufabric.jobs`` (``prepare_isolate`` then
``run_isolate_job``), render (``gpufabric.report.render_isolate``). Nothing heavy is imported before a
real run starts.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import typer

from gpufabric.boundary_names import RUNS_ROOT
from gpufabric.errors import UsageError
from gpufabric.jobs import ROUND_TIMEOUT_S
from gpufabric.options import ISOLATE_DEFAULTS, PLACEMENT_DEFAULTS
from gpufabric.report import ISOLATE_FORMATS, Format, choices

FORMATS: tuple[str, ...] = choices(*ISOLATE_FORMATS)
# Health-check scripts branch on these (as on doctor's); shown in ``gpufabric isolate --help``.
EXIT_CODES = (
    "Exit codes: 0 nothing found, or suspects not proven (warned, with the spread); 1 a node or link "
    "convicted, a short group left unresolved, or the whole cluster short; 2 bad flags or unreadable inputs."
)
# Flags of one mode only, by parameter name: the other mode refuses them instead of ignoring them.
SIMULATOR_FLAGS = {"bad": "--bad", "bad_link": "--bad-link", "slow_factor": "--slow-factor",
                   "link_factor": "--link-factor", "noise": "--noise"}  # fmt: skip
REAL_RUN_FLAGS = {
    "ranks": "--ranks", "on": "--on", "collective": "--collective", "size": "--size", "iters": "--iters",
    "batches": "--batches", "batch_seconds": "--batch-seconds", "statistic": "--statistic",
    "backend": "--backend",
    "expected_gbps": "--expected-gbps", "round_timeout": "--round-timeout",
    "timeout_stage": "--timeout-stage", "run_dir": "--run-dir", "mpirun": "--mpirun", "verbose": "--verbose",
    "dry_run": "--dry-run",
}  # fmt: skip


def _refuse_other_mode_flags(ctx: typer.Context, simulate_run: bool) -> None:
    """One line naming the flags given on the command line that the chosen mode would not use."""
    foreign = REAL_RUN_FLAGS if simulate_run else SIMULATOR_FLAGS
    # By the source's name: typer 0.29 vendors click, so its ParameterSource enum is private.
    sources = {name: ctx.get_parameter_source(name) for name in foreign}
    given = [foreign[name] for name, source in sources.items() if source and source.name == "COMMANDLINE"]
    if not given:
        return
    if simulate_run:
        raise UsageError(
            f"{', '.join(given)}: real-run flag(s), but --simulate runs no ranks; drop them, or drop "
            "--simulate to measure real ranks"
        )
    raise UsageError(
        f"{', '.join(given)}: simulator flag(s) that describe a simulated cluster; add --simulate, or "
        "drop them for a real run"
    )


def isolate(
    ctx: typer.Context,
    simulate_run: bool = typer.Option(
        ISOLATE_DEFAULTS.simulate, "--simulate", help="search a simulated cluster"
    ),
    nodes: int | None = typer.Option(None, "--nodes", help="this many nodes, node0000 ... (local ranks)"),
    hostfile: Path | None = typer.Option(None, "--hostfile", help="OpenMPI hostfile: one node per line"),
    node_list: Path | None = typer.Option(
        None,
        "--node-list",
        help="node names, Slurm ranges (gpu[001-064]) or kubectl 'pod/NAME' lines; real: --on slurm "
        "runs on exactly these nodes (default there: SLURM_JOB_NODELIST)",
    ),
    bad: list[str] = typer.Option(
        ISOLATE_DEFAULTS.bad, "--bad", help="simulator: slow node(s), index or name: 3,17"
    ),
    bad_link: list[str] = typer.Option(
        ISOLATE_DEFAULTS.bad_links, "--bad-link", help="simulator: slow link A-B (repeatable)"
    ),
    slow_factor: float = typer.Option(
        ISOLATE_DEFAULTS.slow_factor, "--slow-factor", help="simulator: a slow node's NIC fraction"
    ),
    link_factor: float = typer.Option(
        ISOLATE_DEFAULTS.link_factor, "--link-factor", help="simulator: a slow link's fraction"
    ),
    noise: float = typer.Option(
        ISOLATE_DEFAULTS.noise, "--noise", help="simulator: relative measurement noise (sigma)"
    ),
    seed: int = typer.Option(
        ISOLATE_DEFAULTS.seed,
        "--seed",
        min=0,
        help="starts the random numbers of the simulator's noise and the search's grouping",
    ),
    group_size: int = typer.Option(
        ISOLATE_DEFAULTS.group_size, "--group-size", help="nodes per group in the screen round"
    ),
    link_sweep: bool | None = typer.Option(
        None,
        "--link-sweep/--no-link-sweep",
        help="one all-node round that finds links between groups (default: on, off for CPU gloo ranks)",
    ),
    k_sigma: float = typer.Option(
        ISOLATE_DEFAULTS.k_sigma, "--k-sigma", help="robust sigmas below the peers' median that flag"
    ),
    min_drop: float | None = typer.Option(
        None,
        "--min-drop",
        help="never flag a drop smaller than this fraction (default 0.10; real 0.25; at most 0.9)",
    ),
    alpha: float = typer.Option(
        ISOLATE_DEFAULTS.alpha,
        "--alpha",
        help="false-alarm rate per suspect: the rank test's p must be at most this",
    ),
    repeats: int | None = typer.Option(
        None,
        "--repeats",
        help="retests of each suspect beside healthy groups (default: as many as --alpha needs, up to 8)",
    ),
    ranks: int | None = typer.Option(None, "--ranks", help="real: ranks of the job (one per node)"),
    on: str | None = typer.Option(None, "--on", help="real: local (default), mpirun (--hostfile), slurm"),
    collective: str = typer.Option(
        ISOLATE_DEFAULTS.collective, "--collective", help="real: alltoall or all_reduce"
    ),
    size: str | None = typer.Option(None, "--size", help="real: bytes per group test (64M GPU, 1M CPU)"),
    iters: int | None = typer.Option(
        None, "--iters", help="real: iterations per timed batch, at least (20 CPU, 1 GPU)"
    ),
    batches: int | None = typer.Option(
        None, "--batches", help="real: timed batches per group test (5 CPU, 100 GPU)"
    ),
    batch_seconds: float | None = typer.Option(
        None, "--batch-seconds", help="real: seconds per timed batch, iterations added (0.1 CPU, 0.005 GPU)"
    ),
    statistic: str | None = typer.Option(
        None,
        "--statistic",
        help="real: what a group test's batch times come to: median, mean, p95, tail10 (the mean of the "
        "slowest tenth) or median+tail10 (both, each against its healthy level, the lower counting: a GPU "
        "slow all or part of the time); default median+tail10 between GPUs, median on CPU ranks and "
        "virtual nodes",
    ),
    backend: str | None = typer.Option(None, "--backend", help="real: nccl or gloo (default: by device)"),
    expected_gbps: float | None = typer.Option(
        None, "--expected-gbps", help="real: the busbw a healthy group reaches (default: from the groups)"
    ),
    round_timeout: float = typer.Option(
        ROUND_TIMEOUT_S, "--round-timeout", help="real: seconds per round's job"
    ),
    timeout_stage: str | None = typer.Option(
        None, "--timeout-stage", help="real: seconds per stage of each round, e.g. init=120,size=60"
    ),
    run_dir: Path | None = typer.Option(
        None, "--run-dir", help=f"real: where rounds write ({RUNS_ROOT}/...)"
    ),
    mpirun: str = typer.Option(PLACEMENT_DEFAULTS.mpirun, "--mpirun", help="real, mpirun: the mpirun to use"),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="real: show the ranks' output on stderr"),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    virtual_nodes: bool = typer.Option(
        ISOLATE_DEFAULTS.virtual_nodes,
        "--virtual-nodes",
        help="real, local: each node is an NCCL virtual node (NCCL_HOSTID) on this host",
    ),
    mps: bool = typer.Option(False, "--mps", help="real, --virtual-nodes: run an MPS daemon per round"),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="real: print the first round's launch plan (redacted); run nothing"
    ),
) -> None:
    """Find slow nodes and links: screen groups in parallel, split the short ones, prove by retests.

    A suspect is retested beside healthy groups and convicted only when a rank test separates it from
    their spread (at most --alpha false alarms); otherwise it is reported as not proven."""
    from gpufabric.bench import parse_stage_timeouts
    from gpufabric.cli._common import choice
    from gpufabric.jobs import (
        Execution,
        IsolateRequest,
        PreparedMeasurement,
        prepare_isolate,
        run_isolate_job,
    )
    from gpufabric.launch import launcher_chooser
    from gpufabric.report import render_document, render_isolate

    _refuse_other_mode_flags(ctx, simulate_run)
    choice("--format", fmt, FORMATS)
    request = IsolateRequest(
        simulate=simulate_run, nodes=nodes, hostfile=hostfile, node_list=node_list, bad=bad,
        bad_links=bad_link, slow_factor=slow_factor, link_factor=link_factor, noise=noise, seed=seed,
        group_size=group_size, link_sweep=link_sweep, k_sigma=k_sigma, min_drop=min_drop, alpha=alpha,
        repeats=repeats, on=on, collective=collective, size=size, iters=iters, batches=batches,
        batch_seconds=batch_seconds, statistic=statistic, backend=backend, expected_gbps=expected_gbps,
        run_dir=run_dir, virtual_nodes=virtual_nodes,
    )  # fmt: skip
    execution = Execution(
        ranks=ranks,
        timeout_s=round_timeout,
        stage_timeouts=parse_stage_timeouts(timeout_stage) if timeout_stage is not None else None,
        on_output=(lambda prefix, line: print(f"{prefix} {line}", file=sys.stderr)) if verbose else None,
    )
    launchers = launcher_chooser(hostfile=hostfile, mpirun=mpirun, mps=mps)
    prepared = prepare_isolate(request, execution, launchers=launchers)
    if dry_run and isinstance(prepared, PreparedMeasurement):  # --simulate --dry-run was refused above
        typer.echo(render_document(prepared, Format.TEXT), nl=False)  # the notes, then round 1's plan
        return
    document = run_isolate_job(prepared)
    typer.echo(render_isolate(document, Format(fmt)), nl=False)
    raise typer.Exit(document.exit_code)


def register(app: typer.Typer) -> None:
    """Add ``gpufabric isolate`` to `app`."""
    app.command("isolate", help=f"{inspect.cleandoc(isolate.__doc__ or '')}\n\n{EXIT_CODES}")(isolate)
