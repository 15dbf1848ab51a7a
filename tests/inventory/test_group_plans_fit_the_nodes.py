"""Plans of real node groups use what the nodes advertise and stay on those nodes; listings fill gaps.

Slurm: the real one-node Slurm of slurm_gres.py (4 h100 GRES, 2 EFA, feature p4d.24xlarge), and its real
``scontrol show hostnames`` to expand the hostlists we write. Kubernetes: kube_api.py's recorded endpoint.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from kube_api import RecordedNodesApi
from slurm_harness import SlurmCluster

from gpufabric.cli.app import main
from gpufabric.inventory import plan_groups
from gpufabric.inventory.model import Inventory, NodeGroup, NodeInfo
from gpufabric.inventory.planning import slurm_placement
from gpufabric.inventory.verdicts import node_report
from gpufabric.planner.slurm import slurm_hostlist

INVENTORY_FIXTURES = Path(__file__).parents[1] / "fixtures" / "inventory"


def cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["gpufabric", *args])
    with pytest.raises(SystemExit) as done:
        main()
    out = capsys.readouterr()
    return (done.value.code if isinstance(done.value.code, int) else 0), out.out, out.err


def test_slurm_group_is_planned_with_its_gres_gpus_and_pinned_by_feature(
    slurm_gres_cluster: SlurmCluster, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in slurm_gres_cluster.client_env.items():
        monkeypatch.setenv(name, value)
    code, out, err = cli(monkeypatch, capsys, "plan", "--from-cluster", "--on", "slurm", "--format", "json")
    assert code == 0, err
    (item,) = json.loads(out)["plans"]
    plan = item["plan"]
    # The node's GRES says 4 GPUs and 2 EFA (p4d has 8 and 4): plan 4 GPUs with both EFA.
    assert (plan["gpus_per_node"], plan["nic_count"]) == (4, 2)
    assert "using 2 of 4 fabric NICs for 4 A100" in plan["fabric_reason"]
    options = plan["documents"]["slurm.sbatch"]["options"]
    assert "--gpus-per-node=4" in options and "--ntasks-per-node=4" in options
    # The group is every node with the p4d.24xlarge feature: the feature pins it.
    assert "--constraint=p4d.24xlarge" in options


def test_slurm_hostlists_expand_back_with_real_scontrol(slurm_gres_cluster: SlurmCluster) -> None:
    names = ["p4d-01", "p4d-02", "p4d-04", "gpu9", "gpu10", "head"]
    done = slurm_gres_cluster.run_client("scontrol", "show", "hostnames", slurm_hostlist(names))
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split()) == sorted(names)


def _group(nodes: list[str]) -> NodeGroup:
    return NodeGroup(
        key="p4d.24xlarge/efa=4",
        shape="p4d.24xlarge",
        source="slurm",
        provider=None,
        fabric="efa",
        expected_fabric="efa",
        fabric_nics=4,
        gpus_per_node=8,
        nodes=nodes,
    )


def test_slurm_placement_nodelist_or_constraint_with_exclude() -> None:
    features = {"p4d.24xlarge": ["p4d-1", "p4d-2", "p4d-3"]}  # p4d-3 is in another (broken) group
    group = _group(["p4d-1", "p4d-2"])
    assert slurm_placement(group, features, None) == (["p4d-1", "p4d-2"], None, None)
    assert slurm_placement(group, features, 1) == (None, "p4d.24xlarge", ["p4d-3"])
    assert slurm_placement(_group(["p4d-1", "p4d-2", "p4d-3"]), features, 1) == (None, "p4d.24xlarge", None)


def test_slurm_group_of_part_of_a_feature_gets_a_nodelist() -> None:
    def node(name: str, efa: int) -> NodeInfo:
        return NodeInfo(
            name=name,
            source="slurm",
            gpu_type="a100",
            gpu_allocatable=8,
            gpu_capacity=8,
            fabric_resources={"efa": efa},
            ready=True,
            features=["p4d-24xlarge"],
        )

    from gpufabric.inventory.groups import group_nodes

    # p4d-03 has 1 of its 4 EFA: its own group, so the healthy group is part of the feature's nodes.
    reports = [node_report(node(n, 4)) for n in ("p4d-01", "p4d-02")] + [node_report(node("p4d-03", 1))]
    inventory = Inventory(source="slurm", nodes=reports, groups=group_nodes(reports))
    plans = {p.group.key: p.plan for p in plan_groups(inventory)}
    healthy = plans["p4d.24xlarge/efa=4"]
    assert healthy is not None
    assert "--nodelist=p4d-[01-02]" in healthy.documents["slurm.sbatch"]["options"]


def test_efa_prerequisite_names_the_groups_own_count(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "eks_mixed.json")
    code, out, err = cli(monkeypatch, capsys, "plan", "--from-cluster", "--format", "json")
    assert code == 0, err
    plans = {p["group"]: p for p in json.loads(out)["plans"]}
    (one_efa,) = [p for key, p in plans.items() if key.startswith("p4d.24xlarge/efa=1")]
    prerequisite = next(p for p in one_efa["plan"]["prerequisites"] if "custom-columns" in p)
    assert "shows 1 (of p4d.24xlarge's 4" in prerequisite and "shows 4 per node" not in prerequisite


def test_hyperpod_gpu_type_comes_from_the_catalog(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "hyperpod_p4d_seed000.json")
    code, out, err = cli(monkeypatch, capsys, "nodes", "--columns", "NAME,GPUTYPE")
    assert code == 0, err
    rows = [line.split() for line in out.splitlines()[1:]]
    assert [row[1] for row in rows] == ["A100", "A100"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ("--format", "yaml", "--columns", "NAME"),
            "Error: --columns: chooses table columns and --format yaml",
        ),
        (("--platform", "slurm"), "Error: --platform slurm: only applies with --plan"),
    ],
)
def test_nodes_flags_that_do_not_apply_are_refused(
    args: tuple[str, ...],
    expected: str,
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "hyperpod_p4d_seed000.json")
    code, out, err = cli(monkeypatch, capsys, "nodes", *args)
    assert (code, out) == (2, "")
    assert err.strip().startswith(expected)
