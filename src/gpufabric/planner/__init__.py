"""The network-tier planner: (shape, platform, nodes, tier) -> a typed ``Plan``. Pure; touches no cloud.

Public API (stable names):
    ``plan(request: PlanRequest) -> Plan``
    ``ab_profiles(nodes=, instance_type=) -> ABProfiles``  fabric-on / fabric-off env for A/B runs
    ``merge_pod_config(plan_patch, user) -> (merged, conflicts)``  deep merge, the user wins; the
        Kubernetes launcher reuses it.
    ``PlanRequest``, ``Plan``, ``Platform``, ``Tier``, ``Privilege``

Modules: ``resolve`` (shape, tier, fabric, NIC count, env, off profile), one renderer per platform
(``aws_vm``, ``gcp_vm``, ``kubernetes`` + ``gke``, ``skypilot``, ``slurm``, ``docker``), ``merge``.
"""

from __future__ import annotations

from gpufabric.planner.ab import ABProfiles, FabricProfile, ab_profiles
from gpufabric.planner.api import plan
from gpufabric.planner.merge import merge_pod_config
from gpufabric.planner.model import Plan, PlanRequest, Platform, Privilege, Tier

__all__ = [
    "ABProfiles",
    "FabricProfile",
    "Plan",
    "PlanRequest",
    "Platform",
    "Privilege",
    "Tier",
    "ab_profiles",
    "merge_pod_config",
    "plan",
]
