"""Node groups: accelerator nodes of one shape whose fabric is in the same state, the planner's unit.

Two p4d.24xlarge nodes with 4 EFA each are one group; a third p4d whose EFA device plugin is missing is
another (it can only run NCCL over sockets), and a fourth with 1 of 4 EFA attached a third. Nodes
without accelerators are not grouped: nothing is planned on them.
"""

from __future__ import annotations

from collections import defaultdict

from gpufabric.catalog import FabricName
from gpufabric.inventory.kube_nodes import EFA_RESOURCE, INSTANCE_TYPE_LABELS, NODE_POOL_LABELS
from gpufabric.inventory.model import NodeGroup, NodeReport


def usable_nics(report: NodeReport) -> int:
    """Fabric NICs this node can use now: EFA devices, GKE data networks, or the shape's HCAs."""
    exp, node = report.expected, report.node
    if exp is None or not report.fabric_ready or exp.fabric is FabricName.SOCKET:
        return 0
    if exp.fabric is FabricName.EFA and (exp.resource or EFA_RESOURCE) in node.fabric_resources:
        return node.fabric_count(exp.resource or EFA_RESOURCE)
    if exp.gke_networks is not None:
        extra = exp.gke_networks - (exp.nics or 0)
        return max(len(node.gke_networks) - extra, 0)
    return exp.nics or 0


def _shared_labels(reports: list[NodeReport]) -> dict[str, str]:
    """Instance-type and node-pool labels that every node of the group carries with the same value."""
    keys = (*INSTANCE_TYPE_LABELS[:1], *NODE_POOL_LABELS)
    shared: dict[str, str] = {}
    for key in keys:
        values = {r.node.labels.get(key) for r in reports}
        if len(values) == 1 and None not in values:
            shared[key] = values.pop()  # type: ignore[assignment]
    return shared


def group_nodes(reports: list[NodeReport]) -> list[NodeGroup]:
    """Accelerator nodes grouped by (shape, usable fabric, NIC count), largest group first."""
    buckets: dict[tuple[str, str, int], list[NodeReport]] = defaultdict(list)
    for report in reports:
        node = report.node
        if not (node.gpu_allocatable or node.gpu_capacity):
            continue
        shape = report.shape or node.instance_type or "unknown"
        usable = report.expected.fabric if report.expected and report.fabric_ready else FabricName.SOCKET
        buckets[(shape, usable.value, usable_nics(report))].append(report)
    groups = []
    for (shape, fabric, nics), members in buckets.items():
        first = members[0]
        notes = []
        expected = first.expected.fabric if first.expected else None
        if expected is not None and expected.value != fabric:
            notes.append(f"these nodes cannot use {expected.value} (see their verdicts): planning {fabric}")
        gpus = min(r.node.gpu_allocatable or 0 for r in members)
        key_nics = f"{fabric}={nics}" if nics else fabric
        groups.append(
            NodeGroup(
                key=f"{shape}/{key_nics}",
                shape=first.shape,
                source=first.node.source,
                provider=first.node.provider,
                fabric=FabricName(fabric),
                expected_fabric=expected,
                fabric_nics=nics,
                gpus_per_node=gpus,
                nodes=sorted(r.node.name for r in members),
                zones=sorted({r.node.zone for r in members if r.node.zone}),
                selector=_shared_labels(members) if first.node.source == "kubernetes" else {},
                representative_labels=dict(first.node.labels),
                notes=notes,
            )
        )
    return sorted(groups, key=lambda g: (-len(g.nodes), g.key))
