"""Plots: real matplotlib output (Agg), PNG and SVG, with human size ticks, units and legends."""

from __future__ import annotations

from pathlib import Path

import matplotlib.image

from gpufabric.analysis.compare import compare_runs
from gpufabric.report.plots import comparison_charts, file_stem, run_charts, save, to_svg
from gpufabric.results.readers import read_run

NCCL = Path(__file__).parents[1] / "fixtures" / "nccl_tests"


def _comparison():  # type: ignore[no-untyped-def]
    return compare_runs(
        [
            read_run(NCCL / "seed003_skypilot_rdma_h200_all_gather.log", "SkyPilot"),
            read_run(NCCL / "seed003_gib_rdma_h200_all_gather.log", "GCP script"),
        ]
    )


def test_comparison_charts_are_written_as_png_and_svg(tmp_path: Path) -> None:
    [table] = _comparison().tables
    charts = comparison_charts(table, "all_gather")
    assert [c.kind for c in charts] == ["busbw", "latency", "speedup"]
    for chart in charts:
        png = save(chart, tmp_path / f"{chart.kind}.png", "png")
        svg = save(chart, tmp_path / f"{chart.kind}.svg", "svg")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        image = matplotlib.image.imread(png)
        height, width = image.shape[:2]
        assert width >= 800 and height >= 450
        non_white = (image[:, :, :3].mean(axis=2) < 0.9).mean()
        assert 0.02 < non_white < 0.5  # drawn lines and text, not an empty or solid canvas
        text = svg.read_text()
        assert "<svg" in text and chart.ylabel in text
        assert "message size (log2 scale)" in text


def test_size_axis_uses_human_labels_and_every_run_has_a_legend_entry() -> None:
    [table] = _comparison().tables
    busbw, latency, speedup = (to_svg(c) for c in comparison_charts(table, "all_gather"))
    for label in ("1 KB", "8 KB", "64 KB", "512 KB", "4 MB", "32 MB", "256 MB", "2 GB"):
        assert f">{label}<" in busbw
    assert "SkyPilot" in busbw and "GCP script" in busbw
    assert "bus bandwidth (GB/s)" in busbw and "time per iteration (µs)" in latency
    assert "SkyPilot vs GCP script" in speedup and "1x (same as baseline)" in speedup


def test_svg_output_is_deterministic() -> None:
    [table] = _comparison().tables
    chart = comparison_charts(table, "all_gather")[0]
    assert to_svg(chart) == to_svg(chart)


def test_single_run_charts_and_file_stems() -> None:
    run = read_run(NCCL / "constructed_v2_17_timestamps.log")
    charts = run_charts(run.label, run.series[0], "in_place")
    assert [c.kind for c in charts] == ["busbw", "latency"]
    assert "all_reduce" in to_svg(charts[0])
    assert (
        file_stem("all_reduce", "float sum", "out_of_place", "busbw")
        == "all_reduce_float_sum_out_of_place_busbw"
    )
