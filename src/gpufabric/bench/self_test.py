"""``bench --self-test``: what the one-node loopback proves, what it cannot, and the catalog's figures to
read its result against.

The self-test runs two virtual nodes of half this node's GPUs each (``gpufabric.launch.virtual_nodes``),
so NCCL's inter-node path runs through this node's own network stack. The catalog publishes busbw
between two *real* nodes of a shape (``gpufabric.catalog.baselines``); this module picks, per
collective, the largest swept size a 2-node curve of the node's shape covers and sets the measured
busbw beside it when ``--instance-type`` names the shape (nothing on the node names it reliably
offline). Without it the verdict comes from this node's own shape (``gpufabric.analysis.expected``:
the Socket loopback between the two virtual nodes, NVLink inside each), whose ``expected:`` lines the
CLI passes in. Text only; the CLI prints it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpufabric.catalog import Baseline, expected_busbw
from gpufabric.catalog.lookup import get_instance
from gpufabric.catalog.model import InstanceType
from gpufabric.results.model import RunResult
from gpufabric.units import human_size

SELF_TEST_NODES = 2
"""The self-test is two (virtual) nodes: the catalog's 2-node curves are the ones to read it against."""

SELF_TEST_NOTE = (
    "self-test: 2 virtual nodes on one host (NCCL_HOSTID per node), so NCCL's inter-node path runs "
    "through this node's own network stack: the net plugin, the NICs, PCIe and GPUDirect RDMA in a "
    "loopback. It cannot prove the switch fabric, cabling or another node's NICs, and its bandwidth is "
    "not a cluster figure"
)
CANNOT_PROVE = (
    "self-test: what the loopback cannot prove: the switch fabric, the cabling and other nodes' NICs; "
    "its busbw is this node talking to itself, not a cluster figure"
)
NOT_JUDGED = (
    "self-test: not judged: no expected figure from this node's shape, and no --instance-type for the "
    "catalog's (see `gpufabric catalog list`)"
)
REFERENCE_MEANING = (
    "the catalog's figure is busbw between 2 real nodes of this shape (every GPU and NIC of each, through "
    "the switch); the self-test splits one node's GPUs and NICs in two, so the figure is a reference, "
    "not a pass mark: far below it points at this node's NICs, net plugin or GPUDirect path"
)


@dataclass(frozen=True)
class CatalogFigure:
    """One collective's catalog figure at one swept size, and what this run measured there."""

    collective: str
    size_bytes: int
    baseline: Baseline
    measured_gbps: float | None


def check_instance(instance_type: str | None) -> InstanceType | None:
    """The catalog entry ``--instance-type`` names (one line with suggestions when it names none)."""
    return get_instance(instance_type) if instance_type else None


def catalog_figures(
    instance: InstanceType, collectives: Sequence[str], sizes: Sequence[int], result: RunResult | None
) -> list[CatalogFigure]:
    """Per collective, the largest size the catalog's 2-node curve covers: among the measured rows when
    there is a result, else among the sizes the sweep asks for (a dry run)."""
    measured = _measured(result)
    figures = []
    for collective in collectives:
        candidates = sorted(measured.get(collective, {}) if result is not None else sizes, reverse=True)
        for size in candidates:
            base = expected_busbw(instance.name, collective, SELF_TEST_NODES, size)
            if base is not None:
                got = measured.get(collective, {}).get(size)
                figures.append(CatalogFigure(collective, size, base, got))
                break
    return figures


def self_test_lines(
    instance: InstanceType | None,
    collectives: Sequence[str],
    sizes: Sequence[int],
    result: RunResult | None,
    judged: Sequence[str] = (),
    shapes_from: str | None = None,
) -> list[str]:
    """What ``bench --self-test`` prints next to its result (or, in a dry run, next to its plan):
    ``judged``, the result's ``expected:`` lines against this node's own shape (``shapes_from``), then
    the catalog's 2-node figures when ``--instance-type`` names the shape."""
    own = _own_shape_lines(judged, shapes_from, result, instance is None)
    if instance is None:
        return [*(own or [NOT_JUDGED]), CANNOT_PROVE]
    figures = catalog_figures(instance, collectives, sizes, result)
    if not figures:
        return [
            *own,
            f"self-test: no catalog figure: the catalog has no {SELF_TEST_NODES}-node busbw for "
            f"{instance.name} ({', '.join(collectives)}) at the swept sizes",
            CANNOT_PROVE,
        ]
    nics = f", {instance.nic_count} NICs" if instance.nic_count else ""
    lines = [
        *own,
        f"self-test: the catalog's expected figures for {instance.name} ({instance.fabric.value}{nics}):",
    ]
    for figure in figures:
        lines.append(f"  {_figure_text(figure)}")
    lines += [f"  {REFERENCE_MEANING}", CANNOT_PROVE]
    return lines


def _own_shape_lines(
    judged: Sequence[str], shapes_from: str | None, result: RunResult | None, no_instance: bool
) -> list[str]:
    """The verdict against this node's own shape (the NET loopback between the two virtual nodes, with
    NVLink inside each), or, in a dry run, what the result will be judged against."""
    if result is None and no_instance:
        return [
            "self-test: the result will be judged against this node's own shape, read from it when the run "
            "finishes (--instance-type adds the catalog's 2-node figures)"
        ]
    if not judged:
        return []
    head = f"self-test: against this node's own shape ({shapes_from or 'read from it'}):"
    return [head, *(f"  {line}" for line in judged)]


def _figure_text(figure: CatalogFigure) -> str:
    base = figure.baseline
    sources = "; ".join(dict.fromkeys(p.source for p in base.provenance))
    expected = (
        f"catalog {base.busbw_gbps:.2f} GB/s busbw +/-{100 * base.tolerance:.0f}% on {SELF_TEST_NODES} nodes "
        f"({base.variant}{', interpolated' if base.interpolated else ''}; {sources})"
    )
    where = f"{figure.collective} at {human_size(figure.size_bytes)}"
    if figure.measured_gbps is None:
        return f"{where}: {expected}"
    percent = 100 * figure.measured_gbps / base.busbw_gbps if base.busbw_gbps else float("inf")
    return f"{where}: {figure.measured_gbps:.2f} GB/s busbw here (loopback), {percent:.0f}% of the {expected}"


def _measured(result: RunResult | None) -> dict[str, dict[int, float]]:
    """collective -> size -> busbw (out-of-place where measured, else in-place)."""
    out: dict[str, dict[int, float]] = {}
    for series in result.series if result is not None else []:
        for row in series.rows:
            placement = row.out_of_place or row.in_place
            if placement is not None and placement.busbw_gbs is not None:
                name = series.collective.split("#")[0]  # a repeated collective is "name#2"
                out.setdefault(name, {})[row.size_bytes] = placement.busbw_gbs
    return out
