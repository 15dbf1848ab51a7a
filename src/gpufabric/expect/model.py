"""``expect``: what busbw a collective should reach on a shape, with the ceiling, the band a healthy system
reaches, the formula, the sources and every fact that is missing.

The ceiling is physics (``situation``); the band is the ceiling times the efficiency healthy published
systems reached on the same path and regime (``calibration``). Below ``band_from_bytes`` the band does
not apply: latency, not bandwidth, sets small sizes, and the expectation says so instead of judging.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.collectives import CollectiveName
from gpufabric.expect.band import Band
from gpufabric.expect.calibration import Calibration, band_from_bytes, default_calibration
from gpufabric.expect.ceilings import Fact
from gpufabric.expect.conditions import RunConditions
from gpufabric.expect.figures import Basis
from gpufabric.expect.published import load_published
from gpufabric.expect.regimes import Path, Regime
from gpufabric.expect.situation import assess
from gpufabric.hardware import NodeShape
from gpufabric.units import human_size


class ExpectedBand(BaseModel):
    """The band in GB/s, and where it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    low_gbps: float
    centre_gbps: float
    high_gbps: float
    basis: Basis = Field(description="of-ceiling: ceiling x fitted efficiency; absolute: fitted GB/s")
    efficiency: tuple[float, float, float] | None = Field(
        default=None, description="(low, centre, high) fractions of the ceiling, for basis of-ceiling"
    )
    group: str = Field(description="the calibration group whose figures were fitted")
    fitted_on: tuple[str, ...]
    plateau_centre_gbps: float | None = Field(
        default=None, description="the centre as the size grows without bound (busbw's plateau B)"
    )
    half_size_bytes: float | None = Field(
        default=None,
        description="S_half of centre(S) = plateau x S / (S + S_half); None: no fitted curve (flat band)",
    )
    transfer: str | None = Field(
        default=None,
        description="where the band is another collective's on this transport, scaled (calibration)",
    )


