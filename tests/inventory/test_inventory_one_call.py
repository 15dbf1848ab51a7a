"""``list_nodes`` and ``plan_cluster``: ``gpufabric nodes`` and ``plan --from-cluster`` as one library call
each, against kube_api.py's recorded nodes endpoint."""

from __future__ import annotations

from pathlib import Path

from kube_api import RecordedNodesApi

from gpufabric.inventory import (
    ClusterPlanOptions,
    Scheduler,
    kubernetes_inventory,
    list_nodes,
    plan_cluster,
    plan_groups,
)
from gpufabric.planner import Platform

INVENTORY_FIXTURES = Path(__file__).parents[1] / "fixtures" / "inventory"


def test_list_nodes_reads_the_cluster_and_plans_only_when_asked(
    nodes_api: RecordedNodesApi, kubeconfig: Path
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "eks_mixed.json")
    inventory = kubernetes_inventory(kubeconfig=str(kubeconfig))
    listing = list_nodes(Scheduler.KUBERNETES, kubeconfig=str(kubeconfig))
    assert listing.inventory == inventory and listing.plans is None
    planned = list_nodes(Scheduler.KUBERNETES, kubeconfig=str(kubeconfig), with_plan=True,
                         platform=Platform.SKYPILOT)  # fmt: skip
    assert planned.plans == plan_groups(inventory, platform=Platform.SKYPILOT)
    assert planned.plans  # eks_mixed has GPU node groups to plan


def test_plan_cluster_plans_every_group_with_the_options(
    nodes_api: RecordedNodesApi, kubeconfig: Path
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "hyperpod_p4d_seed000.json")
    options = ClusterPlanOptions()
    cluster = plan_cluster(Scheduler.KUBERNETES, kubeconfig=str(kubeconfig), options=options)
    assert cluster.inventory == kubernetes_inventory(kubeconfig=str(kubeconfig))
    assert cluster.plans == plan_groups(cluster.inventory, options=options)
    assert [plan.group.key for plan in cluster.plans] == ["p4d.24xlarge/efa=4"]
