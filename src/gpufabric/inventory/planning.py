"""Plan per node group: the planner's input for the nodes that exist, and its answer.

``plan_request(group)`` builds the ``PlanRequest`` a group of detected nodes stands for: Kubernetes
groups pass a member's labels (the planner's ``--node-labels`` path, so provider-specific env and
affinity apply), Slurm groups their catalog shape. The fabric is what the nodes can give *now*: a group
whose EFA device plugin is missing is planned on the standard tier (requesting ``vpc.amazonaws.com/efa``
there would leave the pod Pending), and a group with 1 of 4 EFA attached is planned with 1.
``plan_groups`` is what ``gpufabric nodes --plan`` (and a future ``gpufabric plan --from-cluster``) calls.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from gpufabric.catalog import FabricName, get_instance
from gpufabric.errors import CatalogError, UsageError
from gpufabric.inventory.model import Inventory, NodeGroup
from gpufabric.planner import Plan, PlanRequest, Platform, Tier, plan


class GroupPlan(BaseModel):
    """One node group and the planner's plan for it (or why none was made)."""

    model_config = ConfigDict(extra="forbid")

    group: NodeGroup
    request: PlanRequest | None = None
    plan: Plan | None = None
    skipped: str | None = None


def plan_request(group: NodeGroup, *, platform: Platform | None = None) -> PlanRequest | None:
    """The planner input for ``group``; None when no catalog shape or provider identifies it."""
    target = platform or (Platform.SLURM if group.source == "slurm" else Platform.KUBERNETES)
    tier = Tier.STANDARD if group.fabric is FabricName.SOCKET else Tier.BEST
    efa_count = None
    if group.fabric is FabricName.EFA and group.shape:
        full = get_instance(group.shape).nic_count
        if full is not None and 0 < group.fabric_nics < full:
            efa_count = group.fabric_nics
    if group.source == "kubernetes" and group.provider is not None:
        labels, shape = group.representative_labels, None
    elif group.shape is not None:
        labels, shape = None, group.shape
    else:
        return None
    return PlanRequest(
        node_labels=labels,
        instance_type=shape,
        platform=target,
        nodes=len(group.nodes),
        tier=tier,
        efa_count=efa_count,
    )


def plan_groups(inventory: Inventory, *, platform: Platform | None = None) -> list[GroupPlan]:
    """The planner's answer for every node group, largest group first."""
    results = []
    for group in inventory.groups:
        request = plan_request(group, platform=platform)
        if request is None:
            results.append(
                GroupPlan(
                    group=group,
                    skipped="no catalog shape identifies these nodes: plan them with "
                    "`gpufabric plan --instance-type TYPE` "
                    "(Slurm: give the nodes their instance type as a feature)",
                )
            )
            continue
        try:
            results.append(GroupPlan(group=group, request=request, plan=plan(request)))
        except (CatalogError, UsageError) as exc:
            results.append(GroupPlan(group=group, request=request, skipped=str(exc)))
    return results
