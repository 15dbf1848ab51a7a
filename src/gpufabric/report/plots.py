"""Plots: busbw, latency and speed-up against message size, one line per run, as PNG, SVG or inline SVG.

Sizes sit on a log2 axis labelled like the tables (``8 B``, ``1 KB``, ``2 GB``); busbw is GB/s (1e9, as
nccl-tests), latency is microseconds on a log axis, speed-ups have a 1x reference line and, where runs
carry samples, their 95% interval as a band. Figures are built on matplotlib's object API with the Agg
canvas (no pyplot global state, no display needed), and SVG output is made deterministic (fixed hash
salt, no date) so the same data always gives the same file. ``write_comparison_plots`` writes every
chart of a comparison (``compare --plot DIR``). The HTML report writes the same ``Chart`` values as SVG
itself (``report.svg_chart``): a matplotlib render per chart made a report of 200 tables cost 25 CPU-s.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from gpufabric.analysis.compare_model import CompareTable, Comparison
from gpufabric.report.compare_render import title as table_title
from gpufabric.results.model import Series
from gpufabric.units import human_size

if TYPE_CHECKING:  # matplotlib costs ~1.5 s to import: only commands that draw pay for it
    from matplotlib.figure import Figure


def _configure_matplotlib() -> None:
    import matplotlib

    matplotlib.rcParams["svg.hashsalt"] = "gpufabric"
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: searchable, and crisp in the HTML report


PlotKind = Literal["busbw", "latency", "speedup"]
ImageFormat = Literal["png", "svg"]
_STYLES = ["-o", "-s", "-^", "-D", "-v", "-P", "-X", "-*"]
# Room for the y label, the 45-degree size labels under the axis and the title, at figsize 8.0 x 4.6.
_MARGINS = {"left": 0.09, "right": 0.98, "bottom": 0.2, "top": 0.92}


@dataclass
class Curve:
    label: str
    sizes: list[int]
    values: list[float]
    low: list[float] = field(default_factory=list)  # interval band, same length as values, when known
    high: list[float] = field(default_factory=list)


@dataclass
class Chart:
    kind: PlotKind
    title: str
    curves: list[Curve]

    @property
    def ylabel(self) -> str:
        return {
            "busbw": "bus bandwidth (GB/s)",
            "latency": "time per iteration (µs)",
            "speedup": "speed-up (busbw ratio, x)",
        }[self.kind]


def _size_ticks(ax: object, sizes: Sequence[int]) -> None:
    """Ticks at powers of two, at most ~10 of them, labelled 8 B / 1 KB / 2 GB."""
    positive = [s for s in sizes if s > 0]
    if not positive:
        return
    low, high = int(math.log2(min(positive))), math.ceil(math.log2(max(positive)))
    step = max(1, math.ceil((high - low + 1) / 10))
    ticks = [2**e for e in range(low, high + 1, step)]
    from matplotlib.ticker import FixedLocator, NullLocator

    ax.xaxis.set_major_locator(FixedLocator(ticks))  # type: ignore[attr-defined]
    ax.xaxis.set_minor_locator(NullLocator())  # type: ignore[attr-defined]
    ax.set_xticklabels([human_size(t) for t in ticks], rotation=45, ha="right")  # type: ignore[attr-defined]


def render(chart: Chart) -> Figure:
    """The chart as a matplotlib Figure (Agg canvas attached)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    _configure_matplotlib()
    figure = Figure(figsize=(8.0, 4.6), dpi=110)
    # Fixed margins, not layout="constrained": every chart has the same size and furniture, and the
    # constrained solver drew each figure twice (half of a report's time: docs/benchmarks.md).
    figure.subplots_adjust(**_MARGINS)
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    all_sizes: list[int] = []
    for index, curve in enumerate(chart.curves):
        pairs = [(s, v) for s, v in zip(curve.sizes, curve.values, strict=True) if v > 0 and s > 0]
        if not pairs:
            continue
        xs, ys = zip(*pairs, strict=True)
        all_sizes.extend(xs)
        ax.plot(xs, ys, _STYLES[index % len(_STYLES)], label=curve.label, markersize=4, linewidth=1.6)
        if curve.low and curve.high:
            band = [
                (s, lo, hi) for s, lo, hi in zip(curve.sizes, curve.low, curve.high, strict=True) if hi > 0
            ]
            if band:
                bx, blo, bhi = zip(*band, strict=True)
                ax.fill_between(bx, blo, bhi, alpha=0.2, label=f"{curve.label}: 95% interval")
    ax.set_xscale("log", base=2)
    if chart.kind == "latency":
        ax.set_yscale("log")
    if chart.kind == "speedup":
        ax.axhline(1.0, color="0.3", linewidth=1.0, linestyle="--", label="1x (same as baseline)")
        ax.set_ylim(0, max(1.2, ax.get_ylim()[1]))
    else:
        ax.set_ylim(bottom=0 if chart.kind == "busbw" else None)
    _size_ticks(ax, all_sizes)
    ax.set_xlabel("message size (log2 scale)")
    ax.set_ylabel(chart.ylabel)
    ax.set_title(chart.title)
    ax.grid(True, which="major", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize="small")
    return figure


