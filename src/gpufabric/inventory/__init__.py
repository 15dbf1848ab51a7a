"""Cluster inventory: what fabric every node really offers, against what its shape should offer.

Public API (the CLI's ``gpufabric nodes`` and ``plan --from-cluster`` call only this):
    ``read_inventory(on, context=, kubeconfig=, selector=) -> Inventory``  by ``Scheduler``; or directly
        ``kubernetes_inventory(context=None, kubeconfig=None, selector=None, environ=None)`` (the official
        client, ``kube_client.py``, read by ``kube_nodes.py``) and ``slurm_inventory(environ=None)``
        (``scontrol show nodes --oneliner``, ``slurm.py``), all in ``sources.py``.
    ``build_inventory(nodes, source=...) -> Inventory``  verdicts (``verdicts.py``), node groups
        (``groups.py``) and cluster findings (``cluster.py``) for nodes read elsewhere.
    ``node_info(v1_node) -> NodeInfo``, ``parse_scontrol_nodes(text) -> list[NodeInfo]``
    ``plan_groups(inventory, platform=None, options=None) -> list[GroupPlan]``  the planner's plan per
        node group (``planning.py``), ``options: ClusterPlanOptions`` the ``plan`` flags for every group;
        ``plan_request(group)`` is the planner input alone.
    ``NodeListing``, ``ClusterPlan``  the documents ``nodes`` and ``plan --from-cluster`` render
        (``documents.py``; the text is ``report.nodes_render``'s), each built in one call:
        ``list_nodes(on, ..., with_plan=, platform=)`` and ``plan_cluster(on, ..., options=)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (gpufabric._lazy)
    from gpufabric.inventory.cluster import build_inventory
    from gpufabric.inventory.documents import ClusterPlan, NodeListing, list_nodes, plan_cluster
    from gpufabric.inventory.kube_nodes import node_info
    from gpufabric.inventory.model import (
        FabricExpectation,
        Finding,
        Inventory,
        NodeGroup,
        NodeInfo,
        NodeReport,
        Scheduler,
    )
    from gpufabric.inventory.planning import ClusterPlanOptions, GroupPlan, plan_groups, plan_request
    from gpufabric.inventory.slurm import parse_scontrol_nodes
    from gpufabric.inventory.sources import kubernetes_inventory, read_inventory, slurm_inventory
lazy_package(__name__)

__all__ = [
    "ClusterPlan",
    "ClusterPlanOptions",
    "FabricExpectation",
    "Finding",
    "GroupPlan",
    "Inventory",
    "NodeGroup",
    "NodeInfo",
    "NodeListing",
    "NodeReport",
    "Scheduler",
    "build_inventory",
    "kubernetes_inventory",
    "list_nodes",
    "node_info",
    "parse_scontrol_nodes",
    "plan_cluster",
    "plan_groups",
    "plan_request",
    "read_inventory",
    "slurm_inventory",
]
