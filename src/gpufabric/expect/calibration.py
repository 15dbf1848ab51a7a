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

A NET collective with no figure of its own on its transport takes the transport's band scaled by a
collective ratio (``transfer``).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from functools import cache

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.expect.band import Band
from gpufabric.expect.figures import Basis, figure_situation, figure_value, measures_its_path
from gpufabric.expect.published import PublishedFigure, load_published
from gpufabric.expect.regimes import Path, Regime
from gpufabric.expect.size_curve import fit_half_size, group_half_size, plateau_factor
from gpufabric.expect.transfer import transferred

MARGIN = 0.10
"""How far outside the fitted figures a healthy result may still fall: the model's stated tolerance for
machines of one kind differing (a choice, not a measurement; the hold-out benchmark tests it)."""
SPREAD_FROM = 3
"""Figures a group needs to set its own spread; below it the spread of its best-fitted sibling applies."""
MIB = 1 << 20
BAND_FROM_BYTES: dict[Path, int] = {
    Path.NVLINK: 64 * MIB,  # the 4x H200 all_reduce reaches 88% of its 2 GB figure at 64 MB
    Path.PCIE: 64 * MIB,
    Path.SOCKET: 256 * MIB,  # SkyPilot's p4d socket column reaches 98% of its 2 GB figure at 256 MB
    Path.NET: 512 * MIB,  # SkyPilot's p4d EFA column reaches 94% of its 2 GB figure at 512 MB
}
NET_ALLTOALL_FROM_BYTES = 64 * MIB


def band_from_bytes(path: Path, regime: Regime | None = None) -> int:
    """The smallest size the band applies to on ``path``; below it latency, not bandwidth, dominates.
    alltoall across nodes (``p2p`` on NET) is published at its expert-parallel payload, 64 MiB
    (awsome-distributed-ai's EP results on p5 and p6-b300 read that row of alltoall_perf): its band is
    fitted there, latency share included, and a larger alltoall reading above it is no fault."""
    if path is Path.NET and regime is Regime.P2P:
        return NET_ALLTOALL_FROM_BYTES
    return BAND_FROM_BYTES[path]


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
        found = next((self.bands[level] for level in group_levels(group) if level in self.bands), None)
        if found is None or found.group == group:
            return found
        return transferred(self.bands, group, found) or found


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


def _with_spread(band: Band, bands: dict[str, Band]) -> Band:
    """A band fitted on fewer than SPREAD_FROM figures cannot know how far healthy systems spread: it takes
    the relative width (low / centre, high / centre) of its sibling with the most figures, when that one
    has SPREAD_FROM or more; its own figures stay inside. The top of an of-ceiling band is the ceiling."""
    parent = band.group.rpartition("/")[0]
    siblings = [
        other
        for other in bands.values()
        if other.group.rpartition("/")[0] == parent
        and other.group != band.group
        and other.basis == band.basis
        and len(other.fitted_on) >= SPREAD_FROM
    ]
    low, high = band.low, band.high
    if len(band.fitted_on) < SPREAD_FROM and siblings:
        widest = max(siblings, key=lambda other: len(other.fitted_on))
        low = min(low, band.centre * widest.low / widest.centre)
        high = max(high, band.centre * widest.high / widest.centre)
    top = min(high, 1.0) if band.basis == "of-ceiling" else high
    return band.model_copy(update={"low": low, "high": top})


def fit(figures: Iterable[PublishedFigure]) -> Calibration:
    """Bands from the healthy, non-holdout figures at sizes where bands apply (module docstring): each
    figure's value is taken to its plateau with its group's S_half (``size_curve``), then centre = median,
    low = lowest x (1 - MARGIN), high = highest x (1 + MARGIN), widened to a sibling's spread where the
    group has too few figures to show its own (``_with_spread``)."""
    values: list[_Value] = []
    skipped: dict[str, str] = {}
    for figure in figures:
        if not measures_its_path(figure):
            continue
        situation = figure_situation(figure)
        threshold = band_from_bytes(situation.path, situation.regime)
        if figure.size_bytes < threshold:
            skipped[figure.id] = f"below {threshold // MIB} MB, where bands apply"
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
        half = half_of(group)
        bands[group] = Band(
            group=group,
            basis=basis,
            low=min(numbers) * (1 - MARGIN),
            centre=statistics.median(numbers),
            high=max(numbers) * (1 + MARGIN),
            fitted_on=tuple(i for i, b, _ in entries if b == basis),
            half_size_bytes=half[0] if half else None,
            series_fitted=half[1] if half else (),
        )
    bands = {group: _with_spread(band, bands) for group, band in bands.items()}
    return Calibration(bands=bands, skipped=skipped)


@cache
def default_calibration() -> Calibration:
    """The bands fitted on the shipped corpus (cached)."""
    return fit(load_published())