class AlternativeExpectation(BaseModel):
    """A faster regime NCCL may pick where the shape cannot tell (NVLS, NVLSTree), with its own band."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    regime: Regime
    path: Path
    ceiling_gbps: float
    band: ExpectedBand | None
    when: str


class Expectation(BaseModel):
    """What one collective should reach on one shape (busbw, GB/s)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    collective: CollectiveName
    nodes: int
    ranks_per_node: int
    size_bytes: int | None
    path: Path
    regime: Regime
    regime_reason: str
    ceiling_gbps: float | None
    band: ExpectedBand | None
    band_from_bytes: int = Field(description="the band applies from this size up")
    judged_by_bandwidth: bool = Field(description="False below band_from_bytes: the latency regime")
    formula: str
    sources: tuple[str, ...]
    facts: dict[str, Fact]
    missing: list[str]
    alternatives: tuple[AlternativeExpectation, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def summary(self) -> str:
        """One line: path, regime, ceiling and band."""
        ceiling = (
            f"ceiling {self.ceiling_gbps:.1f} GB/s" if self.ceiling_gbps is not None else "ceiling unknown"
        )
        band = "no band"
        if self.band:
            low, centre, high = self.band.low_gbps, self.band.centre_gbps, self.band.high_gbps
            band = f"expected {low:.1f}-{high:.1f} (centre {centre:.1f})"
        return f"{self.collective}: {self.path.value}/{self.regime.value}, {ceiling}, {band} GB/s"


def _band(
    band: Band | None, ceiling: float | None, size_bytes: int | None = None, share: float | None = None
) -> ExpectedBand | None:
    """The fitted band in GB/s at ``size_bytes`` (None: the plateau), on the size curve (``size_curve``):
    a fraction of the ceiling, or for one host's sockets ``share`` x the fitted per-connection GB/s."""
    if band is None:
        return None
    scale = (share or 1.0) if band.basis == "absolute" else ceiling
    if scale is None:
        return None
    low, centre, high = band.at_size(size_bytes)
    return ExpectedBand(
        low_gbps=scale * low,
        centre_gbps=scale * centre,
        high_gbps=scale * high,
        basis=band.basis,
        efficiency=(low, centre, high) if band.basis == "of-ceiling" else None,
        group=band.group,
        fitted_on=band.fitted_on,
        plateau_centre_gbps=scale * band.centre,
        half_size_bytes=band.half_size_bytes,
        transfer=band.transfer,
    )


def _sources(fitted_on: tuple[str, ...]) -> tuple[str, ...]:
    by_id = {f.id: f for f in load_published()}
    names = [f"{by_id[i].source}: {by_id[i].url}" for i in fitted_on if i in by_id]
    return tuple(dict.fromkeys(names))


def expect(
    shape: NodeShape,
    collective: CollectiveName,
    nodes: int,
    size_bytes: int | None = None,
    conditions: RunConditions | None = None,
    *,
    calibration: Calibration | None = None,
    **given: Any,
) -> Expectation:
    """The expectation of ``collective`` on ``nodes`` nodes of ``shape`` at ``size_bytes`` (None: large),
    run under ``conditions`` (``RunConditions``; its fields may also be given as keywords, checked there).

    ``hosts=1`` with ``nodes > 1`` is virtual nodes on one host; ``transport="socket"`` forces NCCL's
    Socket transport (``NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1`` on one host). ``nvls`` says whether NVLink
    SHARP is available (None: not known, NCCL's ring is assumed and NVLS listed as an alternative).
    ``ranks_per_process`` (1: mpirun -np N -g 1; N: nccl-tests -g N) sets the socket rate on one host
    (``loopback``); None assumes one process per rank and says so."""
    run = (conditions or RunConditions()).updated(**given)
    situation = assess(shape, collective, nodes, run)
    calibrated = calibration or default_calibration()
    fitted = calibrated.band_for(situation.group)
    band = _band(fitted, situation.ceiling_gbps, size_bytes, situation.bound.share)
    missing = list(situation.missing)
    if fitted is None:
        missing.append(f"calibration: no healthy published figure for {situation.group}")
    threshold = band_from_bytes(situation.path, situation.regime)
    large = size_bytes is None or size_bytes >= threshold
    notes: list[str] = []
    if not large and size_bytes is not None:
        notes.append(
            f"{human_size(size_bytes)} is below {human_size(threshold)}: latency, not bandwidth, sets this "
            "size; the band is not applied"
        )
    if band is not None and band.half_size_bytes:
        where = "the plateau (no size given)" if size_bytes is None else human_size(size_bytes)
        notes.append(
            f"size curve: centre = {band.plateau_centre_gbps:.1f} GB/s x S / (S + "
            f"{human_size(round(band.half_size_bytes))}), at {where}"
        )
    if band is not None and band.transfer:
        notes.append(f"band: {band.transfer}")
    if situation.loopback:
        notes.append(
            "ranks of one host: the kernel's loopback carries the bytes even when NCCL names eth0; busbw is "
            f"{situation.bound.share or 1.0:.2f} x one connection's socket throughput, which is calibrated "
            "in GB/s on measured hosts for this process layout and traffic, not a physical ceiling"
        )
    if situation.layout is not None and situation.layout[0] == "shared-gpu":
        notes.append(
            "ranks share one GPU: the band is fitted on runs with MPS; without MPS the ranks take turns on "
            "the GPU and read lower, which no run in the corpus measures"
        )
    bound = situation.bound
    facts = dict(bound.facts)
    for other in situation.other_bounds:
        if other.gbps is not None:
            facts[f"{other.path.value} ceiling GB/s"] = round(other.gbps, 1)
    if situation.streams is not None:
        facts["socket streams per connection"] = situation.streams.label
    if situation.layout is not None and situation.traffic is not None:
        facts["process layout"] = f"{situation.layout[0]} ({situation.layout[1]})"
        facts["socket traffic"] = f"{situation.traffic[0]} ({situation.traffic[1]})"
    return Expectation(
        collective=collective,
        nodes=nodes,
        ranks_per_node=situation.ranks_per_node,
        size_bytes=size_bytes,
        path=situation.path,
        regime=situation.regime,
        regime_reason=situation.regime_reason,
        ceiling_gbps=situation.ceiling_gbps,
        band=band,
        band_from_bytes=threshold,
        judged_by_bandwidth=large and band is not None,
        formula=bound.formula,
        sources=tuple(dict.fromkeys((*bound.sources, *_sources(band.fitted_on if band else ())))),
        facts=facts,
        missing=missing,
        alternatives=tuple(
            AlternativeExpectation(
                regime=alt.regime,
                path=alt.path,
                ceiling_gbps=alt.ceiling_gbps,
                band=_band(calibrated.band_for(alt.group), alt.ceiling_gbps, size_bytes),
                when=alt.when,
            )
            for alt in situation.alternatives
        ),
        notes=tuple(notes),
    )
