"""Which catalog shape a node is, and what fabric that shape should advertise on this scheduler.

Kubernetes nodes are matched through the catalog's node-label rules (``detect_node_shape``); Slurm
nodes through their features (AWS ParallelCluster tags each node with its instance type, e.g.
``p4d.24xlarge``), looked up with ``get_instance``. The expectation reads the catalog's NIC counts:
one EFA device per interface, GKE additional networks = data NICs + the extra gVNIC beyond eth0.
"""

from __future__ import annotations

from gpufabric.catalog import FabricName, InstanceType, detect_node_shape, get_fabric, get_instance
from gpufabric.errors import CatalogError
from gpufabric.inventory.kube_nodes import EFA_RESOURCE
from gpufabric.inventory.model import FabricExpectation, NodeInfo

EFA_GRES = "efa"  # the GRES name a Slurm admin gives EFA devices when they count them
GKE_NETWORK_FABRICS = (FabricName.GPUDIRECT_TCPX, FabricName.GPUDIRECT_TCPXO, FabricName.GPUDIRECT_RDMA)
SHORT_FABRIC = {
    FabricName.EFA: "EFA",
    FabricName.GPUDIRECT_TCPX: "TCPX",
    FabricName.GPUDIRECT_TCPXO: "TCPXO",
    FabricName.GPUDIRECT_RDMA: "GPUDirect-RDMA",
    FabricName.INFINIBAND: "InfiniBand",
    FabricName.ROCE: "RoCE",
    FabricName.SOCKET: "sockets",
}


def short_fabric(fabric: FabricName) -> str:
    return SHORT_FABRIC.get(fabric, fabric.value)


def match_shape(node: NodeInfo) -> tuple[InstanceType | None, str]:
    """The node's catalog shape (or None) and one line saying what decided it, or why nothing did."""
    if node.source == "kubernetes":
        detection = detect_node_shape(node.labels)
        if detection is None:
            return None, "no provider label recognised (EKS, GKE, AKS, Nebius, CoreWeave, Together, OKE)"
        return detection.instance, detection.matched_by
    for feature in node.features:
        # ParallelCluster spells the type both ways: p4d.24xlarge and p4d-24xlarge.
        for spelling in (feature, feature.replace("-", ".", 1)):
            try:
                return get_instance(spelling), f"Slurm feature {feature}"
            except CatalogError:
                continue
    if node.features:
        return None, f"no Slurm feature names a catalog shape (features: {','.join(node.features)})"
    return None, "the Slurm node has no features naming its instance type"


def expectation(node: NodeInfo, shape: InstanceType) -> FabricExpectation:
    """What a node of ``shape`` should advertise for its fabric on the node's scheduler."""
    resource: str | None = None
    networks: int | None = None
    if node.source == "kubernetes":
        resource = shape.k8s_fabric_resource
        if node.provider == "gke" and shape.fabric in GKE_NETWORK_FABRICS and shape.nic_count is not None:
            # eth0 sits on the default network; every other NIC (data NICs, the RDMA shapes' extra
            # gVNIC) is one GKE additional network attached to the node.
            networks = shape.nic_count + max(shape.extra_nics - 1, 0)
    elif shape.fabric is FabricName.EFA and EFA_GRES in node.fabric_resources:
        resource = EFA_GRES
    return FabricExpectation(
        shape=shape.name,
        fabric=shape.fabric,
        fabric_title=get_fabric(shape.fabric).title,
        accelerator=shape.accelerator,
        gpus=shape.accelerator_count,
        nics=shape.nic_count,
        resource=resource,
        gke_networks=networks,
    )


def advertised_summary(node: NodeInfo) -> str | None:
    """Short text for the FABRIC column: what the node really advertises."""
    parts = [
        f"efa={count}" if name == EFA_RESOURCE else f"{name}={count}"
        for name, count in node.fabric_resources.items()
    ]
    if node.gke_networks:
        parts.append(f"networks={len(node.gke_networks)}")
    return ",".join(parts) or None
