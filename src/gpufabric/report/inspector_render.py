"""NCCL Inspector output, summarised (``nccl_native.inspector.InspectorSummary``): per collective and
size, the ranks' median time and bus bandwidth and the ranks far from their peers; or as JSON. ``show``
prints it for an Inspector dump (or after a run whose directory holds one)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from gpufabric.nccl_native.inspector import InspectorSummary
from gpufabric.report.formats import Format
from gpufabric.report.terminal import plain_text


def inspector_view(summary: InspectorSummary) -> RenderableType:
    """The rich view: one row per collective and size."""
    table = Table(
        title=f"NCCL Inspector: {summary.samples} operation(s) from {len(summary.sources)} file(s)",
        title_justify="left",
    )
    for column in ("collective", "size", "ranks", "median time (us)", "median busbw (GB/s)", "slowest rank"):
        table.add_column(column, overflow="fold")
    for row in summary.rows:
        slowest = max(row.ranks, key=lambda c: c.median_time_us)
        table.add_row(
            row.collective, row.size, str(len(row.ranks)), f"{row.median_time_us:.1f}",
            f"{row.median_busbw_gbps:.2f}", f"{slowest.rank} ({slowest.median_time_us:.1f} us)",
        )  # fmt: skip
    parts: list[RenderableType] = [table]
    parts.extend(Text(f"stands out: {finding}", style="yellow") for finding in summary.findings())
    if not summary.findings():
        parts.append(Text("no rank far from its peers (median time within 1.25x either way)"))
    return Group(*parts)


def render_inspector(summary: InspectorSummary, fmt: Format) -> str:
    """``summary`` in ``fmt``: ``table`` (the view at the fixed text width) or ``json``."""
    if Format(fmt) is Format.JSON:
        return summary.model_dump_json(indent=2) + "\n"
    return plain_text(inspector_view(summary))
