"""The documents the cluster commands render (``report.nodes_render``): ``NodeListing`` for
``gpufabric nodes`` (the inventory, and with ``--plan`` the plan per node group) and ``ClusterPlan`` for
``gpufabric plan --from-cluster`` (the plan per node group of the nodes that exist)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from gpufabric.inventory.model import Inventory
from gpufabric.inventory.planning import GroupPlan


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
