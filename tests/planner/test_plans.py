"""What the plans say: the seeds' configurations, the AWS/GCP rules, fallbacks and contradictions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from gpufabric.catalog import FabricName
from gpufabric.errors import CatalogError, UsageError
from gpufabric.planner import PlanRequest, Platform, Tier, merge_pod_config, plan

SEED001 = Path(__file__).parents[1] / "fixtures" / "catalog" / "seed001_pod_config.yaml"


def test_p4d_eks_matches_the_seed_pod_config() -> None:
    seed = yaml.safe_load(SEED001.read_text())["config"]["kubernetes"]["pod_config"]
    result = plan(PlanRequest(cloud="aws", instance_type="p4d.24xlarge", platform="kubernetes", nodes=2))
    ours = result.documents["kubernetes.pod_config"]
    for kind in ("limits", "requests"):
        assert (
            ours["spec"]["containers"][0]["resources"][kind]["vpc.amazonaws.com/efa"]
            == (seed["spec"]["containers"][0]["resources"][kind]["vpc.amazonaws.com/efa"])
            == 4
        )
    merged, conflicts = merge_pod_config(ours, seed)
    assert merged == ours and conflicts == []  # the seed's fragment is already contained in ours
    main = ours["spec"]["containers"][0]
    assert {"name": "FI_PROVIDER", "value": "efa"} in main["env"]
    assert main["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    affinity = ours["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert affinity["topologyKey"] == "topology.kubernetes.io/zone"
    assert "privileged" not in json.dumps(ours)


@pytest.mark.parametrize(("gpus", "efa"), [(8, 32), (4, 16), (2, 8), (1, 4)])
def test_efa_proportional_to_gpus(gpus: int, efa: int) -> None:
    result = plan(PlanRequest(instance_type="p5.48xlarge", platform="kubernetes", gpus=gpus))
    resources = result.documents["kubernetes.pod_config"]["spec"]["containers"][0]["resources"]
    assert (
        resources["requests"]
        == resources["limits"]
        == {
            "nvidia.com/gpu": gpus,
            "vpc.amazonaws.com/efa": efa,
            "hugepages-2Mi": "5120Mi",
            "memory": "32000Mi",
        }
    )


def test_three_gpus_on_a_32_efa_shape_is_refused_with_the_rule() -> None:
    # The rule 3 breaks is divisibility (3 x 32 / 8 = 12 NICs is whole): the message must say so.
    with pytest.raises(CatalogError) as refused:
        plan(PlanRequest(instance_type="p5.48xlarge", platform="kubernetes", gpus=3))
    assert str(refused.value) == (
        "--gpus 3: p5.48xlarge has 8 GPUs and 3 does not divide 8 (pods must tile the node); "
        "use --gpus 1 or 2 or 4 or 8"
    )


def test_gpus_that_split_the_nics_unevenly_name_the_nic_rule() -> None:
    # 1 divides 8, but a 1-GPU pod on p4d would get half of one of its 4 EFA: that rule is the one to name.
    with pytest.raises(
        CatalogError, match=r"whole number of NICs \(1 x 4 / 8 = 0\.5\).*use --gpus 2 or 4 or 8$"
    ):
        plan(PlanRequest(instance_type="p4d.24xlarge", platform="kubernetes", gpus=1))


def test_a3_high_vm_has_one_plus_four_vpcs_at_mtu_8244() -> None:
    result = plan(PlanRequest(cloud="gcp", instance_type="a3-highgpu-8g", platform="vm", nodes=2))
    networks = result.documents["compute.networks"]
    assert [n["name"] for n in networks] == ["gpufabric-mgmt-net"] + [
        f"gpufabric-data-net-{i}" for i in range(1, 5)
    ]
    assert {n["mtu"] for n in networks} == {8244}
    assert all(n["autoCreateSubnetworks"] is False for n in networks)
    instance = result.documents["compute.instances"][0]
    assert [nic["nicType"] for nic in instance["networkInterfaces"]] == ["GVNIC"] * 5
    policy = result.documents["compute.resourcePolicies"][0]["groupPlacementPolicy"]
    assert policy == {"collocation": "COLLOCATED", "vmCount": 2}
    assert "tcpgpudmarxd" in instance["metadata"]["items"][0]["value"]
    assert result.env["NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"] == "eth1,eth2,eth3,eth4"
    assert "NCCL_GPUDIRECTTCPX_CTRL_DEV" not in result.fabric_off_env
    assert result.fabric_off_env["LD_LIBRARY_PATH"] == "/usr/local/nvidia/lib64"


def test_p5_vm_every_fourth_card_is_efa_with_ena() -> None:
    result = plan(PlanRequest(instance_type="p5.48xlarge", platform="vm", nodes=2))
    nics = result.documents["ec2.RunInstances"]["NetworkInterfaces"]
    assert len(nics) == 32 and nics[0]["InterfaceType"] == "efa" and nics[0]["DeviceIndex"] == 0
    assert [n["NetworkCardIndex"] for n in nics] == list(range(32))
    assert [n["InterfaceType"] for n in nics[1:]] == [
        "efa" if i % 4 == 0 else "efa-only" for i in range(1, 32)
    ]
    assert all("AssociatePublicIpAddress" not in n for n in nics)


def test_aws_vm_placement_group_and_self_referencing_security_group() -> None:
    result = plan(PlanRequest(instance_type="p4d.24xlarge", platform="vm", nodes=2))
    docs = result.documents
    assert docs["ec2.CreatePlacementGroup"]["Strategy"] == "cluster"
    assert docs["ec2.RunInstances"]["Placement"]["GroupName"] == docs["ec2.CreatePlacementGroup"]["GroupName"]
    for direction in ("Ingress", "Egress"):
        rule = docs[f"ec2.AuthorizeSecurityGroup{direction}"]["IpPermissions"][0]
        assert rule["IpProtocol"] == "-1" and rule["UserIdGroupPairs"] == [
            {"GroupId": "${SECURITY_GROUP_ID}"}
        ]
    assert result.docker_options == [
        "--cap-add=IPC_LOCK",
        "--device=/dev/infiniband",
        "--ulimit",
        "memlock=-1:-1",
    ]
    assert any("private IPs" in w for w in result.warnings)
    assert result.baseline_variant == "efa-x4"


def test_public_ip_limits_to_one_efa_and_says_so() -> None:
    result = plan(PlanRequest(instance_type="p4d.24xlarge", platform="vm", public_ip=True))
    assert result.nic_count == 1 and result.baseline_variant == "efa-x1"
    assert any("--public-ip" in w and "#8391" in w for w in result.warnings)
    assert result.documents["ec2.RunInstances"]["NetworkInterfaces"][0]["AssociatePublicIpAddress"] is True


def test_best_without_fabric_falls_back_loudly_and_strict_refuses() -> None:
    result = plan(PlanRequest(instance_type="a2-highgpu-8g", platform="vm"))
    assert result.tier_requested is Tier.BEST and result.tier_planned is Tier.STANDARD
    assert result.fabric is FabricName.SOCKET
    assert any("no inter-node fabric" in w for w in result.warnings)
    assert result.env["NCCL_SOCKET_NTHREADS"] == "4"
    with pytest.raises(CatalogError, match="--strict forbids that"):
        plan(PlanRequest(instance_type="a2-highgpu-8g", platform="vm", strict=True))


@pytest.mark.parametrize(
    ("request_fields", "message"),
    [
        (
            {"cloud": "gcp", "instance_type": "p5.48xlarge"},
            r"--cloud gcp: p5\.48xlarge is a aws instance type",
        ),
        ({"instance_type": "a3-highgpu-8g", "fabric": "efa"}, r"--fabric efa: EFA exists only on AWS"),
        (
            {"instance_type": "a2-highgpu-8g", "fabric": "gpudirect-tcpx"},
            r"TCPX needs a GCP a3-highgpu-8g.*only socket",
        ),
        ({"instance_type": "p4d.24xlarge", "gpus": 9}, r"--gpus 9: p4d\.24xlarge has only 8"),
        ({"instance_type": "p4d.24xlarge", "efa_count": 8}, r"--efa-count 8: p4d\.24xlarge has at most 4"),
        ({"instance_type": "p4d.24xlarg"}, r"did you mean 'p4d\.24xlarge'"),
    ],
)
def test_contradictions_name_field_and_rule(request_fields: dict[str, object], message: str) -> None:
    with pytest.raises(CatalogError, match=message):
        plan(PlanRequest.model_validate(request_fields))


def test_exactly_one_shape_source() -> None:
    with pytest.raises(UsageError, match="exactly one of"):
        plan(PlanRequest(instance_type="p4d.24xlarge", accelerator="A100"))


def test_accelerator_picks_the_fastest_fabric() -> None:
    result = plan(PlanRequest(cloud="gcp", accelerator="H100", accelerator_count=8, platform="kubernetes"))
    assert result.instance is not None and result.instance.name == "a3-megagpu-8g"
    assert result.fabric is FabricName.GPUDIRECT_TCPXO


@pytest.mark.parametrize(
    ("instance", "daemon", "networks"),
    [
        ("a3-highgpu-8g", "tcpx-daemon", ["default", "vpc1", "vpc2", "vpc3", "vpc4"]),
        ("a3-megagpu-8g", "tcpxo-daemon", ["default"] + [f"vpc{i}" for i in range(1, 9)]),
        ("a3-ultragpu-8g", None, ["default", "gvnic-1"] + [f"rdma-{i}" for i in range(8)]),
    ],
)
def test_gke_annotations_and_sidecars(instance: str, daemon: str | None, networks: list[str]) -> None:
    result = plan(PlanRequest(instance_type=instance, platform="kubernetes"))
    pod = result.documents["kubernetes.pods"][0]
    interfaces = json.loads(pod["metadata"]["annotations"]["networking.gke.io/interfaces"])
    assert [i["network"] for i in interfaces] == networks
    assert [i["interfaceName"] for i in interfaces] == [f"eth{n}" for n in range(len(networks))]
    names = [c["name"] for c in pod["spec"]["containers"]]
    assert names == ["main"] + ([daemon] if daemon else [])
    assert "privileged" not in json.dumps(pod["spec"]["containers"])  # Google grants capabilities only
    assert [p for p in result.privileges if p.grant == "privileged"] == []
    assert all(p.why for p in result.privileges)
    for container in pod["spec"]["containers"]:
        context = container["securityContext"]
        assert context["capabilities"]["drop"] == ["ALL"] and context["allowPrivilegeEscalation"] is False
        for cap in context["capabilities"].get("add", []):
            grant = next(p for p in result.privileges if p.where == container["name"] and cap in p.grant)
            assert "RDMA" not in grant.why or instance == "a3-ultragpu-8g"
    for volume in pod["spec"]["volumes"]:
        if "hostPath" in volume:
            assert any(volume["hostPath"]["path"] in p.grant for p in result.privileges)


def test_user_pod_config_wins_and_conflicts_are_reported() -> None:
    user = {
        "spec": {
            "containers": [
                {
                    "resources": {"limits": {"vpc.amazonaws.com/efa": 2}},
                    "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
                }
            ],
            "nodeSelector": {"pool": "gpu"},
        }
    }
    result = plan(PlanRequest(instance_type="p4d.24xlarge", platform="kubernetes", pod_config=user))
    main = result.documents["kubernetes.pod_config"]["spec"]["containers"][0]
    assert main["resources"]["limits"]["vpc.amazonaws.com/efa"] == 2
    assert {"name": "NCCL_DEBUG", "value": "INFO"} in main["env"]
    assert {"name": "FI_PROVIDER", "value": "efa"} in main["env"]
    assert result.documents["kubernetes.pod_config"]["spec"]["nodeSelector"] == {"pool": "gpu"}
    assert result.conflicts == [
        "spec.containers[0].resources.limits.vpc.amazonaws.com/efa: plan 4, yours 2 (yours kept)"
    ]


def test_merge_by_name_and_union_of_capabilities() -> None:
    ours = {
        "spec": {
            "containers": [
                {
                    "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
                    "env": [{"name": "A", "value": "1"}],
                }
            ]
        }
    }
    theirs = {
        "spec": {
            "containers": [
                {
                    "securityContext": {"capabilities": {"add": ["SYS_PTRACE"]}},
                    "env": [{"name": "A", "value": "2"}, {"name": "B", "value": "3"}],
                }
            ]
        }
    }
    merged, conflicts = merge_pod_config(ours, theirs)
    main = merged["spec"]["containers"][0]
    assert main["securityContext"]["capabilities"]["add"] == ["IPC_LOCK", "SYS_PTRACE"]
    assert main["env"] == [{"name": "A", "value": "2"}, {"name": "B", "value": "3"}]
    assert conflicts == ["spec.containers[0].env[name=A].value: plan '1', yours '2' (yours kept)"]
    assert ours["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}]


def test_node_labels_plan_hyperpod() -> None:
    labels = {
        "node.kubernetes.io/instance-type": "ml.p4d.24xlarge",
        "sagemaker.amazonaws.com/compute-type": "hyperpod",
    }
    result = plan(PlanRequest(node_labels=labels, platform="kubernetes"))
    assert result.instance is not None and result.instance.name == "p4d.24xlarge" and result.nic_count == 4


def test_dl1_peer_direct_env_from_seed004() -> None:
    result = plan(PlanRequest(instance_type="dl1.24xlarge", platform="vm"))
    assert result.env["RDMAV_FORK_SAFE"] == "1" and result.env["FI_EFA_USE_DEVICE_RDMA"] == "1"
    assert not any(k.startswith("NCCL_") for k in result.env)  # HCCL, not NCCL


def test_skypilot_fragments() -> None:
    gcp = plan(PlanRequest(instance_type="a3-highgpu-8g", platform=Platform.SKYPILOT))
    assert gcp.documents["skypilot.task"]["config"] == {"gcp": {"enable_gpu_direct": True}}
    assert gcp.documents["skypilot.task"]["resources"]["network_tier"] == "best"
    eks = plan(
        PlanRequest(
            node_labels={"topology.k8s.aws/zone-id": "a", "node.kubernetes.io/instance-type": "p4d.24xlarge"},
            platform=Platform.SKYPILOT,
        )
    )
    pod_config = eks.documents["skypilot.task"]["config"]["kubernetes"]["pod_config"]
    assert pod_config["spec"]["containers"][0]["resources"]["limits"]["vpc.amazonaws.com/efa"] == 4


def test_slurm_script_exports_env() -> None:
    result = plan(PlanRequest(instance_type="p4d.24xlarge", platform="slurm", nodes=4))
    script = result.documents["slurm.sbatch"]["script"]
    assert "#SBATCH --nodes=4" in script and "export FI_PROVIDER=efa" in script
    assert re.search(r"srun --mpi=pmix", script)


def test_docker_options_and_their_reasons() -> None:
    result = plan(PlanRequest(instance_type="p4d.24xlarge", platform="docker"))
    assert "--network=host" in result.docker_options and "--device=/dev/infiniband" in result.docker_options
    assert "--env=FI_PROVIDER" in result.docker_options
    assert {p.grant for p in result.privileges} >= {"--network=host", "/dev/infiniband"}
