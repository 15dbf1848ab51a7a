"""SkyPilot task YAML fragment: ``resources`` with ``network_tier``, ``envs``, and the pod_config or GCP flag.

On Kubernetes the fragment carries our merged ``pod_config`` (so the EFA count is explicit, SkyPilot issue
#10055); on GCP VMs it sets ``gcp.enable_gpu_direct`` for TCPX shapes, the only VM fabric SkyPilot drives.
"""

from __future__ import annotations

from typing import Any

from gpufabric.catalog import Cloud, FabricName
from gpufabric.planner.kubernetes import pod_patch
from gpufabric.planner.merge import merge_pod_config
from gpufabric.planner.model import Plan, Tier


def render_skypilot(plan: Plan, kubernetes: bool) -> dict[str, str]:
    inst = plan.instance
    resources: dict[str, Any] = {"network_tier": plan.tier_planned.value}
    if inst is not None:
        resources["accelerators"] = f"{inst.accelerator}:{plan.gpus_per_node}"
    env_overrides: dict[str, str] = {}
    task: dict[str, Any] = {"resources": resources, "num_nodes": plan.nodes}
    if kubernetes:
        resources["infra"] = "k8s"
        patch, env_overrides = pod_patch(plan)
        merged, conflicts = merge_pod_config(patch, plan.request.pod_config)
        plan.conflicts += conflicts
        task["config"] = {"kubernetes": {"pod_config": merged}}
    else:
        resources["infra"] = plan.cloud.value
        if inst is not None:
            resources["instance_type"] = inst.name
        if plan.cloud is Cloud.GCP and plan.fabric is FabricName.GPUDIRECT_TCPX:
            task["config"] = {"gcp": {"enable_gpu_direct": True}}
        elif plan.cloud is Cloud.GCP and plan.tier_planned is Tier.BEST:
            plan.warnings.append(
                f"SkyPilot drives only GPUDirect-TCPX on GCP VMs; for {plan.fabric.value} use --platform vm "
                "(our GCE bodies) or --platform kubernetes (GKE)"
            )
        elif plan.cloud not in (Cloud.AWS, Cloud.GCP, Cloud.NEBIUS) and plan.tier_planned is Tier.BEST:
            plan.warnings.append(
                f"SkyPilot filters {plan.cloud.value} out of `network_tier: best` silently; "
                "use --platform kubernetes on that provider"
            )
    if plan.request.image:
        resources["image_id"] = f"docker:{plan.request.image}"
    task["envs"] = {**plan.env, **env_overrides}
    plan.documents["skypilot.task"] = task
    return env_overrides
