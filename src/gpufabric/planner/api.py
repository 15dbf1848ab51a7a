"""``plan(request) -> Plan``: resolve, render for the platform, redact. Pure: touches no cloud."""

from __future__ import annotations

from typing import Any

from gpufabric.catalog import Cloud, FabricName, get_fabric
from gpufabric.errors import CatalogError, UsageError
from gpufabric.nccl_logs.patterns import network_proof
from gpufabric.planner.clouds import cloud_profile
from gpufabric.planner.docker import render_docker
from gpufabric.planner.fabric_env import HABANA, HABANA_OFF_DESCRIPTION, TRAINIUM
from gpufabric.planner.kubernetes import render_kubernetes
from gpufabric.planner.model import Plan, PlanRequest, Platform, Tier
from gpufabric.planner.pod_overrides import reconcile_with_pod_config
from gpufabric.planner.resolve import off_profile, resolve
from gpufabric.planner.skypilot import render_skypilot
from gpufabric.planner.slurm import render_slurm
from gpufabric.planner.sources import attach_sources
from gpufabric.redact import redact_env, redact_manifest


def _baseline_variant(fabric: FabricName, nics: int) -> str:
    return {
        FabricName.EFA: f"efa-x{nics}",
        FabricName.GPUDIRECT_TCPX: "tcpx",
        FabricName.GPUDIRECT_TCPXO: "tcpxo",
        FabricName.GPUDIRECT_RDMA: "rdma",
        FabricName.INFINIBAND: "ib",
        FabricName.ROCE: "roce",
    }.get(fabric, "socket")


def check_platform_flags(request: PlanRequest, cloud: Cloud, kubernetes: bool) -> None:
    """Flags that shape only some platforms are refused elsewhere: silently dropping them misleads."""
    platform = request.platform.value
    if request.public_ip and not (request.platform is Platform.VM and cloud_profile(cloud).public_ip):
        raise UsageError(
            f"--public-ip: applies to --platform vm on aws only (it sets AssociatePublicIpAddress on the "
            f"RunInstances request), not to --platform {platform} on {cloud.value}; drop --public-ip"
        )
    if request.pod_config is not None and not kubernetes:
        raise UsageError(
            f"--pod-config: a pod_config shapes Kubernetes pods, and --platform {platform} here runs none "
            "(SkyPilot: only with --node-labels); drop --pod-config, or use --platform kubernetes"
        )


def _merged_pod_config(result: Plan) -> dict[str, Any] | None:
    if "kubernetes.pod_config" in result.documents:
        return dict(result.documents["kubernetes.pod_config"])
    task = result.documents.get("skypilot.task") or {}
    pod_config = task.get("config", {}).get("kubernetes", {}).get("pod_config")
    return dict(pod_config) if isinstance(pod_config, dict) else None


def _skypilot_manual_steps(request: PlanRequest, has_fabric: bool, result: Plan) -> None:
    """SkyPilot cannot turn this shape's fabric on: list the VM plan's steps, as manual ones."""
    if not (has_fabric and request.tier is Tier.BEST and result.tier_planned is Tier.STANDARD):
        return
    if request.strict or request.node_labels is not None or request.fabric is FabricName.SOCKET:
        return
    where = Platform.VM if cloud_profile(result.cloud).vm_renderer else Platform.KUBERNETES
    other = plan(request.model_copy(update={"platform": where, "pod_config": None, "image": None}))
    result.prerequisites += [
        f"manual, as `--platform {where.value}` plans it: {step}" for step in other.prerequisites
    ]


def _trainium_warning(result: Plan) -> str:
    """What differs on Trainium: Neuron's own collective test, no NCCL log, and every EFA per container."""
    assert result.instance is not None
    text = (
        f"{result.instance.name}: collectives run through the Neuron runtime: test them with Neuron's "
        "`nccom-test` (aws-neuronx-tools, in the planned Neuron image), not nccl-tests; it prints no NCCL "
        "lines, so `gpufabric doctor` cannot prove EFA from a log: check `fi_info -p efa` on a node"
    )
    if result.gpus_per_node < result.instance.accelerator_count:
        text += (
            f"; Neuron's FAQ: multi-node jobs need all {result.instance.nic_count} EFA interfaces in the "
            f"container, and --gpus {result.gpus_per_node} attaches {result.nic_count}"
        )
    return text


