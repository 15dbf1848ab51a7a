"""The network-tier planner: (shape, platform, nodes, tier) -> a typed ``Plan``. Pure (but
``write_plan_files``, which writes a plan's files where asked); touches no cloud.

Public API (stable names):
    ``plan(request: PlanRequest) -> Plan``
    ``ab_profiles(nodes=, instance_type=) -> ABProfiles``  fabric-on / fabric-off env for A/B runs
    ``merge_pod_config(plan_patch, user) -> (merged, conflicts)``  deep merge, the user wins; the
        Kubernetes launcher reuses it.
    ``export_files(plan) -> {file name: text}``  every document in its own file, and
        ``write_plan_files(out, plan) -> [names]`` those files written under ``out`` (``plan --out DIR``);
        ``export_kind(plan, kind)`` one of ``EXPORT_KINDS`` alone (``plan --format sky|k8s|...``).
    ``parse_node_labels``, ``parse_accelerator``, ``read_pod_config``  the ``plan`` flags that are more
        than a word, read into a ``PlanRequest``'s types (``inputs.py``).
    ``PlanRequest``, ``Plan``, ``Platform``, ``Tier``, ``Privilege``

Modules: ``resolve`` (shape, tier, fabric, NIC count, env, off profile), one renderer per platform
(``aws_vm``, ``gcp_vm``, ``kubernetes`` + ``gke``, ``skypilot``, ``slurm``, ``docker``), ``merge``,
``export`` (the documents as the files a user applies).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (gpufabric._lazy)
    from gpufabric.planner.ab import (
        CONFIG_FABRIC,
        CONFIG_SIDE_NAMES,
        ABProfiles,
        FabricProfile,
        ab_profiles,
        config_profiles,
        side_names,
    )
    from gpufabric.planner.api import plan
    from gpufabric.planner.export import EXPORT_KINDS, export_files, export_kind, write_plan_files
    from gpufabric.planner.inputs import parse_accelerator, parse_node_labels, read_pod_config
    from gpufabric.planner.merge import merge_pod_config
    from gpufabric.planner.model import Plan, PlanRequest, Platform, Privilege, Tier
lazy_package(__name__)

__all__ = [
    "CONFIG_FABRIC",
    "CONFIG_SIDE_NAMES",
    "EXPORT_KINDS",
    "ABProfiles",
    "FabricProfile",
    "Plan",
    "PlanRequest",
    "Platform",
    "Privilege",
    "Tier",
    "ab_profiles",
    "config_profiles",
    "export_files",
    "export_kind",
    "merge_pod_config",
    "parse_accelerator",
    "parse_node_labels",
    "plan",
    "read_pod_config",
    "side_names",
    "write_plan_files",
]
