"""``gpufabric env``: the engines and clients this install has, their versions, and the extra adding each.

A table (rich) by default, ``--format json`` for scripts. Nothing optional is imported to find out
(``gpufabric.capabilities``), so it answers at once even where torch is installed.
"""

from __future__ import annotations

import os

import typer

from gpufabric.capabilities import EnvironmentReport, probe_environment
from gpufabric.cli._common import choice
from gpufabric.report.formats import Format, choices

FORMATS = choices(Format.TABLE, Format.JSON)


def render_table(report: EnvironmentReport) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"gpufabric {report.gpufabric}, Python {report.python} ({report.executable})")
    for column in ("", "engine / client", "version", "for", "where / to add"):
        table.add_column(column, overflow="fold")
    for cap in report.capabilities:
        mark = Text("yes", style="green") if cap.installed else Text("no", style="yellow")
        where = (cap.detail or "-") if cap.installed else cap.how_to_add
        # Text, not markup: "gpufabric[torch]" must print as written.
        table.add_row(mark, Text(cap.name), Text(cap.version or "-"), Text(cap.enables), Text(where))
    Console(highlight=False).print(table)


def env(fmt: str = typer.Option("table", "--format", help="table or json")) -> None:
    """List what this install can do: each engine and client, installed or not, and how to add it."""
    choice("--format", fmt, FORMATS)
    report = probe_environment(os.environ)
    if fmt == "json":
        typer.echo(report.model_dump_json(indent=2))
        return
    render_table(report)


def register(app: typer.Typer) -> None:
    """Add ``gpufabric env`` to the app."""
    app.command("env")(env)
