"""One calibration group's band: what healthy systems reach there, as fractions of the ceiling or GB/s.

Its own module so that the fit (``calibration``) and the transfer of a band to a collective with no figure
of its own (``transfer``) both use it without importing each other.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.expect.figures import Basis
from gpufabric.expect.size_curve import plateau_factor


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
    transfer: str | None = Field(
        default=None,
        description="set where the band is another collective's on this transport, scaled by the ratio "
        "of the two collectives' efficiencies on transports that have both (module docstring)",
    )

    def at_size(self, size_bytes: int | None) -> tuple[float, float, float]:
        """(low, centre, high) at ``size_bytes`` (None: the plateau): low, centre and high x S/(S+S_half)."""
        factor = plateau_factor(size_bytes, self.half_size_bytes)
        return self.low * factor, self.centre * factor, self.high * factor
