"""A cluster's nodes as text (``gpufabric nodes``) and its plan per node group (``plan --from-cluster``).

The table is laid out exactly as ``kubectl get -o custom-columns`` lays out its output (Go tabwriter:
minimum cell width 6, padding 3, ``<none>`` for a missing value), so that
``gpufabric nodes --columns NAME,INSTANCETYPE,GPU,EFA`` prints what seed 000's hand-written
``kubectl get nodes -o custom-columns=...`` prints. JSON and YAML are the models' own dumps, with each
group plan naming its group by key. ``--format env`` of a cluster plan is one ``export`` block: sourcing
two groups' exports would leave the last group's values, right for neither.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import yaml

from gpufabric.errors import UsageError
from gpufabric.inventory.documents import ClusterPlan, NodeListing
from gpufabric.inventory.expect import advertised_summary
from gpufabric.inventory.kube_nodes import EFA_RESOURCE
from gpufabric.inventory.model import Inventory, NodeGroup, NodeReport
from gpufabric.inventory.planning import GroupPlan
from gpufabric.report.formats import Format

NONE = "<none>"
MIN_WIDTH, PADDING = 6, 3


def _opt(value: object) -> str:
    return NONE if value is None or value == "" else str(value)


def _efa(r: NodeReport) -> str:
    node = r.node
    if EFA_RESOURCE in node.fabric_resources:
        return str(node.fabric_resources[EFA_RESOURCE])
    return _opt(node.fabric_resources.get("efa"))


COLUMNS: dict[str, Callable[[NodeReport], str]] = {
    "NAME": lambda r: r.node.name,
    "INSTANCETYPE": lambda r: _opt(r.node.instance_type or r.shape),
    "SHAPE": lambda r: _opt(r.shape),
    "PROVIDER": lambda r: _opt(r.node.provider),
    "ZONE": lambda r: _opt(r.node.zone),
    "POOL": lambda r: _opt(r.node.node_pool),
    "STATE": lambda r: _opt(r.node.state),
    "PARTITIONS": lambda r: _opt(",".join(r.node.partitions)),
    "CPUS": lambda r: _opt(r.node.cpus),
    "MEMORY": lambda r: _opt(f"{r.node.memory_mb}M" if r.node.memory_mb is not None else None),
    # HyperPod and plain EKS nodes carry no GPU product label: the catalog knows the shape's accelerator.
    "GPUTYPE": lambda r: _opt(r.node.gpu_type or (r.expected.accelerator if r.expected else None)),
    "GPU": lambda r: _opt(r.node.gpu_allocatable),
    "EFA": _efa,
    "NETWORKS": lambda r: _opt(len(r.node.gke_networks) if r.node.gke_networks else None),
    "FABRIC": lambda r: _opt(advertised_summary(r.node)),
    "EXPECTED": lambda r: _opt(r.expected.summary if r.expected else None),
    "STATUS": lambda r: r.status,
}
KUBERNETES_COLUMNS = ("NAME", "INSTANCETYPE", "ZONE", "GPUTYPE", "GPU", "FABRIC", "EXPECTED", "STATUS")
SLURM_COLUMNS = (
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
)


def parse_columns(spec: str | None) -> tuple[str, ...] | None:
    """``NAME,GPU,EFA`` -> validated column names (case-insensitive); None keeps the defaults."""
    if spec is None:
        return None
    names = tuple(part.strip().upper() for part in spec.split(",") if part.strip())
    unknown = [n for n in names if n not in COLUMNS]
    if unknown or not names:
        raise UsageError(
            f"--columns {spec!r}: unknown column {', '.join(unknown) or '(none given)'}; "
            f"choose from {','.join(COLUMNS)}"
        )
    return names


def tabulate(rows: list[list[str]]) -> str:
    """Columns as Go's tabwriter(minwidth 6, padding 3) prints them for kubectl; last column unpadded."""
    if not rows:
        return ""
    widths = [max(MIN_WIDTH, max(len(row[i]) for row in rows) + PADDING) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("".join(cells) + row[-1])
    return "\n".join(lines) + "\n"


def node_table(inventory: Inventory, columns: tuple[str, ...] | None = None) -> str:
    chosen = columns or (SLURM_COLUMNS if inventory.source == "slurm" else KUBERNETES_COLUMNS)
    rows = [list(chosen)] + [[COLUMNS[c](report) for c in chosen] for report in inventory.nodes]
    return tabulate(rows)


def findings_text(inventory: Inventory) -> str:
    """One line per finding that is not ``ok``: per node first, then the cluster's."""
    lines = [
        f"{finding.status:<4}  {report.node.name}: {finding.message}"
        for report in inventory.nodes
        for finding in report.findings
    ]
    lines += [f"{finding.status:<4}  cluster: {finding.message}" for finding in inventory.findings]
    return "\n".join(lines) + ("\n" if lines else "")


def group_line(group: NodeGroup) -> str:
    nics = f" x{group.fabric_nics}" if group.fabric_nics else ""
    where = f" in {','.join(group.zones)}" if group.zones else ""
    return (
        f"{group.key}: {len(group.nodes)} node(s){where}, {group.gpus_per_node} GPUs each, "
        f"{group.fabric.value}{nics}: {', '.join(group.nodes)}"
    )


def _plan_text(plans: list[GroupPlan]) -> str:
    lines = []
    for item in plans:
        lines.append(f"group {group_line(item.group)}")
        lines += [f"  note: {note}" for note in item.group.notes]
        if item.plan is None:
            lines.append(f"  not planned: {item.skipped}")
            continue
        plan = item.plan
        lines.append(f"  plan: {plan.fabric.value}, {plan.nic_count} NIC(s) per node: {plan.fabric_reason}")
        lines += [f"  warning: {w}" for w in plan.warnings]
        lines += [f"  prerequisite: {p}" for p in plan.prerequisites]
        lines += [f"  {line}" for line in plan.env_lines()]
    return "\n".join(lines) + ("\n" if lines else "")


def _document(inventory: Inventory, plans: list[GroupPlan] | None) -> dict[str, Any]:
    doc: dict[str, Any] = inventory.model_dump(mode="json")
    if plans is not None:
        doc["plans"] = [p.model_dump(mode="json", exclude={"group"}) | {"group": p.group.key} for p in plans]
    return doc


def _dumped(document: dict[str, Any], fmt: Format) -> str:
    if fmt is Format.JSON:
        return json.dumps(document, indent=2) + "\n"
    return str(yaml.safe_dump(document, sort_keys=False))


def render_nodes(listing: NodeListing, fmt: Format, *, columns: tuple[str, ...] | None = None) -> str:
    """``gpufabric nodes``: the node table (``columns``, or the scheduler's defaults with the findings
    under it) and the group plans; or the whole listing as JSON or YAML."""
    fmt = Format(fmt)
    if fmt is not Format.TABLE:
        return _dumped(_document(listing.inventory, listing.plans), fmt)
    text = node_table(listing.inventory, columns)
    if columns is None:
        notes = findings_text(listing.inventory)
        text += ("\n" + notes) if notes else ""
    if listing.plans is not None:
        text += "\n" + _plan_text(listing.plans)
    return text


def _comment(text: str) -> str:
    return "# " + " ".join(text.split())  # one line: a newline inside would end the comment


def cluster_env_text(plans: list[GroupPlan], *, fabric_off: bool = False) -> str:
    """``plan --from-cluster --format env``: ``# group`` comments, then one ``export`` block to source.

    When the planned groups need different environments the user picks one group with --selector.
    """
    planned = [(item, item.plan) for item in plans if item.plan is not None]
    if not planned:
        reasons = "; ".join(f"{item.group.key}: {item.skipped}" for item in plans) or "the cluster has none"
        raise UsageError(f"--format env: no node group could be planned ({reasons})")
    envs = {tuple(sorted((p.fabric_off_env if fabric_off else p.env).items())) for _, p in planned}
    if len(envs) > 1:
        item = planned[0][0]
        example = ",".join(f"{k}={v}" for k, v in item.group.selector.items()) or "LABEL=VALUE"
        raise UsageError(
            f"--format env: node groups {', '.join(i.group.key for i, _ in planned)} need different "
            f"environments, and one shell can hold only one; plan one group with --selector (e.g. --selector "
            f"{example}) or use --format table"
        )
    lines = [_comment("gpufabric plan --from-cluster" + (" --fabric-off" if fabric_off else ""))]
    for item in plans:
        lines.append(_comment(f"group {group_line(item.group)}"))
        lines += [_comment(f"note: {note}") for note in item.group.notes]
        if item.plan is None:
            lines.append(_comment(f"not planned: {item.skipped}"))
    lines += planned[0][1].env_lines(fabric_off=fabric_off)
    return "\n".join(lines) + "\n"


def cluster_plan_notices(cluster: ClusterPlan) -> list[str]:
    """The groups' planner warnings and pod_config conflicts, one line each, for stderr: ``--format env``
    has no place for them in what the shell sources."""
    notices: list[str] = []
    for item in cluster.plans:
        if item.plan is None:
            continue
        notices += [f"Warning: {item.group.key}: {warning}" for warning in item.plan.warnings]
        notices += [f"Note: {item.group.key}: pod_config {conflict}" for conflict in item.plan.conflicts]
    return notices


def render_cluster_plan(cluster: ClusterPlan, fmt: Format, *, fabric_off: bool = False) -> str:
    """``plan --from-cluster``: the plan per node group as text (``table``), one ``export`` block
    (``env``, the A/B off profile with ``fabric_off``), or the inventory and plans as JSON or YAML."""
    fmt = Format(fmt)
    if fmt is Format.ENV:
        return cluster_env_text(cluster.plans, fabric_off=fabric_off)
    if fmt in (Format.JSON, Format.YAML):
        return _dumped(_document(cluster.inventory, cluster.plans), fmt)
    return _plan_text(cluster.plans)
