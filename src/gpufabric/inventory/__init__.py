"""Cluster inventory: what fabric every node really offers, against what its shape should offer.

Public API (the CLI's ``gpufabric nodes`` calls only this):
    ``kubernetes_inventory(context=None, kubeconfig=None, selector=None, environ=None) -> Inventory``
        lists nodes through the official client (``kube_client.py``), reads them (``kube_nodes.py``).
    ``slurm_inventory(environ=None) -> Inventory``  from ``scontrol show nodes --oneliner`` (``slurm.py``).
    ``build_inventory(nodes, source=...) -> Inventory``  verdicts (``verdicts.py``), node groups
        (``groups.py``) and cluster findings (``cluster.py``) for nodes read elsewhere.
    ``node_info(v1_node) -> NodeInfo``, ``parse_scontrol_nodes(text) -> list[NodeInfo]``
    ``plan_groups(inventory, platform=None, options=None) -> list[GroupPlan]``  the planner's plan per
        node group (``planning.py``), ``options: ClusterPlanOptions`` the ``plan`` flags for every group;
        ``plan_request(group)`` is the planner input alone.
    ``node_table``, ``findings_text``, ``parse_columns``  kubectl-style text (``render.py``).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpufabric.inventory.cluster import build_inventory
from gpufabric.inventory.kube_client import connect, list_nodes
from gpufabric.inventory.kube_nodes import node_info
from gpufabric.inventory.model import (
    FabricExpectation,
    Finding,
    Inventory,
    NodeGroup,
    NodeInfo,
    NodeReport,
)
from gpufabric.inventory.planning import ClusterPlanOptions, GroupPlan, plan_groups, plan_request
from gpufabric.inventory.render import findings_text, group_line, node_table, parse_columns
from gpufabric.inventory.slurm import list_slurm_nodes, parse_scontrol_nodes


def kubernetes_inventory(
    *,
    context: str | None = None,
    kubeconfig: str | None = None,
    selector: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Inventory:
    """Every node of the cluster (matching ``selector``), with verdicts, groups and cluster findings."""
    api, chosen = connect(context=context, kubeconfig=kubeconfig, environ=environ)
    with api:
        nodes = list_nodes(api, selector=selector, context=chosen)
    return build_inventory(
        [node_info(n) for n in nodes], source="kubernetes", context=chosen, selector=selector
    )


def slurm_inventory(environ: Mapping[str, str] | None = None) -> Inventory:
    """Every node ``scontrol show nodes`` reports, with verdicts, groups and cluster findings."""
    return build_inventory(list_slurm_nodes(environ), source="slurm")


__all__ = [
    "ClusterPlanOptions",
    "FabricExpectation",
    "Finding",
    "GroupPlan",
    "Inventory",
    "NodeGroup",
    "NodeInfo",
    "NodeReport",
    "build_inventory",
    "findings_text",
    "group_line",
    "kubernetes_inventory",
    "node_info",
    "node_table",
    "parse_columns",
    "parse_scontrol_nodes",
    "plan_groups",
    "plan_request",
    "slurm_inventory",
]