def plan(request: PlanRequest) -> Plan:
    """The plan for ``request``; bad input raises UsageError/CatalogError with one line naming the fix."""
    res = resolve(request)
    # CoreWeave and Together are Kubernetes to SkyPilot (its infra pattern names no such cloud).
    on_kubernetes = request.platform is Platform.KUBERNETES or (
        request.platform is Platform.SKYPILOT
        and (
            res.provider is not None
            or request.node_labels is not None
            or cloud_profile(res.cloud).skypilot_on_kubernetes
        )
    )
    check_platform_flags(request, res.cloud, on_kubernetes)
    spec = get_fabric(res.fabric)
    kind = res.instance.accelerator_kind if res.instance is not None else "nvidia-gpu"
    habana = kind == HABANA
    result = Plan(
        request=request,
        instance=res.instance,
        cloud=res.cloud,
        platform=request.platform,
        nodes=request.nodes,
        gpus_per_node=res.gpus,
        tier_requested=request.tier,
        tier_planned=res.tier,
        fabric=res.fabric,
        fabric_reason=res.reason,
        nic_count=res.nic_count,
        baseline_variant=_baseline_variant(res.fabric, res.nic_count),
        env=redact_env(res.env),
        fabric_off_description=HABANA_OFF_DESCRIPTION if habana else spec.off_description,
        warnings=list(res.warnings),
        # HCCL and the Neuron runtime print no NCCL lines: a log cannot prove their fabric.
        log_proof=network_proof(spec.nccl_net) if kind == "nvidia-gpu" else [],
    )
    if habana and res.tier is Tier.BEST:
        result.warnings.append(
            f"{result.request.instance_type or 'Gaudi'}: collectives run through HCCL, which prints no "
            "NCCL log lines, so `gpufabric doctor` cannot prove EFA from a log; check `fi_info -p efa` on a "
            "node and compare bandwidth with FI_EFA_USE_DEVICE_RDMA=1 and =0 (plan --fabric-off)"
        )
    if kind == TRAINIUM and res.tier is Tier.BEST:
        result.warnings.append(_trainium_warning(result))
    overrides: dict[str, str] = {}
    if request.platform is Platform.VM:
        vm_renderer = cloud_profile(res.cloud).vm_renderer
        if vm_renderer is not None and res.instance is not None:
            vm_renderer(result, request.public_ip)
        else:
            raise CatalogError(
                f"--platform vm: gpufabric renders VM requests for aws and gcp only, not {res.cloud.value}; "
                "use --platform kubernetes, slurm or docker for this provider"
            )
    elif request.platform is Platform.KUBERNETES:
        overrides = render_kubernetes(result)
    elif request.platform is Platform.SKYPILOT:
        overrides = render_skypilot(result, kubernetes=on_kubernetes)
    elif request.platform is Platform.SLURM:
        render_slurm(result)
    else:
        render_docker(result)
    if overrides:
        result.env = redact_env({**result.env, **overrides})
    merged = _merged_pod_config(result)
    if merged is not None:
        reconcile_with_pod_config(result, merged)
        result.env = redact_env(result.env)
    kind = res.instance.accelerator_kind if res.instance is not None else "nvidia-gpu"
    result.fabric_off_env = redact_env(off_profile(result.env, result.fabric, kind))
    if request.platform is Platform.SKYPILOT and res.instance is not None:
        _skypilot_manual_steps(request, res.instance.has_fabric, result)
    documents = redact_manifest(result.documents)
    if documents != result.documents:
        result.warnings.append(
            "pod_config: literal secrets (values of secret-looking env names, passwords in URLs, "
            "connection-string keys, tokens) are redacted from the plan; "
            "reference a Kubernetes Secret (valueFrom.secretKeyRef) instead"
        )
        result.documents = documents
    attach_sources(result)
    return result
