"""A report's inline charts as SVG text written directly, without matplotlib.

The HTML report draws two or three line charts per table; through matplotlib each cost a figure, a
layout and an SVG backend pass (about 0.07 CPU-s, so a log of 200 tables paid 30 CPU-s for charts:
docs/benchmarks.md). These charts are simple (log2 size axis, linear or log10 value axis, a few lines, an
interval band, a reference line), so they are written here as plain SVG elements in the report's own
coordinates: the cost is string formatting. The chart's content is ``plots.Chart`` (the same charts
``compare --plot`` saves through matplotlib as PNG or SVG files); the look follows those files: size
ticks at powers of two labelled like the tables, the same colours, a legend, a title, a light grid.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

from gpufabric.report.plots import Chart
from gpufabric.units import human_size

WIDTH, HEIGHT = 800, 460
LEFT, RIGHT, TOP, BOTTOM = 72, 784, 36, 378
"""The plot area inside the chart: room for the value labels, the 45-degree size labels and the title."""
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
"""matplotlib's default cycle, so the report's charts and ``compare --plot``'s files look alike."""
MARKERS = ("circle", "square", "triangle", "diamond")
Scale = Callable[[float], float]
"""A value on an axis -> its coordinate in the chart."""


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _size_ticks(low: int, high: int) -> list[int]:
    """Powers of two from ``low`` to ``high`` (exponents), at most ~10 (as ``plots._size_ticks``)."""
    step = max(1, math.ceil((high - low + 1) / 10))
    return [2**e for e in range(low, high + 1, step)]


def _linear_ticks(top: float) -> list[float]:
    """0 to at least ``top`` in 4-8 steps of 1, 2 or 5 x 10^k."""
    raw = top / 5 if top > 0 else 0.2
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(math.ceil(top / step - 1e-9) + 1)]


def _log_ticks(low: float, high: float) -> list[float]:
    """Powers of ten spanning ``low``..``high``; with 1, 2 and 5 of each decade when only one or two
    decades are spanned (fewer labels would leave the axis bare)."""
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    steps = (1.0,) if last - first > 2 else (1.0, 2.0, 5.0)
    return [m * 10.0**e for e in range(first, last + 1) for m in steps if low <= m * 10.0**e <= high * 1.0001]


def _tick_label(value: float) -> str:
    if value >= 1e7 or (0 < value < 1e-3):
        return f"{value:.0e}".replace("e+0", "e").replace("e-0", "e-")
    return f"{value:g}"


def _marker(shape: str, x: float, y: float, colour: str) -> str:
    if shape == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.6" fill="{colour}"/>'
    if shape == "square":
        return f'<rect x="{x - 2.4:.1f}" y="{y - 2.4:.1f}" width="4.8" height="4.8" fill="{colour}"/>'
    points = (
        ((0, -3.2), (3, 2.4), (-3, 2.4)) if shape == "triangle" else ((0, -3.4), (3, 0), (0, 3.4), (-3, 0))
    )
    path = " ".join(f"{x + dx:.1f},{y + dy:.1f}" for dx, dy in points)
    return f'<polygon points="{path}" fill="{colour}"/>'


