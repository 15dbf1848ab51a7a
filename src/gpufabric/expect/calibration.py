"""Efficiency bands fitted on the published healthy figures: how close to its ceiling a healthy system gets.

For each figure: its shape (``figure_shape``), its situation (``situation.assess``: path, regime,
ceiling) and its efficiency = busbw / ceiling. Where no NIC rate bounds the path (sockets on one host),
the figure's busbw itself is the value: that band is in GB/s (``basis="absolute"``), stated as what
healthy hosts published, not as physics.

A band is fitted per calibration group (``net/tree/rdma``, ``nvlink/ring``, ``socket/loopback/...``) and
at every coarser level of it (``net/tree``, ``net``), from the healthy figures not marked ``holdout`` at
sizes where the band applies (``band_from_bytes``): centre = median, low = lowest x (1 - MARGIN),
high = highest x (1 + MARGIN), never above the ceiling. ``band_for`` takes the finest level that has
figures. Nothing here is typed in: every number comes from ``published.yaml``.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Iterable
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.expect.gpus import short_model
from gpufabric.expect.published import PublishedFigure, load_published
from gpufabric.expect.regimes import Path, Regime
from gpufabric.expect.situation import Situation, Transport, assess
from gpufabric.expect.size_curve import fit_half_size, group_half_size, plateau_factor
from gpufabric.hardware import NicFacts, NicKind, NodeShape, NvLinkFacts

MARGIN = 0.10
"""How far outside the fitted figures a healthy result may still fall: the model's stated tolerance for
machines of one kind differing (a choice, not a measurement; the hold-out benchmark tests it)."""
MIB = 1 << 20
BAND_FROM_BYTES: dict[Path, int] = {
    Path.NVLINK: 64 * MIB,  # the 4x H200 all_reduce reaches 88% of its 2 GB figure at 64 MB
    Path.PCIE: 64 * MIB,
    Path.SOCKET: 256 * MIB,  # SkyPilot's p4d socket column reaches 98% of its 2 GB figure at 256 MB
    Path.NET: 512 * MIB,  # SkyPilot's p4d EFA column reaches 94% of its 2 GB figure at 512 MB
}
Basis = Literal["of-ceiling", "absolute"]


class Band(BaseModel):
    """What healthy systems reach on one calibration group: fractions of the ceiling, or GB/s."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    group: str
    basis: Basis
    low: float
    centre: float
    high: float
    fitted_on: tuple[str, ...] = Field(description="ids of the published figures fitted")
    half_size_bytes: float | None = Field(
        default=None,
        description="S_half of busbw(S) = plateau x S / (S + S_half) (size_curve); None: no series, flat",
    )
    series_fitted: tuple[str, ...] = Field(default=(), description="the series S_half was fitted on")

    def at_size(self, size_bytes: int | None) -> tuple[float, float, float]:
        """(low, centre, high) at ``size_bytes`` (None: the plateau): low, centre and high x S/(S+S_half)."""
        factor = plateau_factor(size_bytes, self.half_size_bytes)
        return self.low * factor, self.centre * factor, self.high * factor


def band_from_bytes(path: Path) -> int:
    """The smallest size the band applies to on ``path``; below it latency, not bandwidth, dominates."""
    return BAND_FROM_BYTES[path]


def figure_shape(figure: PublishedFigure) -> NodeShape:
    """The node a published figure was measured on, from the facts the figure states."""
    nvlink = (
        NvLinkFacts(
            generation=figure.nvlink.generation,
            links_per_gpu=figure.nvlink.links_per_gpu,
            link_gbytes_per_s=figure.nvlink.link_gbytes_per_s,
            nvswitch=figure.nvlink.nvswitch,
        )
        if figure.nvlink
        else None
    )
    nics: tuple[NicFacts, ...] = ()
    if figure.nics is not None:
        kind = NicKind(figure.nics.kind)
        nics = tuple(
            NicFacts(name=f"{kind.value}{i}", kind=kind, rate_gbps=figure.nics.rate_gbps)
            for i in range(figure.nics.count or 0)
        )
    return NodeShape(
        source="given",
        instance_type=figure.instance_type,
        gpu_model=short_model(figure.gpu) or figure.gpu,
        gpu_count=figure.gpus_per_host or figure.gpus_per_node,
        nvlink=nvlink,
        nics=nics,
    )


