"""Per-node verdicts on nodes the fixtures do not cover: GPUs missing, node state, unknown shapes,
socket-only shapes, Together's nvidia.com/rdma_ib, EFA on Slurm without an EFA GRES, in-cluster config."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpufabric.cli.app import main
from gpufabric.errors import UsageError
from gpufabric.inventory import NodeInfo, build_inventory
from gpufabric.inventory.kube_client import connect
from gpufabric.inventory.verdicts import node_report

EKS = {
    "k8s.io/cloud-provider-aws": "a94967527effcefb5f5829f529c0a1b9",
    "topology.kubernetes.io/zone": "us-east-1a",
}


def eks_node(instance: str, **fields: object) -> NodeInfo:
    labels = {**EKS, "node.kubernetes.io/instance-type": instance}
    base: dict[str, object] = {
        "name": f"n-{instance}",
        "source": "kubernetes",
        "provider": "eks",
        "instance_type": instance,
        "gpu_allocatable": 8,
        "gpu_capacity": 8,
        "labels": labels,
        "ready": True,
    }
    return NodeInfo.model_validate(base | fields)


def messages(node: NodeInfo) -> list[tuple[str, str]]:
    return [(f.status, f.message) for f in node_report(node).findings]


def test_gpu_device_plugin_missing() -> None:
    node = eks_node(
        "p4d.24xlarge", gpu_allocatable=None, gpu_capacity=None, fabric_resources={"vpc.amazonaws.com/efa": 4}
    )
    assert messages(node) == [
        ("fail", "p4d.24xlarge has 8 A100, node advertises none: NVIDIA device plugin (GPU Operator) missing")
    ]


def test_fewer_gpus_than_the_shape() -> None:
    node = eks_node("p4d.24xlarge", gpu_allocatable=7, fabric_resources={"vpc.amazonaws.com/efa": 4})
    ((status, message),) = messages(node)
    assert status == "warn" and message.startswith("p4d.24xlarge has 8 A100, node advertises 7 allocatable")


def test_not_ready_and_cordoned() -> None:
    efa = {"vpc.amazonaws.com/efa": 4}
    down = eks_node("p4d.24xlarge", ready=False, state="NotReady", fabric_resources=efa)
    assert messages(down) == [("warn", "node is NotReady: nothing is scheduled on it")]
    cordoned = eks_node("p4d.24xlarge", schedulable=False, fabric_resources=efa)
    assert messages(cordoned) == [("info", "node is cordoned (unschedulable): new jobs will not land on it")]


def test_unknown_shape_with_gpus_is_a_warning() -> None:
    report = node_report(eks_node("p9.96xlarge"))
    assert report.shape is None and report.status == "warn"
    assert report.findings[0].message.startswith(
        "p9.96xlarge: provider eks recognised, but no label names a catalog shape; cannot tell which fabric"
    )


def test_unknown_provider() -> None:
    node = NodeInfo(name="kind-worker", source="kubernetes", gpu_allocatable=1, gpu_capacity=1)
    (finding,) = node_report(node).findings
    assert finding.status == "warn" and "no provider label recognised" in finding.message


def test_socket_only_shape() -> None:
    ((status, message),) = messages(eks_node("p3.16xlarge"))
    assert status == "info" and message.startswith(
        "p3.16xlarge has no inter-node fabric: NCCL uses TCP sockets"
    )
    assert node_report(eks_node("p3.16xlarge")).fabric_ready


def test_together_rdma_ib_resource() -> None:
    labels = {
        "node-role.together.ai/gpu": "true",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.count": "8",
    }
    node = NodeInfo(
        name="t1",
        source="kubernetes",
        gpu_allocatable=8,
        gpu_capacity=8,
        labels=labels,
        fabric_resources={"nvidia.com/rdma_ib": 8},
    )
    report = node_report(node)
    assert (report.shape, report.status, report.fabric_ready) == ("together-h100-8x-ib", "ok", True)
    missing = node_report(node.model_copy(update={"fabric_resources": {}}))
    assert (
        missing.status == "fail"
        and "through nvidia.com/rdma_ib, node advertises none" in missing.findings[0].message
    )


def test_slurm_efa_without_an_efa_gres_is_only_informative() -> None:
    node = NodeInfo(
        name="queue1-dy-p5-1",
        source="slurm",
        gpu_allocatable=8,
        gpu_capacity=8,
        features=["dynamic", "p5.48xlarge", "p5-48xlarge", "efa", "gpu"],
        ready=True,
    )
    report = node_report(node)
    assert report.shape == "p5.48xlarge" and report.matched_by == "Slurm feature p5.48xlarge"
    assert [(f.status, f.message.split(";")[0]) for f in report.findings] == [
        ("info", "p5.48xlarge has 32 EFA")
    ]
    assert build_inventory([node], source="slurm").groups[0].key == "p5.48xlarge/efa=32"


def test_parallelcluster_dash_spelling_of_the_instance_type() -> None:
    node = NodeInfo(name="q-st-p4d-1", source="slurm", gpu_allocatable=8, features=["static", "p4d-24xlarge"])
    assert node_report(node).shape == "p4d.24xlarge"


def test_same_fabric_mixed_pool_is_informative() -> None:
    p4d = eks_node("p4d.24xlarge", fabric_resources={"vpc.amazonaws.com/efa": 4})
    p5 = eks_node("p5.48xlarge", fabric_resources={"vpc.amazonaws.com/efa": 32})
    (finding,) = build_inventory([p4d, p5], source="kubernetes").findings
    assert (finding.status, finding.message) == (
        "info",
        "mixed pool: 1 p4d.24xlarge (EFA) and 1 p5.48xlarge (EFA), all on EFA",
    )


def test_no_nodes_matching_a_selector() -> None:
    (finding,) = build_inventory([], source="kubernetes", selector="pool=none").findings
    assert finding.message == "no nodes matching --selector pool=none"


def test_in_cluster_config_outside_a_pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config
    service = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    with pytest.raises(UsageError, match=r"no kube config at /nonexistent/config \(\$KUBECONFIG\)"):
        connect(
            environ={"KUBECONFIG": "/nonexistent/config", **service}
        )  # explicit: an error, not in-cluster
    with pytest.raises(UsageError, match=r"^in-cluster Kubernetes config: .*run with a kube config instead"):
        connect(environ=service)  # in a pod this reads the service account; here its token file is absent


def test_kubernetes_flags_do_not_apply_to_slurm(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["gpufabric", "nodes", "--on", "slurm", "--context", "prod"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 2
    assert capsys.readouterr().err == (
        "Error: --context: Kubernetes options do not apply to --on slurm; drop them, or use --on kubernetes "
        "(Slurm reads the cluster from SLURM_CONF)\n"
    )
