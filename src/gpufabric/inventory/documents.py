"""The documents the cluster commands render (``report.nodes_render``): ``NodeListing`` for
``gpufabric nodes`` (the inventory, and with ``--plan`` the plan per node group) and ``ClusterPlan`` for
``gpufabric plan --from-cluster`` (the plan per node group of the nodes that exist); ``list_nodes`` and
``plan_cluster`` read the cluster and build them in one call."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from gpufabric.inventory.model import Inventory, Scheduler
from gpufabric.inventory.planning import ClusterPlanOptions, GroupPlan, plan_groups
from gpufabric.inventory.sources import read_inventory
from gpufabric.planner import Platform


class NodeListing(BaseModel):
    """``gpufabric nodes``: every node with its verdicts; ``plans`` only with ``--plan``."""

    model_config = ConfigDict(extra="forbid")

    inventory: Inventory
    plans: list[GroupPlan] | None = None


class ClusterPlan(BaseModel):
    """``gpufabric plan --from-cluster``: the planner's answer for every node group of ``inventory``."""

    model_config = ConfigDict(extra="forbid")

    inventory: Inventory
    plans: list[GroupPlan]


def list_nodes(
    on: Scheduler,
    *,
    context: str | None = None,
    kubeconfig: str | None = None,
    selector: str | None = None,
    with_plan: bool = False,
    platform: Platform | None = None,
) -> NodeListing:
    """``gpufabric nodes``: the cluster's nodes (``read_inventory``) and, ``with_plan``, the plan of each
    node group for ``platform`` (default: where the nodes are)."""
    inventory = read_inventory(on, context=context, kubeconfig=kubeconfig, selector=selector)
    plans = plan_groups(inventory, platform=platform) if with_plan else None
    return NodeListing(inventory=inventory, plans=plans)


def plan_cluster(
    on: Scheduler,
    *,
    context: str | None = None,
    kubeconfig: str | None = None,
    selector: str | None = None,
    options: ClusterPlanOptions | None = None,
) -> ClusterPlan:
    """``gpufabric plan --from-cluster``: the cluster's nodes and the plan of each node group, with the
    ``plan`` flags (``options``) applied to every group."""
    inventory = read_inventory(on, context=context, kubeconfig=kubeconfig, selector=selector)
    return ClusterPlan(inventory=inventory, plans=plan_groups(inventory, options=options))
