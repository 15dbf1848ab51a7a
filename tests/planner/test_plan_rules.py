"""Planner rules a review found missing: pods tile every shape, contradictory tiers, node pinning, and
the GCP TCPX VM's ssh/icmp firewall rules and NCCL container options (reference sheet section 3)."""

from __future__ import annotations

import json

import pytest
from test_schemas import validate_plan

from gpufabric.errors import CatalogError, UsageError
from gpufabric.planner import PlanRequest, Platform, Tier, plan


@pytest.mark.parametrize(
    ("shape", "gpus", "valid"),
    [
        ("p3dn.24xlarge", 3, "1 or 2 or 4 or 8"),  # 1 EFA: the rule used to be skipped
        ("trn2.48xlarge", 3, "1 or 2 or 4 or 8 or 16"),  # EFA count unknown to the catalog
        ("p3.16xlarge", 5, "1 or 2 or 4 or 8"),  # no fabric at all
    ],
)
def test_gpus_must_tile_the_node_on_every_shape(shape: str, gpus: int, valid: str) -> None:
    with pytest.raises(CatalogError, match=rf"--gpus {gpus}: {shape} has \d+ GPUs.*use --gpus {valid}$"):
        plan(PlanRequest(instance_type=shape, gpus=gpus))


def test_part_of_a_one_efa_node_warns_that_the_efa_is_not_shared() -> None:
    result = plan(PlanRequest(instance_type="g5.48xlarge", platform=Platform.KUBERNETES, gpus=4))
    assert result.nic_count == 1
    resources = result.documents["kubernetes.pods"][0]["spec"]["containers"][0]["resources"]["limits"]
    assert resources == {
        "nvidia.com/gpu": 4,
        "vpc.amazonaws.com/efa": 1,
        "hugepages-2Mi": "5120Mi",
        "memory": "32000Mi",
    }
    assert any(
        w.startswith("--gpus 4: g5.48xlarge has 1 efa interface and it cannot be shared")
        for w in result.warnings
    )
    whole = plan(PlanRequest(instance_type="g5.48xlarge", platform=Platform.KUBERNETES))
    assert not any("cannot be shared" in w for w in whole.warnings)


def test_standard_tier_with_a_fabric_is_a_contradiction() -> None:
    with pytest.raises(UsageError, match=r"^--fabric efa contradicts --tier standard: .*drop --fabric"):
        plan(PlanRequest(instance_type="p4d.24xlarge", tier=Tier.STANDARD, fabric="efa"))
    sockets = plan(PlanRequest(instance_type="p4d.24xlarge", tier=Tier.STANDARD, fabric="socket"))
    assert sockets.fabric.value == "socket"


