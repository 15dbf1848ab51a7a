"""Kubernetes ``V1Node`` objects -> ``NodeInfo``: labels, allocatable GPUs and fabric resources, state.

Pure: takes the official client's model objects (as ``CoreV1Api.list_node`` returns them) and reads
them; fetching them lives in ``kube_client.py``. Which label names the GPU type, the zone or the node
pool differs per provider, so each is a short ordered list of the labels the providers document.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from gpufabric.catalog import detect_node_shape
from gpufabric.inventory.model import NodeInfo

# Extended resources that carry a GPU-like accelerator, in the order we prefer them.
ACCELERATOR_RESOURCES = (
    "nvidia.com/gpu",
    "amd.com/gpu",
    "habana.ai/gaudi",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neurondevice",
)
EFA_RESOURCE = "vpc.amazonaws.com/efa"
# Resources that expose a fabric to pods: the AWS EFA device plugin, the RDMA shared-device and SR-IOV
# plugins of the NVIDIA Network Operator (rdma/ib, rdma/shared_ib ...), Together's nvidia.com/rdma_ib.
FABRIC_RESOURCE_PREFIXES = (EFA_RESOURCE, "rdma/", "nvidia.com/rdma", "nvidia.com/hostdev")
GKE_NETWORK_PREFIX = "networking.gke.io.networks/"
GKE_DEFAULT_NETWORK = "default"
GKE_NORTH_INTERFACES = "networking.gke.io/north-interfaces"

GPU_TYPE_LABELS = (
    "nvidia.com/gpu.product",  # NVIDIA GPU feature discovery (GPU Operator)
    "cloud.google.com/gke-accelerator",  # GKE
    "k8s.amazonaws.com/accelerator",  # EKS (eksctl)
    "gpu.nvidia.com/class",  # CoreWeave
    "nebius.com/gpu-name",  # Nebius
    "accelerator",
)
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
NODE_POOL_LABELS = (
    "eks.amazonaws.com/nodegroup",
    "sagemaker.amazonaws.com/instance-group-name",
    "karpenter.sh/nodepool",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
)


def _first(labels: Mapping[str, str], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        if labels.get(key):
            return labels[key]
    return None


def quantity(value: object) -> Decimal | None:
    """A Kubernetes quantity ('8', '1k', '96Gi', '500m') as a number; None when unreadable."""
    if value is None:
        return None
    try:
        from kubernetes.utils import parse_quantity  # optional extra: imported only when nodes are read

        return Decimal(parse_quantity(str(value)))  # type: ignore[no-untyped-call]
    except ValueError:
        return None


def _count(resources: Mapping[str, Any], key: str) -> int | None:
    value = quantity(resources.get(key)) if key in resources else None
    return int(value) if value is not None else None


def gke_networks(allocatable: Mapping[str, Any], annotations: Mapping[str, str]) -> list[str]:
    """GKE multi-network Networks this node is attached to: one ``networking.gke.io.networks/<name>``
    extended resource each (its ``<name>.IP`` twin and the default network skipped), and the networks
    named in the ``networking.gke.io/north-interfaces`` annotation
    (``[{"network": ..., "ipAddress": ...}]``)."""
    names = set()
    for key in allocatable:
        if not key.startswith(GKE_NETWORK_PREFIX):
            continue
        name = key.removeprefix(GKE_NETWORK_PREFIX)
        if name.endswith(".IP") or name == GKE_DEFAULT_NETWORK:
            continue
        names.add(name)
    try:
        interfaces = json.loads(annotations.get(GKE_NORTH_INTERFACES, "") or "[]")
    except ValueError:
        interfaces = []  # a malformed annotation proves nothing either way; the resources still count
    for entry in interfaces if isinstance(interfaces, list) else []:
        if isinstance(entry, dict) and entry.get("network") and entry["network"] != GKE_DEFAULT_NETWORK:
            names.add(str(entry["network"]))
    return sorted(names)


def node_info(node: Any) -> NodeInfo:
    """Read one ``kubernetes.client.V1Node``."""
    meta, status = node.metadata, node.status
    labels: dict[str, str] = dict(meta.labels or {})
    allocatable: dict[str, Any] = dict(status.allocatable or {}) if status else {}
    capacity: dict[str, Any] = dict(status.capacity or {}) if status else {}
    gpu_resource = next((r for r in ACCELERATOR_RESOURCES if r in allocatable or r in capacity), None)
    fabric = {
        key: _count(allocatable, key) or 0
        for key in sorted(set(allocatable) | set(capacity))
        if key.startswith(FABRIC_RESOURCE_PREFIXES)
    }
    ready = None
    for condition in (status.conditions or []) if status else []:
        if condition.type == "Ready":
            ready = condition.status == "True"
    memory = quantity(allocatable.get("memory"))
    detection = detect_node_shape(labels)
    return NodeInfo(
        name=meta.name,
        source="kubernetes",
        provider=detection.provider if detection else None,
        instance_type=_first(labels, INSTANCE_TYPE_LABELS),
        zone=_first(labels, ZONE_LABELS),
        node_pool=_first(labels, NODE_POOL_LABELS),
        gpu_type=_first(labels, GPU_TYPE_LABELS),
        gpu_resource=gpu_resource,
        gpu_allocatable=_count(allocatable, gpu_resource) if gpu_resource else None,
        gpu_capacity=_count(capacity, gpu_resource) if gpu_resource else None,
        fabric_resources=fabric,
        gke_networks=gke_networks(allocatable, dict(meta.annotations or {})),
        cpus=_count(allocatable, "cpu"),
        memory_mb=int(memory / (1024 * 1024)) if memory is not None else None,
        ready=ready,
        schedulable=not bool(node.spec and node.spec.unschedulable),
        state=None if ready is None else ("Ready" if ready else "NotReady"),
        labels=labels,
    )
