"""Typed, immutable models of the catalog: instance shapes, fabrics, bandwidth baselines, node-label rules.

The data lives in ``catalog/data/*.yaml`` (loaded by ``loader.py``); lookups live in ``lookup.py`` and
``baselines.py``. Every entry carries ``Provenance``: where the fact comes from (a seed document, a vendor
page, a reference implementation, or one of our own measurements), so a reader can check it.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpufabric.catalog.names import Cloud, FabricName
from gpufabric.collectives import EngineCollective

NetworkFamily = Literal["socket", "ib", "ofi", "tcpx", "tcpxo", "gib"]
"""NCCL's network as the doctor classifies a log (results.attestation.NetworkKind without 'other')."""
AcceleratorKind = Literal["nvidia-gpu", "habana-gaudi", "aws-trainium"]
ProvenanceKind = Literal["seed", "vendor-doc", "reference-implementation", "public-code", "measurement"]
Collective = EngineCollective  # the names are defined once, in gpufabric.collectives


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


SEED_SOURCES: dict[str, str] = {
    "000_ad727619b5058053.txt": "SkyPilot's EFA guide",
    "001_1cfeb4405eda87d2.txt": "SkyPilot's EFA guide (Chinese edition, with nccl_efa.yaml)",
    "002_f1aa62e1f349527f.txt": "AWS's P3dn EFA blog",
    "003_6daea02de48545cc.txt": "SkyPilot's GCP/GKE GPU networking guide",
    "004_803c6e2d2c32491a.txt": "Habana's Gaudi EFA blog",
}
"""The public documents the catalog's ``seed`` provenance files are copies of, by the name users know."""
_SEED_WORDS = re.compile(r"\b(?:[Ss]eeds?[ _]?(?P<n>00[0-4])|(?P<file>00[0-4]_[0-9a-f]{16}\.txt))\b")


def public_source(text: str) -> str:
    """``text`` with each seed file name or "seed 00N" replaced by the public document's name."""

    def name(match: re.Match[str]) -> str:
        if match["file"]:
            return SEED_SOURCES[match["file"]]
        return next(v for k, v in SEED_SOURCES.items() if k.startswith(match["n"]))

    return _SEED_WORDS.sub(name, text)


def public_data(data: Any) -> Any:
    """A dumped model (dicts, lists, strings) with every seed file name as its public document's name."""
    if isinstance(data, str):
        return public_source(data)
    if isinstance(data, list):
        return [public_data(item) for item in data]
    if isinstance(data, dict):
        return {
            key: "public-guide" if key == "kind" and value == "seed" else public_data(value)
            for key, value in data.items()
        }
    return data


class Provenance(_Frozen):
    """Where a fact comes from. ``ref`` is a source file name (kind ``seed``: a copy of a public guide, see
    ``SEED_SOURCES``), a URL, or a measurement id."""

    kind: ProvenanceKind
    ref: str
    note: str = ""

    @property
    def source(self) -> str:
        """The source as users know it: the public guide's name for a seed file, else ``ref``."""
        return SEED_SOURCES.get(self.ref, self.ref) if self.kind == "seed" else self.ref

    def __str__(self) -> str:
        kind = "public guide" if self.kind == "seed" else self.kind
        return f"{kind}: {self.source}" + (f" ({public_source(self.note)})" if self.note else "")


class Fabric(_Frozen):
    """A transport: what turns it on and what turns it off for an A/B run (the NCCL log lines that show it
    are ``nccl_logs.patterns``', by ``nccl_net`` and ``network``)."""

    name: FabricName
    scope: Literal["inter-node", "intra-node"]
    title: str
    description: str
    nccl_net: str | None = Field(
        default=None, description="name NCCL prints in 'Using network X' (NCCL_NET value) when active"
    )
    aliases: tuple[str, ...] = Field(
        default=(),
        description="other spellings every command accepts (tcpx, ib, rdma ...); see resolve_fabric",
    )
    network: NetworkFamily | None = Field(
        default=None,
        description="the NCCL network family that carries it between nodes (how doctor recognises it in a "
        "log); None for intra-node fabrics",
    )
    plugin: str | None = Field(
        default=None,
        description="the external NCCL net plugin it needs (libnccl-net*.so), None when built in",
    )
    enable_env: dict[str, str] = Field(
        default_factory=dict, description="environment common to every shape using this fabric"
    )
    tuning_env: dict[str, str] = Field(
        default_factory=dict, description="published NCCL tuning for this fabric (seeds, vendor examples)"
    )
    off_env: dict[str, str] = Field(
        default_factory=dict, description="environment of the fabric-off profile for A/B runs"
    )
    off_unset: tuple[str, ...] = Field(
        default=(), description="variables (or NAME_ prefixes ending in '_') the off profile removes"
    )
    off_description: str = ""
    provenance: tuple[Provenance, ...] = Field(min_length=1)