def _env_int(figure: PublishedFigure, name: str) -> int | None:
    value = figure.env.get(name)
    return int(value) if value is not None and value.strip().lstrip("-").isdigit() else None


_ALGO_WORDS = re.compile(r"NCCL_ALGO=(\w+)")
_REGIMES = {"ring": Regime.RING, "tree": Regime.TREE, "nvls": Regime.NVLS, "nvlstree": Regime.NVLS,
            "collnetdirect": Regime.COLLNET, "collnetchain": Regime.COLLNET, "pat": Regime.PAT}  # fmt: skip


def figure_regime(figure: PublishedFigure) -> Regime | None:
    """The algorithm the source forced: the ``regime`` field, else NCCL_ALGO in its env or its notes."""
    if figure.regime is not None:
        return figure.regime
    match = _ALGO_WORDS.search(figure.notes)
    algo = figure.env.get("NCCL_ALGO") or (match.group(1) if match else None)
    return _REGIMES.get(algo.lower()) if algo else None


def figure_arguments(figure: PublishedFigure) -> dict[str, Any]:
    """The keyword arguments of ``assess`` (and ``expect``) that describe the figure's run."""
    transport: Transport = {Path.SOCKET: "socket", Path.NET: "net"}.get(figure.path, "auto")  # type: ignore[assignment]
    return {
        "ranks_per_node": figure.gpus_per_node,
        "hosts": figure.physical_hosts,
        "transport": transport,
        "regime": figure_regime(figure),
        "nvls": False if figure.env.get("NCCL_NVLS_ENABLE") == "0" else None,
        "socket_threads": _env_int(figure, "NCCL_SOCKET_NTHREADS"),
        "socks_per_thread": _env_int(figure, "NCCL_NSOCKS_PERTHREAD"),
        "ranks_per_process": figure.ranks_per_process,
    }


def figure_situation(figure: PublishedFigure) -> Situation:
    """Path, regime and ceiling of the figure's run, as the model computes them."""
    return assess(figure_shape(figure), figure.collective, figure.nodes, **figure_arguments(figure))


def figure_value(figure: PublishedFigure, situation: Situation) -> tuple[str, Basis, float] | None:
    """The figure's group and efficiency (busbw / ceiling), or its busbw where no ceiling exists (socket
    loopback). A figure above its rule regime's ceiling, with no algorithm stated, ran the faster regime
    the shape allows (NVLS, NVLSTree): no ring can pass its ceiling."""
    ceiling = situation.ceiling_gbps
    if ceiling is not None and figure.busbw_gbps > ceiling and figure_regime(figure) is None:
        faster = [a for a in situation.alternatives if a.ceiling_gbps >= figure.busbw_gbps]
        if faster:
            return faster[0].group, "of-ceiling", figure.busbw_gbps / faster[0].ceiling_gbps
    if ceiling is not None:
        return situation.group, "of-ceiling", figure.busbw_gbps / ceiling
    if situation.loopback:
        return situation.group, "absolute", figure.busbw_gbps
    return None


def measures_its_path(figure: PublishedFigure) -> bool:
    """Fitted: healthy figures, and socket fallbacks: degraded for their node's fabric, they are healthy
    measurements of the socket path itself."""
    socket_run = figure.cause == "socket-fallback" and figure.path is Path.SOCKET
    return not figure.holdout and (figure.health == "healthy" or socket_run)


