"""``NodeShape``: the hardware facts of one node that decide how fast its collectives can be.

Units are fixed and named in every field: link and NIC rates in Gbit/s as vendors and sysfs print them
(``rate_gbps``), NVLink per-link bandwidth in GB/s per direction as NVIDIA's tables print it
(``link_gbytes_per_s``). Unknown is ``None``: the expected-performance model names the missing fact
instead of inventing a number.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


ShapeSource = Literal["detected", "snapshot", "catalog", "nccl-log", "given"]


class NicKind(StrEnum):
    """What a NIC is to NCCL: which net transport can drive it."""

    INFINIBAND = "infiniband"  # an RDMA device whose link layer is InfiniBand
    ROCE = "roce"  # an RDMA device whose link layer is Ethernet
    EFA = "efa"  # AWS Elastic Fabric Adapter (libfabric's efa provider)
    ETHERNET = "ethernet"  # a plain netdev (gVNIC, ENA, virtio, veth): NCCL's Socket transport or TCPX


class LinkKind(StrEnum):
    """How two GPUs of one node reach each other (nvidia-smi topo -m's words, grouped)."""

    NVLINK = "nvlink"  # NV# : direct NVLink, or through NVSwitch
    PCIE_SWITCH = "pcie-switch"  # PIX / PXB : through PCIe switches only
    PCIE_HOST = "pcie-host"  # PHB / NODE : through a host bridge of one CPU socket
    CPU_INTERCONNECT = "cpu-interconnect"  # SYS : across CPU sockets (QPI/UPI/xGMI)


class PcieFacts(_Frozen):
    """One PCIe link as the kernel reports it (current, not maximum: a degraded link shows here)."""

    generation: int | None = Field(default=None, ge=1, le=7, description="PCIe generation, e.g. 5")
    width: int | None = Field(default=None, ge=1, le=32, description="lanes, e.g. 16")
    max_generation: int | None = Field(default=None, ge=1, le=7)
    max_width: int | None = Field(default=None, ge=1, le=32)


class GpuFacts(_Frozen):
    """One GPU."""

    index: int = Field(ge=0)
    name: str = Field(description="the driver's product name, e.g. 'NVIDIA H100 80GB HBM3'")
    memory_gib: float | None = Field(default=None, gt=0)
    pci_bus_id: str | None = None
    numa_node: int | None = None
    pcie: PcieFacts = PcieFacts()


class NvLinkFacts(_Frozen):
    """NVLink inside the node. ``pair_links[i][j]`` is the active links between GPU i and j (0 on the
    diagonal); with NVSwitch every pair reads the GPU's whole link count, as nvidia-smi's NV18 does."""

    generation: int | None = Field(default=None, ge=1, le=6)
    links_per_gpu: int | None = Field(default=None, ge=0, description="active NVLinks of one GPU")
    link_gbytes_per_s: float | None = Field(
        default=None, gt=0, description="one link, one direction, GB/s (H100/H200 NVLink4: 25)"
    )
    nvswitch: bool | None = Field(default=None, description="every GPU reaches every other at full rate")
    pair_links: tuple[tuple[int, ...], ...] = ()


class NicFacts(_Frozen):
    """One network device NCCL could use."""

    name: str = Field(description="the device as NCCL names it: mlx5_0, rdmap16s27, eth0 ...")
    kind: NicKind
    rate_gbps: float | None = Field(default=None, gt=0, description="link rate, Gbit/s, as sysfs reports it")
    netdev: str | None = Field(default=None, description="the Ethernet interface behind an RDMA device")
    driver: str | None = Field(default=None, description="the kernel driver: mlx5_core, efa, ena, gve ...")
    port: int | None = None
    state: str | None = Field(default=None, description="ACTIVE, DOWN, up, down ... as the kernel says")
    pci_bus_id: str | None = None
    numa_node: int | None = None
    pcie: PcieFacts = PcieFacts()
    near_gpus: tuple[int, ...] = Field(default=(), description="GPUs behind the same PCIe switch")
    virtual: bool = Field(default=False, description="loopback, veth, bridge, docker: carries no fabric")


class NodeShape(_Frozen):
    """Everything the expected-performance model needs to know about one node."""

    source: ShapeSource
    hostname: str | None = None
    instance_type: str | None = Field(default=None, description="the cloud's name for this shape, if known")
    cloud: str | None = None
    gpu_model: str | None = Field(default=None, description="short model name, e.g. H100, H200, A100, B200")
    gpus: tuple[GpuFacts, ...] = ()
    gpu_count: int | None = Field(default=None, ge=0, description="when only the count is known (catalog)")
    nvlink: NvLinkFacts | None = None
    gpu_links: tuple[tuple[LinkKind | None, ...], ...] = Field(
        default=(), description="how each GPU pair is connected (nvidia-smi topo -m), None on the diagonal"
    )
    nics: tuple[NicFacts, ...] = ()
    notes: tuple[str, ...] = Field(default=(), description="what could not be read, and why")

    @property
    def gpus_per_node(self) -> int | None:
        return len(self.gpus) if self.gpus else self.gpu_count

    def fabric_nics(self) -> tuple[NicFacts, ...]:
        """The NICs a fabric could use: RDMA and EFA devices; plain Ethernet only when there are none."""
        rdma = tuple(n for n in self.nics if n.kind is not NicKind.ETHERNET and not n.virtual)
        if rdma:
            return rdma
        return tuple(n for n in self.nics if not n.virtual)
