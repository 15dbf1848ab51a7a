"""The catalog's two vocabularies, clouds and fabrics, apart from its models: ``gpufabric --help`` and
``--cloud``/``--expect`` checks name them without importing pydantic and every catalog model.
"""

from __future__ import annotations

from enum import StrEnum


class Cloud(StrEnum):
    """Who sells the shape. ``aws``/``gcp`` have VM renderers; the others are InfiniBand/RoCE providers."""

    AWS = "aws"
    GCP = "gcp"
    AZURE = "azure"
    NEBIUS = "nebius"
    COREWEAVE = "coreweave"
    TOGETHER = "together"
    OCI = "oci"


class FabricName(StrEnum):
    """Transport technologies: inter-node first, then the intra-node ones."""

    EFA = "efa"
    GPUDIRECT_TCPX = "gpudirect-tcpx"
    GPUDIRECT_TCPXO = "gpudirect-tcpxo"
    GPUDIRECT_RDMA = "gpudirect-rdma"
    INFINIBAND = "infiniband"
    ROCE = "roce"
    SOCKET = "socket"
    NVLINK = "nvlink"
    PCIE = "pcie"
