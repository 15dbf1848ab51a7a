"""SkyPilot task YAML: ``resources`` with ``network_tier``, ``envs``, and the pod_config or GCP flag.

On Kubernetes the task carries our merged ``pod_config`` (so the EFA count is explicit, SkyPilot issue
#10055); on GCP VMs it sets ``gcp.enable_gpu_direct`` for TCPX shapes, the only VM fabric SkyPilot drives
(``skypilot_limits``: other shapes are planned at ``network_tier: standard`` before this runs). A task
that references the EFA image's paths runs that image (``image_id: docker:...``).
"""

from __future__ import annotations

from typing import Any

from gpufabric.catalog import FabricName
from gpufabric.planner.clouds import cloud_profile
from gpufabric.planner.fabric_env import runs_efa_image
from gpufabric.planner.images import EFA_NCCL_TESTS
from gpufabric.planner.kubernetes import pod_patch
from gpufabric.planner.merge import merge_pod_config
from gpufabric.planner.model import Plan, Tier
from gpufabric.planner.skypilot_limits import NCCL_ALGO_UNRESTRICTED, SKYPILOT_GKE_NCCL_ALGO


def _leave_skypilots_container_runtime(patch: dict[str, Any]) -> None:
    """SkyPilot merges an unnamed container into its own main container, which runs sshd and its runtime
    setup as root: dropping ALL capabilities there would break SkyPilot itself, so only the fabric's added
    capabilities go in (the sidecars, which are ours, keep the full least-privilege context)."""
    main = patch["spec"]["containers"][0]
    context = main.get("securityContext") or {}
    context.pop("allowPrivilegeEscalation", None)
    capabilities = context.get("capabilities") or {}
    capabilities.pop("drop", None)
    if not capabilities:
        context.pop("capabilities", None)
    if not context:
        main.pop("securityContext", None)


def _unrestrict_skypilots_nccl_algo(plan: Plan, patch: dict[str, Any]) -> dict[str, str]:
    """SkyPilot's GKE template sets NCCL_ALGO (TCPXO: Ring,Tree), which survives the pod_config merge and
    rules out NVLS/NVLSTree; Google's newest TCPXO release leaves NCCL_ALGO unset for its tuner. A pod_config
    cannot delete SkyPilot's variable, only replace its value: with '^', NCCL's list that excludes nothing."""
    theirs = SKYPILOT_GKE_NCCL_ALGO.get(plan.fabric)
    if theirs is None or "NCCL_ALGO" in plan.env or plan.tier_planned is not Tier.BEST:
        return {}
    patch["spec"]["containers"][0]["env"].append({"name": "NCCL_ALGO", "value": NCCL_ALGO_UNRESTRICTED})
    plan.warnings.append(
        f"SkyPilot's GKE template sets NCCL_ALGO={theirs} for {plan.fabric.value}; the plan sets "
        f"NCCL_ALGO={NCCL_ALGO_UNRESTRICTED} (NCCL: exclude none = every algorithm, as unset) so that NCCL "
        "and the tuner may pick NVLS/NVLSTree, as Google's TCPXO release notes ask"
    )
    return {"NCCL_ALGO": NCCL_ALGO_UNRESTRICTED}


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
        env_overrides |= _unrestrict_skypilots_nccl_algo(plan, patch)
        _leave_skypilots_container_runtime(patch)
        merged, conflicts = merge_pod_config(patch, plan.request.pod_config)
        plan.conflicts += conflicts
        task["config"] = {"kubernetes": {"pod_config": merged}}
    else:
        resources["infra"] = plan.cloud.value
        if inst is not None:
            resources["instance_type"] = inst.name
        profile = cloud_profile(plan.cloud)
        if profile.skypilot_gpu_direct and plan.fabric is FabricName.GPUDIRECT_TCPX:
            task["config"] = {"gcp": {"enable_gpu_direct": True}}
        elif profile.skypilot_best != "supported" and plan.tier_planned is Tier.BEST:
            plan.warnings.append(
                f"SkyPilot filters {plan.cloud.value} out of `network_tier: best` silently; "
                "use --platform kubernetes on that provider"
            )
    image = plan.request.image
    if image is None and runs_efa_image(plan.request, inst):
        # The task's NCCL_TUNER_PLUGIN path exists in this image (and the image sets LD_LIBRARY_PATH); on an
        # AWS VM SkyPilot runs it on its EFA AMI with --device=/dev/infiniband and IPC_LOCK.
        image = EFA_NCCL_TESTS.ref
    if image:
        resources["image_id"] = f"docker:{image}"
    task["envs"] = {**plan.env, **env_overrides}
    plan.documents["skypilot.task"] = task
    return env_overrides
