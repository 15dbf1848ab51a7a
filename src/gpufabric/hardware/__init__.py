"""What a node is, read from the node itself: GPUs, NVLink, PCIe, NICs and their affinity.

``shape`` holds the typed facts every consumer shares (``NodeShape``): the expected-performance model
(``gpufabric.expect``), doctor, certify and the tests read it, whether it came from a live node
(``snapshot``), a captured snapshot file, a catalog instance type, or an NCCL log's own topology lines.
A fact nobody could read is ``None``, never a guess: the model then says which fact is missing.
"""

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

__all__ = [
    "GpuFacts",
    "LinkKind",
    "NicFacts",
    "NicKind",
    "NodeShape",
    "NvLinkFacts",
    "PcieFacts",
    "ShapeSource",
]
