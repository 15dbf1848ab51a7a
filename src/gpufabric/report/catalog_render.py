"""The catalog as text: ``catalog list`` (an ``InstanceListing``) as the seeds' instance table, and
``catalog show NAME`` (one ``InstanceType``) as one row per fact; ``yaml`` and ``json`` dump the models."""

from __future__ import annotations

from typing import Any

from gpufabric.catalog import InstanceListing, InstanceType, public_data
from gpufabric.report.formats import Format
from gpufabric.report.plain import dump_public, pipe_table


def _cell(value: object) -> str:
    if value is None:
        return "?"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


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


def render_instance(inst: InstanceType, fmt: Format) -> str:
    """``catalog show NAME`` in ``fmt``."""
    fmt = Format(fmt)
    if fmt is Format.TABLE:
        return instance_table(inst)
    return dump_public(inst.model_dump(mode="json"), fmt)


def render_listing(listing: InstanceListing, fmt: Format) -> str:
    """``catalog list`` in ``fmt``: AWS's table counts EFA devices (``#EFA``), the others NICs."""
    fmt = Format(fmt)
    if fmt is Format.TABLE:
        nic_header = "#EFA" if listing.cloud and listing.cloud.lower() == "aws" else "#NIC"
        return instances_table(listing.instances, nic_header)
    return dump_public([i.model_dump(mode="json") for i in listing.instances], fmt)
