"""Expected busbw: look up a baseline curve and read it at a size, interpolating only inside its range.

Between two published sizes, busbw is interpolated linearly in log2(size): nccl-tests sweeps double the
size each step, and the published curves are smooth and monotone at that resolution. The tolerance of an
interpolated value grows by half the relative step between its neighbours, so a bumpy segment is not
claimed more precisely than its end points. Outside the published range, or for node counts nobody
published, there is no baseline (None): extrapolating network curves is not defensible.
"""

from __future__ import annotations

import itertools
import math

from gpufabric.catalog.loader import load_catalog
from gpufabric.catalog.lookup import get_instance
from gpufabric.catalog.model import Baseline, BaselineCurve, Collective

# The seeds print busbw with two decimals: a value of 0.01 may be anything from 0.005 to 0.015.
PUBLISHED_ROUNDING_GBPS = 0.005


def list_baseline_curves(instance: str | None = None) -> list[BaselineCurve]:
    """All curves (NCCL busbw and the indicative HCCL ones), optionally of one instance."""
    curves = load_catalog().curves
    if instance is None:
        return list(curves)
    name = get_instance(instance).name
    return [c for c in curves if c.instance == name]


def _read_curve(curve: BaselineCurve, size_bytes: int) -> tuple[float, float, bool] | None:
    """(busbw, tolerance, interpolated) at ``size_bytes``, or None outside the curve."""
    points = curve.points
    for point in points:
        if point.size_bytes == size_bytes:
            return point.busbw_gbps, _with_rounding(curve.tolerance_at(size_bytes), point.busbw_gbps), False
    for low, high in itertools.pairwise(points):
        if low.size_bytes < size_bytes < high.size_bytes:
            frac = math.log2(size_bytes / low.size_bytes) / math.log2(high.size_bytes / low.size_bytes)
            value = low.busbw_gbps + frac * (high.busbw_gbps - low.busbw_gbps)
            step = abs(high.busbw_gbps - low.busbw_gbps) / max(value, 1e-12)
            tolerance = _with_rounding(curve.tolerance_at(size_bytes) + step / 2, value)
            return value, tolerance, True
    return None


def _with_rounding(tolerance: float, value: float) -> float:
    return min(0.99, tolerance + PUBLISHED_ROUNDING_GBPS / max(value, PUBLISHED_ROUNDING_GBPS))


def expected_busbw(
    instance: str,
    collective: Collective | str,
    nodes: int,
    size_bytes: int,
    *,
    variant: str | None = None,
    platform: str | None = None,
) -> Baseline | None:
    """The busbw to expect, or None when no published curve covers this configuration.

    ``variant`` None means the instance's best tier (fabric on, every NIC); name one (``efa-x1``,
    ``socket``, ``tcpx`` ...) to get the A/B references. When several published runs match (p4d on EKS
    and on VMs), the baseline is their mean and the tolerance widens to cover all of them.
    """
    name = get_instance(instance).name
    candidates = [
        c
        for c in load_catalog().curves
        if c.instance == name
        and c.collective == collective
        and c.nodes == nodes
        and c.metric == "busbw"
        and (c.variant == variant if variant is not None else c.default)
        and (platform is None or c.platform == platform)
    ]
    readings = [(c, r) for c in candidates if (r := _read_curve(c, size_bytes)) is not None]
    if not readings:
        return None
    values = [r[0] for _, r in readings]
    mean = sum(values) / len(values)
    tolerance = max(r[1] for _, r in readings)
    if mean > 0:
        tolerance = max(
            tolerance, *(abs(v - mean) / mean + r[1] for v, (_, r) in zip(values, readings, strict=True))
        )
    first = readings[0][0]
    return Baseline(
        instance=name,
        collective=first.collective,
        nodes=nodes,
        size_bytes=size_bytes,
        busbw_gbps=mean,
        tolerance=min(tolerance, 0.99),
        variant=first.variant,
        fabric=first.fabric,
        fabric_nics=first.fabric_nics,
        interpolated=any(r[2] for _, r in readings),
        curve_ids=tuple(c.id for c, _ in readings),
        provenance=tuple(p for c, _ in readings for p in c.provenance),
    )
