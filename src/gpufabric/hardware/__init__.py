"""What a node is, read from the node itself: GPUs, NVLink, PCIe, NICs and their affinity; and what its
NICs carried.

``shape`` holds the typed facts every consumer shares (``NodeShape``): the expected-performance model
(``gpufabric.expect``), doctor, certify and the tests read it, whether it came from a live node
(``detect_node``), a captured snapshot file (``load_snapshot``), a catalog instance type, or an NCCL log's
own topology lines. A fact nobody could read is ``None``, never a guess: the model then says which fact
is missing.

One concept per module: ``pci`` (PCIe links, switches), ``nics`` (RDMA devices and netdevs in sysfs),
``nvml`` and ``nvlink`` (GPUs and their links), ``topo_matrix`` (``nvidia-smi topo -m``), ``cloud`` (the
metadata services), ``detect`` (all of them into a ``snapshot.NodeSnapshot``), ``counters`` (byte
counters) and ``attribution`` (which NIC carried the bytes).
"""

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (gpufabric._lazy)
    from gpufabric.hardware.attribution import (
        HostTraffic,
        NicShare,
        TrafficAttribution,
        attribute,
        attribute_host,
        attribute_moved,
    )
    from gpufabric.hardware.cloud import CloudIdentity, MetadataEndpoints, cloud_identity
    from gpufabric.hardware.counters import CounterSample, NicBytes, moved, read_counters
    from gpufabric.hardware.detect import build_shape, detect_node, gpu_model, with_affinity
    from gpufabric.hardware.nics import read_nics
    from gpufabric.hardware.nvlink import NvLinkRecord, facts_from_pairs, nvlink_facts
    from gpufabric.hardware.shape import (
        GpuFacts,
        LinkKind,
        NicFacts,
        NicKind,
        NodeShape,
        NvLinkFacts,
        PcieFacts,
        ShapeSource,
    )
    from gpufabric.hardware.snapshot import NodeSnapshot, load_snapshot, save_snapshot
    from gpufabric.hardware.topo_matrix import TopoMatrix, parse_topo_matrix
lazy_package(__name__)

__all__ = [
    "CloudIdentity",
    "CounterSample",
    "GpuFacts",
    "HostTraffic",
    "LinkKind",
    "MetadataEndpoints",
    "NicBytes",
    "NicFacts",
    "NicKind",
    "NicShare",
    "NodeShape",
    "NodeSnapshot",
    "NvLinkFacts",
    "NvLinkRecord",
    "PcieFacts",
    "ShapeSource",
    "TopoMatrix",
    "TrafficAttribution",
    "attribute",
    "attribute_host",
    "attribute_moved",
    "build_shape",
    "cloud_identity",
    "detect_node",
    "facts_from_pairs",
    "gpu_model",
    "load_snapshot",
    "moved",
    "nvlink_facts",
    "parse_topo_matrix",
    "read_counters",
    "read_nics",
    "save_snapshot",
    "with_affinity",
]
