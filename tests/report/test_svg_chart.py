"""The report's inline charts, written as SVG without matplotlib: valid SVG whose points sit where their
values say (log2 size axis, linear busbw, log latency), with the same labels as ``compare --plot``'s files."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from gpufabric.analysis.compare import compare_runs
from gpufabric.report.plots import Chart, Curve, comparison_charts
from gpufabric.report.svg_chart import chart_svg
from gpufabric.results.readers import read_run

NCCL = Path(__file__).parents[1] / "fixtures" / "nccl_tests"
SVG = "{http://www.w3.org/2000/svg}"


def _points(svg: str) -> list[list[tuple[float, float]]]:
    """Each curve's (x, y) points, as drawn."""
    root = ET.fromstring(svg)
    return [
        [(float(x), float(y)) for x, y in (p.split(",") for p in line.attrib["points"].split())]
        for line in root.iter(f"{SVG}polyline")
    ]


def test_points_sit_where_their_sizes_and_values_say() -> None:
    sizes = [1 << 10, 1 << 12, 1 << 14]
    busbw = chart_svg(
        Chart("busbw", "t", [Curve("a", sizes, [10.0, 20.0, 40.0]), Curve("b", sizes, [5.0, 5.0, 5.0])])
    )
    [a, b] = _points(busbw)
    # log2 sizes: equal steps for each x4; linear busbw: 20 -> 40 is twice 10 -> 20, upwards (SVG y down)
    assert abs((a[1][0] - a[0][0]) - (a[2][0] - a[1][0])) < 0.2
    assert a[0][1] > a[1][1] > a[2][1]
    assert abs((a[1][1] - a[2][1]) - 2 * (a[0][1] - a[1][1])) < 0.3
    assert len({y for _, y in b}) == 1 and b[0][1] > a[0][1]  # flat, and below a's 10
    latency = chart_svg(Chart("latency", "t", [Curve("a", sizes, [10.0, 100.0, 1000.0])]))
    [c] = _points(latency)
    assert abs((c[0][1] - c[1][1]) - (c[1][1] - c[2][1])) < 0.2  # log axis: each decade the same height


def test_a_value_of_zero_or_a_missing_size_is_left_out_not_drawn_at_the_edge() -> None:
    chart = Chart("busbw", "t", [Curve("a", [8, 16, 32], [0.0, 1.0, 2.0]), Curve("empty", [8], [0.0])])
    [only] = _points(chart_svg(chart))
    assert len(only) == 2


def test_labels_legend_and_reference_line_match_the_saved_charts() -> None:
    runs = [read_run(NCCL / "seed003_skypilot_rdma_h200_all_gather.log", "SkyPilot"),
            read_run(NCCL / "seed003_gib_rdma_h200_all_gather.log", "GCP <script>")]  # fmt: skip
    [table] = compare_runs(runs).tables
    busbw, latency, speedup = (chart_svg(c) for c in comparison_charts(table, "all_gather"))
    for label in ("1 KB", "8 KB", "64 KB", "512 KB", "4 MB", "32 MB", "256 MB", "2 GB"):
        assert f">{label}<" in busbw
    assert ">SkyPilot<" in busbw and "GCP &lt;script&gt;" in busbw and "<script>" not in busbw
    assert "bus bandwidth (GB/s)" in busbw and "time per iteration (µs)" in latency
    assert "1x (same as baseline)" in speedup and "95% interval" in speedup
    assert "message size (log2 scale)" in busbw
    for svg in (busbw, latency, speedup):
        ET.fromstring(svg)  # well-formed
    assert chart_svg(comparison_charts(table, "all_gather")[0]) == busbw  # deterministic
