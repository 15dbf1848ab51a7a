"""Kubernetes rendering: the pod patch (SkyPilot's ``pod_config``), merged with the user's, and the workload:
one Pod per node for small plans, one Indexed Job + headless Service above ``POD_MANIFESTS_MAX_NODES``.

EKS/HyperPod: ``vpc.amazonaws.com/efa`` requests = limits (proportional to GPUs), huge pages and memory as
AWS's EKS example, IPC_LOCK, same-zone pod affinity (SkyPilot issue #10056), ``FI_PROVIDER=efa``. GKE:
``gke.py``. Every container drops ALL capabilities and adds back only its fabric's (``security.py``); only
OCI bare-metal RDMA runs privileged; every privilege and host path is listed with its reason.
"""

from __future__ import annotations

import copy
from typing import Any

from gpufabric.catalog import FabricName
from gpufabric.planner.azure import add_aks_topology
from gpufabric.planner.clouds import cloud_profile
from gpufabric.planner.fabric_env import HABANA, TRAINIUM
from gpufabric.planner.gke import gke_parts, gke_prerequisites, main_capabilities
from gpufabric.planner.images import (
    EFA_NCCL_TESTS,
    GIB_DIAGNOSTIC,
    HABANA_IMAGE_HINT,
    NEURON_DLC,
    TCPX_PLUGIN,
    TCPXO_PLUGIN,
)
from gpufabric.planner.merge import merge_pod_config
from gpufabric.planner.model import Plan, Privilege
from gpufabric.planner.security import host_volume, least_privilege

JOB_LABEL = "gpufabric.io/cluster"
# Google's and AWS's own test images, at the tags they pin (images.py).
DEFAULT_IMAGES = {
    FabricName.EFA: EFA_NCCL_TESTS.ref,
    FabricName.GPUDIRECT_TCPX: TCPX_PLUGIN.ref,
    FabricName.GPUDIRECT_TCPXO: TCPXO_PLUGIN.ref,
    FabricName.GPUDIRECT_RDMA: GIB_DIAGNOSTIC.ref,
}
# AWS's EKS EFA example (awsome-distributed-training kubernetes/nccl-tests.yaml): libfabric's EFA provider
# takes its bounce buffers from 2 MiB huge pages, and a pod that requests huge pages must request memory.
EFA_POD_RESOURCES = {"hugepages-2Mi": "5120Mi", "memory": "32000Mi"}


def _fabric_resources(plan: Plan) -> dict[str, int]:
    """Extended resources: EFA proportional to GPUs; Together one rdma_ib per GPU; Azure one rdma/ib per HCA
    (its SR-IOV device plugin has one per InfiniBand VF: aks-rdma-infiniband asks 8); else shared (1)."""
    inst = plan.instance
    if inst is None or plan.fabric is FabricName.SOCKET or not inst.k8s_fabric_resource:
        return {}
    name = inst.k8s_fabric_resource
    if cloud_profile(inst.cloud).k8s_fabric_per_nic:
        return {name: plan.nic_count}
    count = {"vpc.amazonaws.com/efa": plan.nic_count, "nvidia.com/rdma_ib": plan.gpus_per_node}.get(name, 1)
    return {name: count}


