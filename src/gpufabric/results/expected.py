"""How a run's numbers compare with what its hardware should reach: the judgement ``gpufabric.expect`` gives
each measured size, kept beside the numbers (``RunResult.expected``) when a command judged them.

Not a measurement: it is filled when ``bench`` prints its result (``--format json`` shows every size) and
by the readers that judge (doctor, report, compare), from the run's node shapes and NCCL's log
(``gpufabric.analysis.expected``). A fact that was not known is named in ``missing``, never filled in.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ExpectedVerdict = Literal["within", "below", "above-band", "above-ceiling", "not-judged"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SizeJudgement(_Frozen):
    """One measured size against the expectation."""

    size_bytes: int = Field(ge=0)
    measured_gbps: float = Field(description="busbw, GB/s (out-of-place where measured, else in-place)")
    verdict: ExpectedVerdict
    latency_regime: bool = Field(description="below the size the band applies from: not judged")
    expected_gbps: float | None = Field(default=None, description="the band's centre at this size")
    band_low_gbps: float | None = None
    band_high_gbps: float | None = None
    percent_of_expected: float | None = Field(description="of the band's centre at this size")
    percent_of_ceiling: float | None
    causes: list[str] = Field(default_factory=list, description="likely causes of a shortfall, in words")
    causes_guessed: bool = Field(default=False, description="from the shape alone, no log or counters")
    message: str = Field(description="the judgement in one line (gpufabric.expect.judge)")


class SeriesExpectation(_Frozen):
    """One collective's expectation on the run's hardware, and each size judged against it."""

    collective: str
    nodes: int
    ranks_per_node: int
    hosts: int
    path: str = Field(description="nvlink, pcie, net or socket: the link that bounds busbw")
    regime: str = Field(description="ring, tree, nvls, collnet, pat or p2p")
    route: str = Field(description="the bounding path in a few words, e.g. 'NVLink 18 x 25 GB/s'")
    ceiling_gbps: float | None
    band_low_gbps: float | None = Field(default=None, description="the band at large sizes (its plateau)")
    band_centre_gbps: float | None = None
    band_high_gbps: float | None = None
    band_from_bytes: int = Field(description="the band applies from this size up (latency below)")
    formula: str
    sources: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list, description="facts nobody knew: never guessed")
    sizes: list[SizeJudgement] = Field(default_factory=list)

    def headline(self) -> SizeJudgement | None:
        """The largest size judged by bandwidth, else None (every size is in the latency regime)."""
        judged = [s for s in self.sizes if not s.latency_regime]
        return max(judged, key=lambda s: s.size_bytes) if judged else None


class RunExpectation(_Frozen):
    """Every collective of one run, judged against what the run's hardware should reach."""

    shapes_from: str = Field(description="where the hardware facts came from, in words")
    setting: str = Field(description="nodes, hosts, ranks per node and transport, in words")
    series: list[SeriesExpectation] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="why something was not judged")
