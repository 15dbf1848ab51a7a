"""How the model does on the corpus: each figure judged against its expectation, fitted ones, held-out
ones and degraded ones apart (``benchmarks/expect_holdout.py`` prints it; ``tests/expect`` asserts it).

Figures of another collective library than NCCL (Habana's HCCL on Gaudi) are reported apart, not judged.
A healthy figure is a hit when its busbw lies inside its band (``judge`` says ``within``). A degraded
figure is flagged when ``judge`` says ``below``; its cause is right when the likeliest cause named is the
figure's, and among the named when any of them is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from gpufabric.errors import CatalogError
from gpufabric.expect.calibration import Calibration, fit
from gpufabric.expect.figures import figure_conditions, figure_shape, nic_facts
from gpufabric.expect.instances import shape_from_instance
from gpufabric.expect.judge import Judgement, judge
from gpufabric.expect.model import Expectation, expect
from gpufabric.expect.published import PublishedFigure
from gpufabric.hardware import NodeShape

Role = Literal["fitted", "held-out", "degraded", "other-library"]


class FigureResult(BaseModel):
    """One figure, judged."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    role: Role
    measured_gbps: float
    centre_gbps: float | None
    low_gbps: float | None
    high_gbps: float | None
    group: str | None
    verdict: str
    causes: tuple[str, ...]
    expected_cause: str | None
    message: str

    @property
    def judged(self) -> bool:
        return self.verdict != "not-judged"

    @property
    def hit(self) -> bool:
        return self.verdict == "within" if self.role != "degraded" else self.verdict == "below"

    @property
    def cause_first(self) -> bool:
        return bool(self.causes) and self.causes[0] == self.expected_cause

    @property
    def cause_named(self) -> bool:
        return self.expected_cause in self.causes


def role_of(figure: PublishedFigure) -> Role:
    if figure.library != "nccl":
        return "other-library"
    if figure.health == "degraded":
        return "degraded"
    return "held-out" if figure.holdout else "fitted"


def node_shape(figure: PublishedFigure) -> NodeShape:
    """The node as it should run: for a degraded figure the catalog's shape of its instance type, or the
    NICs the source says its nodes have (``node_nics``; the figure's ``nics`` are the ones the run used),
    else the figure's own facts."""
    if figure.health == "degraded" and figure.instance_type:
        try:
            return shape_from_instance(figure.instance_type)
        except CatalogError:
            pass
    shape = figure_shape(figure)
    if figure.health == "degraded" and figure.node_nics is not None:
        return shape.model_copy(update={"nics": nic_facts(figure.node_nics)})
    return shape


def figure_expectation(figure: PublishedFigure, calibration: Calibration | None = None) -> Expectation:
    """The model's expectation for the figure's run: its shape, nodes, size, transport; for a degraded
    figure, what its node should reach on its best path (the run's own socket or NIC choice is the fault)."""
    conditions = figure_conditions(figure)
    if figure.health == "degraded":
        conditions = conditions.updated(transport="auto")
    return expect(
        node_shape(figure),
        figure.collective,
        figure.nodes,
        figure.size_bytes,
        conditions,
        calibration=calibration,
    )


def _other_library(figure: PublishedFigure) -> FigureResult:
    """A figure of another collective library (the source names it): kept as published, not judged."""
    return FigureResult(
        id=figure.id,
        role="other-library",
        measured_gbps=figure.busbw_gbps,
        centre_gbps=None,
        low_gbps=None,
        high_gbps=None,
        group=None,
        verdict="not-judged",
        causes=(),
        expected_cause=figure.cause,
        message=f"not judged: an {figure.library.upper()} figure; the model covers NCCL's algorithms and "
        "transports",
    )


def evaluate(figures: Iterable[PublishedFigure]) -> list[FigureResult]:
    """Fit on the figures' healthy non-holdout part, then judge every figure."""
    chosen = list(figures)
    calibration = fit(chosen)
    results = []
    for figure in chosen:
        if figure.library != "nccl":
            results.append(_other_library(figure))
            continue
        verdict: Judgement = judge(figure.busbw_gbps, figure_expectation(figure, calibration))
        band = verdict.expectation.band
        results.append(
            FigureResult(
                id=figure.id,
                role=role_of(figure),
                measured_gbps=figure.busbw_gbps,
                centre_gbps=band.centre_gbps if band else None,
                low_gbps=band.low_gbps if band else None,
                high_gbps=band.high_gbps if band else None,
                group=band.group if band else None,
                verdict=verdict.verdict,
                causes=verdict.causes,
                expected_cause=figure.cause,
                message=verdict.message,
            )
        )
    return results
