"""The comparison's data: rows aligned by size, speed-ups with their intervals, observations in words.

Built by ``analysis.compare``, described in words by ``analysis.observations``, rendered by
``report.compare_render`` (terminal, markdown, CSV, JSON), ``report.plots`` and ``report.html``.

The rounding of a speed-up lives here, with the data, so the table cells and the observations about them
(two different modules) can never print the same ratio two ways.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.stats import Interval
from gpufabric.boundary_names import FAULT_ENV

Placement = Literal["out_of_place", "in_place"]
PLACEMENT_NAMES: dict[str, Placement] = {"out-of-place": "out_of_place", "in-place": "in_place"}
Variant = tuple[str, str, int]  # dtype, redop, root


def round_speedup(other_busbw: float, baseline_busbw: float, places: int = 1) -> Decimal | None:
    """busbw ratio with one decimal (or ``places``), half up, computed on the decimal values as printed;
    None where either is 0 (as the seeds print ``-``) or is not a finite number (nothing to divide)."""
    if not (math.isfinite(other_busbw) and math.isfinite(baseline_busbw)):
        return None
    if other_busbw <= 0 or baseline_busbw <= 0:
        return None
    ratio = Decimal(repr(other_busbw)) / Decimal(repr(baseline_busbw))
    return ratio.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def format_speedup(value: Decimal | None) -> str:
    """``Decimal('3.0')`` -> ``"3 x"``, ``Decimal('0.8')`` -> ``"0.8 x"``, None -> ``"-"`` (seed style)."""
    if value is None:
        return "-"
    text = f"{value:.1f}"
    return f"{text.removesuffix('.0')} x"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Speedup(_Frozen):
    """One run against the baseline at one size."""

    value: float | None = Field(description="busbw ratio; None where either busbw is 0 (printed '-')")
    interval: Interval | None = None

    @property
    def within_noise(self) -> bool | None:
        """The sampled 95% interval contains 1x; None without samples."""
        if self.interval is None or self.interval.from_rounding:
            return None
        return self.interval.contains_one

    @property
    def within_rounding(self) -> bool:
        """No samples, and the two printed (two-decimal) bandwidths allow 1x: no difference to claim."""
        return self.interval is not None and self.interval.from_rounding and self.interval.contains_one


class CompareRow(_Frozen):
    size_bytes: int
    busbw: list[float] = Field(description="busbw (GB/s) of each run, in run order")
    time_us: list[float]
    speedups: list[Speedup] = Field(description="one per non-baseline run, in run order")
    of_expected: list[float | None] = Field(
        default_factory=list,
        description="each run's busbw as % of what its own hardware should reach (gpufabric.expect), in "
        "run order; None where not judged (latency regime, CPU ranks, an unknown fact)",
    )


class Observation(_Frozen):
    """A 'What stands out' line: a size range and what happens there, in words."""

    range: str
    text: str


class CompareTable(_Frozen):
    collective: str
    collective_inferred: bool = Field(
        default=False, description="some run's table did not name it: the name is a guess from the numbers"
    )
    variant: str = Field(description="dtype, op and root of these rows, e.g. 'float sum'")
    placement: Placement
    labels: list[str]
    baseline: int = Field(description="index of the baseline run in labels")
    rows: list[CompareRow]
    dropped: dict[str, list[int]] = Field(default_factory=dict, description="sizes only that run had")
    observations: list[Observation] = Field(default_factory=list)
    faults: dict[str, str] = Field(
        default_factory=dict, description=f"label -> {FAULT_ENV} of each run measured under a fault"
    )

    @property
    def others(self) -> list[int]:
        return [i for i in range(len(self.labels)) if i != self.baseline]


class Comparison(_Frozen):
    labels: list[str]
    baseline: int
    placement: Placement
    tables: list[CompareTable]
    notes: list[str] = Field(default_factory=list)
    faults: dict[str, str] = Field(
        default_factory=dict, description=f"label -> {FAULT_ENV} of each run measured under a fault"
    )
