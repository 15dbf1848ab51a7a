"""``gpufabric snapshot``: read this node (GPUs, NVLink, PCIe, NICs, cloud instance type) into a node
snapshot; print it as a summary or JSON, and with ``--out FILE`` keep the JSON for offline use
(``hardware.load_snapshot``; other commands' ``--snapshot FILE``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from gpufabric.cli._common import choice
from gpufabric.report import SNAPSHOT_FORMATS, Format


def snapshot_command(
    out: Path | None = typer.Option(None, "--out", help="write the snapshot JSON to FILE"),
    fmt: str = typer.Option("text", "--format", help="text or json"),
    no_metadata: bool = typer.Option(
        False, "--no-metadata", help="do not ask the cloud's metadata service for the instance type"
    ),
) -> None:
    """Read this node's GPUs, NVLink, PCIe links and NICs (and its cloud instance type) into a snapshot."""
    # Imported when the command runs, not when `gpufabric --help` lists it (benchmarks/import_time.py).
    from gpufabric.hardware import detect_node, save_snapshot
    from gpufabric.report import render_snapshot

    output = Format(choice("--format", fmt, SNAPSHOT_FORMATS))
    snapshot = detect_node(environ=os.environ, metadata=not no_metadata)
    if out is not None:
        save_snapshot(snapshot, out)
    sys.stdout.write(render_snapshot(snapshot, output))


def register(app: typer.Typer) -> None:
    """Add ``snapshot`` to the app."""
    app.command("snapshot")(snapshot_command)
