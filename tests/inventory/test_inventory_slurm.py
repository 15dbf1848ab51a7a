"""`gpufabric nodes --on slurm`: the scontrol parser on captured output, then against a real Slurm.

The real cluster (slurm_gres.py) is slurmctld + slurmd + munged from the OS packages, with a node that
has ``Gres=gpu:h100:4,efa:2`` and ``Features=p4d.24xlarge,efa``; tests/fixtures/inventory holds what its
``scontrol show nodes --oneliner`` printed (Slurm 22.05.8), including ``OS=`` with spaces in it.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest
from slurm_gres import SLURM_EFA, SLURM_GPUS
from slurm_harness import SlurmCluster

from gpufabric.cli.app import main
from gpufabric.errors import UsageError
from gpufabric.inventory import build_inventory, parse_scontrol_nodes, slurm_inventory
from gpufabric.inventory.slurm import list_slurm_nodes, parse_gres, parse_pairs

CAPTURED = (
    Path(__file__).parents[1] / "fixtures" / "inventory" / "scontrol_show_nodes_oneliner_slurm-22.05.8.txt"
)


def test_pairs_keep_values_with_spaces() -> None:
    pairs = parse_pairs(CAPTURED.read_text().strip())
    assert pairs["OS"] == "Linux 6.18.44-fc-v595 #1 SMP PREEMPT_DYNAMIC @0"
    assert pairs["Gres"] == "gpu:h100:4,efa:2"
    assert pairs["AllocTRES"] == ""
    assert pairs["CfgTRES"] == "cpu=2,mem=19284M,billing=2"
    assert pairs["ExtSensorsTemp"] == "n/s"


def test_captured_node() -> None:
    (node,) = parse_scontrol_nodes(CAPTURED.read_text())
    assert (node.name, node.state, node.partitions, node.cpus, node.memory_mb) == (
        "vm",
        "IDLE",
        ["debug"],
        2,
        19284,
    )
    assert (node.gpu_type, node.gpu_allocatable, node.fabric_resources) == ("h100", 4, {"efa": 2})
    assert node.features == ["p4d.24xlarge", "efa"]
    assert node.ready is True


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("gpu:h100:8(S:0-1)", [("gpu", "h100", 8)]),
        ("gpu:a100:4(S:0),gpu:a100:4(S:1)", [("gpu", "a100", 4), ("gpu", "a100", 4)]),
        ("gpu:8,efa:32", [("gpu", None, 8), ("efa", None, 32)]),
        ("gpu:h100:8(S:0,1),efa:4", [("gpu", "h100", 8), ("efa", None, 4)]),
        ("bandwidth:lustre:4G", [("bandwidth", "lustre", 4 * 1024**3)]),
        ("gpu", [("gpu", None, 1)]),
        ("(null)", []),
        ("", []),
    ],
)
def test_gres_forms(text: str, parsed: list[tuple[str, str | None, int]]) -> None:
    assert parse_gres(text) == parsed


def test_states_that_take_no_jobs() -> None:
    line = CAPTURED.read_text().strip()
    drained = line.replace("State=IDLE", "State=IDLE+DRAIN").replace("NodeName=vm", "NodeName=vm2")
    down = line.replace("State=IDLE", "State=DOWN*+NOT_RESPONDING").replace("NodeName=vm", "NodeName=vm3")
    mixed = line.replace("State=IDLE", "State=MIXED").replace("NodeName=vm", "NodeName=vm4")
    nodes = parse_scontrol_nodes("\n".join([drained, down, mixed]))
    assert [(n.name, n.ready) for n in nodes] == [("vm2", False), ("vm3", False), ("vm4", True)]
    inventory = build_inventory(nodes, source="slurm")
    assert inventory.nodes[0].findings[0].message == "node is IDLE+DRAIN: nothing is scheduled on it"


def test_scontrol_missing_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"scontrol is not on PATH; run on a Slurm login node"):
        list_slurm_nodes({"PATH": str(tmp_path)})


# --- the real Slurm ---------------------------------------------------------------------------------


def cluster_env(cluster: SlurmCluster) -> dict[str, str]:
    return {**os.environ, **cluster.client_env}


def test_real_slurm_listing(slurm_gres_cluster: SlurmCluster) -> None:
    inventory = slurm_inventory(cluster_env(slurm_gres_cluster))
    (report,) = inventory.nodes
    node = report.node
    assert node.name == socket.gethostname() == slurm_gres_cluster.hostname
    assert node.source == "slurm" and node.partitions == ["debug"] and node.cpus == slurm_gres_cluster.cpus
    assert (node.gpu_type, node.gpu_allocatable, node.fabric_resources) == (
        "h100",
        SLURM_GPUS,
        {"efa": SLURM_EFA},
    )
    assert report.shape == "p4d.24xlarge" and report.matched_by == "Slurm feature p4d.24xlarge"
    # p4d has 8 A100 and 4 EFA; this node's GRES says 4 GPUs and 2 EFA, and the verdicts say so.
    messages = [f.message for f in report.findings]
    assert messages[0].startswith(f"p4d.24xlarge has 8 A100, node advertises {SLURM_GPUS} allocatable")
    # Slurm wording: the fix is in gres.conf / the node's Gres= line, not a Kubernetes device plugin.
    assert "gres.conf and the node's Gres= line" in messages[0] and "device plugin" not in messages[0]
    # the GRES type (h100) contradicts the feature's shape (p4d: A100)
    assert messages[1].startswith("p4d.24xlarge has A100, but its GRES type says h100")
    assert [f.status for f in report.findings][:2] == ["warn", "warn"]
    assert messages[2].startswith(f"p4d expects 4 EFA, node advertises {SLURM_EFA}: only 2 of 4")
    (group,) = inventory.groups
    assert (group.key, group.gpus_per_node, group.nodes) == ("p4d.24xlarge/efa=2", SLURM_GPUS, [node.name])


def test_real_slurm_drained_node_with_a_reason(slurm_gres_cluster: SlurmCluster) -> None:
    host = slurm_gres_cluster.hostname
    done = slurm_gres_cluster.run_client(
        "scontrol", "update", f"NodeName={host}", "State=DRAIN", "Reason=EFA link down on rdmap16s27"
    )
    assert done.returncode == 0, done.stderr
    try:
        (node,) = list_slurm_nodes(cluster_env(slurm_gres_cluster))
    finally:
        slurm_gres_cluster.run_client("scontrol", "update", f"NodeName={host}", "State=RESUME")
    assert node.state is not None and "DRAIN" in node.state and node.ready is False
    assert node.gpu_allocatable == SLURM_GPUS  # the reason's spaces did not break the fields after it


def test_real_slurm_cli_table(
    slurm_gres_cluster: SlurmCluster, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in slurm_gres_cluster.client_env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "argv", ["gpufabric", "nodes", "--on", "slurm"])
    with pytest.raises(SystemExit) as done:
        main()
    out = capsys.readouterr().out
    assert done.value.code in (0, None)
    header, row = out.splitlines()[:2]
    assert header.split() == [
        "NAME",
        "STATE",
        "PARTITIONS",
        "CPUS",
        "MEMORY",
        "GPUTYPE",
        "GPU",
        "FABRIC",
        "EXPECTED",
        "STATUS",
    ]
    assert row.split()[0] == slurm_gres_cluster.hostname
    assert row.split()[5:] == ["h100", str(SLURM_GPUS), f"efa={SLURM_EFA}", "efa=4", "warn"]
