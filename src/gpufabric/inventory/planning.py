"""Plan per node group: the planner's input for the nodes that exist, and its answer.

``plan_request(group)`` builds the ``PlanRequest`` a group of detected nodes stands for: Kubernetes
groups pass a member's labels (the planner's ``--node-labels`` path, so provider-specific env and
affinity apply), Slurm groups their catalog shape. The fabric is what the nodes can give *now*: a group
whose EFA device plugin is missing is planned on the standard tier (requesting ``vpc.amazonaws.com/efa``
there would leave the pod Pending), and a group with 1 of 4 EFA attached is planned with 1. Kubernetes
plans pin their pods to the group's own nodes (``kubernetes.io/hostname``): the instance type alone would
also admit that shape's broken nodes. An EFA group spanning availability zones is planned one zone at a
time, because EFA traffic does not leave its subnet.

``plan_groups`` is what ``gpufabric nodes --plan`` and ``gpufabric plan --from-cluster`` call; the
``ClusterPlanOptions`` carry the ``plan`` flags that apply to every group.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.catalog import FabricName, get_instance
from gpufabric.errors import CatalogError, UsageError
from gpufabric.inventory.model import Inventory, NodeGroup, NodeInfo
from gpufabric.planner import Plan, PlanRequest, Platform, Tier, plan
from gpufabric.planner.resolve import check_tier_fabric

HOSTNAME_LABEL = "kubernetes.io/hostname"
POD_PLATFORMS = (Platform.KUBERNETES, Platform.SKYPILOT)


class ClusterPlanOptions(BaseModel):
    """The ``gpufabric plan`` flags that make sense for every node group (the shape comes from the nodes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    platform: Platform | None = Field(default=None, description="None: where the nodes are")
    tier: Tier = Tier.BEST
    strict: bool = Field(default=False, description="a group that cannot get the best tier is an error")
    nodes: int | None = Field(default=None, ge=1, description="nodes per group; None: all of the group's")
    gpus: int | None = Field(default=None, ge=1)
    fabric: FabricName | None = None
    pod_config: dict[str, Any] | None = None
    cluster_name: str = "gpufabric"
    image: str | None = None


class GroupPlan(BaseModel):
    """One node group and the planner's plan for it (or why none was made)."""

    model_config = ConfigDict(extra="forbid")

    group: NodeGroup
    request: PlanRequest | None = None
    plan: Plan | None = None
    skipped: str | None = None


def plan_request(
    group: NodeGroup,
    *,
    platform: Platform | None = None,
    options: ClusterPlanOptions | None = None,
    hostnames: list[str] | None = None,
    slurm_features: dict[str, list[str]] | None = None,
) -> PlanRequest | None:
    """The planner input for ``group``; None when no catalog shape or provider identifies it."""
    opts = options or ClusterPlanOptions(platform=platform)
    target = opts.platform or (Platform.SLURM if group.source == "slurm" else Platform.KUBERNETES)
    tier = Tier.STANDARD if group.fabric is FabricName.SOCKET else opts.tier
    efa_count = None
    if group.fabric is FabricName.EFA and group.shape and tier is Tier.BEST:
        full = get_instance(group.shape).nic_count
        if full is not None and 0 < group.fabric_nics < full:
            efa_count = group.fabric_nics
    if group.source == "kubernetes" and group.provider is not None:
        labels, shape = group.representative_labels, None
    elif group.shape is not None:
        labels, shape = None, group.shape
    else:
        return None
    pinned = hostnames if group.source == "kubernetes" and target in POD_PLATFORMS else None
    constraint, excluded = None, None
    if group.source == "slurm" and target is Platform.SLURM:
        pinned, constraint, excluded = slurm_placement(group, slurm_features or {}, opts.nodes)
    return PlanRequest(
        node_labels=labels,
        instance_type=shape,
        platform=target,
        nodes=opts.nodes or len(group.nodes),
        tier=tier,
        fabric=opts.fabric,
        gpus=opts.gpus,
        efa_count=efa_count,
        strict=opts.strict,
        pod_config=opts.pod_config,
        cluster_name=opts.cluster_name,
        image=opts.image,
        node_gpus=group.gpus_per_node or None,
        node_hostnames=pinned,
        slurm_constraint=constraint,
        slurm_exclude=excluded,
    )


def shape_feature(node: NodeInfo, shape: str) -> str | None:
    """The Slurm feature of ``node`` that names ``shape`` (``p4d.24xlarge`` or ``p4d-24xlarge``)."""
    for feature in node.features:
        for spelling in (feature, feature.replace("-", ".", 1)):
            try:
                if get_instance(spelling).name == shape:
                    return feature
            except CatalogError:
                continue
    return None


def slurm_placement(
    group: NodeGroup, features: dict[str, list[str]], nodes: int | None
) -> tuple[list[str] | None, str | None, list[str] | None]:
    """``(nodelist, constraint, exclude)`` pinning a Slurm job to ``group``.

    ``features``: feature -> every node of the cluster carrying it. ``--constraint`` when the group is
    exactly the nodes of its shape's feature; ``--nodelist`` when the job takes the whole group (a
    nodelist makes Slurm allocate every listed node); else the feature minus ``--exclude`` of the nodes
    of that shape outside the group (broken EFA, fewer GPUs).
    """
    feature = next((f for f, names in features.items() if set(group.nodes) <= set(names)), None)
    holders = set(features.get(feature, [])) if feature else set()
    if feature is not None and holders == set(group.nodes):
        return None, feature, None
    if nodes is None or nodes == len(group.nodes) or feature is None:
        return list(group.nodes), None, None
    return None, feature, sorted(holders - set(group.nodes))


def split_by_zone(group: NodeGroup, members: dict[str, NodeInfo]) -> list[NodeGroup]:
    """``group`` itself, or one group per availability zone for EFA nodes that span several."""
    if group.fabric is not FabricName.EFA or len(group.zones) < 2:
        return [group]
    by_zone: dict[str, list[str]] = defaultdict(list)
    for name in group.nodes:
        by_zone[members[name].zone or "unknown-zone"].append(name)
    note = (
        f"EFA traffic does not leave its availability zone: the {len(group.nodes)} nodes of {group.key} "
        f"in {', '.join(sorted(by_zone))} are planned one zone at a time"
    )
    return [
        group.model_copy(
            update={
                "key": f"{group.key}@{zone}",
                "nodes": names,
                "zones": [zone] if zone != "unknown-zone" else [],
                "notes": [*group.notes, note],
            }
        )
        for zone, names in sorted(by_zone.items(), key=lambda item: (-len(item[1]), item[0]))
    ]


def _shape_features(group: NodeGroup, members: dict[str, NodeInfo]) -> dict[str, list[str]]:
    """Slurm: the feature naming the group's shape -> every node of the cluster that carries it."""
    if group.source != "slurm" or group.shape is None:
        return {}
    feature = shape_feature(members[group.nodes[0]], group.shape)
    if feature is None:
        return {}
    return {feature: sorted(name for name, node in members.items() if feature in node.features)}


def _strict_refusal(group: NodeGroup, why: str) -> CatalogError:
    return CatalogError(
        f"--strict: node group {group.key} ({len(group.nodes)} node(s)) cannot get the best tier: {why}; "
        "fix those nodes, leave them out with --selector, or drop --strict"
    )


def _plan_one(group: NodeGroup, members: dict[str, NodeInfo], opts: ClusterPlanOptions) -> GroupPlan:
    if opts.strict and opts.tier is Tier.BEST and group.fabric is FabricName.SOCKET:
        expected = group.expected_fabric
        if expected is not None and expected is not FabricName.SOCKET:
            raise _strict_refusal(group, f"they cannot use {expected.value} (see their verdicts)")
        raise _strict_refusal(group, "their shape has no inter-node fabric")
    if opts.fabric not in (None, FabricName.SOCKET, group.fabric):
        assert opts.fabric is not None
        return GroupPlan(
            group=group,
            skipped=f"--fabric {opts.fabric.value}: these nodes can use {group.fabric.value} now, "
            f"not {opts.fabric.value}",
        )
    if opts.nodes is not None and opts.nodes > len(group.nodes):
        return GroupPlan(
            group=group,
            skipped=f"--nodes {opts.nodes}: this group has only {len(group.nodes)} node(s)",
        )
    if not group.gpus_per_node:
        return GroupPlan(
            group=group,
            skipped="these nodes advertise no allocatable GPUs (in use or unhealthy): nothing to plan",
        )
    hostnames = [members[name].labels.get(HOSTNAME_LABEL, name) for name in group.nodes]
    request = plan_request(
        group, options=opts, hostnames=hostnames, slurm_features=_shape_features(group, members)
    )
    if request is None:
        why = (
            "no catalog shape identifies these nodes: plan them with `gpufabric plan --instance-type TYPE` "
            "(Slurm: give the nodes their instance type as a feature)"
        )
        if opts.strict:
            raise _strict_refusal(group, why)
        return GroupPlan(group=group, skipped=why)
    try:
        return GroupPlan(group=group, request=request, plan=plan(request))
    except (CatalogError, UsageError) as exc:
        if opts.strict:
            raise
        return GroupPlan(group=group, request=request, skipped=str(exc))


def plan_groups(
    inventory: Inventory,
    *,
    platform: Platform | None = None,
    options: ClusterPlanOptions | None = None,
) -> list[GroupPlan]:
    """The planner's answer for every node group (EFA groups split per zone), largest group first."""
    opts = options or ClusterPlanOptions(platform=platform)
    check_tier_fabric(opts.tier, opts.fabric)
    members = {report.node.name: report.node for report in inventory.nodes}
    parts = [part for group in inventory.groups for part in split_by_zone(group, members)]
    return [_plan_one(part, members, opts) for part in sorted(parts, key=lambda g: (-len(g.nodes), g.key))]
