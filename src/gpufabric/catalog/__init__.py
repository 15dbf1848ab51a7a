"""The fabric catalog: instance shapes, fabrics, expected bandwidth and Kubernetes node-label rules.

Data lives in ``catalog/data/*.yaml`` (shipped in the package); every entry carries provenance. This is
the public API other areas call; the names below are stable.

Instances
    ``get_instance(name) -> InstanceType``  case-insensitive, aliases such as ``ml.p4d.24xlarge`` work;
        unknown names raise ``CatalogError`` with "did you mean" suggestions.
    ``list_instances(cloud=None) -> list[InstanceType]``  in data-file order (AWS in seed 000's order);
        ``InstanceListing`` is that list as the document ``catalog list`` renders.
    ``find_by_accelerator(accelerator, count, cloud=None) -> list[InstanceType]``  fastest fabric first.

Fabrics
    ``get_fabric(name) -> Fabric``  ``enable_env``, ``tuning_env``, the A/B ``off_env``/``off_unset``
        profile, ``nccl_net`` (NCCL's name of its network; ``nccl_logs.patterns.network_proof`` gives the
        log lines that prove it).
    ``list_fabrics() -> list[Fabric]``
    ``resolve_fabric(name, option="fabric") -> FabricName``  the one fabric vocabulary: names and aliases
        (``tcpx``, ``ib``, ``rdma``, ``gib`` ...) accepted by every command; ``fabric_spellings()`` lists
        them.

Baselines
    ``expected_busbw(instance, collective, nodes, size_bytes, *, variant=None, platform=None)
        -> Baseline | None``  busbw (GB/s) with a relative tolerance, provenance and whether it was
        interpolated (log2-linear between published sizes only); None when nothing published covers it.
    ``list_baseline_curves(instance=None) -> list[BaselineCurve]``

Kubernetes nodes
    ``match_node_labels(labels) -> InstanceType | None``
    ``detect_node_shape(labels) -> NodeDetection | None``  provider (eks, gke, aks, nebius, coreweave,
        together, oke), shape, fabric and which label decided.

Sources
    ``public_data(dumped)``  a dumped model with every source named as users know it (a public guide's
        name, never the file the catalog keeps it under): what every YAML/JSON output of it shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (gpufabric._lazy)
    from gpufabric.catalog.baselines import expected_busbw, list_baseline_curves
    from gpufabric.catalog.lookup import (
        detect_node_shape,
        fabric_spellings,
        find_by_accelerator,
        get_fabric,
        get_instance,
        list_fabrics,
        list_instances,
        match_node_labels,
        resolve_fabric,
    )
    from gpufabric.catalog.model import (
        Baseline,
        BaselineCurve,
        BaselinePoint,
        Collective,
        Fabric,
        InstanceListing,
        InstanceType,
        NodeDetection,
        NodeLabelRule,
        Provenance,
        public_data,
    )
    from gpufabric.catalog.names import Cloud, FabricName
lazy_package(__name__)

__all__ = [
    "Baseline",
    "BaselineCurve",
    "BaselinePoint",
    "Cloud",
    "Collective",
    "Fabric",
    "FabricName",
    "InstanceListing",
    "InstanceType",
    "NodeDetection",
    "NodeLabelRule",
    "Provenance",
    "detect_node_shape",
    "expected_busbw",
    "fabric_spellings",
    "find_by_accelerator",
    "get_fabric",
    "get_instance",
    "list_baseline_curves",
    "list_fabrics",
    "list_instances",
    "match_node_labels",
    "public_data",
    "resolve_fabric",
]