def _node_match(plan: Plan) -> list[dict[str, Any]]:
    """Node affinity expressions (ANDed): the shape's instance type, and the named nodes when given.

    A plan for a node group of a real cluster (``plan --from-cluster``) names its members: the instance
    type alone would also admit the same shape's nodes whose fabric is broken or in another zone.
    """
    expressions = []
    if plan.instance is not None:
        names = [plan.instance.name, *plan.instance.aliases]
        expressions.append({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": names})
    if plan.request.node_hostnames:
        expressions.append(
            {"key": "kubernetes.io/hostname", "operator": "In", "values": list(plan.request.node_hostnames)}
        )
    return expressions


def _efa_per_node(plan: Plan) -> str:
    """What every node must advertise: the shape's EFA count, or the fewer a --efa-count plan is for."""
    if plan.instance is None or plan.instance.nic_count is None:
        return str(plan.request.efa_count or "?")
    full, wanted = plan.instance.nic_count, plan.request.efa_count or plan.instance.nic_count
    if wanted < full:
        return f"{wanted} (of {plan.instance.name}'s {full}: this plan is for nodes with {wanted})"
    return str(wanted)


def _main_capabilities(plan: Plan) -> dict[str, str]:
    """What the NCCL/HCCL container adds back after dropping ALL, and why (never RDMA's reason for TCP)."""
    if plan.fabric in (FabricName.GPUDIRECT_TCPX, FabricName.GPUDIRECT_TCPXO, FabricName.GPUDIRECT_RDMA):
        return main_capabilities(plan.fabric)
    if plan.fabric is FabricName.EFA:
        return {
            "IPC_LOCK": "EFA registers (pins) GPU and host memory with the NIC (AWS's EFA docker options)"
        }
    if plan.fabric in (FabricName.INFINIBAND, FabricName.ROCE):
        return {"IPC_LOCK": "RDMA verbs register (pin) GPU and host memory with the HCA"}
    return {}


def pod_patch(plan: Plan) -> tuple[dict[str, Any], dict[str, str]]:
    """(pod_config patch, env overrides the platform needs)."""
    inst = plan.instance
    accel = inst.k8s_accelerator_resource if inst else "nvidia.com/gpu"
    resources: dict[str, int | str] = {accel: plan.gpus_per_node, **_fabric_resources(plan)}
    # Huge pages as AWS's EKS nccl-tests example; Neuron's EKS pods request devices only (deploy/eks/dra.rst).
    efa_pages = plan.fabric is FabricName.EFA and not (inst is not None and inst.accelerator_kind == TRAINIUM)
    if efa_pages:
        resources.update(EFA_POD_RESOURCES)
    main: dict[str, Any] = {
        "resources": {"requests": dict(resources), "limits": dict(resources)},
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    spec: dict[str, Any] = {
        "containers": [main],
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
    }
    metadata: dict[str, Any] = {"labels": {JOB_LABEL: plan.request.cluster_name}}
    env_overrides: dict[str, str] = {}
    main["securityContext"] = least_privilege(plan, "main", _main_capabilities(plan))
    node_match = _node_match(plan)
    if node_match:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": node_match}]
                }
            }
        }
    if plan.nodes > 1:
        spec.setdefault("affinity", {})["podAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {JOB_LABEL: plan.request.cluster_name}},
                    "topologyKey": "topology.kubernetes.io/zone",
                }
            ]
        }
    if plan.fabric in (FabricName.GPUDIRECT_TCPX, FabricName.GPUDIRECT_TCPXO, FabricName.GPUDIRECT_RDMA):
        annotations, sidecars, volumes, mounts, env_overrides = gke_parts(plan)
        metadata["annotations"] = annotations
        spec["containers"] += sidecars
        spec["volumes"] += volumes
        main["volumeMounts"] += mounts
        plan.prerequisites += gke_prerequisites(plan.fabric, plan.nic_count)
    elif plan.fabric is FabricName.EFA:
        plan.prerequisites += [
            "the AWS EFA Kubernetes device plugin runs on the nodes (HyperPod: by default); "
            "`kubectl get nodes -o custom-columns=NAME:.metadata.name,"
            "EFA:.status.allocatable.vpc\\.amazonaws\\.com/efa` "
            f"shows {_efa_per_node(plan)} per node",
            "scale-from-zero node groups: check the EFA request survives "
            "(SkyPilot issue #10055 fell back to TCP)",
        ]
    elif (
        plan.fabric in (FabricName.INFINIBAND, FabricName.ROCE)
        and inst is not None
        and not cloud_profile(inst.cloud).k8s_host_rdma
    ):
        resource = inst.k8s_fabric_resource or "an RDMA resource"
        plan.prerequisites.append(
            f"an RDMA device plugin (e.g. NVIDIA Network Operator's) advertises {resource} on the nodes: "
            f"`kubectl describe node` lists it under Allocatable"
        )
        add_aks_topology(plan, spec, main)
    elif inst is not None and cloud_profile(inst.cloud).k8s_host_rdma:
        spec.update({"hostNetwork": True, "dnsPolicy": "ClusterFirstWithHostNet"})
        main["securityContext"] = {"privileged": True}
        volume, mount = host_volume(
            plan,
            "main",
            "infiniband",
            "/dev/infiniband",
            "/dev/infiniband",
            read_only=False,
            why="the RDMA verbs devices of the cluster-network NICs (opened read-write to post work)",
        )
        spec["volumes"].append(volume)
        main["volumeMounts"].append(mount)
        plan.privileges += [
            Privilege(
                where="pod",
                grant="hostNetwork",
                why="OKE RDMA cluster networks are reachable only from the host network namespace",
            ),
            Privilege(
                where="main",
                grant="privileged",
                why="OKE exposes /dev/infiniband without an RDMA device plugin; "
                "only a privileged container may open it",
            ),
        ]
    env = {**plan.env, **env_overrides}
    main["env"] = [{"name": k, "value": v} for k, v in sorted(env.items())]
    if efa_pages:
        plan.prerequisites.append(
            "EFA nodes pre-allocate 2 MiB huge pages (EKS's EFA-enabled AMIs do): the pods request "
            f"hugepages-2Mi {EFA_POD_RESOURCES['hugepages-2Mi']} and memory {EFA_POD_RESOURCES['memory']}, "
            "as AWS's EKS nccl-tests example"
        )
    return {"metadata": metadata, "spec": spec}, env_overrides


