"""``gpufabric certify``: every node's verdict, in one command: preflight and parity, each node alone,
group tests between the nodes (isolate), the transport NCCL's log proves; a certificate per node, a
summary and an HTML report; scheduler actions printed, and run only with ``--apply``.

Parse into a ``CertifyRequest`` and an ``Execution``, call ``gpufabric.jobs`` (``prepare_certify`` then
``run_certify_job``), render (``gpufabric.report.render_certify``). ``--dry-run`` prints the prepared plan
(``render_document``) and runs nothing. Progress (stage, node, time left) goes to stderr through rich.
A stop signal ends the run with what was measured kept and the place it stopped said.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import typer

from gpufabric.boundary_names import RUNS_ROOT
from gpufabric.options import CERTIFY_DEFAULTS, PLACEMENT_DEFAULTS
from gpufabric.report import CERTIFY_FORMATS, Format, choices

FORMATS: tuple[str, ...] = choices(*CERTIFY_FORMATS)
EXIT_CODES = (
    "Exit codes: 0 every node passed (degraded nodes pass, with their reasons); 1 a node failed, the run "
    "was cut short or a certificate could not be written; 2 bad flags or inputs; 130/143 stopped by a signal."
)


def certify(
    nodes: int | None = typer.Option(None, "--nodes", help="this many nodes, node0000 ... (local ranks)"),
    hostfile: Path | None = typer.Option(None, "--hostfile", help="OpenMPI hostfile: one node per line"),
    node_list: Path | None = typer.Option(
        None,
        "--node-list",
        help="Slurm node names or ranges (gpu[001-064]); --on slurm runs on exactly these",
    ),
    on: str | None = typer.Option(None, "--on", help="local (default), mpirun (--hostfile), slurm"),
    run_dir: Path | None = typer.Option(
        None, "--run-dir", help=f"where stages and certificates go ({RUNS_ROOT}/...)"
    ),
    budget: float = typer.Option(
        CERTIFY_DEFAULTS.budget_s, "--budget", help="seconds the whole run may take; the plan must fit"
    ),
    valid_hours: float = typer.Option(
        CERTIFY_DEFAULTS.valid_hours, "--valid-hours", help="hours a certificate stays valid"
    ),
    expect: str | None = typer.Option(
        None, "--expect", help="the fabric the nodes should use (efa, socket ...)"
    ),
    instance_type: str | None = typer.Option(
        None, "--instance-type", help="the nodes' shape where a node records none; the catalog's curve"
    ),
    gpus: int | None = typer.Option(None, "--gpus", min=1, help="GPUs each node must show"),
    virtual_nodes: bool = typer.Option(
        CERTIFY_DEFAULTS.virtual_nodes,
        "--virtual-nodes",
        help="local: each node is an NCCL virtual node on its share of this host's GPUs",
    ),
    mps: bool = typer.Option(
        CERTIFY_DEFAULTS.mps, "--mps", help="--virtual-nodes: an MPS daemon for ranks sharing a GPU"
    ),
    backend: str | None = typer.Option(None, "--backend", help="nccl or gloo (default: by device)"),
    node_max_bytes: str | None = typer.Option(
        None, "--node-max-bytes", help="each node alone: the sweep's largest size (256M GPU, 1M CPU)"
    ),
    node_parallel: int = typer.Option(
        CERTIFY_DEFAULTS.node_parallel,
        "--node-parallel",
        min=1,
        help="each node alone: jobs at once on mpirun/Slurm (local: one)",
    ),
    min_drop: float | None = typer.Option(None, "--min-drop", help="between nodes: isolate's --min-drop"),
    alpha: float = typer.Option(
        CERTIFY_DEFAULTS.alpha,
        "--alpha",
        help="between nodes: false-alarm rate per suspect (isolate's --alpha)",
    ),
    repeats: int | None = typer.Option(
        None, "--repeats", help="between nodes: retests of each suspect (isolate's --repeats)"
    ),
    size: str | None = typer.Option(None, "--size", help="between nodes: bytes per group test"),
    iters: int | None = typer.Option(
        None, "--iters", help="between nodes: iterations per timed batch, at least (isolate's --iters)"
    ),
    actions: str = typer.Option(
        CERTIFY_DEFAULTS.actions, "--actions", help="auto (slurm with --on slurm), slurm, kubernetes, none"
    ),
    apply: bool = typer.Option(
        CERTIFY_DEFAULTS.apply, "--apply", help="run the actions (drain/resume, label/taint); else print"
    ),
    mpirun: str = typer.Option(PLACEMENT_DEFAULTS.mpirun, "--mpirun", help="mpirun: the mpirun to use"),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    progress: bool | None = typer.Option(None, "--progress/--no-progress", help="progress on stderr"),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="show the ranks' output on stderr"),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="print the plan and the first job (redacted); run nothing"
    ),
) -> None:
    """Certify every node: a verdict (pass, degraded, fail) with evidence, that a scheduler can act on."""
    from gpufabric.cli._common import choice
    from gpufabric.jobs import ACTION_TARGETS, CertifyRequest, Execution, prepare_certify, run_certify_job
    from gpufabric.report import certify_html, render_certify, render_document

    choice("--format", fmt, FORMATS)
    choice("--actions", actions, ACTION_TARGETS)
    request = CertifyRequest(
        nodes=nodes,
        hostfile=hostfile,
        node_list=node_list,
        on=on,
        run_dir=run_dir,
        budget_s=budget,
        valid_hours=valid_hours,
        expect=expect,
        instance_type=instance_type,
        gpus=gpus,
        virtual_nodes=virtual_nodes,
        mps=mps,
        backend=backend,
        min_drop=min_drop,
        alpha=alpha,
        repeats=repeats,
        node_max_bytes=node_max_bytes,
        node_parallel=node_parallel,
        size=size,
        iters=iters,
        actions=actions,
        apply=apply,
    )
    execution = Execution(
        on_output=(lambda prefix, line: print(f"{prefix} {line}", file=sys.stderr)) if verbose else None
    )
    prepared = prepare_certify(request, execution, mpirun=mpirun)
    if dry_run:  # exactly the plan and first job a run starts with; nothing started, nothing written
        typer.echo(render_document(prepared, Format.TEXT), nl=False)
        return
    from gpufabric.cli.certify_progress import StageProgress

    with StageProgress(enabled=progress if progress is not None else sys.stderr.isatty()) as shown:
        report = run_certify_job(prepared, html_page=certify_html, on_progress=shown.update)
    typer.echo(render_certify(report, Format(fmt)), nl=False)
    if report.summary.interrupted:
        print(
            f"Error: certify cut short at {report.summary.interrupted}; what was measured is in "
            f"{report.summary.run_dir}",
            file=sys.stderr,
        )
    for error in report.write_errors:
        print(f"Error: could not write {error}; the verdicts above are kept", file=sys.stderr)
    raise typer.Exit(report.exit_code)


def register(app: typer.Typer) -> None:
    """Add ``gpufabric certify`` to `app`."""
    app.command("certify", help=f"{inspect.cleandoc(certify.__doc__ or '')}\n\n{EXIT_CODES}")(certify)
