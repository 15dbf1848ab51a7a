"""Golden tests: Azure ND v5 plans against Azure's own references, vendored under
tests/fixtures/references/azure/ (Azure/azhpc-images, Azure/azurehpc-health-checks, Azure/aks-rdma-infiniband;
sources and commits in the README there).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpufabric.catalog import get_instance
from gpufabric.planner import PlanRequest, Platform, plan
from gpufabric.planner.export import export_files, k8s_documents

AZURE = Path(__file__).parents[1] / "fixtures" / "references" / "azure"
PACKAGED = Path(__file__).parents[2] / "src" / "gpufabric" / "catalog" / "data" / "azure"
SHAPES = {
    "Standard_ND96isr_H100_v5": "nd96isr_h100_v5.conf",
    "Standard_ND96isr_H200_v5": "nd96isr_h200_v5.conf",
}


def _hca_selected(value: str, device: str) -> bool:
    """NCCL_IB_HCA as NCCL's user guide defines it: '^' excludes, '=' matches exactly, else a name prefix."""
    exclude = value.startswith("^")
    value = value.removeprefix("^")
    exact = value.startswith("=")
    names = [entry.split(":")[0] for entry in value.removeprefix("=").split(",")]
    hit = any(device == n if exact else device.startswith(n) for n in names)
    return hit != exclude


def _renamed_devices(shape: str) -> tuple[list[str], list[str]]:
    """(InfiniBand HCAs the health check expects, names Azure's renaming gives Ethernet VFs)."""
    conf = (AZURE / SHAPES[shape]).read_text()
    hcas = re.findall(r"check_hw_ib (\d+) (mlx5_ib\d+):1", conf)
    assert {int(gbps) for gbps, _ in hcas} == {get_instance(shape).nic_gbps}
    naming = (AZURE / "install_azure_persistent_rdma_naming.sh").read_text()
    assert "NAME_FIXED mlx5_ib" in naming and "NAME_FIXED mlx5_an" in naming
    return [name for _, name in hcas], ["mlx5_an0"]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("platform", [Platform.SLURM, Platform.DOCKER])
def test_vm_plans_name_the_hcas_azures_images_give(shape: str, platform: Platform) -> None:
    result = plan(PlanRequest(instance_type=shape, platform=platform))
    hcas, ethernet = _renamed_devices(shape)
    assert len(hcas) == result.nic_count == 8
    assert all(_hca_selected(result.env["NCCL_IB_HCA"], d) for d in hcas)
    assert not any(_hca_selected(result.env["NCCL_IB_HCA"], d) for d in ethernet)
    assert _hca_selected("mlx5", "mlx5_an0")  # what the bare prefix did: it also took the Ethernet VF


@pytest.mark.parametrize("shape", SHAPES)
def test_env_is_azures_nccl_conf_and_health_check(shape: str) -> None:
    env = plan(PlanRequest(instance_type=shape, platform=Platform.SLURM)).env
    ndv5 = (AZURE / "ndv5.sh").read_text()
    conf = ndv5[ndv5.index("/etc/nccl.conf") :]
    nccl_conf = dict(
        re.findall(r"^(NCCL_\w+)=(\S+)$", conf[: conf.index("EOF\n", conf.index("EOF") + 3)], re.M)
    )
    assert nccl_conf.items() <= env.items()
    link = re.search(r"ln -sf (\S+) (\S+)", ndv5)
    assert link is not None and link.group(2) == env["NCCL_TOPO_FILE"]
    check = (AZURE / "azure_nccl_allreduce.nhc").read_text()
    pairs = dict(re.findall(r"-x (\w+)=(\S*)", check[check.index("ENVIRON_VARS=") :].splitlines()[0]))
    for name in ("UCX_TLS", "UCX_NET_DEVICES", "CUDA_DEVICE_ORDER", "NCCL_SOCKET_IFNAME"):
        assert env[name] == pairs[name], name
    assert "ndv5-topo.xml" in (AZURE / SHAPES[shape]).read_text()  # both sizes use the ND v5 topology


def test_the_packaged_topology_is_azures_file() -> None:
    assert (PACKAGED / "ndv5-topo.xml").read_bytes() == (AZURE / "ndv5-topo.xml").read_bytes()


def _aks_reference() -> tuple[dict[str, Any], dict[str, Any]]:
    """(Azure's AKS worker container, its pod spec) from aks-rdma-infiniband's MPIJob template."""
    text = (AZURE / "aks-mpi-job.yaml").read_text()
    text = re.sub(r"^\s*\{\{.*\}\}\s*\n", "", text, flags=re.M)  # Helm's lines around optional fields
    text = re.sub(r"\{\{ *(\S+) *\}\}", r"'\1'", text)  # a value left to Helm: its name, quoted
    job = yaml.safe_load(text)
    spec = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    return spec["containers"][0], spec


@pytest.mark.parametrize("shape", SHAPES)
def test_aks_pod_mounts_the_topology_as_azures_aks_tests_do(shape: str) -> None:
    result = plan(PlanRequest(instance_type=shape, platform=Platform.KUBERNETES))
    pod = result.documents["kubernetes.pods"][0]
    main = pod["spec"]["containers"][0]
    theirs, their_spec = _aks_reference()
    their_volume = next(v for v in their_spec["volumes"] if "configMap" in v)
    ours = next(v for v in pod["spec"]["volumes"] if "configMap" in v)
    assert ours["configMap"]["items"][0]["key"] == their_volume["configMap"]["items"][0]["key"]
    mount = next(m for m in main["volumeMounts"] if m["name"] == ours["name"])
    topo = result.env["NCCL_TOPO_FILE"]
    assert f"{mount['mountPath']}/{ours['configMap']['items'][0]['path']}" == topo and mount["readOnly"]
    configmap = result.documents["kubernetes.configmap"]
    assert configmap["metadata"]["name"] == ours["configMap"]["name"]
    assert configmap["data"]["topo.xml"] == (AZURE / "ndv5-topo.xml").read_text()
    assert k8s_documents(result)[0] is configmap and "configmap.k8s.yaml" in export_files(result)
    # Azure's AKS job sets no NCCL_IB_HCA: the device plugin hands the pod InfiniBand HCAs only.
    assert "NCCL_IB_HCA" not in {e["name"] for e in main["env"]} and "NCCL_IB_HCA" not in result.env
    sriov = (AZURE / "aks-sriov.yaml").read_text()
    assert '"linkTypes": ["infiniband"]' in sriov and '"resourceName": "ib"' in sriov
    values = (AZURE / "aks-values.yaml").read_text()
    per_node = int(re.search(r"#\s+rdma/ib: (\d+)", values).group(1))  # type: ignore[union-attr]
    assert main["resources"]["limits"]["rdma/ib"] == per_node == result.nic_count
    assert main["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert "IPC_LOCK" in main["securityContext"]["capabilities"]["add"]  # as Azure's values suggest
    their_mount = next(m for m in theirs["volumeMounts"] if m["name"] == their_volume["name"])
    assert their_mount["mountPath"] != "/"  # a directory of its own, as ours (never over the image's files)


def test_docker_on_an_azure_vm_sees_the_images_topology() -> None:
    result = plan(PlanRequest(instance_type="Standard_ND96isr_H100_v5", platform=Platform.DOCKER))
    options = result.documents["docker.run"]["options"]
    assert "--volume=/opt/microsoft:/opt/microsoft:ro" in options
    assert result.env["NCCL_TOPO_FILE"].startswith("/opt/microsoft/")