# Up to this many nodes the plan lists one Pod per node (easy to read, apply or delete one by one). Above
# it, N near-identical Pods would be most of the plan (4096 pods: 6.8 MB of YAML, seconds to build and
# dump), so the plan renders the shape that scales: one Indexed Job whose single pod template runs on
# every node (``completions: N``) and a headless Service for the pods' DNS names. Nothing per node is
# lost: the node index is the Job's completion index (``JOB_COMPLETION_INDEX`` in every pod), the pod
# hostname is ``<cluster>-<index>`` and its address ``<cluster>-<index>.<cluster>``.
POD_MANIFESTS_MAX_NODES = 16


def _image(plan: Plan) -> str:
    kind = plan.instance.accelerator_kind if plan.instance is not None else "nvidia-gpu"
    habana = kind == HABANA
    # Not the CUDA images of DEFAULT_IMAGES on Neuron or Gaudi nodes: Neuron's DLC carries nccom-test.
    default = NEURON_DLC.ref if kind == TRAINIUM else DEFAULT_IMAGES.get(plan.fabric)
    image = plan.request.image or (None if habana else default)
    if image is None and plan.instance is not None:
        image = cloud_profile(plan.instance.cloud).k8s_default_image
    if image is None:
        image = "${IMAGE}"
        plan.parameters["IMAGE"] = (
            HABANA_IMAGE_HINT if habana else "container image with CUDA, NCCL and nccl-tests (or gpufabric)"
        )
    return image


def _complete(pod_config: dict[str, Any], image: str) -> dict[str, Any]:
    """A copy of the merged pod_config with what a runnable pod needs: container name, image, command."""
    pod = copy.deepcopy(pod_config)
    main = pod["spec"]["containers"][0]
    main.setdefault("name", "main")
    main.setdefault("image", image)
    main.setdefault("command", ["sleep", "infinity"])
    return pod


def full_pods(plan: Plan, pod_config: dict[str, Any]) -> list[dict[str, Any]]:
    """One complete Pod per node: the merged pod_config plus name, image and command."""
    template = _complete(pod_config, _image(plan))
    template["spec"].setdefault("restartPolicy", "Never")
    pods = []
    for rank in range(plan.nodes):
        pod = copy.deepcopy(template)
        pod["metadata"]["name"] = f"{plan.request.cluster_name}-{rank}"
        pods.append({"apiVersion": "v1", "kind": "Pod", **pod})
    return pods


def indexed_job(plan: Plan, pod_config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(Indexed Job running the merged pod_config on every node, headless Service naming its pods)."""
    name = plan.request.cluster_name
    template = _complete(pod_config, _image(plan))
    template["metadata"].pop("name", None)  # the Job names its pods <job>-<index>-<suffix>
    labels = template["metadata"].setdefault("labels", {})
    labels.setdefault(JOB_LABEL, name)
    spec = template["spec"]
    if spec.get("restartPolicy", "Never") not in ("Never", "OnFailure"):
        plan.warnings.append(
            f"pod_config restartPolicy {spec['restartPolicy']!r} cannot run in a Job; the plan uses Never"
        )
        spec["restartPolicy"] = "Never"
    spec.setdefault("restartPolicy", "Never")
    subdomain = spec.setdefault("subdomain", name)  # DNS: <name>-<index>.<subdomain>
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {JOB_LABEL: name}},
        "spec": {
            "completionMode": "Indexed",
            "completions": plan.nodes,
            "parallelism": plan.nodes,
            "backoffLimit": 0,  # a lost rank fails the job: collectives cannot resume without a peer
            "template": template,
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": subdomain, "labels": {JOB_LABEL: name}},
        "spec": {
            "clusterIP": "None",
            "selector": {JOB_LABEL: labels[JOB_LABEL]},
            "publishNotReadyAddresses": True,  # ranks resolve each other before any pod is ready
        },
    }
    return job, service


def render_kubernetes(plan: Plan) -> dict[str, str]:
    patch, env_overrides = pod_patch(plan)
    merged, conflicts = merge_pod_config(patch, plan.request.pod_config)
    plan.conflicts += conflicts
    plan.documents["kubernetes.pod_config"] = merged
    if plan.nodes <= POD_MANIFESTS_MAX_NODES:
        plan.documents["kubernetes.pods"] = full_pods(plan, merged)
    else:
        job, service = indexed_job(plan, merged)
        plan.documents["kubernetes.job"] = job
        plan.documents["kubernetes.service"] = service
    return env_overrides