class InstanceType(_Frozen):
    """One instance type / node shape and the fabric facts the planner needs about it."""

    name: str
    cloud: Cloud
    aliases: tuple[str, ...] = Field(default=(), description="other spellings, e.g. ml.p4d.24xlarge")
    accelerator: str = Field(description="accelerator model as SkyPilot names it, e.g. A100, H100, L40S")
    accelerator_kind: AcceleratorKind = "nvidia-gpu"
    accelerator_count: int = Field(ge=1)
    fabric: FabricName = Field(description="fastest inter-node fabric; socket when there is none")
    nic_count: int | None = Field(
        default=None,
        ge=0,
        description="fabric NICs: max EFA interfaces, data NICs (TCPX/TCPXO), RDMA NICs or HCAs; "
        "None = supported but the count is not in our sources",
    )
    nic_gbps: float | None = Field(default=None, gt=0, description="line rate of one fabric NIC")
    network_gbps: float | None = Field(default=None, gt=0, description="instance network bandwidth")
    extra_nics: int = Field(default=0, ge=0, description="non-fabric NICs: GCP mgmt NIC / gVNIC")
    intra_node: FabricName | None = Field(default=None, description="nvlink or pcie; None for non-NVIDIA")
    k8s_accelerator_resource: str = "nvidia.com/gpu"
    k8s_fabric_resource: str | None = Field(
        default=None, description="extended resource carrying the fabric, e.g. vpc.amazonaws.com/efa"
    )
    efa_device_rdma: bool = Field(
        default=False,
        description="EFA RDMA (GPUDirect / Peer Direct) supported: set FI_EFA_USE_DEVICE_RDMA=1",
    )
    fabric_env: dict[str, str] = Field(
        default_factory=dict, description="shape-specific environment on top of the fabric's own"
    )
    efa_with_ena_every: int | None = Field(
        default=None,
        description="AWS p5/p5e rule: network card i gets InterfaceType 'efa' (EFA with ENA) when "
        "i % N == 0 and 'efa-only' otherwise",
    )
    provenance: tuple[Provenance, ...] = Field(min_length=1)
    notes: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _fabric_needs_nics(self) -> InstanceType:
        if self.fabric is FabricName.SOCKET and self.nic_count:
            raise ValueError(f"{self.name}: a socket-only shape has no fabric NICs (nic_count must be 0)")
        if self.fabric in (FabricName.NVLINK, FabricName.PCIE):
            raise ValueError(f"{self.name}: fabric must be an inter-node fabric, not {self.fabric}")
        return self

    @property
    def has_fabric(self) -> bool:
        """True when the shape has something faster than TCP sockets between nodes."""
        return self.fabric is not FabricName.SOCKET

    @property
    def accelerators(self) -> str:
        """``A100:8`` - the SkyPilot spelling used in seed 000's table."""
        return f"{self.accelerator}:{self.accelerator_count}"


class InstanceListing(_Frozen):
    """``gpufabric catalog list``: the instance types of one cloud (``cloud``, as given) or all."""

    cloud: str | None = None
    instances: list[InstanceType]


class BaselinePoint(_Frozen):
    size_bytes: int = Field(gt=0)
    busbw_gbps: float = Field(ge=0)


class BaselineCurve(_Frozen):
    """A published or measured busbw-vs-size curve for one configuration."""

    id: str
    instance: str
    collective: Collective
    nodes: int = Field(ge=1)
    gpus_per_node: int = Field(ge=1)
    platform: Literal["vm", "kubernetes", "skypilot", "slurm", "docker"]
    fabric: FabricName
    fabric_nics: int = Field(ge=0, description="fabric NICs in use during the run (0 = fabric off)")
    variant: str = Field(description="stable short name: efa-x4, efa-x1, socket, tcpx, rdma ...")
    default: bool = Field(description="the best-tier configuration of this instance (fabric on, all NICs)")
    metric: Literal["busbw", "unspecified"] = "busbw"
    tolerance: float = Field(gt=0, lt=1, description="relative tolerance at sizes >= small_size_limit")
    small_size_tolerance: float = Field(gt=0, lt=1)
    small_size_limit_bytes: int = Field(gt=0)
    points: tuple[BaselinePoint, ...] = Field(min_length=1)
    provenance: tuple[Provenance, ...] = Field(min_length=1)
    notes: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _sorted_unique_sizes(self) -> BaselineCurve:
        sizes = [p.size_bytes for p in self.points]
        if sizes != sorted(set(sizes)):
            raise ValueError(f"baseline {self.id}: sizes must be strictly increasing")
        return self

    def tolerance_at(self, size_bytes: int) -> float:
        return self.tolerance if size_bytes >= self.small_size_limit_bytes else self.small_size_tolerance


class Baseline(_Frozen):
    """What busbw to expect at one (instance, collective, nodes, size), and how far off is still normal."""

    instance: str
    collective: Collective
    nodes: int
    size_bytes: int
    busbw_gbps: float
    tolerance: float = Field(description="relative; the accepted range is busbw x (1 +/- tolerance)")
    variant: str
    fabric: FabricName
    fabric_nics: int
    interpolated: bool = Field(description="True when the size falls between two published sizes")
    curve_ids: tuple[str, ...]
    provenance: tuple[Provenance, ...]

    @property
    def low_gbps(self) -> float:
        return self.busbw_gbps * (1 - self.tolerance)

    @property
    def high_gbps(self) -> float:
        return self.busbw_gbps * (1 + self.tolerance)

    def contains(self, busbw_gbps: float) -> bool:
        return self.low_gbps <= busbw_gbps <= self.high_gbps


class NodeLabelRule(_Frozen):
    """How a Kubernetes provider's nodes are recognised and where the shape name sits in their labels."""

    provider: str = Field(description="eks, gke, aks, nebius, coreweave, together, oke")
    cloud: Cloud
    label_prefixes: tuple[str, ...] = Field(min_length=1, description="any label key with one = match")
    instance_type_labels: tuple[str, ...] = ("node.kubernetes.io/instance-type",)
    strip_prefixes: tuple[str, ...] = Field(default=(), description="e.g. HyperPod's 'ml.'")
    provenance: tuple[Provenance, ...] = Field(min_length=1)


class NodeDetection(_Frozen):
    """The result of matching one node's labels: provider, shape, and the fabric variant to plan."""

    provider: str
    cloud: Cloud
    instance: InstanceType | None
    fabric: FabricName
    matched_by: str = Field(description="which label decided the shape, or why none did")
