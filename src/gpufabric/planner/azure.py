"""Azure ND v5 on Kubernetes (AKS): the NCCL topology file as a ConfigMap, and no HCA name filter.

On a VM with Azure's HPC image (Slurm, docker on the VM) NCCL reads ``/opt/microsoft/ndv5/topo.xml`` and
finds the InfiniBand HCAs renamed ``mlx5_ib0..7`` (the catalog's env, ib.yaml). AKS nodes run AKS's own
image: neither the file nor the renaming exists there. So the pod mounts Azure's file (vendored from
Azure/azhpc-images, ``catalog/data/azure/``) from a ConfigMap at the path the images use, as Azure's own AKS
tests (aks-rdma-infiniband ``mpi-job.yaml``) mount theirs, and the plan sets no ``NCCL_IB_HCA``: the RDMA
device plugin (selector ``linkTypes: infiniband``) hands the pod only InfiniBand HCAs, and ``mlx5_ib`` would
match none of the kernel's names (``mlx5_0``...), leaving NCCL on TCP.
"""

from __future__ import annotations

from importlib import resources
from pathlib import PurePosixPath
from typing import Any

from gpufabric.catalog import FabricName
from gpufabric.planner.clouds import cloud_profile
from gpufabric.planner.model import Plan, Privilege

TOPOLOGY_KEY = "topo.xml"
# Azure's HPC images: components/customizations/ndv5.sh links /opt/microsoft/ndv5/topo.xml to this file.
_TOPOLOGY_FILES = {"/opt/microsoft/ndv5/topo.xml": "ndv5-topo.xml"}


def topology_path(plan: Plan) -> str | None:
    """The NCCL_TOPO_FILE of an Azure InfiniBand plan whose file Azure's images ship; None otherwise."""
    inst = plan.instance
    if (
        inst is None
        or not cloud_profile(inst.cloud).image_topology_files
        or plan.fabric is not FabricName.INFINIBAND
    ):
        return None
    path = inst.fabric_env.get("NCCL_TOPO_FILE")
    return path if path in _TOPOLOGY_FILES else None


def topology_xml(path: str) -> str:
    """Azure's topology file for ``path``, as Azure/azhpc-images publishes it (commit in the sources)."""
    data = resources.files("gpufabric.catalog").joinpath("data", "azure", _TOPOLOGY_FILES[path])
    return data.read_text(encoding="utf-8")


def configmap_name(plan: Plan) -> str:
    return f"{plan.request.cluster_name}-nccl-topology"


def topology_configmap(plan: Plan, path: str) -> dict[str, Any]:
    """The ConfigMap the pods mount: apply it before them (``configmap.k8s.yaml``)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": configmap_name(plan)},
        "data": {TOPOLOGY_KEY: topology_xml(path)},
    }


def topology_volume(plan: Plan, path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(volume, volumeMount) putting the ConfigMap's file at ``path`` (read-only), listed with its reason."""
    file = PurePosixPath(path)
    plan.privileges.append(
        Privilege(
            where="main",
            grant=f"ConfigMap {configmap_name(plan)} at {file.parent} (read-only)",
            why="NCCL_TOPO_FILE: Azure's ND v5 topology (GPU-HCA PCI pairs), which AKS nodes do not have",
        )
    )
    volume = {
        "name": "nccl-topology",
        "configMap": {"name": configmap_name(plan), "items": [{"key": TOPOLOGY_KEY, "path": file.name}]},
    }
    return volume, {"name": "nccl-topology", "mountPath": str(file.parent), "readOnly": True}


def aks_env(env: dict[str, str]) -> dict[str, str]:
    """The env of an AKS pod: without the HCA filter that names the HPC images' HCAs (module docstring)."""
    return {k: v for k, v in env.items() if k != "NCCL_IB_HCA"}


def add_aks_topology(plan: Plan, spec: dict[str, Any], main: dict[str, Any]) -> None:
    """An Azure ND v5 pod: the topology ConfigMap (a plan document), its mount, and the AKS env."""
    topology = topology_path(plan)
    if topology is None:
        return
    volume, mount = topology_volume(plan, topology)
    spec["volumes"].append(volume)
    main["volumeMounts"].append(mount)
    plan.documents["kubernetes.configmap"] = topology_configmap(plan, topology)
    plan.env = aks_env(plan.env)
    plan.prerequisites.append(
        f"`kubectl apply -f configmap.k8s.yaml` before the pods: ConfigMap {configmap_name(plan)} holds "
        f"Azure's topology file for NCCL_TOPO_FILE={topology}; the device plugin selects InfiniBand HCAs "
        "only (Azure's aks-rdma-infiniband NicClusterPolicy: linkTypes infiniband)"
    )