def chart_svg(chart: Chart) -> str:
    """``chart`` as one ``<svg>`` element (no XML prolog), for embedding in HTML. Deterministic."""
    curves = []
    for curve in chart.curves:
        pairs = [(s, v) for s, v in zip(curve.sizes, curve.values, strict=True) if s > 0 and v > 0]
        band = (
            [
                (s, lo, hi)
                for s, lo, hi in zip(curve.sizes, curve.low, curve.high, strict=True)
                if s > 0 and hi > 0
            ]
            if curve.low and curve.high
            else []
        )
        if pairs:
            curves.append((curve.label, pairs, band))
    sizes = [s for _, pairs, _ in curves for s, _ in pairs] or [1, 2]
    values = [v for _, pairs, band in curves for v in (*(p[1] for p in pairs), *(b[2] for b in band))]
    x_low, x_high = math.log2(min(sizes)), math.log2(max(sizes))
    pad = max(x_high - x_low, 1.0) * 0.04
    x_low, x_high = x_low - pad, x_high + pad
    log_y = chart.kind == "latency"
    if log_y:
        low_value, high_value = min(values, default=1.0), max(values, default=10.0)
        y_low = 10.0 ** math.floor(math.log10(low_value))
        y_high = 10.0 ** math.ceil(math.log10(high_value)) if high_value > y_low else y_low * 10
        y_ticks = _log_ticks(y_low, y_high)
    else:
        top = max(values, default=1.0) * 1.05
        if chart.kind == "speedup":
            top = max(1.2, top)
        y_ticks = _linear_ticks(top)
        y_low, y_high = 0.0, y_ticks[-1]

    def x_at(size: float) -> float:
        return LEFT + (math.log2(size) - x_low) / (x_high - x_low) * (RIGHT - LEFT)

    def y_at(value: float) -> float:
        if log_y:
            share = (math.log10(value) - math.log10(y_low)) / (math.log10(y_high) - math.log10(y_low))
        else:
            share = (value - y_low) / (y_high - y_low)
        return BOTTOM - share * (BOTTOM - TOP)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>',
        f'<text x="{(LEFT + RIGHT) / 2:.0f}" y="22" text-anchor="middle" font-size="14">'
        f"{escape(chart.title)}</text>",
    ]
    parts += _axes(chart, x_at, y_at, _size_ticks(math.ceil(x_low), math.floor(x_high)), y_ticks)
    legend: list[tuple[str, str, str]] = []  # (label, colour, how: line, band, dashed)
    for index, (label, pairs, band) in enumerate(curves):
        colour = COLOURS[index % len(COLOURS)]
        if band:
            outline = [(x_at(s), y_at(max(lo, y_low) if log_y else lo)) for s, lo, _ in band]
            outline += [(x_at(s), y_at(hi)) for s, _, hi in reversed(band)]
            points = " ".join(f"{x:.1f},{y:.1f}" for x, y in outline)
            parts.append(f'<polygon points="{points}" fill="{colour}" fill-opacity="0.2" stroke="none"/>')
            legend.append((f"{label}: 95% interval", colour, "band"))
        line = " ".join(f"{x_at(s):.1f},{y_at(v):.1f}" for s, v in pairs)
        parts.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="1.6"/>')
        shape = MARKERS[index % len(MARKERS)]
        parts.extend(_marker(shape, x_at(s), y_at(v), colour) for s, v in pairs)
        legend.append((label, colour, "line"))
    if chart.kind == "speedup":
        y = y_at(1.0)
        parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{RIGHT}" y2="{y:.1f}" stroke="#4d4d4d" '
                     'stroke-dasharray="5,3"/>')  # fmt: skip
        legend.append(("1x (same as baseline)", "#4d4d4d", "dashed"))
    parts += _legend(legend)
    parts.append("</svg>")
    return "".join(parts)


def _axes(
    chart: Chart, x_of: Scale, y_of: Scale, x_ticks: Sequence[int], y_ticks: Sequence[float]
) -> list[str]:
    """Grid, ticks and their labels, the frame and the axis titles."""
    parts = []
    for tick in x_ticks:
        x = x_of(tick)
        parts.append(
            f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{BOTTOM}" stroke="#000" stroke-opacity="0.12"/>'
        )
        parts.append(f'<text transform="translate({x:.1f},{BOTTOM + 14}) rotate(-45)" text-anchor="end">'
                     f"{escape(human_size(tick))}</text>")  # fmt: skip
    for value in y_ticks:
        y = y_of(value)
        parts.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{RIGHT}" y2="{y:.1f}" stroke="#000" stroke-opacity="0.12"/>'
        )
        parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_tick_label(value)}</text>')
    parts.append(f'<rect x="{LEFT}" y="{TOP}" width="{RIGHT - LEFT}" height="{BOTTOM - TOP}" fill="none" '
                 'stroke="#000" stroke-width="0.8"/>')  # fmt: skip
    parts.append(f'<text x="{(LEFT + RIGHT) / 2:.0f}" y="{HEIGHT - 8}" text-anchor="middle">'
                 "message size (log2 scale)</text>")  # fmt: skip
    middle = (TOP + BOTTOM) / 2
    parts.append(f'<text transform="translate(18,{middle:.0f}) rotate(-90)" text-anchor="middle">'
                 f"{escape(chart.ylabel)}</text>")  # fmt: skip
    return parts


def _legend(entries: Sequence[tuple[str, str, str]]) -> list[str]:
    """The legend in the plot's top-left corner, one row per entry, on a white box."""
    if not entries:
        return []
    width = 40 + 6.6 * max(len(label) for label, _, _ in entries)
    height = 8 + 16 * len(entries)
    x, y = LEFT + 8, TOP + 8
    parts = [f'<rect x="{x}" y="{y}" width="{width:.0f}" height="{height}" fill="#fff" fill-opacity="0.85" '
             'stroke="#ccc" rx="3"/>']  # fmt: skip
    for row, (label, colour, how) in enumerate(entries):
        middle = y + 12 + 16 * row
        if how == "band":
            parts.append(f'<rect x="{x + 6}" y="{middle - 5}" width="22" height="10" fill="{colour}" '
                         'fill-opacity="0.2"/>')  # fmt: skip
        else:
            dash = ' stroke-dasharray="5,3"' if how == "dashed" else ""
            parts.append(f'<line x1="{x + 6}" y1="{middle}" x2="{x + 28}" y2="{middle}" stroke="{colour}" '
                         f'stroke-width="1.6"{dash}/>')  # fmt: skip
        parts.append(f'<text x="{x + 34}" y="{middle + 4}" font-size="11">{escape(label)}</text>')
    return parts
