"""Node groups feed the planner: one plan per (shape, fabric state), for the nodes that exist.

Node objects are deserialized by the official client's own ``ApiClient.deserialize`` into ``V1NodeList``;
plans come from the planner's public ``plan()``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from kube_api import RecordedNodesApi
from kubernetes.client import ApiClient

from gpufabric.catalog import FabricName
from gpufabric.cli.app import main
from gpufabric.inventory import (
    Inventory,
    build_inventory,
    node_info,
    parse_scontrol_nodes,
    plan_groups,
    plan_request,
)
from gpufabric.planner import Platform, Tier

INVENTORY_FIXTURES = Path(__file__).parents[1] / "fixtures" / "inventory"


def load(fixture: str) -> Inventory:
    node_list = ApiClient().deserialize(
        (INVENTORY_FIXTURES / fixture).read_text(), "V1NodeList", "application/json"
    )
    return build_inventory([node_info(node) for node in node_list.items], source="kubernetes")


def test_groups_split_one_shape_by_fabric_state() -> None:
    inventory = load("eks_mixed.json")
    groups = {g.key: g for g in inventory.groups}
    assert set(groups) == {
        "p5.48xlarge/efa=32",
        "p5.48xlarge/socket",
        "p4d.24xlarge/efa=4",
        "p4d.24xlarge/efa=1",
        "p4d.24xlarge/socket",
    }
    healthy_p5 = groups["p5.48xlarge/efa=32"]
    assert healthy_p5.nodes == [
        "ip-10-0-12-41.us-west-2.compute.internal",
        "ip-10-0-77-9.us-west-2.compute.internal",
    ]
    assert (healthy_p5.fabric, healthy_p5.fabric_nics, healthy_p5.gpus_per_node) == (FabricName.EFA, 32, 8)
    assert healthy_p5.zones == ["us-west-2a", "us-west-2b"]
    assert healthy_p5.selector == {
        "node.kubernetes.io/instance-type": "p5.48xlarge",
        "eks.amazonaws.com/nodegroup": "gpu-p5",
    }
    assert groups["p5.48xlarge/socket"].notes == [
        "these nodes cannot use efa (see their verdicts): planning socket"
    ]
    assert all("m5.2xlarge" not in key for key in groups)  # CPU nodes are not planned


def test_plan_requests_follow_what_the_nodes_can_do() -> None:
    groups = {g.key: g for g in load("eks_mixed.json").groups}
    full = plan_request(groups["p5.48xlarge/efa=32"])
    assert full is not None and full.node_labels is not None
    assert (full.platform, full.nodes, full.tier, full.efa_count) == (Platform.KUBERNETES, 2, Tier.BEST, None)
    partial = plan_request(groups["p4d.24xlarge/efa=1"])
    assert partial is not None and (partial.tier, partial.efa_count) == (Tier.BEST, 1)
    missing = plan_request(groups["p4d.24xlarge/socket"])
    assert missing is not None and (missing.tier, missing.efa_count) == (Tier.STANDARD, None)


def test_plans_per_group() -> None:
    plans = {p.group.key: p.plan for p in plan_groups(load("eks_mixed.json"))}
    p5 = plans["p5.48xlarge/efa=32@us-west-2a"]  # the group spans two zones: EFA is planned per zone
    assert p5 is not None and (p5.fabric, p5.nic_count, p5.nodes) == (FabricName.EFA, 32, 1)
    one_efa = plans["p4d.24xlarge/efa=1"]
    assert one_efa is not None and (one_efa.fabric, one_efa.nic_count) == (FabricName.EFA, 1)
    sockets = plans["p5.48xlarge/socket"]
    assert sockets is not None and (sockets.fabric, sockets.nic_count) == (FabricName.SOCKET, 0)
    assert "vpc.amazonaws.com/efa" not in json.dumps(sockets.documents)  # it would leave the pod Pending
    assert "vpc.amazonaws.com/efa" in json.dumps(p5.documents)


def test_gke_mixed_pool_gets_one_plan_per_variant() -> None:
    plans = plan_groups(load("gke_a3_mixed.json"))
    assert [
        (p.group.key, p.plan.fabric if p.plan else None, p.plan.nodes if p.plan else None) for p in plans
    ] == [
        ("a3-highgpu-8g/gpudirect-tcpx=4", FabricName.GPUDIRECT_TCPX, 3),
        ("a3-megagpu-8g/gpudirect-tcpxo=8", FabricName.GPUDIRECT_TCPXO, 2),
    ]


def test_slurm_group_plans_for_slurm() -> None:
    captured = INVENTORY_FIXTURES / "scontrol_show_nodes_oneliner_slurm-22.05.8.txt"
    inventory = build_inventory(parse_scontrol_nodes(captured.read_text()), source="slurm")
    (item,) = plan_groups(inventory)
    assert item.request is not None
    assert (item.request.instance_type, item.request.platform, item.request.efa_count) == (
        "p4d.24xlarge",
        Platform.SLURM,
        2,
    )
    assert item.plan is not None and (item.plan.fabric, item.plan.nic_count) == (FabricName.EFA, 2)


def test_cli_plan_flag(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "gke_a3_mixed.json")
    monkeypatch.setattr(sys, "argv", ["gpufabric", "nodes", "--plan"])
    with pytest.raises(SystemExit) as done:
        main()
    out = capsys.readouterr().out
    assert done.value.code in (0, None)
    assert (
        "group a3-highgpu-8g/gpudirect-tcpx=4: 3 node(s) in us-central1-c, 8 GPUs each, gpudirect-tcpx x4"
        in out
    )
    assert "  plan: gpudirect-tcpxo, 8 NIC(s) per node: best tier" in out
    assert "  export NCCL_FASTRAK_IFNAME=eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8" in out
    monkeypatch.setattr(sys, "argv", ["gpufabric", "nodes", "--plan", "--format", "json"])
    with pytest.raises(SystemExit):
        main()
    doc = json.loads(capsys.readouterr().out)
    assert [p["group"] for p in doc["plans"]] == [
        "a3-highgpu-8g/gpudirect-tcpx=4",
        "a3-megagpu-8g/gpudirect-tcpxo=8",
    ]
    assert doc["plans"][0]["plan"]["fabric"] == "gpudirect-tcpx"


def test_gke_networks_from_the_north_interfaces_annotation_alone() -> None:
    doc = json.loads((INVENTORY_FIXTURES / "gke_a3_mixed.json").read_text())
    item = doc["items"][0]
    for section in ("capacity", "allocatable"):
        item["status"][section] = {
            k: v
            for k, v in item["status"][section].items()
            if not k.startswith("networking.gke.io.networks/")
        }
    node = ApiClient().deserialize(json.dumps(item), "V1Node", "application/json")
    assert node_info(node).gke_networks == ["vpc1", "vpc2", "vpc3", "vpc4"]
    item["metadata"]["annotations"]["networking.gke.io/north-interfaces"] = "[{not json"
    broken = ApiClient().deserialize(json.dumps(item), "V1Node", "application/json")
    assert node_info(broken).gke_networks == []


def test_plan_from_cluster_plans_each_node_group(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`gpufabric plan --from-cluster`: the planner per node group of the real nodes, not one shape."""
    nodes_api.serve_file(INVENTORY_FIXTURES / "gke_a3_mixed.json")
    monkeypatch.setattr(sys, "argv", ["gpufabric", "plan", "--from-cluster", "--format", "json"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code in (0, None)
    doc = json.loads(capsys.readouterr().out)
    assert [(p["group"], p["plan"]["fabric"]) for p in doc["plans"]] == [
        ("a3-highgpu-8g/gpudirect-tcpx=4", "gpudirect-tcpx"),
        ("a3-megagpu-8g/gpudirect-tcpxo=8", "gpudirect-tcpxo"),
    ]
    monkeypatch.setattr(sys, "argv", ["gpufabric", "plan", "--from-cluster", "--format", "table"])
    with pytest.raises(SystemExit):
        main()
    assert "  plan: gpudirect-tcpxo, 8 NIC(s) per node: best tier" in capsys.readouterr().out


def test_plan_from_cluster_refuses_a_shape_flag(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["gpufabric", "plan", "--from-cluster", "-t", "p4d.24xlarge"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--instance-type" in err and "--from-cluster" in err
