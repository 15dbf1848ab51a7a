"""`gpufabric plan --from-cluster`: which flags apply per node group, what the plans pin, what env sources.

Kubernetes: the official client against kube_api.py's recorded endpoint serving tests/fixtures/inventory
node lists. Slurm: the real one-node Slurm of slurm_gres.py. Pods validate with kubernetes-validate.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from kube_api import RecordedNodesApi
from slurm_harness import SlurmCluster

from gpufabric.cli.app import main

INVENTORY_FIXTURES = Path(__file__).parents[1] / "fixtures" / "inventory"
K8S_VERSION = "1.30.0"


def plan_cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["gpufabric", "plan", *args])
    with pytest.raises(SystemExit) as done:
        main()
    out = capsys.readouterr()
    return (done.value.code if isinstance(done.value.code, int) else 0), out.out, out.err


def plans_of(stdout: str) -> dict[str, dict[str, Any]]:
    return {p["group"]: p for p in json.loads(stdout)["plans"]}


def test_on_slurm_plans_for_slurm(
    slurm_gres_cluster: SlurmCluster, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in slurm_gres_cluster.client_env.items():
        monkeypatch.setenv(name, value)
    code, out, err = plan_cli(monkeypatch, capsys, "--from-cluster", "--on", "slurm", "--format", "json")
    assert code == 0, err
    (item,) = json.loads(out)["plans"]
    assert item["plan"]["platform"] == "slurm" and item["request"]["platform"] == "slurm"
    assert "slurm.sbatch" in item["plan"]["documents"]
    assert not any(key.startswith("kubernetes.") for key in item["plan"]["documents"])


def test_efa_groups_are_split_per_zone_and_pinned_to_their_nodes(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "eks_mixed.json")
    code, out, err = plan_cli(monkeypatch, capsys, "--from-cluster", "--format", "json")
    assert code == 0, err
    plans = plans_of(out)
    # eks_mixed.json's two healthy p5 nodes sit in us-west-2a and us-west-2b: one plan per zone.
    assert "p5.48xlarge/efa=32" not in plans
    zone_a, zone_b = plans["p5.48xlarge/efa=32@us-west-2a"], plans["p5.48xlarge/efa=32@us-west-2b"]
    for item, node in (
        (zone_a, "ip-10-0-12-41.us-west-2.compute.internal"),
        (zone_b, "ip-10-0-77-9.us-west-2.compute.internal"),
    ):
        assert item["plan"]["nodes"] == 1
        (pod,) = item["plan"]["documents"]["kubernetes.pods"]
        kubernetes_validate.validate(pod, K8S_VERSION, strict=True)
        node_affinity = pod["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]
        (term,) = node_affinity["nodeSelectorTerms"]
        assert {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]} in term[
            "matchExpressions"
        ]
    # a broken-EFA node of the same shape is its own group, pinned apart from the healthy ones
    broken = plans["p5.48xlarge/socket"]["plan"]["documents"]["kubernetes.pod_config"]
    assert "ip-10-0-13-200.us-west-2.compute.internal" in json.dumps(broken["spec"]["affinity"])
    assert "ip-10-0-12-41" not in json.dumps(broken["spec"]["affinity"])


def test_flags_that_apply_to_every_group_are_honoured(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "gke_a3_mixed.json")
    pod_config = tmp_path / "pod.yaml"
    pod_config.write_text("metadata:\n  labels:\n    team: ml\n")
    code, out, err = plan_cli(
        monkeypatch,
        capsys,
        *("--from-cluster", "--format", "json", "--nodes", "2", "--gpus", "4", "--image", "my/nccl:1"),
        *("--cluster-name", "abtest", "--pod-config", str(pod_config)),
    )
    assert code == 0, err
    for item in plans_of(out).values():
        plan = item["plan"]
        assert (plan["nodes"], plan["gpus_per_node"]) == (2, 4)
        pods = plan["documents"]["kubernetes.pods"]
        assert [p["metadata"]["name"] for p in pods] == ["abtest-0", "abtest-1"]
        assert pods[0]["metadata"]["labels"]["team"] == "ml"
        assert pods[0]["spec"]["containers"][0]["image"] == "my/nccl:1"
    code, out, err = plan_cli(monkeypatch, capsys, "--from-cluster", "--format", "json", "--tier", "standard")
    assert code == 0, err
    assert {item["plan"]["fabric"] for item in plans_of(out).values()} == {"socket"}
    code, out, err = plan_cli(monkeypatch, capsys, "--from-cluster", "--format", "json", "--nodes", "3")
    plans = plans_of(out)
    assert plans["a3-highgpu-8g/gpudirect-tcpx=4"]["plan"]["nodes"] == 3
    assert plans["a3-megagpu-8g/gpudirect-tcpxo=8"]["skipped"] == "--nodes 3: this group has only 2 node(s)"


def test_fabric_flag_keeps_only_the_groups_that_have_it(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "gke_a3_mixed.json")
    code, out, err = plan_cli(
        monkeypatch, capsys, "--from-cluster", "--format", "json", "--fabric", "gpudirect-tcpx"
    )
    assert code == 0, err
    plans = plans_of(out)
    assert plans["a3-highgpu-8g/gpudirect-tcpx=4"]["plan"]["fabric"] == "gpudirect-tcpx"
    assert plans["a3-megagpu-8g/gpudirect-tcpxo=8"]["skipped"] == (
        "--fabric gpudirect-tcpx: these nodes can use gpudirect-tcpxo now, not gpudirect-tcpx"
    )
    code, out, err = plan_cli(monkeypatch, capsys, "--from-cluster", "--tier", "standard", "--fabric", "efa")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith("Error: --fabric efa contradicts --tier standard")


def test_strict_refuses_a_group_that_cannot_get_the_best_tier(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "eks_mixed.json")
    code, _, err = plan_cli(monkeypatch, capsys, "--from-cluster", "--strict")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(
        "Error: --strict: node group p4d.24xlarge/socket (1 node(s)) cannot get the best tier"
    )
    assert "cannot use efa" in err
    nodes_api.serve_file(INVENTORY_FIXTURES / "gke_a3_mixed.json")  # every group healthy: strict passes
    code, _, err = plan_cli(monkeypatch, capsys, "--from-cluster", "--strict", "--format", "json")
    assert code == 0, err


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--from-cluster", "--efa-count", "2"], "--efa-count"),
        (["--from-cluster", "--public-ip"], "--public-ip"),
        (["--from-cluster", "--cloud", "aws"], "--cloud"),
        (["--context", "prod"], "--context"),
        (["-t", "p4d.24xlarge", "--on", "slurm"], "--on"),
        (["-t", "p4d.24xlarge", "--selector", "a=b"], "--selector"),
    ],
)
def test_flags_that_do_not_apply_are_one_line_errors(
    args: list[str], flag: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = plan_cli(monkeypatch, capsys, *args)
    assert (code, out) == (2, "")
    assert err.startswith(f"Error: {flag}") and err.count("\n") == 1 and "--from-cluster" in err


def source(env_text: str, tmp_path: Path, *names: str) -> list[str]:
    """``names``' values after bash sources ``env_text`` under ``set -e`` (any bad line fails it)."""
    script = tmp_path / "plan.env"
    script.write_text(env_text)
    echo = "; ".join(f'printf "%s\\n" "${name}"' for name in names)
    done = subprocess.run(
        ["bash", "-c", f"set -e; source {script}; {echo}"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout.splitlines()


def test_env_format_is_sourceable(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "gke_a3_mixed.json")
    selector = "node.kubernetes.io/instance-type=a3-highgpu-8g"
    code, out, err = plan_cli(
        monkeypatch, capsys, "--from-cluster", "--selector", selector, "--format", "env"
    )
    assert code == 0, err
    assert all(line.startswith(("# ", "export ")) for line in out.splitlines())
    assert "# group a3-highgpu-8g/gpudirect-tcpx=4: 3 node(s)" in out
    bindings, ifnames = source(
        out, tmp_path, "NCCL_GPUDIRECTTCPX_TX_BINDINGS", "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"
    )
    assert bindings == "eth1:8-21,112-125;eth2:8-21,112-125;eth3:60-73,164-177;eth4:60-73,164-177"
    assert ifnames == "eth1,eth2,eth3,eth4"


def test_env_format_refuses_groups_that_need_different_envs(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "gke_a3_mixed.json")
    code, out, err = plan_cli(monkeypatch, capsys, "--from-cluster", "--format", "env")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert "node groups a3-highgpu-8g/gpudirect-tcpx=4, a3-megagpu-8g/gpudirect-tcpxo=8 need different" in err
    assert "--selector (e.g. --selector node.kubernetes.io/instance-type=a3-highgpu-8g" in err
