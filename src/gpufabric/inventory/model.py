"""Typed models of a cluster inventory: what each node offers, what its shape should offer, and verdicts.

``NodeInfo`` is source-neutral: the Kubernetes reader (``kube_nodes.py``) and the Slurm reader
(``slurm.py``) both produce it. ``FabricExpectation`` is what the catalog says a node of that shape and
GPU count should advertise (``expect.py``); ``Finding`` is one verdict line, per node or for the whole
cluster (``verdicts.py``); ``NodeGroup`` gathers nodes of one shape and fabric state for the planner
(``groups.py``). ``Inventory`` is the whole answer that ``gpufabric nodes`` renders.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.catalog import FabricName


class Scheduler(StrEnum):
    """Where the nodes are (``--on``)."""

    KUBERNETES = "kubernetes"
    SLURM = "slurm"


NodeSource = Literal["kubernetes", "slurm"]
Status = Literal["ok", "info", "warn", "fail"]
STATUS_ORDER: dict[str, int] = {"ok": 0, "info": 1, "warn": 2, "fail": 3}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NodeInfo(_Model):
    """One node as its scheduler reports it, reduced to what matters for the fabric."""

    name: str
    source: NodeSource
    provider: str | None = Field(
        default=None, description="eks, gke, aks, nebius, coreweave, together, oke (catalog rules); None"
    )
    instance_type: str | None = Field(
        default=None, description="as the node labels or Slurm features spell it, e.g. ml.p4d.24xlarge"
    )
    zone: str | None = None
    node_pool: str | None = Field(default=None, description="EKS node group, GKE node pool, Slurm partition")
    gpu_type: str | None = Field(default=None, description="product label or Slurm GRES type, as reported")
    gpu_resource: str | None = Field(
        default=None, description="nvidia.com/gpu, habana.ai/gaudi, gres gpu ..."
    )
    gpu_allocatable: int | None = Field(default=None, description="None when the node advertises none")
    gpu_capacity: int | None = None
    fabric_resources: dict[str, int] = Field(
        default_factory=dict,
        description="allocatable fabric resources (vpc.amazonaws.com/efa, rdma/ib ...) or fabric GRES",
    )
    gke_networks: list[str] = Field(
        default_factory=list,
        description="GKE multi-network Networks the node is attached to (networking.gke.io.networks/* "
        "resources and the north-interfaces annotation), without 'default' and the '.IP' twins",
    )
    cpus: int | None = None
    memory_mb: int | None = None
    ready: bool | None = Field(default=None, description="Kubernetes Ready condition; Slurm: not DOWN/DRAIN")
    schedulable: bool = True
    state: str | None = Field(default=None, description="Slurm State=, or Kubernetes Ready/NotReady")
    partitions: list[str] = Field(default_factory=list, description="Slurm partitions")
    features: list[str] = Field(default_factory=list, description="Slurm AvailableFeatures")
    labels: dict[str, str] = Field(default_factory=dict, description="Kubernetes node labels")

    def fabric_count(self, resource: str) -> int:
        """Allocatable count of one fabric resource; 0 when the node does not advertise it."""
        return self.fabric_resources.get(resource, 0)


class FabricExpectation(_Model):
    """What the catalog says a node of this shape should advertise for its fabric."""

    shape: str = Field(description="catalog instance name")
    fabric: FabricName
    fabric_title: str
    accelerator: str
    gpus: int = Field(description="accelerators the shape has")
    nics: int | None = Field(description="fabric NICs of the shape; None = not in our sources")
    resource: str | None = Field(
        default=None, description="Kubernetes resource (or Slurm GRES) carrying the fabric, if any"
    )
    gke_networks: int | None = Field(
        default=None, description="GKE additional networks the node must be attached to (data NICs + gVNIC)"
    )

    @property
    def summary(self) -> str:
        """Short text for the EXPECTED column: ``efa=4``, ``networks=9``, ``rdma/ib``, ``socket``."""
        if self.fabric is FabricName.EFA and self.nics is not None:
            return f"efa={self.nics}"
        if self.resource:
            return self.resource
        if self.gke_networks is not None:
            return f"networks={self.gke_networks}"
        if self.fabric is FabricName.SOCKET:
            return "socket"
        return self.fabric.value


class Finding(_Model):
    """One verdict: a status and one line saying what is wrong (or right) and the fix."""

    status: Status
    message: str
    node: str | None = Field(default=None, description="None for a cluster-level finding")


class NodeReport(_Model):
    """A node, the fabric its shape should give, and the verdicts on it."""

    node: NodeInfo
    shape: str | None = Field(default=None, description="catalog instance name, None when unknown")
    matched_by: str | None = Field(default=None, description="which label/feature decided the shape")
    expected: FabricExpectation | None = None
    fabric_ready: bool = Field(description="the node can give its shape's fabric right now")
    findings: list[Finding] = Field(default_factory=list)

    @property
    def status(self) -> Status:
        if not self.findings:
            return "ok"
        worst = max(self.findings, key=lambda f: STATUS_ORDER[f.status])
        return worst.status


class NodeGroup(_Model):
    """Nodes of one shape whose fabric is in the same state: the unit the planner plans for."""

    key: str = Field(description="stable id, e.g. p4d.24xlarge/efa=4")
    shape: str | None
    source: NodeSource
    provider: str | None
    fabric: FabricName = Field(description="the fabric these nodes can use now (socket when it is missing)")
    expected_fabric: FabricName | None = Field(description="the fabric their shape should have")
    fabric_nics: int = Field(description="fabric NICs/resources each node advertises (min over nodes)")
    gpus_per_node: int = Field(description="allocatable accelerators, min over nodes")
    nodes: list[str]
    zones: list[str] = Field(default_factory=list)
    selector: dict[str, str] = Field(
        default_factory=dict, description="labels every node of the group shares that pin a job to it"
    )
    representative_labels: dict[str, str] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


class Inventory(_Model):
    """What ``gpufabric nodes`` answers: every node with its verdicts, cluster findings, node groups."""

    source: NodeSource
    context: str | None = Field(default=None, description="kube context or Slurm cluster, when known")
    selector: str | None = None
    nodes: list[NodeReport]
    findings: list[Finding] = Field(default_factory=list, description="cluster-level findings")
    groups: list[NodeGroup] = Field(default_factory=list)

    @property
    def status(self) -> Status:
        statuses = [r.status for r in self.nodes] + [f.status for f in self.findings]
        return max(statuses, key=lambda s: STATUS_ORDER[s], default="ok")
