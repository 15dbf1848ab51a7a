"""Golden tests: EFA and Trainium plans against AWS's own references, vendored under
tests/fixtures/references/ (aws-ofi-nccl's EFA cheatsheet, the AWS Neuron SDK's docs and Dockerfile; the
README there names each source and commit).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from gpufabric.catalog import FabricName, get_instance, list_instances
from gpufabric.planner import PlanRequest, Platform, plan
from gpufabric.planner.images import NEURON_DLC

REFS = Path(__file__).parents[1] / "fixtures" / "references"
NEURON = REFS / "aws-neuron"
EFA_SHAPES = [i.name for i in list_instances() if i.fabric is FabricName.EFA]
TRAINIUM = [i.name for i in list_instances() if i.accelerator_kind == "aws-trainium"]


def _cheatsheet() -> dict[str, str]:
    """aws-ofi-nccl doc/efa-env-var.md: setting -> its advice (the table's two cells)."""
    text = (REFS / "aws-ofi-nccl" / "efa-env-var.md").read_text()
    rows = re.findall(r"<td><code>([^<]+)</code></td>\s*<td>(.*?)</td>", text, flags=re.S)
    return {setting: re.sub(r"\s+", " ", advice) for setting, advice in rows}


def test_the_cheatsheet_says_what_the_plans_follow() -> None:
    advice = _cheatsheet()
    assert advice["RDMAV_FORK_SAFE=1"].startswith("Do not use.")
    assert advice["RDMAV_*"] == "Do not use."
    assert advice["FI_EFA_FORK_SAFE=1"].startswith("Not needed anymore.")


@pytest.mark.parametrize("instance", EFA_SHAPES)
@pytest.mark.parametrize("platform", [Platform.KUBERNETES, Platform.DOCKER, Platform.SLURM, Platform.VM])
def test_no_efa_plan_sets_what_aws_ofi_nccl_says_not_to(instance: str, platform: Platform) -> None:
    result = plan(PlanRequest(instance_type=instance, platform=platform))
    forbidden = {"FI_EFA_FORK_SAFE"}  # "not needed anymore": the plugin sets it itself
    if get_instance(instance).accelerator_kind == "habana-gaudi":
        # HCCL loads no aws-ofi-nccl; Habana's "Scale-out via Host NIC" asks for rdma-core's switch.
        assert result.env["RDMAV_FORK_SAFE"] == "1"
        assert any("Scale_Out_via_Host_NIC" in p.ref for p in get_instance(instance).provenance)
    else:
        forbidden |= {name for name in result.env if name.startswith("RDMAV_")}
        assert not any(name.startswith("RDMAV_") for name in result.env)
    assert not forbidden & set(result.env), forbidden & set(result.env)


def test_trainium_efa_counts_are_neurons() -> None:
    collectives = (NEURON / "collectives.rst").read_text()
    trn2 = re.search(r"consists of (\d+) Trainium2 chips, each connected to a (\d+)Gbps EFA", collectives)
    assert trn2 is not None
    chips, gbps = int(trn2.group(1)), int(trn2.group(2))
    assert (get_instance("trn2.48xlarge").nic_count, get_instance("trn2.48xlarge").nic_gbps) == (chips, gbps)
    setup = (NEURON / "setup-trn1-multi-node-execution.rst").read_text()
    counts = dict(re.findall(r"(trn1n?\.32xlarge) has (\d+) EFA devices", setup))
    assert {name: get_instance(name).nic_count for name in counts} == {k: int(v) for k, v in counts.items()}


def test_trn2_plans_every_efa() -> None:
    result = plan(PlanRequest(instance_type="trn2.48xlarge", platform=Platform.KUBERNETES))
    assert result.nic_count == 16 and result.baseline_variant == "efa-x16"
    assert not any("interface count" in w for w in result.warnings)


def _neuron_device_plugin_resources() -> dict[str, str]:
    """The device-plugin Worker of Neuron's EKS guide (deploy/eks/dra.rst): its resources limits."""
    text = (NEURON / "dra.rst").read_text()
    block = text[text.index("Device plugin-based workloads") :]
    limits = block[block.index("limits:") : block.index("requests:")]
    return dict(re.findall(r"(\S+): \"(\d+)\"", limits))


@pytest.mark.parametrize("instance", TRAINIUM)
def test_trainium_pods_are_neurons_not_cuda(instance: str) -> None:
    result = plan(PlanRequest(instance_type=instance, platform=Platform.KUBERNETES))
    pod = result.documents["kubernetes.pods"][0]
    main = pod["spec"]["containers"][0]
    dockerfile = (NEURON / "Dockerfile-training-dlc").read_text()
    assert main["image"] == NEURON_DLC.ref == re.search(r"^FROM (\S+)", dockerfile, flags=re.M).group(1)  # type: ignore[union-attr]
    repo = "https://gallery.ecr.aws/" + NEURON_DLC.ref.split("/", 1)[1].split(":")[0]
    rows = list(csv.DictReader((NEURON / "neuron_dlc_images.csv").open()))
    assert any(r["ECR Public Repo URL"] == repo and "aws-neuronx-tools" in r["Neuron Package"] for r in rows)
    limits = main["resources"]["limits"]
    assert limits == main["resources"]["requests"]
    inst = get_instance(instance)
    expected = {"aws.amazon.com/neuron": inst.accelerator_count, "vpc.amazonaws.com/efa": inst.nic_count}
    assert limits == expected  # no nvidia.com/gpu, no huge pages: Neuron's example asks none
    if instance == "trn2.48xlarge":  # Neuron's example is a 16-device, 16-EFA node
        assert {k: str(v) for k, v in limits.items()} == _neuron_device_plugin_resources()
    assert {"name": "dshm", "mountPath": "/dev/shm"} in main["volumeMounts"]
    assert not any("huge pages" in p for p in result.prerequisites)
    assert "cuda" not in main["image"] and not any(n.startswith("NCCL_") for n in result.env)


@pytest.mark.parametrize("instance", TRAINIUM)
def test_trainium_docker_gets_neuron_devices_and_neurons_env(instance: str) -> None:
    result = plan(PlanRequest(instance_type=instance, platform=Platform.DOCKER))
    run = result.documents["docker.run"]
    quickstart = (NEURON / "quickstart-deploy-dlc.rst").read_text()
    neuron_devices = re.findall(r"--device=(/dev/neuron\d+)", quickstart)  # a trn2.48xlarge: 16 devices
    ours = [o.removeprefix("--device=") for o in run["options"] if o.startswith("--device=/dev/neuron")]
    assert ours == neuron_devices[: get_instance(instance).accelerator_count]
    assert "--gpus=all" not in run["options"] and run["image"] == NEURON_DLC.ref
    assert "--cap-add=IPC_LOCK" in run["options"] and "--device=/dev/infiniband" in run["options"]
    setup = (NEURON / "setup-trn1-multi-node-execution.rst").read_text()
    env_block = setup[setup.index("Application execution environment") :][:400]
    neuron_env = dict(re.findall(r"^\s+(FI_\w+)=(\S+)", env_block, flags=re.M))
    neuron_env.pop("FI_EFA_FORK_SAFE")  # "only required when running on AL2": the user's AMI choice
    assert neuron_env == {"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1"}
    assert neuron_env.items() <= result.env.items()
    assert result.log_proof == [] and any("nccom-test" in w for w in result.warnings)


def test_a_partial_trainium_pod_is_warned_neuron_needs_every_efa() -> None:
    faq = (NEURON / "faq.rst").read_text()
    assert "all EFA interfaces provided by trn1.32xlarge need to be" in re.sub(r"\s+", " ", faq)
    result = plan(PlanRequest(instance_type="trn1.32xlarge", platform=Platform.KUBERNETES, gpus=8))
    assert any("need all 8 EFA interfaces" in w and "attaches 4" in w for w in result.warnings)
