"""``gpufabric doctor``: judge runs (results, NCCL logs, nccl-tests output), or this node (``--preflight``).

Exit codes: 0 when the worst verdict is PASS or SKIP; 1 when a check FAILs (or WARNs with ``--strict``);
2 for bad flags or unreadable inputs (the app's error handler). ``--format json`` prints the report with a
``verdict`` per subject and overall; the table is for humans.
"""

from __future__ import annotations

from pathlib import Path

import typer

from gpufabric.catalog import FabricName
from gpufabric.cli._common import choice
from gpufabric.errors import UsageError
from gpufabric.report import DOCTOR_FORMATS, Format


def doctor_command(
    inputs: list[Path] = typer.Argument(
        None, help="result JSON/JSONL, NCCL logs, nccl-tests output, or dirs"
    ),
    expect: str | None = typer.Option(
        None,
        "--expect",
        help=f"fabric to expect: {', '.join(FabricName)} or an alias (tcpx, ib, rdma, gib, ...)",
    ),
    instance_type: str | None = typer.Option(
        None, "--instance-type", help="catalog shape, e.g. p4d.24xlarge (default: the run's own hardware)"
    ),
    snapshot: Path | None = typer.Option(
        None, "--snapshot", help="node snapshot JSON to judge busbw on instead of the run's own hardware"
    ),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    strict: bool = typer.Option(False, "--strict", help="exit 1 on WARN too (default: WARN exits 0)"),
    run_preflight: bool = typer.Option(False, "--preflight", help="check this node instead of result files"),
    gpus: int | None = typer.Option(None, "--gpus", help="preflight: GPUs this node should show", min=1),
) -> None:
    """Prove which transport NCCL used, judge it against expectations, and say what to fix.

    Exit codes: exit 0 PASS/WARN, 1 FAIL (or WARN with --strict), 2 bad input.
    """
    # Imported when the command runs, not when `gpufabric --help` lists it (benchmarks/import_time.py).
    from gpufabric.analysis import doctor, preflight
    from gpufabric.report import TEXT_WIDTH, doctor_view, render_doctor

    output = Format(choice("--format", fmt, DOCTOR_FORMATS))
    if run_preflight:
        if snapshot is not None:
            raise UsageError("--snapshot judges result files; --preflight reads this node itself, drop one")
        if inputs:
            raise UsageError(
                "--preflight checks this node and takes no input files; drop the files or the flag"
            )
        report = preflight(expect=expect, gpus=gpus, instance_type=instance_type)
    else:
        if gpus is not None:
            raise UsageError("--gpus only applies to --preflight")
        report = doctor(inputs or [], expect=expect, instance_type=instance_type, snapshot=snapshot)
    # Rendering scrubs secret shapes: findings quote log lines, and a URL's password stays out of them.
    if output is Format.TABLE:  # the rich tables, at the terminal's width (TEXT_WIDTH at least)
        from rich.console import Console

        Console(width=max(Console().width, TEXT_WIDTH)).print(doctor_view(report))
    else:
        typer.echo(render_doctor(report, output), nl=False)
    raise typer.Exit(report.exit_code(strict=strict))


def register(app: typer.Typer) -> None:
    """Add this area's commands to `app`."""
    app.command("doctor")(doctor_command)