def group_levels(group: str) -> list[str]:
    """``net/tree/rdma`` -> [``net/tree/rdma``, ``net/tree``, ``net``]; loopback stays apart from remote
    sockets (GB/s and fractions of a ceiling do not mix)."""
    parts = group.split("/")
    floor = 2 if group.startswith("socket/loopback") else 1
    return ["/".join(parts[:k]) for k in range(len(parts), floor - 1, -1)]


class Calibration(BaseModel):
    """The fitted bands, by group at every level."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bands: dict[str, Band]
    skipped: dict[str, str] = Field(default_factory=dict, description="figure id -> why it was not fitted")

    def band_for(self, group: str) -> Band | None:
        return next((self.bands[level] for level in group_levels(group) if level in self.bands), None)


class _Value(BaseModel):
    """One fitted figure: its group, basis, value at its size, size and series."""

    model_config = ConfigDict(frozen=True)

    id: str
    group: str
    basis: Basis
    value: float
    size_bytes: int
    series: str | None


def _half_sizes(values: list[_Value]) -> dict[str, tuple[float, tuple[str, ...]]]:
    """S_half per group level: the median over the series fitted in that group or below it."""
    by_series: dict[str, list[_Value]] = defaultdict(list)
    for row in values:
        if row.series is not None:
            by_series[row.series].append(row)
    halves: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for series, rows in by_series.items():
        half = fit_half_size([(row.size_bytes, row.value) for row in rows])
        if half is not None:
            for level in group_levels(rows[0].group):
                halves[level].append((series, half))
    return {
        level: (group_half_size([h for _, h in found]) or 0.0, tuple(s for s, _ in found))
        for level, found in halves.items()
    }


def fit(figures: Iterable[PublishedFigure]) -> Calibration:
    """Bands from the healthy, non-holdout figures at sizes where bands apply (module docstring): each
    figure's value is taken to its plateau with its group's S_half (``size_curve``), then centre = median,
    low = lowest x (1 - MARGIN), high = highest x (1 + MARGIN)."""
    values: list[_Value] = []
    skipped: dict[str, str] = {}
    for figure in figures:
        if not measures_its_path(figure):
            continue
        situation = figure_situation(figure)
        if figure.size_bytes < band_from_bytes(situation.path):
            skipped[figure.id] = f"below {band_from_bytes(situation.path) // MIB} MB, where bands apply"
            continue
        value = figure_value(figure, situation)
        if value is None:
            skipped[figure.id] = "no ceiling: " + "; ".join(situation.missing)
            continue
        group, basis, number = value
        values.append(_Value(id=figure.id, group=group, basis=basis, value=number,
                             size_bytes=figure.size_bytes, series=figure.series))  # fmt: skip
    halves = _half_sizes(values)

    def half_of(group: str) -> tuple[float, tuple[str, ...]] | None:
        return next((halves[level] for level in group_levels(group) if level in halves), None)

    plateau: dict[str, list[tuple[str, Basis, float]]] = defaultdict(list)
    for row in values:
        half = half_of(row.group)
        number = row.value / plateau_factor(row.size_bytes, half[0] if half else None)
        for level in group_levels(row.group):
            plateau[level].append((row.id, row.basis, number))
    bands: dict[str, Band] = {}
    for group, entries in plateau.items():
        basis = entries[0][1]
        numbers = [v for _, b, v in entries if b == basis]
        high = max(numbers) * (1 + MARGIN)
        half = half_of(group)
        bands[group] = Band(
            group=group,
            basis=basis,
            low=min(numbers) * (1 - MARGIN),
            centre=statistics.median(numbers),
            high=min(high, 1.0) if basis == "of-ceiling" else high,
            fitted_on=tuple(i for i, b, _ in entries if b == basis),
            half_size_bytes=half[0] if half else None,
            series_fitted=half[1] if half else (),
        )
    return Calibration(bands=bands, skipped=skipped)


@cache
def default_calibration() -> Calibration:
    """The bands fitted on the shipped corpus (cached)."""
    return fit(load_published())
