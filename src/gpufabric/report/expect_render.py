"""``gpufabric expect``: the expectation table as text, markdown or JSON.

Text and markdown show, per collective, the path that bounds it, the regime, the physical ceiling, the
band a healthy system reaches (low - centre - high), then each row's formula, the sources, the facts that
are missing and the notes. JSON is the ``ExpectationTable`` model itself (sources as users know them).
"""

from __future__ import annotations

import json

from gpufabric.expect.model import Expectation
from gpufabric.expect.table import ExpectationTable
from gpufabric.report.formats import Format
from gpufabric.units import human_size

HEADER = ("collective", "path", "regime", "ceiling GB/s", "expected GB/s (low - centre - high)")


def _gbps(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.1f}"


def _band(row: Expectation) -> str:
    band = row.band
    if band is None:
        return "unknown"
    if not row.judged_by_bandwidth:
        # Below the band's start latency sets busbw: the size curve is not fitted there, so no number.
        return f"not judged: latency regime (the band applies from {human_size(row.band_from_bytes)})"
    text = f"{band.low_gbps:.1f} - {band.centre_gbps:.1f} - {band.high_gbps:.1f}"
    return text + (" (published hosts)" if band.basis == "absolute" else "")


def _cells(row: Expectation) -> tuple[str, ...]:
    return (row.collective, row.path.value, row.regime.value, _gbps(row.ceiling_gbps), _band(row))


def _title(table: ExpectationTable) -> str:
    shape = table.shape
    gpus = shape.gpus_per_node
    what = shape.instance_type or (f"{gpus}x {shape.gpu_model}" if shape.gpu_model else "this node")
    hosts = (
        f" on {table.hosts} host" + ("s" if table.hosts != 1 else "") if table.hosts != table.nodes else ""
    )
    size = f", {human_size(table.size_bytes)}" if table.size_bytes else ", large sizes"
    forced = ", forced sockets" if table.transport == "socket" else ""
    source = f"(shape from {table.shape_from})"
    return f"Expected busbw: {table.nodes} node(s) of {what}{hosts}{size}{forced} {source}"


def _details(table: ExpectationTable, bullet: str) -> list[str]:
    lines = ["", "Formulas:"]
    lines += [f"{bullet}{row.collective} ({row.regime_reason}): {row.formula}" for row in table.rows]
    for row in table.rows:
        for alt in row.alternatives:
            ceiling = f"{alt.regime.value} ceiling {alt.ceiling_gbps:.1f} GB/s"
            lines.append(f"{bullet}{row.collective}: {ceiling}, {alt.when}")
    bands = {row.band.group: row.band for row in table.rows if row.band}
    if bands:
        lines += ["", "Bands fitted on (healthy published figures):"]
        lines += [f"{bullet}{group}: {', '.join(band.fitted_on)}" for group, band in bands.items()]
    sources = list(dict.fromkeys(s for row in table.rows for s in row.sources))
    lines += ["", "Sources:"] + [f"{bullet}{source}" for source in sources]
    if table.missing:
        lines += ["", "Missing facts:"] + [f"{bullet}{item}" for item in table.missing]
    notes = list(dict.fromkeys([*table.shape.notes, *(n for row in table.rows for n in row.notes)]))
    if notes:
        lines += ["", "Notes:"] + [f"{bullet}{note}" for note in notes]
    return lines


def _text(table: ExpectationTable) -> str:
    rows = [HEADER, *(_cells(row) for row in table.rows)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = [_title(table), ""]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines + _details(table, "  ")) + "\n"


def _markdown(table: ExpectationTable) -> str:
    lines = [f"## {_title(table)}", ""]
    lines += ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(_cells(row)) + " |" for row in table.rows]
    return "\n".join(lines + _details(table, "- ")) + "\n"


def render_expect(table: ExpectationTable, fmt: Format) -> str:
    """The expectation table in ``fmt`` (text, json or markdown)."""
    fmt = Format(fmt)
    if fmt is Format.JSON:
        return json.dumps(table.model_dump(mode="json"), indent=2) + "\n"
    if fmt is Format.MARKDOWN:
        return _markdown(table)
    return _text(table)
