"""A report's cost is proportionate: each chart is drawn once.

``report`` on a 1 MB log of about 210 tables cost 0.5 CPU-s per table, most of it matplotlib's
constrained layout, which draws every figure a second time to measure it. Charts now have fixed margins
(one size, the same furniture), so saving a chart draws it once; benchmarks/report_tables.py measures the
time (docs/benchmarks.md), this test the behaviour.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpufabric.report.plots import Chart, Curve, to_svg

SIZES = [8 << i for i in range(25)]


@pytest.mark.parametrize("kind", ["busbw", "latency", "speedup"])
def test_a_chart_is_drawn_once_per_svg(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from matplotlib.figure import Figure

    draws = []
    original = Figure.draw

    def counted(self: Figure, renderer: Any) -> None:
        draws.append(kind)
        original(self, renderer)

    monkeypatch.setattr(Figure, "draw", counted)
    chart = Chart(kind, f"all_reduce: {kind}", [Curve("run", SIZES, [1.0 + s / 1e6 for s in SIZES])])  # type: ignore[arg-type]
    svg = to_svg(chart)
    assert svg.startswith("<svg") and f"all_reduce: {kind}" in svg
    assert len(draws) == 1