def test_node_hostnames_pin_the_pods_and_validate() -> None:
    nodes = ["ip-10-0-12-41.us-west-2.compute.internal", "ip-10-0-14-7.us-west-2.compute.internal"]
    for platform in (Platform.KUBERNETES, Platform.SKYPILOT):
        result = plan(
            PlanRequest(
                node_labels={
                    "node.kubernetes.io/instance-type": "p4d.24xlarge",
                    "topology.k8s.aws/zone-id": "a",
                },
                platform=platform,
                node_hostnames=nodes,
            )
        )
        assert validate_plan(result) >= 1
        pod_config = (
            result.documents["kubernetes.pod_config"]
            if platform is Platform.KUBERNETES
            else result.documents["skypilot.task"]["config"]["kubernetes"]["pod_config"]
        )
        terms = pod_config["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]
        (term,) = terms["nodeSelectorTerms"]  # one term: its expressions are ANDed
        assert term["matchExpressions"][-1] == {
            "key": "kubernetes.io/hostname",
            "operator": "In",
            "values": nodes,
        }
        assert term["matchExpressions"][0]["key"] == "node.kubernetes.io/instance-type"


@pytest.mark.parametrize("instance", ["a3-highgpu-8g", "a3-megagpu-8g", "a3-ultragpu-8g", "a4-highgpu-8g"])
def test_gcp_vm_firewalls_open_data_networks_only_to_their_subnets(instance: str) -> None:
    """Data VPCs admit their own subnet only; ssh only on the management VPC, only from ${SSH_CIDR}."""
    result = plan(PlanRequest(instance_type=instance, platform=Platform.VM, cluster_name="nccl"))
    assert validate_plan(result) >= 1  # every firewall body through compute_v1.Firewall
    subnets = {s["network"]: s["ipCidrRange"] for s in result.documents["compute.subnetworks"]}
    nics = result.documents["compute.instances"][0]["networkInterfaces"]
    management = nics[0]["network"]  # the NIC with the external address
    rules = result.documents["compute.firewalls"]
    assert {r["network"] for r in rules} == {n["network"] for n in nics if n["nicType"] == "GVNIC"}
    for rule in rules:
        assert "0.0.0.0/0" not in rule["sourceRanges"], rule["name"]
        if rule["name"].endswith("-allow-ssh"):
            assert rule["network"] == management and rule["sourceRanges"] == ["${SSH_CIDR}"]
            assert rule["allowed"] == [{"IPProtocol": "tcp", "ports": ["22"]}]
        else:
            assert rule["name"].endswith("-internal") and rule["sourceRanges"] == [subnets[rule["network"]]]
    assert [r["network"] for r in rules if r["name"].endswith("-allow-ssh")] == [management]
    assert "SSH_CIDR" in result.parameters and "0.0.0.0/0" not in json.dumps(result.documents)


def test_gcp_tcpx_vm_carries_the_nccl_container_options() -> None:
    result = plan(PlanRequest(instance_type="a3-highgpu-8g", platform=Platform.VM))
    options = result.docker_options
    assert options[0] == "--network=host"
    for option in (
        "--cap-add=IPC_LOCK",
        "--userns=host",
        "--shm-size=1g",
        "memlock=-1",
        "stack=67108864",
        "--device=/dev/nvidiactl",
        "--device=/dev/nvidia-uvm",
        "--volume=/run/tcpx:/run/tcpx",
        "--volume=/var/lib/nvidia/lib64:/usr/local/nvidia/lib64:ro",
        "--volume=/var/lib/tcpx/lib64:/usr/local/tcpx/lib64:ro",
        *(f"--device=/dev/nvidia{i}" for i in range(8)),
    ):
        assert option in options
    assert "--privileged" not in options and "--gpus=all" not in options  # COS: no container toolkit
    startup = result.documents["compute.instances"][0]["metadata"]["items"][0]["value"]
    assert "--privileged" not in startup and "--cap-add=NET_ADMIN" in startup  # RxDM as Google runs it
    assert {p.grant for p in result.privileges} >= {"--network=host"}
    assert result.env["LD_LIBRARY_PATH"] == "/usr/local/nvidia/lib64:/usr/local/tcpx/lib64"


def test_gcp_tcpxo_vm_installs_fastrak_and_rdma_vm_mounts_gib() -> None:
    tcpxo = plan(PlanRequest(instance_type="a3-megagpu-8g", platform=Platform.VM))
    startup = tcpxo.documents["compute.instances"][0]["metadata"]["items"][0]["value"]
    assert "gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15 install --install-nccl" in startup
    assert "cp -r /var/lib/tcpxo/lib64/. /var/lib/nvidia/lib64" in startup
    assert "modprobe import-helper" in startup and "/dev/aperture_devices" in startup
    assert "--volume=/dev/aperture_devices:/dev/aperture_devices" in tcpxo.docker_options
    rdma = plan(PlanRequest(instance_type="a3-ultragpu-8g", platform=Platform.VM))
    startup = rdma.documents["compute.instances"][0]["metadata"]["items"][0]["value"]
    assert "gpudirect-gib/nccl-plugin-gib:v1.1.1 install" in startup
    assert "--volume=/var/lib/gib:/usr/local/gib:ro" in rdma.docker_options
    assert rdma.env["NCCL_NET"] == "gIB" and rdma.env["NCCL_TUNER_CONFIG_PATH"].startswith("/usr/local/gib/")
    for result in (tcpxo, rdma):
        assert "--gpus=all" not in result.docker_options
        assert "--volume=/var/lib/nvidia/lib64:/usr/local/nvidia/lib64:ro" in result.docker_options
