"""``gpufabric env``: the engines and clients this install has, their versions, and the extra adding each.

A table (rich) by default, ``--format json`` for scripts. Nothing optional is imported to find out
(``gpufabric.capabilities``), so it answers at once even where torch is installed.
"""

from __future__ import annotations

import os

import typer

from gpufabric.cli._common import choice
from gpufabric.report import CAPABILITIES_FORMATS, Format


def env(fmt: str = typer.Option("table", "--format", help="table or json")) -> None:
    """List what this install can do: each engine and client, installed or not, and how to add it."""
    # Imported when the command runs, not when `gpufabric --help` lists it (benchmarks/import_time.py).
    from gpufabric.capabilities import probe_environment
    from gpufabric.report import capabilities_view, render_capabilities

    output = Format(choice("--format", fmt, CAPABILITIES_FORMATS))
    report = probe_environment(os.environ)
    if output is Format.TABLE:  # the rich table, at the terminal's width
        from rich.console import Console

        Console(highlight=False).print(capabilities_view(report))
        return
    typer.echo(render_capabilities(report, output), nl=False)


def register(app: typer.Typer) -> None:
    """Add ``gpufabric env`` to the app."""
    app.command("env")(env)
