"""``gpufabric watch``: look at a running NCCL job (any program, not only ours) through NCCL's RAS service.

Parse, call ``gpufabric.nccl_native.watch_job``, render (``report.ras_render``). RAS answers on the node's
``localhost:28028`` unless the job set ``NCCL_RAS_ADDR``; ``--host`` names it (default: this environment's
``NCCL_RAS_ADDR``, else NCCL's default). With ``--hostfile``, the suspects and healthy controls are written
there and the exact ``gpufabric isolate`` command that reads it is printed; ``--isolate`` runs it (a
process of its own) and exits with its code. Exit codes: 0 every rank
answered; 1 ranks missing, dead or in error; 2 bad flags; RAS unreachable is one line and exit 1.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from gpufabric.cli._common import choice
from gpufabric.errors import UsageError
from gpufabric.report import WATCH_FORMATS, Format, choices

if TYPE_CHECKING:
    from gpufabric.nccl_native import Accusation

FORMATS = choices(*WATCH_FORMATS)


def watch(
    host: str | None = typer.Option(
        None, "--host", help="RAS of the job's node: HOST[:PORT] (default: $NCCL_RAS_ADDR or localhost:28028)"
    ),
    timeout: int = typer.Option(
        5, "--timeout", min=1, max=60, help="seconds RAS waits for the job's other processes (RAS's -t)"
    ),
    connect_timeout: float = typer.Option(
        2.0, "--connect-timeout", min=0.1, max=30.0, help="seconds to wait for RAS to accept the connection"
    ),
    raw_format: str = typer.Option(
        "json", "--raw-format", help="what to ask RAS for: json (NCCL 2.28.7+, falls back to text) or text"
    ),
    diagnostics: bool = typer.Option(
        False,
        "--diagnostics",
        help="also run RAS's diagnostics (NCCL 2.31+): driver, ECC, NVLink, NCCL_* env",
    ),
    hostfile: Path | None = typer.Option(
        None,
        "--hostfile",
        help="write suspects + healthy controls here; print the isolate command reading it",
    ),
    isolate: bool = typer.Option(
        False,
        "--isolate",
        help="with --hostfile: run that isolate command now (suspects beside healthy controls); its exit "
        "code is watch's",
    ),
    fmt: str = typer.Option("table", "--format", help=f"{' or '.join(FORMATS)}"),
) -> None:
    """Ask a running NCCL job's RAS which ranks are missing, dead or behind, and whom to isolate.

    Exit codes: 0 every rank answered, 1 ranks missing/dead/in error (or RAS unreachable), 2 bad flags.
    """
    # Imported when the command runs, not when `gpufabric --help` lists it (benchmarks/import_time.py).
    from gpufabric.nccl_native import ras_address, watch_job
    from gpufabric.outputs import write_output
    from gpufabric.report import TEXT_WIDTH, render_watch, watch_view

    if isolate and hostfile is None:
        raise UsageError("--isolate: the suspects and controls need a hostfile; add --hostfile FILE")
    output = Format(choice("--format", fmt, FORMATS))
    want = choice("--raw-format", raw_format, ("json", "text"))
    report = watch_job(
        ras_address(host, os.environ), want_json=want == "json", ras_timeout_s=timeout,
        connect_timeout_s=connect_timeout, with_diagnostics=diagnostics, hostfile=hostfile,
    )  # fmt: skip
    if hostfile is not None and report.accusation.suspects:
        write_output(hostfile, report.accusation.hostfile_text())
    if output is Format.TABLE:
        from rich.console import Console

        Console(width=max(Console().width, TEXT_WIDTH)).print(watch_view(report))
    else:
        typer.echo(render_watch(report, output), nl=False)
    if isolate and hostfile is not None:
        raise typer.Exit(_hand_to_isolate(report.accusation, hostfile, fallback=report.exit_code()))
    raise typer.Exit(report.exit_code())


def _hand_to_isolate(accusation: Accusation, hostfile: Path, *, fallback: int) -> int:
    """Run the printed isolate command as its own process (what the user would type, nothing hidden);
    with no suspect there is nothing to prove and watch's own exit code stands."""
    if not accusation.suspects:
        typer.echo("watch --isolate: RAS names no suspect; nothing to isolate", err=True)
        return fallback
    if not accusation.controls:  # isolate compares nodes: a suspect alone proves nothing
        typer.echo(
            f"watch --isolate: {len(accusation.suspects)} suspect node(s) and no healthy control (no node "
            f"whose ranks all answered); {hostfile} holds the suspects only: add healthy nodes to it and run "
            f"{accusation.isolate_command(hostfile)} with --ranks raised to match",
            err=True,
        )
        return fallback
    argv = accusation.isolate_argv(hostfile)
    typer.echo(f"watch --isolate: running {accusation.isolate_command(hostfile)}", err=True)
    # No timeout here: isolate bounds each of its rounds itself (stage timeouts) and Ctrl-C reaches it.
    return subprocess.run([sys.executable, "-m", "gpufabric.cli", *argv[1:]], check=False).returncode


def register(app: typer.Typer) -> None:
    """Add this area's commands to `app`."""
    app.command("watch")(watch)
