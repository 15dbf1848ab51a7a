"""A report's cost is proportionate: each chart is drawn once.

``report`` on a 1 MB log of about 210 tables cost 0.5 CPU-s per table, most of it matplotlib's
constrained layout, which draws every figure a second time to measure it. Charts now have fixed margins
(one size, the same furniture), so saving a chart draws it once (``compare --plot``'s files). The HTML
report's inline charts no longer go through matplotlib at all (``report.svg_chart``: 0.162 -> about 0.01
CPU-s per table). benchmarks/report_tables.py measures the time (docs/benchmarks.md), these tests the
behaviour.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpufabric.report.html import build_report
from gpufabric.report.plots import Chart, Curve, to_svg
from gpufabric.results.readers import read_run

SIZES = [8 << i for i in range(25)]
NCCL = Path(__file__).parents[1] / "fixtures" / "nccl_tests"


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


def test_the_html_report_draws_no_matplotlib_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    from matplotlib.figure import Figure

    def refused(self: Figure, renderer: Any) -> None:
        raise AssertionError("the HTML report drew a matplotlib figure")

    monkeypatch.setattr(Figure, "draw", refused)
    runs = [read_run(NCCL / "seed003_skypilot_rdma_h200_all_gather.log", "SkyPilot"),
            read_run(NCCL / "seed003_gib_rdma_h200_all_gather.log", "GCP")]  # fmt: skip
    html = build_report(runs)
    assert html.count('<figure class="chart"><svg') == 3
