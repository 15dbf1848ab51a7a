"""``gpufabric expect``: what each collective should reach on a shape. Parse, find the shape (an instance
type from the catalog, a snapshot file, or this node), call ``expect.expectation_table``, render
(``report.render_expect``).
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from gpufabric.cli._common import choice, formats_metavar
from gpufabric.collectives import ALL_COLLECTIVES, CollectiveName
from gpufabric.errors import InputError, UsageError
from gpufabric.report import EXPECT_FORMATS, Format, choices

# alltoallv's busbw is its busiest rank's bytes (nccl-tests' AlltoAllvGetBw): no ceiling compares to it.
EXPECTED: tuple[CollectiveName, ...] = tuple(c for c in ALL_COLLECTIVES if c != "alltoallv")
HELP = (
    "Print what each collective should reach: the path that bounds it (NVLink, PCIe, NET, sockets), NCCL's "
    "algorithm at large sizes, the physical busbw ceiling with its formula, the band healthy published "
    "systems reach, the sources, and every fact that is unknown. The shape comes from --instance-type (the "
    "catalog), --snapshot (a node snapshot JSON), or this node.\n\n"
    "Exit status: 0 printed; 2 bad flag, unknown instance type, unreadable snapshot, or no shape to use."
)


def _collectives(given: list[str]) -> tuple[CollectiveName, ...]:
    if not given or "all" in given:
        return EXPECTED
    by_name: dict[str, CollectiveName] = {name: name for name in EXPECTED}
    return tuple(by_name[choice("-c/--collective", c, (*EXPECTED, "all"))] for c in given)


def expect_command(
    instance_type: str | None = typer.Option(
        None, "--instance-type", help="A catalog instance type, e.g. p5.48xlarge (see `gpufabric catalog`)."
    ),
    snapshot: Path | None = typer.Option(
        None, "--snapshot", help="A node snapshot JSON (or a JSON NodeShape) to read the shape from."
    ),
    nodes: int = typer.Option(1, "--nodes", min=1, help="Nodes the collective spans."),
    virtual_nodes: int = typer.Option(
        0, "--virtual-nodes", min=0, help="Split this host's ranks into N NCCL nodes (NCCL_HOSTID each)."
    ),
    fabric_off: bool = typer.Option(
        False,
        "--fabric-off",
        help="The A/B's off side: NCCL's Socket transport between every rank (NCCL_P2P_DISABLE=1 "
        "NCCL_SHM_DISABLE=1).",
    ),
    collective: list[str] = typer.Option(
        [], "--collective", "-c", help="Collective (repeatable), or all (the default)."
    ),
    size: str | None = typer.Option(None, "--size", help="Message size, e.g. 1G (default: large sizes)."),
    fmt: str = typer.Option("text", "--format", metavar=formats_metavar(choices(*EXPECT_FORMATS))),
) -> None:
    # Imported when the command runs, not when `gpufabric --help` lists it (benchmarks/import_time.py).
    from gpufabric.expect import (
        detected_shape,
        expectation_table,
        load_shape,
        no_gpu_read,
        shape_from_instance,
    )
    from gpufabric.report import render_document
    from gpufabric.units import parse_size

    output = Format(choice("--format", fmt, choices(*EXPECT_FORMATS)))
    wanted = _collectives(collective)
    size_bytes = parse_size(size, flag="--size") if size is not None else None
    if instance_type and snapshot:
        raise UsageError("--instance-type and --snapshot both give the shape; pass one of them")
    if virtual_nodes and nodes > 1:
        raise UsageError(
            f"--virtual-nodes {virtual_nodes} and --nodes {nodes}: virtual nodes live on one host; "
            "drop --nodes"
        )
    if instance_type:
        shape, shape_from = shape_from_instance(instance_type), f"the catalog: {instance_type}"
    elif snapshot is not None:
        shape, shape_from = load_shape(snapshot), f"snapshot {snapshot}"
    else:
        shape, shape_from = detected_shape(os.environ), "this node (detected)"
    unread = no_gpu_read(shape)
    if unread is not None:
        # Nothing below could be known: one line and exit 2 ("no shape to use"), not a table of unknowns.
        where = "on this host" if snapshot is None and not instance_type else f"in {shape_from}"
        raise InputError(
            f"no GPU read {where} ({unread}): no path, ceiling or band can be known; give the shape with "
            "--instance-type TYPE (`gpufabric catalog list`) or --snapshot FILE (`gpufabric snapshot "
            "--out FILE` on the GPU node), or run this on the GPU node with its NVIDIA driver readable"
        )
    per_node = None
    if virtual_nodes:
        gpus = shape.gpus_per_node or 1
        per_node = max(1, gpus // virtual_nodes)
    table = expectation_table(
        shape,
        wanted,
        virtual_nodes or nodes,
        shape_from=shape_from,
        size_bytes=size_bytes,
        hosts=1 if virtual_nodes else None,
        ranks_per_node=per_node,
        transport="socket" if fabric_off else "auto",
    )
    typer.echo(render_document(table, output), nl=False)


def register(app: typer.Typer) -> None:
    """Add ``gpufabric expect`` to ``app``."""
    app.command("expect", help=HELP)(expect_command)