def to_svg(chart: Chart) -> str:
    """Inline SVG text (no XML prolog), for embedding in HTML."""
    buffer = io.StringIO()
    render(chart).savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def save(chart: Chart, path: Path, image_format: ImageFormat) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    metadata = {"Date": None} if image_format == "svg" else {"Software": "gpufabric"}
    render(chart).savefig(path, format=image_format, metadata=metadata)
    return path


def comparison_charts(table: CompareTable, title: str) -> list[Chart]:
    """busbw, latency and speed-up charts of one comparison table."""
    sizes = [r.size_bytes for r in table.rows]
    charts = [
        Chart(
            "busbw",
            f"{title}: bus bandwidth",
            [Curve(label, sizes, [r.busbw[i] for r in table.rows]) for i, label in enumerate(table.labels)],
        ),
        Chart(
            "latency",
            f"{title}: latency",
            [Curve(label, sizes, [r.time_us[i] for r in table.rows]) for i, label in enumerate(table.labels)],
        ),
    ]
    base = table.labels[table.baseline]
    speedups = []
    for slot, other in enumerate(table.others):
        values = [r.speedups[slot].value or 0.0 for r in table.rows]
        intervals = [r.speedups[slot].interval for r in table.rows]
        low = [i.low if i else 0.0 for i in intervals] if any(intervals) else []
        high = [i.high if i else 0.0 for i in intervals] if any(intervals) else []
        speedups.append(Curve(f"{table.labels[other]} vs {base}", sizes, values, low, high))
    charts.append(Chart("speedup", f"{title}: speed-up over {base}", speedups))
    return charts


def run_charts(label: str, series: Series, placement: Literal["out_of_place", "in_place"]) -> list[Chart]:
    """busbw and latency of one run's series (for a report of a single run)."""
    measured = [(r.size_bytes, m) for r in series.rows if (m := r.placement(placement)) is not None]
    sizes = [s for s, _ in measured]
    name = f"{series.collective} ({label})"
    return [
        Chart("busbw", f"{name}: bus bandwidth", [Curve(label, sizes, [m.busbw_gbs for _, m in measured])]),
        Chart("latency", f"{name}: latency", [Curve(label, sizes, [m.time_us for _, m in measured])]),
    ]


def file_stem(*parts: str) -> str:
    """A safe file name from a chart's parts: 'all_reduce (float sum)' -> 'all_reduce_float_sum'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", "_".join(parts)).strip("_")


def write_comparison_plots(
    comparison: Comparison, directory: Path, image_formats: Sequence[str]
) -> list[Path]:
    """Every chart of every table of ``comparison`` into ``directory``, once per image format (``png``;
    anything else is SVG); the files written, in order. A failed write raises its ``OSError``."""
    written = []
    for table in comparison.tables:
        for chart in comparison_charts(table, table_title(table)):
            stem = file_stem(table.collective, table.variant, table.placement, chart.kind)
            for image_format in image_formats:
                kind: ImageFormat = "png" if image_format == "png" else "svg"
                written.append(save(chart, directory / f"{stem}.{image_format}", kind))
    return written
