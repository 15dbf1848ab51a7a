"""Cluster-level findings and the one entry point that builds an ``Inventory`` from nodes.

Findings here look across nodes: a mixed pool (shapes with different fabrics, where SkyPilot silently
picks the first variant it sees), nodes of one shape that cannot all give its fabric, and EFA pools
spread over several zones (EFA's OS-bypass traffic stays inside one subnet, so one availability zone).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from gpufabric.catalog import FabricName
from gpufabric.inventory.expect import short_fabric
from gpufabric.inventory.groups import group_nodes
from gpufabric.inventory.model import Finding, Inventory, NodeGroup, NodeInfo, NodeReport, NodeSource
from gpufabric.inventory.verdicts import node_report


def _mixed_pool(reports: list[NodeReport]) -> list[Finding]:
    shapes: Counter[tuple[str, FabricName]] = Counter(
        (r.shape, r.expected.fabric) for r in reports if r.shape and r.expected and r.node.gpu_capacity
    )
    fabrics = {fabric for _, fabric in shapes}
    if len(shapes) < 2:
        return []
    parts = [f"{n} {shape} ({short_fabric(fabric)})" for (shape, fabric), n in shapes.most_common()]
    listing = ", ".join(parts[:-1]) + " and " + parts[-1]
    if len(fabrics) > 1:
        why = (
            "NCCL needs one fabric on every rank, so keep each job inside one pool "
            "(--selector node.kubernetes.io/instance-type=<type>, or `gpufabric nodes --plan` per group)"
        )
        return [Finding(status="warn", message=f"mixed pool: {listing}: {why}")]
    return [Finding(status="info", message=f"mixed pool: {listing}, all on {short_fabric(fabrics.pop())}")]


def _degraded_within_shape(groups: list[NodeGroup]) -> list[Finding]:
    by_shape: dict[str, list[NodeGroup]] = defaultdict(list)
    for group in groups:
        if group.shape:
            by_shape[group.shape].append(group)
    findings = []
    for shape, members in by_shape.items():
        if len(members) < 2:
            continue
        best = max(members, key=lambda g: (g.fabric is not FabricName.SOCKET, g.fabric_nics))
        total = sum(len(g.nodes) for g in members)
        worse = [g for g in members if g is not best]
        count = sum(len(g.nodes) for g in worse)
        detail = "; ".join(
            f"{', '.join(g.nodes)}: {g.fabric.value}" + (f" x{g.fabric_nics}" if g.fabric_nics else "")
            for g in worse
        )
        findings.append(
            Finding(
                status="warn",
                message=f"{count} of {total} {shape} nodes cannot give {short_fabric(best.fabric)}"
                + (f" x{best.fabric_nics}" if best.fabric_nics else "")
                + f" ({detail}): a job placed on them runs at their speed; fix them or exclude them",
            )
        )
    return findings


def _zones(groups: list[NodeGroup]) -> list[Finding]:
    return [
        Finding(
            status="warn",
            message=f"{len(g.nodes)} {g.shape} nodes with EFA span zones {', '.join(g.zones)}: EFA traffic "
            "does not leave its subnet (one availability zone), so ranks in different zones cannot reach "
            "each other over EFA; pin each job to one zone (topology.kubernetes.io/zone)",
        )
        for g in groups
        if g.fabric is FabricName.EFA and len(g.zones) > 1
    ]


def build_inventory(
    nodes: list[NodeInfo],
    *,
    source: NodeSource,
    context: str | None = None,
    selector: str | None = None,
) -> Inventory:
    """Verdicts for every node, node groups, and the cluster-level findings."""
    reports = [node_report(node) for node in sorted(nodes, key=lambda n: n.name)]
    groups = group_nodes(reports)
    findings = _mixed_pool(reports) + _degraded_within_shape(groups) + _zones(groups)
    if not reports:
        where = f" matching --selector {selector}" if selector else ""
        findings.append(Finding(status="warn", message=f"no nodes{where}"))
    return Inventory(
        source=source, context=context, selector=selector, nodes=reports, findings=findings, groups=groups
    )
