"""Text renderings of an ``Inventory``: kubectl-style columns, verdict lines, node groups.

The table is laid out exactly as ``kubectl get -o custom-columns`` lays out its output (Go tabwriter:
minimum cell width 6, padding 3, ``<none>`` for a missing value), so that
``gpufabric nodes --columns NAME,INSTANCETYPE,GPU,EFA`` prints what seed 000's hand-written
``kubectl get nodes -o custom-columns=...`` prints. JSON and YAML are the models' own dumps (cli).
"""

from __future__ import annotations

from collections.abc import Callable

from gpufabric.errors import UsageError
from gpufabric.inventory.expect import advertised_summary
from gpufabric.inventory.kube_nodes import EFA_RESOURCE
from gpufabric.inventory.model import Inventory, NodeGroup, NodeReport

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
