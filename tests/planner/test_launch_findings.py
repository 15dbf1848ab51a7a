"""The launch findings of the reference comparison, each a test: plans that would fail at launch or fall
back to TCP silently (docs/planner-references.md)."""

from __future__ import annotations

import pytest

from gpufabric.errors import CatalogError
from gpufabric.planner import PlanRequest, Platform, Tier, ab_profiles, plan
from gpufabric.planner.images import EFA_NCCL_TESTS


@pytest.mark.parametrize("node_labels", [None, {"node.kubernetes.io/instance-type": "p4d.24xlarge"}])
def test_skypilot_efa_task_runs_the_image_whose_paths_it_references(
    node_labels: dict[str, str] | None,
) -> None:
    request = (
        PlanRequest(node_labels=node_labels, platform=Platform.SKYPILOT)
        if node_labels
        else PlanRequest(instance_type="p4d.24xlarge", platform=Platform.SKYPILOT)
    )
    task = plan(request).documents["skypilot.task"]
    assert task["resources"]["image_id"] == f"docker:{EFA_NCCL_TESTS.ref}"
    assert task["envs"]["NCCL_TUNER_PLUGIN"].startswith("/opt/amazon/ofi-nccl/")
    assert "LD_LIBRARY_PATH" not in task["envs"]


def test_a_users_image_gets_no_paths_of_ours() -> None:
    result = plan(PlanRequest(instance_type="p4d.24xlarge", platform=Platform.KUBERNETES, image="mine:1"))
    assert "NCCL_TUNER_PLUGIN" not in result.env and "LD_LIBRARY_PATH" not in result.env


@pytest.mark.parametrize("platform", [Platform.VM, Platform.SLURM])
def test_efa_hosts_keep_the_amis_plugin_paths(platform: Platform) -> None:
    result = plan(PlanRequest(instance_type="p5.48xlarge", platform=platform))
    assert not any("/opt/aws-ofi-nccl" in v or "ofi-nccl" in v for v in result.env.values())


def test_ec2_bodies_can_be_reached() -> None:
    result = plan(PlanRequest(instance_type="p4d.24xlarge", platform=Platform.VM))
    run = result.documents["ec2.RunInstances"]
    assert run["KeyName"] == "${KEY_NAME}" and run["IamInstanceProfile"] == {
        "Name": "${IAM_INSTANCE_PROFILE}"
    }
    rules = result.documents["ec2.AuthorizeSecurityGroupIngress"]["IpPermissions"]
    assert {
        "IpProtocol": "tcp",
        "FromPort": 22,
        "ToPort": 22,
        "IpRanges": [{"CidrIp": "${SSH_CIDR}", "Description": "ssh"}],
    } in rules
    assert {"KEY_NAME", "IAM_INSTANCE_PROFILE", "SSH_CIDR"} <= set(result.parameters)


@pytest.mark.parametrize(
    "instance",
    ["a3-megagpu-8g", "a3-ultragpu-8g", "a4-highgpu-8g", "dl1.24xlarge", "p3dn.24xlarge", "trn1.32xlarge"],
)
def test_skypilot_vm_plans_what_launches_and_strict_refuses(instance: str) -> None:
    result = plan(PlanRequest(instance_type=instance, platform=Platform.SKYPILOT))
    assert result.tier_planned is Tier.STANDARD
    assert result.documents["skypilot.task"]["resources"]["network_tier"] == "standard"
    assert "NCCL_NET" not in result.env or result.env["NCCL_NET"] != "gIB"
    (line,) = [w for w in result.warnings if w.startswith("SkyPilot 0.14.1")]
    assert "planning network_tier: standard" in line
    with pytest.raises(CatalogError, match="--strict forbids that fallback"):
        plan(PlanRequest(instance_type=instance, platform=Platform.SKYPILOT, strict=True))


def test_skypilot_keeps_best_where_it_can_launch_it() -> None:
    for instance in ("a3-highgpu-8g", "p5.48xlarge"):
        assert plan(PlanRequest(instance_type=instance, platform=Platform.SKYPILOT)).tier_planned is Tier.BEST


