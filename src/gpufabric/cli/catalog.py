"""``gpufabric catalog [list|show NAME]``: parse, call the catalog, render.

Tables are plain pipe tables (stable, greppable, diff-able); ``--format yaml|json`` print the models.
The dump and table helpers here also render ``gpufabric plan`` (``cli/plan.py``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import typer
import yaml

from gpufabric.catalog import Cloud, InstanceType, get_instance, list_instances
from gpufabric.catalog.model import public_data
from gpufabric.cli._common import choice
from gpufabric.errors import UsageError
from gpufabric.report.formats import Format, choices

CATALOG_FORMATS = choices(Format.TABLE, Format.YAML, Format.JSON)


# libyaml's emitter when PyYAML was built with it: the pure-Python one takes seconds on a big plan.
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _dump(data: Any, fmt: str) -> str:
    data = public_data(data)  # public guides by name, never the file names the catalog keeps them under
    if fmt == "json":
        return json.dumps(data, indent=2, sort_keys=False) + "\n"
    return yaml.dump(data, Dumper=_YAML_DUMPER, sort_keys=False, width=120)


def _cell(value: object) -> str:
    if value is None:
        return "?"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def pipe_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return (
        "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])
        + "\n"
    )


def instances_table(instances: list[InstanceType], nic_header: str) -> str:
    header = ["Instance Type", "GPU Type", nic_header, "Fabric", "NIC Gbps", "Network Gbps", "Cloud"]
    rows = [
        [
            i.name,
            i.accelerators,
            _cell(i.nic_count),
            i.fabric.value,
            _cell(i.nic_gbps),
            _cell(i.network_gbps),
            i.cloud.value,
        ]
        for i in instances
    ]
    return pipe_table(header, rows)


def _fact(value: Any) -> str:
    """One cell of ``catalog show``: lists and mappings on one line, provenance by public name."""
    if isinstance(value, dict):
        return ", ".join(f"{k}={_fact(v)}" for k, v in value.items()) or "-"
    if isinstance(value, list):
        return "; ".join(_fact(v) for v in value) or "-"
    return _cell(value)


def instance_table(inst: InstanceType) -> str:
    """``catalog show NAME``: one row per fact (``--format yaml|json`` for the whole model)."""
    data = public_data(inst.model_dump(mode="json", exclude={"provenance"}))
    rows = [[key, _fact(value)] for key, value in data.items() if value not in (None, [], {})]
    rows += [["source", str(p)] for p in inst.provenance]
    return pipe_table(["Fact", "Value"], rows)


def catalog_command(
    action: str = typer.Argument("list", help="list, or show NAME"),
    name: str | None = typer.Argument(None, help="instance type for `show`"),
    cloud: str | None = typer.Option(
        None, "--cloud", help="aws, gcp, azure, nebius, coreweave, together, oci"
    ),
    fmt: str = typer.Option("table", "--format", help="table, yaml or json"),
) -> None:
    """List the catalog's instance shapes, or show one with its fabric facts and provenance."""
    choice("--format", fmt, CATALOG_FORMATS)
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
        if fmt == "table":
            sys.stdout.write(instance_table(inst))
        else:
            sys.stdout.write(_dump(inst.model_dump(mode="json"), fmt))
        return
    if name:
        raise UsageError(f"catalog list: unexpected argument {name!r}; use `gpufabric catalog show {name}`")
    instances = list_instances(cloud)
    if fmt == "table":
        nic_header = "#EFA" if cloud and cloud.lower() == "aws" else "#NIC"
        sys.stdout.write(instances_table(instances, nic_header))
    else:
        sys.stdout.write(_dump([i.model_dump(mode="json") for i in instances], fmt))


def register(app: typer.Typer) -> None:
    """Add ``catalog`` to the app."""
    app.command("catalog")(catalog_command)
