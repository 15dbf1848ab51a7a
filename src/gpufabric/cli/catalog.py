"""``gpufabric catalog [list|show NAME]``: parse, call the catalog, render (``report.catalog_render``).

Tables are plain pipe tables (stable, greppable, diff-able); ``--format yaml|json`` print the models.
"""

from __future__ import annotations

import sys

import typer

from gpufabric.cli._common import choice
from gpufabric.errors import UsageError
from gpufabric.report import CATALOG_FORMATS, Format


def catalog_command(
    action: str = typer.Argument("list", help="list, or show NAME"),
    name: str | None = typer.Argument(None, help="instance type for `show`"),
    cloud: str | None = typer.Option(
        None, "--cloud", help="aws, gcp, azure, nebius, coreweave, together, oci"
    ),
    fmt: str = typer.Option("table", "--format", help="table, yaml or json"),
) -> None:
    """List the catalog's instance shapes, or show one with its fabric facts and provenance."""
    # Imported when the command runs, not when `gpufabric --help` lists it (benchmarks/import_time.py).
    from gpufabric.catalog import Cloud, InstanceListing, get_instance, list_instances
    from gpufabric.report import render_instance, render_listing

    output = Format(choice("--format", fmt, CATALOG_FORMATS))
    choice("catalog ACTION", action, ("list", "show"))
    if action == "show":
        if not name:
            raise UsageError("catalog show: give an instance type, e.g. `gpufabric catalog show p5.48xlarge`")
        inst = get_instance(name)
        if cloud is not None:
            wanted = choice("--cloud", cloud.lower(), tuple(c.value for c in Cloud))
            if inst.cloud.value != wanted:
                raise UsageError(
                    f"--cloud {wanted}: {inst.name} is an instance type of {inst.cloud.value}; use --cloud "
                    f"{inst.cloud.value}, drop --cloud, or `gpufabric catalog list --cloud {wanted}`"
                )
        sys.stdout.write(render_instance(inst, output))
        return
    if name:
        raise UsageError(f"catalog list: unexpected argument {name!r}; use `gpufabric catalog show {name}`")
    listing = InstanceListing(cloud=cloud, instances=list_instances(cloud))
    sys.stdout.write(render_listing(listing, output))


def register(app: typer.Typer) -> None:
    """Add ``catalog`` to the app."""
    app.command("catalog")(catalog_command)