def test_gaudi_is_its_own_family() -> None:
    result = plan(PlanRequest(instance_type="dl1.24xlarge", platform=Platform.DOCKER))
    assert "--gpus=all" not in result.docker_options and "--runtime=habana" in result.docker_options
    assert not any(k.startswith("NCCL_") for k in result.env)
    assert result.env["FI_EFA_USE_DEVICE_RDMA"] == "1" and result.env["RDMAV_FORK_SAFE"] == "1"
    assert result.fabric_off_env == {**result.env, "FI_EFA_USE_DEVICE_RDMA": "0"}  # peer direct A/B
    assert result.log_proof == [] and any("HCCL" in w for w in result.warnings)
    k8s = plan(PlanRequest(instance_type="dl1.24xlarge", platform=Platform.KUBERNETES))
    assert "vault.habana.ai" in k8s.parameters["IMAGE"]
    assert "nvidia.com/gpu" not in str(k8s.documents["kubernetes.pod_config"])
    profiles = ab_profiles(nodes=2, instance_type="dl1.24xlarge")
    assert profiles.off.apply(profiles.on.env)["FI_EFA_USE_DEVICE_RDMA"] == "0"
    assert profiles.off.apply(profiles.on.env)["FI_PROVIDER"] == "efa"


def test_no_gpus_flag_on_cos() -> None:
    for instance in ("a3-highgpu-8g", "a3-megagpu-8g", "a3-ultragpu-8g", "a2-highgpu-8g"):
        result = plan(PlanRequest(instance_type=instance, platform=Platform.DOCKER))
        assert "--gpus=all" not in result.docker_options
        assert "--device=/dev/nvidiactl" in result.docker_options
    assert (
        "--gpus=all"
        in plan(PlanRequest(instance_type="p4d.24xlarge", platform=Platform.DOCKER)).docker_options
    )


def test_every_container_of_every_manifest_drops_all_and_lists_its_grants() -> None:
    for instance in (
        "p4d.24xlarge",
        "a3-highgpu-8g",
        "a3-megagpu-8g",
        "a3-ultragpu-8g",
        "g5.xlarge",
        "dl1.24xlarge",
    ):
        result = plan(PlanRequest(instance_type=instance, platform=Platform.KUBERNETES))
        for container in result.documents["kubernetes.pods"][0]["spec"]["containers"]:
            context = container["securityContext"]
            assert context["capabilities"]["drop"] == ["ALL"] and context["allowPrivilegeEscalation"] is False
            for cap in context["capabilities"].get("add", []):
                assert any(
                    p.where == container["name"] and p.grant == f"capability {cap}" for p in result.privileges
                )


def test_every_planned_env_value_carries_its_source() -> None:
    for instance in ("p4d.24xlarge", "a3-highgpu-8g", "a3-megagpu-8g", "a4-highgpu-8g", "dl1.24xlarge"):
        result = plan(PlanRequest(instance_type=instance, platform=Platform.KUBERNETES))
        assert set(result.sources) >= {f"env.{name}" for name in result.env} | {"image"} - (
            {"image"} if instance == "dl1.24xlarge" else set()
        )
        assert not any("000_" in s or ".txt" in s for s in result.sources.values())  # no internal file names
    efa = plan(PlanRequest(instance_type="p4d.24xlarge", platform=Platform.KUBERNETES))
    assert "awsome-distributed-training" in efa.sources["env.NCCL_TUNER_PLUGIN"]
    tcpxo = plan(PlanRequest(instance_type="a3-megagpu-8g", platform=Platform.KUBERNETES))
    assert "gpudirect-tcpxo/README.md" in tcpxo.sources["env.NCCL_TUNER_PLUGIN"]


def test_skypilot_pod_config_leaves_skypilots_main_container_runtime() -> None:
    labels = {"node.kubernetes.io/instance-type": "p4d.24xlarge"}
    task = plan(PlanRequest(node_labels=labels, platform=Platform.SKYPILOT)).documents["skypilot.task"]
    main = task["config"]["kubernetes"]["pod_config"]["spec"]["containers"][0]
    assert main["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}  # no drop: SkyPilot runs sshd
    pod = plan(PlanRequest(node_labels=labels, platform=Platform.KUBERNETES)).documents["kubernetes.pods"][0]
    assert pod["spec"]["containers"][0]["securityContext"]["capabilities"]["drop"] == ["ALL"]
